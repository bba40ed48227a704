"""Does candidate code compile? compile() in-process for small code, in a helper interpreter for large code.

Compile, not parse: code that parses can still fail to compile (`return` or `yield` outside a function,
`nonlocal` at module level, a name both global and parameter), and the sandbox compiles it; such code
earns no syntax component. compile() (like ast.parse, which it runs first) is one C call that holds
the GIL from start to end: ~2 µs per character on a CI core, so a 2 MB response would freeze the reward
server's event loop (and /health) for seconds. Code longer than INLINE_CHARS is compiled by a long-lived
child interpreter instead; this thread waits on a pipe without the GIL. The child only compiles (it never
runs the code) and is restarted if it dies or overruns.

A caller with a time limit (a request's deadline: rewards/pipeline.py) passes `until`, a time.monotonic() instant: a
check that has not begun by then, or is still compiling in the helper then, raises OutOfTime (the helper is
restarted), so no check outlives it by more than one in-process compile (at most INLINE_CHARS characters).
A caller bounding one response's own compiling (its preparation budget: rewards/pipeline.py) passes a `Budget`:
the seconds its compiles take (in-process, or in the helper once it holds the helper, never waiting for it)
are charged to it, and a check that would exceed it raises OverBudget (the helper is restarted).
"""

from __future__ import annotations

import atexit
import functools
import inspect
import logging
import re
import select
import subprocess
import sys
import threading
import time
import warnings

log = logging.getLogger("coderl.reward_server")

# Typical answers stay in-process. The bound is the worst case, not the typical one: compile() is quadratic in
# the nesting of lambdas (`x = lambda: lambda: ...`, no brackets, so no parser limit until ~2,900 deep), and a
# 16 K response of them held the server's GIL ~0.5 s (honest 16 K code: ~35 ms); at 4 K the worst is ~30 ms.
# Past ~22 K characters the nesting limit makes the worst case linear, ~50 us per character, in the helper.
INLINE_CHARS = 4_096
# The helper is one process answering one request at a time, so what one request may cost is bounded twice. By
# size: code longer than MAX_CHARS (RewardConfig.syntax_max_chars; 16 K tokens of code, 16x the default
# generation length) counts as not compiling without being compiled: a 2 MB response held the helper (and
# every check queued behind it) up to TIMEOUT_S. By time: honest code compiles at ~1 us per character (0.8-1.1
# on a loaded 2-core machine), hostile code (nested lambdas) at up to ~85; a request gets 1 s plus 20 us per
# character (20x honest), so a hostile 64 K response costs at most ~2.3 s, not ~5.5 s (red team r27).
MAX_CHARS = 65_536
_BASE_S, _PER_CHAR_S = 1.0, 20e-6
TIMEOUT_S = 30.0  # the most any request may take, whatever its size
_START_S = 10.0  # the most a helper's start-up may take (an interpreter: ~20 ms idle, ~0.1-0.3 s on a loaded machine)
_HELPER_MEMORY_BYTES = 4 << 30
# Python rejects these outside string literals and comments (the other Unicode whitespace included), and
# no statement starts with these; text showing either where no string or comment can have begun yet
# (before the first quote, '#', backslash or newline) cannot compile, whatever follows.
_NEVER_OUTSIDE_STRINGS_RE = re.compile(r"[`$?\x0b\x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]")
_NEVER_STARTS = frozenset("<>|`$?!%&^=)]},;:/")
_FIRST_LINE_CODE_END_RE = re.compile(r"""[\n\r'"#\\]""")
# Generated code is parsed under this file name, and warnings from that name are ignored: a SyntaxWarning
# ("invalid escape sequence", "'is' with a literal") of some model's answer is no news for the server's
# stderr. A filter keyed on the name, installed once, is thread-safe, unlike catch_warnings per call.
_FILENAME = "<coderl-candidate>"
warnings.filterwarnings("ignore", category=SyntaxWarning, module=re.escape(_FILENAME) + r"\Z")
warnings.filterwarnings("ignore", category=DeprecationWarning, module=re.escape(_FILENAME) + r"\Z")

def binds_name(code: str, name: str) -> bool:
    """Does compiled `code` bind `name` where a test finds it: in the module's namespace, or in the body of
    one of its classes named Solution (the call format's LeetCode form)?

    Python's own symbol table decides (def, class, assignment, import, for, with, except, match, a walrus in
    a comprehension...), with its scopes: what a function, lambda or comprehension binds is its own."""
    import symtable

    def bound(table, *, comprehension: bool = False) -> bool:
        try:
            sym = table.lookup(name)
        except KeyError:
            sym = None
        if sym is not None and (sym.is_assigned() or sym.is_imported()) and (not comprehension or sym.is_global()):
            return True  # a comprehension's own names are its own; a walrus there binds in the module
        return any(bound(t, comprehension=True) for t in table.get_children() if t.get_name() in _COMPREHENSIONS)

    top = symtable.symtable(code, "<solution>", "exec")
    return bound(top) or any(t.get_type() == "class" and t.get_name() == "Solution" and bound(t)
                             for t in top.get_children())


_COMPREHENSIONS = ("listcomp", "setcomp", "dictcomp", "genexpr")


# Requests: mode (b"c" compiles?, b"b" compiles and binds the name?), then the payload's length (8 bytes) and
# the payload (the code; for b"b" the name, a NUL, the code). Reply: b"1" or b"0"; for b"b", b"n" when the code
# does not compile.
_HELPER = f"""
import resource, sys, warnings
warnings.simplefilter("ignore")
resource.setrlimit(resource.RLIMIT_AS, ({_HELPER_MEMORY_BYTES}, {_HELPER_MEMORY_BYTES}))
inp, out = sys.stdin.buffer, sys.stdout.buffer
{{binds_src}}
out.write(b"r")
out.flush()
while True:
    head = inp.read(9)
    if len(head) < 9:
        break
    data = inp.read(int.from_bytes(head[1:], "little")).decode("utf-8")
    name, src = data.split("\\0", 1) if head[:1] == b"b" else (None, data)
    try:
        compile(src, "<solution>", "exec", dont_inherit=True)
        ok = b"1" if name is None or binds_name(src, name) else b"0"
    except (SyntaxError, ValueError, OverflowError, MemoryError, RecursionError):
        ok = b"0" if name is None else b"n"
    del data, src
    out.write(ok)
    out.flush()
"""


class OutOfTime(Exception):
    """The caller's time (`until`) ran out before the check could answer: whether the code compiles is unknown."""


class OverBudget(Exception):
    """The response's own compiling exceeded its Budget: whether the code compiles is unknown, by its own cost."""


class Budget:
    """Compile seconds one response may spend: only its own compiles are charged, not waiting for the helper."""

    def __init__(self, seconds: float) -> None:
        self.left = seconds

    def check(self) -> float:
        """Seconds left; OverBudget when none are."""
        if self.left <= 0:
            raise OverBudget
        return self.left

    def charge(self, since: float) -> None:
        self.left -= time.monotonic() - since


def _left(until: float | None) -> float | None:
    """Seconds left before until (None: no limit); OutOfTime when none are."""
    if until is None:
        return None
    left = until - time.monotonic()
    if left <= 0:
        raise OutOfTime
    return left


class _Helper:
    """One child interpreter answering 'does this compile?' for one request at a time."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen | None = None

    def _start(self, until: float | None) -> subprocess.Popen | None:
        """The helper, running and ready (it says so: its start-up is no check's compile time, nor any budget's);
        None when it did not start; OutOfTime when until passed first."""
        if self._proc is None or self._proc.poll() is not None:
            left = _left(until)
            self._proc = subprocess.Popen([sys.executable, "-I", "-S", "-c", _helper_source()], stdin=subprocess.PIPE,
                                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, close_fds=True)
            wait = _START_S if left is None else min(_START_S, left)
            ready, _, _ = select.select([self._proc.stdout], [], [], wait)
            if not ready or self._proc.stdout.read(1) != b"r":
                self.close()
                if not ready and wait < _START_S:
                    raise OutOfTime
                return None
        return self._proc

    def close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()

    def ask(self, mode: bytes, data: bytes, until: float | None = None, budget: Budget | None = None) -> bytes:
        """The helper's reply; b"" when it overran or died twice; OutOfTime when until passed first (waiting for
        the helper, another request's check in it, counts); OverBudget when the budget did (only the time this
        check holds the helper is charged to it)."""
        timeout = min(TIMEOUT_S, _BASE_S + _PER_CHAR_S * len(data))
        left = _left(until)
        if budget is not None:
            budget.check()
        if not self._lock.acquire(timeout=-1 if left is None else left):
            raise OutOfTime
        try:
            for _ in range(2):  # a helper that died since the last call gets one restart
                proc = self._start(until)
                left = _left(until)
                own = None if budget is None else budget.check()
                wait = min(x for x in (timeout, left, own) if x is not None)
                t0 = time.monotonic()
                try:
                    if proc is None:
                        raise OSError("the syntax helper did not start")
                    proc.stdin.write(mode + len(data).to_bytes(8, "little") + data)
                    proc.stdin.flush()
                    ready, _, _ = select.select([proc.stdout], [], [], wait)
                    reply = proc.stdout.read(1) if ready else b"timeout"
                except OSError:
                    reply = b""
                if budget is not None:
                    budget.charge(t0)
                if reply in (b"0", b"1", b"n"):
                    return reply
                self.close()  # killed mid-compile: the next check gets a fresh helper
                if reply == b"timeout":
                    if own is not None and wait == own and wait < timeout:
                        raise OverBudget
                    if wait < timeout:
                        raise OutOfTime
                    log.warning("parsing a %d-byte response took over %.1fs; it counts as not compiling",
                                len(data), timeout)
                    return b""
            return b""
        finally:
            self._lock.release()


_helper = _Helper()
atexit.register(_helper.close)


def _surely_not_python(code: str) -> bool:
    """Cheap proof that code cannot compile (False = no proof): compiling garbage still costs O(len)."""
    if "\x00" in code:
        return True
    first = code.lstrip()[:1]
    if first in _NEVER_STARTS:
        return True
    m = _FIRST_LINE_CODE_END_RE.search(code)
    return _NEVER_OUTSIDE_STRINGS_RE.search(code, 0, m.start() if m else len(code)) is not None


@functools.lru_cache(maxsize=1)
def _helper_source() -> str:
    """The helper's program, with this module's binds_name (one definition for both sides)."""
    return _HELPER.replace("{binds_src}", f"_COMPREHENSIONS = {_COMPREHENSIONS!r}\n{inspect.getsource(binds_name)}")


def parses(code: str, max_chars: int = MAX_CHARS, until: float | None = None, budget: Budget | None = None) -> bool:
    """True when code is non-empty Python that compiles, in at most max_chars characters; OutOfTime when `until`
    (a time.monotonic() instant) passes before the answer, OverBudget when the response's budget does."""
    if not _fits(code, max_chars):
        return False
    _left(until)
    if len(code) > INLINE_CHARS:
        data = _helper_data(code)
        return data is not None and _helper.ask(b"c", data, until, budget) == b"1"
    if budget is not None:
        budget.check()
    t0 = time.monotonic()
    try:
        compile(code, _FILENAME, "exec", dont_inherit=True)
    except (SyntaxError, ValueError, OverflowError, MemoryError, RecursionError):
        return False
    finally:
        if budget is not None:
            budget.charge(t0)
    return True


def binds(code: str, name: str, max_chars: int = MAX_CHARS, *, inline: bool = True,
          until: float | None = None, budget: Budget | None = None) -> bool | None:
    """Whether code binds name where a test finds it (binds_name); None when it does not compile (as parses).
    inline=False sends even small code to the helper (a caller checking many pieces bounds its GIL time)."""
    if not _fits(code, max_chars):
        return None
    _left(until)
    if len(code) > INLINE_CHARS or not inline:
        data = _helper_data(code)
        reply = (_helper.ask(b"b", name.encode("utf-8") + b"\0" + data, until, budget) if data is not None
                 else b"n")
        return None if reply in (b"n", b"") else reply == b"1"
    if budget is not None:
        budget.check()
    t0 = time.monotonic()
    try:
        compile(code, _FILENAME, "exec", dont_inherit=True)
        return binds_name(code, name)
    except (SyntaxError, ValueError, OverflowError, MemoryError, RecursionError):
        return None
    finally:
        if budget is not None:
            budget.charge(t0)


def _fits(code: str, max_chars: int) -> bool:
    return bool(code) and len(code) <= max_chars and bool(code.strip())


def _helper_data(code: str) -> bytes | None:
    """code as the helper reads it; None when it surely cannot compile."""
    if _surely_not_python(code):
        return None
    try:
        return code.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: compile() fails on it the same way
        return None

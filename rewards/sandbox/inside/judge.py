"""The judge: runs a label's tests in its own process and decides every verdict; never runs candidate code.

The program under test lives in another process (candidate.py). Here its functions, classes and other
objects are Proxy handles: calling one, reading an attribute or iterating sends a request over the channel
and what comes back is plain data rebuilt from this process's own types (wire.py), so every comparison a
test makes runs with ordinary Python semantics on values nobody can lie about. A comparison or arithmetic
with an opaque handle would let the program decide (or see an expected value): it raises Unjudgeable and
the test's status is "unsupported" whatever the test does with the exception.

The judge is long-lived (one per worker, restarted after any job that went wrong or left state behind);
each job arrives as a frame from the worker with the candidate's channel descriptor, and every test's
outcome is recorded the moment it is decided (records leave together, held back up to the job's hold_s).
Tests run in the order the job lists; the worker times each from the last records it received (plus
hold_s, worker.py) and, after killing a candidate that hung, learns from the records held which test it
was. stdlib only: this module runs inside the sandbox.
"""

import _signal
import builtins
import collections
import collections.abc
import gc
import importlib
import io
import os
import random
import signal
import socket
import sys
import tempfile
import threading
import time
import types
import unittest
import unittest._log
import unittest.mock

from . import channel, formats, framing, mirrors, protocol, stdlib_patches, wire
from .framing import Status
from .proxy import _loaded
from .session import Session, _same
from .verdicts import classify, describe, excerpt

_BASE_MODULES = frozenset()  # the modules loaded before any job (serve()); a program's module names bind to these


class Spec:
    """A label's tests, compiled once per judge and reused for every completion of that label."""

    def __init__(self, d):
        self.format = d["format"]
        self.tests = d.get("tests") or []
        self.plan = d["plan"]
        self.entry_point = d.get("entry_point")
        self.setup_code = d.get("setup_code") or ""
        self.check_param = d.get("check_param") or "candidate"
        self.prelude = d.get("prelude") or ""
        self.fields = d  # the whole spec: where a format's runner finds the fields its plan() added
        self._code = {}

    def code(self, src, filename):
        key = (src, filename)
        if key not in self._code:
            try:
                self._code[key] = compile(src, filename, "exec")
            except (SyntaxError, ValueError, MemoryError, RecursionError) as e:
                self._code[key] = e
        code = self._code[key]
        if isinstance(code, BaseException):
            raise code
        return code


def _namespace(session, spec, names):
    """The namespace tests run in: genuine builtins, the program's names as proxies or copied values, never a
    program name standing for a builtin, a standard-library module or a test hook."""
    ns = {"__builtins__": builtins, "__name__": "__check__"}
    hooks = formats.REGISTRY[spec.format].hooks
    public = {}
    for item in names:
        if type(item) is not list or len(item) not in (2, 3):
            continue
        name, enc = item[0], item[1]
        if type(name) is not str or name.startswith("__"):
            continue
        top = name in sys.stdlib_module_names
        own = _program_module(enc) if name != spec.entry_point else None
        if own is not None and not (name in builtins.__dict__ and not top):
            ns[name] = public[name] = own
            continue
        if (name in builtins.__dict__ or top) and name != spec.entry_point:
            own = _own_stdlib_object(name, enc) if top else None
            if own is not None:
                ns[name] = public[name] = own
                continue
            if top and name in _BASE_MODULES:  # a program's fake `json` stays out: the test gets the judge's
                ns[name] = public[name] = sys.modules[name]
            continue
        value = session.dec(enc)
        if len(item) == 3:  # a module-level container: the test's too
            value = session._adopt(["ok", enc, {"shared": item[2]}], value)
        public[name] = value
        if name not in hooks:
            ns[name] = value
    mod = types.ModuleType("solution")
    mod.__dict__.update(public)
    sys.modules["solution"] = mod
    session.solution, session.solution_names = mod, dict(mod.__dict__)
    return ns


# Standard-library modules whose import runs a program instead of defining one (the Zen printed, a web browser
# opened, IDLE or the regression suite started): never imported on the program's word (nor any `__main__`).
_RUNS_ON_IMPORT = frozenset({"this", "antigravity", "idlelib", "turtledemo", "test", "__hello__", "__phello__"})
_SUBMODULES = 64  # submodules of a program's module the judge imports with it (`import xml.dom.minidom`)


def _stdlib_module(name):
    """The judge's own copy of the standard-library module `name`, imported here if need be, or None: not the
    standard library's (the judge runs in isolated mode: nothing of the job directory is on its sys.path), a
    module whose import runs a program (_RUNS_ON_IMPORT, `__main__`), or one that does not import."""
    if type(name) is not str or len(name) > 200:
        return None
    parts = name.split(".")
    if parts[0] not in sys.stdlib_module_names or parts[0] in _RUNS_ON_IMPORT or "__main__" in parts or \
            not all(p.isidentifier() for p in parts):
        return None
    mod = sys.modules.get(name)
    if not isinstance(mod, types.ModuleType):
        try:
            mod = importlib.import_module(name)
        except (Exception, SystemExit):
            return None
    return mod if isinstance(mod, types.ModuleType) else None


def _program_module(enc):
    """The judge's own module for a program's global that is a standard-library module (its handle's reference:
    `import sqlite3`, `import re as regex`, `from collections import abc`, `import os.path`), with the submodules
    the program had loaded below it (`import xml.dom.minidom` binds `xml`): a module the program imported is
    the tests' too, as in plain Python, where they run appended to it. Imported here if need be, from this
    process's standard library: never the program's module, never a module outside the standard library."""
    if type(enc) is not list or len(enc) != 3 or enc[0] != "h" or type(enc[2]) is not dict:
        return None
    info = enc[2]
    ref = info.get(protocol.INFO_REF)
    if info.get(protocol.INFO_KIND) != protocol.KIND_MODULE or type(ref) is not list or len(ref) != 2 or \
            ref[1] != "" or type(ref[0]) is not str:
        return None
    mod = _stdlib_module(ref[0])
    subs = info.get(protocol.INFO_SUBMODULES)
    if mod is not None and type(subs) is list:
        for sub in subs[:_SUBMODULES]:
            if type(sub) is str and sub.startswith(ref[0] + "."):
                _stdlib_module(sub)
    return mod


def _own_stdlib_object(name, enc):
    """The judge's own object for a program name that is a standard-library module's name and stands for an object
    of that very module (`from datetime import datetime`, `from time import time`): looked up among the modules
    here (imported if need be), never a module, never anything of the program (a fake `json` stays out)."""
    if type(enc) is not list or len(enc) != 3 or enc[0] != "R" or type(enc[1]) is not str or \
            enc[1].partition(".")[0] != name or type(enc[2]) is not str or not enc[2]:
        return None
    _stdlib_module(enc[1])  # the program imported it: the tests have it too
    try:
        obj = _loaded(enc[1], enc[2])
    except wire.DecodeError:
        return None
    return None if isinstance(obj, types.ModuleType) else obj


class Job:
    """One job (or the rest of one, after the candidate was replaced) against one candidate process."""

    def __init__(self, spec, msg, fd, report, informed=None):
        self.spec = spec
        self.order = msg["order"]
        self.limit = msg.get("detail_chars", 400)
        self._report, self._informed = report, informed
        self.ended = 0  # tests reported in this job
        self.sent = None  # frames sent to the program in the current test (None: no test runs yet)
        self.max_value = msg.get("max_value_bytes", 16 << 20)
        self.session = Session(fd, self.max_value, self.limit)
        self.session.chan.on_send = self._sending
        self.code = msg["code"]
        self.max_value_repr = msg.get("max_output", 65536)

    def report(self, record, hold_it=False):
        if record[0] == "end":
            self.ended += 1
        if record[0] in ("ready", "end"):
            self.sent = 0
        self._report(record, hold_it)

    def _sending(self):
        """A test's first frame to the program is sent knowing nothing of its outcome; anything after it may
        tell the program how the test goes (a callback's assertion, the exception its __exit__ gets, a teardown
        calling it, the mere second call). The ledger says so before the frame leaves (framing.LEDGER_INFORMED)."""
        if self.sent is None:
            return
        self.sent += 1
        if self.sent == 2 and self._informed is not None:
            self._informed(self.ended + 1)

    def run(self):
        s = self.session
        t0 = time.perf_counter()
        try:
            s.chan.send({"code": self.code, "name": "solution", "serve": True, "max_value": self.max_value,
                         "prelude": self.spec.prelude})
            reply = s.chan._recv()
        except channel.PeerGone as e:
            return self.unloaded(Status.KILLED, f"the program's process ended before it loaded: {e}")
        if reply[0] != "ok":
            desc = reply[1] if len(reply) > 1 and type(reply[1]) is dict else {}
            exc = s.exception(desc) if desc else RuntimeError("bad reply")
            status = Status.SYNTAX if desc.get("phase") == "compile" else classify(exc)
            return self.unloaded(Status.KILLED if isinstance(exc, SystemExit) else status, describe(exc, self.limit))
        try:
            ns = _namespace(s, self.spec, reply[1] if type(reply[1]) is list else [])
            runner = formats.REGISTRY[self.spec.format].runner(self, ns)
        except BaseException as e:
            return self.unloaded(s.taint[0] if s.taint else classify(e), describe(e, self.limit))
        self.report(["ready", time.perf_counter() - t0])
        runner()
        self.report(["restart"] if s.gone else ["done"])

    def unloaded(self, status, detail):
        """Every test gets the verdict of a program that did not load; `done` frees the worker at once (it
        would otherwise wait out the test time limit for records that never come). Both leave in one send."""
        self.report(["prelude", status, detail], hold_it=True)
        self.report(["done"])

    def one(self, i, fn, success=Status.PASSED):
        """Run test case i (fn() raises on failure) and report it."""
        s = self.session
        s.taint = None
        t0 = time.perf_counter()
        value, status, detail = None, success, ""
        try:
            value = fn()
        except BaseException as e:
            status, detail = classify(e), describe(e, self.limit)
        if s.taint:
            status, detail = s.taint
        self.report(["end", i, status, time.perf_counter() - t0, excerpt(detail, self.limit), value])

    def each(self, run_case):
        for i in self.order:
            if self.session.gone:
                return
            self.one(i, lambda i=i: run_case(i))


# ------------------------------------------------------------------------------------------ the process

class _State:
    """What a job may leave behind in this long-lived process; a job that changed it ends the process.
    Checked after every job, so the checks stay in C: identity of every saved value (operator.is_)."""

    def __init__(self):
        self.builtins = dict(builtins.__dict__)
        self.testcase = dict(vars(unittest.TestCase))
        self.streams = (sys.stdout, sys.stderr, sys.stdin)
        self.signals = {s: _signal.getsignal(s) for s in (signal.SIGALRM, signal.SIGINT, signal.SIGTERM, signal.SIGCHLD)}
        self.modules = set(sys.modules)
        self.recursion = sys.getrecursionlimit()
        self.argv = list(sys.argv)
        self.environ = dict(os.environ)
        self.environ_data = dict(os.environ._data)  # the encoded form os.environ keeps: compared in C

    same = staticmethod(_same)

    def restore(self):
        """Undo what is cheap to undo; True when the process is still fit for another job."""
        for name in sys.modules.keys() - self.modules:
            if name.startswith("test_module_") or name == "solution":
                del sys.modules[name]
        unittest.mock.patch.stopall()  # patches a test started and never stopped
        if mirrors.ACTIVE_PATCHES:  # entered and never exited: whatever they replaced stays replaced
            return False
        sys.stdout, sys.stderr, sys.stdin = self.streams
        sys.setrecursionlimit(self.recursion)
        sys.argv = list(self.argv)
        random.seed()  # a job's sequence (its test's seed, the program's draws) is not the next job's
        if os.environ._data != self.environ_data:
            os.environ.clear()
            os.environ.update(self.environ)
        if not self.same(builtins.__dict__, self.builtins) or not self.same(vars(unittest.TestCase), self.testcase):
            return False
        if any(_signal.getsignal(s) is not h for s, h in self.signals.items()):
            return False
        return threading.active_count() == 1


_LEDGER_CODES = {status: k + 1 for k, status in enumerate(framing.LEDGER_STATUSES)}
_STDERR_PER_JOB = 1 << 16
# A job leaves cyclic garbage (its test module and classes, proxies, tracebacks) that survived the young collections
# while the job ran: only a full collection frees it, which Python runs rarely (the judge once grew by 32-38 MB a
# job to ~700 MB before one). After a job that left the judge this much larger than at its start, it collects;
# still larger by _RSS_RETIRE, it retires (the worker starts a fresh one).
_RSS_COLLECT, _RSS_RETIRE = 64 << 20, 192 << 20


_STATM = [-1]  # /proc/self/statm, opened before Landlock (which hides /proc in the rlimits fallback)


def _rss():
    """This process's resident memory in bytes (0 when unknown): one pread of statm."""
    try:
        return int(os.pread(_STATM[0], 128, 0).split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0  # characters of this process's stderr a job may fill (the worker's stderr: a host file)


class _Stderr(io.TextIOBase):
    """This process's sys.stderr: what a job writes there (a test's prints, warnings shown, what the program
    printed while the test had its stderr captured and the test passed on) reaches the worker's stderr, a file
    on the host, only up to _STDERR_PER_JOB characters per job; the rest is dropped."""

    encoding, errors = "utf-8", "backslashreplace"

    def __init__(self, fd):
        super().__init__()
        self.fd, self.left = fd, _STDERR_PER_JOB

    def writable(self):
        return True

    def write(self, s):
        if self.left > 0 and s:
            part = s[:self.left]
            self.left -= len(part)
            try:
                framing.write_all(self.fd, part.encode("utf-8", "backslashreplace"))
            except OSError:
                pass
        return len(s)

    def next_job(self):
        self.left = _STDERR_PER_JOB


def serve(sock_fd, base, ledger=None):
    """The judge's main loop: one job frame (+ the candidate's channel descriptor) at a time. ledger: the page
    the worker reads when this process dies or stops answering (worker.py), marked as verdicts are decided."""
    global _BASE_MODULES
    stdlib_patches.install()
    # SIGINT is the one signal Python turns into an exception (KeyboardInterrupt) at an arbitrary point of a
    # test; where Landlock cannot scope signals, a candidate of the same uid could send it.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    sock = socket.socket(fileno=sock_fd)
    reader = framing.Reader(1 << 30)
    specs = collections.OrderedDict()
    pending, fds = [], []
    state = _State()
    _BASE_MODULES = frozenset(state.modules)
    gc.freeze()  # what every job uses (the preloaded modules): never scanned again, so a full collection is cheap
    rss0 = _rss()
    held, hold = [], {"s": 0.0, "since": 0.0, "job": None}

    def report(record, hold_it=False):
        # "ready" and "end" records may wait up to the job's hold_s and leave together (worker.py, _HOLD_S);
        # anything else, and a test whose program died, goes at once with whatever was held (hold_it: with the
        # record that follows, a job's last). The ledger has them first: held records die with this process, and
        # a test whose verdict is lost must not run again (the program would get a second try at a test it
        # failed, e.g. knowing the expected value by then). Every frame names the job it belongs to: the worker
        # drops any other (a record of an earlier job must never count as the running one's).
        if ledger is not None:
            if record[0] == "end" and type(record[1]) is int and 0 <= record[1] < len(ledger) - 1 - framing.LEDGER_INFORMED:
                ledger[1 + record[1]] = _LEDGER_CODES.get(record[2], _LEDGER_CODES[Status.ERROR])
            elif record[0] == "ready":
                ledger[0] = 1
        held.append(framing.pack([hold["job"], *record]))
        now = time.monotonic()
        if hold_it or record[0] in ("ready", "end") and record[2:3] != [Status.KILLED] and now - hold["since"] < hold["s"]:
            return
        sock.sendall(b"".join(held))
        held.clear()
        hold["since"] = now

    def informed(k):
        if ledger is not None:
            ledger[len(ledger) - framing.LEDGER_INFORMED:] = k.to_bytes(framing.LEDGER_INFORMED, "little")

    while True:
        while not pending:
            data, got, _flags, _addr = socket.recv_fds(sock, 1 << 16, 4)
            fds += got
            if not data:
                return
            pending += reader.feed(data)
        msg = pending.pop(0)
        hold["job"] = msg.get("job")
        if msg.get("spec") is not None:
            specs[msg["digest"]] = Spec(msg["spec"])
            if len(specs) > framing.SPEC_CACHE:
                specs.popitem(last=False)
        spec = specs.get(msg["digest"])
        chan_fd = fds.pop(0) if fds else None
        for extra in fds:
            os.close(extra)
        fds = []
        if spec is None or chan_fd is None:
            if spec is None:
                report(["need_spec"])
            else:
                report(["prelude", Status.KILLED, "no channel to the program"], hold_it=True)
                report(["done"])
            if chan_fd is not None:
                os.close(chan_fd)
            continue
        specs.move_to_end(msg["digest"])
        jobdir = msg.get("jobdir") or base
        hold["s"], hold["since"] = msg.get("hold_s") or 0.0, time.monotonic()
        if isinstance(sys.__stderr__, _Stderr):
            sys.__stderr__.next_job()
        job = None
        try:
            os.chdir(jobdir)
            os.environ["TMPDIR"] = os.environ["HOME"] = jobdir
            tempfile.tempdir = jobdir
            job = Job(spec, msg, chan_fd, report, informed)
            job.run()
        except BaseException as e:  # a judge bug must never look like a pass, nor outlive its job
            report(["prelude", Status.KILLED, f"judge error: {type(e).__name__}: {e}"], hold_it=True)
            report(["retire"])
            return
        finally:
            if job is not None:  # a proxy that outlives its job (a cycle, a __del__) must not use a reused fd
                job.session.gone = job.session.gone or "the job is over"
            os.close(chan_fd)
            try:
                os.chdir(base)
            except OSError:
                pass
            tempfile.tempdir = None
        if not state.restore():
            report(["retire"])
            return
        if _rss() > rss0 + _RSS_COLLECT:
            gc.collect()
            if _rss() > rss0 + _RSS_RETIRE:
                report(["retire"])
                return


def main(sock_fd, base, memory_mb, confine=None, ledger=None, bpf=None):
    """confine: the candidates' Landlock paths (read, write, execute). The judge runs the tests in a directory
    the program writes, so a symlink it plants there must lead the test's open() nowhere a candidate could not
    go itself; without namespaces (the rlimits fallback) the rest of the host would be within reach. bpf: the
    candidates' seccomp filter: the tests' code gets no more of the kernel than the program."""
    from . import landlock, seccomp
    try:
        _STATM[0] = os.open("/proc/self/statm", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        pass
    if confine is not None:  # and /dev/null to write: pytest's logging plugin opens it for its log file
        read, write, execute = confine
        ruleset = landlock.Ruleset.build(read, [*write, "/dev/null"], execute)
        if ruleset is not None:
            ruleset.apply()
    if bpf:
        seccomp.build(bpf, landlock._libc()).apply()
    import resource
    sys.setrecursionlimit(max(sys.getrecursionlimit(), wire.RECURSION_ROOM))  # deep values (wire.MAX_DEPTH)
    try:
        limit = memory_mb << 20
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ValueError, OSError):
        pass
    sys.stdout = sys.__stdout__ = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8",
                                                    errors="backslashreplace")
    sys.stderr = sys.__stderr__ = _Stderr(2)
    serve(sock_fd, base, ledger)

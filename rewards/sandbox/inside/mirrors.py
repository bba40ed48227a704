"""The state a program shares with its tests in plain Python, mirrored into the candidate for one request.

In plain Python the tests and the program are one process: a test that redirects sys.stdout, patches
builtins.input or time.sleep, sets sys.argv or os.environ, seeds random, enters assertLogs or catch_warnings,
or holds a list the program keeps, changes what the program sees. Each kind of such state is one Mirror
here, holding its four halves:

  judge      capture(session, ctx)          what the test changed, added to the request's context
  candidate  install(server, ctx) -> saved  put it in place for the one request
  candidate  undo(server, saved, out)       put the program's own back; report what the program did
  judge      apply(session, out, ctx, pending)  hand that to the test (output, log records, random state, ...)

MIRRORS is the one ordered list both sides walk: captured and installed in its order, undone in reverse.
Adding a kind of shared state is one class here and its test. The judge's side reads what its standard-library
patches record (stdlib_patches.py: which context managers of the test are in effect, whether it seeded
random); the candidate imports nothing beyond the interpreter's core modules until a request asks for a kind
(the zygote imports this module). stdlib only.
"""

import builtins
import io
import operator
import os
import sys
import types

from . import protocol, wire

_MISSING = object()
_CAPTURE_CHARS = 1 << 20  # what a test redirecting stdout gets of one call's output
_TWISTS = 1024  # blocks of 624 words a program may draw between two calls and still hand its state back

# The judge's record of the test's context managers in effect (entered, not yet exited): mock.patch()es
# (decorator, with, start/stop), assertLogs / assertNoLogs, warnings.catch_warnings (assertWarns enters one
# too); and whether a test called random.seed / random.setstate in this job. Kept by stdlib_patches.install().
ACTIVE_PATCHES, ACTIVE_LOG_CAPTURES, ACTIVE_WARNING_CAPTURES = [], [], []
RANDOM_SEEDED = set()


class Mirror:
    """One kind of shared state. Every half is optional: the default does nothing. undo runs only after an
    install that returned something, unless the kind REPORTS after every request (what the program did to
    state it shares from then on)."""

    REPORTS = False

    def start(self, session):
        """Judge: the state at the start of a job, which the test's changes are measured against."""

    def capture(self, session, ctx):
        """Judge: what the test changed, into ctx (the request's context)."""

    def install(self, server, ctx):
        """Candidate: the test's state in place for one request; returns what undo needs (None: nothing)."""

    def undo(self, server, saved, out):
        """Candidate: the program's own state back; what the test must learn, into out."""

    def apply(self, session, out, ctx, pending):
        """Judge: what came back (out) handed to the test."""


def _patch(saved, target, name, value):
    saved.append((target, name, target.__dict__.get(name, _MISSING)))
    setattr(target, name, value)


def _unpatch(saved):
    for target, name, old in reversed(saved):
        if old is _MISSING:
            target.__dict__.pop(name, None)
        else:
            setattr(target, name, old)


class Followed(Mirror):
    """Containers both sides hold (wire.MUTABLE): a test's argument the program keeps (the judge's ids, positive),
    a container the program keeps and handed over (the candidate's, negative). Before each request the judge sends
    what the test changed in its copies, after it the candidate what the program changed, each applied in place."""

    REPORTS = True

    def start(self, session):
        session.tracked, session.track_seq, session.synced = {}, 0, {}

    def capture(self, session, ctx):
        if session.tracked:  # present even when empty: the candidate then reports what the program changed
            push = ctx["sync"] = []
            for tid, obj in session.tracked.items():
                state = session._state(obj)
                if state is not None and state != session.synced.get(tid):
                    push.append([tid, state])
                    session.synced[tid] = state

    def install(self, server, ctx):
        for tid, state in ctx.get("sync") or ():
            entry = server.retained.get(tid) if type(tid) is int else None
            if entry is not None:
                wire.write_back(entry[0], server.dec(state))
                entry[1] = server.enc(entry[0])

    def undo(self, server, saved, out):
        """What the program did to the containers it shares with the test, and which it no longer holds."""
        if not server.retained:
            return
        live, released = [], []
        for tid, entry in list(server.retained.items()):
            if sys.getrefcount(entry[0]) <= 2:  # only the table holds it now
                del server.retained[tid]
                released.append(tid)
                continue
            state = server.enc(entry[0])
            if state != entry[1]:
                entry[1] = state
                live.append([tid, state])
        for name, value in (("live", live), ("released", released)):
            if value:
                out[name] = value

    def apply(self, session, out, ctx, pending):
        for tid in out.get("kept") or ():  # followed from now on (held only while the program keeps them)
            if type(tid) is int and tid in pending and len(session.tracked) < session.KEPT:
                session.tracked[tid] = pending[tid]
                session.synced[tid] = session._state(pending[tid])
        for tid, state in out.get("live") or ():
            if type(tid) is int and tid in session.tracked:
                session.write_back(session.tracked[tid], session.dec(state))
                session.synced[tid] = session._state(session.tracked[tid])
        for tid in out.get("released") or ():
            if type(tid) is int:
                session.tracked.pop(tid, None)
                session.synced.pop(tid, None)


class Streams(Mirror):
    """A sys.stdout / sys.stderr the test redirected: the program's output is captured there, written here."""

    NAMES = ("stdout", "stderr")

    def start(self, session):
        session.streams = (sys.stdout, sys.stdin, sys.stderr)

    def capture(self, session, ctx):
        out_, _, err_ = session.streams
        if sys.stdout is not out_:
            ctx["stdout"] = True
        if sys.stderr is not err_:
            ctx["stderr"] = True

    def install(self, server, ctx):
        saved = {}
        for name in self.NAMES:
            if ctx.get(name):
                saved[name] = getattr(sys, name)
                setattr(sys, name, io.StringIO())
        return saved or None

    def undo(self, server, saved, out):
        for name in self.NAMES:
            if name in saved:
                buf = getattr(sys, name)
                setattr(sys, name, saved[name])
                out[name] = buf.getvalue()[:_CAPTURE_CHARS] if isinstance(buf, io.StringIO) else ""

    def apply(self, session, out, ctx, pending):
        for name in self.NAMES:
            text = out.get(name)
            if isinstance(text, str) and text:
                getattr(sys, name).write(text)


class _StdinMirror(io.TextIOBase):
    """sys.stdin for one call whose test replaced the judge's sys.stdin: reads go to the test's stream."""

    def __init__(self, remote):
        self._remote = remote

    def readable(self):
        return True

    def read(self, size=-1):
        return self._remote.read(size)

    def readline(self, size=-1):
        return self._remote.readline(size)


class Stdin(Mirror):
    """A sys.stdin the test replaced: the program reads the test's stream (a callback)."""

    def capture(self, session, ctx):
        if sys.stdin is not session.streams[1]:
            ctx["stdin"] = session.export(session.Exported(sys.stdin, protocol.EXPORT_STREAM))

    def install(self, server, ctx):
        if "stdin" in ctx:
            saved, sys.stdin = sys.stdin, _StdinMirror(server.dec(ctx["stdin"]))
            return [saved]

    def undo(self, server, saved, out):
        sys.stdin = saved[0]


def environ_data():
    """os.environ's own dict (comparing the mapping itself decodes every key)."""
    return getattr(os.environ, "_data", os.environ)


class Environ(Mirror):
    """os.environ (mock.patch.dict). Installed before the patched attributes: a patched os.environ is undone
    first, then the real one."""

    def start(self, session):
        session.environ0 = dict(environ_data())

    def capture(self, session, ctx):
        if environ_data() != session.environ0:
            ctx["environ"] = session.enc(dict(os.environ))

    def install(self, server, ctx):
        if "environ" in ctx:
            saved = dict(os.environ)
            os.environ.clear()
            os.environ.update(server.dec(ctx["environ"]))
            return saved

    def undo(self, server, saved, out):
        os.environ.clear()
        os.environ.update(saved)


def _continuation(old, new):
    """The state the program's random module reports, when it continues `old` (the program drew numbers from
    the test's sequence), else None: a state it chose (a reseed, made-up words) would let it choose what the
    test draws next (the inputs a test generates after a call). A gauss() value the program left pending is
    dropped (the test's next gauss() draws afresh): it could be any float."""
    import random
    try:
        version, internal, gauss = new
        words, pos = tuple(internal[:624]), internal[624]
        if version != old[0] or len(internal) != 625 or type(pos) is not int:
            return None
        gen = random.Random()
        gen.setstate(old)
        cur = old[1]
        for _ in range(_TWISTS + 1):
            if cur[:624] == words and cur[624] <= pos <= 624:
                return (version, (*words, pos), gauss if gauss == old[2] else None)
            gen.getrandbits(32 * (625 - cur[624]))  # to the first word of the next block
            cur = gen.getstate()[1]
    except (TypeError, ValueError, IndexError, OverflowError):
        pass
    return None


class Random(Mirror):
    """The random module's state once the test seeded it: the program continues the test's sequence, and the
    test's next draw continues the program's — only as a continuation (_continuation). Installed before the
    patched attributes, so that the candidate sets and reads the real random state, never a test's mock."""

    REPORTS = True

    def start(self, session):
        session.random_synced = None  # random's state as the candidate has it, once the test seeded random
        RANDOM_SEEDED.clear()

    def capture(self, session, ctx):
        if RANDOM_SEEDED:  # the state is worth its round trips only once the test has seeded random
            import random
            state = random.getstate()
            if state != session.random_synced:
                ctx["random"] = session.enc(state)
                session.random_synced = state

    def install(self, server, ctx):
        if "random" in ctx:
            import random
            random.setstate(server.dec(ctx["random"]))
            server.random_linked = True

    def undo(self, server, saved, out):
        if server.random_linked:
            import random
            out["random"] = server.enc(random.getstate())

    def apply(self, session, out, ctx, pending):
        if "random" in out and session.random_synced is not None:  # only once the test shared random's state
            import random
            state = _continuation(session.random_synced, session.dec(out["random"]))
            if state is not None:
                random.setstate(state)
                session.random_synced = state


class Builtins(Mirror):
    """Builtins the test replaced (mock.patch('builtins.input', ...), print, open): the program calls the test's."""

    def start(self, session):
        session.builtins0 = dict(builtins.__dict__)
        session.builtin_values = list(session.builtins0.values())

    def capture(self, session, ctx):
        current = builtins.__dict__
        if len(current) != len(session.builtin_values) or any(map(operator.is_not, current.values(),
                                                                  session.builtin_values)):
            changed = {k: v for k, v in current.items() if session.builtins0.get(k, _MISSING) is not v}
            ctx["builtins"] = {k: session._mirrored(v) for k, v in changed.items()}

    def install(self, server, ctx):
        saved = []
        for name, value in (ctx.get("builtins") or {}).items():
            _patch(saved, builtins, name, server.dec(value))
        return saved or None

    def undo(self, server, saved, out):
        _unpatch(saved)


class Patches(Mirror):
    """Attributes of standard-library modules the test replaced with mock.patch / patch.object (time.sleep,
    random.randint, os.path.exists): the program calls the test's mock."""

    def capture(self, session, ctx):
        patches = []
        for p in ACTIVE_PATCHES:
            target, name = getattr(p, "target", None), getattr(p, "attribute", None)
            if isinstance(target, types.ModuleType) and isinstance(name, str) and \
                    target is not builtins and target.__name__.partition(".")[0] in sys.stdlib_module_names and \
                    not (target is sys and name in ("stdin", "stdout", "stderr")):
                patches.append([target.__name__, name, session._mirrored(getattr(target, name, None))])
        if patches:
            ctx["patches"] = patches

    def install(self, server, ctx):
        saved = []
        for mod, name, value in ctx.get("patches") or ():
            target = sys.modules.get(mod) if isinstance(mod, str) else None
            if target is None and isinstance(mod, str) and mod.partition(".")[0] in sys.stdlib_module_names:
                import importlib
                target = importlib.import_module(mod)
            if target is not None:
                _patch(saved, target, name, server.dec(value))
        return saved or None

    def undo(self, server, saved, out):
        _unpatch(saved)


class Argv(Mirror):
    """sys.argv the test set."""

    def start(self, session):
        session.argv0 = list(sys.argv)

    def capture(self, session, ctx):
        if sys.argv != session.argv0:
            ctx["argv"] = session.enc(list(sys.argv))

    def install(self, server, ctx):
        if "argv" in ctx:
            saved = []
            _patch(saved, sys, "argv", server.dec(ctx["argv"]))
            return saved

    def undo(self, server, saved, out):
        _unpatch(saved)


class Recursion(Mirror):
    """The recursion limit the test set."""

    def start(self, session):
        session.recursion0 = sys.getrecursionlimit()

    def capture(self, session, ctx):
        if sys.getrecursionlimit() != session.recursion0:
            ctx["recursion"] = sys.getrecursionlimit()

    def install(self, server, ctx):
        if type(ctx.get("recursion")) is int:
            saved = sys.getrecursionlimit()
            sys.setrecursionlimit(max(ctx["recursion"], 50))
            return [saved]

    def undo(self, server, saved, out):
        sys.setrecursionlimit(saved[0])


def log_targets():
    """[(logger, level)] whose records the program's must reach: those of the test's assertLogs / assertNoLogs, then
    the named loggers the test gave a handler of its own (`logging.getLogger('shop').addHandler(h)`), at their
    effective level. A record comes back to the logger that collected it and goes on from there (its handlers, then
    its ancestors'), as propagation takes it in plain Python."""
    import logging
    targets = [(c.logger, c.level) for c in ACTIVE_LOG_CAPTURES]
    seen = {lg for lg, _ in targets}
    for lg in list(logging.Logger.manager.loggerDict.values()):
        if isinstance(lg, logging.Logger) and lg not in seen and lg.handlers and \
                not all(type(h) is logging.NullHandler for h in lg.handlers):
            targets.append((lg, lg.getEffectiveLevel()))
    return targets


class Logs(Mirror):
    """The test's assertLogs / assertNoLogs, and loggers it gave a handler: what the program logs there comes
    back to them."""

    def capture(self, session, ctx):
        targets = log_targets()
        if targets:
            import logging
            root = logging.getLogger()
            ctx["logs"] = [[None if lg is root else lg.name, level] for lg, level in targets]

    def install(self, server, ctx):
        if not ctx.get("logs"):
            return None
        import logging
        records = []

        class Collector(logging.Handler):
            def __init__(self, k):
                super().__init__()
                self.k = k

            def emit(self, record):
                try:
                    message = record.getMessage()
                except Exception:
                    message = str(record.msg)
                records.append([self.k, record.name, record.levelno, message])

        loggers = []
        for k, (name, level) in enumerate(ctx["logs"]):
            logger = logging.getLogger(name if isinstance(name, str) else None)
            loggers.append((logger, logger.handlers, logger.level, logger.propagate))
            logger.handlers = [Collector(k)]
            logger.setLevel(level if type(level) is int else logging.NOTSET)
            logger.propagate = False
        return records, loggers

    def undo(self, server, saved, out):
        records, loggers = saved
        for logger, handlers, level, propagate in reversed(loggers):
            logger.handlers, logger.propagate = handlers, propagate
            logger.setLevel(level)
        if records:
            out["logs"] = records

    def apply(self, session, out, ctx, pending):
        if "logs" not in ctx:
            return
        import logging
        captures = log_targets()
        for k, name, level, message in out.get("logs") or ():
            if type(k) is int and 0 <= k < len(captures) and type(level) is int:
                record = logging.LogRecord(str(name), level, "<solution>", 0, str(message), None, None)
                captures[k][0].handle(record)


class Warnings(Mirror):
    """The test's assertWarns / warnings.catch_warnings: what the program warns is handed to them (under the
    test's filters: recorded, ignored or raised)."""

    def capture(self, session, ctx):
        if ACTIVE_WARNING_CAPTURES:
            ctx["warnings"] = True

    def install(self, server, ctx):
        if ctx.get("warnings"):
            import warnings
            manager = warnings.catch_warnings(record=True)
            warned = manager.__enter__()
            warnings.simplefilter("always")
            return manager, warned

    def undo(self, server, saved, out):
        manager, warned = saved
        manager.__exit__(None, None, None)
        out["warnings"] = [server.enc(w.message) for w in warned if isinstance(w.message, Warning)]

    def apply(self, session, out, ctx, pending):
        if not ctx.get("warnings"):
            return
        import warnings
        for w in out.get("warnings") or ():
            message = session.dec(w)
            if isinstance(message, Warning):
                warnings.warn_explicit(message, type(message), "<solution>", 0)


# The one order both sides walk: captured and installed in this order, undone in reverse (os.environ before the
# patched attributes, random's state set and read around them, never through a test's mock of random).
MIRRORS = (Followed(), Streams(), Stdin(), Environ(), Random(), Builtins(), Patches(), Argv(), Recursion(), Logs(),
           Warnings())


# ---------------------------------------------------------------------------------------- the judge's side

def start(session):
    """A job begins: every kind's baseline, on the session."""
    for m in MIRRORS:
        m.start(session)


def capture(session):
    """The context of one request: what the test changed of the state it shares with the program."""
    ctx = {}
    for m in MIRRORS:
        m.capture(session, ctx)
    return ctx


def apply(session, out, ctx, pending):
    """Hand what came back of one request (the candidate's report) to the test."""
    if type(out) is dict:
        for m in MIRRORS:
            m.apply(session, out, ctx, pending)


# ---------------------------------------------------------------------------------------- the candidate's side

_REPORTERS = tuple(reversed([m for m in MIRRORS if m.REPORTS]))


def install(server, ctx):
    """Put the test's state in place for one request; what undo() needs. A kind that fails to install (a value
    it cannot decode) leaves nothing installed behind it."""
    if not ctx:  # the test changed nothing (most requests): no kind installs anything
        return ()
    saved = []
    try:
        for m in MIRRORS:
            saved.append(m.install(server, ctx))
    except BaseException:
        undo(server, saved)
        raise
    return saved


def undo(server, saved):
    """Put the program's own state back, in reverse order; the report for the judge (None: nothing)."""
    out = {}
    if not saved:  # nothing installed: only the kinds that report after every request
        for m in _REPORTERS:
            m.undo(server, None, out)
        return out or None
    for m, s in zip(reversed(MIRRORS[:len(saved)]), reversed(saved), strict=True):
        if s is not None or m.REPORTS:
            m.undo(server, s, out)
    return out or None

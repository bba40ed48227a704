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
import inspect
import io
import logging
import operator
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
import warnings

from . import channel, formats, framing, wire

_SLOTS = frozenset({"_coderl_s", "_coderl_i", "_coderl_n"})
_FILENAMES = ("<test", "<check", "<setup")  # code compiled from a label: the only code whose objects cross
_ASSERTION_REF = ["R", "builtins", "AssertionError"]
_BASE_MODULES = frozenset()  # the modules loaded before any job (serve()); a program's module names bind to these
_ITER_TYPES = frozenset(type(x) for x in (
    iter([]), iter(()), iter({}), iter(set()), iter(""), iter(b""), iter(range(0)), iter({}.values()),
    iter({}.items()), map(abs, []), filter(None, []), zip(), enumerate([]), reversed([]), (x for x in ())))
_VIEW_TYPES = frozenset(type(v) for v in ({}.keys(), {}.values(), {}.items()))


_NOTHING = object()
# Context managers of the tests in effect in this process (entered, not yet exited), which _mirror hands on to
# the program: mock.patch()es (decorator, with, start/stop), assertLogs / assertNoLogs, warnings.catch_warnings
# (assertWarns enters one too).
_ACTIVE_PATCHES, _ACTIVE_LOG_CAPTURES, _ACTIVE_WARNING_CAPTURES = [], [], []


def _track(cls, active):
    enter, exit_ = cls.__enter__, cls.__exit__

    def __enter__(self):
        result = enter(self)
        active.append(self)
        return result

    def __exit__(self, *exc):
        try:
            return exit_(self, *exc)
        finally:
            for i in range(len(active) - 1, -1, -1):
                if active[i] is self:
                    del active[i]
                    break

    cls.__enter__, cls.__exit__ = __enter__, __exit__


_RANDOM_SEEDED = set()  # non-empty once a test called random.seed / random.setstate (this job)


def _track_random():
    """random.seed / setstate in the tests mark that the program's random module must follow the test's."""
    for name in ("seed", "setstate"):
        original = getattr(random, name)

        def wrapper(*args, _original=original, _name=name, **kwargs):
            _RANDOM_SEEDED.add(_name)
            return _original(*args, **kwargs)

        setattr(random, name, wrapper)


def _log_targets():
    """[(logger, level)] whose records the program's must reach: those of the test's assertLogs / assertNoLogs, then
    the named loggers the test gave a handler of its own (`logging.getLogger('shop').addHandler(h)`), at their
    effective level. A record comes back to the logger that collected it and goes on from there (its handlers, then
    its ancestors'), as propagation takes it in plain Python."""
    targets = [(c.logger, c.level) for c in _ACTIVE_LOG_CAPTURES]
    seen = {lg for lg, _ in targets}
    for lg in list(logging.Logger.manager.loggerDict.values()):
        if isinstance(lg, logging.Logger) and lg not in seen and lg.handlers and \
                not all(type(h) is logging.NullHandler for h in lg.handlers):
            targets.append((lg, lg.getEffectiveLevel()))
    return targets


def _environ_data():
    """os.environ's own dict (comparing the mapping itself decodes every key)."""
    return getattr(os.environ, "_data", os.environ)


def _guard_set_equal():
    """unittest's assertSetEqual asks its first argument for `difference(second)`: an object of the program would
    receive the expected set and answer whether they differ (assertEqual on two sets comes here too)."""
    original = unittest.TestCase.assertSetEqual

    def assertSetEqual(self, set1, set2, msg=None):
        for v in (set1, set2):
            if _is_proxy(v):
                raise v._coderl_s.unjudgeable("assertSetEqual with an object of the program")
        return original(self, set1, set2, msg)

    unittest.TestCase.assertSetEqual = assertSetEqual


_guard_set_equal()
_track_random()
_track(unittest.mock._patch, _ACTIVE_PATCHES)
_track(unittest._log._AssertLogsContext, _ACTIVE_LOG_CAPTURES)
_track(warnings.catch_warnings, _ACTIVE_WARNING_CAPTURES)  # the test's own, and assertWarns's
_EXACT_ITEMS = 16  # items of a program's iterator fetched one next() at a time before prefetching (laziness)
_KEPT = 64  # arguments of the test the program keeps, followed after later calls (the candidate says which)


class Unjudgeable(BaseException):
    """The test needs the program to decide a comparison, or to receive something only the judge has."""


class CandidateGone(BaseException):
    """The candidate process died, closed the channel or broke the protocol."""


def _excerpt(text, limit):
    text = str(text)
    return text if len(text) <= limit else text[: limit // 2] + "\n…\n" + text[-limit // 2:]


# ------------------------------------------------------------------------------------------ proxies

def _unjudgeable(what):
    def method(self, *args):
        raise self._coderl_s.unjudgeable(what)
    return method


def _compare(name, same, flag):
    def method(self, other):
        if other is self:
            return same
        if getattr(type(self), flag):
            # The program's class keeps object's comparison: Python falls back to the other operand's method
            # (a test value's, or unjudgeable for another object of the program) and then to identity.
            return NotImplemented
        raise self._coderl_s.unjudgeable(f"`{name}` with an object of the program")
    return method


def _binop(name):
    def method(self, other):
        s = self._coderl_s
        if _is_proxy(other) and other._coderl_s is s:
            return s.op(self, "binop", name, other)
        raise s.unjudgeable(f"arithmetic ({name}) between an object of the program and a value of the test")
    return method


def _unary(name):
    def method(self):
        return self._coderl_s.op(self, name)
    return method


class Proxy:
    """An object living in the candidate process. Only what every object has is defined here; the special
    methods its own type has (call, iteration, len, arithmetic...) come from _OPTIONAL, per the program's
    type (_proxy_class), so callable(), hasattr() and the ABCs' checks see what plain Python would.

    The subclass is also named after the object's class, so `type(x).__name__` and `x.__class__.__name__`
    read as in plain Python; `__class__` is the genuine type where the class is a standard-library one the
    judge has loaded (`isinstance(x, types.GeneratorType)`, `isinstance(m, re.Match)`). And it says whether
    the class keeps object's `==` and ordering: comparisons are then decided here, by identity, as Python does
    (a candidate claiming so falsely gets no more than an honest `object()` gets)."""

    __slots__ = ("_coderl_s", "_coderl_i", "_coderl_n", "__weakref__")
    _coderl_eq = _coderl_ord = False  # the program's class keeps object's ==/!= (ordering: <, <=, >, >=)
    _coderl_type = None  # the genuine standard-library type of the object, when it has one

    @property
    def __class__(self):
        return type(self)._coderl_type or type(self)

    def __getattr__(self, name):
        return self._coderl_s.get(self, name)

    def __setattr__(self, name, value):
        if name in _SLOTS:
            object.__setattr__(self, name, value)
        else:
            self._coderl_s.set(self, name, value)

    def __delattr__(self, name):
        self._coderl_s.delete(self, name)

    def __format__(self, spec):
        return self._coderl_s.op(self, "format", spec)

    def __mro_entries__(self, bases):
        raise self._coderl_s.unjudgeable("a test class derives from a class of the program")

    def __deepcopy__(self, memo):  # the program copies its own object (the memo keeps sharing among the test's)
        return self._coderl_s.op(self, "deepcopy")

    def __copy__(self):
        return self._coderl_s.op(self, "copy")
    __eq__ = _compare("==", True, "_coderl_eq")
    __ne__ = _compare("!=", False, "_coderl_eq")
    __lt__ = _compare("<", False, "_coderl_ord")
    __gt__ = _compare(">", False, "_coderl_ord")
    __le__ = _compare("<=", True, "_coderl_ord")
    __ge__ = _compare(">=", True, "_coderl_ord")
    __str__, __repr__, __hash__, __dir__ = _unary("str"), _unary("repr"), _unary("hash"), _unary("dir")


def _is_proxy(obj):
    """obj is a proxy of this judge's making (type(), never the __class__ the candidate describes)."""
    return issubclass(type(obj), Proxy)


# A function's or object's docstring and module are the program's, not this class's (tests read `f.__doc__`,
# functools.wraps(f) reads both); every Proxy subclass gets them too (type() would set its own).
_META = {"__doc__": property(lambda self: self._coderl_s.get(self, "__doc__")),
         "__module__": property(lambda self: self._coderl_s.get(self, "__module__"))}


def _next(self):
    """next() with prefetch: one item at a time at first (_EXACT_ITEMS), then batches that double (up to 256),
    so a long iteration costs few round trips while a short one sees the program's generator advance as in
    Python."""
    s = self._coderl_s
    buf = s.iter_buffers.get(self._coderl_i)
    if buf is None:
        buf = s.iter_buffers[self._coderl_i] = [collections.deque(), 2, False, 0]
    items, want, done, served = buf
    if not items:
        if done:
            raise StopIteration
        if served < _EXACT_ITEMS:  # a test checking laziness sees the generator advance exactly as in Python
            buf[3] += 1
            return s.op(self, "next")
        got, done = s.op(self, "nextn", want)
        items.extend(got)
        buf[1], buf[2] = min(want * 2, 256), done
        if not items:
            raise StopIteration
    return items.popleft()


def _exit(self, typ, value, tb):
    """The program's __exit__ may clean up, never decide the fate of an exception in flight in the test: a
    truthy return would swallow the test's failed assertion, an exception would replace it. It learns the
    exception's type only (the value may quote an expected value)."""
    s = self._coderl_s
    if typ is None:
        s.op(self, "exit", None)
        return False
    try:
        verdict = s.op(self, "exit", typ if s._ref(typ) is not None else None)
        suppress = bool(verdict)
    except (Unjudgeable, CandidateGone):
        raise
    except BaseException:
        raise s.unjudgeable("the program's __exit__ replaced an exception raised in the test") from None
    if suppress:
        raise s.unjudgeable("the program's __exit__ suppressed an exception raised in the test")
    return False


def _await(self):
    """`await` on a coroutine of the program: it runs to its end in an event loop of the candidate's own (the
    test's loop cannot run the program's code), and its result or exception comes back as data."""
    return self._coderl_s.op(self, "await")
    yield  # unreachable: makes this a generator, as __await__ must return an iterator


def _coro_send(self, value):
    """asyncio.run(coroutine of the program) in the test: the event loop's first step runs it to its end (_await)."""
    if value is not None:
        raise TypeError("can't send non-None value to a just-started coroutine")
    raise StopIteration(self._coderl_s.op(self, "await"))


def _coro_throw(self, typ, value=None, tb=None):
    raise typ if value is None else value


# What asyncio drives a coroutine with, for a proxy of an awaitable (its loop's step: send, throw, close).
_AWAITABLE = {"send": _coro_send, "throw": _coro_throw, "close": lambda self: None}


def _generator_op(name):
    def method(self, *args):
        s = self._coderl_s
        buf = s.iter_buffers.get(self._coderl_i)
        if buf is not None and buf[0]:  # items read ahead (_next) were taken before this send
            raise s.unjudgeable(f"the test calls {name}() on a generator the judge has read ahead of")
        return s.op(self, name, *args)
    method.__name__ = name
    return method


# A generator of the program driven by the test (a running-average coroutine): these end it as next() does, so
# a StopIteration they raise is the generator's, as in plain Python.
_GENERATOR = {name: _generator_op(name) for name in ("send", "throw", "close")}


_OPTIONAL = {  # special methods a proxy has only when the program's type has them (candidate._CAPS)
    "__call__": lambda self, *args, **kwargs: self._coderl_s.call(self, args, kwargs),
    "__getitem__": lambda self, key: self._coderl_s.op(self, "getitem", key),
    "__setitem__": lambda self, key, value: self._coderl_s.op(self, "setitem", key, value),
    "__delitem__": lambda self, key: self._coderl_s.op(self, "delitem", key),
    "__round__": lambda self, *n: self._coderl_s.op(self, "round", *n),
    "__instancecheck__": lambda self, obj: self._coderl_s.op(self, "isinstance", obj),
    "__subclasscheck__": lambda self, cls: self._coderl_s.op(self, "issubclass", cls),
    "__contains__": _unjudgeable("`in` on an object of the program"),
    "__next__": _next,
    "__exit__": _exit,
    "__await__": _await,
}
for _name in ("len", "bool", "iter", "int", "float", "index", "complex", "neg", "pos", "abs", "invert",
              "reversed", "enter"):
    _OPTIONAL[f"__{_name}__"] = _unary(_name)
for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "lshift", "rshift", "and",
              "or", "xor"):
    _OPTIONAL[f"__{_name}__"] = _binop(_name + "_" if _name in ("and", "or") else _name)
    _OPTIONAL[f"__r{_name}__"] = _unjudgeable(f"arithmetic ({_name}) with an object of the program")
del _name
_PROXY_CLASSES = {}


def _proxy_class(info, session=None):
    """The Proxy subclass for an object the candidate describes: the special methods its type has ("m"; all of
    them when the program sent none), its class's name and genuine standard-library type ("c"), whether that
    class keeps object's equality and ordering ("eq", "ord")."""
    caps = info.get("m")
    if type(caps) is not list:
        key, nohash = tuple(_OPTIONAL), False
    else:
        names = {c for c in caps if type(c) is str}
        key, nohash = tuple(n for n in _OPTIONAL if n in names), "nohash" in names
    name, real = _class_of(info.get("c"))
    eq, order = bool(info.get("eq")), bool(info.get("ord"))
    df = info.get("df")
    df = tuple(f for f in df[:256] if type(f) is str and f.isidentifier()) if type(df) is list else None
    # A dataclass's proxy class builds new objects of the program's class (`dataclasses.replace(o, x=1)` calls
    # `o.__class__(...)`): one per session (which it calls) and class.
    maker = info.get("c") if df is not None and session is not None else None
    maker = maker if type(maker) is list and len(maker) == 3 and maker[0] == "h" else None
    cache = session.__dict__.setdefault("dataclass_proxies", {}) if maker is not None else _PROXY_CLASSES
    abcs = info.get("abc")
    abcs = tuple(n for n in abcs[:16] if n in _NOMINAL_ABCS) if type(abcs) is list else ()
    cls = cache.get((key, nohash, name, real, eq, order, df, maker and maker[1], abcs))
    if cls is None:
        body = {"__slots__": (), **{n: _OPTIONAL[n] for n in key},
                **(_AWAITABLE if real is types.CoroutineType else {}),
                **(_GENERATOR if real is types.GeneratorType else {}), **_META, "__qualname__": name,
                "_coderl_type": real, "_coderl_eq": eq, "_coderl_ord": order}
        if nohash:
            body["__hash__"] = None
        if df is not None:
            body["__dataclass_fields__"] = _dataclass_fields(df)
        if maker is not None:
            body["__new__"] = _maker(maker, session)
        cls = type(name, (Proxy,), body)
        for n in abcs:  # isinstance only: the proxy's methods are still the program's own
            getattr(collections.abc, n).register(cls)
        if len(cache) < 4096:  # the program chooses the combinations: bounded
            cache[(key, nohash, name, real, eq, order, df, maker and maker[1], abcs)] = cls
    return cls


_NOMINAL_ABCS = frozenset({"Mapping", "MutableMapping", "Sequence", "MutableSequence", "Set", "MutableSet",
                           "MappingView", "KeysView", "ItemsView", "ValuesView"})


def _maker(ref, session):
    def __new__(cls, *args, **kwargs):  # a call of the program's class, as the proxy of that class makes it
        return session.call(session.resolve(ref), args, kwargs)
    return __new__


def _dataclass_fields(names):
    """Fields of the judge's making for a dataclass of the program: only their names, so dataclasses.fields /
    asdict / astuple read its attributes through the proxy (data), and nothing of the program runs here."""
    import dataclasses
    out = {}
    for n in names:
        f = dataclasses.field()
        f.name, f.type, f._field_type = n, object, dataclasses._FIELD
        out[n] = f
    return out


def _class_of(ref):
    """(name, genuine type or None) of the class the candidate says an object has: ["R", module, qualname] for
    a standard-library type (looked up among the modules already loaded, never imported), ["h", id, {"n":
    name}] for one of the program's."""
    if type(ref) is list and len(ref) == 3 and ref[0] == "R":
        try:
            real = _loaded(ref[1], ref[2])
        except wire.DecodeError:
            real = None
        if isinstance(real, type):
            return str(real.__name__)[:100], real
        return (ref[2].rpartition(".")[2] if type(ref[2]) is str else "Proxy")[:100] or "Proxy", None
    if type(ref) is list and len(ref) == 3 and ref[0] == "h" and type(ref[2]) is dict:
        return str(ref[2].get("n") or "Proxy")[:100], None
    return "Proxy", None


def _synth_str(self):
    text = self.__dict__.get("_coderl_str")
    return text if isinstance(text, str) else BaseException.__str__(self)


class _Exported:
    """What the test patched (print, input: "call"; sys.stdin: "stream") wrapped for one call of the program."""

    __slots__ = ("target", "kind")
    # What the program may do with a stream of the test (sys.stdin it set, a StringIO or file it passes).
    STREAM_METHODS = frozenset({"read", "readline", "readlines", "write", "writelines", "seek", "tell",
                                "getvalue", "truncate", "flush", "close", "readable", "writable", "seekable"})
    STREAM_DATA = frozenset({"closed", "name", "mode", "encoding", "newlines"})

    def __init__(self, target, kind):
        self.target, self.kind = target, kind


# ------------------------------------------------------------------------------------------ session

class Session:
    """One job's connection to its candidate: proxies, what was handed to it, and the current test's taint."""

    def __init__(self, fd, limit, detail_chars):
        self.chan = channel.Channel(fd, limit, self._serve)
        self.fd = fd
        self.proxies = {}  # candidate id -> Proxy / synthetic exception class
        self.iter_buffers = {}  # candidate id of an iterator -> [prefetched items, next batch size, exhausted]
        self.exports = {}  # judge id -> object handed to the candidate
        self.export_ids = {}
        self.taint = None  # (status, detail) that overrides the current test's outcome
        self.callback_failures = 0  # assertions of the test that failed inside a callback the program called
        self.callback_stops = 0  # StopIterations the test's own callables raised to the program (an exhausted side_effect)
        self.gone = None
        self.detail_chars = detail_chars
        self.solution = None  # the judge-side `solution` module, and its names when the tests started
        self.solution_names = None
        # What the tests may change of the state a program shares with them in plain Python (_mirror).
        self.streams = (sys.stdout, sys.stdin, sys.stderr)
        self.builtins0 = dict(builtins.__dict__)
        self.builtin_values = list(self.builtins0.values())
        self.argv0, self.environ0 = list(sys.argv), dict(_environ_data())
        self.random_synced = None  # random's state as the candidate has it, once the test seeded random
        _RANDOM_SEEDED.clear()
        self.recursion0 = sys.getrecursionlimit()
        # Containers the test and the program both hold (wire.MUTABLE), by id: a test's argument the program
        # keeps (our ids, positive), a container the program keeps and handed over (its ids, negative), and
        # each one's state as both sides last agreed on it.
        self.tracked, self.track_seq, self.synced = {}, 0, {}

    # ---------------------------------------------------------------- taint
    def unjudgeable(self, what):
        self.taint = self.taint or ("unsupported", f"not judgeable through the plain-data channel: {what}")
        return Unjudgeable(what)

    def _gone(self, why):
        self.gone = self.gone or why
        self.taint = ("killed", f"the program's process ended: {why}")
        return CandidateGone(why)

    # ---------------------------------------------------------------- values
    def export(self, obj):
        ref = self._ref(obj)
        if ref is None:
            raise self.unjudgeable(f"a {type(obj).__name__} of the test passed to the program")
        return ref

    def _export_quiet(self, obj):
        """export() for what the program gets back from a callback: what cannot cross arrives as None."""
        return self._ref(obj)

    def _export_untainted(self, obj):
        """export() that leaves the test's verdict alone: what cannot cross raises Unencodable."""
        ref = self._ref(obj)
        if ref is None:
            raise wire.Unencodable(type(obj).__name__)
        return ref

    def _ref(self, obj):
        """How obj crosses to the candidate, or None when it cannot."""
        if _is_proxy(obj):
            return ["y", obj._coderl_i] if obj._coderl_s is self else None
        if isinstance(obj, type) and "_coderl_cid" in obj.__dict__:
            return ["y", obj.__dict__["_coderl_cid"]]
        if isinstance(obj, types.ModuleType):
            name = obj.__name__
            return ["R", name, ""] if name.partition(".")[0] in sys.stdlib_module_names else None
        ref = wire.stdlib_ref(obj)
        if ref is not None:
            return ref
        kind = _exportable(obj)
        if kind is None:
            return None
        jid = self.export_ids.get(id(obj))
        if jid is None or self.exports[jid][0] is not obj:
            jid = len(self.exports) + 1
            self.exports[jid] = (obj, kind)
            self.export_ids[id(obj)] = jid
        return ["h", jid, {"k": kind}]

    def resolve(self, x):
        tag = x[0]
        if tag == "h":
            if len(x) != 3 or type(x[1]) is not int or type(x[2]) is not dict:
                raise wire.DecodeError("bad handle")
            obj = self.proxies.get(x[1])
            if obj is None:
                info = x[2]
                obj = _known(info.get("r"), info.get("k"))
                if obj is None:
                    obj = self._synth(x[1], info) if info.get("k") == "exc" else self._proxy(x[1], info)
                self.proxies[x[1]] = obj
            return obj
        if tag == "y":
            entry = self.exports.get(x[1]) if type(x[1]) is int else None
            if entry is None:
                raise wire.DecodeError("unknown handle")
            return entry[0]
        if tag == "R":
            if len(x) != 3:
                raise wire.DecodeError("bad reference")
            obj = _loaded(x[1], x[2])
            if _accepted_ref(obj):
                return obj
            raise wire.DecodeError(f"reference {x[1]}.{x[2]} is not data")
        raise wire.DecodeError("bad tag")

    def _proxy(self, cid, info):
        p = object.__new__(_proxy_class(info, self))
        p._coderl_s, p._coderl_i = self, cid
        p._coderl_n = str(info.get("n") or "")[:100]
        return p

    def _synth(self, cid, info):
        """A real exception class standing for one of the program's, so assertRaises / except work."""
        bases = []
        for b in info.get("b") or []:
            try:
                cls = self.resolve(b) if type(b) is list else None
            except wire.DecodeError:
                cls = None
            if isinstance(cls, type) and issubclass(cls, BaseException) and cls not in bases:
                bases.append(cls)
        name = str(info.get("n") or "Error")[:100]
        body = {"__module__": "solution", "__str__": _synth_str, "_coderl_cid": cid}
        try:
            cls = type(name, tuple(bases) or (Exception,), body)
        except TypeError:  # an MRO the judge cannot rebuild
            cls = type(name, (Exception,), body)
        return cls

    def enc(self, value):
        return wire.encode(value, self.export)

    def dec(self, value):
        try:
            return wire.decode(value, self.resolve)
        except (wire.DecodeError, RecursionError) as e:
            self.taint = ("error", f"the program sent an unreadable value: {e}")
            raise CandidateGone(str(e)) from None

    # ---------------------------------------------------------------- requests to the candidate
    def _request(self, msg):
        if self.gone:
            raise CandidateGone(self.gone)
        failed = self.callback_failures
        try:
            reply = self.chan.request(msg)
        except channel.PeerGone as e:
            raise self._gone(str(e)) from None
        if self.callback_failures != failed and not (
                reply[0] == "raise" and type(reply[1]) is dict and reply[1].get("cls") == _ASSERTION_REF):
            # An assertion of the test failed in a callback and the program did not let it through.
            raise self.unjudgeable("the program caught an assertion of the test that failed in a callback")
        return reply

    def _result(self, reply, stop=False):
        if reply[0] == "ok":
            return self.dec(reply[1])
        raise self.exception(reply[1], stop)

    def exception(self, desc, stop=False):
        """The program's exception as a genuine one of this process. Only `next` may end an iteration, and only
        ordinary exceptions (and SystemExit) cross: a StopIteration from a call would silently end the test's
        map() or loop, a KeyboardInterrupt would stop the test runner itself."""
        try:
            exc = wire.build_exception(desc, self.resolve)
        except (wire.DecodeError, RecursionError) as e:
            self.taint = ("error", f"the program raised an unreadable exception: {e}")
            return CandidateGone(str(e))
        if isinstance(exc, (StopIteration, StopAsyncIteration)) and not stop or \
                not isinstance(exc, (Exception, SystemExit)):
            exc = RuntimeError(f"the program raised {type(exc).__name__}: {desc.get('str') or ''}"[:500])
        text, tb = desc.get("str"), desc.get("tb")
        if "_coderl_cid" in type(exc).__dict__ and isinstance(text, str):
            exc._coderl_str = text
        if isinstance(tb, str):
            exc._coderl_tb = tb[-self.detail_chars:] if self.detail_chars else ""
        return exc

    def _mirrored_request(self, msg):
        """A request that runs program code other than a call (a generator's next, __enter__/__exit__, a
        property): the state the test shares with the program is mirrored for it as for a call, so what a
        generator prints reaches the test's redirected stdout and a context manager calls the test's
        patched time.perf_counter."""
        ctx = self._mirror()
        if not ctx:
            return self._request(msg)
        reply = self._request(["with", ctx, msg])
        self._unmirror(reply[2] if len(reply) > 2 else None, ctx, {})
        return reply

    def get(self, proxy, name):
        reply = self._mirrored_request(["get", proxy._coderl_i, name])
        return self._adopt(reply, self._result(reply))

    def set(self, proxy, name, value):
        self._result(self._mirrored_request(["set", proxy._coderl_i, name, self.enc(value)]))

    def delete(self, proxy, name):
        self._result(self._mirrored_request(["del", proxy._coderl_i, name]))

    def op(self, proxy, name, *args):
        reply = self._mirrored_request(["op", proxy._coderl_i, name, *(self.enc(a) for a in args)])
        return self._adopt(reply, self._result(reply, stop=name in ("next", "send", "throw")))

    def _adopt(self, reply, value):
        """value, which the program keeps too when the reply says it shares it: the test's copy is followed
        both ways from now on, and the same container handed over again is the test's same object."""
        out = reply[2] if len(reply) > 2 else None
        tid = out.get("shared") if type(out) is dict else None
        if type(tid) is not int or tid >= 0 or type(value) not in wire.MUTABLE:
            return value
        known = self.tracked.get(tid)
        if known is not None and type(known) is type(value):
            _write_back(known, value)
            value = known
        elif len(self.tracked) >= _KEPT:
            return value
        self.tracked[tid] = value
        self.synced[tid] = self._state(value)
        return value

    def _state(self, obj):
        """A shared container's state as it would cross, or None when it cannot (then it is not pushed)."""
        try:
            return wire.encode(obj, self._export_untainted)
        except (RecursionError, TypeError, ValueError):  # Unencodable is a TypeError
            return None

    def call(self, proxy, args, kwargs):
        self._check_solution_module()
        ctx = self._mirror()
        pending = {}  # this call's mutable arguments, by the id the candidate reports them under
        for key, a in [*enumerate(args), *kwargs.items()]:
            if type(a) in wire.MUTABLE:
                self.track_seq += 1
                pending[self.track_seq] = a
                ctx.setdefault("track", []).append([key, self.track_seq])
        rows = {key: list(a) for key, a in [*enumerate(args), *kwargs.items()] if type(a) is list}
        msg = ["call", proxy._coderl_i, [self.enc(a) for a in args], {str(k): self.enc(v) for k, v in kwargs.items()}, ctx]
        stops = self.callback_stops
        reply = self._request(msg)
        self._unmirror(reply[2] if len(reply) > 2 else None, ctx, pending)
        if reply[0] != "ok":
            # A StopIteration ends the call as in plain Python only when the test's own callable raised one in
            # it (`input` patched with a side_effect list that ran out); a program's own would end a map().
            raise self.exception(reply[1], stop=self.callback_stops != stops)
        value = self._adopt(reply, _own_rows(self.dec(reply[1]), reply[5] if len(reply) > 5 else None, rows))
        for key, state, *same_rows in reply[3] if len(reply) > 3 and type(reply[3]) is list else ():
            target = args[key] if type(key) is int and 0 <= key < len(args) else kwargs.get(key)
            _write_back(target, self.dec(state), same_rows[0] if same_rows else None)
        same = reply[4] if len(reply) > 4 else None
        if same is not None:  # the program returned that argument (its state was just written back)
            value = args[same] if type(same) is int and 0 <= same < len(args) else kwargs.get(same) \
                if type(same) is str else None
        return value

    def _mirror(self):
        """What the test changed of the state a program shares with its tests in plain Python, for one call: a
        redirected sys.stdout / sys.stderr (captured there, written here), builtins it replaced (print, input,
        open, ...) and sys.stdin (the program calls back the test's), sys.argv, os.environ, attributes of
        standard-library modules patched with mock.patch (time.sleep, random.randint, os.path.exists, ...:
        the program calls back the test's mock), the random module's state once the test has set it, the
        recursion limit the test set, and the assertLogs / assertWarns the test is in (what the program logs
        or warns comes back here to them)."""
        out_, in_, err_ = self.streams
        ctx = {}
        if sys.stdout is not out_:
            ctx["stdout"] = True
        if sys.stderr is not err_:
            ctx["stderr"] = True
        if sys.stdin is not in_:
            ctx["stdin"] = self.export(_Exported(sys.stdin, "stream"))
        current = builtins.__dict__
        if len(current) != len(self.builtin_values) or any(map(operator.is_not, current.values(),
                                                               self.builtin_values)):
            changed = {k: v for k, v in current.items() if self.builtins0.get(k, _NOTHING) is not v}
            ctx["builtins"] = {k: self._mirrored(v) for k, v in changed.items()}
        patches = []
        for p in _ACTIVE_PATCHES:
            target, name = getattr(p, "target", None), getattr(p, "attribute", None)
            if isinstance(target, types.ModuleType) and isinstance(name, str) and target is not builtins and \
                    target.__name__.partition(".")[0] in sys.stdlib_module_names and \
                    not (target is sys and name in ("stdin", "stdout", "stderr")):
                patches.append([target.__name__, name, self._mirrored(getattr(target, name, None))])
        if patches:
            ctx["patches"] = patches
        if sys.argv != self.argv0:
            ctx["argv"] = self.enc(list(sys.argv))
        if _environ_data() != self.environ0:
            ctx["environ"] = self.enc(dict(os.environ))
        if _RANDOM_SEEDED:  # the state is worth its round trips only once the test has seeded random
            state = random.getstate()
            if state != self.random_synced:
                ctx["random"] = self.enc(state)
                self.random_synced = state
        if sys.getrecursionlimit() != self.recursion0:
            ctx["recursion"] = sys.getrecursionlimit()
        targets = _log_targets()
        if targets:
            root = logging.getLogger()
            ctx["logs"] = [[None if lg is root else lg.name, level] for lg, level in targets]
        if _ACTIVE_WARNING_CAPTURES:
            ctx["warnings"] = True
        if self.tracked:  # present even when empty: the candidate then reports what the program changed
            push = ctx["sync"] = []
            for tid, obj in self.tracked.items():
                state = self._state(obj)
                if state is not None and state != self.synced.get(tid):
                    push.append([tid, state])
                    self.synced[tid] = state
        return ctx

    def _mirrored(self, value):
        """How a value the test put in place of a builtin or a module attribute reaches the program: a
        callable the test made (a mock, a function) is called back here, anything else crosses as data."""
        if callable(value) and not isinstance(value, type) and self._ref(value) is None:
            value = _Exported(value, "call")
        return self.enc(value)

    def _unmirror(self, out, ctx, pending):
        """Apply what came back of one call: output, random state, changes to arguments the program keeps,
        log records and warnings for the test's assertLogs / assertWarns."""
        if type(out) is not dict:
            return
        for name in ("stdout", "stderr"):
            text = out.get(name)
            if isinstance(text, str) and text:
                getattr(sys, name).write(text)
        if "random" in out and self.random_synced is not None:  # only once the test shared random's state
            state = _continuation(self.random_synced, self.dec(out["random"]))
            if state is not None:
                random.setstate(state)
                self.random_synced = state
        for tid in out.get("kept") or ():  # followed from now on (held only while the program keeps them)
            if type(tid) is int and tid in pending and len(self.tracked) < _KEPT:
                self.tracked[tid] = pending[tid]
                self.synced[tid] = self._state(pending[tid])
        for tid, state in out.get("live") or ():
            if type(tid) is int and tid in self.tracked:
                _write_back(self.tracked[tid], self.dec(state))
                self.synced[tid] = self._state(self.tracked[tid])
        for tid in out.get("released") or ():
            if type(tid) is int:
                self.tracked.pop(tid, None)
                self.synced.pop(tid, None)
        captures = _log_targets() if "logs" in ctx else []
        for k, name, level, message in out.get("logs") or ():
            if type(k) is int and 0 <= k < len(captures) and type(level) is int:
                record = logging.LogRecord(str(name), level, "<solution>", 0, str(message), None, None)
                captures[k][0].handle(record)
        for w in out.get("warnings") or () if ctx.get("warnings") else ():
            message = self.dec(w)
            if isinstance(message, Warning):
                warnings.warn_explicit(message, type(message), "<solution>", 0)

    def _check_solution_module(self):
        mod, names = self.solution, self.solution_names
        if mod is not None and names is not None and not _State.same(mod.__dict__, names):
            raise self.unjudgeable("the test replaces a name of the solution module (mock.patch?)")

    # ---------------------------------------------------------------- the candidate's requests
    def _serve(self, msg):
        try:
            op, jid = msg[0], msg[1]
            obj, kind = self.exports[jid]
            if type(obj) is _Exported:
                if op == "call" and kind == "call":
                    value = obj.target(*[self.dec(a) for a in msg[2]], **{str(k): self.dec(v) for k, v in msg[3].items()})
                    return ["ok", wire.encode(value, self._export_quiet)]
                if kind != "stream":
                    raise TypeError(f"the test's {op} {msg[2:3]} is not available to the program")
                obj = obj.target
            if kind == "stream":
                if op == "get" and msg[2] in _Exported.STREAM_METHODS:
                    return ["ok", self.enc(_Exported(getattr(obj, msg[2]), "call"))]
                if op == "get" and msg[2] in _Exported.STREAM_DATA:
                    return ["ok", wire.encode(getattr(obj, msg[2], None), self._export_quiet)]
                if op == "op" and msg[2] in ("iter", "next", "enter", "exit"):
                    return ["ok", self.enc(_STREAM_OPS[msg[2]](obj))]
            if op == "call" and kind in ("call", "object"):
                args = [self.dec(a) for a in msg[2]]
                kwargs = {str(k): self.dec(v) for k, v in msg[3].items()}
                return ["ok", self.enc(obj(*args, **kwargs))]
            if op == "get" and kind in ("object", "stream") and isinstance(msg[2], str) and not msg[2].startswith("_"):
                return ["ok", self.enc(getattr(obj, msg[2]))]
            if op == "get" and msg[2] in _FUNCTION_META:  # functools.wraps(test_function), obj.__doc__
                return ["ok", wire.encode(getattr(obj, msg[2], None), self._export_quiet)]
            if op == "get":  # what plain Python would have, for getattr(x, name, default) and hasattr
                raise AttributeError(f"the test's {type(obj).__name__} has no attribute {msg[2]!r} for the "
                                     "program")
            if op == "set" and kind == "object" and isinstance(msg[2], str) and not msg[2].startswith("_"):
                value = self.dec(msg[3])
                if not _may_set(obj, msg[2], msg[3]):
                    raise AttributeError(f"the program may not replace {msg[2]!r} of the test's {type(obj).__name__}")
                setattr(obj, msg[2], value)
                return ["ok", None]
            if op == "op" and kind in ("iterator", "object", "call"):
                name, args = msg[2], [self.dec(a) for a in msg[3:]]
                if name == "iter" and kind != "call":
                    return ["ok", self.enc(iter(obj))]
                if name == "next" and kind != "call":
                    return ["ok", self.enc(next(obj))]
                if name in _COMPARE_OPS:  # the test's own __eq__ / __lt__ / __hash__ decide (a heap of Tasks)
                    return ["ok", self.enc(_COMPARE_OPS[name](obj, *args))]
                if name in ("repr", "str"):
                    return ["ok", self.enc(_OBJECT_OPS[name](obj))]
                if kind == "object" and name in _OBJECT_OPS:
                    return ["ok", self.enc(_OBJECT_OPS[name](obj, *args))]
            raise TypeError(f"the test's {type(obj).__name__} does not support {op} {msg[2:3]}")
        except Exception as e:
            # A builtin or standard-library exception reaches the program as itself (a mock's side_effect of
            # EOFError ends the program's input loop); one of the test's own classes as a RuntimeError.
            if isinstance(e, AssertionError):
                self.callback_failures += 1
            if isinstance(e, StopIteration) and op == "call":
                self.callback_stops += 1
            if wire.stdlib_ref(type(e)) is None or type(e).__module__.startswith("unittest"):
                e = RuntimeError(f"{type(e).__name__}: {e}")
            return ["raise", wire.encode_exception(e, self._export_quiet)]



_STREAM_OPS = {"iter": iter, "next": next, "enter": lambda o: o.__enter__(),
               "exit": lambda o: o.__exit__(None, None, None)}
_COMPARE_OPS = {"eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le, "gt": operator.gt,
                "ge": operator.ge, "hash": hash}
_OBJECT_OPS = {"len": len, "bool": bool, "getitem": lambda o, k: o[k], "contains": lambda o, x: x in o,
               "repr": repr, "str": str, "enter": lambda o: o.__enter__(),
               "exit": lambda o: o.__exit__(None, None, None)}
# What functools.wraps reads of a function the program decorates (and a docstring of a test object).
_FUNCTION_META = frozenset({"__name__", "__qualname__", "__doc__", "__module__", "__annotations__"})
# Test-made callables that only read what they are given (sorted(xs, key=itemgetter(1))).
_ACCESSORS = (operator.itemgetter, operator.attrgetter, operator.methodcaller)


def _own_rows(value, picks, rows):
    """value with the containers the candidate says are items of a list argument (candidate.Server._picks) replaced
    by the test's own items, in the state the program left them: a claim only hands the test back its own object
    in a state the program could have given it anyway."""
    if type(picks) is not list:
        return value
    items = list(value) if type(value) in (list, tuple) else None
    for pick in picks:
        if type(pick) is not list or len(pick) != 3 or type(pick[2]) is not int:
            continue
        where, key, j = pick
        before = rows.get(key) if type(key) in (int, str) else None
        if before is None or not 0 <= j < len(before) or type(before[j]) not in wire.MUTABLE:
            continue
        own = before[j]
        if where == -1 and type(value) is type(own):
            _write_back(own, value)
            return own
        if items is not None and type(where) is int and 0 <= where < len(items) and type(items[where]) is type(own):
            _write_back(own, items[where])
            items[where] = own
    if items is None:
        return value
    if type(value) is list:
        value[:] = items
        return value
    return tuple(items)


def _may_set(obj, name, raw):
    """What the program may set on an object of the test: its data, never what the test will run or read as
    its own record — a method or property of its class (a check the test calls), a callable it holds, a mock it
    holds (alone or in a container: its calls are the test's record), and of a Mock its machinery
    (assert_called_with, call_count, return_value, side_effect, ...), the records a Mock keeps as plain
    attributes (method_calls), its children, or anything but plain data without attributes of its own naming
    (a SimpleNamespace(called=True) standing where the test reads a child's `m.send.called`)."""
    try:
        current = inspect.getattr_static(obj, name)
    except AttributeError:
        current = _NOTHING
    if isinstance(current, property):  # a setter the test wrote decides what the value does
        if current.fset is None or not _from_tests(getattr(current.fset, "__code__", None)):
            return False
    elif current is not _NOTHING and (callable(current) or hasattr(type(current), "__get__") or
                                       _holds_mock(current)):
        return False
    if isinstance(obj, unittest.mock.NonCallableMock):
        return name not in _MOCK_OWN and name not in obj.__dict__.get("_mock_children", ()) and \
            _plain(raw, _NAMED)
    return True


# What a Mock puts in its own __dict__ besides its private _mock_* state: records of its calls (method_calls).
_MOCK_OWN = frozenset(k for cls in (unittest.mock.NonCallableMagicMock, unittest.mock.MagicMock,
                                    unittest.mock.AsyncMock) for k in vars(cls()) if not k.startswith("_"))
# Plain data whose attributes have names the program chooses (a child mock's records, impersonated).
_NAMED = ("sn", "nt")


def _holds_mock(value, depth=0):
    """value is a mock of the test's, or a builtin container holding one (a list of handlers)."""
    if isinstance(value, unittest.mock.NonCallableMock):
        return True
    t = type(value)
    if depth > 8 or t not in (list, tuple, set, frozenset, dict, collections.deque):
        return False
    return any(_holds_mock(v, depth + 1) for v in (value.values() if t is dict else value))


def _write_back(target, state, same_rows=None):
    """wire.write_back, except that a container holding the test's mocks never takes data with attributes of the
    program's naming: a SimpleNamespace(called=True) in a mock's place would answer the test's
    `handlers[0].called`."""
    if not (_holds_mock(target) and _named(state)):
        wire.write_back(target, state, same_rows)


def _named(value, depth=0):
    """value is, or holds, plain data whose attributes have names the program chose (SimpleNamespace,
    namedtuple)."""
    t = type(value)
    if t is types.SimpleNamespace or isinstance(value, tuple) and hasattr(t, "_fields") or \
            "_coderl_en_of" in t.__dict__:  # an enum member's stand-in answers attributes the program names
        return True
    if depth > 8 or t not in (list, tuple, set, frozenset, dict, collections.deque):
        return False
    return any(_named(v, depth + 1) for v in (value.values() if t is dict else value))


def _plain(x, refused=()):
    """An encoded value holds only data: no object of either side, no reference (nor a tag in `refused`)."""
    if type(x) is dict:
        return False
    if type(x) is not list:
        return True
    return bool(x) and x[0] not in ("h", "y", "R", "e") and x[0] not in refused and \
        all(_plain(v, refused) for v in x[1:])


def _loaded(mod, qual):
    """What ["R", module, qualname] names among the modules this process has already loaded. Never an import
    (a module's import runs its code: `unittest.__main__` would run test files the program wrote into the
    job directory) and never a module's __getattr__ (lazy imports): only what is in the dictionaries."""
    if type(mod) is not str or type(qual) is not str:
        raise wire.DecodeError("bad reference")
    target = sys.modules.get(mod)
    if (mod != "builtins" and mod.partition(".")[0] not in sys.stdlib_module_names) or \
            not isinstance(target, types.ModuleType):
        raise wire.DecodeError(f"module {mod} is not loaded in the judge")
    for part in qual.split(".") if qual else ():
        try:
            target = vars(target)[part]
        except (TypeError, KeyError):
            raise wire.DecodeError(f"unknown reference {mod}.{qual}") from None
    return target


def _known(ref, kind):
    """The judge's own module or exception class a handle's reference hint names, or None (the handle then
    stands for the program's object: a proxy, or a class rebuilt from its name and bases)."""
    if type(ref) is not list or len(ref) != 2 or kind not in ("mod", "exc"):
        return None
    try:
        obj = _loaded(*ref)
    except wire.DecodeError:
        return None
    if not _accepted_ref(obj) or isinstance(obj, types.ModuleType) != (kind == "mod"):
        return None
    return obj


def _accepted_ref(obj):
    """References from the candidate may name data, never behaviour the judge would run for it: stdlib
    modules (the judge's own), exception classes (outside unittest) and the builtin types."""
    if isinstance(obj, types.ModuleType):
        return True
    if isinstance(obj, type) and issubclass(obj, BaseException):
        return not obj.__module__.startswith("unittest") and not issubclass(obj, unittest.SkipTest)
    return obj in wire.BUILTIN_TYPES


def _from_tests(code):
    return isinstance(code, types.CodeType) and code.co_filename.startswith(_FILENAMES)


def _exportable(obj):
    """What the candidate may do with an object of the test (None: it cannot have it)."""
    t = type(obj)
    if t is _Exported:
        return obj.kind
    if t is types.FunctionType:
        return "call" if _from_tests(obj.__code__) else None
    if t is types.MethodType:
        return "call" if _from_tests(getattr(obj.__func__, "__code__", None)) and \
            _exportable(obj.__self__) == "object" else None
    if t is types.GeneratorType:  # the test's own, or mock_open()'s (a program's `for line in f`)
        code = obj.gi_code
        return "iterator" if _from_tests(code) or code.co_filename == unittest.mock.__file__ else None
    if t in _ITER_TYPES or getattr(t, "__module__", None) == "itertools":  # itertools.count() and the like
        return "iterator"
    if t in _VIEW_TYPES:  # f(d.items()): len, iteration and `in` as on the view
        return "object"
    if t in _ACCESSORS:
        return "call"
    if isinstance(obj, io.IOBase):  # a StringIO or file the test passes (csv.reader(f), json.load(f))
        # never this process's own standard streams (its stderr is the worker's)
        return None if any(obj is s for s in (sys.__stdin__, sys.__stdout__, sys.__stderr__)) else "stream"
    if isinstance(obj, unittest.mock.NonCallableMock):  # a Mock the test hands over or patches in (mock_open)
        return "object"
    if isinstance(obj, (type, types.ModuleType, BaseException, unittest.TestCase)):
        return None
    module = getattr(t, "__module__", "")
    if isinstance(module, str) and module.startswith(("test_module_", "__check__")):
        return "object"
    return None


_TWISTS = 1024  # blocks of 624 words a program may draw between two calls and still hand its state back


def _continuation(old, new):
    """The state the program's random module reports, when it continues `old` (the program drew numbers from
    the test's sequence), else None: a state it chose (a reseed, made-up words) would let it choose what the
    test draws next (the inputs a test generates after a call). A gauss() value the program left pending is
    dropped (the test's next gauss() draws afresh): it could be any float."""
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


# ------------------------------------------------------------------------------------------ a job

def classify(exc):
    if isinstance(exc, MemoryError):
        return "memory"
    if isinstance(exc, (SystemExit, KeyboardInterrupt, GeneratorExit, CandidateGone)):
        return "killed"
    if isinstance(exc, Unjudgeable):
        return "unsupported"
    if isinstance(exc, AssertionError):
        return "failed"
    if isinstance(exc, SyntaxError):
        return "syntax"
    return "error"


def describe(exc, limit):
    tb = getattr(exc, "_coderl_tb", None)
    try:
        head = f"{type(exc).__name__}: {exc}"
    except BaseException:
        head = type(exc).__name__
    if isinstance(tb, str) and tb:
        return _excerpt(tb.rstrip(), limit)
    lines = []
    t = exc.__traceback__
    while t is not None:
        code = t.tb_frame.f_code
        if _from_tests(code):
            lines.append(f"  {code.co_filename}:{t.tb_lineno} in {code.co_name}")
        t = t.tb_next
    return _excerpt("\n".join(lines[-3:] + [head]), limit)


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
        if (name in builtins.__dict__ or top) and name != spec.entry_point:
            own = _own_stdlib_object(name, enc) if top else None
            if own is not None:
                ns[name] = public[name] = own
                continue
            if top and name in _BASE_MODULES:  # the judge imports nothing because the program named it
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


def _own_stdlib_object(name, enc):
    """The judge's own object for a program name that is a standard-library module's name and stands for an object
    of that very module (`from datetime import datetime`, `from time import time`): looked up among the modules
    already loaded here, never a module, never anything of the program (a fake `json` stays out)."""
    if type(enc) is not list or len(enc) != 3 or enc[0] != "R" or type(enc[1]) is not str or \
            enc[1].partition(".")[0] != name or type(enc[2]) is not str or not enc[2]:
        return None
    try:
        obj = _loaded(enc[1], enc[2])
    except wire.DecodeError:
        return None
    return None if isinstance(obj, types.ModuleType) else obj


class Job:
    """One job (or the rest of one, after the candidate was replaced) against one candidate process."""

    def __init__(self, spec, msg, fd, report):
        self.spec = spec
        self.order = msg["order"]
        self.limit = msg.get("detail_chars", 400)
        self.report = report
        self.max_value = msg.get("max_value_bytes", 16 << 20)
        self.session = Session(fd, self.max_value, self.limit)
        self.code = msg["code"]
        self.max_value_repr = msg.get("max_output", 65536)

    def run(self):
        s = self.session
        t0 = time.perf_counter()
        try:
            s.chan.send({"code": self.code, "name": "solution", "serve": True, "max_value": self.max_value,
                         "prelude": self.spec.prelude})
            reply = s.chan._recv()
        except channel.PeerGone as e:
            return self.unloaded("killed", f"the program's process ended before it loaded: {e}")
        if reply[0] != "ok":
            desc = reply[1] if len(reply) > 1 and type(reply[1]) is dict else {}
            exc = s.exception(desc) if desc else RuntimeError("bad reply")
            status = "syntax" if desc.get("phase") == "compile" else classify(exc)
            return self.unloaded("killed" if isinstance(exc, SystemExit) else status, describe(exc, self.limit))
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
        would otherwise wait out the test time limit for records that never come)."""
        self.report(["prelude", status, detail])
        self.report(["done"])

    def one(self, i, fn, success="passed"):
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
        self.report(["end", i, status, time.perf_counter() - t0, _excerpt(detail, self.limit), value])

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

    @staticmethod
    def same(current, saved):
        """current holds exactly the keys of saved, each bound to the very same object."""
        return len(current) == len(saved) and all(map(operator.is_, map(current.get, saved), saved.values()))

    def restore(self):
        """Undo what is cheap to undo; True when the process is still fit for another job."""
        for name in sys.modules.keys() - self.modules:
            if name.startswith("test_module_") or name == "solution":
                del sys.modules[name]
        unittest.mock.patch.stopall()  # patches a test started and never stopped
        if _ACTIVE_PATCHES:  # entered and never exited: whatever they replaced stays replaced
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
    held, hold = [], {"s": 0.0, "since": 0.0}

    def report(record):
        # "ready" and "end" records may wait up to the job's hold_s and leave together (worker.py, _HOLD_S);
        # anything else, and a test whose program died, goes at once with whatever was held. The ledger has
        # them first: held records die with this process, and a test whose verdict is lost must not run again
        # (the program would get a second try at a test it failed, e.g. knowing the expected value by then).
        if ledger is not None:
            if record[0] == "end" and type(record[1]) is int and 0 <= record[1] < len(ledger) - 1:
                ledger[1 + record[1]] = _LEDGER_CODES.get(record[2], _LEDGER_CODES["error"])
            elif record[0] == "ready":
                ledger[0] = 1
        held.append(framing.pack(record))
        now = time.monotonic()
        if record[0] in ("ready", "end") and record[2:3] != ["killed"] and now - hold["since"] < hold["s"]:
            return
        sock.sendall(b"".join(held))
        held.clear()
        hold["since"] = now

    while True:
        while not pending:
            data, got, _flags, _addr = socket.recv_fds(sock, 1 << 16, 4)
            fds += got
            if not data:
                return
            pending += reader.feed(data)
        msg = pending.pop(0)
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
                report(["prelude", "killed", "no channel to the program"])
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
            job = Job(spec, msg, chan_fd, report)
            job.run()
        except BaseException as e:  # a judge bug must never look like a pass, nor outlive its job
            report(["prelude", "killed", f"judge error: {type(e).__name__}: {e}"])
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
    if confine is not None:
        ruleset = landlock.Ruleset.build(*confine)
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

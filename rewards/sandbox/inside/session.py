"""One job's connection to its candidate (Session): values out and in, requests to the program, and the
program's requests for the test's objects (callbacks, streams, instances of test classes), which the judge
serves under rules of what the program may see and change. stdlib only: runs inside the sandbox (the judge).
"""

import collections
import inspect
import io
import operator
import sys
import types
import unittest
import unittest._log
import unittest.mock

from . import channel, mirrors, protocol, wire
from .proxy import CandidateGone, Unjudgeable, _is_proxy, _loaded, _proxy_class, _synth_str


def _same(current, saved):
    """current holds exactly the keys of saved, each bound to the very same object (checks in C: operator.is_)."""
    return len(current) == len(saved) and all(map(operator.is_, map(current.get, saved), saved.values()))


_FILENAMES = ("<test", "<check", "<setup")  # code compiled from a label: the only code whose objects cross
_ASSERTION_REF = ["R", "builtins", "AssertionError"]
_ITER_TYPES = frozenset(type(x) for x in (
    iter([]), iter(()), iter({}), iter(set()), iter(""), iter(b""), iter(range(0)), iter({}.values()),
    iter({}.items()), map(abs, []), filter(None, []), zip(), enumerate([]), reversed([]), (x for x in ()),
    reversed({}), reversed({}.values()), reversed({}.items()), reversed(()), reversed(range(0))))
_VIEW_TYPES = frozenset(type(v) for v in ({}.keys(), {}.values(), {}.items()))


_NOTHING = object()


_KEPT = 64  # arguments of the test the program keeps, followed after later calls (the candidate says which)


class _Exported:
    """What the test patched (print, input: "call"; sys.stdin: "stream") wrapped for one call of the program."""

    __slots__ = ("target", "kind")
    # What the program may do with a stream of the test (sys.stdin it set, a StringIO or file it passes).
    STREAM_METHODS = frozenset({"read", "readline", "readlines", "write", "writelines", "seek", "tell",
                                "getvalue", "truncate", "flush", "close", "readable", "writable", "seekable"})
    STREAM_DATA = frozenset({"closed", "name", "mode", "encoding", "newlines"})

    def __init__(self, target, kind):
        self.target, self.kind = target, kind




class Session:
    """One job's connection to its candidate: proxies, what was handed to it, and the current test's taint."""

    Exported = _Exported  # for the mirrors (mirrors.py), which wrap what the test patched in
    KEPT = _KEPT

    @staticmethod
    def write_back(target, state, same_rows=None):
        _write_back(target, state, same_rows)

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
        # Standard-library objects of the test sent by name (datetime.now in a list): the program's copy comes
        # back as the test's own object, never as what the name would give here.
        self.sent_refs = {}
        mirrors.start(self)  # the state a program shares with its tests, as the job starts

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
            self.sent_refs[(ref[1], ref[2])] = obj
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
                obj = _known(info.get(protocol.INFO_REF), info.get(protocol.INFO_KIND))
                if obj is None:
                    exc = info.get(protocol.INFO_KIND) == protocol.KIND_EXC
                    obj = self._synth(x[1], info) if exc else self._proxy(x[1], info)
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
            sent = self.sent_refs.get((x[1], x[2])) if type(x[1]) is str and type(x[2]) is str else None
            if sent is not None:
                return sent
            obj = _loaded(x[1], x[2])
            if _accepted_ref(obj):
                return obj
            raise wire.DecodeError(f"reference {x[1]}.{x[2]} is not data")
        raise wire.DecodeError("bad tag")

    def _proxy(self, cid, info):
        p = object.__new__(_proxy_class(info, self))
        p._coderl_s, p._coderl_i = self, cid
        p._coderl_n = str(info.get(protocol.INFO_NAME) or "")[:100]
        return p

    def _synth(self, cid, info):
        """A real exception class standing for one of the program's, so assertRaises / except work."""
        bases = []
        for b in info.get(protocol.INFO_BASES) or []:
            try:
                cls = self.resolve(b) if type(b) is list else None
            except wire.DecodeError:
                cls = None
            if isinstance(cls, type) and issubclass(cls, BaseException) and cls not in bases:
                bases.append(cls)
        name = str(info.get(protocol.INFO_NAME) or "Error")[:100]
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
        ctx = mirrors.capture(self)
        if not ctx:
            return self._request(msg)
        reply = self._request(["with", ctx, msg])
        mirrors.apply(self, reply[2] if len(reply) > 2 else None, ctx, {})
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
        elif len(self.tracked) >= self.KEPT:
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
        ctx = mirrors.capture(self)
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
        mirrors.apply(self, reply[2] if len(reply) > 2 else None, ctx, pending)
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

    def _mirrored(self, value):
        """How a value the test put in place of a builtin or a module attribute reaches the program: a
        callable the test made (a mock, a function) is called back here, anything else crosses as data."""
        if callable(value) and not isinstance(value, type) and self._ref(value) is None:
            value = _Exported(value, "call")
        return self.enc(value)

    def _check_solution_module(self):
        mod, names = self.solution, self.solution_names
        if mod is not None and names is not None and not _same(mod.__dict__, names):
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
                if op == "op" and msg[2] in _STREAM_OPS:
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



# What the judge runs for the program's requests on the test's objects (protocol's names).
_OP_IMPL = {"iter": iter, "next": next, "enter": lambda o: o.__enter__(),
            "exit": lambda o: o.__exit__(None, None, None),
            "eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le, "gt": operator.gt,
            "ge": operator.ge, "hash": hash, "len": len, "bool": bool, "getitem": lambda o, k: o[k],
            "contains": lambda o, x: x in o, "repr": repr, "str": str}
_STREAM_OPS = {n: _OP_IMPL[n] for n in protocol.STREAM_OPS}
_COMPARE_OPS = {n: _OP_IMPL[n] for n in protocol.COMPARE_OPS}
_OBJECT_OPS = {n: _OP_IMPL[n] for n in protocol.OBJECT_OPS}
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


# Methods of builtin types bound to an object of the test (a module's or a class's cross as references).
_BOUND_BUILTINS = (types.BuiltinMethodType, types.MethodWrapperType)
# The modules whose objects a bound method may be of, to be called for the program: data (a str, a list, a
# Counter, a seeded Random, a date), never a stream, socket, process or anything else of this process.
_DATA_MODULES = frozenset({"builtins", "collections", "random", "datetime", "decimal", "fractions", "re", "array"})


def _data_owner(owner):
    """True when owner is data whose bound methods the program may call (on the test's object)."""
    return not isinstance(owner, (type, types.ModuleType)) and getattr(type(owner), "__module__", None) in _DATA_MODULES


def _exportable(obj):
    """What the candidate may do with an object of the test (None: it cannot have it)."""
    t = type(obj)
    if t is _Exported:
        return obj.kind
    if t is types.FunctionType:
        return "call" if _from_tests(obj.__code__) else None
    if t is types.MethodType:
        if _from_tests(getattr(obj.__func__, "__code__", None)):
            return "call" if _exportable(obj.__self__) == "object" else None
        # a standard-library method bound to the test's data (random.Random(3).randint, counter.most_common)
        return "call" if _data_owner(obj.__self__) else None
    if t is types.GeneratorType:  # the test's own, or mock_open()'s (a program's `for line in f`)
        code = obj.gi_code
        return "iterator" if _from_tests(code) or code.co_filename == unittest.mock.__file__ else None
    if t in _ITER_TYPES or getattr(t, "__module__", None) == "itertools":  # itertools.count() and the like
        return "iterator"
    if t in _VIEW_TYPES:  # f(d.items()): len, iteration and `in` as on the view
        return "object"
    if t in _ACCESSORS:
        return "call"
    if t in _BOUND_BUILTINS:  # 'abc'.upper, acc.append in the test's data: calls run on the test's object
        return "call" if _data_owner(obj.__self__) else None
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

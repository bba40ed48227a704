"""One job's connection to its candidate (Session): values out and in, requests to the program, and the
program's requests for the test's objects (callbacks, streams, instances of test classes), which the judge
serves under the rules of what the program may see and change (guards.py). stdlib only: runs inside the sandbox (the judge).
"""

import operator
import sys
import types

from . import channel, mirrors, protocol, wire
from .framing import Status
from .guards import _accepted_ref, _exportable, _Exported, _known, _may_set, _write_back
from .proxy import (
    CandidateGone,
    ProgramInterrupt,
    ProgramStopIteration,
    Unjudgeable,
    _is_proxy,
    _loaded,
    _proxy_class,
    _synth_str,
)


def _same(current, saved):
    """current holds exactly the keys of saved, each bound to the very same object (checks in C: operator.is_)."""
    return len(current) == len(saved) and all(map(operator.is_, map(current.get, saved), saved.values()))


_ASSERTION_REF = ["R", "builtins", "AssertionError"]

_KEPT = 64  # arguments of the test the program keeps, followed after later calls (the candidate says which)


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
        self.taint = self.taint or (Status.UNSUPPORTED, f"not judgeable through the plain-data channel: {what}")
        return Unjudgeable(what)

    def _gone(self, why):
        self.gone = self.gone or why
        self.taint = (Status.KILLED, f"the program's process ended: {why}")
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
            self.taint = (Status.ERROR, f"the program sent an unreadable value: {e}")
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
        ordinary exceptions (and SystemExit) cross as themselves: a StopIteration from a call would silently end
        the test's map() or loop (it is a ProgramStopIteration, an Exception that ends no iteration), a
        KeyboardInterrupt would stop the test runner itself (it is a ProgramInterrupt, which no `except Exception`
        catches)."""
        try:
            exc = wire.build_exception(desc, self.resolve)
        except (wire.DecodeError, RecursionError) as e:
            self.taint = (Status.ERROR, f"the program raised an unreadable exception: {e}")
            return CandidateGone(str(e))
        if isinstance(exc, (StopIteration, StopAsyncIteration)) and not stop:
            exc = ProgramStopIteration(f"the program raised {type(exc).__name__}: {desc.get('str') or ''}"[:500])
        elif not isinstance(exc, (Exception, SystemExit)):
            exc = ProgramInterrupt(f"the program raised {type(exc).__name__}: {desc.get('str') or ''}"[:500])
        text, tb = desc.get("str"), desc.get("tb")
        if "_coderl_cid" in type(exc).__dict__ and isinstance(text, str):
            exc._coderl_str = text
        if isinstance(tb, str):
            exc._coderl_tb = tb[-self.detail_chars:] if self.detail_chars else ""
        return exc

    def _mirrored_request(self, msg, pending=None):
        """A request that runs program code other than a call (a generator's next, __enter__/__exit__, a
        property): the state the test shares with the program is mirrored for it as for a call, so what a
        generator prints reaches the test's redirected stdout and a context manager calls the test's
        patched time.perf_counter. pending: the test's containers the request hands over, by their ids."""
        ctx = mirrors.capture(self)
        if not ctx and not pending:
            return self._request(msg)
        reply = self._request(["with", ctx, msg])
        mirrors.apply(self, reply[2] if len(reply) > 2 else None, ctx, pending or {})
        return reply

    def get(self, proxy, name):
        reply = self._mirrored_request(["get", proxy._coderl_i, name])
        return self._adopt(reply, self._result(reply))

    def set(self, proxy, name, value):
        msg = ["set", proxy._coderl_i, name, self.enc(value)]
        pending = None
        if type(value) in wire.MUTABLE:  # `cart.items = items`: one object on both sides while the program keeps it
            self.track_seq += 1
            pending = {self.track_seq: value}
            msg.append(self.track_seq)
        self._result(self._mirrored_request(msg, pending))

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
        if type(tid) is not int or type(value) not in wire.MUTABLE:
            return value
        known = self.tracked.get(tid)
        if known is not None and type(known) is type(value):
            # the test's own argument the program keeps (`Hotel(name, rooms).available_rooms is rooms`) or a
            # container handed over before: the test's object, in the state the program could give it anyway
            _write_back(known, value)
            value = known
        elif tid >= 0 or len(self.tracked) >= self.KEPT:  # the judge's ids are only ever the judge's to give
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
            value = _Exported(value, protocol.EXPORT_CALL)
        return self.enc(value)

    def _check_solution_module(self):
        mod, names = self.solution, self.solution_names
        if mod is not None and names is not None and not _same(mod.__dict__, names):
            raise self.unjudgeable("the test replaces a name of the solution module (mock.patch?)")

    # ---------------------------------------------------------------- the candidate's requests
    def _changed(self, msg, args, kwargs):
        """[[key, state]] of the program's mutable arguments the test's callable changed in place, for the
        candidate to apply to its own objects (what cannot cross back is left as it was)."""
        out = []
        for key, a in [*enumerate(args), *kwargs.items()]:
            if type(a) not in wire.MUTABLE:
                continue
            try:
                state = wire.encode(a, self._export_untainted)
            except (RecursionError, TypeError, ValueError):  # Unencodable is a TypeError
                continue
            if state != (msg[2][key] if type(key) is int else msg[3].get(key)):
                out.append([key, state])
        return out

    def _serve(self, msg):
        """The program's request about one of the test's objects: one handler per request kind (_SERVED)."""
        try:
            op, jid = msg[0], msg[1]
            obj, kind = self.exports[jid]
            if type(obj) is _Exported:
                obj, kind = _unwrap(op, msg, obj, kind)
            serve = _SERVED.get(op)
            if serve is None:
                raise _unsupported(op, msg, obj)
            return serve(self, msg, obj, kind)
        except Exception as e:
            # A builtin or standard-library exception reaches the program as itself (a mock's side_effect of
            # EOFError ends the program's input loop); one of the test's own classes as a RuntimeError.
            if isinstance(e, AssertionError):
                self.callback_failures += 1
            if isinstance(e, StopIteration) and op == protocol.REQ_CALL:
                self.callback_stops += 1
            if wire.stdlib_ref(type(e)) is None or type(e).__module__.startswith("unittest"):
                e = RuntimeError(f"{type(e).__name__}: {e}")
            return ["raise", wire.encode_exception(e, self._export_quiet)]

    def _serve_call(self, msg, obj, kind):
        if kind not in _CALLABLE:
            raise _unsupported(msg[0], msg, obj)
        args, kwargs = [self.dec(a) for a in msg[2]], {str(k): self.dec(v) for k, v in msg[3].items()}
        value = obj(*args, **kwargs)
        # What a patched-in replacement returns (a Mock standing for print) is no value of the test's: where it
        # cannot cross, the program gets None rather than the test an unjudgeable verdict.
        encoded = wire.encode(value, self._export_quiet) if kind == _PATCHED else self.enc(value)
        return ["ok", encoded, self._changed(msg, args, kwargs)]

    def _serve_get(self, msg, obj, kind):
        name = msg[2]
        if kind == protocol.EXPORT_STREAM:
            if name in _Exported.STREAM_METHODS:
                return ["ok", self.enc(_Exported(getattr(obj, name), protocol.EXPORT_CALL))]
            if name in _Exported.STREAM_DATA:
                return ["ok", wire.encode(getattr(obj, name, None), self._export_quiet)]
        if kind in _READABLE and isinstance(name, str) and not name.startswith("_"):
            return ["ok", self.enc(getattr(obj, name))]
        if name in _FUNCTION_META:  # functools.wraps(test_function), obj.__doc__
            return ["ok", wire.encode(getattr(obj, name, None), self._export_quiet)]
        # what plain Python would raise, for getattr(x, name, default) and hasattr
        raise AttributeError(f"the test's {type(obj).__name__} has no attribute {name!r} for the program")

    def _serve_set(self, msg, obj, kind):
        name = msg[2]
        if kind != protocol.EXPORT_OBJECT or not isinstance(name, str) or name.startswith("_"):
            raise _unsupported(msg[0], msg, obj)
        value = self.dec(msg[3])
        if not _may_set(obj, name, msg[3]):
            raise AttributeError(f"the program may not replace {name!r} of the test's {type(obj).__name__}")
        setattr(obj, name, value)
        return ["ok", None]

    def _serve_op(self, msg, obj, kind):
        ops = _SERVED_OPS.get(kind)
        if ops is None:
            raise _unsupported(msg[0], msg, obj)
        run = ops.get(msg[2])
        if run is None:
            raise _unsupported(msg[0], msg, obj)
        return ["ok", self.enc(run(obj, [self.dec(a) for a in msg[3:]]))]


def _unsupported(op, msg, obj):
    return TypeError(f"the test's {type(obj).__name__} does not support {op} {msg[2:3]}")


_PATCHED = "patched"  # the judge's own kind for a callable the test patched in (guards._Exported "call")


def _unwrap(op, msg, wrapped, kind):
    """What the test patched in (sys.stdin it set, print or input it replaced), handed over for one call: a
    stream is served as any stream of the test; a callable is only called, its result crossing quietly."""
    if kind == protocol.EXPORT_STREAM:
        return wrapped.target, kind
    if kind == protocol.EXPORT_CALL and op == protocol.REQ_CALL:
        return wrapped.target, _PATCHED
    raise TypeError(f"the test's {op} {msg[2:3]} is not available to the program")


_SERVED = {protocol.REQ_CALL: Session._serve_call, protocol.REQ_GET: Session._serve_get,
           protocol.REQ_SET: Session._serve_set, protocol.REQ_OP: Session._serve_op}
_CALLABLE = frozenset({protocol.EXPORT_CALL, protocol.EXPORT_OBJECT, _PATCHED})
_READABLE = frozenset({protocol.EXPORT_OBJECT, protocol.EXPORT_STREAM})  # their public attributes, by name
# What functools.wraps reads of a function the program decorates (and a docstring of a test object).
_FUNCTION_META = frozenset({"__name__", "__qualname__", "__doc__", "__module__", "__annotations__"})

# What the judge runs for the program's operations on the test's objects (protocol's names), by the kind of
# object: each takes (object, decoded operands). Asked of a stream, an iterator's iter/next and any object's
# repr/str, an operation takes the object alone, as the builtin of its name does.
_OP_IMPL = {"iter": iter, "next": next, "enter": lambda o: o.__enter__(),
            "exit": lambda o: o.__exit__(None, None, None),
            "eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le, "gt": operator.gt,
            "ge": operator.ge, "hash": hash, "len": len, "bool": bool, "getitem": lambda o, k: o[k],
            "contains": lambda o, x: x in o, "repr": repr, "str": str}


def _spread(f):
    return lambda o, args: f(o, *args)


def _alone(f):
    return lambda o, args: f(o)


def _ops(alone=(), spread=()):
    return {**{n: _spread(_OP_IMPL[n]) for n in spread}, **{n: _alone(_OP_IMPL[n]) for n in alone}}


_TEXT = ("repr", "str")
_SERVED_OPS = {
    protocol.EXPORT_STREAM: _ops(alone=protocol.STREAM_OPS),
    protocol.EXPORT_ITERATOR: _ops(alone=("iter", "next", *_TEXT), spread=protocol.COMPARE_OPS),
    # the test's own __eq__ / __lt__ / __hash__ decide (a heap of Tasks)
    protocol.EXPORT_OBJECT: _ops(alone=("iter", "next", *_TEXT), spread=(*protocol.COMPARE_OPS, *protocol.OBJECT_OPS)),
    protocol.EXPORT_CALL: _ops(alone=_TEXT, spread=(*protocol.COMPARE_OPS, *protocol.CALL_OPS)),
}


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

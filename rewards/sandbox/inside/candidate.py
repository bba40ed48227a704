"""The candidate process: runs the generated program and answers the judge's requests about it.

Nothing here is trusted and nothing needs to be: this process holds no test, no expected value and no
descriptor but its stdio and the channel (fd 3). It may patch its interpreter, fork, read its own memory
or write any bytes to the channel; the judge only ever receives plain data, which it rebuilds itself.

First frame on fd 3: {"code", "name", "serve", "prelude"?}. The program runs as module `name` ("solution"
for the function formats, "__main__" for stdio), after `prelude` (the call format's implicit imports, a stdio
label's setup_code). With
serve, the reply is ``["ok", globals]`` (or ``["raise", ...]`` when the program fails to load) and the
process then answers requests until the channel closes; without it (stdio) the program's exit status is the
only outcome. stdlib only.
"""

import builtins
import os
import sys
import traceback
import types

from . import channel, framing, mirrors, ops, wire
from . import protocol as P

CHANNEL_FD = 3
SYNTAX_EXIT = 97  # stdio: the program does not compile (a program exiting with it only mislabels its own failure)
_RETAINED, _RETAINED_ITEMS = 64, 10_000  # shared containers followed after later requests: how many, how long
_SIZED = (list, tuple, dict, set, frozenset, str, bytes, bytearray)
_MISSING = object()
_GLOBAL_ITEMS = 100_000  # a bigger module-level table stays here as a handle: copying it would cost every job
# Types reachable only through the types module (their __qualname__, e.g. "generator", names nothing).
_TYPE_REFS = {t: ["R", "types", n] for n, t in vars(types).items()
              if isinstance(t, type) and not n.startswith("_")}
_caps_cache = {}
_VIEWS = ((type({}.keys()), P.VIEW_KEYS), (type({}.items()), P.VIEW_ITEMS))  # set-like views (OrderedDict's derive)


def _caps(t):
    """Which of P.CAPS the type t has, looked up as Python looks up special methods (the type's MRO)."""
    try:
        return _caps_cache[t]
    except Exception:  # not seen yet (or a metaclass that makes its classes unhashable)
        pass
    try:
        found = {}
        for k in reversed(type.__dict__["__mro__"].__get__(t)):
            found.update((n, v) for n, v in vars(k).items() if n in P.CAPS or n == "__hash__")
        caps = [n for n in P.CAPS if found.get(n) is not None] + ([P.NOHASH] if found.get("__hash__") is None else [])
        if len(_caps_cache) < 4096:
            _caps_cache[t] = caps
    except Exception:
        caps = None  # the judge then gives its proxy every special method
    return caps


class JudgeObject:
    """Something the test handed to the program (a callback, an iterator, an instance of a test class):
    every use is a request to the judge, which decides what it exposes."""

    __slots__ = ("_coderl_server", "_coderl_id", "__weakref__")

    def __init__(self, server, jid):
        object.__setattr__(self, "_coderl_server", server)
        object.__setattr__(self, "_coderl_id", jid)

    def _coderl_ask(self, *msg):
        return self._coderl_server.ask(self, *msg)

    def __call__(self, *args, **kwargs):
        return self._coderl_ask("call", list(args), kwargs)

    def __getattr__(self, name):
        return self._coderl_ask("get", name)

    def __setattr__(self, name, value):
        self._coderl_ask("set", name, value)

    def __iter__(self):
        return self._coderl_ask("op", "iter")

    def __next__(self):
        return self._coderl_ask("op", "next")

    def __len__(self):
        return self._coderl_ask("op", "len")

    def __bool__(self):
        return self._coderl_ask("op", "bool")

    def __getitem__(self, key):
        return self._coderl_ask("op", "getitem", key)

    def __contains__(self, item):
        return self._coderl_ask("op", "contains", item)

    def __repr__(self):
        return self._coderl_ask("op", "repr")

    def __str__(self):
        return self._coderl_ask("op", "str")

    def __hash__(self):
        return self._coderl_ask("op", "hash")

    def __enter__(self):
        return self._coderl_ask("op", "enter")

    def __exit__(self, *exc):
        return self._coderl_ask("op", "exit")


def _judge_compare(name):
    def method(self, other):
        if other is self:  # identity first, as Python's containers do: no round trip for `f in handlers`
            return name in ("eq", "le", "ge")
        return self._coderl_ask("op", name, other)
    return method


# Comparisons with a test's object are its own methods', run by the judge (a heap of the test's Task objects).
for _name in P.COMPARE_OPS[:6]:
    setattr(JudgeObject, f"__{_name}__", _judge_compare(_name))
del _name
# The test's function's docstring and module, not this class's (functools.wraps(test_function) reads them).
JudgeObject.__doc__ = property(lambda self: self._coderl_ask("get", "__doc__"))
JudgeObject.__module__ = property(lambda self: self._coderl_ask("get", "__module__"))


class Server:
    """The object table and the request handler of the candidate side."""

    def __init__(self, module, max_value=16 << 20):
        self.max_value = max_value // 2  # the judge's frame limit, with room for the rest of the reply
        self.objs = {0: module}  # handle id -> object; kept alive for the job's lifetime
        self.ids = {id(module): 0}
        self.judge_objs = {}  # the judge's ids -> JudgeObject (one proxy per object keeps `is` working)
        self.named = {}  # id -> (object, its reference) for what the judge sent by name (datetime.now)
        self.chan = None
        self.random_linked = False  # the test set the random module's state: keep the judge's in step
        # Containers the test and the program both hold (wire.MUTABLE): id -> [object, its state as last agreed].
        # Positive ids are the judge's (a test's argument the program kept), negative ones ours (a container the
        # program kept and handed to the test).
        self.retained = {}
        self.share_seq = 0

    # ---------------------------------------------------------------- values out / in
    def export(self, obj):
        if type(obj) is JudgeObject:
            return ["y", object.__getattribute__(obj, "_coderl_id")]
        named = self.named.get(id(obj))
        if named is not None and named[0] is obj:  # the judge's standard-library object, back by its name
            return named[1]
        if isinstance(obj, type) and (obj in wire.BUILTIN_TYPES or getattr(obj, "__module__", None) == "builtins"
                                      and issubclass(obj, BaseException)):
            ref = wire.stdlib_ref(obj)
            if ref is not None:
                return ref
        key = id(obj)
        hid = self.ids.get(key)
        if hid is None or self.objs.get(hid) is not obj:
            hid = len(self.objs)
            self.objs[hid] = obj
            self.ids[key] = hid
        return ["h", hid, self._info(obj)]

    def _info(self, obj):
        """What the judge needs to stand in for obj (protocol.INFO_*); INFO_REF names a standard-library module or exception class
        that the judge uses instead when it has already loaded it (it never imports one for us)."""
        if isinstance(obj, type):
            try:
                name = str(obj.__name__)
            except Exception:
                name = "?"
            if issubclass(obj, BaseException):
                ref = wire.stdlib_ref(obj)
                return {P.INFO_KIND: P.KIND_EXC, P.INFO_NAME: name,
                        P.INFO_BASES: [self.export(b) for b in obj.__bases__],
                        **({P.INFO_REF: ref[1:]} if ref else {})}
            return {P.INFO_KIND: P.KIND_CLASS, P.INFO_NAME: name, P.INFO_CAPS: _caps(type(obj))}
        if isinstance(obj, types.ModuleType):
            name = getattr(obj, "__name__", "")
            std = isinstance(name, str) and name.partition(".")[0] in sys.stdlib_module_names \
                and sys.modules.get(name) is obj
            info = {P.INFO_KIND: P.KIND_MODULE, P.INFO_NAME: str(name), P.INFO_CAPS: _caps(type(obj))}
            if std:
                info[P.INFO_REF] = [name, ""]
                subs = sorted(n for n in list(sys.modules) if isinstance(n, str) and n.startswith(name + "."))
                if subs:
                    info[P.INFO_SUBMODULES] = subs[:64]
            return info
        if callable(obj):
            info = {P.INFO_KIND: P.KIND_FUNCTION, P.INFO_CAPS: _caps(type(obj))}
            if type(obj) not in _TYPE_REFS:
                # a callable object that is no function (a program class with __call__, an sqlite3.Connection):
                # named, compared and typed as any object; functions and methods stay plain callables
                info.update(self._class_info(type(obj)))
            return info
        return {P.INFO_KIND: P.KIND_OBJECT, P.INFO_CAPS: _caps(type(obj)), **self._class_info(type(obj))}

    def _class_info(self, cls):
        """An object's class (the judge's proxy gets its name and, for a standard-library type, the type
        itself) and whether the class keeps object's equality and ordering (then the judge decides them)."""
        info = {}
        try:
            info[P.INFO_CLASS] = _TYPE_REFS.get(cls) or wire.stdlib_ref(cls) or self.export(cls)
            if cls.__eq__ is object.__eq__ and cls.__ne__ is object.__ne__:
                info[P.INFO_EQ] = 1
            if all(getattr(cls, n) is getattr(object, n) for n in ("__lt__", "__le__", "__gt__", "__ge__")):
                info[P.INFO_ORD] = 1
        except Exception:
            pass
        try:  # the collections ABCs it derives from or is registered with (isinstance(c, Mapping) in the test)
            abc = sys.modules.get("collections.abc")
            names = [n for n in P.NOMINAL_ABCS if abc is not None and issubclass(cls, getattr(abc, n))]
            if names:
                info[P.INFO_ABCS] = names
        except Exception:
            pass
        for view, kind in _VIEWS:  # obj.rates.keys() == {'USD', 'EUR'} in the test
            if issubclass(cls, view):
                info[P.INFO_VIEW] = kind
                break
        try:  # a dataclass's fields are data (dataclasses.asdict / fields / astuple in the test read them)
            fields = cls.__dict__.get("__dataclass_fields__") if "dataclasses" in sys.modules else None
            if type(fields) is dict:
                plain = sys.modules["dataclasses"]._FIELD
                info[P.INFO_FIELDS] = [str(n) for n, f in fields.items()
                                       if getattr(f, "_field_type", None) is plain][:256]
                eq = cls.__dict__.get("__eq__")
                if getattr(cls.__dict__.get("__dataclass_params__"), "eq", False) and \
                        getattr(getattr(eq, "__code__", None), "co_filename", None) == "<string>":
                    # the == dataclasses generated (never one of the class's own): a tuple of these fields
                    info[P.INFO_EQ_FIELDS] = [str(n) for n, f in fields.items()
                                              if getattr(f, "_field_type", None) is plain and f.compare][:256]
                    lt = cls.__dict__.get("__lt__")
                    if cls.__dict__["__dataclass_params__"].order and \
                            getattr(getattr(lt, "__code__", None), "co_filename", None) == "<string>":
                        info[P.INFO_ORDER_FIELDS] = 1  # order=True: <, <=, >, >= on the same tuples
        except Exception:
            pass
        return info

    def resolve(self, x):
        tag = x[0]
        if tag == "y":
            try:
                return self.objs[x[1]]
            except (KeyError, TypeError, IndexError):
                raise wire.DecodeError("unknown handle") from None
        if tag == "h":
            jid = x[1]
            obj = self.judge_objs.get(jid)
            if obj is None:
                obj = self.judge_objs[jid] = JudgeObject(self, jid)
            return obj
        if tag == "R":
            if x[2] == "":
                import importlib
                return importlib.import_module(x[1]) if x[1].partition(".")[0] in sys.stdlib_module_names else None
            obj = wire.resolve_ref(x[1], x[2])
            if not isinstance(obj, (type, types.ModuleType)):
                self.named[id(obj)] = (obj, x)
            return obj
        raise wire.DecodeError("bad tag")

    def enc(self, value):
        with _RecursionRoom():
            return wire.encode(value, self.export, send_classes=True)

    def dec(self, value):
        with _RecursionRoom():
            return wire.decode(value, self.resolve)

    def value(self, value, max_items=None):
        """value encoded for a reply; one too big for the judge to accept stays here as a handle."""
        if isinstance(value, _SIZED) and max_items is not None and len(value) > max_items:
            return self.export(value)
        enc = self.enc(value)
        if isinstance(value, _SIZED) and len(value) > 1024 and len(framing.dumps(enc)) > self.max_value:
            return self.export(value)
        return enc

    def _ok(self, value, kept):
        """The reply carrying value; a container the program also keeps (`kept`: more references than a fresh
        one) is shared: the test's copy and the program's object are followed both ways from then on, as in
        plain Python they are one object (a default list shared by instances, a cached result)."""
        enc = self.value(value)
        if not kept or type(value) not in wire.MUTABLE or enc[:1] == ["h"]:
            return ["ok", enc]
        tid = self._share(value, enc)
        return ["ok", enc] if tid is None else ["ok", enc, {"shared": tid}]

    def _share(self, value, enc):
        """The id value is followed under (ours are negative), or None when it is not followed."""
        for tid, entry in self.retained.items():
            if entry[0] is value:  # already followed: the program's own (negative) or a test's argument it keeps
                return tid
        if len(value) > _RETAINED_ITEMS or len(self.retained) >= _RETAINED:
            return None
        self.share_seq -= 1
        self.retained[self.share_seq] = [value, enc]
        return self.share_seq

    def raise_reply(self, exc):
        desc = wire.encode_exception(exc, self.export, send_classes=True)
        try:
            desc["tb"] = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))[-4000:]
        except Exception:
            pass
        return ["raise", desc]

    # ---------------------------------------------------------------- calls into the judge
    def ask(self, proxy, *msg):
        jid = object.__getattribute__(proxy, "_coderl_id")
        op, rest = msg[0], list(msg[1:])
        args = kwargs = None
        if op == "call":
            args, kwargs = rest
            rest = [[self.enc(a) for a in args], {k: self.enc(v) for k, v in kwargs.items()}]
        elif op in ("set", "op") and len(rest) > 1:
            rest = [rest[0], *(self.enc(v) for v in rest[1:])]
        reply = self.chan.request([op, jid, *rest])
        if reply[0] == "ok":
            # what the test's callable did in place to our arguments (`patch('random.shuffle', lambda x:
            # x.reverse())`): our objects take it, as they are the very objects it got in plain Python
            for key, state in reply[2] if args is not None and len(reply) > 2 and type(reply[2]) is list else ():
                target = args[key] if type(key) is int and 0 <= key < len(args) else kwargs.get(key)
                if type(target) in wire.MUTABLE:
                    wire.write_back(target, self.dec(state))
            return self.dec(reply[1])
        raise wire.build_exception(reply[1], self.resolve)

    # ---------------------------------------------------------------- serving the judge
    def handle(self, msg):
        """The judge's request about one of the program's objects: one handler per request kind (_HANDLERS)."""
        try:
            handler = _HANDLERS.get(msg[0])
            if handler is None:
                raise ValueError(f"unknown request {msg[0]!r}")
            return handler(self, msg)
        except BaseException as e:  # everything the program raises goes back to the judge as data
            try:
                return self.raise_reply(e)
            except BaseException:
                return ["raise", {"cls": ["R", "builtins", "RuntimeError"], "args": None, "str": "unreportable error"}]

    def _with(self, msg):
        """Another request, with the test's shared state mirrored as for a call."""
        saved = mirrors.install(self, msg[1] or {})
        try:
            reply = self.handle(msg[2]) if type(msg[2]) is list and msg[2][:1] != [P.REQ_WITH] else \
                ["raise", {"cls": ["R", "builtins", "ValueError"], "args": None, "str": "bad request"}]
        finally:
            out = mirrors.undo(self, saved)
        if len(reply) > 2 and reply[2]:
            out = {**(out or {}), **reply[2]}
        return [*reply[:2], out]

    def _get(self, msg):
        value = getattr(self.objs[msg[1]], msg[2])
        return self._ok(value, sys.getrefcount(value) > _FRESH_REFS)

    def _set(self, msg):
        target = self.objs[msg[1]]
        value = self.dec(msg[3])
        watch = self._watch([[0, msg[4]]], [value], {}) if len(msg) > 4 else []
        refs = [sys.getrefcount(a) for _, a in watch]
        setattr(target, msg[2], value)
        return ["ok", None, self._follow(watch, refs, None, None)]

    def _del(self, msg):
        delattr(self.objs[msg[1]], msg[2])
        return ["ok", None]

    def _run_op(self, msg):
        target = self.objs[msg[1]]
        value = self._op(target, msg[2], [self.dec(a) for a in msg[3:]])
        return self._ok(value, sys.getrefcount(value) > _FRESH_REFS)

    @staticmethod
    def _op(target, name, args):
        """What an ["op", id, name, *args] request runs on the program's object (ops.py)."""
        return ops.run(target, name, args)

    def _call(self, msg):
        _, target, raw_args, raw_kwargs, ctx = msg
        fn = self.objs[target]
        args = [self.dec(a) for a in raw_args]
        kwargs = {str(k): self.dec(v) for k, v in raw_kwargs.items()}
        ctx = ctx or {}
        watch = self._watch(ctx.get("track"), args, kwargs)
        refs = [sys.getrefcount(a) for _, a in watch]
        rows = {key: list(a) for key, a in [*enumerate(args), *kwargs.items()]
                if type(a) is list and any(type(x) in wire.MUTABLE for x in a)}  # nested containers, before
        saved = mirrors.install(self, ctx)
        result = None
        try:
            result = fn(*args, **kwargs)
        except BaseException as e:
            out = self._follow(watch, refs, result, mirrors.undo(self, saved))
            reply = self.raise_reply(e)
            reply.append(out)
            return reply
        out = mirrors.undo(self, saved)
        out = self._follow(watch, refs, result, out)
        # Arguments the program changed in place (lists, dicts, sets) go back, so in-place tests work; a
        # result that is one of them says which, so that the test gets its own object back (`sort(xs) is xs`).
        back = [self._back(i, a, rows.get(i)) for i, a in enumerate(args) if type(a) in wire.MUTABLE]
        back += [self._back(k, v, rows.get(k)) for k, v in kwargs.items() if type(v) in wire.MUTABLE]
        same = next((key for key, a in [*enumerate(args), *kwargs.items()]
                     if a is result and type(a) in wire.MUTABLE), None)
        if same is not None:
            return ["ok", None, out, back, same]
        picks = self._picks(result, rows)
        reply = self._ok(result, sys.getrefcount(result) > _FRESH_REFS)
        if len(reply) > 2:
            out = {**(out or {}), **reply[2]}
        return ["ok", reply[1], out, back, None, picks]

    @staticmethod
    def _picks(result, rows):
        """Which containers of the result (itself: -1, or the items of a list or tuple result) are items of a list
        argument, as [where, key, index before the call]: the test gets its own rows back (`dedupe(rows)[0] is
        rows[0]`, `find(people, 'b') is people[1]`)."""
        where = {id(x): (key, j) for key, before in rows.items() for j, x in enumerate(before)
                 if type(x) in wire.MUTABLE}
        if not where:
            return None
        if type(result) in wire.MUTABLE and id(result) in where:
            return [[-1, *where[id(result)]]]
        if type(result) in (list, tuple):
            return [[i, *where[id(x)]] for i, x in enumerate(result) if type(x) in wire.MUTABLE and id(x) in where]
        return None

    def _back(self, key, arg, before):
        """An argument's state after the call; for a list of containers, also which of them are the ones it held
        before (by their old index, else -1): rows rotated in place stay the test's rows (`assertIs(m[0], row)`)."""
        if before is None or type(arg) is not list:
            return [key, self.enc(arg)]
        where = {id(x): j for j, x in enumerate(before) if type(x) in wire.MUTABLE}
        return [key, self.enc(arg), [where.get(id(x), -1) if type(x) in wire.MUTABLE else -1 for x in arg]]

    def _watch(self, track, args, kwargs):
        """[(tid, argument)] for the test's mutable arguments of this call (the judge's ids for them)."""
        out = []
        for key, tid in track or ():
            a = args[key] if type(key) is int and 0 <= key < len(args) else kwargs.get(key)
            if type(a) in wire.MUTABLE and type(tid) is int:
                out.append((tid, a))
        return out

    def _follow(self, watch, refs, result, out):
        """Start following this call's arguments that the program keeps (more references than before the
        call: a heap built on the test's list)."""
        kept = []
        for (tid, a), before in zip(watch, refs, strict=True):
            if sys.getrefcount(a) - (a is result) > before and len(a) <= _RETAINED_ITEMS and \
                    len(self.retained) < _RETAINED:
                self.retained[tid] = [a, self.enc(a)]
                kept.append(tid)
        if kept:
            out = out or {}
            out["kept"] = kept
        return out

    def _globals(self):
        mod = self.objs[0]
        out = []
        for name, value in list(vars(mod).items()):
            if not isinstance(name, str) or name.startswith("__"):
                continue
            if name in sys.stdlib_module_names and not isinstance(value, types.ModuleType):
                # `from datetime import datetime`, `from bisect import bisect`: the judge uses its own (judge.py)
                std = sys.modules.get(name)
                same = isinstance(std, types.ModuleType) and vars(std).get(name, _MISSING) is value
                ref = ["R", name, name] if same else wire.stdlib_ref(value)
                if ref is not None and ref[1].partition(".")[0] == name:
                    out.append([name, ref])
                    continue
            try:
                enc = self.value(value, _GLOBAL_ITEMS)
                # A module-level container is the test's too (`from solution import cache`; setUp's clear()).
                tid = self._share(value, enc) if type(value) in wire.MUTABLE and enc[:1] != ["h"] else None
                out.append([name, enc] if tid is None else [name, enc, tid])
            except Exception:
                out.append([name, self.export(value)])
        return out


_HANDLERS = {P.REQ_CALL: Server._call, P.REQ_WITH: Server._with, P.REQ_GET: Server._get, P.REQ_SET: Server._set,
             P.REQ_DEL: Server._del, P.REQ_OP: Server._run_op}


def _fresh_refs():
    value = []
    return sys.getrefcount(value)


# References a value held in one local variable has, as sys.getrefcount reports them: one more and something
# else (an attribute, a cache, a closure) keeps it too.
_FRESH_REFS = _fresh_refs()


class _RecursionRoom:
    """Room to (de)code a deeply nested value; the program's own limit is back before its code runs again."""

    def __enter__(self):
        self.limit = sys.getrecursionlimit()
        if self.limit < wire.RECURSION_ROOM:
            sys.setrecursionlimit(wire.RECURSION_ROOM)

    def __exit__(self, *exc):
        if self.limit < wire.RECURSION_ROOM:
            sys.setrecursionlimit(self.limit)


def main(limit):
    """Entry point of the forked candidate process; never returns."""
    status = 0
    try:
        reader = framing.Reader(limit)
        setup = reader.recv(CHANNEL_FD)
        if not isinstance(setup, dict):
            os._exit(71)
        status = run(setup, reader)
    except SystemExit as e:
        status = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except BaseException:
        status = 1
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except BaseException:
                pass
    os._exit(status & 0xFF if isinstance(status, int) else 1)


def _finalize():
    """End a stdio program as the interpreter ends one (Py_FinalizeEx), however its main module ended: wait for
    its non-daemon threads, then run its atexit handlers. A program that runs its solution in a thread
    (`threading.stack_size(...); threading.Thread(target=main).start()`, common for a deeper stack) printed
    nothing here while plain Python printed its answer: the process ended when the main module did."""
    threading = sys.modules.get("threading")
    try:
        if threading is not None:
            threading._shutdown()
        import atexit
        atexit._run_exitfuncs()
    except BaseException:  # as at interpreter exit: what the program raises now changes no exit status
        pass


def run(setup, reader):
    name = setup.get("name") or "solution"
    module = types.ModuleType(name)
    module.__dict__["__builtins__"] = builtins
    sys.modules[name] = module
    try:
        code = compile(setup.get("code") or "", "<solution>", "exec")
    except BaseException as e:
        if not setup.get("serve"):
            traceback.print_exception(type(e), e, None)
            return SYNTAX_EXIT if isinstance(e, SyntaxError) else 1
        server = Server(module, setup.get("max_value") or 16 << 20)
        framing.send(CHANNEL_FD, ["raise", {**server.raise_reply(e)[1], "phase": "compile"}])
        return 0
    if not setup.get("serve"):  # stdio: exceptions and SystemExit decide the exit status
        try:
            if setup.get("prelude"):  # a label's setup_code (formats/stdio.py): its harness's implicit imports
                exec(compile(setup["prelude"], "<prelude>", "exec"), module.__dict__)
            exec(code, module.__dict__)
        except SystemExit:
            raise
        except BaseException as e:
            traceback.print_exception(type(e), e, e.__traceback__)
            return 1
        finally:
            _finalize()
        return 0
    server = Server(module, setup.get("max_value") or 16 << 20)
    try:
        if setup.get("prelude"):  # a format's implicit imports (formats/call.py): its reference harness runs them first
            exec(compile(setup["prelude"], "<prelude>", "exec"), module.__dict__)
        exec(code, module.__dict__)
    except BaseException as e:
        framing.send(CHANNEL_FD, server.raise_reply(e))
        return 0
    server.chan = channel.Channel(CHANNEL_FD, reader.limit, server.handle, reader)
    server.chan.send(["ok", server._globals()])
    server.chan.serve_forever()
    return 0

"""The candidate process: runs the generated program and answers the judge's requests about it.

Nothing here is trusted and nothing needs to be: this process holds no test, no expected value and no
descriptor but its stdio and the channel (fd 3). It may patch its interpreter, fork, read its own memory
or write any bytes to the channel; the judge only ever receives plain data, which it rebuilds itself.

First frame on fd 3: {"code", "name", "serve"}. The program runs as module `name` ("solution" for the
function formats, "__main__" for stdio). With serve, the reply is ``["ok", globals]`` (or ``["raise", ...]``
when the program fails to load) and the process then answers requests until the channel closes; without
it (stdio) the program's exit status is the only outcome. stdlib only.
"""

import builtins
import io
import operator
import os
import sys
import traceback
import types

from . import channel, framing, wire

CHANNEL_FD = 3
SYNTAX_EXIT = 97  # stdio: the program does not compile (a program exiting with it only mislabels its own failure)
_BINOPS = {name: getattr(operator, name) for name in (
    "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "lshift", "rshift", "and_", "or_",
    "xor")}
_UNARY = {"len": len, "bool": bool, "iter": iter, "next": next, "str": str, "repr": repr, "hash": hash,
          "int": int, "float": float, "index": operator.index, "complex": complex, "neg": operator.neg,
          "pos": operator.pos, "abs": abs, "invert": operator.invert, "reversed": reversed,
          "dir": lambda o: sorted(str(n) for n in dir(o)), "type": type, "enter": lambda o: o.__enter__()}
_MUTABLE = (list, dict, set, bytearray)
_SIZED = (list, tuple, dict, set, frozenset, str, bytes, bytearray)
_CAPTURE_CHARS = 1 << 20  # what a test redirecting stdout gets of one call's output
_GLOBAL_ITEMS = 100_000  # a bigger module-level table stays here as a handle: copying it would cost every job
_NEXT_BATCH = 256  # items one "nextn" request may take from an iterator
# The special methods the judge's proxy of an object has only when the object's type has them (judge._OPTIONAL).
_CAPS = tuple(f"__{n}__" for n in (
    "call", "getitem", "setitem", "delitem", "round", "instancecheck", "subclasscheck", "contains", "next", "exit",
    "len", "bool", "iter", "int", "float", "index", "complex", "neg", "pos", "abs", "invert", "reversed", "enter",
    *(p + n for n in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "lshift", "rshift", "and",
                      "or", "xor") for p in ("", "r"))))
_caps_cache = {}


def _caps(t):
    """Which of _CAPS the type t has, looked up as Python looks up special methods (the type's MRO)."""
    try:
        return _caps_cache[t]
    except Exception:  # not seen yet (or a metaclass that makes its classes unhashable)
        pass
    try:
        found = {}
        for k in reversed(type.__dict__["__mro__"].__get__(t)):
            found.update((n, v) for n, v in vars(k).items() if n in _CAPS or n == "__hash__")
        caps = [n for n in _CAPS if found.get(n) is not None] + (["nohash"] if found.get("__hash__") is None else [])
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


class Server:
    """The object table and the request handler of the candidate side."""

    def __init__(self, module, max_value=16 << 20):
        self.max_value = max_value // 2  # the judge's frame limit, with room for the rest of the reply
        self.objs = {0: module}  # handle id -> object; kept alive for the job's lifetime
        self.ids = {id(module): 0}
        self.judge_objs = {}  # the judge's ids -> JudgeObject (one proxy per object keeps `is` working)
        self.chan = None

    # ---------------------------------------------------------------- values out / in
    def export(self, obj):
        if type(obj) is JudgeObject:
            return ["y", object.__getattribute__(obj, "_coderl_id")]
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
        """What the judge needs to stand in for obj; "r" names a standard-library module or exception class
        that the judge uses instead when it has already loaded it (it never imports one for us)."""
        if isinstance(obj, type):
            try:
                name = str(obj.__name__)
            except Exception:
                name = "?"
            if issubclass(obj, BaseException):
                ref = wire.stdlib_ref(obj)
                return {"k": "exc", "n": name, "b": [self.export(b) for b in obj.__bases__],
                        **({"r": ref[1:]} if ref else {})}
            return {"k": "cls", "n": name, "m": _caps(type(obj))}
        if isinstance(obj, types.ModuleType):
            name = getattr(obj, "__name__", "")
            std = isinstance(name, str) and name.partition(".")[0] in sys.stdlib_module_names \
                and sys.modules.get(name) is obj
            return {"k": "mod", "n": str(name), "m": _caps(type(obj)), **({"r": [name, ""]} if std else {})}
        return {"k": "fn" if callable(obj) else "obj", "m": _caps(type(obj))}

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
            return wire.resolve_ref(x[1], x[2])
        raise wire.DecodeError("bad tag")

    def enc(self, value):
        return wire.encode(value, self.export)

    def dec(self, value):
        return wire.decode(value, self.resolve)

    def value(self, value, max_items=None):
        """value encoded for a reply; one too big for the judge to accept stays here as a handle."""
        if isinstance(value, _SIZED) and max_items is not None and len(value) > max_items:
            return self.export(value)
        enc = self.enc(value)
        if isinstance(value, _SIZED) and len(value) > 1024 and len(framing.dumps(enc)) > self.max_value:
            return self.export(value)
        return enc

    def raise_reply(self, exc):
        desc = wire.encode_exception(exc, self.export)
        try:
            desc["tb"] = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))[-4000:]
        except Exception:
            pass
        return ["raise", desc]

    # ---------------------------------------------------------------- calls into the judge
    def ask(self, proxy, *msg):
        jid = object.__getattribute__(proxy, "_coderl_id")
        op, rest = msg[0], list(msg[1:])
        if op == "call":
            rest = [[self.enc(a) for a in rest[0]], {k: self.enc(v) for k, v in rest[1].items()}]
        elif op in ("set", "op") and len(rest) > 1:
            rest = [rest[0], *(self.enc(v) for v in rest[1:])]
        reply = self.chan.request([op, jid, *rest])
        if reply[0] == "ok":
            return self.dec(reply[1])
        raise wire.build_exception(reply[1], self.resolve)

    # ---------------------------------------------------------------- serving the judge
    def handle(self, msg):
        try:
            op = msg[0]
            if op == "call":
                return self._call(msg)
            target = self.objs[msg[1]]
            if op == "get":
                return ["ok", self.value(getattr(target, msg[2]))]
            if op == "set":
                setattr(target, msg[2], self.dec(msg[3]))
                return ["ok", None]
            if op == "del":
                delattr(target, msg[2])
                return ["ok", None]
            if op == "op":
                return ["ok", self.value(self._op(target, msg[2], [self.dec(a) for a in msg[3:]]))]
            if op == "globals":
                return ["ok", self._globals()]
            raise ValueError(f"unknown request {op!r}")
        except BaseException as e:  # everything the program raises goes back to the judge as data
            try:
                return self.raise_reply(e)
            except BaseException:
                return ["raise", {"cls": ["R", "builtins", "RuntimeError"], "args": None, "str": "unreportable error"}]

    def _op(self, target, name, args):
        if name in _UNARY:
            return _UNARY[name](target)
        if name == "getitem":
            return target[args[0]]
        if name == "setitem":
            target[args[0]] = args[1]
            return None
        if name == "delitem":
            del target[args[0]]
            return None
        if name == "format":
            return format(target, args[0])
        if name == "binop":
            return _BINOPS[args[0]](target, args[1])
        if name == "isinstance":
            return isinstance(args[0], target)
        if name == "issubclass":
            return issubclass(args[0], target)
        if name == "round":
            return round(target, *args)
        if name == "exit":  # the type of an exception in flight in the test, never its value
            return target.__exit__(args[0] if args else None, None, None)
        if name == "nextn":  # ["items...", done]: the judge's prefetch for a long iteration
            items = []
            for _ in range(min(int(args[0]), _NEXT_BATCH)):
                try:
                    items.append(next(target))
                except StopIteration:
                    return [items, True]
            return [items, False]
        raise ValueError(f"unknown operation {name!r}")

    def _call(self, msg):
        _, target, raw_args, raw_kwargs, ctx = msg
        fn = self.objs[target]
        args = [self.dec(a) for a in raw_args]
        kwargs = {str(k): self.dec(v) for k, v in raw_kwargs.items()}
        saved = self._mirror(ctx or {})
        try:
            result = fn(*args, **kwargs)
        except BaseException as e:
            out = self._unmirror(saved)
            reply = self.raise_reply(e)
            reply.append(out)
            return reply
        out = self._unmirror(saved)
        # Arguments the program changed in place (lists, dicts, sets) go back, so in-place tests work.
        back = [[i, self.enc(a)] for i, a in enumerate(args) if type(a) in _MUTABLE]
        back += [[k, self.enc(v)] for k, v in kwargs.items() if type(v) in _MUTABLE]
        return ["ok", self.value(result), out, back]

    def _mirror(self, ctx):
        """Install what the test patched in the judge (print, input, stdin, stdout capture) for one call."""
        saved = {}
        if ctx.get("stdout"):
            saved["stdout"] = sys.stdout
            sys.stdout = io.StringIO()
        for name in ("print", "input"):
            if name in ctx:
                saved[name] = getattr(builtins, name)
                setattr(builtins, name, self.dec(ctx[name]))
        if "stdin" in ctx:
            saved["stdin"] = sys.stdin
            sys.stdin = _StdinMirror(self.dec(ctx["stdin"]))
        return saved

    def _unmirror(self, saved):
        out = None
        if "stdout" in saved:
            buf, sys.stdout = sys.stdout, saved.pop("stdout")
            out = buf.getvalue()[:_CAPTURE_CHARS] if isinstance(buf, io.StringIO) else None
        if "stdin" in saved:
            sys.stdin = saved.pop("stdin")
        for name, value in saved.items():
            setattr(builtins, name, value)
        return out

    def _globals(self):
        mod = self.objs[0]
        out = []
        for name, value in list(vars(mod).items()):
            if not isinstance(name, str) or name.startswith("__"):
                continue
            try:
                out.append([name, self.value(value, _GLOBAL_ITEMS)])
            except Exception:
                out.append([name, self.export(value)])
        return out


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
            exec(code, module.__dict__)
        except SystemExit:
            raise
        except BaseException as e:
            traceback.print_exception(type(e), e, e.__traceback__)
            return 1
        return 0
    server = Server(module, setup.get("max_value") or 16 << 20)
    try:
        exec(code, module.__dict__)
    except BaseException as e:
        framing.send(CHANNEL_FD, server.raise_reply(e))
        return 0
    server.chan = channel.Channel(CHANNEL_FD, reader.limit, server.handle, reader)
    server.chan.send(["ok", server._globals()])
    server.chan.serve_forever()
    return 0

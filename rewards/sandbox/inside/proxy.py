"""The judge's stand-ins for the program's objects: Proxy classes, one per kind of object the candidate describes.

A proxy has only what every object has plus the special methods the program's type has (protocol.CAPS, as
the candidate reports them), so callable(), hasattr() and the collections ABCs answer as in plain Python;
every use is a request through its Session. A comparison or arithmetic that the program would decide raises
Unjudgeable. stdlib only: this module runs inside the sandbox (in the judge).
"""

import collections
import collections.abc
import itertools
import operator
import sys
import types

from . import protocol, wire

_SLOTS = frozenset({"_coderl_s", "_coderl_i", "_coderl_n"})
_EXACT_ITEMS = 16  # items of a program's iterator fetched one next() at a time before prefetching (laziness)


class Unjudgeable(BaseException):
    """The test needs the program to decide a comparison, or to receive something only the judge has."""


class CandidateGone(BaseException):
    """The candidate process died, closed the channel or broke the protocol."""


class ProgramInterrupt(BaseException):
    """What the test sees of a BaseException of the program that is no Exception (KeyboardInterrupt,
    GeneratorExit, BaseException itself, a subclass of the program's): like the original, no `except Exception`
    or assertRaises(Exception) catches it (as a RuntimeError, a program raising BaseException passed tests
    expecting an exception, which plain Python errors); unlike a genuine KeyboardInterrupt it does not stop the
    test runner, so its test errors."""


class ProgramStopIteration(Exception):
    """What the test sees of a StopIteration (or StopAsyncIteration) a call of the program raised: it must not
    silently end the test's map() or loop, which a genuine one would (a program raising it passed
    `assert all(map(f, cases))`); as an Exception of its own rather than a RuntimeError, it is caught where plain
    Python catches the original (`except Exception`, assertRaises(Exception)) and not by
    assertRaises(RuntimeError), which plain Python fails (red team r27)."""


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


_VIEW_ITEMS = 100_000


def _view_now(proxy):
    """A set-like view of the program's dict as a genuine view of the items it yields now: its ==, != and `in`
    are then decided here, on data (or on proxies, whose own == is judged as theirs); the program only says what
    the dict holds, as it could by returning those items."""
    items = list(itertools.islice(iter(proxy), _VIEW_ITEMS + 1))
    if len(items) > _VIEW_ITEMS:  # the judge holds what it compares: bounded, whatever the program yields
        raise proxy._coderl_s.unjudgeable(f"a view of more than {_VIEW_ITEMS} items compared")
    return dict.fromkeys(items).keys() if type(proxy)._coderl_view == protocol.VIEW_KEYS else dict(items).items()


def _view_compare(same):
    def method(self, other):
        out = _view_now(self).__eq__(other)
        return out if out is NotImplemented or same else not out
    return method


def _fields_compare(op, identical):
    """A comparison of a dataclass of the program whose class keeps the methods dataclasses generated: the
    tuples of its compared fields, compared here (data, or proxies whose own comparisons are judged as theirs)
    as those methods compare them; the program only says what its fields hold, as returning them would."""
    def method(self, other):
        if other is self and identical is not None:
            return identical
        if type(other) is not type(self):  # another class: the generated method's NotImplemented
            return NotImplemented
        names = type(self)._coderl_eq_fields
        return op(tuple(getattr(self, n) for n in names), tuple(getattr(other, n) for n in names))
    return method


_FIELDS_EQ = {"__eq__": _fields_compare(operator.eq, True), "__ne__": _fields_compare(operator.ne, False)}
_FIELDS_ORDER = {"__lt__": _fields_compare(operator.lt, None), "__le__": _fields_compare(operator.le, None),
                 "__gt__": _fields_compare(operator.gt, None), "__ge__": _fields_compare(operator.ge, None)}


_VIEW_METHODS = {"__eq__": _view_compare(True), "__ne__": _view_compare(False),
                 "__contains__": lambda self, x: x in _view_now(self)}


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
    methods its own type has (call, iteration, len, arithmetic...) come from OPTIONAL, per the program's
    type (_proxy_class), so callable(), hasattr() and the ABCs' checks see what plain Python would.

    The subclass is also named after the object's class, so `type(x).__name__` and `x.__class__.__name__`
    read as in plain Python; `__class__` is the genuine type where the class is a standard-library one the
    judge has loaded (`isinstance(x, types.GeneratorType)`, `isinstance(m, re.Match)`). And it says whether
    the class keeps object's `==` and ordering: comparisons are then decided here, by identity, as Python does
    (a candidate claiming so falsely gets no more than an honest `object()` gets)."""

    __slots__ = ("_coderl_s", "_coderl_i", "_coderl_n", "__weakref__")
    _coderl_eq = _coderl_ord = False  # the program's class keeps object's ==/!= (ordering: <, <=, >, >=)
    _coderl_type = None  # the genuine standard-library type of the object, when it has one
    _coderl_view = None  # protocol.VIEW_*: a set-like view of a dict of the program
    _coderl_eq_fields = None  # a dataclass's compared fields, when its class keeps the generated ==

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
_GENERATOR = {name: _generator_op(name) for name in protocol.GENERATOR_OPS}


# The special methods a proxy has only when the program's type has them (protocol.CAPS, in that order), by how
# they reach the program.
_OPTIONAL_SHAPES = {
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
    **{f"__{n}__": _unary(n) for n in protocol.UNARY_CAPS},
    **{f"__{n}__": _binop(protocol.binop_name(n)) for n in protocol.BINARY},
    **{f"__r{n}__": _unjudgeable(f"arithmetic ({n}) with an object of the program") for n in protocol.BINARY},
}
OPTIONAL = {n: _OPTIONAL_SHAPES[n] for n in protocol.CAPS}
_PROXY_CLASSES = {}


# What makes two proxy classes differ: the key of their cache.
_Shape = collections.namedtuple("_Shape", "caps nohash name real eq order fields maker abcs view eq_fields eq_order")


def _proxy_class(info, session=None):
    """The Proxy subclass for an object the candidate describes (protocol.INFO_*): the special methods its type
    has (all of them when the program sent none), its class's name and genuine standard-library type, whether
    that class keeps object's equality and ordering, a dataclass's fields, the nominal ABCs it is one of."""
    shape, maker = _shape(info, session)
    # A dataclass's proxy class builds new objects of the program's class (`dataclasses.replace(o, x=1)` calls
    # `o.__class__(...)`): one per session (which it calls) and class.
    cache = session.__dict__.setdefault("dataclass_proxies", {}) if maker is not None else _PROXY_CLASSES
    cls = cache.get(shape)
    if cls is None:
        cls = _build(shape, maker, session)
        if len(cache) < 4096:  # the program chooses the combinations: bounded
            cache[shape] = cls
    return cls


def _identifiers(value):
    """The identifiers among the first 256 items of a list the program sent; None when it sent no list."""
    return tuple(f for f in value[:256] if type(f) is str and f.isidentifier()) if type(value) is list else None


def _shape(info, session):
    """(_Shape, the program's class reference when the proxy class must call it, else None), from what the
    candidate sent, every field checked for its type."""
    caps = info.get(protocol.INFO_CAPS)
    if type(caps) is not list:
        key, nohash = protocol.CAPS, False
    else:
        names = {c for c in caps if type(c) is str}
        key, nohash = tuple(n for n in protocol.CAPS if n in names), protocol.NOHASH in names
    name, real = _class_of(info.get(protocol.INFO_CLASS))
    df = _identifiers(info.get(protocol.INFO_FIELDS))
    maker = info.get(protocol.INFO_CLASS) if df is not None and session is not None else None
    maker = maker if type(maker) is list and len(maker) == 3 and maker[0] == "h" else None
    abcs = info.get(protocol.INFO_ABCS)
    abcs = tuple(n for n in abcs[:16] if n in _NOMINAL_ABCS) if type(abcs) is list else ()
    view = info.get(protocol.INFO_VIEW)
    view = view if view in (protocol.VIEW_KEYS, protocol.VIEW_ITEMS) and "__iter__" in key else None
    ef = _identifiers(info.get(protocol.INFO_EQ_FIELDS)) if df is not None else None
    eo = ef is not None and info.get(protocol.INFO_ORDER_FIELDS) == 1
    shape = _Shape(key, nohash, name, real, bool(info.get(protocol.INFO_EQ)), bool(info.get(protocol.INFO_ORD)),
                   df, maker and maker[1], abcs, view, ef, eo)
    return shape, maker


def _build(shape, maker, session):
    """A new Proxy subclass of that shape."""
    body = {"__slots__": (), **{n: OPTIONAL[n] for n in shape.caps},
            **(_AWAITABLE if shape.real is types.CoroutineType else {}),
            **(_GENERATOR if shape.real is types.GeneratorType else {}), **_META, "__qualname__": shape.name,
            "_coderl_type": shape.real, "_coderl_eq": shape.eq, "_coderl_ord": shape.order}
    if shape.nohash:
        body["__hash__"] = None
    if shape.view is not None:
        body.update(_VIEW_METHODS, _coderl_view=shape.view)
    if shape.eq_fields is not None:
        body.update(_FIELDS_EQ, **(_FIELDS_ORDER if shape.eq_order else {}), _coderl_eq_fields=shape.eq_fields)
        if not shape.nohash:  # a class body defining __eq__ alone would drop the hash (a frozen dataclass has one)
            body["__hash__"] = Proxy.__hash__
    if shape.fields is not None:
        body["__dataclass_fields__"] = _dataclass_fields(shape.fields)
    if maker is not None:
        body["__new__"] = _maker(maker, session)
    cls = type(shape.name, (Proxy,), body)
    for n in shape.abcs:  # isinstance only: the proxy's methods are still the program's own
        getattr(collections.abc, n).register(cls)
    return cls


_NOMINAL_ABCS = frozenset(protocol.NOMINAL_ABCS)


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


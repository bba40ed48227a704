"""Codecs of standard-library value types: the collections containers, MappingProxyType, SimpleNamespace,
Decimal, Fraction, date/time/datetime/timedelta (naive or with a fixed offset) and pathlib paths.

decimal, fractions, datetime and pathlib are imported only where a value of theirs can exist: a process that
never imported the module holds no such value (and the candidates' zygote stays small), so their codecs claim
objects by a predicate that looks in sys.modules first."""

import collections
import sys
import types

from . import codec
from .codec import Codec, DecodeError, register, text

# ------------------------------------------------------------------------------------------- collections

# The defaultdict factories that cross by name (any other crosses as a handle, from the candidate only).
FACTORIES = {f.__name__: f for f in (list, int, set, dict, str, float, tuple, frozenset, bytes, bool)}


def _mapping(cls, tag, order, examples):
    register(Codec(cls.__name__, (tag,), (cls,), lambda obj, t, enc, depth: enc.pairs(tag, obj.items(), depth),
                   lambda x, dec, depth: cls(dict(dec.pairs(x, 1, depth))) if cls is collections.Counter
                   else cls(dec.pairs(x, 1, depth)),
                   claims=lambda obj, t: isinstance(obj, cls), order=order, examples=examples))


_mapping(collections.Counter, "ct", 30, (collections.Counter("abracadabra"),))
_mapping(collections.OrderedDict, "od", 31, (collections.OrderedDict([("b", 1), ("a", [2])]),))


def _enc_defaultdict(obj, t, enc, depth):
    f = obj.default_factory
    factory = f.__name__ if any(f is g for g in FACTORIES.values()) else None  # identity: f may be a handle
    if factory is None and f is not None and enc.send_classes:  # the program's own (a lambda): a handle
        factory = enc.export(f)
    return enc.pairs("dd", obj.items(), depth, head=(factory,))


def _dec_defaultdict(x, dec, depth):
    factory = x[1]
    if type(factory) is list:  # a callable of the peer (never one of ours by name: that is FACTORIES)
        factory = dec.value(factory, depth + 1)
        if isinstance(factory, (type, types.ModuleType)) or not callable(factory):
            raise DecodeError("bad defaultdict factory")
        return collections.defaultdict(factory, dec.pairs(x, 2, depth))
    if factory is not None and factory not in FACTORIES:
        raise DecodeError("bad defaultdict factory")
    return collections.defaultdict(FACTORIES.get(factory), dec.pairs(x, 2, depth))


register(Codec("defaultdict", ("dd",), (collections.defaultdict,), _enc_defaultdict, _dec_defaultdict, order=32,
               claims=lambda obj, t: isinstance(obj, collections.defaultdict),
               examples=(collections.defaultdict(list, {"a": [1]}), collections.defaultdict(None, {1: 2}))))


def _dec_deque(x, dec, depth):
    maxlen = x[1]
    if maxlen is not None and (type(maxlen) is not int or maxlen < 0):
        raise DecodeError("bad deque")
    return collections.deque(dec.items(x, 2, depth), maxlen)


register(Codec("deque", ("dq",), (collections.deque,),
               lambda obj, t, enc, depth: ["dq", obj.maxlen, *(enc.item(v, depth + 1) for v in obj)], _dec_deque,
               claims=lambda obj, t: isinstance(obj, collections.deque), order=33,
               examples=(collections.deque([1, 2]), collections.deque("ab", 3))))


def _dec_chainmap(x, dec, depth):
    maps = dec.items(x, 1, depth)
    if not all(isinstance(m, dict) for m in maps):
        raise DecodeError("bad ChainMap")
    return collections.ChainMap(*maps)


register(Codec("ChainMap", ("cm",), (collections.ChainMap,),
               lambda obj, t, enc, depth: ["cm", *(enc.item(m, depth + 1) for m in obj.maps)], _dec_chainmap,
               claims=lambda obj, t: isinstance(obj, collections.ChainMap), order=34,
               examples=(collections.ChainMap({"a": 1}, {"a": 2, "b": 3}),)))


def _wrapped(name, tag, cls, inner_type, build, order, examples):
    """A type that crosses as one inner value (UserList's list, SimpleNamespace's dict, ...)."""
    def decode(x, dec, depth):
        inner = dec.value(x[1], depth + 1)
        if type(inner) is not inner_type:
            raise DecodeError(f"bad {tag}")
        return build(inner)
    register(Codec(name, (tag,), (cls,), lambda obj, t, enc, depth: [tag, enc.item(_inner(obj), depth + 1)], decode,
                   claims=None if order is None else (lambda obj, t: isinstance(obj, cls)), order=order,
                   examples=examples))


def _inner(obj):
    if isinstance(obj, (collections.UserList, collections.UserDict)):
        return obj.data
    return dict(vars(obj)) if type(obj) is types.SimpleNamespace else dict(obj)


def _namespace(inner):
    if not all(type(k) is str for k in inner):
        raise DecodeError("bad SimpleNamespace")
    return types.SimpleNamespace(**inner)


_wrapped("UserList", "ul", collections.UserList, list, collections.UserList, 35, (collections.UserList([1, 2]),))
_wrapped("UserDict", "ud", collections.UserDict, dict, collections.UserDict, 36, (collections.UserDict(a=1),))
register(Codec("UserString", ("us",), (collections.UserString,),
               lambda obj, t, enc, depth: ["us", str(obj.data)],
               lambda x, dec, depth: collections.UserString(text(x[1])),
               claims=lambda obj, t: isinstance(obj, collections.UserString), order=37,
               examples=(collections.UserString("ab"),)))
_wrapped("MappingProxyType", "mp", types.MappingProxyType, dict, types.MappingProxyType, None,
         (types.MappingProxyType({"k": 1}),))
_wrapped("SimpleNamespace", "sn", types.SimpleNamespace, dict, _namespace, None, (types.SimpleNamespace(a=1, b=[2]),))

# ------------------------------------------------------------------------------------------- numbers


def _module_type(module, name):
    """A predicate: obj is a module.name, when that module is loaded at all."""
    def claims(obj, t):
        mod = sys.modules.get(module)
        return mod is not None and isinstance(obj, getattr(mod, name))
    return claims


def _dec_decimal(x, dec, depth):
    import decimal
    try:
        return decimal.Decimal(text(x[1]))
    except decimal.InvalidOperation:
        raise DecodeError("bad Decimal") from None


def _dec_fraction(x, dec, depth):
    import fractions
    return fractions.Fraction(codec.integer(dec.value(x[1], depth + 1)), codec.integer(dec.value(x[2], depth + 1)))


def _examples(module, make):
    """Examples of a lazily imported module's types: made when asked for (the tests), never at import."""
    return lambda: make(__import__(module))


register(Codec("Decimal", ("dec",), (), lambda obj, t, enc, depth: ["dec", str(obj)], _dec_decimal,
               claims=_module_type("decimal", "Decimal"), order=40,
               examples=_examples("decimal", lambda m: (m.Decimal("1.10"), m.Decimal("-Infinity")))))
register(Codec("Fraction", ("fr",), (),
               lambda obj, t, enc, depth: ["fr", enc.item(obj.numerator, depth), enc.item(obj.denominator, depth)],
               _dec_fraction, claims=_module_type("fractions", "Fraction"), order=41,
               examples=_examples("fractions", lambda m: (m.Fraction(3, 7), m.Fraction(1 << 5000, 3)))))

# ------------------------------------------------------------------------------------------- paths

# pathlib's classes: a path crosses as its text and the class it is (a program's subclass as its pathlib base).
_PATHS = frozenset({"PurePath", "PurePosixPath", "PureWindowsPath", "Path", "PosixPath", "WindowsPath"})


def _enc_path(obj, t, enc, depth):
    kind = next((k.__name__ for k in t.__mro__ if k.__module__.partition(".")[0] == "pathlib" and k.__name__ in _PATHS),
                "PurePath")
    return ["pa", kind, str(obj)]


def _dec_path(x, dec, depth):
    import pathlib
    if len(x) != 3 or x[1] not in _PATHS:
        raise DecodeError("bad path")
    try:
        return getattr(pathlib, x[1])(text(x[2]))
    except NotImplementedError:  # a WindowsPath here
        raise DecodeError("bad path") from None


register(Codec("path", ("pa",), (), _enc_path, _dec_path, claims=_module_type("pathlib", "PurePath"), order=50,
               examples=_examples("pathlib", lambda m: (m.PurePosixPath("/a/b"), m.Path("x.txt")))))

# ------------------------------------------------------------------------------------------- date and time


def _types():
    """datetime's own types, whatever a test patched: `patch('datetime.datetime')` rebinds a name of the module
    (to a Mock whose `==` would run the test's code, or the program's), never the C module's types themselves."""
    import datetime  # noqa: F401  (loads _datetime, where CPython has it)
    return sys.modules.get("_datetime") or sys.modules["datetime"]


def _tz(tz):
    datetime = _types()
    if tz is None:
        return None
    if type(tz) is datetime.timezone:
        return [tz.utcoffset(None).total_seconds(), tz.tzname(None)]
    raise codec.Unencodable("only naive or fixed-offset datetimes cross the channel")


def _tz_decode(v):
    datetime = _types()
    if v is None:
        return None
    if type(v) is not list or len(v) != 2 or type(v[1]) not in (str, type(None)):
        raise DecodeError("bad timezone")
    return datetime.timezone(datetime.timedelta(seconds=v[0]), v[1]) if v[1] else \
        datetime.timezone(datetime.timedelta(seconds=v[0]))


def _enc_datetime(obj, t, enc, depth):
    datetime = _types()
    if t is datetime.datetime:
        return ["dt", "datetime", obj.year, obj.month, obj.day, obj.hour, obj.minute, obj.second, obj.microsecond,
                _tz(obj.tzinfo), obj.fold]
    if t is datetime.date:
        return ["dt", "date", obj.year, obj.month, obj.day]
    if t is datetime.time:
        return ["dt", "time", obj.hour, obj.minute, obj.second, obj.microsecond, _tz(obj.tzinfo), obj.fold]
    return ["dt", "timedelta", obj.days, obj.seconds, obj.microseconds]


def _dec_datetime(x, dec, depth):
    datetime = _types()
    kind, args = x[1], x[2:]
    num = codec.integer
    if kind == "date":
        return datetime.date(*map(num, args))
    if kind == "timedelta":
        return datetime.timedelta(*map(num, args))
    if kind == "datetime" and len(args) == 9:
        return datetime.datetime(*map(num, args[:7]), tzinfo=_tz_decode(args[7]), fold=num(args[8]))
    if kind == "time" and len(args) == 6:
        return datetime.time(*map(num, args[:4]), tzinfo=_tz_decode(args[4]), fold=num(args[5]))
    raise DecodeError("bad date/time")


def _exact_datetime(obj, t):
    """Exactly one of datetime's four value types (a subclass of them is the program's: a handle)."""
    if "datetime" not in sys.modules:
        return False
    datetime = sys.modules.get("_datetime") or sys.modules["datetime"]
    return t is datetime.datetime or t is datetime.date or t is datetime.time or t is datetime.timedelta


def _datetimes(m):
    utc2 = m.timezone(m.timedelta(hours=2), "X")
    return (m.date(2024, 2, 29), m.datetime(2024, 1, 2, 3, 4, 5, 6, tzinfo=utc2), m.time(1, 2, 3, fold=1),
            m.timedelta(days=-1, seconds=5), m.datetime(2020, 5, 17))


register(Codec("datetime", ("dt",), (), _enc_datetime, _dec_datetime, claims=_exact_datetime, order=55,
               examples=_examples("datetime", _datetimes)))

"""Plain data across the judge/candidate channel: values are encoded as JSON-able trees and rebuilt by the
receiver from its own genuine types, so a value nobody can lie about arrives.

What crosses by value: None, bool, int, float, complex, str, bytes, bytearray, list, tuple, dict, set,
frozenset, namedtuples (rebuilt as a namedtuple class of the same name and fields), the collections
containers (OrderedDict, defaultdict with a builtin factory, Counter, deque, ChainMap, UserList, UserDict,
UserString), MappingProxyType, range, slice, Decimal, Fraction, SimpleNamespace, pathlib paths, date/time/datetime/timedelta
(naive or with a fixed offset) and exception instances. A subclass of a builtin type crosses as its base
value. Anything else is left where it lives and crosses as a handle (``["h", id, info]``: an object of the
sender; ``["y", id]``: an object of the receiver coming back) which each side maps through its own
``export`` / ``resolve`` callbacks; ``["R", module, qualname]`` names a builtin or standard-library object.

The decoder is the trusting side's defence: it accepts only the tags below, checks their shapes, bounds
the depth, and raises DecodeError for anything else. stdlib only: this module runs inside the sandbox.
"""

import collections
import sys
import types

MAX_DEPTH = 500  # nesting a value may have (a test's 300-deep list); deeper parts stay handles
# Python frames encode()/decode() use per level of nesting, with room: whoever (de)codes a value raises its
# recursion limit to this while it does (candidate.py, judge.py), whatever limit the program set for itself.
RECURSION_ROOM = 5 * MAX_DEPTH + 1000
_BIG_INT_BITS = 4096  # beyond this an int travels as hex: int <-> decimal text is capped at 4300 digits
_BIG_INT = 1 << _BIG_INT_BITS
_NT_CACHE_SIZE = 256


class DecodeError(ValueError):
    """The peer sent something that is not a value of this format."""


class Unencodable(TypeError):
    """This side cannot send the value (the judge refuses to hand out its internals)."""


_FLAT = frozenset({str, float, bool, type(None)})


def _flat(items):
    """True when every item crosses as itself (the common case: a list of numbers or strings)."""
    flat = _FLAT
    return all((t := type(v)) in flat or (t is int and -_BIG_INT < v < _BIG_INT) for v in items)


def _enc_seq(tag, items, export, depth, path):
    if _flat(items):
        return [tag, *items]
    return [tag, *(encode(v, export, depth + 1, path) for v in items)]


def _enc_pairs(tag, pairs, export, depth, path, head=()):
    out = [tag, *head]
    for k, v in pairs:
        out.append(encode(k, export, depth + 1, path))
        out.append(encode(v, export, depth + 1, path))
    return out


def _tz(tz):
    import datetime
    if tz is None:
        return None
    if type(tz) is datetime.timezone:
        return [tz.utcoffset(None).total_seconds(), tz.tzname(None)]
    raise Unencodable("only naive or fixed-offset datetimes cross the channel")


def encode(obj, export, depth=0, path=None):
    """obj as a JSON-able tree; objects that are not plain data go through export(obj)."""
    t = type(obj)
    if t is str or t is bool or t is float or obj is None:
        return obj
    if t is int:
        return obj if obj.bit_length() <= _BIG_INT_BITS else ["i", hex(obj)]
    if depth > MAX_DEPTH:
        return export(obj)
    if path is None:
        path = set()
    key = id(obj)
    if key in path:  # a container holding itself cannot travel by value
        return export(obj)
    path.add(key)
    try:
        return _encode_container(obj, t, export, depth, path)
    finally:
        path.discard(key)


def _encode_container(obj, t, export, depth, path):
    if t is list:
        return _enc_seq("l", obj, export, depth, path)
    if t is tuple:
        return _enc_seq("t", obj, export, depth, path)
    if t is dict:
        return _enc_pairs("d", obj.items(), export, depth, path)
    if t is set:
        return _enc_seq("s", obj, export, depth, path)
    if t is frozenset:
        return _enc_seq("fs", obj, export, depth, path)
    if t is bytes:
        return ["b", obj.decode("latin-1")]
    if t is complex:
        return ["c", obj.real, obj.imag]
    if isinstance(obj, BaseException):
        return ["e", encode_exception(obj, export, depth, path)]
    if isinstance(obj, tuple) and isinstance(getattr(t, "_fields", None), tuple):
        items = [encode(v, export, depth + 1, path) for v in tuple.__iter__(obj)]
        owner = _nt_owner(t, export)
        if owner is not None:
            return ["ntc", owner[0], t.__name__, list(t._fields), owner[1], *items]
        return ["nt", t.__name__, list(t._fields), *items]
    if isinstance(obj, collections.Counter):
        return _enc_pairs("ct", obj.items(), export, depth, path)
    if isinstance(obj, collections.OrderedDict):
        return _enc_pairs("od", obj.items(), export, depth, path)
    if isinstance(obj, collections.defaultdict):
        f = obj.default_factory
        factory = f.__name__ if any(f is g for g in _FACTORIES.values()) else None  # identity: f may be a handle
        if factory is None and f is not None and SEND_CLASSES:  # the program's own (a lambda): a handle
            factory = export(f)
        return _enc_pairs("dd", obj.items(), export, depth, path, head=(factory,))
    if isinstance(obj, collections.deque):
        return ["dq", obj.maxlen, *(encode(v, export, depth + 1, path) for v in obj)]
    if isinstance(obj, collections.ChainMap):
        return ["cm", *(encode(m, export, depth + 1, path) for m in obj.maps)]
    if isinstance(obj, collections.UserList):
        return ["ul", encode(obj.data, export, depth + 1, path)]
    if isinstance(obj, collections.UserDict):
        return ["ud", encode(obj.data, export, depth + 1, path)]
    if isinstance(obj, collections.UserString):
        return ["us", str(obj.data)]
    if t is types.MappingProxyType:
        return ["mp", encode(dict(obj), export, depth + 1, path)]
    if t is range:
        return ["rg", obj.start, obj.stop, obj.step]
    if t is slice:  # obj[1:3] on a sequence class of the program: its bounds are data like any other
        return ["sl", *(encode(v, export, depth + 1, path) for v in (obj.start, obj.stop, obj.step))]
    # decimal, fractions and datetime are imported only where a value of theirs can exist: a process that
    # never imported the module holds no such value (and the candidates' zygote stays small).
    mods = sys.modules
    if "decimal" in mods and isinstance(obj, mods["decimal"].Decimal):
        return ["dec", str(obj)]
    if "fractions" in mods and isinstance(obj, mods["fractions"].Fraction):
        return ["fr", encode(obj.numerator, export), encode(obj.denominator, export)]
    if "pathlib" in mods and isinstance(obj, mods["pathlib"].PurePath):
        kind = next((k.__name__ for k in t.__mro__ if k.__module__.partition(".")[0] == "pathlib" and k.__name__ in _PATHS), "PurePath")
        return ["pa", kind, str(obj)]
    if t is types.SimpleNamespace:
        return ["sn", encode(dict(vars(obj)), export, depth + 1, path)]
    if t is bytearray:
        return ["ba", bytes(obj).decode("latin-1")]
    datetime = mods.get("datetime")
    if datetime is not None and t in (datetime.datetime, datetime.date, datetime.time, datetime.timedelta):
        return _encode_datetime(obj, t, datetime)
    member = _enum_member(obj, t, export)
    if member is not None:
        return member
    # Subclasses of the builtin types travel as their base value.
    for base, tag in _BASES:
        if isinstance(obj, base):
            if base is int:
                v = int(obj)
                return v if v.bit_length() <= _BIG_INT_BITS else ["i", hex(v)]
            if base is str:
                return str.__str__(obj)
            if base is float:
                return float(obj)
            if base is bytes:
                return ["b", bytes(obj).decode("latin-1")]
            if base is dict:
                return _enc_pairs("d", dict.items(obj), export, depth, path)
            return _enc_seq(tag, list(base.__iter__(obj)), export, depth, path)
    return export(obj)


def _encode_datetime(obj, t, datetime):
    if t is datetime.datetime:
        return ["dt", "datetime", obj.year, obj.month, obj.day, obj.hour, obj.minute, obj.second, obj.microsecond,
                _tz(obj.tzinfo), obj.fold]
    if t is datetime.date:
        return ["dt", "date", obj.year, obj.month, obj.day]
    if t is datetime.time:
        return ["dt", "time", obj.hour, obj.minute, obj.second, obj.microsecond, _tz(obj.tzinfo), obj.fold]
    return ["dt", "timedelta", obj.days, obj.seconds, obj.microseconds]


# pathlib's classes: a path crosses as its text and the class it is (a program's subclass as its pathlib base).
_PATHS = frozenset({"PurePath", "PurePosixPath", "PureWindowsPath", "Path", "PosixPath", "WindowsPath"})
_BASES = ((int, None), (float, None), (str, None), (bytes, None), (list, "l"), (tuple, "t"),
          (dict, "d"), (set, "s"), (frozenset, "fs"))
# Builtin types that cross by name (["R", "builtins", name]); also the defaultdict factories rebuilt.
BUILTIN_TYPES = frozenset({list, int, set, dict, str, float, tuple, frozenset, bytes, bool, complex, bytearray,
                           object, type(None)})
_FACTORIES = {f.__name__: f for f in (list, int, set, dict, str, float, tuple, frozenset, bytes, bool)}


_CHAIN = 4  # links of an exception's __cause__ / __context__ chain that cross with it


def encode_exception(exc, export, depth=0, path=None, chain=0):
    """{"cls": class, "args": [...], "str": text, "attrs": [k, v, ...]} of an exception instance, with its
    "cause" / "context" (`raise ... from e`, or raised while handling another) and "suppress" (`from`)."""
    desc = _encode_exception(exc, export, depth, path)
    if chain < _CHAIN:
        for key, linked in (("cause", exc.__cause__), ("context", exc.__context__)):
            if isinstance(linked, BaseException):
                desc[key] = "cause" if key == "context" and linked is exc.__cause__ else \
                    encode_exception(linked, export, depth + 1, path, chain + 1)
    if exc.__suppress_context__:
        desc["suppress"] = True
    return desc


def _encode_exception(exc, export, depth, path):
    cls = type(exc)
    try:
        args = [encode(a, export, depth + 1, path) for a in exc.args]
    except Exception:
        args = None
    try:
        text = str(exc)[:2000]
    except Exception:
        text = ""
    attrs = []
    for k, v in list(getattr(exc, "__dict__", {}).items())[:32]:
        if isinstance(k, str) and not k.startswith("_"):
            try:
                attrs += [k, encode(v, export, depth + 1, path)]
            except Exception:
                pass
    return {"cls": export(cls), "args": args, "str": text, "attrs": attrs}


def stdlib_ref(obj):
    """["R", module, qualname] when obj is reachable by that name in a builtin or standard-library module."""
    try:
        mod = getattr(obj, "__module__", None) or getattr(getattr(obj, "__objclass__", None), "__module__", None)
        qual = getattr(obj, "__qualname__", None)
    except Exception:
        return None
    if not isinstance(mod, str) or not isinstance(qual, str) or "<" in qual:
        return None
    if mod != "builtins" and mod.partition(".")[0] not in sys.stdlib_module_names:
        return None
    target = sys.modules.get(mod)
    try:
        for part in qual.split("."):
            target = getattr(target, part)
    except Exception:
        return None
    return ["R", mod, qual] if target is obj else None


def resolve_ref(mod, qual):
    """The object named by a ["R", module, qualname] reference in this process (import restricted to the stdlib)."""
    if not isinstance(mod, str) or not isinstance(qual, str):
        raise DecodeError("bad reference")
    if mod != "builtins" and mod.partition(".")[0] not in sys.stdlib_module_names:
        raise DecodeError(f"reference outside the standard library: {mod}")
    import importlib
    try:
        target = importlib.import_module(mod)
        for part in qual.split("."):
            target = getattr(target, part)
    except Exception as e:
        raise DecodeError(f"unknown reference {mod}.{qual}: {type(e).__name__}") from None
    return target


# A namedtuple class with behaviour of its own (methods, properties: `p.scaled(2)`, `url.geturl()`) crosses with
# its class, as a handle with the kind of each public attribute, so that the judge's stand-in asks the program's
# class for them (never runs them itself; the judge never imports the class's module for the program either).
# Only the candidate sends its classes (the judge sends back the stand-ins it made from them).
SEND_CLASSES = False


def _nt_owner(t, export):
    """(class reference, {attribute: kind}) for a namedtuple class with behaviour, else None."""
    made = t.__dict__.get("_coderl_nt_of")
    if made is not None:  # a stand-in of ours: its owner goes back
        return export(made), dict(t.__dict__["_coderl_nt_kinds"])
    if not SEND_CLASSES:
        return None
    kinds = _kinds(t, t._fields)
    return (export(t), kinds) if kinds else None


def _kinds(t, skip):
    """{public attribute: "m" (a method), "p" (a property), "a" (anything else)} that t's classes define, save
    those of the standard library's (tuple, enum.Enum, ...) and the names in skip."""
    kinds = {}
    for klass in t.__mro__:
        if getattr(klass, "__module__", None) in ("builtins", "enum", "collections", "typing"):
            continue
        for name, v in list(vars(klass).items()):
            if type(name) is str and name.isidentifier() and not name.startswith("_") and name not in kinds \
                    and name not in skip:
                kinds[name] = "p" if isinstance(v, property) else "m" if isinstance(v, types.FunctionType) else "a"
    return dict(list(kinds.items())[:64])


# A member of an enum with a builtin mixin (IntEnum, IntFlag, `class Status(str, Enum)`) crosses as its value,
# its name and its class (a handle, with the kinds of its public attributes): the judge's stand-in is that value
# (==, hash, ordering as the mixin's), one object per member (`Level(2) is Level.HIGH`), with `.name`, `.value`,
# and its str / repr / format and the class's own methods asked of the program's class.
def _enum_member(obj, t, export):
    made = t.__dict__.get("_coderl_en_of")
    if made is not None:
        return ["en", export(made), obj._coderl_name, _mixin_value(t.__dict__["_coderl_en_base"], obj),
                t.__dict__["_coderl_en_kinds"]]
    if not SEND_CLASSES:
        return None
    enum = sys.modules.get("enum")
    if enum is None or not isinstance(obj, enum.Enum):
        return None
    base = next((b for b in (int, str, float) if isinstance(obj, b)), None)
    name = obj._name_
    if base is None or not (name is None or type(name) is str):
        return None
    value = _mixin_value(base, obj)
    members = getattr(t, "_member_map_", None)
    return ["en", export(t), name, value, _kinds(t, members if type(members) is dict else ())]


_en_standins = {}


def _mixin_value(base, member):
    """The member's value as its mixin's own (never its class's __str__ / __int__, which the program wrote)."""
    return str.__str__(member) if base is str else int.__int__(member) if base is int else float.__float__(member)


def _decode_enum_member(x, resolve, depth):
    if len(x) != 5 or not (x[2] is None or type(x[2]) is str) or type(x[4]) is not dict:
        raise DecodeError("bad enum member")
    value = decode(x[3], resolve, depth + 1)
    base = type(value)
    if base not in (int, str, float):
        raise DecodeError("bad enum member")
    owner = decode(x[1], resolve, depth + 1)
    enum = sys.modules.get("enum")
    if enum is not None and isinstance(owner, type) and issubclass(owner, enum.Enum):
        return owner(value)  # our own class coming back
    if isinstance(owner, (type, types.ModuleType)):
        raise DecodeError("bad enum class")
    key = (id(owner), base, value)
    hit = _en_standins.get(key)
    if hit is not None and hit[0] is owner:
        return hit[1]
    member = _en_class(owner, base, _checked_kinds(x[4]))(value)
    member._coderl_name = x[2]
    if len(_en_standins) >= 4 * _NT_CACHE_SIZE:
        _en_standins.clear()
    _en_standins[key] = (owner, member)
    return member


def _en_class(owner, base, kinds):
    key = (id(owner), base, "class")
    hit = _en_standins.get(key)
    if hit is not None and hit[0] is owner:
        return hit[1]
    body = {"_coderl_en_of": owner, "_coderl_en_base": base, "_coderl_en_kinds": dict(kinds),
            "name": property(lambda self: self._coderl_name),
            "value": property(lambda self: _mixin_value(base, self)),
            "__str__": lambda self: _peer_attr(owner, "__str__")(self),
            "__repr__": lambda self: _peer_attr(owner, "__repr__")(self),
            "__format__": lambda self, spec: _peer_attr(owner, "__format__")(self, spec)}
    for attr, kind in kinds.items():
        if not hasattr(base, attr) and attr not in body:
            body[attr] = _standin_attr(owner, attr, kind)
    cls = type(str(getattr(owner, "_coderl_n", "") or "Enum"), (base,), body)
    _en_standins[key] = (owner, cls)
    return cls


def _peer_attr(owner, attr):
    """The attribute of the peer's class itself: a special method's name on the handle would be the handle's own."""
    return type(owner).__getattr__(owner, attr)


def _checked_kinds(kinds):
    if type(kinds) is not dict or len(kinds) > 64 or not all(
            type(k) is str and k.isidentifier() and not k.startswith("_") and v in ("m", "p", "a")
            for k, v in kinds.items()):
        raise DecodeError("bad attribute kinds")
    return kinds


_nt_standins = {}


def _nt_standin(owner, name, fields, kinds):
    """A namedtuple class standing for a class of the peer (owner, a handle): its values are the tuple's, its
    public attributes are asked of the owner, as the peer's class would answer them (`p.scaled(2)` calls the
    peer's `scaled` with this value)."""
    base = _namedtuple(name, fields)
    key = (id(owner), name, tuple(fields), tuple(sorted(kinds.items())))
    hit = _nt_standins.get(key)
    if hit is not None and hit[0] is owner:
        return hit[1]
    body = {"__slots__": (), "_coderl_nt_of": owner, "_coderl_nt_kinds": dict(kinds)}
    for attr, kind in kinds.items():
        if hasattr(base, attr):  # never tuple's or namedtuple's own (count, index, a field)
            continue
        body[attr] = _standin_attr(owner, attr, kind)
    cls = type(name, (base,), body)
    if len(_nt_standins) >= _NT_CACHE_SIZE:
        _nt_standins.clear()
    _nt_standins[key] = (owner, cls)
    return cls


def _standin_attr(owner, attr, kind):
    if kind == "m":
        def method(self, *args, **kwargs):
            return getattr(owner, attr)(self, *args, **kwargs)
        method.__name__ = attr
        return method
    if kind == "p":
        return property(lambda self: getattr(owner, attr).fget(self))
    return property(lambda self: getattr(owner, attr))


def _decode_nt_class(x, resolve, depth):
    fields, kinds = x[3], x[4]
    if type(fields) is not list or len(x) - 5 != len(fields) or not all(type(f) is str for f in fields):
        raise DecodeError("bad namedtuple")
    _checked_kinds(kinds)
    name, items = _str(x[2]), _items(x, 5, resolve, depth)
    owner = decode(x[1], resolve, depth + 1)
    if isinstance(owner, type) and issubclass(owner, tuple) and getattr(owner, "_fields", None) == tuple(fields):
        return owner._make(items)  # our own class coming back
    if isinstance(owner, (type, types.ModuleType)):  # a stand-in asks a handle of the peer, nothing of ours
        raise DecodeError("bad namedtuple class")
    return _nt_standin(owner, name, fields, kinds)(*items)


# ------------------------------------------------------------------------------------------- decode

_nt_classes = {}


def _namedtuple(name, fields):
    key = (name, tuple(fields))
    cls = _nt_classes.get(key)
    if cls is None:
        if len(_nt_classes) >= _NT_CACHE_SIZE:
            _nt_classes.clear()
        try:
            cls = collections.namedtuple(name, fields)
        except (TypeError, ValueError) as e:
            raise DecodeError(f"bad namedtuple: {e}") from None
        _nt_classes[key] = cls
    return cls


def _tz_decode(v):
    import datetime
    if v is None:
        return None
    if type(v) is not list or len(v) != 2 or type(v[1]) not in (str, type(None)):
        raise DecodeError("bad timezone")
    return datetime.timezone(datetime.timedelta(seconds=v[0]), v[1]) if v[1] else \
        datetime.timezone(datetime.timedelta(seconds=v[0]))


def _pairs(x, start, resolve, depth):
    if (len(x) - start) % 2:
        raise DecodeError("odd mapping")
    dec = decode
    return [(dec(x[i], resolve, depth + 1), dec(x[i + 1], resolve, depth + 1)) for i in range(start, len(x), 2)]


def _items(x, start, resolve, depth):
    items = x[start:]
    if all(type(v) in _PLAIN_JSON for v in items):  # JSON scalars are values already
        return items
    return [decode(v, resolve, depth + 1) for v in items]


_PLAIN_JSON = frozenset({str, int, float, bool, type(None)})


def _str(v):
    if type(v) is not str:
        raise DecodeError("expected text")
    return v


def _int(v):
    if type(v) is not int:
        raise DecodeError("expected an int")
    return v


def _dt(x):
    import datetime
    kind, args = x[1], x[2:]
    if kind == "date":
        return datetime.date(*map(_int, args))
    if kind == "timedelta":
        return datetime.timedelta(*map(_int, args))
    if kind == "datetime" and len(args) == 9:
        return datetime.datetime(*map(_int, args[:7]), tzinfo=_tz_decode(args[7]), fold=_int(args[8]))
    if kind == "time" and len(args) == 6:
        return datetime.time(*map(_int, args[:4]), tzinfo=_tz_decode(args[4]), fold=_int(args[5]))
    raise DecodeError("bad date/time")


def _decode_tagged(x, resolve, depth):
    tag = x[0]
    if tag == "l":
        return _items(x, 1, resolve, depth)
    if tag == "t":
        return tuple(_items(x, 1, resolve, depth))
    if tag == "d":
        return dict(_pairs(x, 1, resolve, depth))
    if tag == "s":
        return set(_items(x, 1, resolve, depth))
    if tag == "fs":
        return frozenset(_items(x, 1, resolve, depth))
    if tag == "b":
        return _str(x[1]).encode("latin-1")
    if tag == "ba":
        return bytearray(_str(x[1]).encode("latin-1"))
    if tag == "i":
        return int(_str(x[1]), 16)
    if tag == "c":
        if type(x[1]) not in (int, float) or type(x[2]) not in (int, float):
            raise DecodeError("bad complex")
        return complex(x[1], x[2])
    if tag == "nt":
        fields = x[2]
        if type(fields) is not list or len(x) - 3 != len(fields) or not all(type(f) is str for f in fields):
            raise DecodeError("bad namedtuple")
        return _namedtuple(_str(x[1]), fields)(*_items(x, 3, resolve, depth))
    if tag == "ntc":
        return _decode_nt_class(x, resolve, depth)
    if tag == "en":
        return _decode_enum_member(x, resolve, depth)
    if tag == "ct":
        return collections.Counter(dict(_pairs(x, 1, resolve, depth)))
    if tag == "od":
        return collections.OrderedDict(_pairs(x, 1, resolve, depth))
    if tag == "dd":
        factory = x[1]
        if type(factory) is list:  # a callable of the peer (never one of ours by name: that is _FACTORIES)
            factory = decode(factory, resolve, depth + 1)
            if isinstance(factory, (type, types.ModuleType)) or not callable(factory):
                raise DecodeError("bad defaultdict factory")
            return collections.defaultdict(factory, _pairs(x, 2, resolve, depth))
        if factory is not None and factory not in _FACTORIES:
            raise DecodeError("bad defaultdict factory")
        return collections.defaultdict(_FACTORIES.get(factory), _pairs(x, 2, resolve, depth))
    if tag == "dq":
        maxlen = x[1]
        if maxlen is not None and (type(maxlen) is not int or maxlen < 0):
            raise DecodeError("bad deque")
        return collections.deque(_items(x, 2, resolve, depth), maxlen)
    if tag == "cm":
        maps = _items(x, 1, resolve, depth)
        if not all(isinstance(m, dict) for m in maps):
            raise DecodeError("bad ChainMap")
        return collections.ChainMap(*maps)
    if tag in ("ul", "ud", "mp", "sn"):
        inner = decode(x[1], resolve, depth + 1)
        want = list if tag == "ul" else dict
        if type(inner) is not want:
            raise DecodeError(f"bad {tag}")
        if tag == "ul":
            return collections.UserList(inner)
        if tag == "ud":
            return collections.UserDict(inner)
        if tag == "sn":
            if not all(type(k) is str for k in inner):
                raise DecodeError("bad SimpleNamespace")
            return types.SimpleNamespace(**inner)
        return types.MappingProxyType(inner)
    if tag == "us":
        return collections.UserString(_str(x[1]))
    if tag == "rg":
        return range(_int(x[1]), _int(x[2]), _int(x[3]))
    if tag == "sl":
        if len(x) != 4:
            raise DecodeError("bad slice")
        return slice(*(decode(v, resolve, depth + 1) for v in x[1:]))
    if tag == "dec":
        import decimal
        try:
            return decimal.Decimal(_str(x[1]))
        except decimal.InvalidOperation:
            raise DecodeError("bad Decimal") from None
    if tag == "fr":
        import fractions
        return fractions.Fraction(_int(decode(x[1], resolve, depth + 1)), _int(decode(x[2], resolve, depth + 1)))
    if tag == "dt":
        return _dt(x)
    if tag == "pa":
        import pathlib
        if x[1] not in _PATHS or len(x) != 3:
            raise DecodeError("bad path")
        try:
            return getattr(pathlib, x[1])(_str(x[2]))
        except NotImplementedError:  # a WindowsPath here
            raise DecodeError("bad path") from None
    if tag == "e":
        return build_exception(x[1], resolve, depth)
    if tag in ("h", "y", "R"):
        return resolve(x)
    raise DecodeError(f"unknown tag {tag!r}")


def decode(x, resolve, depth=0):
    """The value a tree from encode() stands for; handles and references go through resolve(tagged)."""
    t = type(x)
    if t is str or t is int or t is float or t is bool or x is None:
        return x
    if t is not list or not x or type(x[0]) is not str:
        raise DecodeError(f"not a value: {t.__name__}")
    if depth > MAX_DEPTH + 2:
        raise DecodeError("value nested too deeply")
    try:
        return _decode_tagged(x, resolve, depth)
    except (DecodeError, RecursionError):
        raise
    except (TypeError, ValueError, IndexError, OverflowError, KeyError) as e:
        raise DecodeError(f"bad {x[0]!r} value: {type(e).__name__}: {e}") from None


def build_exception(desc, resolve, depth=0):
    """A genuine exception instance from encode_exception()'s description (its class resolved by `resolve`)."""
    if type(desc) is not dict:
        raise DecodeError("bad exception")
    cls = resolve(desc.get("cls")) if type(desc.get("cls")) is list else None
    if not (isinstance(cls, type) and issubclass(cls, BaseException)):
        raise DecodeError("exception class is not an exception")
    raw = desc.get("args")
    args = tuple(decode(a, resolve, depth + 1) for a in raw) if type(raw) is list else (desc.get("str") or "",)
    try:
        exc = cls(*args)
    except Exception:
        exc = cls.__new__(cls)
        exc.args = args
    attrs = desc.get("attrs") or []
    if type(attrs) is list:
        for i in range(0, len(attrs) - 1, 2):
            if type(attrs[i]) is str and not attrs[i].startswith("_"):
                try:
                    setattr(exc, attrs[i], decode(attrs[i + 1], resolve, depth + 1))
                except Exception:
                    pass
    if depth <= MAX_DEPTH:
        cause = desc.get("cause")
        if type(cause) is dict:
            exc.__cause__ = build_exception(cause, resolve, depth + 1)
        context = desc.get("context")
        if context == "cause":
            exc.__context__ = exc.__cause__
        elif type(context) is dict:
            exc.__context__ = build_exception(context, resolve, depth + 1)
        exc.__suppress_context__ = desc.get("suppress") is True
    return exc


# Containers that the program and its test may both hold in plain Python (an argument the program keeps, a
# list it keeps and returns, a module-level table): each side works on its own copy, so in-place changes
# cross both ways between requests (candidate.Server.retained, judge.Session.tracked).
MUTABLE = frozenset({list, dict, set, bytearray, collections.deque, collections.Counter, collections.OrderedDict,
                     collections.defaultdict})


def write_back(target, state, same_rows=None):
    """Apply in place what the other side did to its copy of a shared container. same_rows (a list's): for each
    item, the index of the item it still is (the same object over there), else -1; that one stays itself here."""
    t = type(target)
    if t is not type(state) or target == state:
        return
    if t is list and type(same_rows) is list and len(same_rows) == len(state):
        old = list(target)
        for i, j in enumerate(same_rows):
            if type(j) is int and 0 <= j < len(old) and type(old[j]) is type(state[i]) and type(old[j]) in MUTABLE:
                write_back(old[j], state[i])
                state[i] = old[j]
        target[:] = state
    elif t is list or t is bytearray:
        target[:] = state
    elif t is collections.deque:
        target.clear()
        target.extend(state)
    elif t in MUTABLE:  # dict, set and the collections mappings
        target.clear()
        target.update(state)

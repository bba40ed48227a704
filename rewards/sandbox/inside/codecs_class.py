"""Codecs of values that carry a class: namedtuples and enum members (with a builtin mixin).

A namedtuple crosses as its name, fields and items, rebuilt as a namedtuple class of that name and fields. One
whose class has behaviour of its own (methods, properties: `p.scaled(2)`, `url.geturl()`) crosses with its
class, as a handle with the kind of each public attribute, when the encoder sends classes (the candidate's
does): the receiver's stand-in class asks the owner for them (never runs them itself; the judge never imports
the class's module for the program either).

A member of an enum with a builtin mixin (IntEnum, IntFlag, `class Status(str, Enum)`) crosses as its value,
its name and its class (a handle, with the kinds of its public attributes): the stand-in is that value (==,
hash, ordering as the mixin's), one object per member (`Level(2) is Level.HIGH`), with `.name`, `.value`, and
its str / repr / format and the class's own methods asked of the owner.

The classes and members made here live in one bounded cache (STANDINS).
"""

import collections
import sys
import types

from .codec import Codec, DecodeError, register, text


class StandIns:
    """One bounded cache of what decoding made (namedtuple classes, stand-in classes and members); an entry
    made for an owner (a handle of the peer) answers only while that very owner is asked about."""

    def __init__(self, size):
        self.size, self.entries = size, {}

    def get(self, key, owner=None):
        hit = self.entries.get(key)
        return hit[1] if hit is not None and hit[0] is owner else None

    def put(self, key, value, owner=None):
        entries = self.entries
        if len(entries) >= self.size:
            del entries[next(iter(entries))]  # the oldest
        entries[key] = (owner, value)
        return value


STANDINS = StandIns(1024)


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


def _checked_kinds(kinds):
    if type(kinds) is not dict or len(kinds) > 64 or not all(
            type(k) is str and k.isidentifier() and not k.startswith("_") and v in ("m", "p", "a")
            for k, v in kinds.items()):
        raise DecodeError("bad attribute kinds")
    return kinds


def _standin_attr(owner, attr, kind):
    if kind == "m":
        def method(self, *args, **kwargs):
            return getattr(owner, attr)(self, *args, **kwargs)
        method.__name__ = attr
        return method
    if kind == "p":
        return property(lambda self: getattr(owner, attr).fget(self))
    return property(lambda self: getattr(owner, attr))


def _peer_attr(owner, attr):
    """The attribute of the peer's class itself: a special method's name on the handle would be the handle's own."""
    return type(owner).__getattr__(owner, attr)


# ------------------------------------------------------------------------------------------- namedtuples


def _is_namedtuple(obj, t):
    return isinstance(obj, tuple) and isinstance(getattr(t, "_fields", None), tuple)


def _enc_namedtuple(obj, t, enc, depth):
    items = [enc.item(v, depth + 1) for v in tuple.__iter__(obj)]
    made = t.__dict__.get("_coderl_nt_of")
    if made is not None:  # a stand-in of ours: its owner goes back
        return ["ntc", enc.export(made), t.__name__, list(t._fields), dict(t.__dict__["_coderl_nt_kinds"]), *items]
    if enc.send_classes:
        kinds = _kinds(t, t._fields)
        if kinds:
            return ["ntc", enc.export(t), t.__name__, list(t._fields), kinds, *items]
    return ["nt", t.__name__, list(t._fields), *items]


def namedtuple_class(name, fields):
    """The receiver's namedtuple class of that name and fields."""
    key = ("nt", name, tuple(fields))
    cls = STANDINS.get(key)
    if cls is None:
        try:
            cls = STANDINS.put(key, collections.namedtuple(name, fields))
        except (TypeError, ValueError) as e:
            raise DecodeError(f"bad namedtuple: {e}") from None
    return cls


def _fields(fields, count):
    if type(fields) is not list or count != len(fields) or not all(type(f) is str for f in fields):
        raise DecodeError("bad namedtuple")
    return fields


def _dec_namedtuple(x, dec, depth):
    fields = _fields(x[2], len(x) - 3)
    return namedtuple_class(text(x[1]), fields)(*dec.items(x, 3, depth))


def _nt_standin(owner, name, fields, kinds):
    """A namedtuple class standing for a class of the peer (owner, a handle): its values are the tuple's, its
    public attributes are asked of the owner, as the peer's class would answer them (`p.scaled(2)` calls the
    peer's `scaled` with this value)."""
    base = namedtuple_class(name, fields)
    key = ("ntc", id(owner), name, tuple(fields), tuple(sorted(kinds.items())))
    cls = STANDINS.get(key, owner)
    if cls is not None:
        return cls
    body = {"__slots__": (), "_coderl_nt_of": owner, "_coderl_nt_kinds": dict(kinds)}
    for attr, kind in kinds.items():
        if not hasattr(base, attr):  # never tuple's or namedtuple's own (count, index, a field)
            body[attr] = _standin_attr(owner, attr, kind)
    return STANDINS.put(key, type(name, (base,), body), owner)


def _dec_namedtuple_class(x, dec, depth):
    fields, kinds = _fields(x[3], len(x) - 5), _checked_kinds(x[4])
    name, items = text(x[2]), dec.items(x, 5, depth)
    owner = dec.value(x[1], depth + 1)
    if isinstance(owner, type) and issubclass(owner, tuple) and getattr(owner, "_fields", None) == tuple(fields):
        return owner._make(items)  # our own class coming back
    if isinstance(owner, (type, types.ModuleType)):  # a stand-in asks a handle of the peer, nothing of ours
        raise DecodeError("bad namedtuple class")
    return _nt_standin(owner, name, fields, kinds)(*items)


def _namedtuples():
    import urllib.parse
    return (collections.namedtuple("P", "x y")(1, [2]), urllib.parse.urlsplit("http://a/b?c"))


register(Codec("namedtuple", ("nt", "ntc"), (), _enc_namedtuple,
               lambda x, dec, depth: (_dec_namedtuple if x[0] == "nt" else _dec_namedtuple_class)(x, dec, depth),
               claims=_is_namedtuple, order=20, examples=_namedtuples))

# ------------------------------------------------------------------------------------------- enum members


def _mixin_value(base, member):
    """The member's value as its mixin's own (never its class's __str__ / __int__, which the program wrote)."""
    return str.__str__(member) if base is str else int.__int__(member) if base is int else float.__float__(member)


def _is_member(obj, t):
    if "_coderl_en_of" in t.__dict__:
        return True
    enum = sys.modules.get("enum")
    return enum is not None and isinstance(obj, enum.Enum)


def _enc_member(obj, t, enc, depth):
    made = t.__dict__.get("_coderl_en_of")
    if made is not None:
        return ["en", enc.export(made), obj._coderl_name, _mixin_value(t.__dict__["_coderl_en_base"], obj),
                t.__dict__["_coderl_en_kinds"]]
    if not enc.send_classes:
        return None
    base = next((b for b in (int, str, float) if isinstance(obj, b)), None)
    name = obj._name_
    if base is None or not (name is None or type(name) is str):
        return None
    members = getattr(t, "_member_map_", None)
    return ["en", enc.export(t), name, _mixin_value(base, obj), _kinds(t, members if type(members) is dict else ())]


def _dec_member(x, dec, depth):
    if len(x) != 5 or not (x[2] is None or type(x[2]) is str) or type(x[4]) is not dict:
        raise DecodeError("bad enum member")
    value = dec.value(x[3], depth + 1)
    base = type(value)
    if base not in (int, str, float):
        raise DecodeError("bad enum member")
    owner = dec.value(x[1], depth + 1)
    enum = sys.modules.get("enum")
    if enum is not None and isinstance(owner, type) and issubclass(owner, enum.Enum):
        return owner(value)  # our own class coming back
    if isinstance(owner, (type, types.ModuleType)):
        raise DecodeError("bad enum class")
    key = ("en", id(owner), base, value)
    member = STANDINS.get(key, owner)
    if member is None:
        member = _en_class(owner, base, _checked_kinds(x[4]))(value)
        member._coderl_name = x[2]
        STANDINS.put(key, member, owner)
    return member


def _en_class(owner, base, kinds):
    key = ("enc", id(owner), base)
    cls = STANDINS.get(key, owner)
    if cls is not None:
        return cls
    body = {"_coderl_en_of": owner, "_coderl_en_base": base, "_coderl_en_kinds": dict(kinds),
            "name": property(lambda self: self._coderl_name),
            "value": property(lambda self: _mixin_value(base, self)),
            "__str__": lambda self: _peer_attr(owner, "__str__")(self),
            "__repr__": lambda self: _peer_attr(owner, "__repr__")(self),
            "__format__": lambda self, spec: _peer_attr(owner, "__format__")(self, spec)}
    for attr, kind in kinds.items():
        if not hasattr(base, attr) and attr not in body:
            body[attr] = _standin_attr(owner, attr, kind)
    return STANDINS.put(key, type(str(getattr(owner, "_coderl_n", "") or "Enum"), (base,), body), owner)


def _members():
    import enum
    return (enum.IntEnum("Level", "LOW HIGH").HIGH, enum.Enum("Colour", {"RED": "r"}, type=str).RED)


# Its examples cross with their classes (an encoder that sends classes, a peer that answers for them).
register(Codec("enum", ("en",), (), _enc_member, _dec_member, claims=_is_member, order=60, examples=_members))

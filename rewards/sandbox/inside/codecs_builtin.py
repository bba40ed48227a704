"""Codecs of the builtin types: containers, bytes, numbers beyond JSON's, range, slice, subclasses of the
builtin types (they cross as their base value) and exception instances (codec.py has the registry)."""

from . import codec, setorder
from .codec import Codec, DecodeError, register, text

# ------------------------------------------------------------------------------------------- containers


register(Codec("list", ("l",), (list,), lambda obj, t, enc, depth: enc.seq("l", obj, depth),
               lambda x, dec, depth: dec.items(x, 1, depth),
               examples=([], [1, "a", None, 2.5, True], [[1, [2, [3]]], {"k": (1,)}])))
register(Codec("tuple", ("t",), (tuple,), lambda obj, t, enc, depth: enc.seq("t", obj, depth),
               lambda x, dec, depth: tuple(dec.items(x, 1, depth)),
               examples=((), (1,), (1, ("a", b"b"), [3]))))
register(Codec("dict", ("d",), (dict,), lambda obj, t, enc, depth: enc.pairs("d", obj.items(), depth),
               lambda x, dec, depth: dict(dec.pairs(x, 1, depth)),
               examples=({}, {"b": 1, "a": 2}, {(1, 2): [3], 4: {"x": None}})))
# A set is rebuilt so that it iterates in the sender's order (setorder.py): the program sees what the test
# built, as in plain Python where it is the same object. "so" carries the sender's table size, when adds alone
# would not give it (a set that shrank, one built from a literal).


def _enc_set(obj, t, enc, depth):
    size = setorder.hint(obj)
    if size is None:
        return enc.seq("s", obj, depth)
    out = enc.seq("so", obj, depth)
    out.insert(1, size)
    return out


def _dec_set(x, dec, depth):
    if x[0] == "s":
        return setorder.rebuild(set, dec.items(x, 1, depth))
    return setorder.rebuild(set, dec.items(x, 2, depth), codec.integer(x[1]))


def _shrunk():
    s = set(range(100))
    for i in range(95):
        s.discard(i)
    return s


register(Codec("set", ("s", "so"), (set,), _enc_set, _dec_set,
               examples=lambda: (set(), {1, 2, 3}, {"a", (1, 2), frozenset({3})}, set(range(100, 0, -7)), _shrunk(),
                                 {8, 16, 0, 24, 3})))
register(Codec("frozenset", ("fs",), (frozenset,), lambda obj, t, enc, depth: enc.seq("fs", obj, depth),
               lambda x, dec, depth: setorder.rebuild(frozenset, dec.items(x, 1, depth)),
               examples=(frozenset(), frozenset({8, 16, 0, 24}), frozenset({"x", "y"}))))

# ------------------------------------------------------------------------------------------- bytes, numbers


def _latin1(x, dec, depth):
    return text(x[1]).encode("latin-1")


register(Codec("bytes", ("b",), (bytes,), lambda obj, t, enc, depth: ["b", obj.decode("latin-1")], _latin1,
               examples=(b"", b"\x00\xffabc")))
register(Codec("bytearray", ("ba",), (bytearray,), lambda obj, t, enc, depth: ["ba", bytes(obj).decode("latin-1")],
               lambda x, dec, depth: bytearray(_latin1(x, dec, depth)), examples=(bytearray(b"\x01x"),)))
# An int wider than BIG_INT_BITS (the driver sends the others as JSON numbers).
register(Codec("bigint", ("i",), (), None, lambda x, dec, depth: int(text(x[1]), 16),
               examples=(1 << 5000, -(1 << 4097) + 3)))


def _complex(x, dec, depth):
    if len(x) != 3 or type(x[1]) not in (int, float) or type(x[2]) not in (int, float):
        raise DecodeError("bad complex")
    return complex(x[1], x[2])


register(Codec("complex", ("c",), (complex,), lambda obj, t, enc, depth: ["c", obj.real, obj.imag], _complex,
               examples=(1 + 2j, complex(0, -0.5))))
register(Codec("range", ("rg",), (range,), lambda obj, t, enc, depth: ["rg", obj.start, obj.stop, obj.step],
               lambda x, dec, depth: range(codec.integer(x[1]), codec.integer(x[2]), codec.integer(x[3])),
               examples=(range(0), range(2, 20, 3))))


def _slice(x, dec, depth):
    if len(x) != 4:
        raise DecodeError("bad slice")
    return slice(*(dec.value(v, depth + 1) for v in x[1:]))


# obj[1:3] on a sequence class of the program: its bounds are data like any other
register(Codec("slice", ("sl",), (slice,),
               lambda obj, t, enc, depth: ["sl", *(enc.item(v, depth + 1) for v in (obj.start, obj.stop, obj.step))],
               _slice, examples=(slice(1, 3), slice(None, None, -1))))

# ------------------------------------------------------------------------------------------- subclasses


_BASES = ((int, None), (float, None), (str, None), (bytes, None), (list, "l"), (tuple, "t"),
          (dict, "d"), (set, "s"), (frozenset, "fs"))


def _base_value(obj, t, enc, depth):
    """A subclass of a builtin type as its base value (never its class's __str__ / __iter__)."""
    for base, tag in _BASES:
        if isinstance(obj, base):
            if base is int:
                v = int(obj)
                return v if v.bit_length() <= codec.BIG_INT_BITS else ["i", hex(v)]
            if base is str:
                return str.__str__(obj)
            if base is float:
                return float(obj)
            if base is bytes:
                return ["b", bytes(obj).decode("latin-1")]
            if base is dict:
                return enc.pairs("d", dict.items(obj), depth)
            return enc.seq(tag, list(base.__iter__(obj)), depth)
    return None


class _Num(int):
    pass


register(Codec("builtin-subclass", (), (), _base_value, None, order=90,
               claims=lambda obj, t: isinstance(obj, (int, float, str, bytes, list, tuple, dict, set, frozenset)),
               examples=(codec.Becomes((_Num(7), 7)), codec.Becomes((type("S", (str,), {})("ab"), "ab")))))

# ------------------------------------------------------------------------------------------- exceptions

_CHAIN = 4  # links of an exception's __cause__ / __context__ chain that cross with it


def encode_exception(exc, enc, depth=0, chain=0):
    """{"cls": class, "args": [...], "str": text, "attrs": [k, v, ...]} of an exception instance, with its
    "cause" / "context" (`raise ... from e`, or raised while handling another) and "suppress" (`from`)."""
    desc = _describe(exc, enc, depth)
    if chain < _CHAIN:
        for key, linked in (("cause", exc.__cause__), ("context", exc.__context__)):
            if isinstance(linked, BaseException):
                desc[key] = "cause" if key == "context" and linked is exc.__cause__ else \
                    encode_exception(linked, enc, depth + 1, chain + 1)
    if exc.__suppress_context__:
        desc["suppress"] = True
    return desc


def _describe(exc, enc, depth):
    try:
        args = [enc.item(a, depth + 1) for a in exc.args]
    except Exception:
        args = None
    try:
        txt = str(exc)[:2000]
    except Exception:
        txt = ""
    attrs = []
    for k, v in list(getattr(exc, "__dict__", {}).items())[:32]:
        if isinstance(k, str) and not k.startswith("_"):
            try:
                attrs += [k, enc.item(v, depth + 1)]
            except Exception:
                pass
    return {"cls": enc.export(type(exc)), "args": args, "str": txt, "attrs": attrs}


def build_exception(desc, dec, depth=0):
    """A genuine exception instance from encode_exception()'s description (its class resolved by the decoder)."""
    if type(desc) is not dict:
        raise DecodeError("bad exception")
    cls = dec.resolve(desc.get("cls")) if type(desc.get("cls")) is list else None
    if not (isinstance(cls, type) and issubclass(cls, BaseException)):
        raise DecodeError("exception class is not an exception")
    raw = desc.get("args")
    args = tuple(dec.value(a, depth + 1) for a in raw) if type(raw) is list else (desc.get("str") or "",)
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
                    setattr(exc, attrs[i], dec.value(attrs[i + 1], depth + 1))
                except Exception:
                    pass
    if depth <= codec.MAX_DEPTH:
        cause = desc.get("cause")
        if type(cause) is dict:
            exc.__cause__ = build_exception(cause, dec, depth + 1)
        context = desc.get("context")
        if context == "cause":
            exc.__context__ = exc.__cause__
        elif type(context) is dict:
            exc.__context__ = build_exception(context, dec, depth + 1)
        exc.__suppress_context__ = desc.get("suppress") is True
    return exc


def _chained():
    try:
        try:
            raise KeyError("inner")
        except KeyError as e:
            raise ValueError("outer", 3) from e
    except ValueError as e:
        return e


register(Codec("exception", ("e",), (), lambda obj, t, enc, depth: ["e", encode_exception(obj, enc, depth)],
               lambda x, dec, depth: build_exception(x[1], dec, depth), order=10,
               claims=lambda obj, t: isinstance(obj, BaseException),
               examples=(ValueError("bad", 2), _chained())))

"""The value codec's driver and registry: a value crosses as a JSON-able tree; each type family is one codec
(codecs_builtin.py, codecs_std.py, codecs_class.py) registered with its tag(s), the types it serves, encode and
decode. The driver owns what every value shares: depth, cycles, handles and references.

A codec serves exact types through a dict (the common case: one lookup), and may also claim objects by a
predicate (subclasses, types of modules imported lazily); predicates are tried in ascending `order`, which
keeps the precedence that decides what a value that is two things at once crosses as (an IntEnum member is an
enum before it is an int). Anything no codec claims goes through the caller's export(obj): a handle
(``["h", id, info]``: an object of the sender; ``["y", id]``: an object of the receiver coming back) or a
reference (``["R", module, qualname]``: a builtin or standard-library object), which decode hands back to
the caller's resolve(tree).

The decoder is the trusting side's defence: it accepts only registered tags, each codec checks its shapes,
the driver bounds the depth, and anything else raises DecodeError. stdlib only: this runs inside the sandbox.
"""

MAX_DEPTH = 500  # nesting a value may have (a test's 300-deep list); deeper parts stay handles
# Python frames encode()/decode() use per level of nesting, with room: whoever (de)codes a value raises its
# recursion limit to this while it does (candidate.py, judge.py), whatever limit the program set for itself.
RECURSION_ROOM = 5 * MAX_DEPTH + 1000
BIG_INT_BITS = 4096  # beyond this an int travels as hex: int <-> decimal text is capped at 4300 digits
BIG_INT = 1 << BIG_INT_BITS
HANDLE_TAGS = frozenset({"h", "y", "R"})  # the caller's: resolve(tree) maps them


class DecodeError(ValueError):
    """The peer sent something that is not a value of this format."""


class Unencodable(TypeError):
    """This side cannot send the value (the judge refuses to hand out its internals)."""


class Becomes(tuple):
    """An example whose round trip is another value: (value sent, value received)."""


class Codec:
    """One type family: tags it decodes, exact types it encodes, an optional predicate for the rest.

    encode(obj, t, enc, depth) -> tree (or None: not this codec's after all, the next one is asked);
    decode(tree, dec, depth) -> value, where tree[0] is one of tags; examples: values that must round-trip
    (Becomes(sent, received) where what arrives is another value), or a function returning them."""

    __slots__ = ("name", "tags", "types", "encode", "decode", "claims", "order", "examples")

    def __init__(self, name, tags, types, encode, decode, claims=None, order=None, examples=()):
        self.name, self.tags, self.types = name, tuple(tags), tuple(types)
        self.encode, self.decode, self.claims, self.order = encode, decode, claims, order
        self.examples = examples


CODECS = []  # registration order
_EXACT = {}  # type -> codec
_CLAIMS = []  # codecs with a predicate, by order
_DECODERS = dict.fromkeys(HANDLE_TAGS, lambda x, dec, depth: dec.resolve(x))  # tag -> decode


def register(codec):
    """Add codec to the registry (a tag or an exact type served twice is a bug: it raises)."""
    for tag in codec.tags:
        if tag in _DECODERS:
            raise ValueError(f"tag {tag!r} registered twice")
        _DECODERS[tag] = codec.decode
    for t in codec.types:
        if t in _EXACT:
            raise ValueError(f"type {t.__name__} registered twice")
        _EXACT[t] = codec
    if codec.claims is not None:
        _CLAIMS.append(codec)
        _CLAIMS.sort(key=lambda c: c.order)
    CODECS.append(codec)
    return codec


def tags():
    """Every tag a value may carry (the registry's, plus the handle and reference tags)."""
    return frozenset(_DECODERS)


# ------------------------------------------------------------------------------------------- encode

_FLAT = frozenset({str, float, bool, type(None)})


class Encoder:
    """One encoding: the sender's export(obj) for what does not cross by value, and its options.

    send_classes: a namedtuple or enum member of a class with behaviour crosses with its class (a handle,
    codecs_class.py); only the candidate sends its classes (the judge sends back the stand-ins it made)."""

    __slots__ = ("export", "send_classes", "path")

    def __init__(self, export, send_classes=False):
        self.export, self.send_classes, self.path = export, send_classes, set()

    def item(self, obj, depth):
        """obj as a JSON-able tree; objects that are not plain data go through export(obj)."""
        t = type(obj)
        if t is str or t is bool or t is float or obj is None:
            return obj
        if t is int:
            return obj if obj.bit_length() <= BIG_INT_BITS else ["i", hex(obj)]
        if depth > MAX_DEPTH:
            return self.export(obj)
        path, key = self.path, id(obj)
        if key in path:  # a container holding itself cannot travel by value
            return self.export(obj)
        path.add(key)
        try:
            codec = _EXACT.get(t)
            if codec is not None:
                out = codec.encode(obj, t, self, depth)
                if out is not None:
                    return out
            for codec in _CLAIMS:
                if codec.claims(obj, t):
                    out = codec.encode(obj, t, self, depth)
                    if out is not None:
                        return out
            return self.export(obj)
        finally:
            path.discard(key)

    def seq(self, tag, items, depth):
        """[tag, *items]; items that are JSON scalars already are taken as they are."""
        flat = _FLAT
        if all((t := type(v)) in flat or (t is int and -BIG_INT < v < BIG_INT) for v in items):
            return [tag, *items]
        item = self.item
        return [tag, *(item(v, depth + 1) for v in items)]

    def pairs(self, tag, pairs, depth, head=()):
        """[tag, *head, k1, v1, k2, v2, ...]."""
        out, item = [tag, *head], self.item
        for k, v in pairs:
            out.append(item(k, depth + 1))
            out.append(item(v, depth + 1))
        return out


def encode(obj, export, depth=0, *, send_classes=False):
    """obj as a JSON-able tree; objects that are not plain data go through export(obj)."""
    return Encoder(export, send_classes).item(obj, depth)


# ------------------------------------------------------------------------------------------- decode

_PLAIN_JSON = frozenset({str, int, float, bool, type(None)})


class Decoder:
    """One decoding: the receiver's resolve(tree) for handles and references."""

    __slots__ = ("resolve",)

    def __init__(self, resolve):
        self.resolve = resolve

    def value(self, x, depth):
        t = type(x)
        if t is str or t is int or t is float or t is bool or x is None:
            return x
        if t is not list or not x or type(x[0]) is not str:
            raise DecodeError(f"not a value: {t.__name__}")
        if depth > MAX_DEPTH + 2:
            raise DecodeError("value nested too deeply")
        tag = x[0]
        try:
            fn = _DECODERS.get(tag)
            if fn is None:
                raise DecodeError(f"unknown tag {tag!r}")
            return fn(x, self, depth)
        except (DecodeError, RecursionError):
            raise
        except Exception as e:  # whatever a constructor raised (Fraction(1, 0): ZeroDivisionError, a StopIteration)
            # is the tree's fault, never an exception of the program's or the test's: one a forged value raised in
            # the judge reached the test as itself (assertRaises(ZeroDivisionError) passed; red team r28)
            raise DecodeError(f"bad {tag!r} value: {type(e).__name__}: {e}") from None

    def items(self, x, start, depth):
        """x[start:] decoded (JSON scalars are values already)."""
        items = x[start:]
        if all(type(v) in _PLAIN_JSON for v in items):
            return items
        value = self.value
        return [value(v, depth + 1) for v in items]

    def pairs(self, x, start, depth):
        """[(k, v), ...] from x[start:] = k1, v1, k2, v2, ..."""
        if (len(x) - start) % 2:
            raise DecodeError("odd mapping")
        value = self.value
        return [(value(x[i], depth + 1), value(x[i + 1], depth + 1)) for i in range(start, len(x), 2)]


def decode(x, resolve, depth=0):
    """The value a tree from encode() stands for; handles and references go through resolve(tree)."""
    return Decoder(resolve).value(x, depth)


def text(v):
    if type(v) is not str:
        raise DecodeError("expected text")
    return v


def integer(v):
    if type(v) is not int:
        raise DecodeError("expected an int")
    return v

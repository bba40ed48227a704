"""Plain data across the judge/candidate channel: values are encoded as JSON-able trees and rebuilt by the
receiver from its own genuine types, so a value nobody can lie about arrives.

What crosses by value is what the codecs serve (codec.py, the registry; codecs_builtin.py, codecs_std.py,
codecs_class.py): None, bool, int, float, complex, str, bytes, bytearray, list, tuple, dict, set, frozenset,
namedtuples, enum members with a builtin mixin, the collections containers, MappingProxyType, range, slice,
Decimal, Fraction, SimpleNamespace, pathlib paths, date/time/datetime/timedelta and exception instances. A
subclass of a builtin type crosses as its base value. Anything else is left where it lives and crosses as a
handle, or as a reference (``["R", module, qualname]``) when it is a builtin or standard-library object.

This module is what the judge and the candidate use: the codec API, references, and the containers both sides
may hold (MUTABLE, write_back). stdlib only: it runs inside the sandbox.
"""

import collections
import sys
import types

from . import codec, codecs_builtin, codecs_class, codecs_std, setorder  # noqa: F401  (the codecs register)
from .codec import MAX_DEPTH, RECURSION_ROOM, DecodeError, Encoder, Unencodable, decode, encode  # noqa: F401

# Builtin types that cross by name (["R", "builtins", name]).
BUILTIN_TYPES = frozenset({list, int, set, dict, str, float, tuple, frozenset, bytes, bool, complex, bytearray,
                           object, type(None)})


def encode_exception(exc, export, *, send_classes=False):
    """{"cls": class, "args": [...], "str": text, "attrs": [k, v, ...], "cause"/"context"/"suppress"} of exc."""
    return codecs_builtin.encode_exception(exc, Encoder(export, send_classes))


def build_exception(desc, resolve):
    """A genuine exception instance from encode_exception()'s description (its class resolved by `resolve`)."""
    return codecs_builtin.build_exception(desc, codec.Decoder(resolve))


# ------------------------------------------------------------------------------------------- references

# What a bound method is bound to when it can be named: a module (`random.random`, bound to the module's
# Random instance, is found by its name in the module) or a class (`datetime.now`, `dict.fromkeys`).
_BOUND = (types.BuiltinMethodType, types.MethodType)


def stdlib_ref(obj):
    """["R", module, qualname] when obj is reachable by that name in a builtin or standard-library module (for
    a bound method: a name that gives an equal one, `datetime.datetime.now`)."""
    try:
        mod = getattr(obj, "__module__", None) or getattr(getattr(obj, "__objclass__", None), "__module__", None)
        qual = getattr(obj, "__qualname__", None)
    except Exception:
        return None
    if type(obj) in _BOUND:
        return _bound_ref(obj, mod, qual)
    return _named(obj, mod, qual)


def _named(obj, mod, qual, equal=False):
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
    if target is obj or (equal and type(target) is type(obj) and target.__self__ is obj.__self__ and target == obj):
        return ["R", mod, qual]
    return None


def _bound_ref(obj, mod, qual):
    try:
        owner, name = obj.__self__, obj.__name__
    except Exception:
        return None
    if not isinstance(name, str):
        return None
    if isinstance(owner, types.ModuleType):  # a builtin module's function: time.time, math.sqrt
        return _named(obj, owner.__name__, name)
    if isinstance(owner, type):  # a classmethod of a standard-library class: datetime.now, dict.fromkeys
        ref = stdlib_ref(owner)
        return None if ref is None else _named(obj, ref[1], f"{ref[2]}.{name}", equal=True)
    # bound to an instance the module of its class holds under the method's own name: random.random
    mod = mod or getattr(type(owner), "__module__", None)
    module = sys.modules.get(mod) if isinstance(mod, str) else None
    if isinstance(module, types.ModuleType) and vars(module).get(name) is obj:
        return _named(obj, mod, name)
    return None


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


# ------------------------------------------------------------------------------------------- shared containers

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
    elif t is set:  # in the other side's order (setorder.py)
        target.clear()
        target.update(state)
        if list(target) != list(state):
            target.clear()
            setorder.refill(target, list(state), setorder.table_size(state))
    elif t in MUTABLE:  # dict and the collections mappings
        target.clear()
        target.update(state)

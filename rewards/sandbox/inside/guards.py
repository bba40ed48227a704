"""What of the test's objects the program may have, and what it may do with them: the judge's guards.

A test hands the program callbacks, iterators, streams, mocks and its own instances (_exportable decides which
and as what kind); the program may read and set their data, never a check the test will run or a record it
will read as its own (_may_set, _holds_mock, _write_back); references from the program name data only, among
the modules the judge has loaded (_known, _accepted_ref). stdlib only: runs inside the sandbox (the judge).
"""

import collections
import inspect
import io
import operator
import sys
import types
import unittest
import unittest.mock

from . import wire
from .protocol import EXPORT_CALL, EXPORT_ITERATOR, EXPORT_OBJECT, EXPORT_STREAM
from .proxy import _loaded

_FILENAMES = ("<test", "<check", "<setup")  # code compiled from a label: the only code whose objects cross
_ITER_TYPES = frozenset(type(x) for x in (
    iter([]), iter(()), iter({}), iter(set()), iter(""), iter(b""), iter(range(0)), iter({}.values()),
    iter({}.items()), map(abs, []), filter(None, []), zip(), enumerate([]), reversed([]), (x for x in ()),
    reversed({}), reversed({}.values()), reversed({}.items()), reversed(()), reversed(range(0))))
_VIEW_TYPES = frozenset(type(v) for v in ({}.keys(), {}.values(), {}.items()))


_NOTHING = object()
# Test-made callables that only read what they are given (sorted(xs, key=itemgetter(1))).
_ACCESSORS = (operator.itemgetter, operator.attrgetter, operator.methodcaller)


class _Exported:
    """What the test patched (print, input: "call"; sys.stdin: "stream") wrapped for one call of the program."""

    __slots__ = ("target", "kind")
    # What the program may do with a stream of the test (sys.stdin it set, a StringIO or file it passes).
    STREAM_METHODS = frozenset({"read", "readline", "readlines", "write", "writelines", "seek", "tell",
                                "getvalue", "truncate", "flush", "close", "readable", "writable", "seekable"})
    STREAM_DATA = frozenset({"closed", "name", "mode", "encoding", "newlines"})

    def __init__(self, target, kind):
        self.target, self.kind = target, kind


def _may_set(obj, name, raw):
    """What the program may set on an object of the test: its data, never what the test will run or read as
    its own record — a method or property of its class (a check the test calls), a callable it holds, a mock it
    holds (alone or in a container: its calls are the test's record), and of a Mock its machinery
    (assert_called_with, call_count, return_value, side_effect, ...), the records a Mock keeps as plain
    attributes (method_calls), its children, or anything but plain data without attributes of its own naming
    (a SimpleNamespace(called=True) standing where the test reads a child's `m.send.called`)."""
    try:
        current = inspect.getattr_static(obj, name)
    except AttributeError:
        current = _NOTHING
    if isinstance(current, property):  # a setter the test wrote decides what the value does
        if current.fset is None or not _from_tests(getattr(current.fset, "__code__", None)):
            return False
    elif current is not _NOTHING and (callable(current) or hasattr(type(current), "__get__") or
                                       _holds_mock(current)):
        return False
    if isinstance(obj, unittest.mock.NonCallableMock):
        return name not in _MOCK_OWN and name not in obj.__dict__.get("_mock_children", ()) and \
            _plain(raw, _NAMED)
    return True


# What a Mock puts in its own __dict__ besides its private _mock_* state: records of its calls (method_calls).
_MOCK_OWN = frozenset(k for cls in (unittest.mock.NonCallableMagicMock, unittest.mock.MagicMock,
                                    unittest.mock.AsyncMock) for k in vars(cls()) if not k.startswith("_"))
# Plain data whose attributes have names the program chooses (a child mock's records, impersonated).
_NAMED = ("sn", "nt")


def _holds_mock(value, depth=0):
    """value is a mock of the test's, or a builtin container holding one (a list of handlers)."""
    if isinstance(value, unittest.mock.NonCallableMock):
        return True
    t = type(value)
    if depth > 8 or t not in (list, tuple, set, frozenset, dict, collections.deque):
        return False
    return any(_holds_mock(v, depth + 1) for v in (value.values() if t is dict else value))


def _write_back(target, state, same_rows=None):
    """wire.write_back, except that a container holding the test's mocks never takes data with attributes of the
    program's naming: a SimpleNamespace(called=True) in a mock's place would answer the test's
    `handlers[0].called`."""
    if not (_holds_mock(target) and _named(state)):
        wire.write_back(target, state, same_rows)


def _named(value, depth=0):
    """value is, or holds, plain data whose attributes have names the program chose (SimpleNamespace,
    namedtuple)."""
    t = type(value)
    if t is types.SimpleNamespace or isinstance(value, tuple) and hasattr(t, "_fields") or \
            "_coderl_en_of" in t.__dict__:  # an enum member's stand-in answers attributes the program names
        return True
    if depth > 8 or t not in (list, tuple, set, frozenset, dict, collections.deque):
        return False
    return any(_named(v, depth + 1) for v in (value.values() if t is dict else value))


def _plain(x, refused=()):
    """An encoded value holds only data: no object of either side, no reference (nor a tag in `refused`)."""
    if type(x) is dict:
        return False
    if type(x) is not list:
        return True
    return bool(x) and x[0] not in ("h", "y", "R", "e") and x[0] not in refused and \
        all(_plain(v, refused) for v in x[1:])


def _known(ref, kind):
    """The judge's own module or exception class a handle's reference hint names, or None (the handle then
    stands for the program's object: a proxy, or a class rebuilt from its name and bases)."""
    if type(ref) is not list or len(ref) != 2 or kind not in ("mod", "exc"):
        return None
    try:
        obj = _loaded(*ref)
    except wire.DecodeError:
        return None
    if not _accepted_ref(obj) or isinstance(obj, types.ModuleType) != (kind == "mod"):
        return None
    return obj


def _accepted_ref(obj):
    """References from the candidate may name data, never behaviour the judge would run for it: stdlib
    modules (the judge's own), exception classes (outside unittest) and the builtin types."""
    if isinstance(obj, types.ModuleType):
        return True
    if isinstance(obj, type) and issubclass(obj, BaseException):
        return not obj.__module__.startswith("unittest") and not issubclass(obj, unittest.SkipTest)
    return obj in wire.BUILTIN_TYPES


def _from_tests(code):
    return isinstance(code, types.CodeType) and code.co_filename.startswith(_FILENAMES)


# Methods of builtin types bound to an object of the test (a module's or a class's cross as references).
_BOUND_BUILTINS = (types.BuiltinMethodType, types.MethodWrapperType)
# The modules whose objects a bound method may be of, to be called for the program: data (a str, a list, a
# Counter, a seeded Random, a date), never a stream, socket, process or anything else of this process.
_DATA_MODULES = frozenset({"builtins", "collections", "random", "datetime", "decimal", "fractions", "re", "array"})


def _data_owner(owner):
    """True when owner is data whose bound methods the program may call (on the test's object)."""
    return not isinstance(owner, (type, types.ModuleType)) and getattr(type(owner), "__module__", None) in _DATA_MODULES


def _exportable(obj):
    """What the candidate may do with an object of the test (None: it cannot have it)."""
    t = type(obj)
    if t is _Exported:
        return obj.kind
    if t is types.FunctionType:
        return EXPORT_CALL if _from_tests(obj.__code__) else None
    if t is types.MethodType:
        if _from_tests(getattr(obj.__func__, "__code__", None)):
            # a test's own method, of one of its objects or of the TestCase (`lib.on_add(self.handler)`): only
            # called, as a function of the test is; the TestCase itself never crosses
            owner = obj.__self__
            return EXPORT_CALL if _exportable(owner) == EXPORT_OBJECT or isinstance(owner, unittest.TestCase) else None
        # a standard-library method bound to the test's data (random.Random(3).randint, counter.most_common)
        return EXPORT_CALL if _data_owner(obj.__self__) else None
    if t is types.GeneratorType:  # the test's own, or mock_open()'s (a program's `for line in f`)
        code = obj.gi_code
        return EXPORT_ITERATOR if _from_tests(code) or code.co_filename == unittest.mock.__file__ else None
    if t in _ITER_TYPES or getattr(t, "__module__", None) == "itertools":  # itertools.count() and the like
        return EXPORT_ITERATOR
    if t in _VIEW_TYPES:  # f(d.items()): len, iteration and `in` as on the view
        return EXPORT_OBJECT
    if t in _ACCESSORS:
        return EXPORT_CALL
    if t in _BOUND_BUILTINS:  # 'abc'.upper, acc.append in the test's data: calls run on the test's object
        return EXPORT_CALL if _data_owner(obj.__self__) else None
    if isinstance(obj, io.IOBase):  # a StringIO or file the test passes (csv.reader(f), json.load(f))
        # never this process's own standard streams (its stderr is the worker's)
        return None if any(obj is s for s in (sys.__stdin__, sys.__stdout__, sys.__stderr__)) else EXPORT_STREAM
    if isinstance(obj, unittest.mock.NonCallableMock):  # a Mock the test hands over or patches in (mock_open)
        return EXPORT_OBJECT
    if isinstance(obj, (type, types.ModuleType, BaseException, unittest.TestCase)):
        return None
    if t is object:  # a bare sentinel (`MISSING = object()`): no state, identity its only behaviour
        return EXPORT_OBJECT
    module = getattr(t, "__module__", "")
    if isinstance(module, str) and module.startswith(("test_module_", "__check__")):
        return EXPORT_OBJECT
    return None

"""inside/proxy.py: what a proxy of the program's object decides itself, and what it refuses to decide."""

from __future__ import annotations

import socket
import sys

import pytest

from coderl.rewards.sandbox.inside import protocol, proxy, session, wire


@pytest.fixture
def judge():
    a, b = socket.socketpair()
    with a, b:
        yield session.Session(a.fileno(), 1 << 20, 400)


def _proxy(judge, cid, **info):
    return judge._proxy(cid, {protocol.INFO_KIND: protocol.KIND_OBJECT, protocol.INFO_CAPS: [], **info})


def test_identity_decides_only_for_a_class_that_keeps_objects_equality(judge):
    a, b = _proxy(judge, 1, eq=1, ord=1), _proxy(judge, 2, eq=1, ord=1)
    assert a == a and a != b and not (a == b) and a in [b, a]
    assert judge.taint is None
    c = _proxy(judge, 3)  # a class with its own __eq__: the program would decide
    with pytest.raises(proxy.Unjudgeable):
        c == 1  # noqa: B015
    assert judge.taint[0] == "unsupported"


def test_arithmetic_with_a_test_value_is_unjudgeable(judge):
    p = _proxy(judge, 1, **{protocol.INFO_CAPS: ["__add__", "__radd__"]})
    with pytest.raises(proxy.Unjudgeable):
        p + 1  # noqa: B018
    with pytest.raises(proxy.Unjudgeable):
        1 + p  # noqa: B018


def test_a_subclass_of_a_program_class_is_refused(judge):
    base = judge._proxy(5, {protocol.INFO_KIND: protocol.KIND_CLASS, protocol.INFO_CAPS: ["__call__"]})
    with pytest.raises(proxy.Unjudgeable):
        class T(base):  # noqa: F841 - a test class deriving from the program's
            pass


def test_references_resolve_among_loaded_modules_only_and_never_import():
    assert proxy._loaded("collections", "OrderedDict") is sys.modules["collections"].OrderedDict
    for mod, qual in (("coderl_not_a_module", ""), ("os", "no_such_name"), ("numpy", "")):
        with pytest.raises(wire.DecodeError):
            proxy._loaded(mod, qual)
    assert "coderl_not_a_module" not in sys.modules


def test_a_described_class_outside_the_standard_library_is_only_a_name():
    name, real = proxy._class_of(["R", "pytest", "Module"])
    assert real is None and name == "Module"
    assert proxy._class_of(["h", 3, {protocol.INFO_NAME: "Point"}]) == ("Point", None)

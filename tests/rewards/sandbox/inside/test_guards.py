"""inside/guards.py: what of the test's objects the program may have, and what it may change."""

from __future__ import annotations

import io
import sys
from unittest import mock

from coderl.rewards.sandbox.inside import guards, protocol


def _from_test_code(src):
    ns = {}
    exec(compile(src, "<test module 0>", "exec"), ns)
    return ns


def test_the_program_gets_only_objects_of_the_tests_own_making():
    ns = _from_test_code("def key(x):\n    return -x\nclass Node:\n    pass\nnode = Node()\n")
    assert guards._exportable(ns["key"]) == protocol.EXPORT_CALL
    assert guards._exportable(lambda x: x) is None  # code not compiled from a label: the judge's own
    assert guards._exportable(io.StringIO("a")) == protocol.EXPORT_STREAM
    assert guards._exportable(sys.__stdout__) is None
    assert guards._exportable(iter([1])) == protocol.EXPORT_ITERATOR
    assert guards._exportable(mock.Mock()) == protocol.EXPORT_OBJECT
    assert guards._exportable(sys) is None and guards._exportable(ValueError("x")) is None


def test_the_program_sets_data_never_the_tests_checks_or_a_mocks_records():
    m = mock.Mock()
    assert not guards._may_set(m, "assert_called_once_with", ["s", "x"])
    assert not guards._may_set(m, "call_count", 3)
    assert not guards._may_set(m, "method_calls", [])
    assert guards._may_set(m, "colour", "red")
    assert not guards._may_set(m, "colour", ["sn", {"called": True}])  # a lookalike of a child's records
    ns = _from_test_code("class Box:\n    def check(self):\n        return True\n")
    assert not guards._may_set(ns["Box"](), "check", None) and guards._may_set(ns["Box"](), "size", 3)


def test_a_container_holding_the_tests_mocks_never_takes_lookalike_data():
    handlers = [mock.Mock()]
    guards._write_back(handlers, [__import__("types").SimpleNamespace(called=True)])
    assert isinstance(handlers[0], mock.Mock)
    xs = [1]
    guards._write_back(xs, [1, 2])
    assert xs == [1, 2]

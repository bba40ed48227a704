"""inside/ops.py: the candidate's side of each operation the judge may ask of a program's object."""

from __future__ import annotations

import asyncio

import pytest

from coderl.rewards.sandbox.inside import ops


def test_item_operations_and_arithmetic():
    xs = [3, 1]
    assert ops.run(xs, "getitem", [1]) == 1 and ops.run(xs, "len", []) == 2
    ops.run(xs, "setitem", [0, 9])
    ops.run(xs, "delitem", [1])
    assert xs == [9] and ops.run(2, "binop", ["pow", 10]) == 1024 and ops.run(-2, "abs", []) == 2
    assert ops.run(6, "binop", ["and_", 3]) == 2 and ops.run(2.567, "round", [1]) == 2.6
    assert ops.run(3.5, "format", [".2f"]) == "3.50" and ops.run(int, "isinstance", [True])


def test_generators_iterate_in_batches_and_take_sends():
    assert ops.run((x for x in "ab"), "nextn", [5]) == [["a", "b"], True]
    assert ops.run(iter(range(1000)), "nextn", [10_000])[0] == list(range(256))  # one request, bounded

    def running():
        total = 0
        while True:
            total += yield total
    g = running()
    next(g)
    assert ops.run(g, "send", [5]) == 5 and ops.run(g, "send", [2]) == 7
    with pytest.raises(ValueError):
        ops.run(iter([]), "send", [1])  # send on what is not a generator: no such operation


def test_context_managers_copies_and_coroutines():
    class CM:
        seen = None

        def __exit__(self, typ, value, tb):
            CM.seen = (typ, value)
            return False
    ops.run(CM(), "exit", [KeyError])
    assert CM.seen == (KeyError, None)  # the type of the exception in flight, never its value
    xs = [[1]]
    deep = ops.run(xs, "deepcopy", [])
    assert deep == xs and deep[0] is not xs[0] and ops.run(xs, "copy", [])[0] is xs[0]

    async def answer():
        await asyncio.sleep(0)
        return 42
    assert ops.run(answer(), "await", []) == 42


def test_an_unknown_operation_is_refused():
    with pytest.raises(ValueError, match="unknown operation"):
        ops.run([], "__class__", [])

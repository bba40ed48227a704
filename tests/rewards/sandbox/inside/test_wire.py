"""What rewards/sandbox/inside/wire.py adds to the codec: standard-library references (functions and bound
methods a test hands over) and the containers both sides hold (write_back keeps a set's order)."""

from __future__ import annotations

import collections
import datetime
import math
import random
import time

import pytest

from coderl.rewards.sandbox.inside import setorder, wire


def test_write_back_refills_a_set_in_the_other_sides_order():
    target = set(range(100))
    state = set(range(100))
    for i in range(95):
        state.discard(i)
    wire.write_back(target, set(state))
    assert target == state
    ordered = setorder.rebuild(set, list(state), setorder.hint(state))
    wire.write_back(target := {0}, ordered)
    assert list(target) == list(state)


@pytest.mark.parametrize("obj", [datetime.datetime.now, time.time, math.sqrt, random.random, random.choice,
                                 dict.fromkeys, int.from_bytes, collections.Counter.fromkeys, len, str.upper])
def test_a_standard_library_function_or_bound_method_is_a_reference(obj):
    ref = wire.stdlib_ref(obj)
    assert ref is not None and ref[0] == "R"
    assert wire.resolve_ref(ref[1], ref[2]) == obj


@pytest.mark.parametrize("obj", ["abc".upper, [].append, random.Random(3).random, (lambda: 0)])
def test_a_method_bound_to_an_instance_is_no_reference(obj):
    assert wire.stdlib_ref(obj) is None

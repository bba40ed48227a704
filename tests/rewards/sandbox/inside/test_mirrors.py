"""inside/mirrors.py: each kind of shared state crosses from the test to the program and back, without bubblewrap.

The judge's halves (capture, apply) run under the test's state, the candidate's (install, undo) under the
program's own, in one process one after the other, with the context and the report crossing as JSON as on
the channel: a real judge Session and a real candidate Server, no channel traffic.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import random
import socket
import subprocess
import sys
import types
from unittest import mock

import pytest

from coderl.rewards.sandbox.inside import candidate, mirrors, session, wire
from tests.support import REPO_ROOT


@pytest.fixture
def sides():
    # The judge's process has no loggers but the test's: the ones earlier tests of this process configured
    # (torch's, with handlers) would otherwise read as the test's own (mirrors.log_targets).
    a, b = socket.socketpair()
    with a, b, mock.patch.dict(logging.Logger.manager.loggerDict, clear=True):
        yield session.Session(a.fileno(), 1 << 20, 400), candidate.Server(types.ModuleType("solution"))


def _json(x):
    return json.loads(json.dumps(x))


def roundtrip(sides, test_state, program):
    """One request: captured under test_state, installed and undone around program(), applied under test_state.
    Returns (what the program saw, the context, the report)."""
    judge, server = sides
    judge.environ0 = dict(mirrors.environ_data())  # pytest sets PYTEST_CURRENT_TEST between setup and call
    with test_state():
        ctx = _json(mirrors.capture(judge))
    saved = mirrors.install(server, ctx)
    try:
        seen = program()
    finally:
        out = _json(mirrors.undo(server, saved))
    with test_state():
        mirrors.apply(judge, out, ctx, {})
    return seen, ctx, out


def test_the_registry_is_one_ordered_list_of_kinds():
    kinds = [type(m).__name__ for m in mirrors.MIRRORS]
    assert len(set(kinds)) == len(kinds) and all(isinstance(m, mirrors.Mirror) for m in mirrors.MIRRORS)
    # os.environ before the patched attributes (a patched os.environ is undone first); random's state set and
    # read with the real random module, never a test's mock of it.
    assert kinds.index("Environ") < kinds.index("Patches") and kinds.index("Random") < kinds.index("Patches")


def test_nothing_changed_nothing_crosses(sides):
    seen, ctx, out = roundtrip(sides, contextlib.nullcontext, lambda: None)
    assert ctx == {} and out is None


def test_redirected_stdout_receives_what_the_program_prints(sides):
    buf = io.StringIO()
    before = sys.stdout
    seen, ctx, out = roundtrip(sides, lambda: contextlib.redirect_stdout(buf), lambda: print("hi") or sys.stdout)
    assert ctx == {"stdout": True} and buf.getvalue() == "hi\n" and seen is not before and sys.stdout is before


def test_environ_argv_and_recursion_limit_reach_the_program_and_go_back(sides):
    env0, argv0, limit0 = dict(os.environ), list(sys.argv), sys.getrecursionlimit()

    @contextlib.contextmanager
    def state():
        with mock.patch.dict(os.environ, {"COLOR": "red"}), mock.patch.object(sys, "argv", ["prog", "-v"]):
            sys.setrecursionlimit(limit0 + 77)
            try:
                yield
            finally:
                sys.setrecursionlimit(limit0)

    seen, ctx, out = roundtrip(sides, state, lambda: (os.environ.get("COLOR"), list(sys.argv),
                                                      sys.getrecursionlimit()))
    assert seen == ("red", ["prog", "-v"], limit0 + 77)
    assert dict(os.environ) == env0 and sys.argv == argv0 and sys.getrecursionlimit() == limit0


def test_the_program_continues_the_tests_random_sequence_and_the_test_continues_the_programs(sides):
    judge, server = sides
    mirrors.RANDOM_SEEDED.add("seed")  # what stdlib_patches' random.seed wrapper records in the judge
    expected = random.Random(7)
    first, second = expected.random(), expected.random()
    judge_state = random.Random()

    @contextlib.contextmanager
    def test_state():  # the judge's random state, apart from the program's
        saved = random.getstate()
        random.setstate(judge_state.getstate())
        try:
            yield
        finally:
            judge_state.setstate(random.getstate())
            random.setstate(saved)

    with test_state():
        random.seed(7)
    random.seed(99)  # the program's own sequence
    seen, ctx, out = roundtrip(sides, test_state, random.random)
    assert seen == first and server.random_linked and "random" in out
    assert judge_state.random() == second  # the test's next draw continues after the program's
    mirrors.RANDOM_SEEDED.clear()


def test_a_container_both_sides_hold_is_written_back_in_place(sides):
    judge, server = sides
    theirs, ours = [1, 2], [1, 2]
    server.retained[-1] = [ours, server.enc(ours)]
    judge.tracked[-1], judge.synced[-1] = theirs, judge._state(theirs)
    seen, ctx, out = roundtrip(sides, contextlib.nullcontext, lambda: server.retained[-1][0].append(3))
    assert ctx == {"sync": []} and out["live"][0][0] == -1 and theirs == [1, 2, 3]
    ours = None  # the program lets go of it: released, no longer followed
    seen, ctx, out = roundtrip(sides, contextlib.nullcontext, lambda: None)
    assert out == {"released": [-1]} and -1 not in judge.tracked and -1 not in server.retained


def test_a_kind_that_fails_to_install_leaves_nothing_installed(sides):
    _, server = sides
    env0, argv0 = dict(os.environ), list(sys.argv)
    ctx = {"environ": server.enc({"X_MIRROR": "1"}), "stdout": True, "argv": ["?", "not a value"]}
    with pytest.raises(wire.DecodeError):  # argv cannot be decoded: environ and stdout, installed before it, are undone
        mirrors.install(server, ctx)
    assert dict(os.environ) == env0 and sys.argv == argv0 and not isinstance(sys.stdout, io.StringIO)


# The judge's own patches (which of the test's context managers are in effect) change the standard library of
# the process that makes them: they run in a fresh interpreter.
_TRACKED = """
import contextlib, io, json, logging, socket, sys, time, types, warnings
from unittest import mock
from coderl.rewards.sandbox.inside import candidate, mirrors, session, stdlib_patches
stdlib_patches.install()
a, b = socket.socketpair()
judge, server = session.Session(a.fileno(), 1 << 20, 400), candidate.Server(types.ModuleType("solution"))
def program():
    logging.getLogger("shop").warning("low stock %d", 3)
    warnings.warn("old", DeprecationWarning)
    return time.monotonic_ns
tc = __import__("unittest").TestCase()
with tc.assertLogs("shop") as logs, warnings.catch_warnings(record=True) as warned, \\
        mock.patch("time.monotonic_ns", 42):
    warnings.simplefilter("always")
    ctx = json.loads(json.dumps(mirrors.capture(judge)))
    saved = mirrors.install(server, ctx)
    try:
        seen = program()
    finally:
        out = json.loads(json.dumps(mirrors.undo(server, saved)))
    mirrors.apply(judge, out, ctx, {})
print(json.dumps([sorted(ctx), seen, logs.output, [str(w.message) for w in warned], time.monotonic_ns() != 42]))
"""


def test_patches_logs_and_warnings_of_the_test_reach_the_program():
    p = subprocess.run([sys.executable, "-c", _TRACKED], capture_output=True, text=True, timeout=60, cwd=REPO_ROOT)
    assert p.returncode == 0, p.stderr[-2000:]
    keys, seen, logged, warned, restored = json.loads(p.stdout.splitlines()[-1])
    assert keys == ["logs", "patches", "warnings"] and seen == 42 and restored
    assert logged == ["WARNING:shop:low stock 3"] and warned == ["old"]

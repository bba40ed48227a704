"""inside/session.py: how values and exceptions of the program become the judge's, without bubblewrap."""

from __future__ import annotations

import collections
import socket

import pytest

from coderl.rewards.sandbox.inside import session, wire
from coderl.rewards.sandbox.inside.proxy import ProgramStopIteration


@pytest.fixture
def judge():
    a, b = socket.socketpair()
    with a, b:
        yield session.Session(a.fileno(), 1 << 20, 400)


def test_references_from_the_program_name_data_never_behaviour(judge):
    assert judge.resolve(["R", "collections", ""]) is collections and judge.resolve(["R", "builtins", "int"]) is int
    assert judge.resolve(["R", "builtins", "ValueError"]) is ValueError
    for ref in (["R", "os", "system"], ["R", "builtins", "exec"], ["R", "collections", "OrderedDict"],
                ["R", "coderl_nowhere", "x"]):
        with pytest.raises(wire.DecodeError):
            judge.resolve(ref)


def test_a_stopiteration_of_a_call_never_ends_the_tests_loop(judge):
    desc = {"cls": ["R", "builtins", "StopIteration"], "args": None, "str": "done"}
    assert type(judge.exception(desc)) is ProgramStopIteration  # an Exception, but no RuntimeError nor StopIteration
    assert type(judge.exception(desc, stop=True)) is StopIteration  # next() may end an iteration


def test_the_programs_exception_class_is_rebuilt_from_its_name_and_bases(judge):
    handle = ["h", 7, {"k": "exc", "n": "InsufficientFunds", "b": [["R", "builtins", "ValueError"]]}]
    cls = judge.dec(handle)
    assert issubclass(cls, ValueError) and cls.__name__ == "InsufficientFunds" and judge.dec(handle) is cls


def test_an_unreadable_value_ends_the_job_as_an_error_never_a_pass(judge):
    with pytest.raises(session.CandidateGone):
        judge.dec(["?", 1])
    assert judge.taint[0] == "error"

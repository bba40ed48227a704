"""inside/session.py: how values and exceptions of the program become the judge's, without bubblewrap."""

from __future__ import annotations

import collections
import socket
import sys

import pytest

from coderl.rewards.sandbox.inside import session, wire
from coderl.rewards.sandbox.inside.proxy import ProgramStopIteration, Unjudgeable


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


class _Record:
    """A test's object handed to the program (kind "object")."""

    total = 0

    def __len__(self):
        return 2


def _served(judge, obj, kind, *request):
    judge.exports[1] = (obj, kind)
    reply = judge._serve([request[0], 1, *request[1:]])
    return reply[1] if reply[0] == "ok" else reply[1]["cls"][2]


def test_what_the_program_may_ask_of_each_kind_of_the_tests_objects(judge):
    rec = _Record()
    assert _served(judge, rec, "object", "get", "total") == 0
    assert _served(judge, rec, "object", "set", "total", 5) is None and rec.total == 5
    assert _served(judge, rec, "object", "set", "_secret", 5) == "TypeError"  # private names stay the test's
    assert _served(judge, rec, "object", "get", "_secret") == "AttributeError"  # as hasattr expects
    assert _served(judge, rec, "object", "op", "len") == 2
    assert _served(judge, iter([4, 5]), "iterator", "op", "next") == 4
    assert _served(judge, iter([4, 5]), "iterator", "op", "len") == "TypeError"
    assert _served(judge, len, "call", "call", [["l", 1, 2, 3]], {}) == 3
    assert _served(judge, len, "call", "set", "x", 1) == "TypeError"
    assert _served(judge, len, "call", "get", "__name__") == "len"  # functools.wraps reads it
    assert _served(judge, rec, "object", "del", "total") == "TypeError"  # a kind the program never asks
    def opaque(*args):
        return sys.__stdout__  # nothing of the test's that may cross

    patched = session._Exported(opaque, "call")  # what the test put in place of print
    assert _served(judge, patched, "call", "call", ["hi"], {}) is None and judge.taint is None
    assert _served(judge, patched, "call", "get", "__name__") == "TypeError"  # only ever called
    with pytest.raises(Unjudgeable):  # the test's own callable: what it returns must cross, or no verdict holds
        _served(judge, opaque, "call", "call", [], {})
    assert judge.taint[0] == "unsupported"

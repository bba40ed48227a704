"""rewards/sandbox/inside/verdicts.py: a test's status and detail from the exception that ended it."""

from __future__ import annotations

import pytest

from coderl.rewards.sandbox.inside import verdicts
from coderl.rewards.sandbox.inside.framing import Status
from coderl.rewards.sandbox.inside.proxy import CandidateGone, Unjudgeable


@pytest.mark.parametrize(("exc", "status"), [
    (MemoryError(), Status.MEMORY), (SystemExit(1), Status.KILLED), (KeyboardInterrupt(), Status.KILLED),
    (CandidateGone(), Status.KILLED), (Unjudgeable("opaque"), Status.UNSUPPORTED),
    (AssertionError("1 != 2"), Status.FAILED), (SyntaxError("bad"), Status.SYNTAX), (ZeroDivisionError(), Status.ERROR),
    (RecursionError(), Status.ERROR)])
def test_classify(exc, status):
    assert verdicts.classify(exc) is status


def test_excerpt_keeps_both_ends_within_the_limit():
    assert verdicts.excerpt("short", 100) == "short"
    cut = verdicts.excerpt("a" * 500 + "b" * 500, 100)
    assert cut.startswith("a" * 50) and cut.endswith("b" * 50) and "…" in cut and len(cut) <= 103


def test_describe_names_the_exception_and_prefers_the_programs_own_traceback():
    try:
        raise ValueError("no such value")
    except ValueError as e:
        exc = e
    assert verdicts.describe(exc, 300).endswith("ValueError: no such value")
    exc._coderl_tb = "Traceback (most recent call last):\n  the program's own\nValueError: no such value\n"
    assert verdicts.describe(exc, 300) == exc._coderl_tb.rstrip()
    assert len(verdicts.describe(ValueError("x" * 10_000), 200)) <= 203

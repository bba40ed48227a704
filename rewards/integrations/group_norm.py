"""The adaptive group norm of patches/0001 for trainers other than OpenRLHF 0.5.7 (TRL, verl).

Per group of one prompt's completions: adv = (r - mean) / (std + eps) where std >= std_threshold, else r - mean
(std is torch's unbiased std, statistics in fp32), as NaiveExperienceMaker.group_norm_rewards of the patch.
A near-uniform group is only centred: dividing by a tiny std would blow a meaningless difference up into a
full-size advantage. The metrics are the patch's: group_norm_fallback_frac (share of groups centred only) and
group_norm_all_equal_frac (share whose rewards are all equal), per step.
"""

from __future__ import annotations

from typing import NamedTuple

DEFAULT_STD_THRESHOLD = 0.1  # the patch's --group_norm_std_threshold default
DEFAULT_EPS = 1e-8  # the patch's --group_norm_eps default
FALLBACK_METRIC = "group_norm_fallback_frac"
ALL_EQUAL_METRIC = "group_norm_all_equal_frac"


class GroupNormStats(NamedTuple):
    fallback_frac: float
    all_equal_frac: float


def check_knobs(std_threshold: float, eps: float) -> None:
    """The patch's argument checks: both >= 0, not both 0 (a uniform group would be 0/0)."""
    if std_threshold < 0 or eps < 0:
        raise ValueError(f"group norm: std_threshold ({std_threshold}) and eps ({eps}) must be >= 0")
    if std_threshold == 0 and eps == 0:
        raise ValueError("group norm: std_threshold = eps = 0 divides a uniform group by 0")


def group_norm(groups, std_threshold: float = DEFAULT_STD_THRESHOLD, eps: float = DEFAULT_EPS):
    """(advantages, GroupNormStats) of a (n_groups, group_size) reward tensor; advantages fp32, same shape."""
    check_knobs(std_threshold, eps)
    if groups.dim() != 2 or groups.shape[1] < 2:
        raise ValueError(f"group norm needs (n_groups, group_size >= 2) rewards, got shape {tuple(groups.shape)}")
    groups = groups.float()
    mean = groups.mean(-1, keepdim=True)
    std = groups.std(-1, keepdim=True)
    use_std = std >= std_threshold
    adv = (groups - mean) / (std + eps)
    adv = adv.where(use_std, groups - mean)
    stats = GroupNormStats(fallback_frac=(~use_std).float().mean().item(),
                           all_equal_frac=(groups == groups[:, :1]).all(-1).float().mean().item())
    return adv, stats


def group_norm_flat(rewards, group_size: int, std_threshold: float = DEFAULT_STD_THRESHOLD, eps: float = DEFAULT_EPS):
    """group_norm of a flat reward vector whose groups are contiguous runs of group_size (TRL's layout)."""
    if rewards.numel() % group_size:
        raise ValueError(f"group norm needs whole groups of {group_size} rewards, got {rewards.numel()}")
    adv, stats = group_norm(rewards.reshape(-1, group_size), std_threshold, eps)
    return adv.reshape(-1), stats

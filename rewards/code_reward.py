"""Turn one response's execution results into reward components and a scalar reward.

Components are each in [0, 1]; weights and switches come from RewardConfig (rewards/config.py):

    correctness = passed / expected test cases (exact fraction: a partial pass is never rounded up)
    format      = the response follows the answer format its prompt asked for
    syntax      = the extracted code compiles
    length      = 1 up to length_soft_limit_chars, falling linearly to 0 at length_hard_limit_chars
    reward      = sum(w_i * c_i) [/ sum(w_i) when normalize] + all_pass_bonus * (every test passed)

A response with no extractable code scores 0 on every component (an empty answer must not earn the
length credit); a query whose problem is unknown gets RewardConfig.unmatched_reward.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

from coderl.rewards.config import RewardConfig
from coderl.rewards.sandbox import JobResult

COMPONENTS = ("correctness", "format", "syntax", "length", "bonus")
# RewardBreakdown.status where no sandbox verdict decided the reward (else it is JobResult.status).
UNMATCHED = "unmatched"  # the query's problem is unknown: RewardConfig.unmatched_reward
NO_CODE = "no_code"  # no code could be extracted from the response
SYNTAX = "syntax"  # the code does not compile (the sandbox's status of the same name, not run there)
NOT_RUN = "not_run"  # the code compiles but was not run
DEADLINE = "deadline"  # the batch deadline cut its job: no verdict, the cut reward


@dataclass(frozen=True)
class RewardBreakdown:
    """The reward of one response and what it is made of."""

    reward: float
    score: float  # unit-test pass rate in [0, 1] (OpenRLHF's "scores", used for dynamic filtering)
    correctness: float = 0.0
    format: float = 0.0
    syntax: float = 0.0
    length: float = 0.0
    bonus: float = 0.0  # what the all-pass bonus added to the reward (0 unless all_pass_bonus > 0)
    all_passed: bool = False
    status: str = "failed"  # JobResult.status, or UNMATCHED / NO_CODE / SYNTAX / NOT_RUN / DEADLINE
    timeouts: int = 0  # test cases that hit their time limit
    unsupported: int = 0  # test cases the judge could not decide on plain data (never passes)
    cached: bool = False

    def as_dict(self) -> dict:
        return asdict(self)


def length_component(n_chars: int, cfg: RewardConfig) -> float:
    """1 up to the soft limit, then a linear slope to 0 at the hard limit: a gentle nudge, not a cliff."""
    soft, hard = cfg.length_soft_limit_chars, cfg.length_hard_limit_chars
    if n_chars <= soft:
        return 1.0
    if n_chars >= hard:
        return 0.0
    return 1.0 - (n_chars - soft) / (hard - soft)


def correctness_of(result: JobResult | None) -> float:
    """Exact fraction of test cases passed; a result with more outcomes than declared tests scores 0."""
    if result is None or result.expected <= 0 or len(result.outcomes) > result.expected:
        return 0.0
    return min(result.passed, result.expected) / result.expected


def _combine(cfg: RewardConfig, correctness: float, fmt: float, syntax: float, length: float) -> float:
    weights = (cfg.correctness_weight, cfg.format_weight, cfg.syntax_weight, cfg.length_weight)
    total = sum(w * c for w, c in zip(weights, (correctness, fmt, syntax, length), strict=True))
    wsum = sum(weights)
    if cfg.normalize and wsum > 0:
        total /= wsum
    return total


def compute_reward(cfg: RewardConfig, *, response: str, code: str | None, format_ok: bool,
                   syntax_ok: bool, result: JobResult | None, deadline_missed: bool = False) -> RewardBreakdown:
    """Reward of one matched response.

    result is the sandbox's JobResult (None when the code was not run: no code, a syntax error, or the
    batch deadline passed first — then correctness is 0).
    """
    fmt = 1.0 if format_ok else 0.0
    if code is None:
        return RewardBreakdown(reward=_combine(cfg, 0.0, fmt, 0.0, 0.0), score=0.0, format=fmt, status=NO_CODE)
    syntax = 1.0 if syntax_ok else 0.0
    length = length_component(len(response), cfg)
    correctness = correctness_of(result) if not deadline_missed else 0.0
    all_passed = result is not None and not deadline_missed and result.expected > 0 and correctness == 1.0
    bonus = cfg.all_pass_bonus if all_passed else 0.0
    reward = _combine(cfg, correctness, fmt, syntax, length) + bonus
    if deadline_missed:
        status = DEADLINE
    elif result is None:
        status = SYNTAX if not syntax_ok else NOT_RUN
    else:
        status = result.status
    outcomes = result.outcomes if result is not None else ()
    return RewardBreakdown(reward=reward, score=correctness, correctness=correctness, format=fmt,
                           syntax=syntax, length=length, bonus=bonus, all_passed=all_passed, status=status,
                           timeouts=sum(o.status == "timeout" for o in outcomes),
                           unsupported=sum(o.status == "unsupported" for o in outcomes),
                           cached=bool(result is not None and result.cached))


def unmatched_reward(cfg: RewardConfig) -> RewardBreakdown:
    """The reward of a query whose problem is not in the dataset (and no label was sent)."""
    return RewardBreakdown(reward=float(cfg.unmatched_reward), score=0.0, status=UNMATCHED)


def openrlhf_answer(items: Sequence[RewardBreakdown]) -> dict:
    """The answer OpenRLHF's remote reward model expects: rewards, scores (pass rates) and extra_logs."""
    return {"rewards": [b.reward for b in items], "scores": [b.score for b in items], "extra_logs": extra_logs(items)}


def extra_logs(items: Sequence[RewardBreakdown]) -> dict[str, list[float]]:
    """Per-query values of every component and indicator, for OpenRLHF's extra_logs.

    Lists (one value per query), not scalars: OpenRLHF concatenates extra_logs across shards and splits
    them per sample, then logs their batch mean — so the logged figure is the per-component batch mean.
    """
    logs: dict[str, list[float]] = {f"reward/{c}": [float(getattr(b, c)) for b in items] for c in COMPONENTS}
    logs["reward/all_passed"] = [1.0 if b.all_passed else 0.0 for b in items]
    logs["reward/unmatched"] = [1.0 if b.status == UNMATCHED else 0.0 for b in items]
    logs["reward/no_code"] = [1.0 if b.status == NO_CODE else 0.0 for b in items]
    logs["reward/timeout"] = [1.0 if (b.timeouts or b.status in ("timeout", DEADLINE)) else 0.0 for b in items]
    logs["reward/unsupported"] = [1.0 if b.unsupported else 0.0 for b in items]
    logs["reward/cut"] = [1.0 if b.status == DEADLINE else 0.0 for b in items]  # cut by the batch deadline
    return logs


def batch_means(items: Sequence[RewardBreakdown]) -> dict[str, float]:
    """Batch mean of every extra_logs series plus the reward itself (for logs and /metrics)."""
    n = max(len(items), 1)
    means = {k.split("/", 1)[1]: sum(v) / n for k, v in extra_logs(items).items()}
    means["reward"] = sum(b.reward for b in items) / n
    means["score"] = sum(b.score for b in items) / n
    return means

"""Turn one response's execution results into reward terms and a scalar reward (docs/reward.md).

A term is a function of the response (a Sample) with a value in [0, 1]; its weight comes from RewardConfig
(rewards/config.py). The built-in terms, weighted by `<name>_weight`:

    correctness = passed / expected test cases (exact fraction: a partial pass is never rounded up)
    format      = the response follows the answer format its prompt asked for
    syntax      = the extracted code compiles
    length      = 1 up to length_soft_limit_chars, falling linearly to 0 at length_hard_limit_chars

`RewardConfig.terms` adds more, each "module:function" with its weight, as TRL's reward_funcs + reward_weights:

    reward      = sum(w_i * t_i) [/ sum(w_i) when normalize] + all_pass_bonus * (every test passed)

A response with no extractable code scores 0 on every built-in term but format (an empty answer must not earn
the length credit); a query whose problem is unknown gets RewardConfig.unmatched_reward; a sample whose job was
cut gets the cut rule's reward (cut_rewards).
"""

from __future__ import annotations

import functools
import importlib
import logging
from collections.abc import Callable, Hashable, Sequence
from dataclasses import asdict, dataclass, field, replace

from .config import RewardConfig
from .sandbox import JobResult, Status

log = logging.getLogger("coderl.reward_server")

COMPONENTS = ("correctness", "format", "syntax", "length", "bonus")
# RewardBreakdown.status where no sandbox verdict decided the reward (else it is JobResult.status).
UNMATCHED = "unmatched"  # the query's problem is unknown: RewardConfig.unmatched_reward
NO_CODE = "no_code"  # no code could be extracted from the response
SYNTAX = Status.SYNTAX  # the code does not compile (the sandbox's status, decided here without a run)
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
    status: str = Status.FAILED  # JobResult.status (a Status), or UNMATCHED / NO_CODE / SYNTAX / NOT_RUN / DEADLINE
    timeouts: int = 0  # test cases that hit their time limit
    unsupported: int = 0  # test cases the judge could not decide on plain data (never passes)
    cached: bool = False
    terms: dict[str, float] = field(default_factory=dict)  # RewardConfig.terms' values, by name

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


@dataclass(frozen=True)
class Sample:
    """What a reward term reads of one matched response."""

    cfg: RewardConfig
    response: str  # the response as graded (ends cleaned)
    code: str | None  # the extracted code; None = nothing usable was found
    format_ok: bool
    syntax_ok: bool
    result: JobResult | None  # the sandbox's verdict; None when the code was not run or its job was cut


Term = Callable[[Sample], float]


def correctness(s: Sample) -> float:
    return correctness_of(s.result)


def answer_format(s: Sample) -> float:
    return 1.0 if s.format_ok else 0.0


def syntax(s: Sample) -> float:
    return 1.0 if s.code is not None and s.syntax_ok else 0.0


def length(s: Sample) -> float:
    return length_component(len(s.response), s.cfg) if s.code is not None else 0.0


# The built-in terms, in RewardBreakdown's order; each is weighted by RewardConfig.<name>_weight.
BUILTIN_TERMS: dict[str, Term] = {"correctness": correctness, "format": answer_format, "syntax": syntax,
                                  "length": length}


class TermError(ValueError):
    """A configured reward term that cannot be loaded; the message names it."""


@functools.cache
def load_term(path: str) -> Term:
    """The function a RewardConfig.terms key names ("module:function", the module importable)."""
    module, _, name = path.partition(":")
    try:
        fn = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as e:
        raise TermError(f"reward term {path!r}: cannot load it ({e}); terms are 'module:function' with the "
                        "module importable by the server (docs/reward.md)") from None
    if not callable(fn):
        raise TermError(f"reward term {path!r} is not a function")
    return fn


def terms(cfg: RewardConfig) -> list[tuple[str, Term, float]]:
    """(name, function, weight) of every term of the reward, built-in first."""
    out = [(name, fn, float(getattr(cfg, f"{name}_weight"))) for name, fn in BUILTIN_TERMS.items()]
    return out + [(path, load_term(path), float(w)) for path, w in cfg.terms.items()]


_failed_terms: set[str] = set()


def _term_value(name: str, fn: Term, sample: Sample) -> float:
    """fn(sample); a configured term that raises or leaves [0, 1] is 0 for this sample, logged once per term
    (a bug in a user's term must cost its value, not the batch)."""
    if name in BUILTIN_TERMS:
        return fn(sample)
    try:
        v = float(fn(sample))
        if not 0.0 <= v <= 1.0:  # also NaN
            raise TermError(f"returned {v!r}; a term's value is in [0, 1]")
    except Exception as e:
        if name not in _failed_terms:
            _failed_terms.add(name)
            log.error("reward term %r failed (%s: %s); it counts 0 where it fails (logged once)", name,
                      type(e).__name__, e)
        return 0.0
    return v


def combine(cfg: RewardConfig, values: dict[str, float]) -> float:
    """sum(w_i * t_i) over the reward's terms, divided by sum(w_i) when cfg.normalize."""
    weighted = [(w, values[name]) for name, _, w in terms(cfg)]
    total = sum(w * v for w, v in weighted)
    wsum = sum(w for w, _ in weighted)
    if cfg.normalize and wsum > 0:
        total /= wsum
    return total


def compute_reward(cfg: RewardConfig, *, response: str, code: str | None, format_ok: bool,
                   syntax_ok: bool, result: JobResult | None, deadline_missed: bool = False) -> RewardBreakdown:
    """Reward of one matched response.

    result is the sandbox's JobResult (None when the code was not run: no code, a syntax error, or the
    batch deadline passed first — then correctness is 0).
    """
    graded = None if deadline_missed or code is None else result
    sample = Sample(cfg, response, code, format_ok, syntax_ok, graded)
    values = {name: _term_value(name, fn, sample) for name, fn, _ in terms(cfg)}
    all_passed = graded is not None and graded.expected > 0 and values["correctness"] == 1.0
    bonus = cfg.all_pass_bonus if all_passed else 0.0
    reward = combine(cfg, values) + bonus
    if code is None:
        status = NO_CODE
    elif deadline_missed:
        status = DEADLINE
    elif result is None:
        status = SYNTAX if not syntax_ok else NOT_RUN
    else:
        status = result.status
    outcomes = graded.outcomes if graded is not None else ()
    return RewardBreakdown(reward=reward, score=values["correctness"], correctness=values["correctness"],
                           format=values["format"], syntax=values["syntax"], length=values["length"], bonus=bonus,
                           all_passed=all_passed, status=status,
                           timeouts=sum(o.status == Status.TIMEOUT for o in outcomes),
                           unsupported=sum(o.status == Status.UNSUPPORTED for o in outcomes),
                           cached=bool(graded is not None and graded.cached),
                           terms={k: v for k, v in values.items() if k not in BUILTIN_TERMS})


def cut_rewards(cfg: RewardConfig, out: list[RewardBreakdown], groups: Sequence[Hashable | None]) -> list[RewardBreakdown]:
    """The cut rule: a sample whose job was cut (status DEADLINE) is not evidence about its program, so it gets
    the mean reward of the finished samples of its group (its prompt; None = none) in the batch, its
    group-normalised advantage ~0 (cfg.cut_reward_neutral), else cfg.cut_reward."""
    cut = [i for i, b in enumerate(out) if b.status == DEADLINE]
    if not cut:
        return out
    finished: dict[Hashable, list[float]] = {}
    if cfg.cut_reward_neutral:
        for b, g in zip(out, groups, strict=True):
            if b.status != DEADLINE and g is not None:
                finished.setdefault(g, []).append(b.reward)
    out = list(out)
    for i in cut:
        rewards = finished.get(groups[i])
        out[i] = replace(out[i], reward=sum(rewards) / len(rewards) if rewards else cfg.cut_reward)
    return out


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
    logs["reward/timeout"] = [1.0 if (b.timeouts or b.status in (Status.TIMEOUT, DEADLINE)) else 0.0 for b in items]
    logs["reward/unsupported"] = [1.0 if b.unsupported else 0.0 for b in items]
    logs["reward/cut"] = [1.0 if b.status == DEADLINE else 0.0 for b in items]  # cut by the batch deadline
    for name in dict.fromkeys(n for b in items for n in b.terms):
        logs[f"reward/{name}"] = [b.terms.get(name, 0.0) for b in items]
    return logs


def batch_means(items: Sequence[RewardBreakdown]) -> dict[str, float]:
    """Batch mean of every extra_logs series plus the reward itself (for logs and /metrics)."""
    n = max(len(items), 1)
    means = {k.split("/", 1)[1]: sum(v) / n for k, v in extra_logs(items).items()}
    means["reward"] = sum(b.reward for b in items) / n
    means["score"] = sum(b.score for b in items) / n
    return means

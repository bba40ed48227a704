"""Queries -> sandbox jobs -> rewards: the one request path, shared by the HTTP server and the in-process
backend of the trainer integrations (rewards/integrations/backend.py, reward_func.py).

    scorer = Scorer(reward_cfg, index)
    prepared = scorer.prepare(queries, prompts, labels)   # lookup + extraction, no execution
    positions, jobs = scorer.jobs(prepared)               # the queries with code worth running
    results = await executor.run(jobs, deadline_s)        # rewards/executors.py: result cache, dedup, deadline
    breakdowns = scorer.finish(prepared, positions, results)

which `ascore` runs for a batch (the server, the in-process backend), and `score` blocking, for a caller
without an event loop.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import logging
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .code_reward import RewardBreakdown, compute_reward, cut_rewards, terms, unmatched_reward
from .config import RewardConfig
from .extract import ANSWER_FORMATS, Extracted, extract_code, format_ok
from .labels import Label, LabelError, parse_label
from .prompt_index import PromptIndex
from .query import normalize, read, split_templated, strip_leading_pads
from .sandbox import Job, JobResult, Status
from .sandbox.results import CUT_INFRA
from .syntax import Budget, OutOfTime, OverBudget, parses

# What the compile checks the batch's runs left undecided (cut jobs, all-timeout runs) may take after the
# executor returns (after the deadline, when it returns later), per request; a check still compiling then is
# abandoned (syntax.OutOfTime).
SYNTAX_AFTER_DEADLINE_S = 1.0
# How long past the deadline the queries not yet prepared are still looked up (no extraction: they are cut), so
# that the cut rule knows their prompt; the rest are cut without a prompt (the cut rule's cut_reward).
LOOKUP_AFTER_DEADLINE_S = 0.5

# The most compile time one response's preparation may take, however few the batch's queries: a check at
# syntax_max_chars takes up to ~2.3 s (rewards/syntax.py), and the helper is shared with other requests.
PREPARE_MAX_S = 2.5

log = logging.getLogger("coderl.reward_server")

_UNMATCHED_LOG_LIMIT = 20  # distinct unmatched prompts logged; the metric counts all of them
# Queries ascore prepares at a time: the jobs of each slice start before the next is prepared. The first
# slices are small so that the sandboxes start soon; later ones larger, so that there are few.
_SLICES = (16, 32)
_SLICE = 64


def prepare_budget(cfg: RewardConfig, deadline_s: float, n: int) -> float:
    """Seconds of compiling one response of an n-query batch may spend on its own preparation: together they fit in
    cfg.prepare_share of the deadline, none less than cfg.prepare_min_s nor more than PREPARE_MAX_S."""
    return max(cfg.prepare_min_s, min(PREPARE_MAX_S, cfg.prepare_share * deadline_s / max(1, n)))


@dataclass(frozen=True)
class Prepared:
    """One query, ready to run: its label (None = unmatched), response and extracted code."""

    label: Label | None
    response: str
    extracted: Extracted
    format_ok: bool
    syntax_ok: bool | None  # None: not checked yet; Scorer.finish decides it, from the run when it can
    how: str  # "label", a template name, "prefix", "unmatched" or "cut"
    cut: bool = False  # the request's deadline passed before its code was chosen: the cut rule's reward, no run

    @property
    def runnable(self) -> bool:
        return (self.label is not None and self.extracted.code is not None and self.syntax_ok is not False
                and not self.cut)


def _name_prompt(text: str) -> str:
    """What tells one unmatched prompt from another: prompts of a dataset share their opening sentence, so the
    functions it defines, its length and its last words (where a truncated prompt was cut) go with it."""
    flat = " ".join(text.split())
    names = list(dict.fromkeys(re.findall(r"\bdef\s+([A-Za-z_]\w*)\s*\(", text)))[:3]
    defines = f"defines {', '.join(n + '()' for n in names)}, " if names else ""
    return (f"user message of {len(text)} chars, {defines}begins {flat[:60]!r}, ends {flat[-60:]!r}"
            if len(flat) > 120 else f"user message {flat!r}")


class Scorer:
    """Stateless per batch; keeps small caches (parsed labels) and the log-once sets. Thread-safe."""

    def __init__(self, cfg: RewardConfig, index: PromptIndex | None = None) -> None:
        terms(cfg)  # a configured reward term that cannot be loaded stops the start, named (TermError)
        self.cfg = cfg
        self.index = index
        self._labels: OrderedDict[str, Label | None] = OrderedDict()
        self._lock = threading.Lock()
        self._logged_unmatched: set[bytes] = set()
        self._logged_bad_label = False
        self.bad_labels = 0

    # -------------------------------------------------------------------------------- prepare

    def _parse_label(self, raw: str) -> Label | None:
        with self._lock:
            if raw in self._labels:
                self._labels.move_to_end(raw)
                return self._labels[raw]
        try:
            label = parse_label(raw)
        except LabelError as e:
            label = None
            with self._lock:
                self.bad_labels += 1
                if not self._logged_bad_label:
                    self._logged_bad_label = True
                    log.warning("a label sent by the client is not a coderl label (%s); looking the prompt up "
                                "in the dataset instead (logged once)", e)
        with self._lock:
            self._labels[raw] = label
            if len(self._labels) > 4096:
                self._labels.popitem(last=False)
        return label

    def _note_unmatched(self, query: str) -> None:
        split = split_templated(query)
        full = split.user if split is not None else strip_leading_pads(query)
        text = full[:2000]
        key = hashlib.blake2b(normalize(text).encode("utf-8", "surrogatepass"), digest_size=8).digest()
        with self._lock:
            if key in self._logged_unmatched or len(self._logged_unmatched) >= _UNMATCHED_LOG_LIMIT:
                return
            self._logged_unmatched.add(key)
            last = len(self._logged_unmatched) == _UNMATCHED_LOG_LIMIT
        log.warning("prompt not found in the dataset, reward %.3g: %s%s", self.cfg.unmatched_reward,
                    _name_prompt(full), " (further unmatched prompts are counted in /metrics, not logged)" if last
                    else "")

    def prepare_one(self, query: str, prompt: str | None = None, label: str | None = None,
                    check_syntax: bool = True, until: float | None = None,
                    budget_s: float | None = None) -> Prepared:
        """Find the problem and the response (query.read) and extract the code. Never raises.

        check_syntax=False leaves syntax_ok None for finish() to decide. until (a time.monotonic() instant: the
        request's deadline) bounds the compiling extraction does: a query whose code is not chosen by then is cut.
        budget_s bounds the response's own compiling (prepare_budget): past it the response is graded as having
        no extractable code (source "over_budget"), its own choice, never cut.
        """
        lab = self._parse_label(label) if isinstance(label, str) and label.strip() else None
        lab, response, how = read(query, prompt, lab, self.index)
        if lab is None:
            self._note_unmatched(query)
            return Prepared(None, "", Extracted(None, "none"), False, False, "unmatched")
        if until is not None and time.monotonic() >= until:
            return self._cut(lab, response, how)
        fmt = lab.extra.get("answer_format") if isinstance(lab.extra, dict) else None
        if fmt not in ANSWER_FORMATS:
            fmt = self.cfg.answer_format
        budget = None if budget_s is None else Budget(budget_s)
        try:
            extracted = extract_code(response, lab.entry_point, self.cfg.syntax_max_chars, until, budget)
        except OutOfTime:
            return self._cut(lab, response, how)
        except OverBudget:
            return self._over_budget(lab, response, how, fmt)
        # Raw code and a truncated block were only extracted because they compile: not compiled twice.
        if extracted.code is None or extracted.source in ("raw", "truncated_block"):
            syntax = extracted.code is not None
        elif len(extracted.code) > self.cfg.syntax_max_chars:  # never run: the bound is cheap to apply first
            syntax = False
        elif not check_syntax:
            syntax = None
        else:
            try:
                syntax = parses(extracted.code, self.cfg.syntax_max_chars, until, budget)
            except OutOfTime:
                return self._cut(lab, response, how)
            except OverBudget:
                return self._over_budget(lab, response, how, fmt)
        return Prepared(lab, response, extracted, format_ok(response, fmt, extracted), syntax, how)

    @staticmethod
    def _cut(lab: Label, response: str, how: str) -> Prepared:
        """A query the request's deadline passed before its code was chosen: the cut rule's reward, no run."""
        return Prepared(lab, response, Extracted(None, "cut"), False, False, how, cut=True)

    @staticmethod
    def _over_budget(lab: Label, response: str, how: str, fmt: str) -> Prepared:
        """A response whose own compiling exceeded its budget: no extractable code (the no-code reward), scored."""
        none = Extracted(None, "over_budget")
        return Prepared(lab, response, none, format_ok(response, fmt, none), False, how)

    def prepare(self, queries: Sequence[str], prompts: Sequence[str | None] | None = None,
                labels: Sequence[str | None] | None = None, until: float | None = None,
                hand_over: Callable[[Prepared], object] | None = None,
                budget_s: float | None = None) -> list[Prepared]:
        """prepare_one over a batch (prompts/labels may be None or lists of the same length), the syntax check
        left to finish(): the sandbox compiles every program it runs anyway, and parsing each one here too
        was the largest share of the server's own time per job. Past until (the request's deadline) queries are
        only looked up, and cut; LOOKUP_AFTER_DEADLINE_S later not even that. hand_over(p) gets each one as
        soon as it is ready. budget_s: each response's own preparation budget (prepare_one)."""
        out: list[Prepared] = []
        for i, q in enumerate(queries):
            if i % 8 == 7:  # lets a dispatcher thread waiting for the GIL run within ~0.5 ms, not the 5 ms switch interval
                time.sleep(0)
            if until is not None and time.monotonic() >= until + LOOKUP_AFTER_DEADLINE_S:
                out.append(Prepared(None, "", Extracted(None, "cut"), False, False, "cut", cut=True))
            else:
                out.append(self._prepare_guarded(i, q, prompts, labels, until, budget_s))
            if hand_over is not None:
                hand_over(out[-1])
        return out

    def _prepare_guarded(self, i: int, q: str, prompts, labels, until: float | None,
                         budget_s: float | None) -> Prepared:
        try:
            return self.prepare_one(q, prompts[i] if prompts else None, labels[i] if labels else None,
                                    check_syntax=False, until=until, budget_s=budget_s)
        except Exception:  # a bug must cost one query its reward, not the whole batch
            log.exception("internal error while preparing query %d; it gets the unmatched reward", i)
            return Prepared(None, "", Extracted(None, "none"), False, False, "error")

    # --------------------------------------------------------------------------------- finish

    @staticmethod
    def jobs(prepared: Sequence[Prepared]) -> tuple[list[int], list[Job]]:
        """(positions, jobs) for the prepared queries that have code worth running."""
        pos = [i for i, p in enumerate(prepared) if p.runnable]
        return pos, [Job(code=prepared[i].extracted.code, label=prepared[i].label) for i in pos]

    def finish(self, prepared: Sequence[Prepared], positions: Sequence[int],
               results: Sequence[JobResult | None], until: float | None = None) -> list[RewardBreakdown]:
        """Rewards for every prepared query. A job the batch deadline cut (infra "deadline", or None: its chunk
        never answered) or the sandbox lost (infra "lost"), and a query the deadline (until) cut before its code
        was chosen, get status "deadline" and the cut rule's reward (code_reward.cut_rewards)."""
        by_pos = dict(zip(positions, results, strict=True))
        out = []
        # Compile checks of what no run showed compiled come after the executor returns: bounded per request, not
        # per response (one costs up to ~2.3 s at syntax_max_chars), and counted from the deadline when the
        # executor returns past it, so a request answers within deadline + SYNTAX_AFTER_DEADLINE_S + a little.
        # Past the budget a response keeps what its run gave it (a cut: the cut rule; a run: its verdicts).
        now = time.monotonic()
        budget_end = (now if until is None else min(now, until)) + SYNTAX_AFTER_DEADLINE_S
        skipped = 0
        for i, p in enumerate(prepared):
            if p.cut:
                out.append(compute_reward(self.cfg, response=p.response, code="", format_ok=False, syntax_ok=False,
                                          result=None, deadline_missed=True))
                continue
            if p.label is None:
                out.append(unmatched_reward(self.cfg))
                continue
            ran = i in by_pos
            res = by_pos.get(i)
            syntax_ok = p.syntax_ok
            if syntax_ok is None:
                syntax_ok = compiled(res)
                # a run that shows a syntax failure was compiled by the sandbox, and failed: no check needed
                shown_failing = res is not None and any(o.status == Status.SYNTAX for o in res.outcomes)
                if not syntax_ok and not shown_failing:
                    try:
                        syntax_ok = parses(p.extracted.code, self.cfg.syntax_max_chars, budget_end)
                    except OutOfTime:
                        syntax_ok, skipped = True, skipped + 1
            cut = ran and (res is None or res.infra in CUT_INFRA)  # the deadline cut it, or the sandbox lost it
            if not syntax_ok:  # scored as code that was never run, as when the check came first
                ran, res, cut = False, None, False
            out.append(compute_reward(self.cfg, response=p.response, code=p.extracted.code, format_ok=p.format_ok,
                                      syntax_ok=syntax_ok, result=None if cut else res, deadline_missed=cut))
        if skipped:
            log.warning("%d compile checks skipped: past the request's %.1f s budget after the batch deadline; their "
                        "samples keep their run's result", skipped, SYNTAX_AFTER_DEADLINE_S)
        return cut_rewards(self.cfg, out, [id(p.label) if p.label is not None else None for p in prepared])


# Outcomes only a program that compiled can have: the tests ran against it (or its import raised). A program
# that does not compile gets SYNTAX for every test; TIMEOUT, MEMORY and KILLED prove nothing.
_RAN = frozenset({Status.PASSED, Status.FAILED, Status.ERROR, Status.UNSUPPORTED})


def compiled(result: JobResult | None) -> bool:
    """True when the sandbox's result shows the program compiled (and so parses: ast.parse accepts all that
    compile() does); False when it shows nothing either way."""
    return result is not None and any(o.status in _RAN for o in result.outcomes)


def score(scorer: Scorer, executor, queries: Sequence[str], prompts: Sequence[str | None] | None = None,
          labels: Sequence[str | None] | None = None, deadline_s: float = 1e9) -> list[RewardBreakdown]:
    """ascore() for a caller without an event loop (a script, a test): blocking, on a loop of its own."""
    return asyncio.run(ascore(scorer, executor, queries, prompts, labels, deadline_s))


async def ascore(scorer: Scorer, executor, queries: Sequence[str], prompts: Sequence[str | None] | None = None,
                 labels: Sequence[str | None] | None = None, deadline_s: float = 1e9) -> list[RewardBreakdown]:
    """score() for an event loop: CPU-bound steps on worker threads, jobs through an executor (local pool
    or Ray) that returns None for what misses the batch deadline, counted from the call. The batch is
    prepared in slices, each query's job starting as soon as it is prepared: the sandboxes work while the server
    prepares the rest (with many workers, preparing a whole batch first left them idle for a good share of it),
    and a response slow to extract delays only the queries after it. Slices take turns on the worker threads
    with other batches'. Nothing waits past the deadline but the bounded remainders (docs/reward.md, "Nothing
    after the deadline"): what was not prepared by then is cut, and the compile checks after it have
    SYNTAX_AFTER_DEADLINE_S."""
    until = time.monotonic() + deadline_s
    budget_s = prepare_budget(scorer.cfg, deadline_s, len(queries))
    prepared: list[Prepared] = []
    positions: list[int] = []
    loop = asyncio.get_running_loop()
    ready: asyncio.Queue[Prepared | None] = asyncio.Queue()

    def prepare_slice(lo: int, hi: int) -> None:
        try:
            scorer.prepare(queries[lo:hi], prompts[lo:hi] if prompts else None, labels[lo:hi] if labels else None,
                           until, hand_over=lambda p: loop.call_soon_threadsafe(ready.put_nowait, p), budget_s=budget_s)
        finally:
            loop.call_soon_threadsafe(ready.put_nowait, None)  # the slice's end, after its queries

    async def parts():
        lo = 0
        for size in itertools.chain(_SLICES, itertools.repeat(_SLICE)):
            if lo >= len(queries):
                break
            hi = lo + size
            task = asyncio.ensure_future(asyncio.to_thread(prepare_slice, lo, hi))
            ended = False
            while not ended:
                part = [await ready.get()]
                while not ready.empty():
                    part.append(ready.get_nowait())
                if part[-1] is None:
                    ended = True
                    part.pop()
                base = len(prepared)
                pos, jobs = scorer.jobs(part)
                prepared.extend(part)
                positions.extend(base + p for p in pos)
                if jobs:
                    yield jobs
            await task  # its error, if preparing failed outside a query
            lo = hi

    results = await executor.run_parts(parts(), len(queries), deadline_s)
    return await asyncio.to_thread(scorer.finish, prepared, positions, results, until)

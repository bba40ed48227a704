"""--verify: run each problem's reference solution in the sandbox and keep exactly the tests it passes.

Policy (docs/datasets.md): the sandbox reports one outcome per test *case* (unittest method, assert,
humaneval check-assert, stdio/call pair); a label holds entries (a unittest module holds many cases). Each
format says what it keeps (its `keep`, rewards/sandbox/inside/formats/):
  unittest  -- a module's failing test methods are cut out of its source (drop_test_methods); the module is
               dropped whole only when every method fails, when it has none, or when the cut cannot be made
               exactly (the rewritten module must declare precisely the passing cases, checked with the
               sandbox's own planner);
  humaneval -- failing top-level asserts are cut out of check() (by source line range);
  assert / stdio / call -- each failing entry is dropped (the default, keep_passing; an assert entry that
               can verify nothing, `assert True`, is no test case: formats/asserts.py counts).
A label that was cut runs once more: a kept case that failed only because a cut one was gone (shared state
between test methods) drops its entry. A problem is dropped only when no test survives, and when its
schema has a reference column but the row's reference is empty. Problems from schemas without references
(verl) are kept unverified and counted. `Verifier.reports` says, per problem of the last run, how many cases
it kept of how many and which it dropped (preprocess writes them to verify.jsonl).
A kept problem records its reference's slowest passing test case (TestOutcome.runtime_s, in the sandbox) as
ref_time_s: the reward server derives its time limits from it (rewards/sandbox/pool.py time_limits). The
references run with the grading cap as their per-test limit (preprocess.py), so a slow-but-legit test is
kept and gets a limit that fits it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import replace

from coderl.data.schemas import Problem
from coderl.rewards.labels import Label
from coderl.rewards.sandbox.inside.formats import REGISTRY


class Verifier:
    """Runs reference solutions through a started coderl.rewards.sandbox.Sandbox and filters tests."""

    def __init__(self, sandbox, count_tests: Callable[[Label], int]) -> None:
        self.sandbox = sandbox
        self.count_tests = count_tests
        self.stats = Counter()
        self.failed_statuses = Counter()
        self.reports: list[dict | None] = []  # per problem of the last run(): what it kept and dropped

    def run(self, problems: list[Problem], has_reference: list[bool]) -> list[Problem | str]:
        """Each problem filtered in place, or a drop reason string, in input order."""
        out: list[Problem | str] = list(problems)
        self.reports = [None] * len(problems)
        todo = []
        for i, (p, has_ref) in enumerate(zip(problems, has_reference, strict=True)):
            if p.reference:
                todo.append(i)
            elif has_ref:
                out[i] = "verify_no_reference"
            else:
                self.stats["unverified_no_reference_column"] += 1
        cut = []
        for i, res in zip(todo, self._run([problems[i] for i in todo]), strict=True):
            p = problems[i]
            outcome = self._keep(p, res)
            self._count(p, outcome)
            kept, dropped = outcome["kept"], outcome["dropped"]
            self.reports[i] = {"source_id": p.source_id, "cases": outcome["cases"],
                               "kept_cases": outcome["kept_cases"], "dropped": dropped}
            passed = [o.runtime_s for o in res.outcomes if o.status == "passed"]
            p.ref_time_s = round(max(passed), 4) if passed else None
            if kept and outcome["rewritten"]:
                cut.append(i)
            p.tests = kept
        if cut:  # a cut label runs again: a kept case may have leaned on a cut one
            for i, res in zip(cut, self._run([problems[i] for i in cut]), strict=True):
                self._recheck(problems[i], res, self.reports[i])
        for i in todo:
            p = problems[i]
            rep = self.reports[i]
            if p.tests:
                self.stats["problems_kept"] += 1
                self.stats["problems_with_tests_dropped"] += bool(rep["dropped"])
            else:
                self.stats["problems_dropped"] += 1
                out[i] = "verify_all_failed"
            rep["kept_tests"] = len(p.tests)
            self.stats["cases_kept"] += rep["kept_cases"]
        return out

    def _run(self, problems: list[Problem]) -> list:
        from coderl.rewards.sandbox import Job
        return self.sandbox.run([Job(code=p.reference, label=_label(p)) for p in problems]) if problems else []

    def _count(self, p: Problem, outcome: dict) -> None:
        self.stats["problems_checked"] += 1
        self.stats["cases_checked"] += outcome["cases"]
        self.stats["tests_checked"] += len(p.tests)
        self.stats["cases_failed"] += outcome["failed"]
        self.stats["tests_dropped"] += len(p.tests) - len(outcome["kept"])
        for key, n in outcome.get("counts", {}).items():
            self.stats[key] += n

    def _statuses(self, label: Label, res) -> tuple[list[int], list[str]]:
        sizes = self._case_counts(label)
        statuses = [o.status for o in res.outcomes][:sum(sizes)]
        statuses += ["killed"] * (sum(sizes) - len(statuses))  # a run that stopped early: missing = failed
        return sizes, statuses

    def _keep(self, p: Problem, res) -> dict:
        """{"kept": tests, "cases", "kept_cases", "failed": case counts, "dropped": [what was dropped, named],
        "rewritten": whether a kept entry was cut, "counts": {verify stat: n}}."""
        sizes, statuses = self._statuses(_label(p), res)
        for s in statuses:
            if s != "passed":
                self.failed_statuses[s] += 1
        return {"cases": len(statuses), "failed": sum(s != "passed" for s in statuses), "rewritten": False,
                **REGISTRY[p.format].keep(p.tests, statuses, sizes)}

    def _recheck(self, p: Problem, res, rep: dict) -> None:
        """After a cut: an entry with a case that now fails is dropped whole (no second cut)."""
        sizes, statuses = self._statuses(_label(p), res)
        kept, pos = [], 0
        for k, (test, n) in enumerate(zip(p.tests, sizes, strict=True)):
            bad = [s for s in statuses[pos:pos + n] if s != "passed"]
            if bad:
                self.stats["tests_dropped_on_recheck"] += 1
                rep["dropped"].append(f"tests[{k}] (after the cut: {len(bad)} of its {n} cases failed)")
                rep["kept_cases"] -= n
                self.stats["tests_dropped"] += 1
            else:
                kept.append(test)
            pos += n
        p.tests = kept

    def _case_counts(self, label: Label) -> list[int]:
        """Test cases each of the label's tests declares: those of a label holding that test alone."""
        if len(label.tests) == 1:
            return [self.count_tests(label)]
        return [self.count_tests(replace(label, tests=(t,))) for t in label.tests]


def _label(p: Problem) -> Label:
    # the dataset's own limit, when it states one, is the one the reference is measured under
    return Label(format=p.format, tests=tuple(p.tests), entry_point=p.entry_point, setup_code=p.setup_code,
                 time_limit_s=p.time_limit_s)

"""--verify: run each problem's reference solution in the sandbox and keep only the tests it passes.

Policy (docs/datasets.md): the sandbox reports one outcome per test *case* (unittest method, assert,
humaneval check-assert, stdio/call pair), but a label can only hold whole entries. Each format says what
it keeps (its `keep`, rewards/sandbox/inside/formats/); by default a test is kept when its reference
passed every case it declares, so a unittest module with no methods, or an assert entry that can verify
nothing (`assert True`: it is no test case), is dropped; humaneval cuts the failing top-level asserts out
of check() (by source line range).
A problem is dropped when no test survives, and when its schema has a reference column but the row's
reference is empty. Problems from schemas without references (verl) are kept unverified and counted.
A kept problem records its reference's slowest passing test case (TestOutcome.runtime_s, in the sandbox) as
ref_time_s: the reward server derives its time limits from it (rewards/sandbox/pool.py time_limits).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import replace

from coderl.data.formats import Problem
from coderl.rewards.labels import Label
from coderl.rewards.sandbox.inside.formats import REGISTRY
from coderl.rewards.sandbox.inside.formats.humaneval import drop_check_asserts  # noqa: F401  (tests use it)


class Verifier:
    """Runs reference solutions through a started coderl.rewards.sandbox.Sandbox and filters tests."""

    def __init__(self, sandbox, count_tests: Callable[[Label], int]) -> None:
        self.sandbox = sandbox
        self.count_tests = count_tests
        self.stats = Counter()
        self.failed_statuses = Counter()

    def run(self, problems: list[Problem], has_reference: list[bool]) -> list[Problem | str]:
        """Each problem filtered in place, or a drop reason string, in input order."""
        from coderl.rewards.sandbox import Job
        out: list[Problem | str] = [p for p in problems]
        jobs, idx = [], []
        for i, (p, has_ref) in enumerate(zip(problems, has_reference, strict=True)):
            if not p.reference:
                if has_ref:
                    out[i] = "verify_no_reference"
                else:
                    self.stats["unverified_no_reference_column"] += 1
                continue
            label = Label(format=p.format, tests=tuple(p.tests), entry_point=p.entry_point,
                          setup_code=p.setup_code)
            jobs.append(Job(code=p.reference, label=label))
            idx.append(i)
        if jobs:
            for i, job, res in zip(idx, jobs, self.sandbox.run(jobs), strict=True):
                out[i] = self._filter(problems[i], job.label, res)
        return out

    def _filter(self, p: Problem, label: Label, res) -> Problem | str:
        self.stats["problems_checked"] += 1
        sizes = self._case_counts(label)
        statuses = [o.status for o in res.outcomes]
        statuses += ["killed"] * (sum(sizes) - len(statuses))  # a run that stopped early: missing = failed
        self.stats["cases_checked"] += sum(sizes)
        self.stats["tests_checked"] += len(p.tests)
        for s in statuses:
            if s != "passed":
                self.failed_statuses[s] += 1
        self.stats["cases_failed"] += sum(s != "passed" for s in statuses[:sum(sizes)])
        passed = [o.runtime_s for o in res.outcomes if o.status == "passed"]
        kept = REGISTRY[p.format].keep(p.tests, statuses, sizes, self.stats)
        if not kept:
            self.stats["problems_dropped"] += 1
            return "verify_all_failed"
        self.stats["problems_kept"] += 1
        if len(kept) < len(p.tests) or kept[0] is not p.tests[0]:
            self.stats["problems_with_tests_dropped"] += 1
        p.tests = list(kept)
        p.ref_time_s = round(max(passed), 4) if passed else None
        return p

    def _case_counts(self, label: Label) -> list[int]:
        """Test cases each of the label's tests declares: those of a label holding that test alone."""
        if len(label.tests) == 1:
            return [self.count_tests(label)]
        return [self.count_tests(replace(label, tests=(t,))) for t in label.tests]

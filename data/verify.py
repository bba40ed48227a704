"""--verify: run each problem's reference solution in the sandbox and keep only the tests it passes.

Policy (docs/datasets.md): the sandbox reports one outcome per test *case* (unittest method, assert,
humaneval check-assert, stdio/call pair), but a label can only hold whole entries. So:
  unittest  -- a module is kept only if every one of its test methods passes (a module with no methods
               is dropped: it tests nothing);
  humaneval -- failing top-level asserts are cut out of check() (by source line range);
  assert / stdio / call -- each failing entry is dropped (and an assert entry that can verify nothing,
               `assert True`: it is no test case, rewards/sandbox/plan.py is_case).
A problem is dropped when no test survives, and when its schema has a reference column but the row's
reference is empty. Problems from schemas without references (verl) are kept unverified and counted.
A kept problem records its reference's slowest passing test case (TestOutcome.runtime_s, in the sandbox) as
ref_time_s: the reward server derives its time limits from it (rewards/sandbox/pool.py time_limits).
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Callable

from coderl.data.formats import Problem
from coderl.rewards.labels import Label
from coderl.rewards.sandbox.plan import is_case


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
        if p.format == "humaneval":
            failing = [k for k, s in enumerate(statuses[:sizes[0]]) if s != "passed"]
            if not sizes[0]:  # no assert of check() can depend on the program: it tests nothing
                kept = []
            elif not failing:
                kept = p.tests
            else:
                program = drop_check_asserts(p.tests[0], failing) if len(failing) < sizes[0] else None
                kept = [program] if program else []
                self.stats["humaneval_asserts_dropped"] += len(failing)
        else:
            kept, pos = [], 0
            for test, n in zip(p.tests, sizes, strict=True):
                if n > 0 and all(s == "passed" for s in statuses[pos:pos + n]):
                    kept.append(test)
                pos += n
            self.stats["tests_dropped"] += len(p.tests) - len(kept)
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
        if label.format in ("unittest", "assert"):  # an assert test that checks nothing is no case (plan.is_case)
            return [self.count_tests(Label(format=label.format, tests=(t,))) for t in label.tests]
        if label.format == "humaneval":
            return [self.count_tests(label)]
        return [1] * len(label.tests)


def drop_check_asserts(program: str, failing: list[int]) -> str | None:
    """`program` with the given test cases of check() (0-based, in order) cut out; None if not safely possible."""
    try:
        tree = ast.parse(program)
    except SyntaxError:
        return None
    checks = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "check"]
    if not checks:
        return None
    check = checks[-1]
    cases = [n for n in check.body if is_case(n)]
    if any(k >= len(cases) for k in failing) or len(failing) >= len(check.body):
        return None  # outcomes do not match the program, or nothing would be left in check()
    starts = Counter(n.lineno for n in ast.walk(check) if isinstance(n, ast.stmt))
    spans = [(cases[k].lineno, cases[k].end_lineno) for k in failing]
    if any(starts[a] > 1 for a, _ in spans) or any(
            n.lineno == b and n is not cases[k] for k, (_, b) in zip(failing, spans, strict=True)
            for n in check.body):
        return None  # statements sharing a line: cannot cut by lines
    drop = {ln for a, b in spans for ln in range(a, b + 1)}
    kept = "".join(line for no, line in enumerate(program.splitlines(keepends=True), 1) if no not in drop)
    try:
        ast.parse(kept)
    except SyntaxError:
        return None
    return kept

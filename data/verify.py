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

import ast
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import replace

from coderl.rewards.labels import Label
from coderl.rewards.sandbox.inside.formats import REGISTRY
from coderl.rewards.sandbox.inside.formats.humaneval import is_case
from coderl.rewards.sandbox.inside.framing import Status

from .schemas import Problem


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
            kept, dropped = outcome["kept"], _with_errors(outcome["dropped"], self._failures(p, res))
            self.reports[i] = {"source_id": p.source_id, "cases": outcome["cases"],
                               "kept_cases": outcome["kept_cases"], "dropped": dropped}
            passed = [o.runtime_s for o in res.outcomes if o.status == Status.PASSED]
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
        statuses += [Status.KILLED.value] * (sum(sizes) - len(statuses))  # a run that stopped early: missing = failed
        return sizes, statuses

    def _keep(self, p: Problem, res) -> dict:
        """{"kept": tests, "cases", "kept_cases", "failed": case counts, "dropped": [what was dropped, named],
        "rewritten": whether a kept entry was cut, "counts": {verify stat: n}}."""
        sizes, statuses = self._statuses(_label(p), res)
        for s in statuses:
            if s != Status.PASSED:
                self.failed_statuses[s] += 1
        return {"cases": len(statuses), "failed": sum(s != Status.PASSED for s in statuses), "rewritten": False,
                **REGISTRY[p.format].keep(p.tests, statuses, sizes)}

    def _recheck(self, p: Problem, res, rep: dict) -> None:
        """After a cut: an entry with a case that now fails is dropped whole (no second cut)."""
        sizes, statuses = self._statuses(_label(p), res)
        kept, pos = [], 0
        for k, (test, n) in enumerate(zip(p.tests, sizes, strict=True)):
            bad = [s for s in statuses[pos:pos + n] if s != Status.PASSED]
            if bad:
                self.stats["tests_dropped_on_recheck"] += 1
                rep["dropped"].append(f"tests[{k}] (after the cut: {len(bad)} of its {n} cases failed)")
                rep["kept_cases"] -= n
                self.stats["tests_dropped"] += 1
            else:
                kept.append(test)
            pos += n
        p.tests = kept

    def _failures(self, p: Problem, res) -> dict[int, dict[int, str]]:
        """Per test entry, per case of it (0-based), what a failing case said: the assertion or error, one line."""
        sizes = self._case_counts(_label(p))
        out: dict[int, dict[int, str]] = {}
        pos = 0
        for k, n in enumerate(sizes):
            for i, o in enumerate(res.outcomes[pos:pos + n]):
                if o.status != Status.PASSED:
                    said = _one_line(o.detail or res.detail)
                    src = _case_source(p, k, i)
                    out.setdefault(k, {})[i] = f"{src} -> {said}" if src and said else src or said
            pos += n
        return out

    def _case_counts(self, label: Label) -> list[int]:
        """Test cases each of the label's tests declares: those of a label holding that test alone."""
        if len(label.tests) == 1:
            return [self.count_tests(label)]
        return [self.count_tests(replace(label, tests=(t,))) for t in label.tests]


def _label(p: Problem) -> Label:
    # the dataset's own limit, when it states one, is the one the reference is measured under
    return Label(format=p.format, tests=tuple(p.tests), entry_point=p.entry_point, setup_code=p.setup_code,
                 time_limit_s=p.time_limit_s)


_ERROR_CHARS = 200  # of a failing case's detail, in verify.jsonl's dropped entries


def _one_line(detail: str) -> str:
    """The informative end of a traceback or diff (its last non-empty lines), on one line, capped."""
    lines = [ln.strip() for ln in (detail or "").strip().splitlines() if ln.strip()]
    text = " | ".join(lines[-2:]) if lines else ""
    return text if len(text) <= _ERROR_CHARS else text[:_ERROR_CHARS - 1] + "…"


def _case_source(p: Problem, k: int, i: int) -> str:
    """The source of case i of test k where one line shows it: an assert entry, a humaneval check() assert."""
    test = p.tests[k] if k < len(p.tests) else None
    if not isinstance(test, str):
        return ""
    if p.format == "assert":
        return _one_line(test)
    if p.format == "humaneval":
        try:
            tree = ast.parse(test)
        except SyntaxError:
            return ""
        checks = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "check"]
        cases = [n for n in checks[-1].body if is_case(n)] if checks else []
        return _one_line(ast.get_source_segment(test, cases[i]) or "") if i < len(cases) else ""
    return ""


def _with_errors(dropped: list[str], failures: dict[int, dict[int, str]]) -> list[str]:
    """Each dropped entry with the text of its failing case appended: `tests[2] (failed: AssertionError: ...)`,
    `check case 1 (failed: ...)` (HumanEval's check() is test 0; a unittest module's entries, one per method,
    take its failing cases in order)."""
    out = []
    left = {k: list(v.values()) for k, v in failures.items()}
    for entry in dropped:
        text = ""
        if not entry.endswith("(passed)"):
            if m := re.match(r"check case (\d+) ", entry):
                text = failures.get(0, {}).get(int(m.group(1)), "")
            elif (m := re.match(r"tests\[(\d+)\]", entry)) and left.get(int(m.group(1))):
                text = left[int(m.group(1))].pop(0)
        out.append(f"{entry[:-1]}: {text})" if text and entry.endswith(")") else entry)
    return out

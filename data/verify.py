"""--verify: run each problem's reference solution in the sandbox and keep exactly the tests it passes.

Policy (docs/datasets.md): the sandbox reports one outcome per test *case* (unittest method, assert,
humaneval check-assert, stdio/call pair); a label holds entries (a unittest module holds many cases), so:
  unittest  -- a module's failing test methods are cut out of its source (drop_test_methods); the module is
               dropped whole only when every method fails, when it has none, or when the cut cannot be made
               exactly (the rewritten module must declare precisely the passing cases, checked with the
               sandbox's own planner);
  humaneval -- failing top-level asserts are cut out of check() (by source line range);
  assert / stdio / call -- each failing entry is dropped (and an assert entry that can verify nothing,
               `assert True`: it is no test case, rewards/sandbox/plan.py is_case).
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
from collections import Counter
from collections.abc import Callable

from coderl.data.formats import Problem
from coderl.rewards.labels import Label
from coderl.rewards.sandbox.plan import is_case, method_source, unittest_cases


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
        keep = _keep_unittest if p.format == "unittest" else (
            _keep_humaneval if p.format == "humaneval" else _keep_entries)
        return {"cases": len(statuses), "failed": sum(s != "passed" for s in statuses), "rewritten": False,
                **keep(p.tests, sizes, statuses)}

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
        if label.format in ("unittest", "assert"):  # an assert test that checks nothing is no case (plan.is_case)
            return [self.count_tests(Label(format=label.format, tests=(t,))) for t in label.tests]
        if label.format == "humaneval":
            return [self.count_tests(label)]
        return [1] * len(label.tests)


def _label(p: Problem) -> Label:
    return Label(format=p.format, tests=tuple(p.tests), entry_point=p.entry_point, setup_code=p.setup_code)


def _keep_unittest(tests: list, sizes: list[int], statuses: list[str]) -> dict:
    kept, kept_cases, dropped, pos, rewritten, counts = [], 0, [], 0, False, Counter()
    for k, (module, n) in enumerate(zip(tests, sizes, strict=True)):
        mine = statuses[pos:pos + n]
        pos += n
        cases = unittest_cases(module)
        names = [f"{c}.{m}" if c else "(module)" for c, m in cases]
        failing = [i for i, s in enumerate(mine) if s != "passed"]
        if n and not failing:
            kept.append(module)
            kept_cases += n
            continue
        if n and len(failing) < n:
            src = drop_test_methods(module, {cases[i] for i in failing})
            if src is not None:
                kept.append(src)
                kept_cases += n - len(failing)
                rewritten = True
                counts["test_methods_dropped"] += len(failing)
                dropped += [f"tests[{k}] {names[i]} ({mine[i]})" for i in failing]
                continue
            counts["unittest_modules_uncuttable"] += 1
        dropped += [f"tests[{k}] {names[i]} ({s})" for i, s in enumerate(mine)] if n else [f"tests[{k}] (no test method)"]
    return {"kept": kept, "kept_cases": kept_cases, "dropped": dropped, "rewritten": rewritten, "counts": counts}


def _keep_humaneval(tests: list, sizes: list[int], statuses: list[str]) -> dict:
    failing = [k for k, s in enumerate(statuses) if s != "passed"]
    dropped = [f"check case {k} ({statuses[k]})" for k in failing]
    if not sizes[0]:  # no assert of check() can depend on the program: it tests nothing
        return {"kept": [], "kept_cases": 0, "dropped": ["check (no case)"]}
    if not failing:
        return {"kept": list(tests), "kept_cases": sizes[0], "dropped": []}
    program = drop_check_asserts(tests[0], failing) if len(failing) < sizes[0] else None
    if program is None:
        dropped = [f"check case {k} ({s})" for k, s in enumerate(statuses)]
    return {"kept": [program] if program else [], "kept_cases": sizes[0] - len(failing) if program else 0,
            "dropped": dropped, "rewritten": program is not None,
            "counts": {"humaneval_asserts_dropped": len(failing)}}


def _keep_entries(tests: list, sizes: list[int], statuses: list[str]) -> dict:
    kept, kept_cases, dropped, pos = [], 0, [], 0
    for k, (test, n) in enumerate(zip(tests, sizes, strict=True)):
        mine = statuses[pos:pos + n]
        pos += n
        if n > 0 and all(s == "passed" for s in mine):
            kept.append(test)
            kept_cases += n
        else:
            dropped.append(f"tests[{k}] ({', '.join(s for s in mine if s != 'passed') or 'no case'})")
    return {"kept": kept, "kept_cases": kept_cases, "dropped": dropped}


def drop_test_methods(module: str, failing: set[tuple[str, str]]) -> str | None:
    """`module` with the (class, method) test cases in `failing` cut out of its source; None when the cut cannot
    be exact: the result must declare precisely the other cases (a method a mixin gives to two classes, a
    statement sharing a line, ...)."""
    try:
        tree = ast.parse(module)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    want = [case for case in unittest_cases(module) if case not in failing]
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    owner = {id(item): node for node in classes.values() for item in node.body}
    cuts: dict[int, ast.stmt] = {}
    for cls, method in failing:
        home = owner.get(id(method_source(classes, cls, method)))
        if home is None:
            return None
        for item in home.body:  # every def of that name: cutting only the last would revive an earlier one
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name == method:
                cuts[id(item)] = item
    lines = module.splitlines(keepends=True)
    drop: set[int] = set()
    pads: dict[int, str] = {}
    for item in cuts.values():
        first = min([item.lineno, *(d.lineno for d in item.decorator_list)])
        home = owner[id(item)]
        others = [s for s in home.body if id(s) not in cuts]
        if first <= home.lineno or any(s.lineno <= item.end_lineno and s.end_lineno >= first for s in others):
            return None  # shares a line with its class header or another statement
        line = lines[first - 1]
        pads[first] = line[:len(line) - len(line.lstrip())] + "pass\n"  # a class left with no body stays valid
        drop.update(range(first, item.end_lineno + 1))
    out = "".join(pads.get(no, "") if no in drop else line for no, line in enumerate(lines, 1))
    try:
        ast.parse(out)
    except SyntaxError:
        return None
    return out if unittest_cases(out) == want else None


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

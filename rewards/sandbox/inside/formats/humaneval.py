"""`humaneval`: exactly one program defining `check(candidate)`; each top-level statement of check() holding an
assert that can depend on the program is one test case (is_case), the statements before it its setup. --verify
cuts the failing cases out of check() by source lines (keep)."""

import ast
from collections import Counter

from ..framing import Status
from .common import PARSE_ERRORS, checks_something, source_tests

NAME = "humaneval"
HOOKS = frozenset({"check", "candidate"})


def validate_tests(tests) -> str | None:
    problem = source_tests(tests)
    if problem is None and len(tests) != 1:
        return "label.tests must hold exactly one check program for format 'humaneval'"
    return problem


NEEDS_ENTRY_POINT = True


def is_case(stmt: ast.stmt) -> bool:
    """A top-level statement of check() that is one humaneval test case: not a def, and holds an assert whose
    condition can depend on the program (see checks_something); other statements run, but are not cases."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return False
    return any(isinstance(n, ast.Assert) and checks_something(n) for n in ast.walk(stmt))


def units(program: str) -> tuple[list, str]:
    """Units {"setup": src, "test": src}: each top-level statement of check() that is_case is one test case;
    the statements before it are its setup, those after the last one end the last case. Falls back to one
    case = check(candidate) when check() has no assert at all (it checks by raising), and to no case when
    its asserts can none of them depend on the program."""
    whole = [{"setup": "", "test": "check(__candidate__)"}]
    try:
        tree = ast.parse(program)
    except PARSE_ERRORS:
        return whole, "candidate"
    checks = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "check"]
    if not checks or not checks[-1].args.args:
        return whole, "candidate"
    fn = checks[-1]
    param = fn.args.args[0].arg
    out, pending = [], []
    for stmt in fn.body:
        if is_case(stmt):
            out.append({"setup": "\n".join(ast.unparse(s) for s in pending), "test": ast.unparse(stmt)})
            pending = []
        else:
            pending.append(stmt)
    if pending and out:  # statements after the last assert still check (a raise, a helper): the last case runs them
        out[-1]["test"] += "\n" + "\n".join(ast.unparse(s) for s in pending)
    if not out and any(isinstance(n, ast.Assert) for n in ast.walk(fn)):
        return [], param  # asserts, none of which can depend on the program: nothing to pass
    try:
        for u in out:
            compile(u["setup"], "<check>", "exec")
            compile(u["test"], "<check>", "exec")
    except SyntaxError:  # e.g. `return` in check's body: cannot be split, run it whole
        return whole, param
    return (out or whole), param


def plan(label) -> dict:
    cases, param = units(label.tests[0])
    return {"plan": cases, "check_param": param, "tests": list(label.tests)}


def runner(job, ns):
    spec = job.spec
    entry = spec.entry_point
    if entry not in ns:
        raise NameError(f"entry point {entry!r} is not defined by the program")
    exec(spec.code(spec.tests[0], "<check program>"), ns)
    ns[spec.check_param] = ns["__candidate__"] = ns[entry]
    first = min(job.order) if job.order else 0
    for unit in spec.plan[:first]:  # a replaced candidate replays the setup of the cases before it
        try:
            exec(spec.code(unit["setup"], "<check>"), ns)
        except Exception:
            pass

    def case(i):
        unit = spec.plan[i]
        if unit["setup"]:
            exec(spec.code(unit["setup"], "<check>"), ns)
        exec(spec.code(unit["test"], "<check>"), ns)

    return lambda: job.each(case)


def keep(tests, statuses, counts) -> dict:
    """--verify: check() with its failing cases cut out (none left, or no case at all: nothing kept)."""
    statuses = statuses[:counts[0]]
    failing = [k for k, s in enumerate(statuses) if s != Status.PASSED]
    if not counts[0]:  # no assert of check() can depend on the program: it tests nothing
        return {"kept": [], "kept_cases": 0, "dropped": ["check (no case)"]}
    if not failing:
        return {"kept": list(tests), "kept_cases": counts[0], "dropped": []}
    dropped = [f"check case {k} ({statuses[k]})" for k in failing]
    program = drop_check_asserts(tests[0], failing) if len(failing) < counts[0] else None
    if program is None:
        dropped = [f"check case {k} ({s})" for k, s in enumerate(statuses)]
    return {"kept": [program] if program else [], "kept_cases": counts[0] - len(failing) if program else 0,
            "dropped": dropped, "rewritten": program is not None,
            "counts": {"humaneval_asserts_dropped": len(failing)}}


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

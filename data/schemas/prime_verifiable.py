"""PrimeIntellect/verifiable-coding-problems (and SYNTHETIC-1's code tasks), open-r1/verifiable-coding-problems-python.

One layout, three spellings: the question is `prompt` (PrimeIntellect), `problem_statement` (open-r1's python
copy) or `problem` (its 10k / decontaminated copies); `verification_info` is a JSON (or Python-literal) string
at PrimeIntellect and a struct at open-r1: {"language", "test_cases": [{"type", "input", "output", "fn_name"}]}.
`stdin_stdout` cases are stdio tests; `function_call` cases call `fn_name` with `input`, the argument list, as
genesys's CodeVerifier does (`method(*args)`).
"""

from __future__ import annotations

from .. import prompting
from . import CellError, Problem, RowContext, Skip, text
from .apps_taco import io_tests
from .cells import fenced_code, literal, maybe_literal

NAME = "prime_verifiable"
SOURCE = "verifiable-coding-problems"
REQUIRED = ("gold_standard_solution", "verification_info")
OPTIONAL = ("prompt", "problem_statement", "problem", "problem_id", "in_source_id", "task_type")
HAS_REFERENCE = True
QUESTION_COLUMNS = ("prompt", "problem_statement", "problem")
CODE_TASK = "verifiable_code"  # SYNTHETIC-1 mixes math, code-understanding and judged tasks into one table


def _cases(row: dict) -> list[dict]:
    info = literal(row.get("verification_info"), "verification_info")
    if not isinstance(info, dict):
        raise CellError("verification_info", f"expected an object with 'test_cases', got {type(info).__name__}")
    language = info.get("language")
    if language is not None and str(language).strip().lower() not in ("python", "python3"):
        raise Skip("language_not_python")
    cases = literal(info.get("test_cases"), "verification_info.test_cases")
    if cases is None or cases == []:
        raise Skip("no_tests")
    if not isinstance(cases, list) or not all(isinstance(c, dict) for c in cases):
        raise CellError("verification_info.test_cases", "expected a list of {type, input, output} objects")
    return cases


def _tests(cases: list[dict]) -> tuple[str, list, str | None]:
    field = "verification_info.test_cases"
    kinds = {c.get("type") for c in cases}
    if kinds == {"stdin_stdout"}:
        return io_tests({"inputs": [c.get("input") for c in cases], "outputs": [c.get("output") for c in cases]},
                        field)
    if kinds != {"function_call"}:
        raise Skip("mixed_test_types" if len(kinds) > 1 else "unknown_test_type")
    names = {c.get("fn_name") for c in cases}
    if len(names) != 1 or not isinstance(next(iter(names)), str):
        raise CellError(f"{field}[0].fn_name",
                        f"function_call cases must name one function, got {sorted(map(str, names))}")
    args = []
    for k, c in enumerate(cases):
        a = literal(c.get("input"), f"{field}[{k}].input")
        if not isinstance(a, list):
            raise CellError(f"{field}[{k}].input", f"expected the argument list, got {type(a).__name__}")
        args.append(a)
    outputs = [maybe_literal(c.get("output")) for c in cases]
    return io_tests({"inputs": args, "outputs": outputs, "fn_name": next(iter(names))}, field)


def convert(row: dict, ctx: RowContext) -> Problem:
    task = text(row, "task_type", required=False)
    if task is not None and task != CODE_TASK:
        raise Skip("not_code_task")
    column = next((c for c in QUESTION_COLUMNS if row.get(c) is not None), QUESTION_COLUMNS[0])
    question = text(row, column)
    fmt, tests, fn_name = _tests(_cases(row))
    reference = fenced_code(text(row, "gold_standard_solution", required=False))
    user = prompting.task_prompt(question, fmt, fn_name, reference)
    return Problem(
        source_id=ctx.source_id(row.get("problem_id"), row.get("in_source_id")),
        question=question,
        user=user,
        format=fmt,
        tests=tests,
        entry_point=fn_name,
        reference=reference,
    )

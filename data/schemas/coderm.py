"""CodeRM-UnitTest (KAKA22/CodeRM-UnitTest): machine-generated unittest modules per problem."""

from __future__ import annotations

from .. import prompting
from . import CellError, Problem, RowContext, Skip, json_cell, text

NAME = "coderm"
SOURCE = "CodeRM-UnitTest"
REQUIRED = ("question", "code_ground_truth", "unit_tests")
OPTIONAL = ("task_id",)  # code_generate is never read: it is large and unused
HAS_REFERENCE = True


def _tests(row: dict) -> list[str]:
    raw = json_cell(row, "unit_tests")
    if isinstance(raw, dict):  # a single test object
        raw = [raw]
    if not isinstance(raw, list):
        raise CellError("unit_tests", f"expected a JSON list of {{ut_id, code}}, got {type(raw).__name__}")
    tests = []
    for i, t in enumerate(raw):
        code = t.get("code") if isinstance(t, dict) else t
        if code is None:
            continue
        if not isinstance(code, str):
            raise CellError(f"unit_tests[{i}].code", f"expected a string, got {type(code).__name__}")
        if code.strip():
            tests.append(code)
    return tests


def convert(row: dict, ctx: RowContext) -> Problem:
    question = text(row, "question")
    reference = text(row, "code_ground_truth")
    tests = _tests(row)
    if not tests:
        raise Skip("no_tests")
    defs = prompting.top_level_defs(reference)
    if defs is None:
        raise Skip("reference_unparsable")
    called = prompting.referenced(list(defs), tests)  # source order
    if not called:
        raise Skip("no_signature")  # tests call nothing the reference defines: no fair prompt possible
    sig = prompting.signatures(reference, set(called))
    return Problem(
        source_id=ctx.source_id(row.get("task_id")),
        question=question,
        user=prompting.user_prompt(question, mode="function", signature=sig),
        format="unittest",
        tests=tests,
        entry_point=called[0],
        reference=reference,
    )

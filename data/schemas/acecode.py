"""TIGER-Lab/AceCode-87K: a LeetCode-like question, LLM-written assert tests, sampled inferences with pass rates.

No gold solution: AceCoder's pipeline (data/acecode_89k/generate_main_dataset.py) stores each sampled
completion with the fraction of the tests it passed, so a completion with `pass_rate` 1.0 is a program that
passed every test; it is the reference `--verify` runs. `context_messages` is the question as one user message.
"""

from __future__ import annotations

from typing import Any

from .. import prompting
from . import CellError, Problem, RowContext, Skip, str_list, text
from .cells import fenced_code
from .mbpp import _first_call

NAME = "acecode"
SOURCE = "AceCode-87K"
REQUIRED = ("question", "test_cases", "inferences")
OPTIONAL = ("id", "source")
HAS_REFERENCE = True


def passing_inference(inferences: Any) -> str | None:
    """The first completion with pass_rate 1.0 whose code parses, unfenced as the grader extracts it."""
    if inferences is None:
        return None
    if not isinstance(inferences, list):
        raise CellError("inferences", f"expected a list of {{completion, pass_rate}}, got {type(inferences).__name__}")
    for k, inf in enumerate(inferences):
        if not isinstance(inf, dict):
            raise CellError(f"inferences[{k}]", f"expected an object, got {type(inf).__name__}")
        if inf.get("pass_rate") != 1.0:
            continue
        code = fenced_code(inf.get("completion"))
        if code is not None and prompting.top_level_defs(code) is not None:
            return code
    return None


def convert(row: dict, ctx: RowContext) -> Problem:
    question = text(row, "question")
    tests = str_list(row.get("test_cases"), "test_cases")
    if not tests:
        raise Skip("no_tests")
    reference = passing_inference(row.get("inferences"))
    called = prompting.referenced(list(prompting.top_level_defs(reference or "") or {}), tests)
    sig = prompting.signatures(reference, set(called)) if called else None
    entry = called[0] if called else _first_call(tests[0])
    return Problem(
        source_id=ctx.source_id(row.get("id")),
        question=question,
        user=prompting.user_prompt(question, mode="function", signature=sig, entry_point=entry),
        format="assert",
        tests=tests,
        entry_point=entry,
        reference=reference,
        extra={"subset": row["source"]} if row.get("source") else {},
    )

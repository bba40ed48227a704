"""HumanEval (openai/human-eval): prompt = signature + docstring, one check(candidate) program."""

from __future__ import annotations

from .. import prompting
from . import CellError, Problem, RowContext, text

NAME = "humaneval"
SOURCE = "humaneval"
REQUIRED = ("prompt", "canonical_solution", "test", "entry_point")
OPTIONAL = ("task_id",)
HAS_REFERENCE = True
BENCHMARK = True  # openai_humaneval is an evaluation set: its rows are test rows


def convert(row: dict, ctx: RowContext) -> Problem:
    prompt = text(row, "prompt")
    entry_point = text(row, "entry_point").strip()
    if not entry_point.isidentifier():
        raise CellError("entry_point", f"is not a Python identifier: {entry_point!r}")
    test = text(row, "test")
    solution = text(row, "canonical_solution", required=False) or ""
    return Problem(
        source_id=ctx.source_id(row.get("task_id")),
        question=prompt,
        user=prompting.user_prompt(prompt, mode="complete"),
        format="humaneval",
        tests=[test],
        entry_point=entry_point,
        reference=(prompt + solution) if solution.strip() else None,
        # The exact prompt text (the user message strips it): a human-eval-style completion continues it.
        extra={"prompt": prompt},
    )

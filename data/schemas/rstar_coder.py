"""microsoft/rStar-Coder, config `synthetic_rl_testcase`: a question and its stdio tests, no reference.

`inputs` and `outputs` are JSON-serialised lists of strings (list columns are read as well); the outputs are
the ones rStar-Coder's mutual verification agreed on. `seed_testcase` shares the columns but adds
`func_name` / `class_name` for function-call tests: those rows are counted, not read as stdio.
"""

from __future__ import annotations

from .. import prompting
from . import Problem, RowContext, Skip, text
from .apps_taco import io_tests
from .cells import literal

NAME = "rstar_coder"
SOURCE = "rStar-Coder"
REQUIRED = ("question_id", "question", "inputs", "outputs")
OPTIONAL = ("func_name", "class_name")
HAS_REFERENCE = False


def convert(row: dict, ctx: RowContext) -> Problem:
    if text(row, "func_name", required=False) or text(row, "class_name", required=False):
        raise Skip("function_call_tests")  # seed_testcase's call-based rows: not this config's layout
    question = text(row, "question")
    spec = {"inputs": literal(row.get("inputs"), "inputs"), "outputs": literal(row.get("outputs"), "outputs")}
    fmt, tests, _ = io_tests(spec, "inputs")
    return Problem(
        source_id=ctx.source_id(row.get("question_id")),
        question=question,
        user=prompting.user_prompt(question, mode="stdio"),
        format=fmt,
        tests=tests,
    )

"""agentica-org/DeepCoder-Preview-Dataset (subsets primeintellect, taco, lcbv5, codeforces): `problem`, `tests`
(JSON text: a list of test dicts or an APPS-style dict), `solutions` (gold solutions, fenced in primeintellect),
`starter_code` and `metadata` (`func_name` of LiveCodeBench's functional problems).

Built by rllm's rllm/data/preprocess/code/*.ipynb and graded by rllm/rewards/code_reward.py: primeintellect and
taco through TACO's harness (stdin/stdout, or calls whose outputs APPS wraps in a list), lcbv5 through
LiveCodeBench's (one JSON argument per input line, `class Solution` methods), codeforces as stdin/stdout.
"""

from __future__ import annotations

from pathlib import Path

from .. import prompting
from . import CellError, Problem, RowContext, json_cell, text
from .testcases import from_spec, python_reference

NAME = "deepcoder"
SOURCE = "deepcoder"
REQUIRED = ("problem", "tests")
OPTIONAL = ("solutions", "starter_code", "metadata")
HAS_REFERENCE = True
REFERENCE = "solutions"  # lcbv5's and codeforces' files have none: their rows are kept unverified
SUBSETS = ("primeintellect", "taco", "lcbv5", "codeforces")


def _subset(file: str) -> str | None:
    """The subset a file belongs to, from the hub's folders (primeintellect/train-00000-of-00005.parquet)."""
    return next((p for p in reversed(Path(file).parent.parts) if p in SUBSETS), None)


def convert(row: dict, ctx: RowContext) -> Problem:
    question = text(row, "problem")
    meta = json_cell(row, "metadata", required=False)
    if meta is not None and not isinstance(meta, dict):
        raise CellError("metadata", f"expected an object, got {type(meta).__name__}")
    fmt, tests, fn_name, setup = from_spec(json_cell(row, "tests"), "tests", (meta or {}).get("func_name"))
    reference = python_reference(row.get("solutions"), "solutions")
    starter = text(row, "starter_code", required=False)
    user = prompting.task_prompt(question, fmt, fn_name, reference, starter)
    subset = _subset(ctx.file)
    return Problem(
        source_id=f"{subset}/{ctx.fallback_id}" if subset else ctx.fallback_id,
        question=question,
        user=user,
        format=fmt,
        tests=tests,
        entry_point=fn_name,
        setup_code=setup,
        reference=reference,
        source=f"deepcoder/{subset}" if subset else None,
    )

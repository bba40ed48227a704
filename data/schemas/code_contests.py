"""deepmind/code_contests: a description, public + private + generated stdio tests, solutions by language code.

Layout (contest_problem.proto as the hub's parquet writes it): each test set is a struct of two lists,
{"input": [str], "output": [str]}; `solutions` is {"language": [int], "solution": [str]} with the proto's
Language enum (0 unknown, 1 PYTHON = Python 2, 2 CPP, 3 PYTHON3, 4 JAVA); `time_limit` is a Duration struct
{"seconds", "nanos"} and `memory_limit_bytes` an int: the proto's "resource constraints to use when executing
solutions".
"""

from __future__ import annotations

from typing import Any

from .. import prompting
from . import CellError, Problem, RowContext, Skip, text
from .apps_taco import io_tests

NAME = "code_contests"
SOURCE = "code_contests"
REQUIRED = ("description", "public_tests", "private_tests", "generated_tests", "solutions")
OPTIONAL = ("name", "time_limit", "memory_limit_bytes", "input_file", "output_file")
HAS_REFERENCE = True
TEST_SETS = ("public_tests", "private_tests", "generated_tests")
PYTHON3 = 3  # ContestProblem.Solution.Language
MAX_TIME_LIMIT_S = 60.0  # label.time_limit_s's bound (rewards/labels.py)


def _pairs(row: dict, name: str) -> tuple[list, list]:
    cell = row.get(name)
    if cell is None:
        return [], []
    if not isinstance(cell, dict):
        raise CellError(name, f"expected a struct of 'input' and 'output' lists, got {type(cell).__name__}")
    inputs, outputs = cell.get("input") or [], cell.get("output") or []
    if len(inputs) != len(outputs):
        raise CellError(name, f"'input' has {len(inputs)} entries but 'output' has {len(outputs)}")
    return list(inputs), list(outputs)


def python3_reference(solutions: Any) -> str | None:
    """The first PYTHON3 solution that parses (the proto's language code 3; code 1 is Python 2)."""
    if solutions is None:
        return None
    if not isinstance(solutions, dict):
        raise CellError("solutions", f"expected a struct of 'language' and 'solution' lists, got "
                                     f"{type(solutions).__name__}")
    langs, codes = solutions.get("language") or [], solutions.get("solution") or []
    if len(langs) != len(codes):
        raise CellError("solutions", f"'language' has {len(langs)} entries but 'solution' has {len(codes)}")
    for lang, code in zip(langs, codes, strict=True):
        if lang == PYTHON3 and isinstance(code, str) and prompting.top_level_defs(code) is not None:
            return code
    return None


def time_limit_s(row: dict) -> float | None:
    """The problem's per-test limit in seconds, from its Duration struct; None when it states none."""
    tl = row.get("time_limit")
    if tl is None:
        return None
    if not isinstance(tl, dict):
        raise CellError("time_limit", f"expected a Duration struct {{seconds, nanos}}, got {type(tl).__name__}")
    s = (tl.get("seconds") or 0) + (tl.get("nanos") or 0) / 1e9
    return min(float(s), MAX_TIME_LIMIT_S) if s > 0 else None


def convert(row: dict, ctx: RowContext) -> Problem:
    if text(row, "input_file", required=False) or text(row, "output_file", required=False):
        raise Skip("file_io")  # the program reads/writes named files, not stdin/stdout
    question = text(row, "description")
    inputs, outputs = [], []
    for name in TEST_SETS:
        i, o = _pairs(row, name)
        inputs += i
        outputs += o
    fmt, tests, _ = io_tests({"inputs": inputs, "outputs": outputs}, "tests")
    extra = {}
    if row.get("memory_limit_bytes"):
        extra["memory_limit_mb"] = round(row["memory_limit_bytes"] / 2**20)
    return Problem(
        source_id=ctx.source_id(row.get("name")),
        question=question,
        user=prompting.user_prompt(question, mode="stdio"),
        format=fmt,
        tests=tests,
        reference=python3_reference(row.get("solutions")),
        time_limit_s=time_limit_s(row),
        extra=extra,
    )

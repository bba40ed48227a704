"""livecodebench/code_generation_lite (a benchmark: every row is a test row): `question_content`,
`public_test_cases` (JSON text) and `private_test_cases` (JSON text, or base64 of zlib of a pickle of it), each a
list of {"input", "output", "testtype"}; `metadata` (JSON text) names a functional problem's `func_name`.

As lcb_runner (benchmarks/code_generation.py, evaluation/testing_util.py) reads and grades them: stdin tests
are stdin/stdout programs; functional tests call `Solution().func_name(*args)` (LeetCode's `class Solution`,
whose skeleton is `starter_code`), each input line one JSON argument, the output one JSON value.
"""

from __future__ import annotations

from .. import prompting
from . import CellError, Problem, RowContext, json_cell, text
from .testcases import from_spec, lcb_private_tests

NAME = "livecodebench"
SOURCE = "livecodebench"
REQUIRED = ("question_content", "public_test_cases", "private_test_cases")
OPTIONAL = ("question_id", "question_title", "starter_code", "metadata", "platform")
HAS_REFERENCE = False
BENCHMARK = True


def convert(row: dict, ctx: RowContext) -> Problem:
    question = text(row, "question_content")
    public = json_cell(row, "public_test_cases")
    if not isinstance(public, list):
        raise CellError("public_test_cases", f"expected a list of tests, got {type(public).__name__}")
    private = row.get("private_test_cases")
    private = lcb_private_tests(private, "private_test_cases") if isinstance(private, str) and private.strip() \
        else (private or [])
    meta = json_cell(row, "metadata", required=False) or {}
    if not isinstance(meta, dict):
        raise CellError("metadata", f"expected an object, got {type(meta).__name__}")
    fmt, tests, fn_name, setup = from_spec(public + list(private), "public_test_cases+private_test_cases",
                                    meta.get("func_name"))
    starter = text(row, "starter_code", required=False)
    user = prompting.task_prompt(question, fmt, fn_name, starter_code=starter if fmt == "call" else None)
    return Problem(
        source_id=ctx.source_id(row.get("question_id")),
        question=question,
        user=user,
        format=fmt,
        tests=tests,
        entry_point=fn_name,
        setup_code=setup,
        extra={"platform": row["platform"]} if row.get("platform") else {},
    )

"""MBPP (google-research mbpp): a text description, a reference `code` and assert statements.

Two shapes: the full release (`text`, `test_setup_code`) and the sanitized one (`prompt`, `test_imports`:
imports such as `import math` that MBPP's own evaluation runs before the asserts, which call
`math.isclose` without the solution importing it).
"""

from __future__ import annotations

import ast

from .. import prompting
from . import Problem, RowContext, Skip, str_list, text

NAME = "mbpp"
SOURCE = "mbpp"
REQUIRED = ("code", "test_list")
OPTIONAL = ("task_id", "text", "prompt", "test_setup_code", "test_imports", "challenge_test_list")
HAS_REFERENCE = True
_BUILTINS = {"set", "list", "tuple", "sorted", "abs", "round", "len", "str", "int", "float", "dict"}


def convert(row: dict, ctx: RowContext) -> Problem:
    question = text(row, "text", required=row.get("prompt") is None) or text(row, "prompt")
    reference = text(row, "code", required=False)
    tests = str_list(row.get("test_list"), "test_list")
    # challenge tests are extra, harder asserts on the same function: they are real tests, keep them.
    tests += str_list(row.get("challenge_test_list"), "challenge_test_list")
    if not tests:
        raise Skip("no_tests")
    called = prompting.referenced(list(prompting.top_level_defs(reference or "") or {}), tests)
    sig = prompting.signatures(reference, set(called)) if called else None
    return Problem(
        source_id=ctx.source_id(row.get("task_id")),
        question=question,
        user=prompting.user_prompt(question, mode="function", signature=sig,
                                   entry_point=_first_call(tests[0])),
        format="assert",
        tests=tests,
        entry_point=called[0] if called else _first_call(tests[0]),
        setup_code="\n".join(str_list(row.get("test_imports"), "test_imports")
                              + [text(row, "test_setup_code", required=False) or ""]).strip("\n"),
        reference=reference,
        split=_own_split(row),
    )


# MBPP's README: task ids 1-10 are the few-shot prompts, 11-510 the test set, 511-600 validation, 601-974 train.
_TEST_IDS, _VALIDATION_IDS = range(11, 511), range(511, 601)


def _own_split(row: dict) -> str | None:
    """MBPP's own split of a row of its full or sanitized release (integer task_id, and the release's own
    challenge_test_list or test_imports column), else None; a file of all its tasks is split as MBPP is."""
    tid = row.get("task_id")
    if not isinstance(tid, int) or isinstance(tid, bool) or not 1 <= tid <= 974:
        return None
    if "challenge_test_list" not in row and "test_imports" not in row:
        return None
    return "test" if tid in _TEST_IDS or tid in _VALIDATION_IDS else "train"


def _first_call(assert_src: str) -> str | None:
    """Name of the first function called in an assert (MBPP asserts call the function under test)."""
    try:
        tree = ast.parse(assert_src)
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id not in _BUILTINS:
            return node.func.id
    return None

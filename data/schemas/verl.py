"""Already verl-formatted parquet: `prompt` (chat messages), `reward_model.ground_truth`, `data_source`, `ability`.

The ground truths of the files rllm (DeepCoder), code-r1, Skywork-OR1 and PRIME (Eurus-2-RL-Data) write, as their
reward functions read them (docs/datasets.md, "verl"); rows whose `ability` is not code are skipped by reason.
"""

from __future__ import annotations

import ast
import json
from typing import Any

from .. import prompting
from . import CellError, Problem, RowContext, Skip, text
from .testcases import from_spec

NAME = "verl"
SOURCE = "verl"
REQUIRED = ("prompt", "reward_model")
OPTIONAL = ("data_source", "extra_info", "ability")
HAS_REFERENCE = False


def _user_message(prompt: Any) -> str:
    if isinstance(prompt, str):  # some exports store the messages as a JSON string
        try:
            prompt = json.loads(prompt)
        except json.JSONDecodeError:
            return prompt
    if not isinstance(prompt, list):
        raise CellError("prompt", f"expected a list of chat messages, got {type(prompt).__name__}")
    users = [m.get("content") for m in prompt if isinstance(m, dict) and m.get("role") == "user"]
    if not users or not isinstance(users[-1], str) or not users[-1].strip():
        raise CellError("prompt", "has no non-empty message with role 'user'")
    return users[-1]  # our own system prompt replaces theirs, so answer formats stay consistent


def _ground_truth(row: dict) -> tuple[str, list, str | None, str]:
    """(format, tests, fn_name, setup_code) of the row's reward_model.ground_truth."""
    field = "reward_model.ground_truth"
    gt = _decoded_ground_truth(row, field)
    found = _from_struct(gt, field) if isinstance(gt, dict) else _from_list_or_text(gt, field)
    if found is not None:
        return found
    raise CellError(field, "cannot detect the test format (known: {inputs, outputs[, fn_name]}, a list of "
                           "{input, output} tests, {functional}, {pytest}, a list of assert statements, a unittest "
                           "module); a row whose `ability` is not code is skipped by itself; to skip and count "
                           "rows like this one, run with --on_error skip")


def _decoded_ground_truth(row: dict, field: str):
    """reward_model.ground_truth as data: a JSON string decoded, plain text (maybe a test program) kept."""
    rm = row.get("reward_model")
    if rm is None:
        raise CellError("reward_model", "is null")
    if isinstance(rm, str):
        try:
            rm = json.loads(rm)
        except json.JSONDecodeError as e:
            raise CellError("reward_model", f"is not valid JSON: {e.msg}") from None
    if not isinstance(rm, dict):
        raise CellError("reward_model", f"expected a struct with 'ground_truth', got {type(rm).__name__}")
    gt = rm.get("ground_truth")
    if gt is None or (isinstance(gt, str) and not gt.strip()):
        raise CellError(field, "is null or empty")
    if isinstance(gt, str):
        try:
            return json.loads(gt)
        except json.JSONDecodeError:
            pass  # plain text: maybe a test program, checked by _from_list_or_text
    return gt


def _from_struct(gt: dict, field: str) -> tuple[str, list, str | None, str] | None:
    """A struct ground truth: code-r1's {functional}/{pytest}, Skywork's check() rows, TACO-style test specs."""
    if "functional" in gt:  # code-r1: a program run after the solution; it passes when it raises nothing
        return "assert", [_program(gt["functional"], f"{field}.functional")], None, ""
    if "pytest" in gt:  # code-r1's KodCode rows: a pytest file importing the program as `solution`
        return "pytest", [_program(gt["pytest"], f"{field}.pytest")], None, ""
    if "import_prefix" in gt and "test_code" in gt and "entry_point" in gt:
        return _check_lines(gt, field)
    if "question_id" in gt and "inputs" not in gt:  # Skywork-OR1's LiveCodeBench rows: tests kept elsewhere
        raise Skip("tests_not_in_file")
    if "inputs" in gt and "outputs" in gt:
        return from_spec(gt, field)
    return None


def _from_list_or_text(gt, field: str) -> tuple[str, list, str | None, str] | None:
    """A list of tests (rllm's DeepCoder specs, assert statements) or a test program's text."""
    if isinstance(gt, list) and gt and all(isinstance(t, dict) for t in gt):  # rllm's DeepCoder files
        return from_spec(gt, field)
    if isinstance(gt, list) and gt and all(isinstance(t, str) and t.lstrip().startswith("assert") for t in gt):
        return "assert", list(gt), None, ""
    if isinstance(gt, str) and "unittest" in gt and "TestCase" in gt:
        return "unittest", [gt], None, ""
    if isinstance(gt, str) and "from solution import" in gt and "def test" in gt:  # rllm's kodcode rows
        return "pytest", [gt], None, ""
    if isinstance(gt, str) and _asserts(gt):  # a test program run after the solution (rllm's humanevalplus)
        return "assert", [gt], None, ""
    return None


CODE_ABILITIES = ("code", "coding")


def _asserts(text: str) -> bool:
    """True for Python source that asserts something: a test program, not an answer."""
    try:
        return any(isinstance(n, ast.Assert) for n in ast.walk(ast.parse(text)))
    except (SyntaxError, ValueError):
        return False


def _ability(row: dict) -> str | None:
    a = row.get("ability")
    return a.strip().lower() or None if isinstance(a, str) else None


def _program(value, field: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise CellError(field, "expected the test program's source text")
    return value


def _check_lines(gt: dict, field: str) -> tuple[str, list, None, str]:
    """Skywork-OR1's HumanEval-style rows: `test_code` defines `check(candidate)`, one assert per statement; Skywork
    runs each assert as its own program, `check(entry_point)` after the solution and `import_prefix` before it."""
    code = _program(gt["test_code"], f"{field}.test_code")
    entry = gt["entry_point"]
    if not isinstance(entry, str) or not entry.strip():
        raise CellError(f"{field}.entry_point", "is not a name")
    call = f"\ncheck({entry.strip()})"
    prefix = gt["import_prefix"] if isinstance(gt["import_prefix"], str) else ""
    cases = _check_cases(code)
    return "assert", [c + call for c in cases] if cases else [code + call], None, prefix


def _check_cases(code: str) -> list[str] | None:
    """One program per assert of check()'s body, each after the statements before it that are not asserts (a
    multi-line assert stays whole); None when check() cannot be split so (the whole program is then one case)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return None
    checks = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "check"]
    if len(checks) != 1 or tree.body[-1] is not checks[0] or checks[0].body[0].lineno == checks[0].lineno:
        return None
    lines = code.split("\n")
    head, setup, cases = lines[:checks[0].body[0].lineno - 1], [], []
    for stmt in checks[0].body:
        seg = lines[stmt.lineno - 1:stmt.end_lineno]
        if isinstance(stmt, ast.Assert):
            cases.append("\n".join(head + setup + seg))
        else:
            setup += seg
    return cases or None


def convert(row: dict, ctx: RowContext) -> Problem:
    user = _user_message(row.get("prompt"))
    if _ability(row) not in (None, *CODE_ABILITIES):  # a mixed file's math rows (Eurus-2-RL-Data)
        raise Skip(f"not_code_{_ability(row)}")
    fmt, tests, fn_name, setup = _ground_truth(row)
    if not tests:
        raise Skip("no_tests")
    if fmt == "call" and f"def {fn_name}" not in user:
        user = prompting.user_prompt(user, mode="function", entry_point=fn_name)
    extra = row.get("extra_info") if isinstance(row.get("extra_info"), dict) else {}
    return Problem(
        source_id=ctx.source_id(extra.get("index", extra.get("id"))),
        question=user,
        user=user,
        format=fmt,
        tests=tests,
        entry_point=fn_name,
        setup_code=setup,
        source=text(row, "data_source", required=False),
    )

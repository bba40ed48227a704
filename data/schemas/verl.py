"""Already verl-formatted parquet: `prompt` (chat messages), `reward_model.ground_truth`, `data_source`."""

from __future__ import annotations

import json
from typing import Any

from coderl.data import prompting
from coderl.data.schemas import CellError, Problem, RowContext, Skip, text
from coderl.data.schemas.apps_taco import io_tests

NAME = "verl"
SOURCE = "verl"
REQUIRED = ("prompt", "reward_model")
OPTIONAL = ("data_source", "extra_info")
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


def _ground_truth(row: dict) -> tuple[str, list, str | None]:
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
    field = "reward_model.ground_truth"
    if gt is None or (isinstance(gt, str) and not gt.strip()):
        raise CellError(field, "is null or empty")
    if isinstance(gt, str):
        try:
            gt = json.loads(gt)
        except json.JSONDecodeError:
            pass  # plain text: maybe a test program, checked below
    if isinstance(gt, dict) and "inputs" in gt and "outputs" in gt:
        return io_tests(gt, field)
    if isinstance(gt, list) and gt and all(isinstance(t, str) and t.lstrip().startswith("assert") for t in gt):
        return "assert", list(gt), None
    if isinstance(gt, str) and "unittest" in gt and "TestCase" in gt:
        return "unittest", [gt], None
    raise CellError(field, "cannot detect the test format (known: {inputs, outputs[, fn_name]} JSON, "
                           "a list of assert statements, a unittest module)")


def convert(row: dict, ctx: RowContext) -> Problem:
    user = _user_message(row.get("prompt"))
    fmt, tests, fn_name = _ground_truth(row)
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
        source=text(row, "data_source", required=False),
    )

"""Cell readers the published-layout converters share: literals written as JSON or as Python, fenced code."""

from __future__ import annotations

import ast
import json
from typing import Any

from . import CellError

_NO_VALUE = object()


def literal(value: Any, field: str, *, parse_strings: bool = True) -> Any:
    """A nested value, or a string holding it as JSON or as a Python literal (genesys and rllm read these
    cells with ast.literal_eval, so both spellings are published). A CellError names `field` otherwise."""
    if not isinstance(value, str) or not parse_strings:
        return value
    try:
        return json.loads(value)
    except json.JSONDecodeError:
        pass
    try:
        return ast.literal_eval(value)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        raise CellError(field, "is neither JSON nor a Python literal") from None


def maybe_literal(value: Any) -> Any:
    """`value` parsed as JSON or a Python literal when it is a string that holds one; else `value` itself."""
    if not isinstance(value, str):
        return value
    try:
        return literal(value, "")
    except CellError:
        return value


def fenced_code(text: str | None) -> str | None:
    """The program in a solution written as a chat answer (a ```python block), as the grader extracts it."""
    if not text or not text.strip():
        return None
    from coderl.rewards.extract import extract_code

    code = extract_code(text).code
    return code if code and code.strip() else None

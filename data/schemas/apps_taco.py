"""APPS / TACO: `input_output` JSON with inputs/outputs (+ fn_name for call-based problems)."""

from __future__ import annotations

from typing import Any

from .. import prompting
from . import CellError, Problem, RowContext, Skip, json_cell, text

NAME = "apps_taco"
SOURCE = "apps_taco"
REQUIRED = ("question", "solutions", "input_output")
OPTIONAL = ("starter_code", "problem_id", "id", "task_id")
HAS_REFERENCE = True


def _as_text(v: Any, field: str) -> str:
    if isinstance(v, str):
        return v
    if isinstance(v, list) and all(isinstance(x, str) for x in v):  # some TACO rows store lines
        return "\n".join(v) + "\n"
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return str(v)
    raise CellError(field, f"expected a string (or list of lines), got {type(v).__name__}")


def io_tests(spec: Any, field: str) -> tuple[str, list, str | None]:
    """(format, tests, fn_name) from an APPS-style {"inputs", "outputs", "fn_name"?} object.

    Call-based: each input is the list of positional args. APPS/TACO wrap every expected return value
    in a one-element list; when *all* outputs of a problem are one-element lists they are unwrapped
    (the documented APPS convention; --verify catches problems where that guess is wrong).
    """
    if not isinstance(spec, dict):
        raise CellError(field, f"expected an object with 'inputs' and 'outputs', got {type(spec).__name__}")
    inputs, outputs = spec.get("inputs"), spec.get("outputs")
    if not isinstance(inputs, list) or not isinstance(outputs, list):
        raise CellError(field, "'inputs' and 'outputs' must both be lists")
    if len(inputs) != len(outputs):
        raise CellError(field, f"'inputs' has {len(inputs)} entries but 'outputs' has {len(outputs)}")
    fn_name = spec.get("fn_name")
    if fn_name is not None and (not isinstance(fn_name, str) or not fn_name.strip().isidentifier()):
        raise CellError(f"{field}.fn_name", f"is not a Python identifier: {fn_name!r}")
    if not inputs:
        raise Skip("no_tests")
    if fn_name:
        if outputs and all(isinstance(o, list) and len(o) == 1 for o in outputs):
            outputs = [o[0] for o in outputs]
        tests = [{"input": i if isinstance(i, list) else [i], "output": o} for i, o in zip(inputs, outputs, strict=True)]
        return "call", tests, fn_name.strip()
    tests = [{"input": _as_text(i, f"{field}.inputs[{k}]"), "output": _as_text(o, f"{field}.outputs[{k}]")}
             for k, (i, o) in enumerate(zip(inputs, outputs, strict=True))]
    return "stdio", tests, None


def pick_reference(solutions: Any, field: str = "solutions") -> str | None:
    """The first solution that parses as Python 3 (APPS has some Python 2 ones), else the first one."""
    if solutions is None:
        return None
    if isinstance(solutions, str):
        solutions = [solutions]
    if not isinstance(solutions, list):
        raise CellError(field, f"expected a JSON list of strings, got {type(solutions).__name__}")
    sols = [s for s in solutions if isinstance(s, str) and s.strip()]
    for s in sols:
        if prompting.top_level_defs(s) is not None:
            return s
    return sols[0] if sols else None


def convert(row: dict, ctx: RowContext) -> Problem:
    question = text(row, "question")
    fmt, tests, fn_name = io_tests(json_cell(row, "input_output"), "input_output")
    reference = pick_reference(json_cell(row, "solutions", required=False))
    starter = text(row, "starter_code", required=False)
    user = prompting.task_prompt(question, fmt, fn_name, reference, starter)
    return Problem(
        source_id=ctx.source_id(*(row.get(k) for k in ("problem_id", "id", "task_id"))),
        question=question,
        user=user,
        format=fmt,
        tests=tests,
        entry_point=fn_name,
        reference=reference,
    )

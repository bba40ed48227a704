"""KodCode (KodCode/KodCode-V1, KodCode/KodCode-Light-RL-10K): a synthesized `question`, its verified `solution`
and the pytest file (`test`) that KodCode's harness runs against `solution.py` (`from solution import f`, bare
asserts, `import pytest`): label format `pytest`. `test_info` names the functions the tests call, with their
declarations (the prompt's signature when the solution does not give one)."""

from __future__ import annotations

from .. import prompting
from . import CellError, Problem, RowContext, Skip, text

NAME = "kodcode"
SOURCE = "KodCode"
REQUIRED = ("question", "solution", "test")
OPTIONAL = ("question_id", "test_info", "style", "subset")
HAS_REFERENCE = True


def _test_info(value) -> list[dict]:
    """test_info as a list of {function_name, function_declaration, ...} (a parquet list of structs)."""
    if value is None:
        return []
    if hasattr(value, "tolist"):  # a numpy array, as pandas hands a list column over
        value = value.tolist()
    if not isinstance(value, (list, tuple)):
        raise CellError("test_info", f"expected a list of objects, got {type(value).__name__}")
    out = []
    for i, item in enumerate(value):
        if not isinstance(item, dict):
            raise CellError(f"test_info[{i}]", f"expected an object, got {type(item).__name__}")
        name = item.get("function_name")
        if name is not None and not (isinstance(name, str) and name.isidentifier()):
            raise CellError(f"test_info[{i}].function_name", f"is not a Python identifier: {name!r}")
        out.append(item)
    return out


def convert(row: dict, ctx: RowContext) -> Problem:
    question = text(row, "question")
    reference = text(row, "solution", required=False)
    test = text(row, "test", required=False)
    if test is None:
        raise Skip("no_tests")
    info = _test_info(row.get("test_info"))
    names = [i["function_name"] for i in info if i.get("function_name")]
    sig = prompting.signatures(reference, set(names)) if reference and names else None
    if sig is None:
        sig = "\n".join(d for i in info if isinstance(d := i.get("function_declaration"), str) and d.strip()) or None
    extra = {k: row[k] for k in ("style", "subset") if isinstance(row.get(k), str)}
    return Problem(
        source_id=ctx.source_id(row.get("question_id")),
        question=question,
        user=prompting.user_prompt(question, mode="function", signature=sig, entry_point=names[0] if names else None),
        format="pytest",
        tests=[test],
        entry_point=names[0] if names else None,
        reference=reference,
        extra=extra,
    )

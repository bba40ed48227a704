"""open-r1/codeforces: a Codeforces problem statement (`description`, `input_format`, `output_format`, `note`,
`examples`) with its `official_tests` ({input, output} pairs): label format `stdio`, or `checker` when the problem has a
`generated_checker` (many outputs are right; open-r1 grades them with that Python program, `checker.py input.txt
correct_output.txt solution_output.txt` printing 1). The generated tests, published apart
(`generated_tests/*.parquet`, keyed by problem id), join as a `generated_tests` list of the same pairs when the row
carries them. Dropped, each counted under its reason: `interactive` (an `interaction_format`: the answer is a
dialogue with an interactor, which no label format runs) and `file_io` (`input_mode` file). `time_limit` (seconds)
and `memory_limit` (MB) are kept in the label's extra."""

from __future__ import annotations

from coderl.data import prompting
from coderl.data.schemas import CellError, Problem, RowContext, Skip, text

NAME = "codeforces"
SOURCE = "open-r1/codeforces"
REQUIRED = ("description", "official_tests", "time_limit")
OPTIONAL = ("id", "title", "input_format", "output_format", "note", "examples", "memory_limit", "input_mode",
            "interaction_format", "generated_checker", "generated_tests", "rating", "contest_id", "index")
HAS_REFERENCE = False


def _pairs(value, field: str) -> list[dict]:
    """A list of {input, output} strings (a parquet list of structs; numpy arrays as pandas hands them)."""
    if value is None:
        return []
    if hasattr(value, "tolist"):
        value = value.tolist()
    if not isinstance(value, (list, tuple)):
        raise CellError(field, f"expected a list of {{input, output}} objects, got {type(value).__name__}")
    out = []
    for i, t in enumerate(value):
        if not (isinstance(t, dict) and isinstance(t.get("input"), str) and isinstance(t.get("output"), str)):
            raise CellError(f"{field}[{i}]", "expected an object with string 'input' and 'output'")
        out.append({"input": t["input"], "output": t["output"]})
    return out


def _question(row: dict) -> str:
    parts = [text(row, "title", required=False) or "", text(row, "description")]
    for head, col in (("Input", "input_format"), ("Output", "output_format")):
        body = text(row, col, required=False)
        if body:
            parts.append(f"{head}\n{body}")
    for k, ex in enumerate(_pairs(row.get("examples"), "examples"), 1):
        parts.append(f"Example {k}\nInput:\n{ex['input'].rstrip()}\nOutput:\n{ex['output'].rstrip()}")
    note = text(row, "note", required=False)
    if note:
        parts.append(f"Note\n{note}")
    return "\n\n".join(p.strip() for p in parts if p and p.strip())


def convert(row: dict, ctx: RowContext) -> Problem:
    if text(row, "interaction_format", required=False):
        raise Skip("interactive")
    if (text(row, "input_mode", required=False) or "stdio") != "stdio":
        raise Skip("file_io")
    tests = _pairs(row.get("official_tests"), "official_tests") + _pairs(row.get("generated_tests"), "generated_tests")
    if not tests:
        raise Skip("no_tests")
    limit = row.get("time_limit")
    if isinstance(limit, bool) or not isinstance(limit, (int, float)) or not 0 < limit <= 60:
        raise CellError("time_limit", f"expected seconds in (0, 60], got {limit!r}")
    extra = {"time_limit_s": float(limit)}
    checker = text(row, "generated_checker", required=False)
    if checker:
        tests[0] = {**tests[0], "checker": checker}
    memory = row.get("memory_limit")
    if isinstance(memory, (int, float)) and not isinstance(memory, bool):
        extra["memory_limit_mb"] = memory
    question = _question(row)
    return Problem(
        source_id=ctx.source_id(row.get("id")),
        question=question,
        user=prompting.user_prompt(question, mode="stdio"),
        format="checker" if checker else "stdio",
        tests=tests,
        extra=extra,
    )

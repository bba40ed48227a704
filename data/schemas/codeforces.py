"""open-r1/codeforces: a Codeforces problem statement (`description`, `input_format`, `output_format`, `note`,
`examples`) with its `official_tests` ({input, output} pairs): label format `stdio`, or `checker` when the problem has a
`generated_checker` (many outputs are right; open-r1 grades them with that Python program, `checker.py input.txt
correct_output.txt solution_output.txt` printing 1). The generated tests are published apart, one file
per contest (`generated_tests/test_cases_<contest_id, 4 digits>.parquet`: `problem_id`, `input`, `output`, `test_i`;
the row's `generated_tests` is their count): when that folder was downloaded beside `data/`, a problem's generated
tests join its official ones, in `test_i` order; those files are read here, never as inputs of their own. Dropped, each counted under its reason: `interactive` (an `interaction_format`: the answer is a
dialogue with an interactor, which no label format runs) and `file_io` (`input_mode` file). `time_limit` (seconds)
and `memory_limit` (MB) are kept in the label's extra."""

from __future__ import annotations

import functools
from pathlib import Path

from .. import prompting
from . import CellError, Problem, RowContext, Skip, text

NAME = "codeforces"
SOURCE = "open-r1/codeforces"
REQUIRED = ("description", "official_tests", "time_limit")
OPTIONAL = ("id", "title", "input_format", "output_format", "note", "examples", "memory_limit", "input_mode",
            "interaction_format", "generated_checker", "generated_tests", "rating", "contest_id", "index")
HAS_REFERENCE = False
SIDECARS = ("generated_tests/test_cases_*.parquet",)  # read by convert with their problems, not as inputs


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
    generated = row.get("generated_tests")  # the published count; a list where a copy joined them in the row
    tests = _pairs(row.get("official_tests"), "official_tests") + (
        _pairs(generated, "generated_tests") if isinstance(generated, (list, tuple)) or hasattr(generated, "tolist")
        else _generated_tests(ctx.file, row.get("contest_id"), row.get("id")))
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


def _generated_tests(file: str, contest_id, problem_id) -> list[dict]:
    """The problem's tests in its contest's generated-tests file beside the data folder ([] when not downloaded)."""
    if contest_id in (None, "") or not problem_id:
        return []
    try:
        name = f"test_cases_{int(contest_id):04d}.parquet"
    except (TypeError, ValueError):
        return []
    for folder in Path(file).resolve().parents[:3]:  # data/train-*.parquet, or the file at the dataset's root
        path = folder / "generated_tests" / name
        if path.is_file():
            return list(_contest_tests(str(path)).get(str(problem_id), ()))
    return []


@functools.lru_cache(maxsize=2)  # rows come contest by contest: one file is read once
def _contest_tests(path: str) -> dict[str, tuple]:
    import pyarrow.parquet as pq

    try:
        rows = pq.read_table(path, columns=["problem_id", "input", "output", "test_i"]).to_pylist()
    except Exception as e:  # a corrupt or foreign file: name it
        raise CellError("generated_tests", f"cannot read {path}: {e}") from None
    by_problem: dict[str, list] = {}
    for r in sorted(rows, key=lambda r: (str(r["problem_id"]), r["test_i"] if r["test_i"] is not None else -1)):
        if isinstance(r["input"], str) and isinstance(r["output"], str):
            by_problem.setdefault(str(r["problem_id"]), []).append({"input": r["input"], "output": r["output"]})
    return {k: tuple(v) for k, v in by_problem.items()}

"""KodCode-style fidelity family: pytest test files (`from solution import ...`, bare asserts, `parametrize`,
`pytest.raises(match=)`, `approx`, fixtures, `capsys`, `tmp_path`, test classes, a unittest `TestCase` in a pytest
file, generators, a program's classes and exceptions), graded by the `pytest` label format.

Rows have KodCode-V1's columns (question_id, question, solution, test, test_info) and become labels through the
preprocessor's converter (data/schemas/kodcode.py). The reference is KodCode's own harness: the program written as
`solution.py` beside the test file, `python -m pytest` run on it in a subprocess, passed when pytest exits 0
(scripts/bench/fidelity/reference.py).
"""

from __future__ import annotations

from coderl.data.schemas import RowContext, kodcode
from coderl.rewards.labels import Label
from scripts.bench.fidelity.corpus import Program, family_programs
from scripts.bench.fidelity.tasks import load

# Tasks (data/kodcode.yaml): name, question, functions (test_info's names), code (the solution), test (the pytest
# file), right and wrong ({name: program}).
TASKS: list[dict] = load("kodcode")


def rows() -> list[dict]:
    """KodCode-V1 rows."""
    return [{"question_id": f"kodcode/{t['name']}", "question": t["question"], "solution": t["code"], "test": t["test"],
             "test_info": [{"function_name": f, "parameter_list": "", "function_declaration": "", "docstring": None}
                           for f in t["functions"]], "style": "instruct", "subset": "fidelity"} for t in TASKS]


def label(row: dict, index: int) -> Label:
    p = kodcode.convert(row, RowContext("kodcode.jsonl", index))
    return Label(format=p.format, tests=tuple(p.tests), entry_point=p.entry_point, source=kodcode.SOURCE,
                 source_id=p.source_id)


def programs(seed: int = 0, every: int = 1, mutants: int = 3) -> list[Program]:
    """Every program of the family (every N-th task), each with its task's label."""
    return family_programs(TASKS, rows(), "question_id", label, seed, every, mutants)

"""open-r1/codeforces-style fidelity family: problems with many right answers (a permutation with a property, a float
within 1e-6, any pair of indices, YES/NO in any case, any split), each with a `generated_checker` in open-r1's
contract (`checker.py input.txt correct_output.txt solution_output.txt`, printing 1), graded by the `checker`
label format.

Rows have open-r1/codeforces' columns (id, description, official_tests, generated_checker, time_limit, ...) and
become labels through the preprocessor's converter (data/schemas/codeforces.py). The reference is open-r1's run:
the program as a plain `python prog.py` subprocess per test, then the raw checker as a subprocess on the three
files, passed when it exits 0 and prints 1 (scripts/bench/fidelity/reference.py). The jury's answers are not the
only right ones: the canonical programs and the `alt:*` rewrites print other valid answers.
"""

from __future__ import annotations

from coderl.data.schemas import RowContext, codeforces
from coderl.rewards.labels import Label
from scripts.bench.fidelity.corpus import Program, family_programs
from scripts.bench.fidelity.tasks import load

# Tasks (data/codeforces.yaml): name, description, checker, tests ({input, output}: the jury's answers), code,
# right and wrong ({name: program}).
TASKS: list[dict] = load("codeforces")


def rows() -> list[dict]:
    """open-r1/codeforces rows."""
    return [{"id": f"codeforces/{t['name']}", "title": t["name"], "description": t["description"],
             "official_tests": t["tests"], "generated_checker": t["checker"], "time_limit": 2.0, "memory_limit": 256.0,
             "input_mode": "stdio", "interaction_format": None} for t in TASKS]


def label(row: dict, index: int) -> Label:
    p = codeforces.convert(row, RowContext("codeforces.jsonl", index))
    return Label(format=p.format, tests=tuple(p.tests), source=codeforces.SOURCE, source_id=p.source_id)


def programs(seed: int = 0, every: int = 1, mutants: int = 3) -> list[Program]:
    """Every program of the family (every N-th task); the reference reads the raw tests and checker."""
    return family_programs(TASKS, rows(), "id", label, seed, every, mutants, lambda t: {"checker": t["checker"], "tests": t["tests"]})

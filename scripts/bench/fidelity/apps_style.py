"""APPS/TACO-style fidelity family: standard-input programs and call-based (`fn_name`) problems.

Rows have APPS/TACO's columns (question, solutions, input_output JSON, starter_code) and become labels
through the preprocessor's converter (data/schemas/apps_taco.py): `stdio` without `fn_name`, `call` with
it (expected values wrapped in one-element lists, as APPS stores them). The reference executor gets the
raw `input_output` and judges it the way APPS/TACO's testing_util does (scripts/bench/fidelity/reference.py):
stdio programs run as a plain `python prog.py` subprocess; call programs are imported after TACO's
import prelude and `Solution().<fn_name>(*inputs)` (or the module-level function) is compared with `==`.

What the programs exercise: `input()`, `sys.stdin.readline`, `sys.stdin.read()`, `sys.stdin.buffer`,
`open(0)`, iteration over `sys.stdin`, reading until EOFError, `print` with `sep`/`end`/`*args`,
`sys.stdout.write`, trailing whitespace, floats printed at another precision, `exit()` / `sys.exit(0)` /
`quit()` / `raise SystemExit` / `exit(print(...))`, deep recursion in a thread with a big stack, outputs
larger than the default capture limit; LeetCode `class Solution` (with `List[int]` annotations and no
import, which TACO's prelude provides), codewars-style module functions, tuples for lists, floats,
booleans.
"""

from __future__ import annotations

import json

from coderl.data.schemas import RowContext, apps_taco
from coderl.rewards.labels import Label
from scripts.bench.fidelity.corpus import Program, family_programs
from scripts.bench.fidelity.tasks import load

# Tasks (data/apps.yaml): name, question, code, io (APPS input_output: inputs, outputs, fn_name for call),
# starter (call), right and wrong.
TASKS: list[dict] = load("apps")


def rows() -> list[dict]:
    """APPS/TACO rows (question, solutions JSON, input_output JSON, starter_code)."""
    return [{"problem_id": f"apps/{t['name']}", "question": t["question"], "solutions": json.dumps([t["code"]]),
             "input_output": json.dumps(t["io"]), "starter_code": t.get("starter", "")} for t in TASKS]


def label(row: dict, index: int) -> Label:
    p = apps_taco.convert(row, RowContext("apps.jsonl", index))
    return Label(format=p.format, tests=tuple(p.tests), entry_point=p.entry_point, source=apps_taco.SOURCE,
                 source_id=p.source_id)


def programs(seed: int = 0, every: int = 1, mutants: int = 2) -> list[Program]:
    """Every program of the family (every N-th task); the reference reads the raw `input_output`."""
    return family_programs(TASKS, rows(), "problem_id", label, seed, every, mutants, lambda t: {"apps": t["io"]})

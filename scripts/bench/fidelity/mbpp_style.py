"""MBPP-style fidelity family: one function per task, `assert` lists, `test_setup_code` / `test_imports`.

Rows are written in MBPP's own two shapes (full: `text` + `test_setup_code`; sanitized: `prompt` +
`test_imports`) and become labels through the preprocessor's converter (data/schemas/mbpp.py), so the
family also checks that conversion. What the asserts exercise: floats (`math.isclose`, `round`), sets,
tuples, dicts, strings, None, bools, nested lists, generators consumed by `list()`, stable sorting, big
ints, regex results (strings, tuples, match objects), setup code that builds inputs or defines classes
(MBPP's binary-tree tasks).

Programs per task: the reference (`canonical`), hand-written correct alternatives (`alt:*`, what models
write instead: a generator, a Counter, frozenset, a lambda, 1/0 for booleans, ...), hand-written wrong
ones (`bug:*`, plausible mistakes: unstable tie order, tuples for lists, no rounding, ...; verdict left to
the reference) and the seeded AST mutants of scripts/bench/fidelity/corpus.py.
"""

from __future__ import annotations

from coderl.data.schemas import RowContext, mbpp
from coderl.rewards.labels import Label
from scripts.bench.fidelity.corpus import PLAIN, Program, numbered, wrap, written_items
from scripts.bench.fidelity.tasks import load

# Tasks (data/mbpp.yaml): id, text, code, tests (asserts), optional imports / setup, right and wrong
# ({name: program}: correct alternatives, plausible bugs).
TASKS: list[dict] = load("mbpp")
_SANITIZED_EVERY = 2


def rows() -> list[dict]:
    """MBPP rows: even ids in the sanitized shape (prompt + test_imports), odd ids in the full one."""
    out = []
    for t in TASKS:
        imports, setup = list(t.get("imports", [])), t.get("setup", "")
        if t["id"] % _SANITIZED_EVERY == 0:
            row = {"task_id": t["id"], "prompt": t["text"], "code": t["code"], "test_list": t["tests"],
                   "test_imports": imports, "source_file": "fidelity"}
            if setup:  # the sanitized release has no setup column: MBPP's tree tasks keep it in the full one
                row["test_setup_code"] = setup
        else:
            row = {"task_id": t["id"], "text": t["text"], "code": t["code"], "test_list": t["tests"],
                   "test_setup_code": "\n".join(imports + [setup]).strip("\n"), "challenge_test_list": []}
        out.append(row)
    return out


def label(row: dict, index: int) -> Label:
    p = mbpp.convert(row, RowContext("mbpp.jsonl", index))
    return Label(format=p.format, tests=tuple(p.tests), entry_point=p.entry_point, setup_code=p.setup_code,
                 source=mbpp.SOURCE, source_id=p.source_id)


def programs(seed: int = 0, every: int = 1, mutants: int = 2, plain: int = 2) -> list[Program]:
    """Every program of the family (every N-th task), each with its task's label."""
    out = []
    names = sorted(PLAIN)
    for i, (task, row) in enumerate(zip(TASKS, rows(), strict=True)):
        if i % every:
            continue
        tid = f"mbpp/{task['id']}"
        lb = label(row, i)
        code = task["code"]
        items = written_items(tid, task, seed, mutants)
        for k in range(plain):  # the HumanEval corpus's plain-Python wrappers, rotated over the tasks
            name = names[(i * plain + k) % len(names)]
            items.append((f"plain:{name}", wrap(code, lb.entry_point, PLAIN[name]), PLAIN[name].correct))
        out += numbered(tid, items, lb)
    return out

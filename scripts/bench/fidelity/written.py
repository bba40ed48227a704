"""A fidelity family written as a list of tasks, in every label format (the held-out families).

    F = WrittenFamily("heldout", load("heldout"))   # scripts/bench/fidelity/tasks.py: data/heldout.yaml
    programs = F.programs()   # each Program carries the label the preprocessor's converter made of its row

Per task: the reference program (`canonical`), correct alternatives (`alt:*`), plausible bugs (`bug:*`,
verdict left to the reference) and seeded AST mutants. Each task becomes a row of its dataset (CodeRM-UnitTest,
MBPP, HumanEval, APPS/TACO) and goes through data/schemas/, as real data does.
"""

from __future__ import annotations

import json

from coderl.data.schemas import RowContext, apps_taco, coderm, humaneval, mbpp
from coderl.rewards.labels import Label
from scripts.bench.fidelity.corpus import Program, numbered, written_items

_CONVERTERS = {"unittest": coderm, "assert": mbpp, "humaneval": humaneval, "stdio": apps_taco, "call": apps_taco}


class WrittenFamily:
    """The tasks of one family (data/<name>.yaml) and the programs they give.

    A task has `fmt`, `name`, `code` (the reference program), `right` and `wrong` ({name: program}: correct
    alternatives, plausible bugs) and, by format: unittest `test` (one generated module); assert `tests`,
    `imports` (MBPP's sanitized test_imports), `setup` (test_setup_code, or ""); humaneval `entry`, `prompt`
    (signature + docstring), `test` (check(candidate)); stdio / call `io` (APPS's input_output: `inputs`,
    `outputs`, and `fn_name` for call, whose outputs APPS wraps in one-element lists)."""

    def __init__(self, name: str, tasks: list[dict]):
        self.name = name
        self.tasks = tasks

    def row(self, t: dict) -> dict:
        """The task as a row of its dataset, in that dataset's columns."""
        tid = f"{self.name}/{t['name']}"
        if t["fmt"] == "unittest":
            return {"task_id": tid, "question": t["name"], "code_ground_truth": t["code"],
                    "unit_tests": json.dumps([{"ut_id": 0, "code": t["test"]}])}
        if t["fmt"] == "assert":
            r = {"task_id": tid, "prompt": t["name"], "code": t["code"], "test_list": t["tests"],
                 "test_imports": t["imports"], "source_file": self.name}
            if t["setup"]:
                r["test_setup_code"] = t["setup"]
            return r
        if t["fmt"] == "humaneval":
            return {"task_id": tid, "prompt": t["prompt"], "canonical_solution": "", "test": t["test"],
                    "entry_point": t["entry"]}
        return {"problem_id": tid, "question": t["name"], "solutions": json.dumps([t["code"]]),
                "input_output": json.dumps(t["io"]), "starter_code": ""}

    def label(self, t: dict, index: int) -> Label:
        conv = _CONVERTERS[t["fmt"]]
        p = conv.convert(self.row(t), RowContext(f"{self.name}.jsonl", index))
        assert p.format == t["fmt"], (t["name"], p.format)
        return Label(format=p.format, tests=tuple(p.tests), entry_point=p.entry_point, setup_code=p.setup_code,
                     source=conv.SOURCE, source_id=p.source_id)

    def programs(self, seed: int = 0, every: int = 1, mutants: int = 1) -> list[Program]:
        """Every program of the family (every N-th task), each with its task's label."""
        out = []
        for i, t in enumerate(self.tasks):
            if i % every:
                continue
            tid = f"{self.name}/{t['name']}"
            items = written_items(tid, t, seed, mutants)
            ref = {"apps": t["io"]} if t["fmt"] in ("stdio", "call") else None
            out += numbered(tid, items, self.label(t, i), ref)
        return out

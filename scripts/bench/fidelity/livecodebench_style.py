"""LiveCodeBench-style fidelity family: LeetCode functional problems (`class Solution` methods, one JSON argument per
input line, a JSON output; answers using lcb_runner's implicit imports: `inf`, `bisect_left`, `accumulate`,
`lru_cache`, `List`) and AtCoder/Codeforces stdin problems (`input()`, `sys.stdin.readline` / `.read()` /
`.readlines()` / `.buffer`, iteration over `sys.stdin`, `open(0)`, `exit()`, a `__main__` guard, `global`, floats
at other precisions, blank lines in the output), graded by the `call` and `stdio` label formats.

Rows have livecodebench/code_generation_lite's columns (question_title, question_content, platform, question_id,
starter_code, public_test_cases and metadata as JSON text, private_test_cases as base64 of zlib of a pickle of the
JSON text, as published) and become labels through the preprocessor's converter (data/schemas/livecodebench.py).
The reference is lcb_runner's `run_test` on the sample its benchmark builds from the row (`input_output`: the raw
inputs and outputs of the public then private tests, `fn_name` from metadata), rewritten from its rules in
scripts/bench/fidelity/reference.py (`_run_lcb`).
"""

from __future__ import annotations

import base64
import json
import pickle
import zlib

from coderl.data.schemas import RowContext, livecodebench
from coderl.rewards.labels import Label
from scripts.bench.fidelity.corpus import Program, family_programs
from scripts.bench.fidelity.tasks import load

# Tasks (data/livecodebench.yaml): name, platform, question, func_name and starter (functional problems), tests
# ({input, output}: LiveCodeBench's raw strings), public (how many of them are public), code, right and wrong.
TASKS: list[dict] = load("livecodebench")


def _tests(t: dict, which: slice) -> list[dict]:
    kind = "functional" if t.get("func_name") else "stdin"
    return [{"input": x["input"], "output": x["output"], "testtype": kind} for x in t["tests"][which]]


def encode_private(tests: list[dict]) -> str:
    """private_test_cases as code_generation_lite publishes them: base64(zlib(pickle(JSON text)))."""
    return base64.b64encode(zlib.compress(pickle.dumps(json.dumps(tests)))).decode("ascii")


def rows() -> list[dict]:
    """livecodebench/code_generation_lite rows."""
    return [{"question_title": t["name"], "question_content": t["question"], "platform": t["platform"],
             "question_id": f"livecodebench/{t['name']}", "contest_id": "fidelity",
             "contest_date": "2024-08-03T00:00:00", "starter_code": t.get("starter", ""), "difficulty": "easy",
             "public_test_cases": json.dumps(_tests(t, slice(0, t["public"]))),
             "private_test_cases": encode_private(_tests(t, slice(t["public"], None))),
             "metadata": json.dumps({"func_name": t["func_name"]} if t.get("func_name") else {})} for t in TASKS]


def sample(t: dict) -> dict:
    """lcb_runner's evaluation sample of the task (get_evaluation_sample), decoded: what run_test reads."""
    return {"inputs": [x["input"] for x in t["tests"]], "outputs": [x["output"] for x in t["tests"]],
            "fn_name": t.get("func_name")}


def label(row: dict, index: int) -> Label:
    p = livecodebench.convert(row, RowContext("livecodebench.jsonl", index))
    return Label(format=p.format, tests=tuple(p.tests), entry_point=p.entry_point, setup_code=p.setup_code,
                 source=livecodebench.SOURCE, source_id=p.source_id)


def programs(seed: int = 0, every: int = 1, mutants: int = 3) -> list[Program]:
    """Every program of the family (every N-th task); the reference reads lcb_runner's sample of the raw row."""
    return family_programs(TASKS, rows(), "question_id", label, seed, every, mutants, lambda t: {"lcb": sample(t)})

"""AceCode-87K through the real CLI and --verify: a pass_rate 1.0 inference is the reference."""

from __future__ import annotations

import pyarrow as pa
import pytest

from coderl.rewards.labels import parse_label
from tests.support import read_jsonl, read_out, run_cli, write_parquet

pytestmark = pytest.mark.timeout(180)

# The published schema (AceCoder's data/acecode_89k/generate_main_dataset.py writes these fields)
SCHEMA = pa.schema([
    ("id", pa.string()), ("source", pa.string()), ("question", pa.string()), ("test_cases", pa.list_(pa.string())),
    ("inferences", pa.list_(pa.struct([("completion", pa.string()), ("completion_id", pa.int64()),
                                       ("model_name", pa.string()), ("pass_rate", pa.float64())]))),
    ("context_messages", pa.list_(pa.struct([("content", pa.string()), ("role", pa.string())])))])

QUESTION = ("You are tasked with implementing a function that processes a list of integers and returns the sum "
            "of the even ones. Implement `sum_of_evens(nums: List[int]) -> int`; an empty list gives 0.")
TESTS = ["assert sum_of_evens([1, 2, 3, 4]) == 6", "assert sum_of_evens([]) == 0",
         "assert sum_of_evens([1, 3, 5]) == 0", "assert sum_of_evens([-2, 2]) == 0", "assert sum_of_evens([10]) == 10"]
RIGHT = ("```python\nfrom typing import List\n\ndef sum_of_evens(nums: List[int]) -> int:\n"
         "    return sum(n for n in nums if n % 2 == 0)\n```")
HALF = "```python\ndef sum_of_evens(nums):\n    return sum(nums)\n```"


def row(id_, question, tests, inferences):
    return {"id": id_, "source": "oss", "question": question, "test_cases": tests,
            "inferences": [{"completion": c, "completion_id": k, "model_name": "qwen_coder_2.5", "pass_rate": p}
                           for k, (c, p) in enumerate(inferences)],
            "context_messages": [{"content": question, "role": "user"}]}


def rows():
    return [row("oss_0", QUESTION, TESTS, [(HALF, 0.4), (RIGHT, 1.0)]),
            row("oss_1", QUESTION.replace("even", "odd"), ["assert sum_of_odds([1, 2]) == 1"], [(HALF, 0.0)]),
            row("oss_2", "Nothing to test.", [], [(RIGHT, 1.0)]),
            # a "passing" inference that the tests reject: --verify proves the mapping, not the pass_rate
            row("oss_3", QUESTION + " (again)", ["assert sum_of_evens([1, 2]) == 2"], [(HALF, 1.0)])]


def test_acecode_rows(tmp_path):
    src = write_parquet(tmp_path / "train-00000-of-00001.parquet", rows(), schema=SCHEMA)
    run_cli("--input_dir", src, "--output_dir", tmp_path / "out", "--test_ratio", "0", "--keep_reference")
    out, stats = read_out(tmp_path / "out")
    assert stats["files"][0]["schema"] == "acecode" and stats["rows_read"] == 4
    assert stats["rows_written"] == 3 and stats["dropped"] == {"no_tests": 1}
    by_id = {parse_label(r["label"]).source_id: r for r in out}
    label = parse_label(by_id["oss_0"]["label"])
    assert label.format == "assert" and label.tests == tuple(TESTS) and label.entry_point == "sum_of_evens"
    assert label.reference_solution.startswith("from typing import List") and label.extra["subset"] == "oss"
    assert "def sum_of_evens(nums: List[int]) -> int:" in by_id["oss_0"]["input"][1]["content"]
    odd = parse_label(by_id["oss_1"]["label"])  # no passing inference: the name comes from the first assert
    assert odd.entry_point == "sum_of_odds" and odd.reference_solution is None
    assert "named `sum_of_odds`" in by_id["oss_1"]["input"][1]["content"]


def test_acecode_verify(tmp_path):
    src = write_parquet(tmp_path / "train-00000-of-00001.parquet", rows(), schema=SCHEMA)
    run_cli("--input_dir", src, "--output_dir", tmp_path / "out", "--test_ratio", "0", "--verify", "--workers", "2")
    out, stats = read_out(tmp_path / "out")
    assert stats["dropped"] == {"no_tests": 1, "verify_no_reference": 1, "verify_all_failed": 1}
    (label,) = [parse_label(r["label"]) for r in out]
    assert label.source_id == "oss_0" and len(label.tests) == 5 and label.ref_time_s is not None
    report = {r["source_id"]: r for r in read_jsonl(tmp_path / "out" / "verify.jsonl")}
    assert [d.split(":")[0] for d in report["oss_3"]["dropped"]] == ["tests[0] (failed"]  # then the error text

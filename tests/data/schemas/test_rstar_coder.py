"""rStar-Coder synthetic_rl_testcase through the real CLI; with no reference, a right and a wrong program graded."""

from __future__ import annotations

import json

import pytest

from coderl.rewards.labels import parse_label
from tests.support import read_out, run_cli, write_parquet

pytestmark = pytest.mark.timeout(180)

# Shaped as the config publishes it: question_id "synthetic_N", a "**Problem Description:**" question, and the
# tests as JSON text of a list of strings each (as sungyub/rstar-coder-verl's ground truths quote them).
QUESTION = ("**Problem Description:**\nYou are given a list of positive integers. Print the sum of the even ones."
            "\n\n**Input Format:**\nThe first line contains n. The second line contains n integers.\n\n"
            "**Output Format:**\nOne integer.\n")
INPUTS = ["1\n1", "1\n8", "3\n2 3 4\n", "2\n10 10"]
OUTPUTS = ["0", "8", "6\n", "20"]
RIGHT = "n = int(input())\nprint(sum(x for x in map(int, input().split()) if x % 2 == 0))\n"
WRONG = "n = int(input())\nprint(sum(map(int, input().split())))\n"


def test_rstar_rows_and_grading(tmp_path):
    rows = [{"question_id": "synthetic_50262", "question": QUESTION, "inputs": json.dumps(INPUTS),
             "outputs": json.dumps(OUTPUTS)},
            {"question_id": "synthetic_50263", "question": "Empty.", "inputs": "[]", "outputs": "[]"},
            {"question_id": "synthetic_50264", "question": "Misaligned.", "inputs": '["1"]', "outputs": "[]"}]
    src = write_parquet(tmp_path / "synthetic_rl_testcase" / "data-00000-of-00797.parquet", rows)
    run_cli("--input_dir", src, "--output_dir", tmp_path / "out", "--test_ratio", "0", "--on_error", "skip")
    out, stats = read_out(tmp_path / "out")
    assert stats["files"][0]["schema"] == "rstar_coder" and stats["rows_read"] == 3
    assert stats["rows_written"] == 1 and stats["dropped"] == {"no_tests": 1, "bad_cell": 1}
    assert "row 2, field 'inputs'" in stats["errors_sample"][0] and "'inputs' has 1 entries" in stats["errors_sample"][0]
    label = parse_label(out[0]["label"])
    assert label.source_id == "synthetic_50262" and label.source == "rStar-Coder" and label.format == "stdio"
    assert [t["input"] for t in label.tests] == INPUTS and [t["output"] for t in label.tests] == OUTPUTS
    from coderl.rewards.config import SandboxConfig
    from coderl.rewards.sandbox import Job, Sandbox

    with Sandbox(SandboxConfig(workers=1)) as sb:
        right, wrong = sb.run([Job(RIGHT, label), Job(WRONG, label)])
    assert right.pass_rate == 1.0 and len(right.outcomes) == 4
    assert [o.status for o in wrong.outcomes] == ["failed", "passed", "failed", "passed"]


def test_seed_testcase_call_rows_are_counted(tmp_path):
    """seed_testcase shares the columns but its function-call rows are not stdio: counted, never mis-read."""
    rows = [{"question_id": "seed_1", "question": "Two sum.", "inputs": '["[1, 2]"]', "outputs": '["3"]',
             "func_name": "add", "class_name": "Solution"}]
    src = write_parquet(tmp_path / "seed_testcase.parquet", rows)
    run_cli("--input_dir", src, "--output_dir", tmp_path / "out")
    _, stats = read_out(tmp_path / "out")
    assert stats["rows_written"] == 0 and stats["dropped"] == {"function_call_tests": 1}

"""--verify through the real sandbox (rewards/sandbox/): reference solutions decide which tests stay."""

from __future__ import annotations

import json

import pytest

from coderl.data.verify import drop_check_asserts
from coderl.rewards.labels import parse_label
from tests.support import ADD_REF, ADD_UT, coderm_rows, humaneval_rows, read_out, run_cli, write_parquet

pytestmark = pytest.mark.timeout(180)

CHECK = '''
def check(candidate):
    x = 3
    assert True, 'no case: it names nothing'
    assert candidate(1) == 2
    for i in range(3):
        assert candidate(i) == i + 1
    assert candidate(x) == 99
    assert candidate(0) == 1; y = 1
'''


def test_drop_check_asserts_matches_sandbox_cases():
    kept = drop_check_asserts(CHECK, [2])
    assert "== 99" not in kept and "x = 3" in kept and "for i in range(3):" in kept
    assert "assert candidate(0) == 1; y = 1" in kept and "assert True" in kept  # not a case, never cut
    assert "== i + 1" not in drop_check_asserts(CHECK, [1])  # a loop holding an assert is one case
    assert drop_check_asserts(CHECK, [3]) is None  # shares its line with another statement
    assert drop_check_asserts(CHECK, [7]) is None  # no such case


def test_verify_drops_failing_tests_and_problems(tmp_path):
    wrong_method = ADD_UT.replace("add(-1, 1), 0)", "add(-1, 1), 5)")
    no_methods = "import unittest\nclass Empty(unittest.TestCase):\n    pass\n"
    rows = coderm_rows()[:2] + [
        {"task_id": 10, "question": "Add, with some broken tests.", "code_ground_truth": ADD_REF,
         "code_generate": None,
         "unit_tests": json.dumps([{"ut_id": 0, "code": ADD_UT}, {"ut_id": 1, "code": wrong_method},
                                   {"ut_id": 2, "code": no_methods}])},
        {"task_id": 11, "question": "Add, all tests broken.", "code_ground_truth": ADD_REF, "code_generate": None,
         "unit_tests": json.dumps([{"ut_id": 0, "code": wrong_method}])},
    ]
    src = write_parquet(tmp_path / "coderm.parquet", rows)
    run_cli("--input_dir", src, "--output_dir", tmp_path / "out", "--verify", "--workers", "2")
    out, stats = read_out(tmp_path / "out")
    labels = {parse_label(r["label"]).source_id: parse_label(r["label"]) for r in out}
    assert sorted(labels) == ["1", "10", "2"]
    assert labels["10"].tests == (ADD_UT,) and len(labels["1"].tests) == 2
    v = stats["verify"]
    assert v["enabled"] and v["problems_checked"] == 4 and v["problems_kept"] == 3
    assert v["tests_dropped"] == 3 and stats["dropped"]["verify_all_failed"] == 1
    assert v["failed_statuses"].get("failed", 0) >= 2


def test_verify_assert_stdio_call_and_missing_reference(tmp_path):
    mbpp = [
        {"task_id": 1, "text": "Square a number.", "code": "def sq(x):\n    return x * x\n",
         "test_list": ["assert sq(2) == 4", "assert sq(3) == 10", "assert True", "assert sq(0) == 0"],
         "test_setup_code": "", "challenge_test_list": []},
        {"task_id": 2, "text": "Cube a number.", "code": None, "test_list": ["assert cube(2) == 8"],
         "test_setup_code": "", "challenge_test_list": []},
    ]
    apps = [
        {"problem_id": 1, "question": "Print a+b.", "solutions": json.dumps(["a,b=map(int,input().split())\nprint(a+b)"]),
         "input_output": json.dumps({"inputs": ["1 2\n", "2 2\n"], "outputs": ["3\n", "5\n"]}), "starter_code": ""},
        {"problem_id": 2, "question": "Negate.", "solutions": json.dumps(["def neg(x):\n    return -x\n"]),
         "input_output": json.dumps({"fn_name": "neg", "inputs": [[1], [2]], "outputs": [[-1], [3]]}),
         "starter_code": ""},
    ]
    write_parquet(tmp_path / "m" / "mbpp.parquet", mbpp)
    write_parquet(tmp_path / "a" / "apps.parquet", apps)
    run_cli("--input_dir", tmp_path / "m", "--output_dir", tmp_path / "om", "--verify", "--workers", "2")
    out, stats = read_out(tmp_path / "om")
    assert len(out) == 1 and parse_label(out[0]["label"]).tests == ("assert sq(2) == 4", "assert sq(0) == 0")
    assert stats["dropped"] == {"verify_no_reference": 1}
    run_cli("--input_dir", tmp_path / "a", "--output_dir", tmp_path / "oa", "--verify", "--workers", "2",
            "--max_tests_per_problem", "1")
    out, stats = read_out(tmp_path / "oa")
    by = {parse_label(r["label"]).format: parse_label(r["label"]) for r in out}
    assert by["stdio"].tests == ({"input": "1 2\n", "output": "3\n"},)
    assert by["call"].tests == ({"input": [1], "output": -1},)
    assert stats["verify"]["tests_dropped"] == 2


@pytest.mark.slow
def test_humaneval_real_data_verify_keeps_all_164(tmp_path):
    he = humaneval_rows()
    broken = dict(he[0], task_id="Broken/0", prompt=he[0]["prompt"].replace("Check if", "Really check if"),
                  test=he[0]["test"].replace("0.3) == True", "0.3) == False", 1))
    src = write_parquet(tmp_path / "he.parquet", he + [broken])
    run_cli("--input_dir", src, "--output_dir", tmp_path / "out", "--verify", "--workers", "2")
    out, stats = read_out(tmp_path / "out")
    assert stats["rows_written"] == 165 and stats["verify"]["problems_kept"] == 165
    ids = {parse_label(r["label"]).source_id: parse_label(r["label"]) for r in out}
    assert {p["task_id"] for p in he} <= set(ids)
    for p in he:
        assert ids[p["task_id"]].tests == (p["test"],)  # canonical solutions pass: nothing cut
    fixed = ids["Broken/0"].tests[0]
    assert "0.3) == False" not in fixed and fixed.count("assert candidate") == he[0]["test"].count("assert candidate") - 1
    assert stats["verify"]["humaneval_asserts_dropped"] == 1


def test_verify_keeps_verl_rows_unverified(tmp_path):
    rows = [{"data_source": "x", "prompt": [{"role": "user", "content": "Print 1."}],
             "reward_model": {"style": "rule", "ground_truth": json.dumps({"inputs": [""], "outputs": ["1\n"]})},
             "extra_info": {"index": 0}}]
    src = write_parquet(tmp_path / "verl.parquet", rows)
    run_cli("--input_dir", src, "--output_dir", tmp_path / "out", "--verify", "--workers", "1")
    out, stats = read_out(tmp_path / "out")
    assert len(out) == 1 and stats["verify"]["unverified_no_reference_column"] == 1
    assert stats["verify"].get("problems_checked", 0) == 0


def test_verify_records_the_reference_runtime_and_it_drives_the_limit(tmp_path):
    """--verify keeps each reference's slowest passing test as ref_time_s; the sandbox derives the per-test
    limit from it: a program 5x slower than the reference times out under a default that would let it pass."""
    from coderl.rewards.config import SandboxConfig
    from coderl.rewards.sandbox import Job, Sandbox

    slow = "import time\ndef sq(x):\n    time.sleep(0.3)\n    return x * x\n"
    mbpp = [{"task_id": 1, "text": "Square a number, slowly.", "code": slow, "test_setup_code": "",
             "test_list": ["assert sq(2) == 4", "assert sq(3) == 9"], "challenge_test_list": []},
            {"task_id": 2, "text": "Square a number.", "code": "def sq(x):\n    return x * x\n", "test_setup_code": "",
             "test_list": ["assert sq(2) == 4"], "challenge_test_list": []}]
    src = write_parquet(tmp_path / "mbpp.parquet", mbpp)
    run_cli("--input_dir", src, "--output_dir", tmp_path / "out", "--verify", "--workers", "2")
    out, _ = read_out(tmp_path / "out")
    labels = {parse_label(r["label"]).source_id: parse_label(r["label"]) for r in out}
    assert 0.3 <= labels["1"].ref_time_s < 1.0 and labels["2"].ref_time_s < 0.3
    cfg = SandboxConfig(workers=1, test_timeout_s=4.0, time_floor_s=0.2, time_factor=2.0, probe_s=0)
    slower = "import time\ndef sq(x):\n    time.sleep(1.5)\n    return x * x\n"  # 5x the reference, < 4 s
    with Sandbox(cfg) as sb:
        r = sb.run([Job(slower, labels["1"]), Job(slow, labels["1"])])
    assert r[0].outcomes[0].status == "timeout"  # 2 x ref_time_s, not the 4 s default
    assert r[1].pass_rate == 1.0  # the reference itself keeps passing

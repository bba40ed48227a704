"""livecodebench/code_generation_lite through the real CLI: rows in its columns, private tests compressed as
lcb_runner decodes them (base64 -> zlib -> pickle -> JSON), a benchmark that stays in test, graded in the sandbox."""

from __future__ import annotations

import base64
import dataclasses
import json
import pickle
import zlib

import pytest

from coderl.rewards.labels import parse_label
from tests.data.schemas import pass_rates
from tests.support import read_out, run_cli, write_parquet

pytestmark = pytest.mark.timeout(300)


def compress(tests: list[dict]) -> str:
    """How code_generation_lite stores private_test_cases."""
    return base64.b64encode(zlib.compress(pickle.dumps(json.dumps(tests)))).decode("ascii")


FUNC = {  # LeetCode 2798 (LiveCodeBench question_id 2876), its examples public, more cases private
    "question_title": "number-of-employees-who-met-the-target",
    "question_content": "There are n employees in a company, numbered from 0 to n - 1. Each employee i has worked for "
                        "hours[i] hours in the company.\nThe company requires each employee to work for at least "
                        "target hours.\nReturn the integer denoting the number of employees who worked at least "
                        "target hours.",
    "platform": "leetcode", "question_id": "2876", "contest_id": "weekly-contest-356",
    "contest_date": "2023-07-30T00:00:00", "difficulty": "easy",
    "starter_code": "class Solution:\n    def numberOfEmployeesWhoMetTarget(self, hours: List[int], target: int) -> "
                    "int:\n        ",
    "public_test_cases": json.dumps([{"input": "[0, 1, 2, 3, 4]\n2", "output": "3", "testtype": "functional"},
                                     {"input": "[5, 1, 4, 2, 2]\n6", "output": "0", "testtype": "functional"}]),
    "private_test_cases": compress([{"input": "[98]\n5", "output": "1", "testtype": "functional"},
                                    {"input": "[5, 3, 10, 8, 2]\n5", "output": "3", "testtype": "functional"},
                                    {"input": "[0]\n0", "output": "1", "testtype": "functional"}]),
    "metadata": json.dumps({"func_name": "numberOfEmployeesWhoMetTarget"}),
}
FUNC_RIGHT = ("class Solution:\n    def numberOfEmployeesWhoMetTarget(self, hours: List[int], target: int) -> int:\n"
              "        return sum(h >= target for h in hours)\n")
STDIN = {  # an AtCoder-style stdin problem
    "question_title": "Sum", "question_content": "Given N and N integers, print their sum.", "platform": "atcoder",
    "question_id": "abc000_a", "contest_id": "abc000", "contest_date": "2024-09-01T00:00:00", "difficulty": "easy",
    "starter_code": "",
    "public_test_cases": json.dumps([{"input": "3\n1 2 3\n", "output": "6\n", "testtype": "stdin"}]),
    "private_test_cases": compress([{"input": "1\n-5\n", "output": "-5\n", "testtype": "stdin"},
                                    {"input": "2\n1000000000 1000000000\n", "output": "2000000000\n",
                                     "testtype": "stdin"}]),
    "metadata": json.dumps({}),
}
STDIN_RIGHT = "input()\nprint(sum(map(int, input().split())))\n"


def test_public_and_private_tests_graded_as_lcb_runner_does(tmp_path):
    src = write_parquet(tmp_path / "code_generation_lite" / "release_v5.parquet", [FUNC, STDIN])
    run_cli("--input_dir", src, "--output_dir", tmp_path / "out", "--test_ratio", "0")
    rows, stats = read_out(tmp_path / "out")
    assert stats["schema"] == "livecodebench" and stats["rows_written"] == 2 and stats["dropped"] == {}
    # a benchmark: in test whatever --test_ratio says
    assert stats["splits"] == {"train": 0, "test": 2} and stats["files"][0]["split"] == "test"
    labels = {parse_label(r["label"]).source_id: parse_label(r["label"]) for r in rows}
    func, stdin = labels["2876"], labels["abc000_a"]
    assert func.format == "call" and func.entry_point == "numberOfEmployeesWhoMetTarget" and len(func.tests) == 5
    assert func.tests[2] == {"input": [[98], 5], "output": 1}
    assert stdin.format == "stdio" and [t["output"] for t in stdin.tests] == ["6\n", "-5\n", "2000000000\n"]
    user = next(r for r in rows if parse_label(r["label"]).source_id == "2876")["input"][1]["content"]
    assert FUNC["starter_code"].rstrip() in user
    rates = pass_rates([(FUNC_RIGHT, func.to_json()), (FUNC_RIGHT.replace(">=", ">"), func.to_json()),
                        (STDIN_RIGHT, stdin.to_json()), ("input()\nprint(0)\n", stdin.to_json())])
    assert rates[0] == rates[2] == 1.0 and rates[1] < 1.0 and rates[3] < 1.0, rates


def test_a_functional_answer_sees_the_names_lcb_runners_harness_imports(tmp_path):
    """lcb_runner runs a program after star imports of the standard modules LeetCode answers lean on: an answer
    using `inf`, `bisect_left`, `reduce`, `Optional` and `accumulate` without importing them passes there."""
    src = write_parquet(tmp_path / "code_generation_lite" / "test.parquet", [FUNC])
    run_cli("--input_dir", src, "--output_dir", tmp_path / "out")
    label = parse_label(read_out(tmp_path / "out")[0][0]["label"])
    assert label.setup_code.startswith("from string import *\n") and "sys.setrecursionlimit(50000)" in label.setup_code
    leaning = ("class Solution:\n"
               "    def numberOfEmployeesWhoMetTarget(self, hours: List[int], target: int) -> int:\n"
               "        best: Optional[int] = inf\n"
               "        ordered = sorted(hours)\n"
               "        assert reduce(lambda a, b: a + b, accumulate([1, 2])) == 4 and best == inf\n"
               "        return len(ordered) - bisect_left(ordered, target)\n")
    bare = dataclasses.replace(label, setup_code="")  # the call format's own prelude alone lacks these names
    rates = pass_rates([(leaning, label.to_json()), (leaning.replace("- bisect_left", "+ bisect_left"),
                                                      label.to_json()), (leaning, bare.to_json())])
    assert rates[0] == 1.0 and rates[1] < 1.0 and rates[2] == 0.0, rates



def test_a_stdin_program_sees_the_names_lcb_runners_harness_imports(tmp_path):
    """lcb_runner runs stdin programs after the same imports and recursion limit: a program using `sys` and `reduce`
    unimported, recursing 3,000 deep, passes there, and so here; without the label's setup_code it fails."""
    deep = {**STDIN, "private_test_cases": compress([{"input": "3000\n" + " ".join(["1"] * 3000) + "\n",
                                                       "output": "3000\n", "testtype": "stdin"}])}
    src = write_parquet(tmp_path / "code_generation_lite" / "test.parquet", [deep])
    run_cli("--input_dir", src, "--output_dir", tmp_path / "out")
    label = parse_label(read_out(tmp_path / "out")[0][0]["label"])
    assert label.format == "stdio" and label.setup_code.startswith("from string import *\n")
    leaning = ("input = sys.stdin.readline\n"
               "def total(a):\n"
               "    return a[0] + total(a[1:]) if a else 0\n"
               "n = int(input())\n"
               "a = list(map(int, input().split()))\n"
               "assert reduce(max, a) == max(a)\n"
               "print(total(a))\n")
    bare = dataclasses.replace(label, setup_code="")
    rates = pass_rates([(leaning, label.to_json()), (leaning.replace("a[0] +", "a[0] * 2 +"), label.to_json()),
                        (leaning, bare.to_json())])
    assert rates[0] == 1.0 and rates[1] < 1.0 and rates[2] == 0.0, rates

def test_a_pickle_naming_code_is_refused(tmp_path):
    """The private tests are a pickle: one that would import and call anything is a bad cell, never loaded."""
    evil = base64.b64encode(zlib.compress(pickle.dumps(print))).decode("ascii")
    src = write_parquet(tmp_path / "lcb.parquet", [{**FUNC, "private_test_cases": evil}])
    p = run_cli("--input_dir", src, "--output_dir", tmp_path / "out", check=False)
    assert p.returncode == 2 and "field 'private_test_cases'" in p.stderr and "refusing to load builtins.print" \
        in p.stderr


def test_the_published_json_lines_files_read_as_the_parquet_copy(tmp_path):
    """The hub publishes code_generation_lite as test.jsonl ... test6.jsonl: read with --input_glob."""
    d = tmp_path / "code_generation_lite"
    d.mkdir()
    (d / "test.jsonl").write_text(json.dumps(FUNC) + "\n\n")
    (d / "test2.jsonl").write_text(json.dumps(STDIN) + "\n")
    (d / "code_generation_lite.py").write_text("# the loading script: not read\n")
    run_cli("--input_dir", d, "--output_dir", tmp_path / "jsonl", "--input_glob", "test*.jsonl")
    run_cli("--input_dir", write_parquet(tmp_path / "p" / "lcb.parquet", [FUNC, STDIN]), "--output_dir",
            tmp_path / "parquet")
    jsonl, stats = read_out(tmp_path / "jsonl")
    assert stats["rows_read"] == 2 and [f["rows"] for f in stats["files"]] == [1, 1]
    assert jsonl == read_out(tmp_path / "parquet")[0]
    (d / "test3.jsonl").write_text(json.dumps(FUNC) + "\n{not json\n")
    p = run_cli("--input_dir", d, "--output_dir", tmp_path / "bad", "--input_glob", "test*.jsonl", check=False)
    assert p.returncode == 2 and f"file {d / 'test3.jsonl'}, row 1: is not a JSON object" in p.stderr

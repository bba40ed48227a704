"""agentica-org/DeepCoder-Preview-Dataset through the real CLI: the four subsets in the hub's folders, rows laid
out as rllm's builders (rllm/data/preprocess/code/*.ipynb) write them, tests quoted from rllm's own reward tests
(tests/rewards/test_code_reward.py), --verify and the sandbox grading correct and wrong programs."""

from __future__ import annotations

import json

import pytest

from coderl.rewards.labels import parse_label
from tests.data.schemas import pass_rates
from tests.support import read_jsonl, read_out, run_cli, write_parquet

pytestmark = pytest.mark.timeout(300)

# Codeforces 439A, as rllm's test_reward_codeforces grades it: its tests and the program it passes.
CF_TESTS = [{"input": "3 30\n2 2 1", "output": "5"}, {"input": "3 20\n2 1 1", "output": "-1"},
            {"input": "4 45\n5 5 5 5", "output": "-1"}, {"input": "5 100\n10 10 10 10 10", "output": "10"},
            {"input": "1 20\n5", "output": "3"}, {"input": "2 100\n1 1", "output": "19"},
            {"input": "3 35\n5 5 5", "output": "4"}]
CF_SOLUTION = ("import sys\nfrom itertools import permutations\ndef main():\n    n,m=map(int, input().split())\n"
               "    a=sum(list(map(int, input().split())))\n    if a+(n-1)*10<=m:\n        print((m-a)//5)\n"
               "    else:\n        print(-1)\nif __name__ == \"__main__\":\n    main()\n")
CF_WRONG = CF_SOLUTION.replace("(m-a)//5", "(m-a)//10")
CF_PROBLEM = ("Devu sings n songs of t_i minutes, resting 10 minutes after each but the last; Churu tells "
              "5-minute jokes. The event lasts at most d minutes. Print the most jokes, or -1.")
# LeetCode 2798 as LiveCodeBench (and rllm's test_reward_livecodebench) holds it: one JSON argument per line.
LCB_FUNC_TESTS = [{"input": "[0, 1, 2, 3, 4]\n2", "output": "3", "testtype": "functional"},
                  {"input": "[5, 1, 4, 2, 2]\n6", "output": "0", "testtype": "functional"},
                  {"input": "[5, 3, 10, 8, 2]\n5", "output": "3", "testtype": "functional"}]
LCB_FUNC_STARTER = ("class Solution:\n    def numberOfEmployeesWhoMetTarget(self, hours: List[int], target: int) "
                    "-> int:\n        ")
LCB_FUNC_SOLUTION = ("class Solution:\n    def numberOfEmployeesWhoMetTarget(self, hours: List[int], target: int) "
                     "-> int:\n        count = 0\n        for hour in hours:\n            if hour >= target:\n"
                     "                count += 1\n        return count\n")
LCB_STDIN_TESTS = [{"input": "3\n12345 530391 12345\n", "output": "2\n", "testtype": "stdin"},
                   {"input": "1\n7\n", "output": "1\n", "testtype": "stdin"}]
LCB_STDIN_SOLUTION = ("import json\n\ndef main():\n    n = input()\n    phone_numbers = input().strip().split()\n"
                      "    seen = set()\n    duplicates = set()\n    for number in phone_numbers:\n"
                      "        if number in seen:\n            duplicates.add(number)\n        else:\n"
                      "            seen.add(number)\n    \n    print(len(duplicates)+1)\n"
                      "if __name__ == \"__main__\":\n    main()\n")
# A TACO call-based row (Codewars): every expected return value wrapped in a list, a list value as [[x]].
TACO_TESTS = {"fn_name": "count_by", "inputs": [[1, 5], [2, 3], [3, 4]],
              "outputs": [[[1, 2, 3, 4, 5]], [[2, 4, 6]], [[3, 6, 9, 12]]]}
TACO_SOLUTION = "def count_by(x, n):\n    return [x * i for i in range(1, n + 1)]\n"


def dataset(root):
    """The hub's layout: one folder per subset, split files inside."""
    write_parquet(root / "primeintellect" / "train-00000-of-00001.parquet", [{
        "problem": CF_PROBLEM, "solutions": [f"```python\n{CF_SOLUTION}```"],
        "tests": json.dumps([{"type": "stdin_stdout", **t} for t in CF_TESTS])}])
    write_parquet(root / "taco" / "train-00000-of-00001.parquet", [{
        "problem": "Return the first n multiples of x.", "solutions": [TACO_SOLUTION], "tests": json.dumps(TACO_TESTS)}])
    write_parquet(root / "lcbv5" / "train-00000-of-00001.parquet", [{
        "problem": "Return how many employees worked at least target hours.", "starter_code": LCB_FUNC_STARTER,
        "tests": json.dumps(LCB_FUNC_TESTS), "metadata": json.dumps({"func_name": "numberOfEmployeesWhoMetTarget"})}])
    write_parquet(root / "lcbv5" / "test-00000-of-00001.parquet", [{
        "problem": "Print one more than the number of phone numbers that occur twice.", "starter_code": "",
        "tests": json.dumps(LCB_STDIN_TESTS), "metadata": json.dumps({})}])
    write_parquet(root / "codeforces" / "test-00000-of-00001.parquet", [{
        "problem": CF_PROBLEM + "\nDemo input: 3 30\n2 2 1\nDemo output: 5", "tests": json.dumps(CF_TESTS)}])
    return root


def test_every_subset_read_kept_split_and_graded(tmp_path):
    src = dataset(tmp_path / "DeepCoder-Preview-Dataset")
    p = run_cli("--input_dir", src, "--output_dir", tmp_path / "out", "--verify", "--workers", "2")
    rows, stats = read_out(tmp_path / "out")
    assert {f["schema"] for f in stats["files"]} == {"deepcoder"}
    assert stats["rows_read"] == 5 and stats["rows_written"] == 5 and stats["dropped"] == {}, p.stdout
    assert stats["formats"] == {"stdio": 3, "call": 2}
    # its own splits: the train files stay train (the dataset brings test files), the test files test
    assert stats["splits"] == {"train": 3, "test": 2}
    assert {f["file"].split("DeepCoder-Preview-Dataset/")[1]: f["split"] for f in stats["files"]} == {
        "codeforces/test-00000-of-00001.parquet": "test", "lcbv5/test-00000-of-00001.parquet": "test",
        "lcbv5/train-00000-of-00001.parquet": "train", "primeintellect/train-00000-of-00001.parquet": "train",
        "taco/train-00000-of-00001.parquet": "train"}
    # the two rows that carry gold solutions: every case kept (the fenced one unfenced, [[x]] unwrapped)
    v = stats["verify"]
    assert v["problems_checked"] == 2 and v["cases_checked"] == 10 and v["cases_kept"] == 10
    assert v["unverified_no_reference_column"] == 3
    assert {parse_label(r["label"]).source for r in rows} == {
        f"deepcoder/{s}" for s in ("primeintellect", "taco", "lcbv5", "codeforces")}
    by_id = {parse_label(r["label"]).source_id: (r, parse_label(r["label"])) for r in rows}
    taco = by_id["taco/train-00000-of-00001.parquet:0"][1]
    assert taco.format == "call" and taco.entry_point == "count_by"
    assert [t["output"] for t in taco.tests] == [[1, 2, 3, 4, 5], [2, 4, 6], [3, 6, 9, 12]]
    func_row, func = by_id["lcbv5/train-00000-of-00001.parquet:0"]
    assert func.format == "call" and func.entry_point == "numberOfEmployeesWhoMetTarget"
    assert func.tests[0] == {"input": [[0, 1, 2, 3, 4], 2], "output": 3}
    assert "class Solution:" in func_row["input"][1]["content"]
    pi = by_id["primeintellect/train-00000-of-00001.parquet:0"][1]
    assert pi.format == "stdio" and len(pi.tests) == 7 and pi.tests[4] == {"input": "1 20\n5", "output": "3"}

    # graded as rllm grades them: the programs its reward tests pass score 1, wrong ones below 1
    programs = {"primeintellect": (CF_SOLUTION, CF_WRONG), "codeforces": (CF_SOLUTION, CF_WRONG),
                "taco": (TACO_SOLUTION, TACO_SOLUTION.replace("n + 1", "n")),
                "lcbv5/train": (LCB_FUNC_SOLUTION, LCB_FUNC_SOLUTION.replace(">=", ">")),
                "lcbv5/test": (LCB_STDIN_SOLUTION, LCB_STDIN_SOLUTION.replace("+1", ""))}
    pairs = []
    for sid, (_, label) in sorted(by_id.items()):
        right, wrong = next(v for k, v in programs.items() if sid.startswith(k))
        pairs += [(right, label.to_json()), (wrong, label.to_json())]
    rates = pass_rates(pairs)
    assert rates[0::2] == [1.0] * 5, rates
    assert all(r < 1.0 for r in rates[1::2]), rates
    assert [r["kept_cases"] for r in read_jsonl(tmp_path / "out" / "verify.jsonl")] == [7, 3]


def test_a_single_subset_is_hash_split_and_its_ids_name_the_subset(tmp_path):
    """taco alone has one split (train): the hash split applies, by --test_ratio."""
    src = dataset(tmp_path / "ds") / "taco"
    run_cli("--input_dir", src, "--output_dir", tmp_path / "out", "--test_ratio", "1")
    rows, stats = read_out(tmp_path / "out")
    assert stats["splits"] == {"train": 0, "test": 1} and stats["files"][0]["split"] == "hash"
    assert parse_label(rows[0]["label"]).source == "deepcoder/taco"


def test_a_functional_test_without_a_function_name_names_the_cell(tmp_path):
    src = write_parquet(tmp_path / "lcbv5" / "train-0.parquet", [{
        "problem": "x", "tests": json.dumps(LCB_FUNC_TESTS), "metadata": json.dumps({})}])
    p = run_cli("--input_dir", src, "--output_dir", tmp_path / "out", check=False)
    assert p.returncode == 2
    assert "row 0, field 'tests': functional tests name no function (metadata.func_name)" in p.stderr

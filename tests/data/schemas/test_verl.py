"""verl parquet as rllm (DeepCoder), code-r1, Skywork-OR1 and PRIME (Eurus-2-RL-Data) write it, through the real
CLI: every `reward_model.ground_truth` variant their reward functions read, graded in the sandbox; a mixed file's
math rows skipped by reason."""

from __future__ import annotations

import json

import pytest

from coderl.rewards.labels import FORMATS, parse_label
from tests.data.schemas import pass_rates
from tests.data.schemas.test_deepcoder import (
    CF_SOLUTION,
    CF_TESTS,
    CF_WRONG,
    LCB_FUNC_SOLUTION,
    LCB_FUNC_TESTS,
)
from tests.support import read_out, run_cli, write_parquet

pytestmark = pytest.mark.timeout(300)

FN = "numberOfEmployeesWhoMetTarget"
# rllm's test_reward_leetcode and test_reward_kodcode: code-r1's {"functional"} and {"pytest"} ground truths
LEETCODE_FUNCTIONAL = ("def check(candidate):\n    assert candidate(nums = [3,1,5,4,2], k = 2) == 4\n"
                       "    assert candidate(nums = [3,1,5,4,2], k = 5) == 5\n"
                       "    assert candidate(nums = [3,2,5,3,1], k = 3) == 4\n\n\ncheck(Solution().minOperations)")
# self-contained, as code-r1's prompt asks ("a self-contained code snippet"): the program runs with no import prelude
LEETCODE_SOLUTION = ("from typing import List\n\nclass Solution:\n    def minOperations(self, nums: List[int], k: int) -> int:\n"
                     "        is_added = [False] * k\n        count = 0\n        n = len(nums)\n"
                     "        for i in range(n - 1, -1, -1):\n            if nums[i] > k or is_added[nums[i] - 1]:\n"
                     "                continue\n            is_added[nums[i] - 1] = True\n            count += 1\n"
                     "            if count == k:\n                return n - i\n")
KODCODE_PYTEST = ("from solution import *\nfrom solution import longest_subsequence\n\n"
                  "def test_longest_subsequence_all_one_diff():\n    assert longest_subsequence([1, 2, 3, 4, 5]) == 5\n\n"
                  "def test_longest_subsequence_empty_list():\n    assert longest_subsequence([]) == 0\n")


def rm(ground_truth) -> dict:
    return {"style": "rule", "ground_truth": ground_truth if isinstance(ground_truth, str) else json.dumps(ground_truth)}


def user(text: str) -> list[dict]:
    return [{"role": "user", "content": text}]


def files(root):
    # rllm scripts/data/deepcoder_dataset.py: the tests JSON as the ground truth, LCB's metadata copied into each test
    write_parquet(root / "rllm" / "train_livecodebench.parquet", [{
        "data_source": "livecodebench", "prompt": user("Count the employees who met the target."), "ability": "code",
        "reward_model": rm([{**t, "metadata": {"func_name": FN}} for t in LCB_FUNC_TESTS]),
        "extra_info": {"split": "train", "index": 0}}])
    write_parquet(root / "rllm" / "train_primeintellect.parquet", [{
        "data_source": "primeintellect", "prompt": user("Devu and Churu: print the most jokes, or -1."),
        "ability": "code", "reward_model": rm([{"type": "stdin_stdout", **t} for t in CF_TESTS]),
        "extra_info": {"split": "train", "index": 0}}])
    # code-r1 examples/data_preprocess/coder1.py (leetcode2k) and kodcode.py
    write_parquet(root / "code-r1" / "train.parquet", [
        {"data_source": "code", "ability": "coding", "extra_info": {"split": "train", "index": i},
         "prompt": [{"role": "system", "content": "Think, then answer."}, {"role": "user", "content": q}],
         "reward_model": rm(gt)}
        for i, (q, gt) in enumerate([("Return the minimum operations to collect 1..k.", {"functional": LEETCODE_FUNCTIONAL}),
                                     ("Longest subsequence with adjacent differences of 1.", {"pytest": KODCODE_PYTEST})])])
    # Skywork-OR1: {inputs, outputs, fn_name} in LiveCodeBench's encoding, HumanEval-style check lines
    write_parquet(root / "skywork" / "train.parquet", [
        {"data_source": "train-code-leetcode-Easy", "prompt": user("Return how many employees met the target."),
         "ability": "code", "extra_info": {"index": 0, "model_difficulty": {"DeepSeek-R1-Distill-Qwen-7B": 3}},
         "reward_model": rm({"inputs": [t["input"] for t in LCB_FUNC_TESTS],
                             "outputs": [t["output"] for t in LCB_FUNC_TESTS], "fn_name": FN})},
        {"data_source": "train-code-humaneval", "prompt": user("Add two numbers."), "ability": "code",
         "extra_info": {"index": 1, "model_difficulty": {"DeepSeek-R1-Distill-Qwen-7B": 0}},
         "reward_model": rm({"import_prefix": "from typing import *\n", "entry_point": "add",
                             "test_code": "def check(candidate):\n    assert candidate(2, 3) == 5\n"
                                          "    x = candidate(-1, 1)\n    assert x == 0, (\n        x)\n"})}])
    # rllm's test_humanevalplus.parquet: a test program run after the solution
    write_parquet(root / "rllm" / "test_humanevalplus.parquet", [{
        "data_source": "humanevalplus", "prompt": user("Write add(a, b)."), "ability": "code",
        "reward_model": rm("def check(candidate):\n    inputs = [[1, 2], [0, 0]]\n    results = [3, 0]\n"
                           "    for i, r in zip(inputs, results):\n        assert candidate(*i) == r\n\ncheck(add)\n"),
        "extra_info": {"split": "test", "index": 0}}])
    # PRIME's Eurus-2-RL-Data: math and code rows in one file
    write_parquet(root / "eurus" / "validation.parquet", [
        {"data_source": "numina_olympiads", "prompt": user("Find x if 2x = 4."), "ability": "math",
         "reward_model": rm("2"), "extra_info": {"split": "dummy", "index": 0}},
        {"data_source": "codecontests", "prompt": user("Codeforces 439A. Devu, the Singer and Churu, the Joker."),
         "ability": "code", "reward_model": rm({"inputs": [t["input"] for t in CF_TESTS],
                                               "outputs": [t["output"] for t in CF_TESTS]}),
         "extra_info": {"split": "dummy", "index": 1}}])
    return root


def test_every_ground_truth_variant_read_and_graded(tmp_path):
    run_cli("--input_dir", files(tmp_path / "in"), "--output_dir", tmp_path / "out")
    rows, stats = read_out(tmp_path / "out")
    assert stats["rows_read"] == 9
    pytest_rows = 1 if "pytest" in FORMATS else 0
    assert stats["dropped"] == {"not_code_math": 1, **({} if pytest_rows else {"needs_format_pytest": 1})}
    assert stats["rows_written"] == 7 + pytest_rows
    assert stats["formats"] == {"call": 2, "stdio": 2, "assert": 3, **({"pytest": 1} if pytest_rows else {})}
    assert stats["splits"] == {"train": 5 + pytest_rows, "test": 2}  # validation.parquet, test_*.parquet held out
    by_source = {}
    for r in rows:
        label = parse_label(r["label"])
        by_source.setdefault(label.source, []).append(label)
    skywork = by_source["train-code-leetcode-Easy"][0]
    # each input line one argument: [[0, 1, 2, 3, 4], 2], not the whole text as one string
    assert skywork.format == "call" and skywork.tests[0] == {"input": [[0, 1, 2, 3, 4], 2], "output": 3}
    assert by_source["livecodebench"][0].tests == skywork.tests and by_source["livecodebench"][0].entry_point == FN
    functional = next(la for la in by_source["code"] if la.format == "assert")
    assert functional.tests == (LEETCODE_FUNCTIONAL,)
    check = by_source["train-code-humaneval"][0]
    assert check.format == "assert" and check.setup_code == "from typing import *\n"
    assert check.tests == ("def check(candidate):\n    assert candidate(2, 3) == 5\ncheck(add)",
                           "def check(candidate):\n    x = candidate(-1, 1)\n    assert x == 0, (\n        x)\ncheck(add)")
    if pytest_rows:
        assert next(la for la in by_source["code"] if la.format == "pytest").tests == (KODCODE_PYTEST,)

    add = "def add(a, b):\n    return a + b\n"
    pairs = [(LCB_FUNC_SOLUTION, skywork.to_json()), (LCB_FUNC_SOLUTION.replace(">=", ">"), skywork.to_json()),
             (LCB_FUNC_SOLUTION, by_source["livecodebench"][0].to_json()),
             (LEETCODE_SOLUTION, functional.to_json()), (LEETCODE_SOLUTION.replace("n - i", "n - i + 1"),
                                                         functional.to_json()),
             (add, check.to_json()), (add.replace("+", "-"), check.to_json()),
             (CF_SOLUTION, by_source["codecontests"][0].to_json()), (CF_WRONG, by_source["codecontests"][0].to_json()),
             (CF_SOLUTION, by_source["primeintellect"][0].to_json()),
             (add, by_source["humanevalplus"][0].to_json()), (add.replace("+", "*"), by_source["humanevalplus"][0].to_json())]
    rates = pass_rates(pairs)
    assert [rates[i] for i in (0, 2, 3, 5, 7, 9, 10)] == [1.0] * 7, rates
    assert all(rates[i] < 1.0 for i in (1, 4, 6, 8, 11)), rates


def test_an_undetectable_ground_truth_says_how_to_skip_it(tmp_path):
    src = write_parquet(tmp_path / "verl.parquet", [{"data_source": "x", "prompt": user("q"),
                                                     "reward_model": rm("42"), "extra_info": {"index": 0}}])
    p = run_cli("--input_dir", src, "--output_dir", tmp_path / "out", check=False)
    assert p.returncode == 2 and "field 'reward_model.ground_truth': cannot detect the test format" in p.stderr
    assert "--on_error skip" in p.stderr
    run_cli("--input_dir", src, "--output_dir", tmp_path / "out", "--on_error", "skip")
    _, stats = read_out(tmp_path / "out")
    assert stats["dropped"] == {"bad_cell": 1}

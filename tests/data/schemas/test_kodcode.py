"""KodCode rows through the real preprocessing CLI (real parquet, a subprocess) and the real sandbox (--verify)."""

import pytest

from coderl.rewards.labels import parse_label
from tests.rewards.sandbox.inside.formats.test_pytests import KODCODE_TEST, MERGE
from tests.support import read_out, run_cli, write_parquet

pytestmark = pytest.mark.timeout(180)


def kodcode_rows() -> list[dict]:
    """Rows laid out as KodCode-V1 publishes them (its columns; test_info a list of structs)."""
    info = [{"function_name": "merge_intervals", "parameter_list": "(intervals)",
             "function_declaration": "def merge_intervals(intervals):", "docstring": None}]
    other = ("import pytest\nfrom solution import is_palindrome\n\n"
             "@pytest.mark.parametrize('s, want', [('abba', True), ('abc', False), ('', True)])\n"
             "def test_is_palindrome(s, want):\n    assert is_palindrome(s) is want\n")
    return [
        {"version": "v1.0", "style": "instruct", "subset": "Leetcode", "question_id": "Leetcode_1_I",
         "question": "Merge all overlapping intervals.", "solution": MERGE, "test": KODCODE_TEST, "test_info": info,
         "gpt_pass_sequence": [1, 1], "gpt_pass_trial_num": 2, "gpt_difficulty": "medium", "gpt_pass_percentage": 1.0},
        {"version": "v1.0", "style": "complete", "subset": "Prefill", "question_id": "Prefill_2_C",
         "question": "def is_palindrome(s):\n    \"\"\"Whether s reads the same backwards.\"\"\"",
         "solution": "def is_palindrome(s):\n    return s == s[::-1]\n", "test": other,
         "test_info": [{"function_name": "is_palindrome", "parameter_list": "(s)",
                        "function_declaration": "def is_palindrome(s):", "docstring": None}],
         "gpt_pass_sequence": [1], "gpt_pass_trial_num": 1, "gpt_difficulty": "easy", "gpt_pass_percentage": 1.0},
        {"version": "v1.0", "style": "instruct", "subset": "Apps", "question_id": "Apps_3_I",
         "question": "No tests here.", "solution": "def f():\n    pass\n", "test": None, "test_info": None,
         "gpt_pass_sequence": [], "gpt_pass_trial_num": 0, "gpt_difficulty": "hard", "gpt_pass_percentage": 0.0},
    ]


def test_kodcode_rows_become_verified_pytest_labels(tmp_path):
    src = write_parquet(tmp_path / "in" / "kodcode.parquet", kodcode_rows())
    run_cli("--input_dir", src, "--output_dir", tmp_path / "out", "--test_ratio", "0", "--verify")
    rows, stats = read_out(tmp_path / "out")
    assert stats["schema"] == "kodcode" and stats["rows_read"] == 3 and stats["rows_written"] == 2
    assert stats["dropped"] == {"no_tests": 1}
    labels = {parse_label(r["label"]).source_id: (parse_label(r["label"]), r) for r in rows}
    merge, row = labels["Leetcode_1_I"]
    assert merge.format == "pytest" and merge.tests == (KODCODE_TEST,) and merge.entry_point == "merge_intervals"
    assert merge.source == "KodCode" and merge.extra["subset"] == "Leetcode"
    assert "def merge_intervals(intervals):" in row["input"][1]["content"]
    assert merge.ref_time_s is not None  # --verify ran the reference under pytest in the sandbox: all 6 items kept
    pal, _ = labels["Prefill_2_C"]
    assert pal.format == "pytest" and pal.entry_point == "is_palindrome"

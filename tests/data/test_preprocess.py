"""End-to-end tests of data/preprocess.py: real parquet files built with pyarrow, the real CLI as a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from coderl.rewards.labels import parse_label
from tests.support import (
    PREPROCESS,
    REPO_ROOT,
    coderm_rows,
    humaneval_rows,
    read_jsonl,
    read_out,
    run_cli,
    tiny_checkpoint,
    write_parquet,
)

pytestmark = pytest.mark.timeout(120)


def check_row(row: dict):
    assert isinstance(row["input"], list) and [m["role"] for m in row["input"]] == ["system", "user"]
    assert all(isinstance(m["content"], str) and m["content"] for m in row["input"])
    assert isinstance(row["label"], str)
    label = parse_label(row["label"])
    assert label.source and label.source_id
    assert label.extra["answer_format"] in ("think_answer", "code_block")
    return label





# --- schemas -----------------------------------------------------------------------------------------

def test_coderm_rows_signatures_dedup(tmp_path):
    src = write_parquet(tmp_path / "in" / "coderm.parquet", coderm_rows())
    run_cli("--input_dir", src, "--output_dir", tmp_path / "out", "--test_ratio", "0")
    rows, stats = read_out(tmp_path / "out")
    assert stats["schema"] == "coderm" and stats["rows_read"] == 3
    # row 3 asks row 1's question (up to case and whitespace) but grades with other tests: another task
    assert stats["rows_written"] == 3 and stats["duplicates"] == 0 and stats["dropped"] == {}
    assert stats["same_question"] == {"kept": 1, "same_prompt": 1,
                                      "examples": [{"source_id": "3", "first": "1", "same_prompt": True}]}
    by_id = {parse_label(r["label"]).source_id: r for r in rows}
    add, stack = by_id["1"], by_id["2"]
    la = check_row(add)
    assert la.format == "unittest" and la.entry_point == "add" and len(la.tests) == 2
    assert la.source == "CodeRM-UnitTest"
    user = add["input"][1]["content"]
    assert "Add two numbers." in user and "def add(a, b):" in user and "_helper" not in user
    su = stack["input"][1]["content"]
    assert "class MinStack:" in su and "def push(self, x: int) -> None:" in su
    assert "def get_min(self) -> int:" in su and "def __init__(self):" in su and "_private" not in su
    assert stats["tests_per_row"]["min"] == 1 and stats["tests_per_row"]["max"] == 2
    assert "code_generate" not in json.dumps(rows)  # the big unused column is never read


def test_dedup_needs_the_same_prompt_and_the_same_tests(tmp_path):
    """MBPP-style tasks sharing a text but not a function name and tests are distinct tasks: kept, reported;
    a row that asks the same (up to case and whitespace) and grades the same is a duplicate."""
    def row(task_id, text, name, tests):
        return {"task_id": task_id, "text": text, "code": f"def {name}(xs):\n    return sorted(xs)\n",
                "test_list": [t.replace("F", name) for t in tests], "test_setup_code": "", "challenge_test_list": []}
    text = "Write a function to sort a list."
    rows = [row(1, text, "sort_list", ["assert F([2, 1]) == [1, 2]"]),
            row(2, text, "sort_items", ["assert F([3, 1, 2]) == [1, 2, 3]", "assert F([]) == []"]),
            row(3, "  write a FUNCTION to sort a list. ", "sort_list", ["assert F([2, 1]) == [1, 2]"]),  # dup of 1
            row(4, text, "sort_list", ["assert F([5, 4]) == [4, 5]"])]  # 1's prompt, other tests
    src = write_parquet(tmp_path / "mbpp.parquet", rows)
    p = run_cli("--input_dir", src, "--output_dir", tmp_path / "out")
    out, stats = read_out(tmp_path / "out")
    assert sorted(parse_label(r["label"]).source_id for r in out) == ["1", "2", "4"]
    assert stats["duplicates"] == 1 and stats["dropped"] == {"duplicate": 1}
    assert stats["same_question"]["kept"] == 2 and stats["same_question"]["same_prompt"] == 1
    assert stats["same_question"]["examples"] == [{"source_id": "2", "first": "1", "same_prompt": False},
                                                  {"source_id": "4", "first": "1", "same_prompt": True}]
    assert "same question, other tests: 2 kept as distinct tasks, e.g. 2 (as 1), 4 (as 1)" in p.stdout, p.stdout
    splits = {parse_label(r["label"]).source_id for r in read_jsonl(tmp_path / "out" / "train.jsonl")}
    assert splits in (set(), {"1", "2", "4"})  # one question, one split: no task leaks across it


def test_humaneval_real_data_prompt_has_def_line(tmp_path):
    he = humaneval_rows()
    src = write_parquet(tmp_path / "he.parquet", he)
    run_cli("--input_dir", src, "--output_dir", tmp_path / "out")
    rows, stats = read_out(tmp_path / "out")
    assert stats["schema"] == "humaneval" and stats["rows_written"] == 164
    by_id = {parse_label(r["label"]).source_id: r for r in rows}
    for p in he:
        row = by_id[p["task_id"]]
        label = check_row(row)
        assert label.format == "humaneval" and label.entry_point == p["entry_point"] and len(label.tests) == 1
        assert label.extra["prompt"] == p["prompt"]  # exact: human-eval completions continue it
        def_line = next(ln for ln in p["prompt"].splitlines() if ln.startswith(f"def {p['entry_point']}("))
        assert def_line in row["input"][1]["content"]


def test_mbpp_nested_lists_and_nulls(tmp_path):
    rows = [
        {"task_id": 11, "text": "Write a function to remove first and last occurrence of a char.",
         "code": "def remove_Occ(s, ch):\n    return s.replace(ch, '', 1)[::-1].replace(ch, '', 1)[::-1]\n",
         "test_list": ["assert remove_Occ('hello','l') == 'heo'", None, "assert remove_Occ('abcda','a') == 'bcd'"],
         "test_setup_code": "", "challenge_test_list": []},
        {"task_id": 12, "text": "Sort a matrix by row sums.",
         "code": "import math\ndef sort_matrix(M):\n    return sorted(M, key=sum)\n",
         "test_list": ["assert sort_matrix([[1, 2], [0]]) == [[0], [1, 2]]"],
         "test_setup_code": "import math", "challenge_test_list": None},
    ]
    src = write_parquet(tmp_path / "mbpp.parquet", rows)
    run_cli("--input_dir", src, "--output_dir", tmp_path / "out", "--source", "mbpp-sanitized")
    out, stats = read_out(tmp_path / "out")
    assert stats["schema"] == "mbpp" and stats["rows_written"] == 2
    by_id = {parse_label(r["label"]).source_id: r for r in out}
    l11 = check_row(by_id["11"])
    assert l11.format == "assert" and len(l11.tests) == 2 and l11.source == "mbpp-sanitized"
    assert "def remove_Occ(s, ch):" in by_id["11"]["input"][1]["content"]
    l12 = check_row(by_id["12"])
    assert l12.setup_code == "import math" and l12.entry_point == "sort_matrix"


def test_mbpp_sanitized_rows_keep_their_test_imports(tmp_path):
    # The sanitized release has `prompt` and `test_imports` (its asserts call math.isclose; the solution need
    # not import math): the imports run before the asserts, as MBPP's own evaluation runs them.
    rows = [{"source_file": "x", "task_id": 17, "prompt": "Write a function to find the area of a circle.",
             "code": "def circle_area(r):\n    return 3.141592653589793 * r * r\n",
             "test_imports": ["import math"],
             "test_list": ["assert math.isclose(circle_area(2), 12.566370614359172, rel_tol=0.001)"]}]
    src = write_parquet(tmp_path / "sanitized.parquet", rows)
    run_cli("--input_dir", src, "--output_dir", tmp_path / "out", "--verify")
    out, stats = read_out(tmp_path / "out")
    assert stats["schema"] == "mbpp" and stats["rows_written"] == 1, stats
    label = check_row(out[0])
    assert label.setup_code == "import math" and label.entry_point == "circle_area"
    assert "area of a circle" in out[0]["input"][1]["content"]


def test_apps_taco_stdio_and_call(tmp_path):
    rows = [
        {"problem_id": 7, "question": "Read two ints and print their sum.",
         "solutions": json.dumps(["a, b = map(int, input().split())\nprint(a + b)"]),
         "input_output": json.dumps({"inputs": ["1 2\n", "3 4\n"], "outputs": ["3\n", "7\n"]}),
         "starter_code": None},
        {"problem_id": 8, "question": "Return the double of x.",
         "solutions": json.dumps(["print 'py2'", "class Solution:\n    def double(self, x):\n        return 2 * x\n"]),
         "input_output": json.dumps({"fn_name": "double", "inputs": [[1], [5]], "outputs": [[2], [10]]}),
         "starter_code": "class Solution:\n    def double(self, x: int) -> int:\n        "},
        {"problem_id": 9, "question": "Return the pair reversed.",
         "solutions": json.dumps(["def rev(a, b):\n    return [b, a]\n"]),
         "input_output": json.dumps({"fn_name": "rev", "inputs": [[1, 2]], "outputs": [[2, 1]]}),
         "starter_code": ""},
    ]
    src = write_parquet(tmp_path / "apps.parquet", rows)
    run_cli("--input_dir", src, "--output_dir", tmp_path / "out", "--keep_reference")
    out, stats = read_out(tmp_path / "out")
    assert stats["schema"] == "apps_taco" and stats["rows_written"] == 3
    by_id = {parse_label(r["label"]).source_id: r for r in out}
    l7 = check_row(by_id["7"])
    assert l7.format == "stdio" and l7.tests[1] == {"input": "3 4\n", "output": "7\n"}
    assert "standard input" in by_id["7"]["input"][1]["content"]
    l8 = check_row(by_id["8"])
    assert l8.format == "call" and l8.entry_point == "double"
    assert [t["output"] for t in l8.tests] == [2, 10]  # APPS's one-element wrapping removed
    assert "def double(self, x: int) -> int:" in by_id["8"]["input"][1]["content"]
    assert l8.reference_solution.startswith("class Solution")  # the Python 2 solution is skipped
    l9 = check_row(by_id["9"])
    assert l9.tests[0] == {"input": [1, 2], "output": [2, 1]}  # not all outputs one-element: kept as is
    assert "def rev(a, b):" in by_id["9"]["input"][1]["content"]


def test_verl_messages_and_struct_ground_truth(tmp_path):
    rows = [
        {"data_source": "codecontests", "prompt": [{"role": "system", "content": "theirs"},
                                                    {"role": "user", "content": "Print the sum of two ints."}],
         "reward_model": {"style": "rule", "ground_truth": json.dumps({"inputs": ["1 2\n"], "outputs": ["3\n"]})},
         "extra_info": {"index": 5, "split": "train"}},
        {"data_source": None, "prompt": [{"role": "user", "content": "Write square(x)."}],
         "reward_model": {"style": "rule", "ground_truth": json.dumps(["assert square(3) == 9"])},
         "extra_info": {"index": 6, "split": "train"}},
        {"data_source": "leetcode", "prompt": [{"role": "user", "content": "Write twice(x)."}],
         "reward_model": {"style": "rule",
                          "ground_truth": json.dumps({"fn_name": "twice", "inputs": [[2]], "outputs": [[4]]})},
         "extra_info": None},
    ]
    src = write_parquet(tmp_path / "verl.parquet", rows)
    run_cli("--input_dir", src, "--output_dir", tmp_path / "out", "--system_prompt", "code_block")
    out, stats = read_out(tmp_path / "out")
    assert stats["schema"] == "verl" and stats["rows_written"] == 3
    labels = {check_row(r).format: (r, check_row(r)) for r in out}
    r, lab = labels["stdio"]
    assert lab.source == "codecontests" and lab.source_id == "5"
    assert r["input"][0]["content"] != "theirs" and lab.extra["answer_format"] == "code_block"
    assert labels["assert"][1].source == "verl"
    assert "twice" in labels["call"][0]["input"][1]["content"] and labels["call"][1].tests[0]["output"] == 4
    bad = write_parquet(tmp_path / "bad" / "verl.parquet", [
        {"data_source": "x", "prompt": [{"role": "user", "content": "q"}],
         "reward_model": {"style": "rule", "ground_truth": "42 is the answer"}, "extra_info": None}])
    p = run_cli("--input_dir", bad, "--output_dir", tmp_path / "out2", check=False)
    assert p.returncode != 0 and "reward_model.ground_truth" in p.stderr and "row 0" in p.stderr


# --- split, dedup, options --------------------------------------------------------------------------

def test_split_is_deterministic_and_row_order_independent(tmp_path):
    rows = coderm_rows(n_extra=60)
    write_parquet(tmp_path / "a.parquet", rows, row_group_size=7)
    write_parquet(tmp_path / "b.parquet", rows[::-1])
    for name in ("a", "a2", "b"):
        run_cli("--input_dir", tmp_path / f"{name[0]}.parquet", "--output_dir", tmp_path / name,
                "--test_ratio", "0.3", "--batch_size", "5")
    ids = {}
    for name in ("a", "a2", "b"):
        ids[name] = {s: {parse_label(r["label"]).source_id for r in read_jsonl(tmp_path / name / f"{s}.jsonl")}
                     for s in ("train", "test")}
    assert (tmp_path / "a" / "train.jsonl").read_bytes() == (tmp_path / "a2" / "train.jsonl").read_bytes()
    # reversed order: the same split for every row (rows 1 and 3, one question with other tests, share it)
    assert ids["b"] == ids["a"] and ("1" in ids["a"]["test"]) == ("3" in ids["a"]["test"])
    assert 5 <= len(ids["a"]["test"]) <= 35 and len(ids["a"]["train"]) + len(ids["a"]["test"]) == 63
    run_cli("--input_dir", tmp_path / "a.parquet", "--output_dir", tmp_path / "seed", "--test_ratio", "0.3",
            "--seed", "7")
    seed_test = {parse_label(r["label"]).source_id for r in read_jsonl(tmp_path / "seed" / "test.jsonl")}
    assert seed_test != ids["a"]["test"]


def mbpp_row(task_id: int, text: str | None = None) -> dict:
    name = f"f{task_id}"
    return {"task_id": task_id, "text": text or f"Write function number {task_id}.",
            "code": f"def {name}(x):\n    return x + {task_id}\n", "test_list": [f"assert {name}(0) == {task_id}"],
            "test_setup_code": "", "challenge_test_list": []}


def test_a_dataset_keeps_its_own_splits(tmp_path):
    """MBPP as the hub lays it out (full/{train,test,validation,prompt}-*.parquet): each file stays its split,
    whatever --test_ratio says; validation is held out with test, the few-shot prompt split trains."""
    d = tmp_path / "mbpp" / "full"
    for split, ids in (("train", range(601, 611)), ("test", range(11, 31)), ("validation", range(511, 516)),
                       ("prompt", range(1, 3))):
        write_parquet(d / f"{split}-00000-of-00001.parquet", [mbpp_row(i) for i in ids])
    run_cli("--input_dir", tmp_path / "mbpp", "--output_dir", tmp_path / "out", "--test_ratio", "0.5")
    rows, stats = read_out(tmp_path / "out")
    assert stats["splits"] == {"train": 12, "test": 25}
    assert {f["file"].rsplit("/", 1)[1].split("-")[0]: f["split"] for f in stats["files"]} == {
        "train": "train", "test": "test", "validation": "test", "prompt": "train"}
    test_ids = {int(parse_label(r["label"]).source_id) for r in read_jsonl(tmp_path / "out" / "test.jsonl")}
    assert test_ids == {*range(11, 31), *range(511, 516)}
    assert stats["split_overlap"] == {"questions": 0, "examples": []}
    # --splits hash: the old behaviour, every row by --test_ratio; benchmark rows in train are counted
    run_cli("--input_dir", tmp_path / "mbpp", "--output_dir", tmp_path / "hash", "--splits", "hash",
            "--test_ratio", "0")
    _, stats = read_out(tmp_path / "hash")
    assert stats["splits"] == {"train": 37, "test": 0} and {f["split"] for f in stats["files"]} == {"hash"}


def test_a_train_file_alone_is_hash_split_and_a_benchmark_never_trains(tmp_path):
    rows = [{**mbpp_row(i), "task_id": f"custom/{i}"} for i in range(40)]  # an MBPP-layout dataset of one split
    write_parquet(tmp_path / "one" / "train-00000-of-00001.parquet", rows)
    run_cli("--input_dir", tmp_path / "one", "--output_dir", tmp_path / "out", "--test_ratio", "0.5")
    _, stats = read_out(tmp_path / "out")
    assert stats["files"][0]["split"] == "hash" and 8 <= stats["splits"]["test"] <= 32
    # MBPP itself in one file (its 974 tasks): split by its task ids, as its README defines them
    write_parquet(tmp_path / "mbpp.parquet", [mbpp_row(i) for i in (5, 11, 300, 510, 511, 600, 601, 974)])
    run_cli("--input_dir", tmp_path / "mbpp.parquet", "--output_dir", tmp_path / "mbpp", "--test_ratio", "0")
    test_ids = {parse_label(r["label"]).source_id for r in read_jsonl(tmp_path / "mbpp" / "test.jsonl")}
    assert test_ids == {"11", "300", "510", "511", "600"}
    # HumanEval, named anything: a benchmark, test whatever --test_ratio says
    he = write_parquet(tmp_path / "he" / "humaneval.parquet", humaneval_rows()[:12])
    p = run_cli("--input_dir", he, "--output_dir", tmp_path / "he_out", "--test_ratio", "0")
    _, stats = read_out(tmp_path / "he_out")
    assert stats["splits"] == {"train": 0, "test": 12} and stats["benchmark_rows_in_train"] == 0
    p = run_cli("--input_dir", he, "--output_dir", tmp_path / "he_hash", "--test_ratio", "0", "--splits", "hash")
    _, stats = read_out(tmp_path / "he_hash")
    assert stats["splits"] == {"train": 12, "test": 0} and stats["benchmark_rows_in_train"] == 12
    assert "WARNING: 12 benchmark row(s) written to train (--splits hash)" in p.stdout


def test_questions_in_both_splits_are_reported(tmp_path):
    d = tmp_path / "in"
    write_parquet(d / "train.parquet", [mbpp_row(601, "Add one."), mbpp_row(602)])
    write_parquet(d / "test.parquet", [mbpp_row(11, "  ADD one. ")])  # the same question, other tests
    p = run_cli("--input_dir", d, "--output_dir", tmp_path / "out")
    _, stats = read_out(tmp_path / "out")
    assert stats["splits"] == {"train": 2, "test": 1}
    assert stats["split_overlap"] == {"questions": 1, "examples": ["11"]}  # test.parquet is read first
    assert "WARNING: 1 question(s) in both train and test, e.g. 11" in p.stdout


def test_a_renamed_copy_is_read_with_columns(tmp_path):
    rows = [{("problem" if k == "question" else k): v for k, v in r.items()} for r in coderm_rows()]
    src = write_parquet(tmp_path / "renamed.parquet", rows)
    p = run_cli("--input_dir", src, "--output_dir", tmp_path / "out", check=False)
    assert p.returncode == 2
    assert "nearest known schema: coderm, which also needs question" in p.stderr
    assert "--columns question=YOUR_COLUMN" in p.stderr
    run_cli("--input_dir", src, "--output_dir", tmp_path / "out", "--columns", "question=problem")
    _, stats = read_out(tmp_path / "out")
    assert stats["schema"] == "coderm" and stats["rows_written"] == 3
    p = run_cli("--input_dir", src, "--output_dir", tmp_path / "out2", "--columns", "question", check=False)
    assert p.returncode == 2 and "expected SCHEMA_COLUMN=FILE_COLUMN, e.g. question=problem" in p.stderr


def test_options_max_samples_tests_prompt_file(tmp_path):
    rows = coderm_rows(n_extra=10)
    src = write_parquet(tmp_path / "in.parquet", rows)
    prompt = tmp_path / "sys.txt"
    prompt.write_text("Answer with one python block.\n")
    run_cli("--input_dir", src, "--output_dir", tmp_path / "out", "--max_samples", "4",
            "--max_tests_per_problem", "1", "--system_prompt_file", prompt, "--answer_format", "code_block")
    out, stats = read_out(tmp_path / "out")
    assert len(out) == 4 and stats["rows_written"] == 4
    assert stats["tests_per_row"]["max"] == 1 and stats["tests_per_row"]["truncated_rows"] == 1
    for r in out:
        assert r["input"][0]["content"] == "Answer with one python block."
        assert check_row(r).extra["answer_format"] == "code_block" and len(parse_label(r["label"]).tests) == 1
    p = run_cli("--input_dir", src, "--output_dir", tmp_path / "o2", "--system_prompt", "nope", check=False)
    assert p.returncode != 0 and "think_answer" in p.stderr


def test_directory_glob_and_mixed_schemas(tmp_path):
    d = tmp_path / "in"
    write_parquet(d / "train-00000-of-00002.parquet", coderm_rows()[:2])
    write_parquet(d / "sub" / "train-00001-of-00002.parquet", coderm_rows(n_extra=2)[3:])
    write_parquet(d / "test-00000.parquet", coderm_rows(n_extra=5)[3:])
    (d / "README.md").write_text("not parquet")
    run_cli("--input_dir", d, "--output_dir", tmp_path / "out", "--input_glob", "train-*.parquet")
    _, stats = read_out(tmp_path / "out")
    assert len(stats["files"]) == 2 and stats["rows_read"] == 4 and stats["rows_written"] == 4


# --- bad input and atomicity -----------------------------------------------------------------------

def test_unknown_schema_lists_columns_and_known(tmp_path):
    src = write_parquet(tmp_path / "x.parquet", [{"foo": 1, "bar": "baz"}])
    p = run_cli("--input_dir", src, "--output_dir", tmp_path / "out", check=False)
    assert p.returncode != 0
    for word in ("foo", "bar", "coderm", "humaneval", "mbpp", "apps_taco", "verl", str(src)):
        assert word in p.stderr
    p = run_cli("--input_dir", write_parquet(tmp_path / "y.parquet", coderm_rows()), "--output_dir",
                tmp_path / "out", "--format", "mbpp", check=False)
    assert p.returncode != 0 and "test_list" in p.stderr and "code_ground_truth" in p.stderr
    assert not (tmp_path / "out" / "train.jsonl").exists()


def test_bad_cell_names_file_row_field_and_skip(tmp_path):
    rows = coderm_rows(n_extra=4)
    rows[4]["unit_tests"] = "[{not json"
    rows[5]["question"] = None
    src = write_parquet(tmp_path / "bad.parquet", rows)
    p = run_cli("--input_dir", src, "--output_dir", tmp_path / "out", check=False)
    assert p.returncode != 0
    assert str(src) in p.stderr and "row 4" in p.stderr and "'unit_tests'" in p.stderr and "JSON" in p.stderr
    assert not (tmp_path / "out" / "train.jsonl").exists() and not (tmp_path / "out" / "stats.json").exists()
    assert not [f for f in os.listdir(tmp_path / "out") if f.endswith(".tmp")]
    run_cli("--input_dir", src, "--output_dir", tmp_path / "out", "--on_error", "skip")
    _, stats = read_out(tmp_path / "out")
    assert stats["dropped"]["bad_cell"] == 2 and stats["rows_written"] == 5
    assert any("'question'" in e and "row 5" in e for e in stats["errors_sample"])


def _bad_utf8(values: list) -> object:
    """A parquet string column holding `values` (bytes) as they are: parquet writers do not check UTF-8."""
    import pyarrow as pa

    raw = pa.array(values, type=pa.binary())
    return pa.Array.from_buffers(pa.string(), len(raw), raw.buffers())


def test_invalid_utf8_names_file_row_field_and_skip(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = coderm_rows(n_extra=4)[3:]  # distinct questions
    table = pa.Table.from_pylist(rows)
    questions = [r["question"].encode() for r in rows]
    questions[2] = b"Add two numbers \xff\xfe (latin-1 bytes in a UTF-8 column)."
    table = table.set_column(table.schema.get_field_index("question"), "question", _bad_utf8(questions))
    src = tmp_path / "bad.parquet"
    pq.write_table(table, src)
    p = run_cli("--input_dir", src, "--output_dir", tmp_path / "out", check=False)
    assert p.returncode == 2, p.stderr
    assert f"file {src}, row 2, field 'question': is not valid UTF-8 text" in p.stderr, p.stderr
    assert "\\xff" in p.stderr and not (tmp_path / "out" / "train.jsonl").exists()
    run_cli("--input_dir", src, "--output_dir", tmp_path / "out", "--on_error", "skip")
    out, stats = read_out(tmp_path / "out")
    assert stats["rows_read"] == 4 and stats["rows_written"] == 3 and stats["dropped"] == {"bad_cell": 1}
    assert sorted(parse_label(r["label"]).source_id for r in out) == ["100", "101", "103"]
    assert any("row 2, field 'question'" in e for e in stats["errors_sample"])
    # inside a list column (MBPP's test_list): the column is named, the other rows of the batch survive
    mbpp = pa.Table.from_pylist([{"task_id": i, "text": f"Task {i}.", "code": "def f():\n    return 1\n",
                                  "test_list": ["assert f() == 1"]} for i in range(3)])
    items = _bad_utf8([b"assert f() == 1", b"assert f() == '\xc3'", b"assert f() == 1"])
    mbpp = mbpp.set_column(mbpp.schema.get_field_index("test_list"), "test_list",
                           pa.ListArray.from_arrays(pa.array([0, 1, 2, 3], pa.int32()), items))
    pq.write_table(mbpp, tmp_path / "m.parquet")
    p = run_cli("--input_dir", tmp_path / "m.parquet", "--output_dir", tmp_path / "om", check=False)
    assert p.returncode == 2 and "row 1, field 'test_list': is not valid UTF-8" in p.stderr, p.stderr
    run_cli("--input_dir", tmp_path / "m.parquet", "--output_dir", tmp_path / "om", "--on_error", "skip")
    _, stats = read_out(tmp_path / "om")
    assert stats["rows_written"] == 2 and stats["dropped"] == {"bad_cell": 1}


def test_unknown_schema_file_is_skipped_and_counted_under_skip(tmp_path):
    d = tmp_path / "in"
    write_parquet(d / "a.parquet", coderm_rows(n_extra=2)[3:])
    write_parquet(d / "b.parquet", [{"foo": 1, "bar": "baz"}])
    p = run_cli("--input_dir", d, "--output_dir", tmp_path / "out", check=False)
    assert p.returncode == 2 and f"file {d / 'b.parquet'}: unknown dataset schema; columns found: foo, bar" in p.stderr
    p = run_cli("--input_dir", d, "--output_dir", tmp_path / "out", "--on_error", "skip")
    _, stats = read_out(tmp_path / "out")
    assert stats["rows_written"] == 2 and [f["file"] for f in stats["files"]] == [str(d / "a.parquet")]
    (skipped,) = stats["files_skipped"]
    assert skipped["file"] == str(d / "b.parquet") and "columns found: foo, bar" in skipped["error"]
    assert "files skipped: 1" in p.stdout


def test_invalid_json_message_and_nothing_written_warning(tmp_path):
    rows = coderm_rows()[:1]
    rows[0]["unit_tests"] = '[{"ut_id": 0, "code": "import unittest\n"}]'  # a raw newline inside a JSON string
    src = write_parquet(tmp_path / "bad.parquet", rows)
    p = run_cli("--input_dir", src, "--output_dir", tmp_path / "out", check=False)
    assert p.returncode == 2 and "row 0, field 'unit_tests': is not valid JSON" in p.stderr, p.stderr
    assert "line 1 column" in p.stderr and " at at " not in p.stderr, p.stderr
    p = run_cli("--input_dir", src, "--output_dir", tmp_path / "out", "--on_error", "skip")
    assert "WARNING: no rows written" in p.stdout, p.stdout
    _, stats = read_out(tmp_path / "out")
    assert stats["rows_written"] == 0 and stats["dropped"] == {"bad_cell": 1}
    p = run_cli("--input_dir", write_parquet(tmp_path / "ok.parquet", coderm_rows()), "--output_dir", tmp_path / "o2")
    assert "WARNING" not in p.stdout, p.stdout


def test_corrupt_file_and_atomic_failure_keeps_previous_output(tmp_path):
    d = tmp_path / "in"
    write_parquet(d / "a.parquet", coderm_rows(n_extra=3))
    good = write_parquet(tmp_path / "b.parquet", coderm_rows(n_extra=40)[10:])
    data = good.read_bytes()
    (d / "b.parquet").write_bytes(data[: len(data) // 2])  # truncated: footer gone
    out = tmp_path / "out"
    run_cli("--input_dir", d / "a.parquet", "--output_dir", out)
    before = {f: (out / f).read_bytes() for f in ("train.jsonl", "test.jsonl", "stats.json")}
    p = run_cli("--input_dir", d, "--output_dir", out, check=False)
    assert p.returncode != 0 and "b.parquet" in p.stderr and "parquet" in p.stderr.lower()
    assert {f: (out / f).read_bytes() for f in before} == before
    assert sorted(os.listdir(out)) == ["stats.json", "test.jsonl", "train.jsonl"]
    run_cli("--input_dir", d, "--output_dir", out, "--on_error", "skip")
    _, stats = read_out(out)
    assert [Path(f["file"]).name for f in stats["files_skipped"]] == ["b.parquet"] and stats["rows_written"] == 6


def test_failure_after_rows_were_written_leaves_nothing(tmp_path):
    """A bad cell in the second file, after the first file's rows went to the temp files."""
    d = tmp_path / "in"
    write_parquet(d / "a.parquet", coderm_rows(n_extra=30))
    rows = coderm_rows(n_extra=3)[3:]
    rows[2]["code_ground_truth"] = 12  # wrong type for the column -> written as its own file schema
    write_parquet(d / "b.parquet", [{**r, "code_ground_truth": str(r["code_ground_truth"])} for r in rows[:2]]
                  + [{**rows[2], "code_ground_truth": None}])
    out = tmp_path / "out"
    p = run_cli("--input_dir", d, "--output_dir", out, check=False)
    assert p.returncode != 0 and "b.parquet" in p.stderr and "row 2" in p.stderr
    assert "code_ground_truth" in p.stderr
    assert os.listdir(out) == []


def test_bad_arguments_are_named_before_any_work(tmp_path):
    src = write_parquet(tmp_path / "c.parquet", coderm_rows())
    not_a_dir = tmp_path / "file.txt"
    not_a_dir.write_text("keep me")
    r = run_cli("--input_dir", src, "--output_dir", not_a_dir, check=False)
    assert r.returncode == 2 and "--output_dir" in r.stderr and "not a directory" in r.stderr
    assert not_a_dir.read_text() == "keep me"
    r = run_cli("--input_dir", src, "--output_dir", tmp_path / "out", "--verify", "--workers", "0", check=False)
    assert r.returncode == 2 and "--workers must be at least 1" in r.stderr
    assert not (tmp_path / "out").exists()
    r = run_cli("--input_dir", src, "--output_dir", tmp_path / "out", "--max_prompt_tokens", "512", check=False)
    assert r.returncode == 2 and "--max_prompt_tokens needs a positive budget and --tokenizer" in r.stderr
    r = run_cli("--input_dir", src, "--output_dir", tmp_path / "out", "--tokenizer", tmp_path / "nope", check=False)
    assert r.returncode == 2 and "cannot load the tokenizer at" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "out").exists()


def test_help_shows_every_default():
    text = " ".join(run_cli("--help").stdout.split())  # argparse wraps at the terminal's width
    assert "--test_ratio TEST_RATIO" in text and "(default: 0.1)" in text and "(default: 42)" in text
    assert "(default: think_answer)" in text and "(default: drop)" in text


def test_without_the_venv_a_missing_dependency_says_what_to_activate():
    """`python data/preprocess.py` by an interpreter without pyarrow (the quickstart's .venv not active)."""
    hide = f"import runpy, sys; sys.modules['pyarrow'] = None; runpy.run_path({str(PREPROCESS)!r}, run_name='__main__')"
    p = subprocess.run([sys.executable, "-c", hide, "--help"], capture_output=True, text=True, timeout=60, cwd="/")
    assert p.returncode == 1 and "Traceback" not in p.stderr, p.stderr
    assert "error: No module named 'pyarrow'" in p.stderr and "lacks coderl's dependencies" in p.stderr
    venv = REPO_ROOT / ".venv"
    fix = f"source {venv}/bin/activate" if (venv / "bin" / "python").exists() else "quickstart.sh"
    assert fix in p.stderr, p.stderr


# --- prompt token budget --------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def tokenizer_dir(tmp_path_factory) -> Path:
    return tiny_checkpoint(tmp_path_factory.mktemp("tok") / "model")


def test_prompts_over_the_token_budget_are_dropped_or_reported(tmp_path, tokenizer_dir):
    """--max_prompt_tokens with the training tokenizer: what is written fits the budget under the chat template
    (what OpenRLHF truncates at PROMPT_MAX_LEN); the rest is dropped, or kept and counted with --over_budget report."""
    from transformers import AutoTokenizer

    from coderl.data.prompt_budget import prompt_lengths

    src = write_parquet(tmp_path / "in" / "he.parquet", humaneval_rows()[:40])
    run_cli("--input_dir", src, "--output_dir", tmp_path / "all", "--test_ratio", "0", "--tokenizer", tokenizer_dir)
    rows, stats = read_out(tmp_path / "all")
    tok = AutoTokenizer.from_pretrained(tokenizer_dir)
    lengths = prompt_lengths(tok, [r["input"] for r in rows])
    pt = stats["prompt_tokens"]
    assert pt["measured"] == 40 and pt["max"] == max(lengths) and pt["min"] == min(lengths) and pt["over"] == 0
    budget = sorted(lengths)[25]
    over = sum(n > budget for n in lengths)
    assert 0 < over < 40

    p = run_cli("--input_dir", src, "--output_dir", tmp_path / "drop", "--test_ratio", "0", "--tokenizer",
                tokenizer_dir, "--max_prompt_tokens", budget)
    rows, stats = read_out(tmp_path / "drop")
    assert len(rows) == 40 - over and stats["dropped"]["prompt_too_long"] == over
    assert max(prompt_lengths(tok, [r["input"] for r in rows])) <= budget
    assert stats["prompt_tokens"]["over"] == over and stats["prompt_tokens"]["max_prompt_tokens"] == budget
    assert f"{over} over {budget}: dropped" in p.stdout, p.stdout
    assert any(f"over --max_prompt_tokens {budget} (dropped)" in e for e in stats["errors_sample"])

    p = run_cli("--input_dir", src, "--output_dir", tmp_path / "report", "--test_ratio", "0", "--tokenizer",
                tokenizer_dir, "--max_prompt_tokens", budget, "--over_budget", "report")
    rows, stats = read_out(tmp_path / "report")
    assert len(rows) == 40 and "prompt_too_long" not in stats["dropped"] and stats["prompt_tokens"]["over"] == over
    assert f"{over} over {budget}: KEPT" in p.stdout and "PROMPT_MAX_LEN" in p.stdout, p.stdout


def test_verify_bar_has_a_total_of_rows(tmp_path):
    """On a terminal the verify bar counts rows out of the input's total, dropped rows included."""
    import fcntl
    import pty
    import struct
    import termios

    rows = [{"task_id": i, "text": "Square a number.", "code": "def sq(x):\n    return x * x\n" if i < 3 else None,
             "test_list": [f"assert sq({i}) == {i * i}"], "test_setup_code": "", "challenge_test_list": []}
            for i in range(1, 5)]
    write_parquet(tmp_path / "m" / "mbpp.parquet", rows)
    main, sub = pty.openpty()
    fcntl.ioctl(sub, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 120, 0, 0))  # a new pty is 0 wide: tqdm draws nothing
    p = subprocess.Popen([sys.executable, str(PREPROCESS), "--input_dir", str(tmp_path / "m"), "--output_dir",
                          str(tmp_path / "o"), "--verify", "--workers", "1"], stderr=sub, stdout=subprocess.DEVNULL)
    os.close(sub)
    err = b""
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:  # the pty closes with the process
            break
        if not chunk:
            break
        err += chunk
    assert p.wait(timeout=120) == 0, err.decode(errors="replace")[-2000:]
    os.close(main)
    text = err.decode(errors="replace")
    assert "verify: 100%" in text and "4/4" in text.split("verify: 100%")[-1].split("\n")[0], text[-2000:]

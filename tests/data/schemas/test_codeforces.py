"""open-r1/codeforces rows through the real preprocessing CLI: stdio labels, and the problems stdio cannot grade
dropped and counted under their reasons."""

import pytest

from coderl.rewards.labels import parse_label
from tests.support import read_out, run_cli, write_parquet

pytestmark = pytest.mark.timeout(120)


CHECKER = ("import sys\nn = int(open(sys.argv[1]).read())\nout = open(sys.argv[3]).read().split()\n"
           "print(1 if sorted(map(int, out)) == list(range(1, n + 1)) else 0)\n")


def codeforces_rows() -> list[dict]:
    """Rows laid out as open-r1/codeforces publishes them (its columns; tests as lists of structs)."""
    base = {"contest_id": 1, "title": "Sum", "input_format": "Two integers a and b.", "output_format": "Their sum.",
            "examples": [{"input": "1 2\n", "output": "3\n"}], "note": None, "memory_limit": 256.0,
            "input_mode": "stdio", "interaction_format": None, "generated_checker": None, "rating": 800}
    return [
        {**base, "id": "1/A", "index": "A", "description": "Print a + b.", "time_limit": 1.0,
         "official_tests": [{"input": "1 2\n", "output": "3\n"}, {"input": "5 -5\n", "output": "0\n"}]},
        {**base, "id": "1/B", "index": "B", "description": "Print any permutation of 1..n.", "time_limit": 2.0,
         "official_tests": [{"input": "2\n", "output": "1 2\n"}],
         "generated_checker": CHECKER},
        {**base, "id": "1/C", "index": "C", "description": "Guess the number.", "time_limit": 1.0,
         "official_tests": [{"input": "5\n", "output": "\n"}], "interaction_format": "Ask ? x; answer ! x."},
        {**base, "id": "1/D", "index": "D", "description": "Read input.txt.", "time_limit": 1.0,
         "official_tests": [{"input": "1\n", "output": "1\n"}], "input_mode": "file"},
        {**base, "id": "1/E", "index": "E", "description": "No tests.", "time_limit": 1.0, "official_tests": []},
    ]


def test_codeforces_rows_become_stdio_labels_and_the_rest_are_counted(tmp_path):
    src = write_parquet(tmp_path / "in" / "cf.parquet", codeforces_rows())
    run_cli("--input_dir", src, "--output_dir", tmp_path / "out", "--test_ratio", "0")
    rows, stats = read_out(tmp_path / "out")
    assert stats["schema"] == "codeforces" and stats["rows_read"] == 5 and stats["rows_written"] == 2
    assert stats["dropped"] == {"interactive": 1, "file_io": 1, "no_tests": 1}
    by_id = {parse_label(r["label"]).source_id: r for r in rows}
    perm = parse_label(by_id["1/B"]["label"])
    assert perm.format == "checker" and perm.tests[0]["checker"] == CHECKER and perm.tests[0]["input"] == "2\n"
    rows = [by_id["1/A"]]
    label = parse_label(rows[0]["label"])
    assert label.format == "stdio" and label.source == "open-r1/codeforces" and label.source_id == "1/A"
    assert [t["output"] for t in label.tests] == ["3\n", "0\n"]
    assert label.extra["time_limit_s"] == 1.0 and label.extra["memory_limit_mb"] == 256.0
    user = rows[0]["input"][1]["content"]
    assert "Print a + b." in user and "Two integers a and b." in user and "Example 1" in user


def test_generated_tests_published_apart_join_their_problems(tmp_path):
    """The hub layout: data/train-*.parquet rows count their generated tests (`generated_tests` int64), which live
    in generated_tests/test_cases_<contest, 4 digits>.parquet (problem_id, input, output, test_i); pointed at the
    download, preprocess joins them to their problem and never reads that folder as a dataset of its own."""
    root = tmp_path / "codeforces"
    rows = [{**r, "contest_id": "1", "generated_tests": n} for r, n in zip(codeforces_rows()[:2], (3, 0), strict=True)]
    write_parquet(root / "data" / "train-00000-of-00001.parquet", rows)
    write_parquet(root / "generated_tests" / "test_cases_0001.parquet", [
        {"problem_id": "1/A", "input": "7 8\n", "output": "15\n", "test_i": 2},
        {"problem_id": "1/A", "input": "2 2\n", "output": "4\n", "test_i": 0},
        {"problem_id": "1/A", "input": "0 0\n", "output": "0\n", "test_i": 1},
        {"problem_id": "9/Z", "input": "x\n", "output": "y\n", "test_i": 0},  # another problem of the file
    ])
    proc = run_cli("--input_dir", root, "--output_dir", tmp_path / "out")
    rows, stats = read_out(tmp_path / "out")
    assert stats["rows_read"] == 2 and stats["rows_written"] == 2, stats
    assert [f["schema"] for f in stats["files"]] == ["codeforces"], stats["files"]
    assert "read with their problems, not as inputs" in proc.stderr
    label = next(parse_label(r["label"]) for r in rows if parse_label(r["label"]).source_id == "1/A")
    assert [t["input"] for t in label.tests] == ["1 2\n", "5 -5\n", "2 2\n", "0 0\n", "7 8\n"]
    # without the folder (not downloaded: ~110 GB) the official tests alone
    (root / "generated_tests" / "test_cases_0001.parquet").unlink()
    run_cli("--input_dir", root / "data", "--output_dir", tmp_path / "out2")
    rows, _ = read_out(tmp_path / "out2")
    label = next(parse_label(r["label"]) for r in rows if parse_label(r["label"]).source_id == "1/A")
    assert [t["input"] for t in label.tests] == ["1 2\n", "5 -5\n"]

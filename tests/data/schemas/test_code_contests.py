"""deepmind/code_contests through the real CLI: merged test sets, the Python 3 reference, the problem's limits."""

from __future__ import annotations

import pyarrow as pa
import pytest

from coderl.rewards.labels import parse_label
from tests.support import read_jsonl, read_out, run_cli, write_parquet

pytestmark = pytest.mark.timeout(180)

_TESTS = pa.struct([("input", pa.list_(pa.string())), ("output", pa.list_(pa.string()))])
_SOLS = pa.struct([("language", pa.list_(pa.int64())), ("solution", pa.list_(pa.string()))])
# The hub's parquet schema (contest_problem.proto as datasets writes it)
SCHEMA = pa.schema([
    ("name", pa.string()), ("description", pa.string()), ("public_tests", _TESTS), ("private_tests", _TESTS),
    ("generated_tests", _TESTS), ("source", pa.int64()), ("difficulty", pa.int64()), ("solutions", _SOLS),
    ("incorrect_solutions", _SOLS), ("cf_contest_id", pa.int64()), ("cf_index", pa.string()),
    ("cf_points", pa.float64()), ("cf_rating", pa.int64()), ("cf_tags", pa.list_(pa.string())),
    ("is_description_translated", pa.bool_()), ("untranslated_description", pa.string()),
    ("time_limit", pa.struct([("seconds", pa.int64()), ("nanos", pa.int64())])),
    ("memory_limit_bytes", pa.int64()), ("input_file", pa.string()), ("output_file", pa.string())])

# Codeforces 4A "Watermelon" (1 second, 64 megabytes), with a C++, a Python 2 and a Python 3 solution
WATERMELON = ("One hot summer day Pete and his friend Billy decided to buy a watermelon. [...] Input: the first "
              "(and the only) input line contains integer number w (1 <= w <= 100) - the weight of the watermelon "
              "bought by the boys. Output: print YES, if the boys can divide the watermelon into two parts, each "
              "of them weighing even number of kilos; and NO in the opposite case.")
CPP = "#include <cstdio>\nint main(){int w;scanf(\"%d\",&w);puts(w>2&&w%2==0?\"YES\":\"NO\");}\n"
PY2 = "w = input()\nprint 'YES' if w > 2 and w % 2 == 0 else 'NO'\n"
PY3 = "w = int(input())\nprint('YES' if w > 2 and w % 2 == 0 else 'NO')\n"


def problem(name, description, solutions, public, private, generated, seconds=1, nanos=0, **kw) -> dict:
    def tests(pairs):
        return {"input": [i for i, _ in pairs], "output": [o for _, o in pairs]}
    return {"name": name, "description": description, "public_tests": tests(public),
            "private_tests": tests(private), "generated_tests": tests(generated), "source": 2, "difficulty": 7,
            "solutions": {"language": [lang for lang, _ in solutions], "solution": [s for _, s in solutions]},
            "incorrect_solutions": {"language": [3], "solution": ["print('YES')\n"]},
            "cf_contest_id": 4, "cf_index": "A", "cf_points": 500.0, "cf_rating": 800, "cf_tags": ["math"],
            "is_description_translated": False, "untranslated_description": "",
            "time_limit": {"seconds": seconds, "nanos": nanos}, "memory_limit_bytes": 64 << 20,
            "input_file": "", "output_file": "", **kw}


def rows() -> list[dict]:
    watermelon = problem("4_A. Watermelon", WATERMELON, [(2, CPP), (1, PY2), (3, PY3)],
                         public=[("8\n", "YES\n")], private=[("5\n", "NO\n"), ("2\n", "NO\n")],
                         generated=[("100\n", "YES\n"), ("1\n", "NO\n")])
    slow = problem("9_Z. Slow", "Print the input number.", [(3, "import time\ntime.sleep(1.5)\nprint(input())\n")],
                   public=[("1\n", "1\n")], private=[], generated=[("2\n", "2\n")], seconds=0, nanos=500_000_000)
    cpp_only = problem("9_Y. Only C++", "Print YES.", [(2, CPP)], public=[("8\n", "YES\n")], private=[],
                       generated=[])
    files = problem("9_X. Files", "Read input.txt.", [(3, PY3)], public=[("8\n", "YES\n")], private=[],
                    generated=[], input_file="input.txt", output_file="output.txt")
    return [watermelon, slow, cpp_only, files]


def test_code_contests_tests_reference_limits(tmp_path):
    src = write_parquet(tmp_path / "train-00000-of-00039.parquet", rows(), schema=SCHEMA)
    run_cli("--input_dir", src, "--output_dir", tmp_path / "out", "--test_ratio", "0", "--keep_reference")
    out, stats = read_out(tmp_path / "out")
    assert stats["files"][0]["schema"] == "code_contests" and stats["rows_read"] == 4
    assert stats["rows_written"] == 3 and stats["dropped"] == {"file_io": 1}
    labels = {lab.source_id: lab for lab in (parse_label(r["label"]) for r in out)}
    w = labels["4_A. Watermelon"]
    assert w.format == "stdio" and [t["input"] for t in w.tests] == ["8\n", "5\n", "2\n", "100\n", "1\n"]
    assert w.reference_solution == PY3  # language code 3; the Python 2 one (code 1) does not run here
    assert w.time_limit_s == 1.0 and w.extra["memory_limit_mb"] == 64
    assert labels["9_Z. Slow"].time_limit_s == 0.5
    assert labels["9_Y. Only C++"].reference_solution is None


def test_code_contests_verify_under_the_problems_limit(tmp_path):
    """The reference runs under the problem's own time limit: Watermelon's passes every merged case; a reference
    slower than its problem's 0.5 s cannot be the proof of a label graded at 0.5 s, so its tests are dropped,
    counted, and a problem with no Python 3 reference is dropped as unverifiable."""
    src = write_parquet(tmp_path / "valid-00000-of-00001.parquet", rows(), schema=SCHEMA)
    run_cli("--input_dir", src, "--output_dir", tmp_path / "out", "--test_ratio", "0", "--verify", "--workers", "2")
    out, stats = read_out(tmp_path / "out")
    assert stats["dropped"] == {"file_io": 1, "verify_all_failed": 1, "verify_no_reference": 1}
    (label,) = [parse_label(r["label"]) for r in out]
    assert label.source_id == "4_A. Watermelon" and len(label.tests) == 5 and label.time_limit_s == 1.0
    assert stats["verify"]["failed_statuses"] == {"timeout": 2}
    report = {r["source_id"]: r for r in read_jsonl(tmp_path / "out" / "verify.jsonl")}
    assert [d.split(":")[0].rstrip(")") for d in report["9_Z. Slow"]["dropped"]] == ["tests[0] (timeout", "tests[1] (timeout"]

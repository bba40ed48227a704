"""Benchmark data/preprocess.py on a generated CodeRM-UnitTest-sized parquet file.

    python -m scripts.bench.preprocess [--rows 77000] [--big_every 300] [--keep DIR]

Generates a file with the CodeRM-UnitTest columns (task_id, question, code_ground_truth, code_generate,
unit_tests) and realistic cell sizes (unit_tests mostly 2-20 KB, one row in --big_every with ~400 KB), then
runs, each in its own child process (peak RSS via os.wait4):
  cli       -- `python data/preprocess.py` (streaming record batches, only the needed columns);
  baseline  -- the naive way: pq.read_table of the whole file, to_pylist, the same converter per row,
               one JSONL written. Same conversion code, so the ratio isolates the reading strategy.
Prints JSON and a table with rows/s and peak RSS of both.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

REPO = Path(__file__).resolve().parents[2]
WORDS = ("array integer string return given output input value list number maximum minimum sum order "
         "element index query tree node graph path cost each test case print between distinct pair").split()

BASELINE = r"""
import json, sys, pyarrow.parquet as pq
from coderl.data.schemas import RowContext, Skip, coderm
from coderl.data import prompting
table = pq.read_table(sys.argv[1])           # the whole file, every column, in memory
rows = table.to_pylist()
with open(sys.argv[2], "w") as out:
    for i, row in enumerate(rows):
        try:
            p = coderm.convert(row, RowContext(sys.argv[1], i))
        except Skip:
            continue
        out.write(json.dumps({"input": [{"role": "user", "content": p.user}],
                              "label": json.dumps({"format": p.format, "tests": p.tests})}) + "\n")
"""


def _module(fn: str, rng: random.Random, methods: int) -> str:
    body = []
    for m in range(methods):
        a, b = rng.randint(-999, 999), rng.randint(-999, 999)
        body.append(f"    def test_case_{m}(self):\n        # checks {' '.join(rng.choices(WORDS, k=6))}\n"
                    f"        self.assertEqual({fn}([{a}, {b}, {a + b}], {m}), {a * 3 + m})\n")
    return "import unittest\n\nclass TestSolution(unittest.TestCase):\n" + "".join(body)


def generate(path: Path, rows: int, big_every: int, seed: int = 0) -> dict:
    """Write the synthetic CodeRM-like file in row groups of 1000; return size figures."""
    rng = random.Random(seed)
    schema = pa.schema([("task_id", pa.int64()), ("question", pa.string()), ("code_ground_truth", pa.string()),
                        ("code_generate", pa.string()), ("unit_tests", pa.string())])
    ut_bytes = 0
    big = 0
    with pq.ParquetWriter(path, schema) as w:
        for start in range(0, rows, 1000):
            chunk = []
            for i in range(start, min(rows, start + 1000)):
                fn = f"solve_{i}"
                n_mod = rng.randint(2, 12)
                if big_every and i % big_every == big_every - 1:
                    n_mod, big = 330, big + 1  # ~400 KB of unit_tests
                tests = [{"ut_id": k, "code": _module(fn, rng, rng.randint(3, 6))} for k in range(n_mod)]
                ut = json.dumps(tests)
                ut_bytes += len(ut)
                ref = (f"def {fn}(nums: list, k: int) -> int:\n    total = 0\n"
                       + "".join(f"    total += nums[{j} % len(nums)]  # step {j}\n" for j in range(rng.randint(10, 30)))
                       + "    return total + k\n")
                chunk.append({
                    "task_id": i,
                    "question": f"Problem {i}. " + " ".join(rng.choices(WORDS, k=rng.randint(80, 300))),
                    "code_ground_truth": ref,
                    "code_generate": json.dumps([{"sol_id": s, "code": ref, "result": "pass"} for s in range(4)]),
                    "unit_tests": ut,
                })
            w.write_table(pa.Table.from_pylist(chunk, schema=schema))
    return {"rows": rows, "file_mb": round(path.stat().st_size / 2**20, 1),
            "unit_tests_mb": round(ut_bytes / 2**20, 1), "big_rows": big,
            "unit_tests_mean_kb": round(ut_bytes / rows / 1024, 1)}


def measure(cmd: list[str]) -> dict:
    """Run cmd as a child; wall time and the child's own peak RSS (os.wait4 gives its rusage alone)."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    err = p.stderr.read().decode()
    p.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"command failed: {' '.join(cmd)}\n{err}")
    return {"wall_s": round(wall, 2), "peak_rss_mb": round(ru.ru_maxrss / 1024, 1)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=77000)
    ap.add_argument("--big_every", type=int, default=300, help="One ~400 KB unit_tests cell every N rows.")
    ap.add_argument("--keep", default=None, help="Work directory to keep (default: a temp dir, removed).")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(args.keep or tmp)
        work.mkdir(parents=True, exist_ok=True)
        src = work / "coderm_synth.parquet"
        t0 = time.perf_counter()
        data = generate(src, args.rows, args.big_every)
        data["generate_s"] = round(time.perf_counter() - t0, 1)
        print(f"generated {data}", file=sys.stderr)
        cli = measure([sys.executable, str(REPO / "data" / "preprocess.py"), "--no_progress", "--input_dir",
                       str(src), "--output_dir", str(work / "out")])
        base = measure([sys.executable, "-c", BASELINE, str(src), str(work / "baseline.jsonl"), str(REPO)])
        stats = json.loads((work / "out" / "stats.json").read_text())
    for r in (cli, base):
        r["rows_per_s"] = round(args.rows / r["wall_s"], 1)
    result = {"input": data, "cli": {**cli, "rows_written": stats["rows_written"]}, "baseline_read_table": base,
              "rss_ratio_baseline_over_cli": round(base["peak_rss_mb"] / cli["peak_rss_mb"], 2),
              "speed_ratio_cli_over_baseline": round(cli["rows_per_s"] / base["rows_per_s"], 2),
              "cpus": os.cpu_count()}
    print(json.dumps(result, indent=2))
    print(f"\n{'run':<22}{'wall s':>10}{'rows/s':>12}{'peak RSS MB':>14}")
    for name, r in (("preprocess.py (cli)", cli), ("read_table baseline", base)):
        print(f"{name:<22}{r['wall_s']:>10}{r['rows_per_s']:>12}{r['peak_rss_mb']:>14}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""What `data/preprocess.py --verify` keeps of the fidelity families' rows, against the policy it replaced.

    python -m scripts.bench.verify [--families coderm,heldout,heldout2,mbpp,apps] [--workers 2] [--keep DIR]

The families' rows (scripts/bench/fidelity/: their reference programs with generated-style tests, some of which
the sandbox reports `unsupported` or which fail) are written as parquet in their datasets' columns, one file
per family and schema, and preprocessed with --verify. From verify.jsonl it prints, per file, the test cases checked
and kept and the rows kept, and what the previous policy would have kept of the same run: a unittest module
only when every one of its methods passed (one failing method dropped the module), a row only when a module
survived. (HumanEval-style rows are left out: their rows carry no reference the converter can rebuild.)
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from coderl.rewards.sandbox.inside.formats.unittests import unittest_cases
from scripts.bench.fidelity.families import FAMILIES

REPO = Path(__file__).resolve().parents[2]
SCHEMA = {"unittest": "coderm", "assert": "mbpp", "stdio": "apps_taco", "call": "apps_taco"}


def family_rows(name: str) -> dict[str, list[dict]]:
    """{schema: rows} of a family, in its datasets' columns."""
    mod = FAMILIES[name]
    if hasattr(mod, "FAMILY"):  # the written families: every label format
        out = defaultdict(list)
        for t in mod.TASKS:
            if t["fmt"] in SCHEMA:
                out[SCHEMA[t["fmt"]]].append(mod.FAMILY.row(t))
        return out
    return {{"mbpp": "mbpp", "coderm": "coderm", "apps": "apps_taco"}[name]: mod.rows()}


def previous_policy(rows: dict[str, dict], report: list[dict]) -> Counter:
    """Cases and rows the whole-module policy would have kept, from the same run's per-row report."""
    c = Counter()
    for r in report:
        row = rows[(r["file"], r["row"])]
        if "unit_tests" not in row:  # asserts, stdio and call entries were already dropped one by one
            c["cases"] += r["kept_cases"]
            c["rows"] += r["kept"]
            continue
        modules = [t["code"] for t in json.loads(row["unit_tests"])]
        failed = {int(d.split("]", 1)[0][len("tests["):]) for d in r["dropped"] if d.startswith("tests[")}
        kept = [len(unittest_cases(m)) for k, m in enumerate(modules) if k not in failed and unittest_cases(m)]
        c["cases"] += sum(kept)
        c["rows"] += bool(kept)
    return c


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--families", default="coderm,heldout,heldout2,mbpp,apps")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--keep", default=None, help="Keep the parquet files and outputs here.")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(args.keep or tmp)
        figures = {}
        runs = [(f"{name}/{schema}", schema, rows) for name in args.families.split(",")
                for schema, rows in family_rows(name).items()]
        for key, schema, rows in runs:
            src = root / "in" / f"{key.replace('/', '_')}.parquet"
            src.parent.mkdir(parents=True, exist_ok=True)
            columns = list(dict.fromkeys(k for r in rows for k in r))  # from_pylist would take the first row's
            pq.write_table(pa.Table.from_pylist([{k: r.get(k) for k in columns} for r in rows]), src)
            out = root / f"out_{key.replace('/', '_')}"
            t0 = time.monotonic()
            proc = subprocess.run([sys.executable, str(REPO / "data" / "preprocess.py"), "--input_dir", str(src),
                                   "--output_dir", str(out), "--verify", "--workers", str(args.workers),
                                   "--no_progress", "--format", schema], capture_output=True, text=True, timeout=3600)
            if proc.returncode:
                print(proc.stderr, file=sys.stderr)
                return 1
            report = [json.loads(line) for line in (out / "verify.jsonl").read_text().splitlines()]
            stats = json.loads((out / "stats.json").read_text())["verify"]
            old = previous_policy({(str(src), i): r for i, r in enumerate(rows)}, report)
            figures[key] = {"rows": len(rows), "seconds": round(time.monotonic() - t0, 1),
                               "cases": stats.get("cases_checked", 0), "cases_kept": stats.get("cases_kept", 0),
                               "rows_kept": stats.get("problems_kept", 0), "methods_cut": stats.get("test_methods_dropped", 0),
                               "dropped_on_recheck": stats.get("tests_dropped_on_recheck", 0),
                               "failed_statuses": stats.get("failed_statuses", {}),
                               "previous_cases_kept": old["cases"], "previous_rows_kept": old["rows"]}
    print(f"{'family/schema':<18} {'rows':>5} {'cases':>6} {'kept':>6} {'before':>6} {'rows kept':>9} {'before':>6} "
          f"{'cut':>4} {'recheck':>7} {'s':>6}  failing statuses")
    for key, f in figures.items():
        print(f"{key:<18} {f['rows']:>5} {f['cases']:>6} {f['cases_kept']:>6} {f['previous_cases_kept']:>6} "
              f"{f['rows_kept']:>9} {f['previous_rows_kept']:>6} {f['methods_cut']:>4} {f['dropped_on_recheck']:>7} "
              f"{f['seconds']:>6}  {f['failed_statuses']}")
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())

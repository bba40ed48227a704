#!/usr/bin/env python
"""Benchmark the sandbox pool against the naive executor it replaces, side by side on one workload.

Workload: CodeRM-style jobs (a solution + N unittest modules of 3 test methods each), mixed correct /
partially wrong / wrong solutions and a few that hang in one test. Baseline: what seed reward servers
do -- write solution + module to a file and run a fresh ``python file.py`` per unittest module,
sequentially, pass/fail from the exit code. Pool: coderl.rewards.sandbox.Sandbox with bubblewrap isolation,
all jobs submitted as one batch (as the reward server does).

    python -m scripts.bench.sandbox                       # 256 jobs x 5 modules, baseline on 64 of them
    python -m scripts.bench.sandbox --jobs 512 --json out.json
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

from coderl.rewards.config import SandboxConfig  # noqa: E402
from coderl.rewards.labels import parse_label  # noqa: E402
from coderl.rewards.sandbox import STATUSES, Job, Sandbox  # noqa: E402

PROBLEMS = {  # name: (correct solution, buggy solution, reference used to compute expected values)
    "sum_list": ("def solve(xs):\n    return sum(xs)\n", "def solve(xs):\n    return sum(xs[1:])\n", sum),
    "max_list": ("def solve(xs):\n    return max(xs)\n", "def solve(xs):\n    return xs[0]\n", max),
    "count_even": ("def solve(xs):\n    return sum(1 for x in xs if x % 2 == 0)\n",
                   "def solve(xs):\n    return sum(1 for x in xs if x % 2)\n", lambda xs: sum(1 for x in xs if x % 2 == 0)),
    "sorted_desc": ("def solve(xs):\n    return sorted(xs, reverse=True)\n", "def solve(xs):\n    return sorted(xs)\n",
                    lambda xs: sorted(xs, reverse=True)),
}
HANG = "def solve(xs):\n    if len(xs) == 7:\n        while True:\n            pass\n    return sum(xs)\n"


def make_jobs(n_jobs: int, n_modules: int, hang_every: int, seed: int = 0) -> list[tuple[str, list[str]]]:
    rng = random.Random(seed)
    jobs = []
    for j in range(n_jobs):
        name = rng.choice(sorted(PROBLEMS))
        good, bad, ref = PROBLEMS[name]
        kind = "hang" if hang_every and j % hang_every == hang_every - 1 else rng.choice(["good", "good", "bad"])
        modules = []
        for m in range(n_modules):
            lines = ["import unittest\n\n", f"class TestSolve{m}(unittest.TestCase):\n"]
            for t in range(3):
                size = 7 if (kind == "hang" and m == n_modules - 1 and t == 2) else rng.randint(2, 6)
                xs = [rng.randint(-50, 50) for _ in range(size)]
                want = ref(xs) if kind != "hang" else sum(xs)
                lines.append(f"    def test_{t}(self):\n        self.assertEqual(solve({xs!r}), {want!r})\n\n")
            lines.append("if __name__ == '__main__':\n    unittest.main()\n")
            modules.append("".join(lines))
        code = {"good": good, "bad": bad, "hang": HANG}[kind] + f"# job {j}\n"
        jobs.append((code, modules))
    return jobs


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))] if values else 0.0


def run_baseline(jobs, timeout: float) -> dict:
    latencies, passed_modules = [], 0
    with tempfile.TemporaryDirectory(prefix="bench-baseline-") as d:
        t0 = time.perf_counter()
        for j, (code, modules) in enumerate(jobs):
            tj = time.perf_counter()
            for m, mod in enumerate(modules):
                path = os.path.join(d, f"job{j}_{m}.py")
                Path(path).write_text(code + "\n" + mod)
                try:
                    r = subprocess.run([sys.executable, path], capture_output=True, timeout=timeout, cwd=d)
                    passed_modules += r.returncode == 0
                except subprocess.TimeoutExpired:
                    pass
            latencies.append(time.perf_counter() - tj)
        wall = time.perf_counter() - t0
    return {"jobs": len(jobs), "wall_s": wall, "jobs_per_s": len(jobs) / wall,
            "modules_per_s": sum(len(m) for _, m in jobs) / wall, "p50_job_s": pct(latencies, 0.5),
            "p99_job_s": pct(latencies, 0.99), "passed_modules": passed_modules}


def run_pool(jobs, timeout: float, workers: int, isolation: str) -> dict:
    cfg = SandboxConfig(workers=workers, isolation=isolation, test_timeout_s=timeout, job_timeout_s=max(20.0, 3 * timeout))
    batch = [Job(code, parse_label({"format": "unittest", "tests": modules})) for code, modules in jobs]
    with Sandbox(cfg) as sb:
        sb.run(batch[:workers])  # warm-up: plan cache and first fork, not counted
        t0 = time.perf_counter()
        results = sb.run(batch)
        wall = time.perf_counter() - t0
        info = sb.info()
    service = [r.stats.get("sandbox_runtime_s", 0.0) for r in results]
    tests = sum(r.expected for r in results)
    return {"jobs": len(jobs), "wall_s": wall, "jobs_per_s": len(jobs) / wall,
            "modules_per_s": sum(len(m) for _, m in jobs) / wall, "tests_per_s": tests / wall,
            "p50_job_s": pct(service, 0.5), "p99_job_s": pct(service, 0.99),
            "p50_batch_latency_s": pct([r.runtime_s for r in results], 0.5),
            "p99_batch_latency_s": pct([r.runtime_s for r in results], 0.99),
            "passed_tests": sum(r.passed for r in results), "tests": tests,
            "statuses": {s: sum(o.status == s for r in results for o in r.outcomes)
                         for s in STATUSES},
            "isolation": info["mode"], "sandbox_uid": info["sandbox_uid"], "workers": workers,
            "warnings": info["warnings"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", type=int, default=256, help="jobs in the workload")
    ap.add_argument("--modules", type=int, default=5, help="unittest modules per job (3 test methods each)")
    ap.add_argument("--hang_every", type=int, default=64, help="every Nth job hangs in one test (0 = none)")
    ap.add_argument("--timeout", type=float, default=2.0, help="per-test (pool) / per-module (baseline) timeout, s")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="pool workers")
    ap.add_argument("--isolation", default="bwrap", choices=["bwrap", "rlimits", "auto"])
    ap.add_argument("--baseline_jobs", type=int, default=64,
                    help="run the slow baseline on this many jobs (an evenly spaced, same-mix subset) and "
                         "extrapolate its rate; 0 = all jobs")
    ap.add_argument("--json", dest="json_path", default=None, help="also write the figures here")
    args = ap.parse_args()

    jobs = make_jobs(args.jobs, args.modules, args.hang_every)
    n_base = min(args.baseline_jobs or len(jobs), len(jobs))
    # Same mix as the full workload: the hanging jobs in proportion, the rest evenly spaced.
    hanging = [job for job in jobs if "while True" in job[0]]
    normal = [job for job in jobs if "while True" not in job[0]]
    n_hang = round(n_base * len(hanging) / len(jobs))
    subset = hanging[:n_hang] + normal[::max(1, len(normal) // max(1, n_base - n_hang))][:n_base - n_hang]
    pool = run_pool(jobs, args.timeout, args.workers, args.isolation)
    base = run_baseline(subset, args.timeout)
    out = {
        "workload": {"jobs": len(jobs), "modules_per_job": args.modules, "tests_per_job": 3 * args.modules,
                     "hanging_jobs": sum("while True" in c for c, _ in jobs), "timeout_s": args.timeout,
                     "baseline_jobs": len(subset), "baseline_extrapolated": len(subset) < len(jobs),
                     "cpu_count": os.cpu_count()},
        "baseline": base, "pool": pool,
        "throughput_ratio": pool["jobs_per_s"] / base["jobs_per_s"],
    }
    print(json.dumps(out, indent=2))
    print()
    print(f"{'':24s}{'jobs/s':>10s}{'modules/s':>11s}{'p50 job s':>11s}{'p99 job s':>11s}")
    for name, r in (("baseline (python file.py)", base), (f"pool ({pool['isolation']}, {pool['workers']}w)", pool)):
        print(f"{name:24.24s}{r['jobs_per_s']:10.2f}{r['modules_per_s']:11.1f}{r['p50_job_s']:11.4f}{r['p99_job_s']:11.4f}")
    note = f" (baseline measured on {len(subset)} of {len(jobs)} jobs, same mix)" if len(subset) < len(jobs) else ""
    print(f"throughput ratio: {out['throughput_ratio']:.1f}x{note}")
    if args.json_path:
        tmp = args.json_path + ".tmp"
        Path(tmp).write_text(json.dumps(out, indent=2))
        os.replace(tmp, args.json_path)


if __name__ == "__main__":
    main()

#!/usr/bin/env python
"""Benchmark the `pytest` label format: jobs per second of KodCode-style pytest files against the same checks as a
unittest module (the baseline, the cheapest judged format), one pool, alternating, and KodCode's own harness
(a `python -m pytest` subprocess per program) for scale.

    python -m scripts.bench.pytest_format                 # 40 jobs per round, 3 rounds, 1 worker
    python -m scripts.bench.pytest_format --jobs 100 --workers 2 --json out.json
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

from coderl.rewards.config import SandboxConfig
from coderl.rewards.labels import parse_label
from coderl.rewards.sandbox import Job, Sandbox
from scripts.bench.workloads import emit_json

PROGRAM = "def add(a, b):\n    return a + b\n"
PYTEST = ("import pytest\nfrom solution import add\n\ndef test_a():\n    assert add(1, 2) == 3\n\n"
          "@pytest.mark.parametrize('a, b, c', [(1, 1, 2), (2, 2, 4)])\ndef test_p(a, b, c):\n    assert add(a, b) == c\n\n"
          "def test_r():\n    with pytest.raises(TypeError):\n        add(1, 'x')\n")
UNITTEST = ("import unittest\nclass T(unittest.TestCase):\n    def test_a(self):\n        self.assertEqual(add(1, 2), 3)\n"
            "    def test_b(self):\n        self.assertEqual(add(1, 1), 2)\n    def test_c(self):\n"
            "        self.assertEqual(add(2, 2), 4)\n    def test_r(self):\n        with self.assertRaises(TypeError):\n"
            "            add(1, 'x')\n")


def harness_s(n: int) -> float:
    """Seconds per program of KodCode's harness: solution.py and the test file, `python -m pytest` on them."""
    t0 = time.monotonic()
    for _ in range(n):
        with tempfile.TemporaryDirectory() as d:
            for name, text in (("solution.py", PROGRAM), ("test_solution.py", PYTEST)):
                with open(os.path.join(d, name), "w") as f:
                    f.write(text)
            subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=d,
                           capture_output=True, check=True)
    return (time.monotonic() - t0) / n


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs", type=int, default=40, help="jobs per format per round")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--harness", type=int, default=5, help="programs run through KodCode's harness (0: skip)")
    ap.add_argument("--json", help="write the figures here")
    args = ap.parse_args(argv)
    labels = {"pytest": parse_label({"format": "pytest", "tests": [PYTEST]}),
              "unittest": parse_label({"format": "unittest", "tests": [UNITTEST]})}
    per_job: dict[str, list[float]] = {k: [] for k in labels}
    with Sandbox(SandboxConfig(workers=args.workers)) as sb:
        for lb in labels.values():  # warm: the judges' first pytest run imports its plugins
            sb.run([Job(PROGRAM + f"# warm {w}\n", lb) for w in range(args.workers)])
        for r in range(args.rounds):
            for name in (labels if r % 2 == 0 else reversed(list(labels))):
                jobs = [Job(PROGRAM + f"# {r} {i}\n", labels[name]) for i in range(args.jobs)]
                t0 = time.monotonic()
                results = sb.run(jobs)
                per_job[name].append((time.monotonic() - t0) / args.jobs)
                assert all(res.pass_rate == 1.0 for res in results), name
    out = {k: round(1000 * min(v), 1) for k, v in per_job.items()}
    figures = {"ms_per_job_best": out, "ratio_pytest_vs_unittest": round(out["pytest"] / out["unittest"], 2)}
    if args.harness:
        figures["kodcode_harness_ms_per_program"] = round(1000 * harness_s(args.harness), 1)
    emit_json(figures, args.json, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

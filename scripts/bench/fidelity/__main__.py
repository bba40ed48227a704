#!/usr/bin/env python
"""Fidelity: does coderl.rewards.sandbox judge programs the way plain Python does? (docs/fidelity.md)

Families of programs, each run through reference executors that are plain Python (reference.py) and
through the sandbox; prints agreement per label format, every disagreement (allow-listed or not), both
wall times, and how often correct programs' test cases were "unsupported" (the channel's documented
limits). The families, in scripts/bench/fidelity/:
  humaneval  corpus.py: HumanEval canonical programs, AST mutants, plain-Python rewrites, each in three
             formats (humaneval check(), CodeRM-style unittest, MBPP-style asserts)
  mbpp       mbpp_style.py: assert lists, test_setup_code / test_imports
  coderm     coderm_style.py: LLM-style unittest modules on function / class / script programs
  apps       apps_style.py: stdio programs and call-based (fn_name) problems
  heldout    heldout_style.py: written apart from the others, every label format, other idioms (own report)
  heldout2   heldout2_style.py: written apart from all of them, again (own report)
  imports    imports_style.py: tests using standard-library modules only the program imported (own report)
  classeval  classeval_style.py: class-level unittest suites in ClassEval's style (own report)
  kodcode    kodcode_style.py: pytest files against KodCode's harness (own report)
  codeforces codeforces_style.py: checker programs against open-r1's run (own report)
  livecodebench  livecodebench_style.py: functional and stdin problems against lcb_runner's rules

    python -m scripts.bench.fidelity                       # HumanEval (~1.9k programs x 3 formats)
    python -m scripts.bench.fidelity --family families     # mbpp + coderm + apps (~1k programs)
    python -m scripts.bench.fidelity --family all --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter

from scripts.bench.fidelity.allowlist import is_limit, reason_for, tolerated  # noqa: E402
from scripts.bench.fidelity.corpus import build_corpus  # noqa: E402
from scripts.bench.fidelity.families import DISJOINT, FAMILIES, family_of, family_programs  # noqa: E402
from scripts.bench.fidelity.measure import TIMEOUT_S, family_jobs, measure, measure_work  # noqa: E402
from scripts.bench.workloads import humaneval_rows  # noqa: E402


def _print_report(title: str, report: dict, family_names: dict[str, str]) -> None:
    print(f"\n== {title}: {report['programs']} programs, {report['jobs']} jobs, "
          f"timeout {report['timeout_s']} s, {report['workers']} workers")
    print(f"{'family':<10} {'format':<10} {'programs':>8} {'agree':>6} {'ref pass':>8} {'our pass':>8} "
          f"{'agreement':>9}")
    for fmt, f in report["formats"].items():
        print(f"{family_names.get(fmt, 'humaneval'):<10} {fmt:<10} {f['programs']:>8} {f['agree']:>6} "
              f"{f['reference_passed']:>8} {f['ours_passed']:>8} {100 * f['agreement']:>8.2f}%")
    print(f"wall time: reference {report['reference_wall_s']} s, ours {report['ours_wall_s']} s "
          f"(ratio {report['reference_wall_s'] / max(report['ours_wall_s'], 1e-9):.2f}x)")
    print("\nunsupported test cases of correct programs (the channel's documented limits):")
    print(f"{'format':<10} {'programs':>8} {'with any':>8} {'cases':>6} {'unsupp.':>7} {'share':>7}  "
          "by limit")
    for fmt, u in report["unsupported"].items():
        why = Counter(e["detail"].removeprefix("not judgeable through the plain-data channel: ")[:48]
                      for e in u["examples"])
        print(f"{fmt:<10} {u['programs']:>8} {u['programs_with_unsupported']:>8} {u['cases']:>6} "
              f"{u['unsupported_cases']:>7} {100 * u['unsupported_cases'] / max(u['cases'], 1):>6.1f}%  "
              + "; ".join(f"{k} ({n} programs)" for k, n in why.most_common()))
    dis = report["disagreements"]
    print(f"\n{len(dis)} disagreements (reference verdict / ours / our status):")
    for d in dis:
        mark = ("channel limit" if is_limit(d["pid"]) else "reference tolerance" if tolerated(d["pid"])
                else "allow-listed" if d["allowlisted"] else "NOT ALLOW-LISTED")
        print(f"  {d['pid']:<38} {d['format']:<9} ref={'pass' if d['reference'] else 'fail'} "
              f"ours={'pass' if d['ours'] else 'fail'} {d['status']:<11} {mark}: {d['detail'][-90:]!r}")
    rejects = [r for r in report["reference_rejects_correct"] if not tolerated(r["pid"])]
    if rejects:
        print(f"\nreference rejects {len(rejects)} correct programs:")
        for r in rejects:
            print(f"  {r['pid']} {r['format']}: {r['detail'][:100]}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--family", default="humaneval", choices=["humaneval", *FAMILIES, "families", "all"],
                    help="Which programs: one family, 'families' (mbpp + coderm + apps) or 'all'.")
    ap.add_argument("--seed", type=int, default=0, help="Corpus seed.")
    ap.add_argument("--every", type=int, default=1, help="Keep every N-th task of each family (1 = all).")
    ap.add_argument("--timeout_s", type=float, default=TIMEOUT_S, help="Per-program timeout, both executors.")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="Parallel jobs, both executors.")
    ap.add_argument("--json", default=None, help="Write the full report(s) here (atomically).")
    args = ap.parse_args(argv)

    reports = {}
    if args.family in ("humaneval", "all"):
        rows = humaneval_rows()
        programs = build_corpus(rows, seed=args.seed, every=args.every)
        reports["humaneval"] = measure(rows, programs, timeout_s=args.timeout_s, workers=args.workers)
    names = list(DISJOINT) if args.family in ("families", "all") else \
        [args.family] if args.family in DISJOINT else []
    if names:
        programs = family_programs(names, seed=args.seed, every=args.every)
        reports["families"] = measure_work(family_jobs(programs), timeout_s=args.timeout_s,
                                           workers=args.workers)
    # The other families' formats overlap the disjoint ones': each a report of its own.
    for name in (n for n in FAMILIES if n not in DISJOINT and args.family in (n, "all")):
        programs = family_programs([name], seed=args.seed, every=args.every)
        reports[name] = measure_work(family_jobs(programs), timeout_s=args.timeout_s, workers=args.workers)
    for title, report in reports.items():
        for d in report["disagreements"]:
            d["allowlisted"] = reason_for(d["pid"])
        family_names = {} if title == "humaneval" else \
            {fmt: title if title in FAMILIES else family_of(fmt) for fmt in report["formats"]}
        _print_report(title, report, family_names)
    if args.json:
        tmp = f"{args.json}.tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(reports if len(reports) > 1 else next(iter(reports.values())), fh, indent=1)
        os.replace(tmp, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())

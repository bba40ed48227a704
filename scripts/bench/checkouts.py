#!/usr/bin/env python
"""Before/after: the reward server of two checkouts, end to end on the same batches, alternating.

    python -m scripts.bench.checkouts --before /path/to/main [--rounds 10] [--queries 256] [--workers 2]

Each checkout runs its own `rewards/reward_server.py` with its own `.venv` (result cache off), on the
humaneval_unittest workload of scripts/bench/server.py (HumanEval as CodeRM unittest modules, half right,
half wrong). Both servers are warm before the first timed batch; the rounds alternate which one goes first,
each batch with fresh code (no cache). Prints each batch, then the medians and the after/before time ratio
(below 1: the after checkout is faster) and the server process's CPU per job. On a machine shared with
other work, only the ratio of alternating runs means anything.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from pathlib import Path

from scripts.bench import server as bench

REPO_ROOT = Path(__file__).resolve().parents[2]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", required=True, help="the checkout to compare with (its .venv is used)")
    ap.add_argument("--after", default=str(REPO_ROOT), help="default: this checkout")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--queries", type=int, default=256)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--he_problems", type=int, default=164)
    args = ap.parse_args()
    trees = {"before": Path(args.before).resolve(), "after": Path(args.after).resolve()}
    rows, programs = bench.humaneval_unittest_rows(args.he_problems)
    times: dict[str, list[float]] = {k: [] for k in trees}
    cpu: dict[str, list[float]] = {k: [] for k in trees}
    with tempfile.TemporaryDirectory() as d:
        data = Path(d) / "train.jsonl"
        data.write_text("".join(json.dumps(r) + "\n" for r in rows))
        servers = {}
        try:
            for k, tree in trees.items():
                servers[k] = bench.start_ours(data, args.workers, [str(tree / ".venv" / "bin" / "python"),
                                                                   str(tree / "rewards" / "reward_server.py")])
                bench.timed_post(servers[k][1], bench.humaneval_unittest_queries(programs, 64, "warmup"))
            for r in range(args.rounds):
                for k in (list(trees) if r % 2 == 0 else list(trees)[::-1]):
                    proc, url = servers[k]
                    before = bench._cpu(proc.pid)
                    secs, _ = bench.timed_post(url, bench.humaneval_unittest_queries(programs, args.queries, f"r{r}"))
                    times[k].append(secs)
                    cpu[k].append((bench._cpu(proc.pid)[0] - before[0]) / args.queries * 1e3)
                    print(f"round {r} {k:<6} {secs:7.3f} s  server {cpu[k][-1]:.3f} CPU ms/job", flush=True)
        finally:
            for proc, _ in servers.values():
                proc.terminate()
                proc.wait(timeout=30)
    for k, tree in trees.items():
        print(f"{k:<6} {tree}: median {statistics.median(times[k]):.3f} s, server "
              f"{statistics.median(cpu[k]):.3f} CPU ms/job")
    print(f"after/before time ratio {statistics.median(times['after']) / statistics.median(times['before']):.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

#!/usr/bin/env python
"""Fair service across clients: batch latency under 8 concurrent clients, this checkout against a baseline.

    python -m scripts.bench.fairness [--clients 8] [--batch 64] [--rounds 4] [--workers 2] [--baseline_ref REF]

Each server (the real `python rewards/reward_server.py`, a subprocess, result cache off) scores GRPO-like
batches of assert problems (scripts/bench/server.py's workload: groups of 8 distinct samples, ~60 % right),
every query distinct code, so that no batch is answered from another's work. Two scenarios:

1. equal batches: `--clients` clients each send `--rounds` batches of `--batch` queries back to back, all at
   once; printed: p50 / p99 / max batch latency and p99 / p50 (issue 32's target: p99 within 3x p50).
2. big + small: one client sends a batch of clients x batch queries; once it has started, another sends
   `--batch` queries; printed: the small batch's latency against the same batch sent alone.

The baseline is `--baseline_ref` (default: main) extracted with `git archive` into a temporary directory
and run the same way, in the same run; `--baseline_ref ''` skips it. Figures: docs/performance.md
("Fair service across clients").
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]

import httpx  # noqa: E402

from scripts.bench.server import make_queries, make_rows  # noqa: E402
from scripts.bench.workloads import write_jsonl  # noqa: E402

PROMPTS = 64


def start(root: Path, data: Path, workers: int, extra: tuple[str, ...] = ()) -> tuple[subprocess.Popen, str]:
    """The server of the checkout at root on a free port (result cache off); its URL."""
    cmd = [sys.executable, str(root / "rewards" / "reward_server.py"), "--data_path", str(data), "--port", "0",
           "--workers", str(workers), "--cache_size", "0", "--log_level", "warning", *extra]
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONPATH": str(root)}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=str(root))
    lines = []
    for line in proc.stdout:
        lines.append(line)
        m = re.search(r"listening on (http://\S+)", line)
        if m:
            threading.Thread(target=lambda: [None for _ in proc.stdout], daemon=True).start()
            return proc, m.group(1)
    proc.wait()
    raise SystemExit(f"the server at {root} did not start:\n" + "".join(lines))


def checkout(ref: str, dest: Path) -> Path:
    """This repository at git ref `ref`, extracted into dest (a baseline to run beside this checkout)."""
    dest.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(["git", "-C", str(REPO_ROOT), "archive", ref], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return dest


def post(client: httpx.Client, url: str, queries: list[str]) -> float:
    t0 = time.perf_counter()
    r = client.post(f"{url}/get_reward", json={"query": queries})
    r.raise_for_status()
    assert len(r.json()["rewards"]) == len(queries)
    return time.perf_counter() - t0


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, round(q * (len(xs) - 1))))]


def measure(root: Path, data: Path, args, tag: str) -> dict:
    proc, url = start(root, data, args.workers)
    try:
        with httpx.Client(timeout=600) as c:  # warm the pool
            post(c, url, make_queries(PROMPTS, 16, f"{tag}-warm"))

        def client(k: int) -> list[float]:
            with httpx.Client(timeout=600) as c:
                return [post(c, url, make_queries(PROMPTS, args.batch, f"{tag}-c{k}-r{r}", seed=k * 100 + r))
                        for r in range(args.rounds)]

        t0 = time.perf_counter()
        with ThreadPoolExecutor(args.clients) as pool:
            lat = [x for xs in pool.map(client, range(args.clients)) for x in xs]
        wall = time.perf_counter() - t0
        p50, p99 = statistics.median(lat), pct(lat, 0.99)
        equal = {"batches": len(lat), "p50_s": round(p50, 2), "p99_s": round(p99, 2), "max_s": round(max(lat), 2),
                 "p99_over_p50": round(p99 / p50, 2), "queries_per_s": round(len(lat) * args.batch / wall, 1)}

        with httpx.Client(timeout=600) as c:
            alone = post(c, url, make_queries(PROMPTS, args.batch, f"{tag}-alone", seed=7))
            with ThreadPoolExecutor(1) as pool:
                big = pool.submit(post, httpx.Client(timeout=600), url,
                                  make_queries(PROMPTS, args.clients * args.batch, f"{tag}-big", seed=8))
                time.sleep(args.small_after_s)
                small = post(c, url, make_queries(PROMPTS, args.batch, f"{tag}-small", seed=9))
                big_s = big.result()
        mixed = {"small_alone_s": round(alone, 2), "small_behind_big_s": round(small, 2),
                 "big_s": round(big_s, 2), "small_ratio": round(small / alone, 2)}
        return {"equal": equal, "big_small": mixed}
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--batch", type=int, default=64, help="queries per batch")
    ap.add_argument("--rounds", type=int, default=4, help="batches per client")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--small_after_s", type=float, default=0.5, help="when the small batch follows the big one")
    ap.add_argument("--baseline_ref", default="main", help="git ref to compare with ('' = none)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="coderl-fair-") as tmp:
        data = write_jsonl(Path(tmp) / "train.jsonl", make_rows(PROMPTS))
        runs = {}
        if args.baseline_ref:
            base = Path(tmp) / "baseline"
            checkout(args.baseline_ref, base)
            runs[f"baseline ({args.baseline_ref})"] = measure(base, data, args, "base")
        runs["this checkout"] = measure(REPO_ROOT, data, args, "ours")
    print(json.dumps({"args": vars(args), "runs": runs}, indent=1))
    print(f"\n{args.clients} clients x {args.rounds} batches of {args.batch} queries, {args.workers} workers")
    print(f"{'server':24} {'p50 s':>7} {'p99 s':>7} {'max s':>7} {'p99/p50':>8} {'q/s':>7} | "
          f"{'small alone':>11} {'behind big':>10} {'ratio':>6}")
    for name, r in runs.items():
        e, m = r["equal"], r["big_small"]
        print(f"{name:24} {e['p50_s']:7.2f} {e['p99_s']:7.2f} {e['max_s']:7.2f} {e['p99_over_p50']:8.2f} "
              f"{e['queries_per_s']:7.1f} | {m['small_alone_s']:11.2f} {m['small_behind_big_s']:10.2f} "
              f"{m['small_ratio']:6.2f}")


if __name__ == "__main__":
    main()

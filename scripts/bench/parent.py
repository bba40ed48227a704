#!/usr/bin/env python
"""What the reward server process itself (the parent of the sandboxes) costs per job, and where it saturates.

    python -m scripts.bench.parent [--workers 2,16,32] [--queries 256] [--repeats 5] [--worker_rate 200]

The real server (`rewards/reward_server.py`, HTTP on loopback, the humaneval_unittest workload of
scripts/bench/server.py) runs with *stub* sandbox workers: processes that speak the worker protocol and
answer every job at once (all tests passed) without running anything. The sandboxes' cost is then ~0, so
what remains is the parent's own work per job — HTTP and JSON, lookup and extraction, result-cache keys,
one dispatcher thread per worker, framing, result assembly — and the jobs/s one server process can feed.
The stubs log when each job arrives, which splits a batch into its serial parts (request to first
dispatch, last reply to response) and the part that overlaps the sandboxes.

Projection (printed): with W real workers each doing `--worker_rate` jobs/s on its own core, a batch of N
takes T(W) = pre + post + max(N / (W * rate), N * c_exec), c_exec being the parent's time per job while
jobs run (from the stub run at W workers); per-worker throughput at W relative to 2 workers is
(T(2) * 2) / (T(W) * W). The parent saturates where W * rate * c_exec = 1.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from scripts.bench.server import humaneval_unittest_queries, humaneval_unittest_rows, start_ours, timed_post
from scripts.bench.workloads import emit_json

# A worker that answers at once: the protocol of rewards/sandbox/inside/worker.py (bootstrap frame in, hello,
# then one reply per job; need_spec until it has the label's tests), nothing run.
STUB_WORKER = r"""
import json, os, struct, sys, time
H = struct.Struct(">Q")
def rd(n):
    b = b""
    while len(b) < n:
        c = os.read(0, n - len(b))
        if not c:
            sys.exit(0)
        b += c
    return b
def send(obj):
    view = memoryview((lambda d: H.pack(len(d)) + d)(json.dumps(obj).encode()))
    while view:
        view = view[os.write(1, view):]
rd(H.unpack(rd(8))[0])
send({"ready": True, "pid": os.getpid(), "landlock": []})
specs, log = {}, open(os.path.join(os.environ["STUB_LOG"], str(os.getpid())), "a", buffering=1)
while True:
    job = json.loads(rd(H.unpack(rd(8))[0]))
    if job.get("spec") is not None:
        specs[job["digest"]] = len(job["spec"]["plan"])
    n = specs.get(job["digest"])
    if n is None:
        send({"need_spec": True})
        continue
    log.write(f"{time.time()}\n")
    send({"results": [{"status": "passed", "runtime_s": 0.0, "detail": ""}] * n, "note": "", "children": 1,
          "runtime_s": 0.0, "clean": True})
"""

# Runs the real server with the stubs in place of sandboxed workers (argv: the server's own arguments).
SERVER_WITH_STUBS = r"""
import sys
from coderl.rewards.sandbox import isolation
STUB = sys.argv.pop(1)
isolation.resolve_mode = lambda *a, **k: ("rlimits", [])
isolation.worker_command = lambda mode, tmp_mb: ([sys.executable, "-I", "-S", "-c", STUB], {"env": dict(__import__("os").environ)})
from coderl.rewards import reward_server
sys.exit(reward_server.main(sys.argv[1:]))
"""


def _proc_cpu(pid: int) -> float:
    """CPU seconds of one process (its own threads only)."""
    with open(f"/proc/{pid}/stat") as f:
        rest = f.read().rsplit(")", 1)[1].split()
    return (int(rest[11]) + int(rest[12])) / os.sysconf("SC_CLK_TCK")


def run_stubs(rows, programs, workers: int, queries: int, repeats: int) -> dict:
    with tempfile.TemporaryDirectory() as d:
        data, log = Path(d) / "train.jsonl", Path(d) / "log"
        data.write_text("".join(json.dumps(r) + "\n" for r in rows))
        log.mkdir()
        os.environ["STUB_LOG"] = str(log)
        proc, url = start_ours(data, workers, prefix=[sys.executable, "-c", SERVER_WITH_STUBS, STUB_WORKER])
        try:
            timed_post(url, humaneval_unittest_queries(programs, 64, "warmup"))
            runs = []
            for rep in range(repeats):
                for f in log.iterdir():
                    f.write_text("")
                qs = humaneval_unittest_queries(programs, queries, f"p{rep}")
                cpu0, t0 = _proc_cpu(proc.pid), time.time()
                secs, _ = timed_post(url, qs)
                t1, cpu1 = time.time(), _proc_cpu(proc.pid)
                stamps = sorted(float(x) for f in log.iterdir() for x in f.read_text().split())
                runs.append({"s": secs, "cpu_ms_per_job": (cpu1 - cpu0) / queries * 1e3,
                             "pre_s": stamps[0] - t0, "exec_s": stamps[-1] - stamps[0], "post_s": t1 - stamps[-1],
                             "jobs": len(stamps)})
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    med = {k: statistics.median(r[k] for r in runs) for k in ("s", "cpu_ms_per_job", "pre_s", "exec_s", "post_s")}
    jobs = runs[-1]["jobs"]
    return {"workers": workers, "batch_s": round(med["s"], 4), "jobs": jobs, "jobs_per_s": round(jobs / med["s"]),
            "parent_cpu_ms_per_job": round(med["cpu_ms_per_job"], 3), "pre_s": round(med["pre_s"], 4),
            "exec_s": round(med["exec_s"], 4), "post_s": round(med["post_s"], 4),
            "exec_ms_per_job": round(med["exec_s"] / max(jobs - 1, 1) * 1e3, 4)}


def project(stub: list[dict], rate: float, queries: int) -> list[dict]:
    """Per-worker throughput at W workers (each doing `rate` jobs/s alone) relative to 2 workers."""
    def batch_s(s: dict) -> float:
        return s["pre_s"] + s["post_s"] + max(queries / (s["workers"] * rate), queries * s["exec_ms_per_job"] / 1e3)
    base = next((s for s in stub if s["workers"] == 2), stub[0])
    out = []
    for s in stub:
        t = batch_s(s)
        out.append({"workers": s["workers"], "batch_s": round(t, 3), "per_worker_jobs_s": round(queries / t / s["workers"], 1),
                    "vs_2_workers": round((batch_s(base) * base["workers"]) / (t * s["workers"]), 3),
                    "parent_saturates_at_workers": round(1e3 / (s["exec_ms_per_job"] * rate), 1)})
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workers", default="2,16,32", help="comma-separated stub worker counts")
    ap.add_argument("--queries", type=int, default=256)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--worker_rate", type=float, default=200.0,
                    help="jobs/s one real sandbox worker does on its own core, for the projection")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    rows, programs = humaneval_unittest_rows(164)
    stub = [run_stubs(rows, programs, int(w), args.queries, args.repeats) for w in args.workers.split(",")]
    result = {"machine": {"cpus": os.cpu_count(), "loadavg_at_start": [round(x, 2) for x in os.getloadavg()]},
              "queries": args.queries, "stub_workers": stub,
              "projection": {"worker_rate": args.worker_rate, "rows": project(stub, args.worker_rate, args.queries)}}
    emit_json(result, args.json)
    print(f"\nreward server with stub workers (answer at once), {args.queries} queries per batch, median of {args.repeats}:")
    print(f"{'workers':>8} {'batch s':>8} {'jobs/s':>7} {'parent CPU ms/job':>18} {'pre s':>7} {'exec s':>7} {'post s':>7}")
    for s in stub:
        print(f"{s['workers']:>8} {s['batch_s']:>8.3f} {s['jobs_per_s']:>7} {s['parent_cpu_ms_per_job']:>18.3f} "
              f"{s['pre_s']:>7.3f} {s['exec_s']:>7.3f} {s['post_s']:>7.3f}")
    print(f"\nprojection with real workers at {args.worker_rate:g} jobs/s each:")
    print(f"{'workers':>8} {'batch s':>8} {'jobs/s/worker':>14} {'vs 2 workers':>13} {'parent saturates at':>20}")
    for p in result["projection"]["rows"]:
        print(f"{p['workers']:>8} {p['batch_s']:>8.3f} {p['per_worker_jobs_s']:>14} {p['vs_2_workers']:>13.0%} "
              f"{p['parent_saturates_at_workers']:>17} workers")
    return 0


if __name__ == "__main__":
    sys.exit(main())

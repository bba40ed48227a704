#!/usr/bin/env python
"""Where a sandbox job's CPU goes: per process of the pool, on the humaneval_unittest workload.

    python -m scripts.bench.sandbox_cpu [--jobs 1024] [--workers 1] [--batch 256] [--job_cgroup off]

Runs the HumanEval-as-CodeRM jobs of scripts/bench/server.py (one unittest module per completion, half right,
half wrong) through an in-process Sandbox (bubblewrap, the default limits) and reads each process's CPU
time and minor page faults from /proc before and after: the worker supervisors, the zygotes (the fork
itself), the candidates (forked per job; counted through the zygote that reaps them), the reapers (init of
each worker's jobs' pid namespace: they end every job's processes), the judges (and their resident memory
after each batch), and this process (dispatcher threads, job submission). CPU time is what a loaded machine distorts least: the figures
are per job, whatever the wall clock did. Prints JSON, then a table. docs/performance.md ("Sandbox throughput").
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import psutil

from coderl.rewards.config import SandboxConfig
from coderl.rewards.labels import parse_label
from coderl.rewards.sandbox import Job, Sandbox
from scripts.bench.server import humaneval_unittest_rows
from scripts.bench.workloads import emit_json


def _stat(pid: int) -> tuple[float, float, int, int]:
    """(own CPU s, reaped children's CPU s, own minor faults, reaped children's minor faults)."""
    with open(f"/proc/{pid}/stat") as f:
        rest = f.read().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return ((int(rest[11]) + int(rest[12])) / tick, (int(rest[13]) + int(rest[14])) / tick, int(rest[7]),
            int(rest[8]))


def _roles() -> dict[int, str]:
    """The pool's processes: a worker is the python under bwrap; its first child the zygote, the next the judge;
    the zygote's first child the reaper (init of the jobs' pid namespace), when it has one."""
    roles = {}
    for proc in psutil.Process().children(recursive=True):
        try:
            if proc.name().startswith("python") and proc.parent().name() == "bwrap":
                roles[proc.pid] = "worker"
                kids = sorted((k for k in proc.children() if k.name().startswith("python")), key=lambda k: k.create_time())
                roles.update({k.pid: "zygote" if i == 0 else "judge" for i, k in enumerate(kids)})
                if kids:
                    reaper = sorted(kids[0].children(), key=lambda k: k.create_time())[:1]
                    roles.update({k.pid: "reaper" for k in reaper})
        except psutil.Error:
            continue
    return roles


def _rss_mb(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        try:
            total += psutil.Process(pid).memory_info().rss
        except psutil.Error:
            pass
    return total / (1 << 20)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", type=int, default=1024)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--json", default=None)
    ap.add_argument("--job_cgroup", choices=["on", "off"], default="on",
                    help="the job cgroup's accounting (on, where the kernel gives one) or /proc's (off)")
    args = ap.parse_args()
    rows, programs = humaneval_unittest_rows(164)
    labels = [parse_label(r["label"]) for r in rows]

    def jobs(n: int, salt: str) -> list[Job]:
        out = []
        for j in range(n):
            _, right, wrong = programs[j // 8 % len(programs)]
            out.append(Job((right if j % 8 < 4 else wrong) + f"\n# sample {salt}-{j}\n", labels[j // 8 % len(programs)]))
        return out

    with Sandbox(SandboxConfig(workers=args.workers, job_cgroup=args.job_cgroup == "on")) as sb:
        sb.run(jobs(args.batch, "warm-up"))
        accounting = sb.info()["accounting"]["cgroup"] or "proc"
        roles = _roles()
        before = {pid: _stat(pid) for pid in [*roles, os.getpid()]}
        judges = [pid for pid, role in roles.items() if role == "judge"]
        t0, done, rss = time.perf_counter(), 0, []
        while done < args.jobs:
            results = sb.run(jobs(args.batch, f"r{done}"))
            done += args.batch
            rss.append(_rss_mb(judges) / max(len(judges), 1))
        wall = time.perf_counter() - t0
        after = {pid: _stat(pid) for pid in before}
        restarted = _roles() != roles
    cpu: dict[str, float] = {}
    faults: dict[str, float] = {}
    for pid, role in [*roles.items(), (os.getpid(), "this process (submit, dispatch)")]:
        if after.get(pid) is None or before.get(pid) is None:
            continue
        d = [a - b for a, b in zip(after[pid], before[pid], strict=True)]
        cpu[role] = cpu.get(role, 0.0) + d[0]
        faults[role] = faults.get(role, 0) + d[2]
        if role == "zygote":  # the candidates it forked and reaped
            cpu["candidates"] = cpu.get("candidates", 0.0) + d[1]
            faults["candidates"] = faults.get("candidates", 0) + d[3]
    order = ["candidates", "judge", "worker", "zygote", "reaper", "this process (submit, dispatch)"]
    out = {"machine": {"cpus": os.cpu_count(), "loadavg_at_end": [round(x, 2) for x in os.getloadavg()]},
           "jobs": done, "workers": args.workers, "accounting": accounting, "wall_s": round(wall, 3), "jobs_per_s": round(done / wall, 1),
           "helpers_restarted": restarted, "tests_passed": sum(r.passed for r in results),
           "tests": sum(r.expected for r in results),
           "judge_rss_mb_after_each_batch": [round(x, 1) for x in rss],
           "cpu_ms_per_job": {k: round(cpu.get(k, 0.0) / done * 1e3, 3) for k in order},
           "minor_faults_per_job": {k: round(faults.get(k, 0) / done, 1) for k in order}}
    for k in order:
        cpu.setdefault(k, 0.0)
        faults.setdefault(k, 0)
    out["cpu_ms_per_job"]["total"] = round(sum(cpu.values()) / done * 1e3, 3)
    emit_json(out, args.json)
    print(f"\n{done} jobs, {args.workers} worker(s): {out['jobs_per_s']} jobs/s (load {out['machine']['loadavg_at_end'][0]})")
    print(f"{'process':<26}{'CPU ms/job':>11}{'faults/job':>12}")
    for k in order:
        print(f"{k:<26}{out['cpu_ms_per_job'][k]:>11.3f}{out['minor_faults_per_job'][k]:>12.0f}")
    print(f"{'total':<26}{out['cpu_ms_per_job']['total']:>11.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

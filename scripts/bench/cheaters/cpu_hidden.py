"""CPU hidden from the job's count (issue 35, item 2): a program needing more CPU than its limit spreads it over
children whose CPU leaves a /proc sum (auto-reaped: a parent ignoring SIGCHLD; re-parented to the zygote:
clone(CLONE_PARENT); many short-lived ones; double-fork daemons) while its main process, runnable on the same
CPU, is credited the wait for a CPU its own children hold. Its honest twin does the same work in one process.

Every worker is pinned to one CPU (the process's own CPU set narrowed to one for the run), so a wait for a
CPU is what the clock's starved credit could pay for. The cheater cycles through the ways and both formats
(call, stdio); the notes give each way's pass rate, and the same cheater's pass rate with job_cgroup off (the
/proc fallback, whose gap docs/sandbox.md states).
"""

from __future__ import annotations

import os

from coderl.rewards.config import SandboxConfig
from coderl.rewards.labels import parse_label
from coderl.rewards.sandbox import Status
from scripts.bench.cheaters import Family, Trials

LIMIT_S = 1.0
NEED_S = 1.4  # the CPU the program needs: over its limit, as the red team's 1.3-1.6 s

# Bounded: at most NEED_S / chunk children, `par` at a time, each spinning `chunk` CPU seconds; 8 s of wall
# clock at most; nothing outside the job is touched.
WORK = r'''
import os, signal, time

def _spin(s):
    t = time.process_time()
    while time.process_time() - t < s:
        pass

def _spawn(how):
    if how == "clone_parent":  # the child is the zygote's, not ours: the zygote reaps it
        import ctypes, platform
        nr = {"x86_64": 56, "aarch64": 220}.get(platform.machine())
        if nr is not None:
            pid = ctypes.CDLL(None, use_errno=True).syscall(nr, 0x00008000 | 17, 0, 0, 0, 0)  # CLONE_PARENT|SIGCHLD
            if pid >= 0:
                return pid
    return os.fork()

def hide(total, chunk, par, how, wall=8.0):
    if how == "sigign":  # the kernel reaps the children: no zombie, no cutime
        signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    r, w = os.pipe()
    os.set_blocking(r, False)
    left, running, t0 = int(round(total / chunk)), 0, time.monotonic()
    while (left or running) and time.monotonic() - t0 < wall:
        while left and running < par:
            pid = _spawn(how)
            if pid == 0:
                try:
                    if how == "double_fork" and os.fork():
                        os._exit(0)  # the grandchild is an orphan: the jobs' reaper's
                    _spin(chunk)
                    os.write(w, b"x")
                finally:
                    os._exit(0)
            if how == "double_fork":
                os.waitpid(pid, 0)
            left, running = left - 1, running + 1
        try:
            running -= len(os.read(r, 64))
        except BlockingIOError:
            pass
        if how == "fork":
            try:
                while os.waitpid(-1, os.WNOHANG)[0]:
                    pass
            except ChildProcessError:
                pass
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    os.close(r)
    os.close(w)
'''

# (how, CPU seconds per child, children at a time)
WAYS = {"sigign": ("sigign", 0.1, 3), "clone_parent": ("clone_parent", 0.1, 3),
        "short_lived": ("sigign", 0.01, 3), "double_fork": ("double_fork", 0.1, 3)}

CALL_LABEL = {"format": "assert", "time_limit_s": LIMIT_S, "tests": ["assert add(1, 2) == 3"]}
STDIO_LABEL = {"format": "stdio", "time_limit_s": LIMIT_S, "tests": [{"input": "1 2\n", "output": "3\n"}]}


def program(fmt: str, way: str | None, need_s: float = NEED_S) -> str:
    """The cheater (way: a key of WAYS) or, with way None, the honest twin (one process), in `fmt`."""
    work = f"hide({need_s}, {WAYS[way][1]}, {WAYS[way][2]}, {WAYS[way][0]!r})" if way else f"_spin({need_s})"
    if fmt == "call":
        return WORK + f"\ndef add(a, b):\n    {work}\n    return a + b\n"
    return WORK + f"\n{work}\na, b = map(int, input().split())\nprint(a + b)\n"


def label(fmt: str):
    return parse_label(CALL_LABEL if fmt == "call" else STDIO_LABEL)


def config(workers: int, job_cgroup: bool = True) -> SandboxConfig:
    return SandboxConfig(isolation="bwrap", workers=workers, probe_s=0.0, job_timeout_s=30.0, job_cgroup=job_cgroup)


class one_cpu:
    """This process (and every worker it starts meanwhile) on one CPU; the CPU set is restored after."""

    def __enter__(self):
        self.saved = os.sched_getaffinity(0)
        os.sched_setaffinity(0, {min(self.saved)})
        return self

    def __exit__(self, *exc):
        os.sched_setaffinity(0, self.saved)


def _rewards(sb, jobs) -> list[float]:
    return [float(all(o.status == Status.PASSED for o in r.outcomes)) for r in sb.run(jobs)]


def play(n: int, workers: int) -> Trials:
    from coderl.rewards.sandbox import Job, Sandbox
    cases = [(fmt, way) for way in WAYS for fmt in ("call", "stdio")]
    picks = [cases[i % len(cases)] for i in range(n)]
    cheat_jobs = [Job(program(fmt, way), label(fmt)) for fmt, way in picks]
    honest_jobs = [Job(program(fmt, None), label(fmt)) for fmt, _ in picks]
    with one_cpu():
        with Sandbox(config(workers)) as sb:
            cheater, honest = _rewards(sb, cheat_jobs), _rewards(sb, honest_jobs)
            accounting = sb.info()["accounting"]["cgroup"]
        with Sandbox(config(workers, job_cgroup=False)) as sb:
            fallback = _rewards(sb, cheat_jobs)
    per_way = {}
    for (fmt, way), r, f in zip(picks, cheater, fallback, strict=True):
        per_way.setdefault(f"{way}/{fmt}", [0, 0, 0])
        per_way[f"{way}/{fmt}"][0] += r
        per_way[f"{way}/{fmt}"][1] += f
        per_way[f"{way}/{fmt}"][2] += 1
    return Trials(cheater=cheater, honest=honest, notes={
        "accounting": f"cgroup {accounting}" if accounting else "proc",
        "cheater_pass_rate_by_way": {k: round(v[0] / v[2], 3) for k, v in sorted(per_way.items())},
        "fallback_cheater_pass_rate": round(sum(fallback) / len(fallback), 3),
        "fallback_by_way": {k: round(v[1] / v[2], 3) for k, v in sorted(per_way.items())},
        "limit_s": LIMIT_S, "need_cpu_s": NEED_S})


FAMILY = Family("cpu_hidden", __doc__.splitlines()[0], play)

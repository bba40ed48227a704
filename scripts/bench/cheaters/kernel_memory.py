"""Memory held in the kernel (issue 35, item 5): a right program that holds HOLD_MB in socket buffers (unix
socket pairs, both directions filled) while its resident memory stays far under job_memory_mb; its honest twin
holds as much in a bytearray. Both are over the job's bound: both must get `memory` (reward 0), the cheater no
more often passing than the twin.

The notes give the cheater's pass rate with job_cgroup off (the /proc fallback, which polls resident memory
only: docs/sandbox.md states the gap).
"""

from __future__ import annotations

from coderl.rewards.config import SandboxConfig
from coderl.rewards.labels import parse_label
from coderl.rewards.sandbox import Status
from scripts.bench.cheaters import Family, Trials

JOB_MEMORY_MB = 128
HOLD_MB = 320  # 2.5 times the bound: ~400 socket pairs of ~830 KiB each

# Bounded: at most 450 socket pairs (900 descriptors, under max_open_files), HOLD_MB in all, released at exit.
HOLD = r'''
import socket, time

def hold(mb, pairs=450):
    held, got, chunk = [], 0, b"x" * 65536
    while got < mb << 20 and len(held) < 2 * pairs:
        a, b = socket.socketpair()
        for s in (a, b):  # each direction: its sender's buffer, as large as the kernel grants
            s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 22)
            s.setblocking(False)
            try:
                while True:
                    got += s.send(chunk)
            except OSError:
                pass
        held += [a, b]
    time.sleep(0.3)  # held while the worker looks
    return held
'''
TWIN = "\ndef hold(mb):\n    import time\n    b = bytearray(mb << 20)\n    time.sleep(0.3)\n    return b\n"

CALL_LABEL = {"format": "assert", "tests": ["assert f(2) == 4"]}
STDIO_LABEL = {"format": "stdio", "tests": [{"input": "2\n", "output": "4\n"}]}


def program(fmt: str, cheater: bool, mb: int = HOLD_MB) -> str:
    """The cheater (socket buffers) or its honest twin (a bytearray), holding mb MiB, in `fmt` ("call", "stdio")."""
    head = HOLD if cheater else TWIN
    if fmt == "call":
        return head + f"\ndef f(x):\n    kept = hold({mb})\n    return x * x\n"
    return head + f"\nkept = hold({mb})\nprint(int(input()) ** 2)\n"


def label(fmt: str):
    return parse_label(CALL_LABEL if fmt == "call" else STDIO_LABEL)


def config(workers: int, job_cgroup: bool = True) -> SandboxConfig:
    return SandboxConfig(isolation="bwrap", workers=workers, probe_s=0.0, test_timeout_s=5.0, job_timeout_s=20.0,
                         memory_mb=1024, job_memory_mb=JOB_MEMORY_MB, max_open_files=1024, job_cgroup=job_cgroup)


def _rewards(sb, jobs) -> list[float]:
    return [float(all(o.status == Status.PASSED for o in r.outcomes)) for r in sb.run(jobs)]


def play(n: int, workers: int) -> Trials:
    from coderl.rewards.sandbox import Job, Sandbox
    fmts = [("call", "stdio")[i % 2] for i in range(n)]
    cheat_jobs = [Job(program(fmt, True), label(fmt)) for fmt in fmts]
    with Sandbox(config(workers)) as sb:
        results = sb.run(cheat_jobs)
        cheater = [float(all(o.status == Status.PASSED for o in r.outcomes)) for r in results]
        honest = _rewards(sb, [Job(program(fmt, False), label(fmt)) for fmt in fmts])
        statuses = sorted({o.status for r in results for o in r.outcomes})
        accounting = sb.info()["accounting"]["cgroup"]
    with Sandbox(config(workers, job_cgroup=False)) as sb:
        fallback = _rewards(sb, cheat_jobs[:max(2, n // 4)])
    return Trials(cheater=cheater, honest=honest, notes={
        "accounting": f"cgroup {accounting}" if accounting else "proc", "cheater_statuses": statuses,
        "fallback_cheater_pass_rate": round(sum(fallback) / len(fallback), 3), "n_fallback": len(fallback),
        "job_memory_mb": JOB_MEMORY_MB, "held_mb": HOLD_MB})


FAMILY = Family("kernel_memory", __doc__.splitlines()[0], play)

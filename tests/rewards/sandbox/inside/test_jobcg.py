"""inside/jobcg.py: a process that joins the job's cgroup is counted there, CPU and memory, however it ends."""

from __future__ import annotations

import os
import signal
import time

import pytest

from coderl.rewards.sandbox import cgroups
from coderl.rewards.sandbox.inside import jobcg


@pytest.fixture
def cg():
    made = cgroups.create(64)
    if made is None:
        pytest.skip("no writable cgroup here (cgroups.create gave None): the worker sums /proc instead")
    inside = jobcg.Cgroup({**made.spec(), "join": [os.dup(fd) for fd in made.join]})
    yield inside
    inside.close()
    made.remove()


def _joined(cg, body):
    """Fork a child that joins the cgroup and runs body(); its wait status."""
    pid = os.fork()
    if pid == 0:
        try:
            if jobcg.join([os.dup(fd) for fd in cg.join]):
                body()
        finally:
            os._exit(0)
    return os.waitpid(pid, 0)[1]


def _spin(s):
    t = time.process_time()
    while time.process_time() - t < s:
        pass


def test_cpu_of_auto_reaped_grandchildren_is_counted(cg):
    assert cg.probe()
    before = cg.cpu()

    def body():  # its children, reaped by the kernel (SIGCHLD ignored): no zombie, no cutime anywhere
        signal.signal(signal.SIGCHLD, signal.SIG_IGN)
        for _ in range(3):
            if os.fork() == 0:
                _spin(0.1)
                os._exit(0)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                os.wait()
            except ChildProcessError:
                break
    _joined(cg, body)
    time.sleep(0.05)
    assert cg.cpu() - before >= 0.28


def test_memory_past_the_bound_is_killed_inside_the_cgroup_only(cg):
    before = cg.ooms()
    status = _joined(cg, lambda: bytearray(128 << 20))  # twice the bound
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
    assert cg.ooms() == before + 1  # and this process, outside the cgroup, lives on


def test_a_join_refused_is_reported():
    r, w = os.pipe()
    os.close(r)
    assert jobcg.join([w]) is False  # a pipe with no reader: the write fails, the descriptor is closed anyway
    with pytest.raises(OSError):
        os.fstat(w)


def test_the_v2_cpu_counter_counts_auto_reaped_children():
    """cgroup v2's cpu.stat (present in every v2 cgroup, controllers or not), where a v2 hierarchy is writable."""
    mount = cgroups._mounts()[1]
    own = cgroups._dir(mount, cgroups._own_paths().get("", "/")) if mount else None
    if own is None or not os.access(own, os.W_OK):
        pytest.skip("no writable cgroup v2 hierarchy here")
    d = os.path.join(own, f"{cgroups._PREFIX}{os.getpid()}-v2test")
    os.mkdir(d)
    cg = jobcg.Cgroup({"version": "v2", "join": [os.open(os.path.join(d, "cgroup.procs"), os.O_WRONLY)],
                       "cpu": os.open(os.path.join(d, "cpu.stat"), os.O_RDONLY), "oom": None})
    try:
        assert cg.probe() and cg.ooms() == 0
        before = cg.cpu()

        def body():
            signal.signal(signal.SIGCHLD, signal.SIG_IGN)
            for _ in range(2):
                if os.fork() == 0:
                    _spin(0.1)
                    os._exit(0)
            time.sleep(1.0)  # (bounded) the children finish meanwhile, reaped by the kernel
        _joined(cg, body)
        assert cg.cpu() - before >= 0.18
    finally:
        cg.close()
        for _ in range(100):
            try:
                os.rmdir(d)
                break
            except OSError:
                time.sleep(0.02)

"""The job's CPU and memory as the kernel counts them: the worker's job cgroup (made by the host, cgroups.py).

The worker inherits open descriptors of the cgroup: ``cgroup.procs`` to join, its CPU counter and its OOM-kill
counter. It hands the join descriptors to the zygote with each candidate request; the candidate writes 0 to
each (join) and closes them first thing, before its program exists (zygote._child), so every process of the job
is born in the cgroup and counted there however it ends or whoever reaps it. The worker reads the counters:
the job's CPU (the test's clock, clock.RunClock) and whether the kernel killed a process of the job for the
cgroup's memory bound (the `memory` verdict). Without a cgroup (none could be made, or a join failed at start)
the worker sums /proc instead (hygiene.py). A mixin of worker.Worker. stdlib only: runs inside the sandbox.
"""

import os

from .clock import MemoryWatch


def join(fds):
    """In a candidate, before its program: enter the job's cgroup, close the descriptors; False if refused."""
    ok = True
    for fd in fds:
        try:
            os.write(fd, b"0")
        except OSError:
            ok = False
        os.close(fd)
    return ok


def _field(fd, name):
    """The integer after `name ` on a line of a flat-keyed cgroup file (cpu.stat, memory.events, oom_control)."""
    for line in os.pread(fd, 4096, 0).splitlines():
        key, _, value = line.partition(b" ")
        if key == name:
            return int(value)
    return 0


class Cgroup:
    """The descriptors the worker inherited (cfg["cgroup"]: cgroups.JobCgroup.spec())."""
    __slots__ = ("version", "join", "cpu_fd", "oom_fd", "memory_mb")

    def __init__(self, spec):
        self.version, self.join, self.cpu_fd, self.oom_fd = spec["version"], spec["join"], spec["cpu"], spec["oom"]
        self.memory_mb = spec.get("memory_mb")

    def cpu(self):
        """CPU seconds every process that was ever in the cgroup has used (exited ones too)."""
        if self.version == "v1":
            return int(os.pread(self.cpu_fd, 64, 0)) / 1e9
        return _field(self.cpu_fd, b"usage_usec") / 1e6

    def ooms(self):
        """Processes the kernel killed for the cgroup's memory bound, so far."""
        return _field(self.oom_fd, b"oom_kill") if self.oom_fd is not None else 0

    def probe(self):
        """A throwaway child joins: True when the kernel lets a process of ours in (the descriptors work here)."""
        pid = os.fork()
        if pid == 0:
            os._exit(0 if join([os.dup(fd) for fd in self.join]) else 1)
        _, status = os.waitpid(pid, 0)
        try:
            self.cpu()
            self.ooms()
        except (OSError, ValueError):
            return False
        return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0

    def close(self):
        for fd in (*self.join, self.cpu_fd, self.oom_fd):
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass


class OomWatch(MemoryWatch):
    """MemoryWatch over the cgroup's OOM-kill count: the kernel bounds the job's memory; this notices its kills (of
    the candidate, or of a child the program would survive) at MemoryWatch's pace."""
    __slots__ = ()

    def __init__(self, cg):
        super().__init__(cg.ooms(), cg.ooms)

    def killed(self):
        return self.read() > self.limit


class JobAccounting:
    """The worker's view of its job's CPU and memory: the cgroup where it has one, /proc (Hygiene) otherwise."""
    cg = None
    mem_watch = None

    def open_accounting(self):
        """Take the cgroup the host made for this worker, if a process of ours can join it; returns its version."""
        spec = self.cfg.get("cgroup")
        if spec:
            cg = Cgroup(spec)
            if cg.probe():
                self.cg = cg
            else:
                cg.close()
        return self.cg.version if self.cg is not None else None

    def cgroup_fds(self):
        """The descriptors each candidate joins with (sent along with its request to the zygote)."""
        return list(self.cg.join) if self.cg is not None else []

    def job_cpu(self):
        """CPU seconds the job's processes have used: the cgroup's count (every process the candidate started,
        however it ended) and the judge's, which runs the test; without a cgroup, /proc's sum (Hygiene)."""
        if self.cg is None:
            return self.proc_cpu()
        judge = self.proc_stat(self.judge) if self.judge is not None else None
        return self.cg.cpu() + (judge[2] if judge is not None else 0.0)

    def _memory_watch(self):
        if self.cg is not None and self.cg.oom_fd is not None:
            self.mem_watch = OomWatch(self.cg)
        else:
            self.mem_watch = MemoryWatch(self.job_memory_mb << 20, self.job_rss)
        return self.mem_watch

    def oom_killed(self):
        """The kernel killed a process of the running candidate's job for the cgroup's memory bound."""
        return isinstance(self.mem_watch, OomWatch) and self.mem_watch.killed()

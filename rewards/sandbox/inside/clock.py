"""What the worker watches while a test runs: its clock (the time its processes could run, not the time other load
held the CPU) and the memory the job's processes hold together."""

import os
import time


def _waited(pids):
    """Seconds these processes spent runnable but waiting for a CPU (schedstat's run_delay); 0 where unreadable."""
    total = 0
    for pid in pids:
        if pid is None:
            continue
        try:
            fd = os.open(f"/proc/{pid}/schedstat", os.O_RDONLY)
            try:
                total += int(os.read(fd, 128).split()[1])
            finally:
                os.close(fd)
        except (OSError, ValueError, IndexError):
            pass
    return total / 1e9


_FRESH_S = 0.05
_CHECK_S = 0.02  # the shortest wait between two readings of the job's CPU time past the limit
# The job's CPU time is first read this long into a test (without a job cgroup a pass over /proc costs ~0.2 ms, ~4 %
# of a quick job's CPU): a quick test never reads it, and what ran before the reading (at most this long on the
# job's CPUs) is not counted, so the bound is at most that much lenient.
_CPU_FROM_S = 0.05


class RunClock:
    """A test's deadline in time its processes could run: waiting for a CPU that other load holds (a starved
    machine) does not count, so a right program is not failed for the machine's load. Sleeping and computing do
    count, as in plain Python; the wall clock grows to at most `cap` times the limit (SandboxConfig.starved_factor).

    Only a wait other load caused is credited: the credit ends once the job's processes (`cpu()`: the
    candidate, all it started, the judge) have used `limit` seconds of CPU in the test. A program that forks
    CPU-bound children while its main process spins makes itself wait (they share its CPUs) and was credited
    that wait, up to ~2.5x its time (red team r27); a program that had its limit's worth of CPU had every second
    a plain run would have given it, however long it waited.

    The wait is read at a test's start only when the last reading is older than _FRESH_S: two /proc reads per
    quick test would cost more than they could credit, and a stale baseline credits at most that much. The CPU
    time is read _CPU_FROM_S into the test, and past its limit."""
    __slots__ = ("limit", "end", "pids", "cap", "cpu", "cpus", "start", "waited", "used", "read_at")

    def __init__(self, limit, end, pids, cap, cpu=None):
        self.limit, self.end, self.pids, self.cap = limit, end, pids, cap
        self.cpu = cpu if cap > 1 else None
        self.cpus = len(os.sched_getaffinity(0)) if self.cpu is not None else 1  # the job's (it cannot change them)
        self.waited, self.read_at = 0.0, float("-inf")
        self.restart()

    def restart(self):
        self.start = now = time.monotonic()
        self.used = None  # the job's CPU time, once read in this test
        if self.cap > 1 and now - self.read_at > _FRESH_S:
            self.read_at, self.waited = now, _waited(self.pids)

    def left(self):
        """Seconds until the deadline, moved by the time waited for a CPU since the test began (while the job's
        CPU time in the test is under the limit); <= 0 once due."""
        now = time.monotonic()
        due = min(self.start + self.limit, self.end)
        if self.cpu is not None and self.used is None:
            if now - self.start < _CPU_FROM_S:
                return min(due, self.start + _CPU_FROM_S) - now
            self.used = self.cpu()
        if now >= due and self.cap > 1:
            spent = self.cpu() - self.used if self.cpu is not None else 0.0
            if spent >= self.limit:
                return due - now
            due = min(self.start + self.limit + _waited(self.pids) - self.waited,
                      self.start + self.cap * self.limit, self.end)
            if self.cpu is not None and due > now:  # look again before the job could have used the rest
                due = min(due, now + max((self.limit - spent) / self.cpus, _CHECK_S))
        return due - now


_MEM_EVERY_S = 0.05  # a pass over /proc costs ~0.2 ms: 0.4 % of a worker's CPU, and a quick test pays none


class MemoryWatch:
    """The job's resident memory, all its processes together, read every _MEM_EVERY_S: RLIMIT_AS bounds one
    process, and a job forking max_processes children could hold that many times memory_mb (the host's memory,
    with every worker's jobs and the trainer on it). Polled, so a job may pass `limit` by what it allocates
    between two readings."""
    __slots__ = ("limit", "read", "due")

    def __init__(self, limit, read):
        self.limit, self.read = limit, read
        self.due = time.monotonic() + _MEM_EVERY_S

    def left(self, now):
        """Seconds until the next reading (0 when due)."""
        return max(self.due - now, 0.0)

    def over(self, now):
        """Read the memory when due; True when the job holds more than the limit."""
        if now < self.due:
            return False
        self.due = now + _MEM_EVERY_S
        return self.read() > self.limit

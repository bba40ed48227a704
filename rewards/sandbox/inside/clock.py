"""A test's clock in the worker: the time its processes could run, not the time other load held the CPU."""

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


class RunClock:
    """A test's deadline in time its processes could run: waiting for a CPU that other load holds (a starved
    machine) does not count, so a right program is not failed for the machine's load. Sleeping and computing do
    count, as in plain Python; the wall clock grows to at most `cap` times the limit (SandboxConfig.starved_factor).

    The wait is read at a test's start only when the last reading is older than _FRESH_S: two /proc reads per
    quick test would cost more than they could credit, and a stale baseline credits at most that much."""
    __slots__ = ("limit", "end", "pids", "cap", "start", "waited", "read_at")

    def __init__(self, limit, end, pids, cap):
        self.limit, self.end, self.pids, self.cap = limit, end, pids, cap
        self.waited, self.read_at = 0.0, float("-inf")
        self.restart()

    def restart(self):
        self.start = now = time.monotonic()
        if self.cap > 1 and now - self.read_at > _FRESH_S:
            self.read_at, self.waited = now, _waited(self.pids)

    def left(self):
        """Seconds until the deadline, moved by the time waited for a CPU since the test began; <= 0 once due."""
        now = time.monotonic()
        due = min(self.start + self.limit, self.end)
        if now >= due and self.cap > 1:
            due = min(self.start + self.limit + _waited(self.pids) - self.waited,
                      self.start + self.cap * self.limit, self.end)
        return due - now

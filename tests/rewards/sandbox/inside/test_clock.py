"""inside/clock.py: a test's clock charges computing and sleeping, not the time spent waiting for a CPU."""

from __future__ import annotations

import os
import time

from coderl.rewards.sandbox.inside import clock


def test_the_wait_is_read_from_the_kernel():
    assert clock._waited((os.getpid(),)) >= 0.0
    assert clock._waited((None, 2 ** 30)) == 0.0  # gone or never there: nothing to credit


def test_a_wait_moves_the_deadline_up_to_its_cap(monkeypatch):
    waits = [0.0]
    monkeypatch.setattr(clock, "_waited", lambda pids: waits[0])
    c = clock.RunClock(0.05, float("inf"), (1,), cap=3)
    assert 0 < c.left() <= 0.05
    time.sleep(0.06)
    assert c.left() <= 0  # due, nothing waited
    waits[0] = 0.05  # the test waited 50 ms for a CPU: that much more wall clock
    assert 0 < c.left() <= 0.05
    waits[0] = 10.0  # however long it waited, the wall clock stops at 3 x the limit
    assert c.left() <= 3 * 0.05 - 0.06 + 1e-3


def test_a_probe_and_the_job_limit_are_plain_wall_clock(monkeypatch):
    reads = []
    monkeypatch.setattr(clock, "_waited", lambda pids: reads.append(pids) or 10.0)
    c = clock.RunClock(0.02, float("inf"), (1,), cap=1)
    time.sleep(0.03)
    assert c.left() <= 0 and reads == []  # a probe never asks the kernel
    c = clock.RunClock(1.0, time.monotonic() + 0.02, (1,), cap=3)
    time.sleep(0.03)
    assert c.left() <= 0  # the job's end bounds every test


def test_a_quick_test_reuses_a_fresh_reading(monkeypatch):
    reads = []
    monkeypatch.setattr(clock, "_waited", lambda pids: reads.append(pids) or 0.0)
    c = clock.RunClock(1.0, float("inf"), (1,), cap=3)
    for _ in range(20):
        c.restart()  # tests that end within _FRESH_S of the last reading
    assert len(reads) == 1
    time.sleep(clock._FRESH_S + 0.01)
    c.restart()
    assert len(reads) == 2


def test_the_credit_ends_once_the_jobs_processes_had_the_limit_in_cpu(monkeypatch):
    # A program whose children hold its CPU while its main process spins makes itself wait; that wait was
    # credited (red team r27). Once the job's processes used the limit's worth of CPU in the test, it is due.
    waits, used, reads = [0.0], [5.0], []
    monkeypatch.setattr(clock, "_waited", lambda pids: waits[0])
    c = clock.RunClock(0.1, float("inf"), (1,), cap=3, cpu=lambda: reads.append(1) or used[0])
    assert 0 < c.left() <= clock._CPU_FROM_S and reads == []  # woken to read it once the test has run a while
    time.sleep(0.11)
    assert c.left() <= 0 and len(reads) == 2  # the baseline, then past the limit: due, nothing waited
    waits[0], used[0] = 0.1, 5.03  # waited 100 ms, used 30 ms of CPU: credited, looked at again soon
    assert 0 < c.left() <= max((0.1 - 0.03) / c.cpus, clock._CHECK_S) + 1e-6
    used[0] = 5.11  # past the limit's worth of CPU: due, whatever it waited
    assert c.left() <= 0
    c.restart()  # the next test: its CPU counts from its own reading
    time.sleep(0.11)
    waits[0] = 0.3
    assert c.left() > 0


def test_a_quick_test_never_reads_the_jobs_cpu(monkeypatch):
    reads = []
    monkeypatch.setattr(clock, "_waited", lambda pids: 0.0)
    c = clock.RunClock(1.0, float("inf"), (1,), cap=3, cpu=lambda: reads.append(1) or 0.0)
    for _ in range(20):
        assert c.left() > 0
        c.restart()
    assert reads == []
    assert clock.RunClock(0.01, float("inf"), (1,), cap=1, cpu=lambda: reads.append(1) or 0.0).cpu is None  # a probe


def test_the_jobs_cpu_counts_its_processes_children_and_judge():
    # The reading of inside/hygiene.py over /proc: its own CPU and what the children it reaped used.
    from coderl.rewards.sandbox.inside import hygiene

    t = time.process_time()
    while time.process_time() - t < 0.05:
        pass
    state, _, cpu, rss = hygiene._stat(os.getpid())
    assert cpu >= 0.04 and state in "RS"
    assert rss > 1 << 20  # resident bytes, which the job's memory bound sums
    pid = os.fork()
    if pid == 0:
        t = time.process_time()
        while time.process_time() - t < 0.1:
            pass
        os._exit(0)
    os.waitpid(pid, 0)
    assert hygiene._stat(os.getpid())[2] - cpu >= 0.09


def test_the_memory_watch_reads_only_when_due_and_compares_with_its_limit():
    reads = []
    w = clock.MemoryWatch(100, lambda: reads.append(1) or 150)
    now = time.monotonic()
    assert not w.over(now) and reads == []  # a quick test never reads /proc
    assert 0 < w.left(now) <= clock._MEM_EVERY_S
    assert w.over(now + clock._MEM_EVERY_S) and reads == [1]
    assert not w.over(now + clock._MEM_EVERY_S) and reads == [1]  # the next reading waits its turn
    assert not clock.MemoryWatch(200, lambda: 150).over(now + 1)

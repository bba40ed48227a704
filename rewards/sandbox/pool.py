"""Run untrusted, model-generated Python against a problem's tests, in a pool of warm sandboxes.

    from coderl.rewards.sandbox import Sandbox, Job, JobResult, TestOutcome, STATUSES, isolation_info
    from coderl.rewards.config import SandboxConfig
    from coderl.rewards.labels import parse_label

    with Sandbox(SandboxConfig(workers=2)) as sb:          # starts the warm workers
        results = sb.run([Job(code=src, label=parse_label(label_json)), ...])   # blocking, thread-safe
        results = await sb.arun(jobs, deadline_s=60)       # same, never blocks the event loop
        sb.info()                                          # dict for /health: isolation, workers, ...

results[i] belongs to jobs[i]. JobResult.outcomes has one TestOutcome per test *case* (unittest method /
assert / humaneval check assert / stdio pair / call case), len == JobResult.expected.

Design (docs/sandbox.md): each worker is a long-lived supervisor already inside bubblewrap
(isolation.py); per job the program runs in a candidate process forked from a pristine zygote and the
tests run in a separate judge process that reaches the program only through a plain-data channel and
decides every verdict (inside/). The worker enforces deadlines from outside. One dispatcher thread per
worker feeds it from two shared queues (lanes); a call waits for its own jobs, so ``arun`` never blocks the
event loop. A label's tests travel to a worker once (by digest) and are compiled once per worker.

Lanes: a job first runs in the fast lane with its per-test limit capped at a short probe limit; a test that
exceeds the probe ends that run and the job goes to the slow lane, where it runs again from the start with
its full limits. Dispatchers take fast-lane work first, from every call, so honest work never queues behind
programs that hang. A call's deadline: a run starts only while its job limit (the hard bound the worker puts on
any run) and START_MARGIN_S are left before it, so no program can be still running at the deadline by its own
choice of speed. A job that could not start in time is settled at once with ``infra="deadline"`` (no verdict: its
place in the queue, not its program, decided it) — except a job that had already exceeded its probe: it keeps
its first run's verdict (``infra="probe"``). A run still going at the deadline overran its bound: its decided
tests stand, the rest are timeouts (``infra="overrun"``), and its worker aborts it and stays warm. A program
never scores more by being too slow to finish than by finishing (docs/reward.md, "The cut rule").

A run the sandbox could not decide (its worker died or overran, a worker fault, its judge killed from outside the
job) is never the program's failure: the job runs once more, and if that is lost too (or its call was cut first)
it is reported as cut (``infra="lost"``), the verdicts the lost runs decided kept (docs/sandbox.md).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import shutil
import tempfile
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Sequence
from dataclasses import replace

from ..config import SandboxConfig
from . import cgroups, isolation
from .inside.formats import REGISTRY as FORMATS
from .inside.framing import CUT_DETAIL, OK, SPEC_CACHE
from .plan import plan
from .results import (
    INFRA_CUT,
    INFRA_LOST,
    INFRA_OVERRUN,
    INFRA_PROBE,
    STATUSES,
    Job,
    JobResult,
    SandboxError,
    Status,
    TestOutcome,
)

PROBE_CUT_DETAIL = "cut by the batch deadline before its rerun with full limits: its first run, at the probe's limits"
OVERRUN_DETAIL = "still running at the batch deadline, past its job limit: a timeout"
# What a run may take past its job limit (the worker's 1 s grace for a judge to report after a kill, cleanup) and
# before it (dispatch, the label's tests to a worker): a run starts only with its job limit and this much left.
START_MARGIN_S = 2.0

log = logging.getLogger(__name__)
_ABORT_GRACE_S = 5.0  # how long a worker told to abort a job may take to answer before it is replaced
# A probe longer than this share of the limit is not worth its cost: every hang pays probe + limit. Limits
# derived from ref_time_s (<= 4 x ref, probe >= 2 x ref) are tight already, so those jobs run once, final
# (scripts/bench/load.py, verified labels: 5% hangs 25.6 s with a 0.5 s probe, 17.1 s without).
_PROBE_SHARE = 0.25


def run_bound_s(label, cfg: SandboxConfig) -> float:
    """The longest a run of a job of this label takes, start to reply: its job limit (a hard wall-clock bound in
    the worker, whatever the test limits, probes, informed tests and starved credit) plus START_MARGIN_S."""
    return _bound(time_limits(label, cfg)[1])


def _bound(job_limit_s: float) -> float:
    return job_limit_s + START_MARGIN_S


def time_limits(label, cfg: SandboxConfig) -> tuple[float, float, float]:
    """(per-test limit, job limit, probe limit; 0 = no probe) for a label's jobs.

    The per-test limit is the label's own time_limit_s, else derived from its reference runtime (ref_time_s,
    measured by data/preprocess.py --verify) with headroom and a floor, capped, else test_timeout_s. The job
    limit leaves room for two slow-but-legit tests. The probe -- the first run's per-test limit -- is
    probe_s, or twice the reference runtime when that is more; none when it is over a quarter of the limit."""
    ref = label.ref_time_s
    if label.time_limit_s:
        test = label.time_limit_s
    elif ref is not None:
        test = min(max(cfg.time_floor_s, cfg.time_factor * ref), max(cfg.time_cap_s, cfg.time_floor_s))
    else:
        test = cfg.test_timeout_s
    probe = max(cfg.probe_s, 2 * ref) if cfg.probe_s and ref is not None else cfg.probe_s
    return test, max(cfg.job_timeout_s, 2 * test), probe if 0 < probe <= _PROBE_SHARE * test else 0.0


class _Batch:
    """One run() / arun() call: how many of its jobs are still to finish, and how its caller is told.

    One wake-up per call, not a future per job: at hundreds of jobs a second, per-job futures (a lock and
    a condition each, and for arun a call into the event loop per job) cost the server's GIL more than
    the rest of a job's dispatch."""

    __slots__ = ("left", "lock", "event", "wake", "cut", "items", "deadline")

    def __init__(self, wake=None, deadline: float = float("inf")) -> None:
        self.left = 0
        self.deadline = deadline  # monotonic: no run starts that could still be going then
        self.lock = threading.Lock()
        self.event = threading.Event() if wake is None else None
        self.wake = wake  # arun: called in whichever thread finishes the last job
        self.cut = False  # the deadline passed or the caller gave up: nothing of it runs any more
        self.items: list[_Item] = []

    def finished(self) -> None:
        if self.event is not None:
            self.event.set()
        else:
            self.wake()


def _settle(item: _Item, result: JobResult) -> None:
    """Record a job's result (the first one only) and tell the caller when it was its call's last."""
    batch = item.batch
    with batch.lock:
        if item.result is not None:
            return
        item.result = result
        batch.left -= 1
        last = batch.left == 0
    if last:
        batch.finished()


class _Item:
    __slots__ = ("job", "payload", "spec", "expected", "batch", "result", "t0", "probe", "slot", "first", "kept",
                 "lost", "bound")

    def __init__(self, job: Job, payload: dict, spec: dict, expected: int, probe: float) -> None:
        self.job, self.payload, self.spec, self.expected = job, payload, spec, expected
        self.bound = _bound(payload["job_timeout_s"])  # run_bound_s: the longest any run of it takes
        self.batch: _Batch | None = None
        self.result: JobResult | None = None
        self.t0 = time.monotonic()
        self.probe = probe  # > 0 while the job waits for (or runs) its fast-lane run
        self.slot: int | None = None  # the dispatcher running it
        # its fast-lane run, once that exceeded the probe: what a deadline cut of its rerun leaves it
        self.first: JobResult | None = None
        # the verdicts an earlier run decided (one that exceeded its probe, one the sandbox lost): they stand in any
        # later run (a test is judged once)
        self.kept: dict[int, TestOutcome] = {}
        self.lost = 0  # runs of it the sandbox lost


class _Lanes:
    """The pool's two queues: dispatchers take fast-lane work (first runs) before slow-lane work (reruns
    with full limits of jobs that exceeded the probe), whichever call it came from."""

    def __init__(self) -> None:
        self.fast: deque = deque()
        self.slow: deque = deque()
        self.cond = threading.Condition(threading.Lock())
        self.stopping = 0  # dispatchers still to stop

    def put(self, items, slow: bool = False, front: bool = False) -> None:
        with self.cond:
            lane = self.slow if slow else self.fast
            if front:
                lane.extendleft(reversed(items))
            else:
                lane.extend(items)
            self.cond.notify(len(items))

    def get(self):
        """The next job, or None: this dispatcher stops."""
        with self.cond:
            while True:
                if self.stopping:
                    self.stopping -= 1
                    return None
                if self.fast:
                    return self.fast.popleft()
                if self.slow:
                    return self.slow.popleft()
                self.cond.wait()

    def drain(self) -> list:
        with self.cond:
            out = list(self.fast) + list(self.slow)
            self.fast.clear()
            self.slow.clear()
            return out

    def stop(self, n: int) -> None:
        with self.cond:
            self.stopping += n
            self.cond.notify_all()


def pinned_cpu(slot: int, workers: int, cpus: list[int], enabled: bool = True) -> int | None:
    """The CPU worker `slot` keeps to, or None to let the scheduler choose. Only a pool with one worker per
    usable CPU pins: it covers the machine evenly, so several such pools (Ray actors, trainer ranks) still
    spread out, while a smaller pool cannot know which CPUs other work leaves free."""
    return cpus[slot] if enabled and workers == len(cpus) else None


class Sandbox:
    """A pool of warm, sandboxed workers that run jobs; use as a context manager."""

    def __init__(self, config: SandboxConfig | None = None) -> None:
        self.config = config or SandboxConfig()
        self.mode: str | None = None
        self.warnings: list[str] = []
        self._lanes = _Lanes()
        self._seq = itertools.count(1)  # names a job to its worker, so that an abort reaches only that job
        self._wakes: list[tuple[int, int]] = []  # per slot: tells its dispatcher that its job was cut
        self._threads: list[threading.Thread] = []
        self._alive = [False] * self.config.workers
        self._lock = threading.Lock()
        self._state = "new"
        self._stats = {"jobs": 0, "tests": 0, "worker_restarts": 0, "worker_failures": 0,
                       "slow_lane": 0, "cut": 0, "not_started": 0, "overrun": 0, "aborted": 0, "rerun_lost": 0,
                       "lost": 0}
        self._limits: dict | None = None  # the part of a job's payload that all jobs share
        self._tmp: tempfile.TemporaryDirectory | None = None
        self.landlock: list[str] = []  # what Landlock confines in the candidates ([] = not available / off)
        self.cgroup: str | None = None  # the job cgroup's version the last worker started joins (cgroups.py)

    def __enter__(self) -> Sandbox:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def start(self) -> None:
        """Start the workers (idempotent); raises SandboxError when none can start."""
        with self._lock:
            if self._state == "closed":
                raise SandboxError("Sandbox is closed")
            if self._state == "running":
                return
            self.mode, self.warnings = isolation.resolve_mode(self.config.isolation, self.config.tmp_size_mb)
            self._tmp = tempfile.TemporaryDirectory(prefix="coderl-sandbox-")
            self._wakes = [os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC) for _ in range(self.config.workers)]
            ready = [threading.Event() for _ in range(self.config.workers)]
            errors: list[str] = []
            for slot in range(self.config.workers):
                t = threading.Thread(target=self._serve, args=(slot, ready[slot], errors),
                                     name=f"sandbox-worker-{slot}", daemon=True)
                t.start()
                self._threads.append(t)
            for ev in ready:
                ev.wait(120)
            if not any(self._alive):
                self._state = "running"
                self._close_locked()
                raise SandboxError("no sandbox worker could start: " + "; ".join(errors[:3]))
            self._state = "running"

    def _spawn(self, slot: int) -> isolation.WorkerProcess:
        workdir = os.path.join(self._tmp.name, f"w{slot}")
        shutil.rmtree(workdir, ignore_errors=True)  # whatever a replaced rlimits worker left behind
        os.makedirs(workdir)
        if self.mode == "rlimits" and isolation.rlimits_drops_privileges():
            os.chmod(self._tmp.name, 0o711)  # the unprivileged worker may enter, not list
            os.chown(workdir, isolation.SANDBOX_UID, isolation.SANDBOX_UID)
        worker = isolation.WorkerProcess(self.mode, self.config, workdir, self._cpu(slot))
        self.landlock = worker.hello.get("landlock") or []
        self.cgroup = worker.hello.get("cgroup")
        for w in worker.warnings:
            if w not in self.warnings:  # once per pool
                log.warning("SANDBOX WARNING: %s", w)
                self.warnings.append(w)
        return worker

    def _cpu(self, slot: int) -> int | None:
        return pinned_cpu(slot, self.config.workers, sorted(os.sched_getaffinity(0)), self.config.pin_workers)

    def _serve(self, slot: int, ready: threading.Event, errors: list) -> None:
        # Workers are spawned from this long-lived thread: bubblewrap's --die-with-parent tracks the thread.
        worker = None
        sent: OrderedDict = OrderedDict()  # label digests this slot's worker holds (its cache is as big)
        try:
            worker = self._spawn(slot)
            self._alive[slot] = True
        except Exception as e:  # reported by start()
            errors.append(str(e))
        ready.set()
        wake = self._wakes[slot][0]
        while True:
            item = self._lanes.get()
            if item is None:
                break
            with item.batch.lock:
                if item.batch.cut or item.result is not None:
                    continue  # settled when its call was cut
                late = time.monotonic() + item.bound > item.batch.deadline
                if not late:
                    item.slot = slot
            if late:  # it could still be running at the deadline: not started, settled now as the deadline would
                self._stats["not_started"] += 1
                _settle(item, self._unstarted(item))
                continue
            try:
                os.read(wake, 4096)  # a wake-up meant for a job that had already ended
            except BlockingIOError:
                pass
            try:
                worker = self._handle(slot, item, worker, sent)
            except Exception as e:  # a bug here must neither kill this thread nor leave the caller waiting
                log.exception("sandbox dispatcher error")
                if worker is not None:
                    worker.kill()  # its protocol state is unknown
                    worker = None
                self._lose(item, f"sandbox error: {type(e).__name__}: {e}")
            with item.batch.lock:
                if item.slot == slot:  # not yet taken again from the slow lane by another dispatcher
                    item.slot = None
        if worker is not None:
            worker.close()
        self._alive[slot] = False

    def _handle(self, slot: int, item: _Item, worker: isolation.WorkerProcess | None, sent: OrderedDict):
        """Run one job on this slot's worker (replacing it when needed); returns the worker to keep."""
        if worker is None or not worker.alive():
            if worker is not None:
                self._retire(worker)
            worker = self._replace(slot, item, sent)
            if worker is None:
                return None
        worker, reply = self._request(slot, item, worker, sent)
        if worker is None:
            return None
        if reply is not None and reply.get("aborted"):
            self._stats["aborted"] += 1
        if reply is not None and reply.get("lost") and "results" in reply:  # its judge killed from outside the job
            return self._judge_lost(item, worker, reply)
        if (reply is not None and item.probe and reply.get("exceeded") is not None and "results" in reply
                and not item.batch.cut and not reply.get("final")):
            return self._probe_exceeded(item, worker, reply)
        if reply is None or "error" in reply or "results" not in reply or not reply.get("clean", True):
            if self._worker_failed(item, worker, reply):
                return None
            worker = None
        result = self._assemble(item, reply)
        if result.infra == "worker":  # its results do not fit the label: not the program's verdict
            self._lose(item, result.detail)
        else:
            _settle(item, result)
        return worker

    def _retire(self, worker: isolation.WorkerProcess) -> None:
        """Kill a worker that cannot serve the next job; a fresh one replaces it."""
        worker.kill()
        self._stats["worker_restarts"] += 1

    def _request(self, slot: int, item: _Item, worker: isolation.WorkerProcess, sent: OrderedDict):
        """Send the job (with its label's spec when this worker lacks it): (worker, its reply or None), or (None,
        None) when the worker had to be replaced and none could start."""
        timeout = item.payload["job_timeout_s"] + 15
        reply = None
        base = {**item.payload, "seq": next(self._seq)}
        if item.probe:  # a probe times by the wall clock alone: exceeding it only costs a rerun with full limits
            base["test_timeout_s"], base["probe"], base["full_timeout_s"] = item.probe, True, base["test_timeout_s"]
        batch = item.batch
        for _ in range(3):  # the worker may need the label's tests, or a replacement
            digest = item.payload["digest"]
            payload = base if digest in sent else {**base, "spec": item.spec}
            reply = worker.request(payload, timeout, self._wakes[slot][0], lambda: batch.cut, _ABORT_GRACE_S)
            if reply is not None and reply.get("need_spec"):
                sent.pop(digest, None)
                continue
            if reply is not None and reply.get("retry"):  # the worker could not clean up after its last job
                self._retire(worker)
                worker = self._replace(slot, item, sent)
                if worker is None:
                    return None, None
                continue
            break
        sent[item.payload["digest"]] = True
        sent.move_to_end(item.payload["digest"])
        while len(sent) > SPEC_CACHE:
            sent.popitem(last=False)
        return worker, reply

    def _judge_lost(self, item: _Item, worker: isolation.WorkerProcess, reply: dict):
        """The job's judge was killed from outside the job: its decided tests stand, the rest runs again."""
        lost = self._assemble(item, reply)
        if not reply.get("clean", True):
            self._retire(worker)
            worker = None
        if lost.infra:
            self._lose(item, lost.detail)
        else:
            self._lose(item, str(reply["lost"]), {i: lost.outcomes[i] for i in self._decided(item, reply)})
        return worker

    def _probe_exceeded(self, item: _Item, worker: isolation.WorkerProcess, reply: dict):
        """The job needs more than its probe: again from the start in the slow lane, with its full limits."""
        item.probe = 0.0
        item.first = replace(self._assemble(item, reply), infra=INFRA_PROBE, detail=PROBE_CUT_DETAIL)
        item.kept.update({i: item.first.outcomes[i] for i in self._decided(item, reply)})
        self._stats["slow_lane"] += 1
        self._lanes.put([item], slow=True)
        if not reply.get("clean", True):  # what the run left could not be cleaned: a fresh worker next
            self._retire(worker)
            return None
        return worker

    def _worker_failed(self, item: _Item, worker: isolation.WorkerProcess, reply: dict | None) -> bool:
        """Retire a worker that died, overran, failed or could not clean up: True when that decided the job (scored
        as killed, or run again); False when its results still stand."""
        died = worker.alive() is False
        why = ("sandbox worker died" if reply is None and died else
               "sandbox worker overran the job deadline" if reply is None else
               reply.get("error") or ("job left processes or files that could not be cleaned"
                                      if "results" in reply else "sandbox worker could not run the job"))
        contained = bool(worker.hello.get("jobns")) or "signals" in (worker.hello.get("landlock") or [])
        self._retire(worker)
        if reply is None and not contained:
            # the job's processes could signal the worker (no pid namespace of their own, no Landlock scoping):
            # a worker that died or stopped mid-job may have been the program's doing
            log.warning("%s while its job's processes could signal it: the job is scored as killed", why)
            _settle(item, self._failed(item, Status.KILLED, why, "worker"))
            return True
        if reply is None or "results" not in reply:
            self._lose(item, why)
            return True
        return False

    @staticmethod
    def _decided(item: _Item, reply: dict) -> list[int]:
        """The tests a run that did not finish decided (the worker's "decided"), within the label's."""
        decided = reply.get("decided")
        return [i for i in decided if type(i) is int and 0 <= i < item.expected] if type(decided) is list else []

    def _lose(self, item: _Item, why: str, kept: dict | None = None) -> None:
        """A run the sandbox could not decide: never the program's failure. Its decided verdicts stand; the job runs
        once more (first in its lane: a dispatcher with a fresh worker or judge takes it) unless a run of it was
        lost before or its call was cut; then it is reported as cut: the first run of a job that had exceeded its
        probe (the deadline cut's rule), else infra "lost", which the caller rewards as a cut."""
        batch = item.batch
        with batch.lock:
            if item.result is not None:
                return
            item.lost += 1
            again = item.lost == 1 and not batch.cut
            if again:
                item.slot = None  # waiting for its rerun, not running: a cut now is no overrun
        item.kept.update(kept or {})
        if again:
            self._stats["rerun_lost"] += 1
            log.warning("sandbox lost a run of a job (%s): running it again", why)
            self._lanes.put([item], slow=not item.probe, front=True)
            return
        self._stats["lost"] += 1
        log.warning("sandbox lost a run of a job (%s)%s: reported as cut, not scored", why,
                    ", a second time" if item.lost > 1 else ", with its batch cut")
        detail = f"{why}: the sandbox could not decide this test (reported as cut)"
        outcomes = [item.kept.get(i) or TestOutcome(Status.KILLED, 0.0, detail) for i in range(item.expected)]
        _settle(item, item.first or JobResult(outcomes, item.expected, time.monotonic() - item.t0, detail=detail,
                                              infra=INFRA_LOST))

    def _replace(self, slot: int, item: _Item, sent: OrderedDict):
        """A fresh worker for this slot, or None (and the job failed) when none can start."""
        sent.clear()
        try:
            worker = self._spawn(slot)
            self._alive[slot] = True
            return worker
        except Exception as e:
            self._alive[slot] = False
            self._stats["worker_failures"] += 1
            self._lose(item, f"sandbox worker unavailable: {e}")
            return None

    def _failed(self, item: _Item, status: Status, why: str, infra: str) -> JobResult:
        return JobResult([TestOutcome(status, 0.0, why) for _ in range(item.expected)], item.expected,
                         time.monotonic() - item.t0, detail=why, infra=infra)

    def _assemble(self, item: _Item, reply: dict) -> JobResult:
        label, cap = item.job.label, self.config.detail_chars
        raw = reply.get("results") or []
        if len(raw) != item.expected:
            return self._failed(item, Status.KILLED, f"ran {len(raw)} tests, the label declares {item.expected}", "worker")
        outcomes = []
        verdict = FORMATS[label.format].verdict
        for i, r in enumerate(raw):
            status, detail = r.get("status", Status.KILLED), r.get("detail") or ""
            if status == OK and verdict is not None:
                ok, detail = verdict(r, label.tests[i])
                status = Status.PASSED if ok else Status.FAILED
            elif status not in STATUSES or status == OK or (status == Status.PASSED and verdict is not None):
                # a format with a verdict passes a case only by it: the sandbox never sees the expected value
                status, detail = Status.KILLED, f"unexpected status {status!r}"
            outcomes.append(TestOutcome(Status(status), float(r.get("runtime_s") or 0.0), detail[:cap]))
        # A rerun runs the program from the start (later tests may depend on what earlier ones did), but a test an
        # earlier run decided keeps that verdict: a second one would be a second try (a program that guessed slept
        # past the probe and drew again: 0.40 of its guesses passed, 0.25 in plain Python).
        for i, kept in item.kept.items():
            outcomes[i] = kept
        stats = {"children": reply.get("children", 1), "sandbox_runtime_s": reply.get("runtime_s", 0.0)}
        return JobResult(outcomes, item.expected, time.monotonic() - item.t0, detail=reply.get("note", ""),
                         stats=stats, infra=INFRA_CUT if reply.get("aborted") else "")

    def _payload(self, job: Job) -> tuple[dict, dict, int, float]:
        label, cfg = job.label, self.config
        p = plan(label)
        if self._limits is None:  # the same for every job of this pool
            self._limits = {
                "detail_chars": cfg.detail_chars,
                "max_value_bytes": cfg.max_value_mb << 20,
                "limits": {"memory_mb": cfg.memory_mb, "cpu_time_s": cfg.cpu_time_s,
                           "max_file_size_mb": cfg.max_file_size_mb, "max_processes": cfg.max_processes,
                           "max_open_files": cfg.max_open_files}}
        max_output = cfg.max_output_bytes
        room = FORMATS[label.format].output_room
        if room is not None:
            max_output = max(max_output, room(label.tests))
        test_s, job_s, probe = time_limits(label, cfg)
        payload = {"digest": p["digest"], "code": job.code, "test_timeout_s": test_s, "job_timeout_s": job_s,
                   "max_output": max_output, **self._limits}
        return payload, p["spec"], len(p["spec"]["plan"]), probe

    def _submit(self, jobs: Sequence[Job], wake=None, deadline_s: float | None = None) -> tuple[list[_Item], _Batch]:
        if self._state != "running":
            self.start()
        items: list[_Item] = []
        for job in jobs:
            if not isinstance(job, Job):
                raise TypeError(f"expected coderl.rewards.sandbox.Job, got {type(job).__name__}")
            payload, spec, expected, probe = self._payload(job)
            items.append(_Item(job, payload, spec, expected, probe))
        batch = _Batch(wake, float("inf") if deadline_s is None else time.monotonic() + deadline_s)
        batch.left = len(items)
        batch.items = items
        for item in items:
            item.batch = batch
            if item.expected == 0:
                _settle(item, JobResult([], 0, detail="the label declares no test cases"))
        if not items:
            batch.finished()
        with self._lock:
            if self._state == "closed":
                raise SandboxError("Sandbox is closed")
            self._lanes.put([item for item in items if item.result is None])
            self._stats["jobs"] += len(jobs)
            self._stats["tests"] += sum(it.expected for it in items)
        return items, batch

    @staticmethod
    def _unstarted(item: _Item) -> JobResult:
        """A job the deadline left waiting: no verdict ("deadline": the caller's neutral reward, its place in the
        queue decided it), unless it had exceeded its probe: then that run's verdict (a hang, or a program slow by
        choice, deferred to the slow lane keeps what its first run showed: never more than finishing)."""
        return item.first or JobResult([TestOutcome(Status.TIMEOUT, 0.0, CUT_DETAIL) for _ in range(item.expected)],
                                       item.expected, time.monotonic() - item.t0, detail=CUT_DETAIL, infra=INFRA_CUT)

    def _overrun(self, item: _Item) -> JobResult:
        """A run still going at the deadline. It started with its whole bound left (run_bound_s), so it is past its job
        limit: the tests its runs decided stand, the others are timeouts, as the job limit would have left them."""
        self._stats["overrun"] += 1
        log.warning("a run was still going at the batch deadline, past its %.1f s job limit + %.1f s: scored as "
                    "timeouts", item.payload["job_timeout_s"], START_MARGIN_S)
        return JobResult([item.kept.get(i) or TestOutcome(Status.TIMEOUT, 0.0, OVERRUN_DETAIL)
                          for i in range(item.expected)], item.expected, time.monotonic() - item.t0,
                         detail=OVERRUN_DETAIL, infra=INFRA_OVERRUN)

    def _cut(self, batch: _Batch, deadline: bool = True) -> None:
        """End a call now (its deadline passed, or its caller gave up): its unfinished jobs are settled, and the
        workers running them abort them."""
        with batch.lock:
            if batch.cut:
                return
            batch.cut = True
            left = [(item, item.slot) for item in batch.items if item.result is None]
        n = 0
        for item, slot in left:
            n += 1
            running = slot is not None and item.first is None
            _settle(item, self._overrun(item) if running and deadline else self._unstarted(item))
            if slot is not None:
                try:
                    os.write(self._wakes[slot][1], b"x")
                except (BlockingIOError, OSError):  # full: a wake-up is already pending
                    pass
        self._stats["cut"] += n

    def run(self, jobs: Sequence[Job], deadline_s: float | None = None) -> list[JobResult]:
        """Run jobs (blocking, thread-safe); results in input order. Never raises for a bad program. A job whose run
        could not start with run_bound_s left before deadline_s is cut: its result has infra="deadline"."""
        items, batch = self._submit(jobs, deadline_s=deadline_s)
        if not batch.event.wait(deadline_s):
            self._cut(batch)
        return [it.result for it in items]

    async def arun(self, jobs: Sequence[Job], deadline_s: float | None = None) -> list[JobResult]:
        """Like run(), awaitable; the event loop is never blocked. A cancelled call aborts its jobs."""
        if self._state != "running":
            await asyncio.to_thread(self.start)
        loop = asyncio.get_running_loop()
        done = loop.create_future()

        def wake() -> None:
            try:
                loop.call_soon_threadsafe(lambda: done.done() or done.set_result(None))
            except RuntimeError:  # the loop was closed meanwhile: nobody waits any more
                pass

        items, batch = self._submit(jobs, wake, deadline_s)
        try:
            await asyncio.wait_for(asyncio.shield(done), deadline_s)
        except asyncio.TimeoutError:
            self._cut(batch)
        except asyncio.CancelledError:
            self._cut(batch, deadline=False)
            raise
        return [it.result for it in items]

    def close(self) -> None:
        """Stop the workers and kill everything they ran; pending jobs get 'killed' outcomes."""
        with self._lock:
            self._close_locked()

    def _close_locked(self) -> None:
        if self._state == "closed":
            return
        was_running = self._state == "running"
        self._state = "closed"
        if not was_running:
            return
        for item in self._lanes.drain():
            _settle(item, self._failed(item, Status.KILLED, "sandbox closed before the job ran", "closed"))
        self._lanes.stop(len(self._threads))
        for t in self._threads:
            t.join(timeout=2 * max(self.config.job_timeout_s, self.config.time_cap_s) + 30)
        for item in self._lanes.drain():  # requeued for a rerun by a job that was running at close
            _settle(item, self._failed(item, Status.KILLED, "sandbox closed before the job ran", "closed"))
        if self._tmp is not None:
            self._tmp.cleanup()
        for fds in self._wakes:
            for fd in fds:
                os.close(fd)

    def info(self) -> dict:
        """Isolation mode, workers, limits and counters, for the server's /health."""
        info = isolation.isolation_info(self.config) if self.mode is None else {
            **isolation.isolation_info(self.config.model_copy(update={"isolation": self.mode})),
            "warnings": list(self.warnings), "accounting": cgroups.describe(self.cgroup)}
        info.update(state=self._state, landlock=list(self.landlock), workers=self.config.workers, workers_alive=sum(
                        a and t.is_alive() for a, t in zip(self._alive, self._threads, strict=False)),
                    stats=dict(self._stats))
        return info

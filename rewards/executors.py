"""Where jobs run: one local Sandbox pool, or Ray actors each holding a warm Sandbox pool.

Both executors share the batch logic, on the driver: identical jobs (same label, same code byte for byte)
run once (the one in-batch dedup: the pool runs every job it is given; SandboxConfig.dedup turns it off),
each program's first verdict is kept across batches in a ResultCache (rewards/result_cache.py; GRPO
resamples the same prompt many times), jobs are cut into chunks, and each chunk carries the batch deadline
down to the pool, which starts no run that could still be going then (docs/reward.md, "The cut rule"): a job it
could not start comes back with JobResult.infra == "deadline" (or "probe": the first run of a job whose rerun could
not start; "overrun": a run still going at the deadline), and the cache never keeps them. A chunk that does not answer even then (a lost Ray actor) comes back as None.

With the cache on, a key runs once across concurrent batches too (single flight): a batch that meets a key
another batch is running awaits that run's verdict instead of running it again, so the verdict a batch gets,
and the one the cache keeps, never depend on which batch's run ends first (a program slow only when wrong
would otherwise have its fast passes cached first). A batch awaits only a run whose batch's deadline is no later
than its own, so that run's result comes in its time (the pool settles every job by its call's deadline); a run
owned by a batch with a later deadline could still be going at this one's, so this batch runs the key itself,
apart (its result is not the key's first run: not cached). One whose owner's run ends without a verdict of the
program (its job left unstarted, an executor failure, a cancelled batch) runs the job itself in what time it has
left; one whose owner's run was scored past its limits (probe, overrun) takes that unless it has the time for a
run of its own. So a waiter gets the owner's verdict or its own run's, never a cut a program could buy by
being slow (docs/reward.md, "The cut rule").
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import shutil
import socket
import tempfile
import threading
import time
import weakref
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import replace
from pathlib import Path

from .config import SandboxConfig
from .result_cache import KEY_BYTES, ResultCache, limits_digest, program_decided, result_key
from .sandbox import Job, JobResult, Sandbox, Status, TestOutcome, count_tests
from .sandbox.inside.framing import CUT_DETAIL
from .sandbox.pool import run_bound_s
from .sandbox.results import INFRA_CUT, INFRA_LOST, INFRA_OVERRUN, INFRA_PROBE

log = logging.getLogger("coderl.reward_server")
# How long past its own deadline a batch awaits a run owned by a batch whose deadline is no later (the hand-over
# of a result the owner's pool settled by then: a Ray round trip)
_BORROW_GRACE_S = 1.0
_LATE_S = 10.0  # how long past the deadline a chunk may take to bring back its cut results (a Ray round trip)

LOST_DETAIL = "cut: its executor failed and no live one could rerun it in the batch's time"


class FairShare:
    """Admits the chunks of concurrent batches to the workers in turn, one chunk per batch, round-robin, while
    the jobs admitted stay within `capacity` (about two per worker): a batch that arrives behind a large one
    waits for a chunk of it, not for all of it (the pool behind runs its queue first come, first served).

    A chunk counts against the capacity until it ends or `hold_s` passes, whichever is first: a chunk still
    running then holds a job that exceeded its probe (rerun in the pool's slow lane) or a slow one, and the
    first runs of the jobs behind it must not wait for those (the pool runs every first run it has before any
    rerun)."""

    def __init__(self, capacity: int, hold_s: float = 1.0) -> None:
        self.capacity, self.hold_s = capacity, hold_s
        self.used = 0
        self._queues: OrderedDict[object, deque[tuple[int, asyncio.Future]]] = OrderedDict()

    async def acquire(self, batch: object, n: int) -> None:
        """Wait until a chunk of n jobs of `batch` may run (then release(n) once it ended)."""
        if not self._queues and (self.used == 0 or self.used + n <= self.capacity):
            self.used += n
            return
        fut = asyncio.get_running_loop().create_future()
        self._queues.setdefault(batch, deque()).append((n, fut))
        try:
            await fut
        except asyncio.CancelledError:
            if fut.done() and not fut.cancelled():  # granted as it was cancelled
                self.release(n)
            else:
                q = self._queues.get(batch)
                if q is not None:
                    with contextlib.suppress(ValueError):
                        q.remove((n, fut))
                    if not q:
                        del self._queues[batch]
            raise

    def release(self, n: int) -> None:
        self.used -= n
        while self._queues:
            batch, q = next(iter(self._queues.items()))
            n_next, fut = q[0]
            if self.used and self.used + n_next > self.capacity:
                return
            q.popleft()
            if q:
                self._queues.move_to_end(batch)
            else:
                del self._queues[batch]
            if not fut.done():
                self.used += n_next
                fut.set_result(None)


def _lost(why: str) -> JobResult:
    """A job its executor failed on: cut (no evidence about the program), never scored as its failure."""
    return JobResult(outcomes=[], expected=0, detail=f"{LOST_DETAIL}: {why}", infra=INFRA_CUT)


def _chunk_results(task: asyncio.Future, n: int) -> list[JobResult | None]:
    """The results of an ended chunk of n jobs: a failed chunk's jobs are cut, a cancelled one's None."""
    if task.cancelled():
        return [None] * n
    if task.exception() is not None:
        return [_lost(f"executor error: {task.exception()!r}") for _ in range(n)]
    res = task.result()
    return res if len(res) == n else [_lost("executor returned a wrong number of results")] * n


def _cut(job: Job, waited_s: float, detail: str = CUT_DETAIL) -> JobResult:
    """What the pool gives a job no run of which could start before the batch deadline (and the executor a job
    no live actor could run, or one still waiting for its turn at the deadline: no evidence about the program)."""
    n = count_tests(job.label)
    return JobResult([TestOutcome(Status.TIMEOUT, 0.0, detail) for _ in range(n)], n, waited_s,
                     detail=detail, infra=INFRA_CUT)


class BaseExecutor:
    """Dedup, cache, chunking and the batch deadline; subclasses provide _run_chunk."""

    name = "base"

    def __init__(self, sandbox_cfg: SandboxConfig, result_cache: ResultCache | None = None,
                 chunk_size: int = 0) -> None:
        self.sandbox_cfg = sandbox_cfg
        self.result_cache = result_cache
        self.chunk_size = chunk_size
        self._abandoned: set[asyncio.Future] = set()
        # cache key -> (the verdict of the run of it a batch now in flight owns, that batch's deadline (monotonic)):
        # single flight across batches
        self._inflight: dict[bytes, tuple[asyncio.Future, float]] = {}
        self._fair: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # event loop -> its FairShare
        self.last_stats: dict = {}

    def _forget(self, task: asyncio.Future) -> None:
        self._abandoned.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.warning("a chunk abandoned at the deadline failed later: %r", task.exception())

    @property
    def workers(self) -> int:
        return self.sandbox_cfg.workers

    def start(self) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    def __enter__(self) -> BaseExecutor:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    def info(self) -> dict:  # pragma: no cover - overridden
        raise NotImplementedError

    def readiness(self) -> tuple[bool, str]:  # pragma: no cover - overridden
        """(whether it can score now, why not)."""
        raise NotImplementedError

    @property
    def capacity(self) -> int:
        """Jobs admitted to the workers at once (FairShare): two per worker keep each busy between chunks."""
        return 2 * self.workers

    def _fair_share(self) -> FairShare:
        loop = asyncio.get_running_loop()
        fair = self._fair.get(loop)
        if fair is None:
            # A job exceeding its probe leaves the fast lane within the probe: a chunk still running after twice
            # that holds reruns or slow programs (with no probe, no reruns: a second bounds the wait).
            probe = self.sandbox_cfg.probe_s
            fair = self._fair[loop] = FairShare(self.capacity, 2 * probe if probe > 0 else 1.0)
        fair.capacity = self.capacity  # a Ray executor's workers come and go with its actors
        return fair

    async def _run_chunk(self, jobs: list[Job], deadline_s: float) -> list[JobResult]:  # pragma: no cover
        raise NotImplementedError

    def _chunk_len(self, n: int) -> int:
        if self.chunk_size:
            return self.chunk_size
        # ~4 chunks per worker: small enough that a deadline loses little, big enough to keep workers busy; at
        # least 8 jobs, so that many workers do not make a batch many calls (each has a fixed cost); at most half
        # of what FairShare admits, so that concurrent batches take turns often.
        return max(1, min(max(min(n, 8), math.ceil(n / (4 * self.workers))), self.capacity // 2))

    def _lookup(self, part: Sequence[Job], keys: list[bytes], todo: OrderedDict[bytes, list[int]], base: int,
                owned: dict[bytes, asyncio.Future], borrowed: dict[bytes, asyncio.Future], deadline: float,
                ) -> tuple[list[JobResult | None], list[bytes]]:
        """For jobs base.. of a batch: the results the cache already has, and the keys of those still to run
        (added to todo, which groups the batch's job indices by key: a duplicate shares the first one's run).
        A key another batch is running goes to borrowed (its run's future) when that batch's deadline is no later
        than this one's (the monotonic `deadline`); else this batch runs it apart (neither owned nor cached). One
        this batch runs first goes to owned. On the event loop, in one step: between the cache's answer and the
        reservation no run can end."""
        cache, dedup = self.result_cache, self.sandbox_cfg.dedup
        loop = asyncio.get_running_loop()
        results: list[JobResult | None] = [None] * len(part)
        new: list[bytes] = []
        for i, k in enumerate(keys):
            idx = todo.get(k) if dedup else None
            if idx is not None:
                idx.append(base + i)
                continue
            results[i] = cache.get(k) if cache is not None else None
            if results[i] is None:
                if not dedup:  # a run of its own: the key made unique by the job's place (the cache's: k[:KEY_BYTES])
                    k += (base + i).to_bytes(8, "little")
                todo[k] = [base + i]
                flight = self._inflight.get(k) if cache is not None and dedup else None
                if flight is not None and flight[0].get_loop() is loop and flight[1] <= deadline:
                    borrowed[k] = flight[0]
                    continue
                new.append(k)
                if cache is not None and dedup and (flight is None or flight[0].get_loop() is not loop):
                    owned[k] = loop.create_future()
                    self._inflight[k] = (owned[k], deadline)
        return results, new

    def _settle(self, k: bytes, res: JobResult | None, owned: dict[bytes, asyncio.Future]) -> None:
        """Record the run of a key this batch owns, once, as soon as its chunk ends: the cache first (a miss
        too: the key's first run, so it is never cached), then the batches awaiting it (in one step on the
        event loop, so that no batch finds neither)."""
        run = owned.pop(k, None)
        if run is None:
            return
        self.result_cache.put(k[:KEY_BYTES], res)
        if self._inflight.get(k, (None,))[0] is run:
            del self._inflight[k]
        if not run.done():
            run.set_result(res)

    async def _borrow(self, k: bytes, run: asyncio.Future, todo: OrderedDict[bytes, list[int]], jobs: list[Job],
                      deadline: float, deadline_s: float, owned: dict[bytes, asyncio.Future],
                      reran: set[bytes], batch: object = None) -> JobResult | None:
        """The result of another batch's run of k (whose deadline is no later than this one's: it comes by then, or
        _BORROW_GRACE_S later for the hand-over). A verdict is taken; a run scored past its limits (probe, overrun)
        too unless this batch has the time for a run of its own; a run with no verdict of the program is run here."""
        t0 = time.monotonic()
        try:
            res = await asyncio.wait_for(asyncio.shield(run), timeout=max(deadline + _BORROW_GRACE_S - t0, 0.0))
        except TimeoutError:  # the owner's executor never handed it over (a lost actor): not the program's doing
            return _cut(jobs[todo[k][0]], time.monotonic() - t0)
        job = jobs[todo[k][0]]
        if program_decided(res):
            return replace(res, cached=True)
        scored = res is not None and res.infra in (INFRA_PROBE, INFRA_OVERRUN)
        if scored and time.monotonic() + run_bound_s(job.label, self.sandbox_cfg) > deadline:
            return replace(res, cached=True)  # what its own run would have had time for at most
        if time.monotonic() >= deadline:
            return _cut(job, time.monotonic() - t0)
        owned[k] = asyncio.get_running_loop().create_future()
        self._inflight[k] = (owned[k], deadline)
        reran.add(k)
        out = await self._wait([self._start([k], todo, jobs, deadline, owned=owned, batch=batch)], deadline + _LATE_S,
                               deadline_s, 1)
        return out[k]

    async def run(self, jobs: Sequence[Job], deadline_s: float,
                  progress: Callable[[int], None] | None = None) -> list[JobResult | None]:
        """Results in job order; a job cut by the deadline has infra "deadline" (None: its chunk never answered).
        progress(n): called on the event loop as n more of the jobs have their result."""
        async def whole():
            yield jobs

        return await self.run_parts(whole(), len(jobs), deadline_s, progress)

    async def run_parts(self, parts: AsyncIterator[Sequence[Job]], expected: int, deadline_s: float,
                        progress: Callable[[int], None] | None = None) -> list[JobResult | None]:
        """run() for a batch whose jobs come in parts (the server prepares a batch in slices): a part's jobs
        start as soon as it comes, and one that repeats an earlier part's still runs once. Results in the
        order the jobs came; expected (about how many jobs will come) sizes the chunks; the deadline counts
        from this call."""
        t0 = time.monotonic()
        before = self.result_cache.stats() if self.result_cache is not None else None
        jobs: list[Job] = []
        results: list[JobResult | None] = []
        todo: OrderedDict[bytes, list[int]] = OrderedDict()
        size, waiting, chunks = self._chunk_len(expected), [], []
        owned: dict[bytes, asyncio.Future] = {}
        borrowed: dict[bytes, asyncio.Future] = {}
        reran: set[bytes] = set()
        limits = limits_digest(self.sandbox_cfg)
        batch = object()  # this batch's turn in FairShare
        try:
            async for part in parts:
                base = len(jobs)
                jobs.extend(part)
                # Off the event loop: hashing a big batch's code takes tens of milliseconds.
                keys = await asyncio.to_thread(lambda p=part: [result_key(job, limits) for job in p])
                res, new = self._lookup(part, keys, todo, base, owned, borrowed, t0 + deadline_s)
                results.extend(res)
                waiting.extend(new)
                if progress is not None:
                    progress(len(res) - res.count(None))
                while len(waiting) >= size:
                    chunks.append(self._start(waiting[:size], todo, jobs, t0 + deadline_s, progress, owned, batch))
                    del waiting[:size]
            if waiting:
                chunks.append(self._start(waiting, todo, jobs, t0 + deadline_s, progress, owned, batch))
            lent = list(borrowed)
            outs, *got = await asyncio.gather(
                self._wait(chunks, t0 + deadline_s + _LATE_S, deadline_s, len(todo) - len(lent)),
                *(self._borrow(k, borrowed[k], todo, jobs, t0 + deadline_s, deadline_s, owned, reran, batch)
                  for k in lent))
        except BaseException:  # cancelled (a client gone, a shutdown) or failed: its jobs stop now, in the pools too
            for _, task in chunks:
                task.cancel()
            raise
        finally:  # chunks abandoned, the batch cancelled or failed: those awaiting its runs run them themselves
            for k in list(owned):
                self._settle(k, None, owned)
        if self.result_cache is not None and not self.sandbox_cfg.dedup:  # runs of their own, none owned
            for k, res in outs.items():
                self.result_cache.put(k[:KEY_BYTES], res)
        outs.update(zip(lent, got, strict=True))
        if progress is not None and lent:
            progress(sum(len(todo[k]) for k in lent))
        self.last_stats = self._account(todo, outs, results, jobs, lent, reran, deadline_s, t0, before)
        return results

    def _account(self, todo, outs, results, jobs, lent, reran, deadline_s, t0, before) -> dict:
        """Put each key's result at every index that asked for it; the batch's stats, its cuts and losses logged."""
        missed = cut = probed = overran = infra = shared = lost = 0
        for k, idx in todo.items():
            res = outs[k]
            if res is None:
                missed += len(idx)
                continue
            if res.infra:  # the sandbox decided it, not the program
                if res.detail.startswith(LOST_DETAIL) or res.infra == INFRA_LOST:  # no live executor, or the sandbox lost it
                    lost += len(idx)
                elif res.infra in (INFRA_CUT, INFRA_PROBE, INFRA_OVERRUN):  # cut; the last two scored by their runs
                    cut += len(idx)
                    probed += len(idx) if res.infra == INFRA_PROBE else 0
                    overran += len(idx) if res.infra == INFRA_OVERRUN else 0
                else:
                    infra += len(idx)
            for n, i in enumerate(idx):
                results[i] = res if n == 0 else replace(res, cached=True)
            shared += len(idx) - 1
        hits = len(jobs) - len(todo) - shared
        joined = sum(1 for k in lent if outs[k] is not None and outs[k].cached)  # the others: cut waiting, or run here
        stats = {"jobs": len(jobs), "executed": len(todo) - len(lent) + len(reran), "cache_hits": hits + shared + joined,
                 "result_cache_hits": hits, "inflight_joined": joined,
                 "deadline_missed": missed, "deadline_cut": cut, "deadline_probe": probed, "deadline_overrun": overran,
                 "infra_failed": infra, "executor_cut": lost,
                 "seconds": time.monotonic() - t0}
        if lost:
            log.error("%d of %d jobs cut: no live executor could run them (%s); they get the cut reward, not a "
                      "verdict", lost, len(jobs), self.readiness()[1] or "actors lost mid-batch")
        if cut or missed:
            log.warning("batch deadline (%.1fs) passed: %d of %d jobs cut%s; they get the cut reward, not a verdict%s",
                        deadline_s, cut + missed, len(jobs), f" ({missed} never answered)" if missed else "",
                        (f", but for {probed} that had exceeded their probe: their first run's" if probed else "") +
                        (f", but for {overran} still running past their job limit: timeouts" if overran else ""))
        if before is not None:
            after = self.result_cache.stats()
            stats.update(result_cache_misses=after.misses - before.misses,
                         result_cache_evictions=after.evictions - before.evictions,
                         result_cache_entries=after.entries, result_cache_mb=round(after.bytes / 2**20, 2))
        return stats

    async def _admitted(self, batch: object, jobs: list[Job], deadline: float) -> list[JobResult]:
        """A chunk's results: run when FairShare admits it, until the batch deadline (a monotonic time); cut
        if the deadline passes before its turn comes."""
        fair, t0 = self._fair_share(), time.monotonic()
        try:
            await asyncio.wait_for(fair.acquire(batch, len(jobs)), max(deadline - t0, 0.0))
        except TimeoutError:
            return [_cut(job, time.monotonic() - t0) for job in jobs]
        held = [True]

        def release() -> None:
            if held[0]:
                held[0] = False
                fair.release(len(jobs))

        timer = asyncio.get_running_loop().call_later(fair.hold_s, release)
        try:
            return await self._run_chunk(jobs, max(deadline - time.monotonic(), 0.0))
        finally:
            timer.cancel()
            release()

    def _start(self, keys: list[bytes], todo: OrderedDict[bytes, list[int]], jobs: list[Job], deadline: float,
               progress: Callable[[int], None] | None = None, owned: dict[bytes, asyncio.Future] | None = None,
               batch: object = None) -> tuple[list[bytes], asyncio.Future]:
        """A chunk of the batch's unique jobs, running until the batch deadline (a monotonic time) once its
        turn comes (FairShare, among the batches in flight); the keys of it this batch owns are settled as soon
        as it ends."""
        task = asyncio.ensure_future(self._admitted(batch, [jobs[todo[k][0]] for k in keys], deadline))
        if progress is not None:
            task.add_done_callback(lambda _: progress(sum(len(todo[k]) for k in keys)))
        if owned:
            def settle(t: asyncio.Future) -> None:
                for k, res in zip(keys, _chunk_results(t, len(keys)), strict=True):
                    self._settle(k, res, owned)
            task.add_done_callback(settle)
        return keys, task

    async def _wait(self, chunks: list[tuple[list[bytes], asyncio.Future]], deadline: float, deadline_s: float,
                    n: int) -> dict[bytes, JobResult | None]:
        """Each key's result, None for those whose chunk did not answer by `deadline` (a monotonic time: the
        batch deadline plus the time a chunk may take to bring back what the pool cut)."""
        tasks = [task for _, task in chunks]
        try:
            done, pending = await asyncio.wait(tasks, timeout=max(deadline - time.monotonic(), 0.0)) if tasks else ((), ())
        except asyncio.CancelledError:
            for t in tasks:
                t.cancel()
            raise
        # Chunks that still did not answer (the pools cut at the deadline: an actor lost or stuck) are
        # abandoned; their results are dropped.
        for t in pending:
            self._abandoned.add(t)
            t.add_done_callback(self._forget)
        if pending:
            log.warning("%d of %d jobs never came back from their executor after the batch deadline (%.1fs)",
                        sum(len(k) for k, t in chunks if t in pending), n, deadline_s)
        out: dict[bytes, JobResult | None] = {}
        for keys, task in chunks:
            if task in pending:
                out.update(dict.fromkeys(keys))
                continue
            if not task.cancelled():
                if task.exception() is not None:
                    log.error("executor failed on %d jobs (cut: the cut reward, not a verdict): %r", len(keys),
                              task.exception())
                elif len(task.result()) != len(keys):
                    log.error("executor returned %d results for %d jobs", len(task.result()), len(keys))
            out.update(zip(keys, _chunk_results(task, len(keys)), strict=True))
        return out


class LocalExecutor(BaseExecutor):
    """One Sandbox pool in this process."""

    name = "local"

    def __init__(self, sandbox_cfg: SandboxConfig, result_cache: ResultCache | None = None,
                 chunk_size: int = 0) -> None:
        super().__init__(sandbox_cfg, result_cache, chunk_size)
        self.sandbox = Sandbox(sandbox_cfg)

    def start(self) -> None:
        self.sandbox.start()
        self._open = True

    def close(self) -> None:
        if getattr(self, "_open", False):
            self._open = False
            self.sandbox.close()

    def info(self) -> dict:
        return self.sandbox.info()

    def readiness(self) -> tuple[bool, str]:
        info = self.sandbox.info()
        if info["state"] != "running":
            return False, f"the sandbox pool is {info['state']}"
        if not info["workers_alive"]:
            return False, "no sandbox worker is alive"
        return True, ""

    async def _run_chunk(self, jobs: list[Job], deadline_s: float) -> list[JobResult]:
        return await self.sandbox.arun(jobs, deadline_s=deadline_s)


class _SandboxActor:
    """Ray actor body: a warm Sandbox pool on one node (threaded: several chunks share the pool)."""

    def __init__(self, sandbox_cfg: dict) -> None:
        self.sandbox = Sandbox(SandboxConfig(**sandbox_cfg))
        self.sandbox.start()

    def info(self) -> dict:
        import ray

        return {**self.sandbox.info(), "node": socket.gethostname(), "node_id": ray.get_runtime_context().get_node_id()}

    def run(self, jobs: list[Job], deadline_s: float | None = None) -> list[JobResult]:
        return self.sandbox.run(jobs, deadline_s)

    def close(self) -> None:
        self.sandbox.close()


def _shippable_package(tmp: Path) -> str:
    """tmp/coderl holding this checkout's rewards/ and configs/, the layout Ray's py_modules needs so that
    actors import them as `coderl.rewards` (Ray names a shipped directory after its basename)."""
    import coderl.configs
    import coderl.rewards

    pkg = tmp / "coderl"
    skip = shutil.ignore_patterns("__pycache__", "*.pyc")
    for mod in (coderl.rewards, coderl.configs):
        shutil.copytree(Path(mod.__file__).resolve().parent, pkg / mod.__name__.rpartition(".")[2], ignore=skip)
    return str(pkg)


class _Actor:
    """One sandbox actor as the driver sees it: its handle, its node, its jobs in flight."""

    __slots__ = ("handle", "node", "node_id", "load", "jobs")

    def __init__(self, handle) -> None:
        self.handle, self.node, self.node_id, self.load, self.jobs = handle, "?", "?", 0, 0


def _reachable(address: str, timeout_s: float = 3.0) -> str:
    """Why a host:port cannot be reached over TCP ("" when it can)."""
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        return ""  # not host:port ("ray://...", "auto"): ray.init says what is wrong with it
    try:
        socket.create_connection((host, int(port)), timeout=timeout_s).close()
    except OSError as e:
        return f"{e.strerror or type(e).__name__} (is a Ray head running there? `ray start --head --port {port}`)"
    return ""


class RayExecutor(BaseExecutor):
    """Sandbox pools on a Ray cluster; chunks go to the live actor with the fewest jobs in flight.

    A chunk whose actor fails (its node lost, the actor killed) runs again on another live actor in the batch's
    remaining time, else it is cut (LOST_DETAIL: the cut reward, never a verdict of the program); the failed
    actor is never chosen again, and a watcher thread replaces it where the cluster has room. The watcher
    also checks, every health_s, that the cluster's GCS answers and every actor lives: while neither is so,
    readiness() is false (with the reason), and a lost GCS is reconnected to (the actors started anew) as soon as
    it answers again."""

    name = "ray"

    def __init__(self, sandbox_cfg: SandboxConfig, address: str | None, actors: int = 2,
                 ship_code: bool = True, actor_cpus: float = 1.0, result_cache: ResultCache | None = None,
                 chunk_size: int = 0, start_timeout_s: float = 120.0, health_s: float = 5.0) -> None:
        super().__init__(sandbox_cfg, result_cache, chunk_size)
        self.address, self.n_actors, self.ship_code = address, actors, ship_code
        self.actor_cpus, self.start_timeout_s, self.health_s = actor_cpus, start_timeout_s, health_s
        self.actors: list[_Actor] = []  # the live ones (replaced as a whole list: read on the event loop)
        self._lock = threading.Lock()
        self._wake, self._stop = threading.Event(), threading.Event()
        self._watcher: threading.Thread | None = None
        self._problem = ""  # why it cannot score now ("" = it can)
        self._gcs = ""  # the cluster's GCS address, once connected
        self._driver_node = ""
        self._owns_ray = False
        self._info: dict = {}
        self.counts = {"actor_failures": 0, "actors_replaced": 0, "chunks_rerun": 0, "chunks_lost": 0,
                       "reconnects": 0, "jobs": 0}

    @property
    def workers(self) -> int:
        return self.sandbox_cfg.workers * max(len(self.actors), 1)

    # ------------------------------------------------------------------ start, watch, stop

    def start(self) -> None:
        where = self.address or "(a new local Ray instance)"
        host = (self.address or "").rsplit(":", 1)[0]
        if host in ("127.0.0.1", "localhost"):
            # Ray rewrites a loopback address to this machine's outward IP, where a loopback-only cluster
            # has no raylet, and the driver waits forever; this switch keeps node addresses on loopback.
            os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
        # ray.init retries an address where nothing answers for minutes, then fails with an empty message.
        why = _reachable(self.address) if self.address else ""
        if why:
            raise RuntimeError(f"cannot reach the Ray cluster at --ray_address {self.address}: {why}")
        import ray

        if not ray.is_initialized():
            try:
                self._init_ray()
            except Exception as e:
                raise RuntimeError(f"cannot connect to the Ray cluster at {where}: {type(e).__name__}: {e}") from None
            self._owns_ray = True
        self._gcs = ray.get_runtime_context().gcs_address
        self._driver_node = ray.get_runtime_context().get_node_id()
        started, errors = self._start_actors(self.n_actors, self.start_timeout_s)
        if len(started) < self.n_actors:
            for a in started:
                self._kill(a)
            raise RuntimeError(f"Ray at {self._gcs} could not start {self.n_actors - len(started)} of {self.n_actors} "
                               f"sandbox actors within {self.start_timeout_s:.0f}s (not enough free CPUs for "
                               f"--ray_actors {self.n_actors} x {self.actor_cpus} CPU?)" +
                               (f": {errors[0]}" if errors else ""))
        self.actors = started
        self._watcher = threading.Thread(target=self._watch, name="coderl-ray-watcher", daemon=True)
        self._watcher.start()

    def _init_ray(self) -> None:
        import ray

        with tempfile.TemporaryDirectory(prefix="coderl-ray-") as tmp:
            runtime_env = {"py_modules": [_shippable_package(Path(tmp))]} if self.ship_code else None
            ray.init(address=self._gcs or self.address, runtime_env=runtime_env, log_to_driver=False,
                     logging_level=logging.WARNING)

    def _start_actors(self, n: int, timeout_s: float) -> tuple[list[_Actor], list[str]]:
        """n new actors, those of them that answered within timeout_s (the others killed), and why not."""
        import ray

        cls = ray.remote(_SandboxActor)
        new = [_Actor(cls.options(num_cpus=self.actor_cpus, max_concurrency=32, scheduling_strategy="SPREAD")
                      .remote(self.sandbox_cfg.model_dump())) for _ in range(n)]
        refs = [a.handle.info.remote() for a in new]
        done, _ = ray.wait(refs, num_returns=len(refs), timeout=timeout_s)
        started, errors = [], []
        for a, ref in zip(new, refs, strict=True):
            try:
                if ref not in done:
                    raise TimeoutError(f"not placed within {timeout_s:.0f}s")
                info = ray.get(ref, timeout=10)
            except Exception as e:
                errors.append(f"{type(e).__name__}: {e}")
                self._kill(a)
                continue
            a.node, a.node_id = info.get("node", "?"), info.get("node_id", "?")
            self._info = {k: v for k, v in info.items() if k not in ("node", "node_id")}
            started.append(a)
        return started, errors

    @staticmethod
    def _kill(a: _Actor) -> None:
        import ray

        with contextlib.suppress(Exception):
            ray.kill(a.handle, no_restart=True)

    def _failed(self, a: _Actor, e: BaseException) -> None:
        """An actor a call failed on: never chosen again; the watcher replaces it."""
        with self._lock:
            if a not in self.actors:
                return
            self.actors = [x for x in self.actors if x is not a]
            self.counts["actor_failures"] += 1
        log.warning("Ray sandbox actor on node %s failed (%s: %s); %d of %d actors left, replacing it", a.node_id[:12],
                    type(e).__name__, str(e).splitlines()[0][:200] if str(e) else "", len(self.actors), self.n_actors)
        self._kill(a)
        self._wake.set()

    def _watch(self) -> None:
        while not self._stop.is_set():
            self._wake.wait(self.health_s)
            self._wake.clear()
            if self._stop.is_set():
                return
            try:
                self._check()
            except Exception as e:  # the watcher must outlive any one check
                log.warning("Ray health check failed: %s: %s", type(e).__name__, e)

    def _check(self) -> None:
        """The cluster answers, every actor lives, the missing ones are replaced (or the reason said)."""
        import ray

        why = _reachable(self._gcs)
        if why:
            if not self._problem.startswith("lost the Ray cluster"):
                log.error("lost the Ray cluster at %s: %s; batches are cut until it answers again (reconnecting "
                          "every %.0fs)", self._gcs, why, self.health_s)
            with self._lock:
                lost, self.actors = self.actors, []
            self._problem = f"lost the Ray cluster at {self._gcs}: {why}"
            del lost  # their handles belong to the lost session; dropped with it
            return
        if self._problem.startswith("lost the Ray cluster"):  # it answers again: a new session, new actors
            log.info("the Ray cluster at %s answers again: reconnecting", self._gcs)
            with contextlib.suppress(Exception):
                ray.shutdown()
            self._init_ray()
            self.counts["reconnects"] += 1
            self._problem = "reconnected: starting sandbox actors"
        pings = {a.handle.info.remote(): a for a in self.actors}
        if pings:
            done, _ = ray.wait(list(pings), num_returns=len(pings), timeout=max(self.health_s, 5.0))
            for ref in done:  # one that does not answer in time is busy, not dead: its calls say so if it is
                try:
                    ray.get(ref, timeout=1)
                except Exception as e:
                    self._failed(pings[ref], e)
        missing = self.n_actors - len(self.actors)
        if missing > 0:
            started, errors = self._start_actors(missing, min(self.start_timeout_s, 60.0))
            with self._lock:
                self.actors = self.actors + started
                self.counts["actors_replaced"] += len(started)
            if started:
                log.info("started %d Ray sandbox actor(s) on node(s) %s: %d of %d live", len(started),
                         ", ".join(a.node_id[:12] for a in started), len(self.actors), self.n_actors)
            if len(started) < missing:
                log.warning("%d of %d Ray sandbox actors live: the cluster has no room for another (%s CPU "
                            "each%s); trying again in %.0fs", len(self.actors), self.n_actors, self.actor_cpus,
                            f"; {errors[0]}" if errors else "", self.health_s)
        self._problem = "" if self.actors else (f"no live Ray sandbox actor on the cluster at {self._gcs} (none "
                                                f"of {self.n_actors} could be started)")

    def close(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._watcher is not None:
            self._watcher.join(timeout=self.start_timeout_s + 30)
            self._watcher = None
        import ray

        with self._lock:
            actors, self.actors = self.actors, []
        if ray.is_initialized():
            for a in actors:
                with contextlib.suppress(Exception):  # the actor may already be gone; ray.kill frees it anyway
                    ray.get(a.handle.close.remote(), timeout=10)
                self._kill(a)
            if self._owns_ray and not self._problem.startswith("lost the Ray cluster"):  # no session to end
                ray.shutdown()

    # ------------------------------------------------------------------ what /health and /metrics read

    def readiness(self) -> tuple[bool, str]:
        if self._problem:
            return False, self._problem
        if not self.actors:
            return False, f"no live Ray sandbox actor (cluster {self._gcs})"
        return True, ""

    def info(self) -> dict:
        actors = list(self.actors)
        return {**self._info, "ray_address": self._gcs, "driver_node": self._driver_node,
                "actors": len(actors), "actors_wanted": self.n_actors,
                "nodes": sorted({a.node_id for a in actors}),
                "actor_nodes": [{"node_id": a.node_id, "host": a.node, "jobs": a.jobs, "in_flight": a.load}
                                for a in actors],
                "actor_jobs": [a.jobs for a in actors], "workers": self.workers, **self.counts}

    # ------------------------------------------------------------------ running a chunk

    async def _run_chunk(self, jobs: list[Job], deadline_s: float) -> list[JobResult]:
        t0 = time.monotonic()
        end, tried = t0 + deadline_s, set()
        self.counts["jobs"] += len(jobs)
        while True:
            live = [a for a in self.actors if a not in tried]
            left = end - time.monotonic()
            if not live or left <= 0:
                break
            a = min(live, key=lambda x: x.load)
            if tried:
                self.counts["chunks_rerun"] += 1
            tried.add(a)
            a.load += len(jobs)
            a.jobs += len(jobs)
            try:
                return await a.handle.run.remote(jobs, left)
            except Exception as e:  # the actor (or its node) is lost, or its pool broke: not the programs' doing
                self._failed(a, e)
            finally:
                a.load -= len(jobs)
        self.counts["chunks_lost"] += 1
        why = ("no live actor" if not self.actors else "the batch deadline passed") + \
            (f" after {len(tried)} actor(s) failed" if tried else "")
        return [_cut(job, time.monotonic() - t0, f"{LOST_DETAIL}: {why}") for job in jobs]


def make_executor(cfg) -> BaseExecutor:
    """The executor a CoderlConfig asks for (not started)."""
    s = cfg.server
    cache = ResultCache(s.cache_size, int(s.cache_max_mb * 2**20), s.cache_max_uses) if s.result_cache and s.cache_size else None
    if s.executor == "ray":
        return RayExecutor(cfg.sandbox, s.ray_address, s.ray_actors, s.ray_ship_code,
                           result_cache=cache, chunk_size=s.chunk_size, health_s=s.ray_health_s)
    return LocalExecutor(cfg.sandbox, result_cache=cache, chunk_size=s.chunk_size)

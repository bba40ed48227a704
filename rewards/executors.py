"""Where jobs run: one local Sandbox pool, or Ray actors each holding a warm Sandbox pool.

Both executors share the batch logic, on the driver: identical jobs (same label, same code byte for byte)
run once (the one in-batch dedup: the pool runs every job it is given; SandboxConfig.dedup turns it off),
each program's first verdict is kept across batches in a ResultCache (rewards/result_cache.py; GRPO
resamples the same prompt many times), jobs are cut into chunks, and each chunk carries the batch deadline
down to the pool, which cuts (and stops) what is unfinished when it passes: such results come back with
JobResult.infra == "deadline" (or "probe": the first run of a job whose rerun was cut), and the cache never
keeps them. A chunk that does not answer even then (a lost Ray actor) comes back as None.

With the cache on, a key runs once across concurrent batches too (single flight): a batch that meets a key
another batch is running awaits that run's verdict instead of running it again, so the verdict a batch gets,
and the one the cache keeps, never depend on which batch's run ends first (a program slow only when wrong
would otherwise have its fast passes cached first). A batch whose deadline passes while it waits gets the cut
it would have got running the job itself; one whose owner's run ends without a verdict of the program (cut by
the owner's deadline, an executor failure, a cancelled batch) runs the job itself in what time it has left.
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
import shutil
import tempfile
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import replace
from pathlib import Path

from coderl.rewards.config import SandboxConfig
from coderl.rewards.result_cache import KEY_BYTES, ResultCache, limits_digest, program_decided, result_key
from coderl.rewards.sandbox import Job, JobResult, Sandbox, TestOutcome, count_tests
from coderl.rewards.sandbox.inside.framing import CUT_DETAIL
from coderl.rewards.sandbox.results import INFRA_CUT, INFRA_PROBE

log = logging.getLogger("coderl.reward_server")
_LATE_S = 10.0  # how long past the deadline a chunk may take to bring back its cut results (a Ray round trip)

def _failed(detail: str) -> JobResult:
    return JobResult(outcomes=[], expected=0, detail=detail, infra="executor")


def _chunk_results(task: asyncio.Future, n: int) -> list[JobResult | None]:
    """The results of an ended chunk of n jobs: a failed chunk's jobs failed (infra), a cancelled one's None."""
    if task.cancelled():
        return [None] * n
    if task.exception() is not None:
        return [_failed(f"executor error: {task.exception()!r}") for _ in range(n)]
    res = task.result()
    return res if len(res) == n else [_failed("executor returned a wrong number of results")] * n


def _cut(job: Job, waited_s: float) -> JobResult:
    """What the pool gives a job the batch deadline cut before any run of it ended."""
    n = count_tests(job.label)
    return JobResult([TestOutcome("timeout", 0.0, CUT_DETAIL) for _ in range(n)], n, waited_s,
                     detail=CUT_DETAIL, infra=INFRA_CUT)


class BaseExecutor:
    """Dedup, cache, chunking and the batch deadline; subclasses provide _run_chunk."""

    name = "base"

    def __init__(self, sandbox_cfg: SandboxConfig, result_cache: ResultCache | None = None,
                 chunk_size: int = 0) -> None:
        self.sandbox_cfg = sandbox_cfg
        self.result_cache = result_cache
        self.chunk_size = chunk_size
        self._abandoned: set[asyncio.Future] = set()
        # cache key -> the verdict of the run of it a batch now in flight owns (single flight across batches)
        self._inflight: dict[bytes, asyncio.Future] = {}
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

    async def _run_chunk(self, jobs: list[Job], deadline_s: float) -> list[JobResult]:  # pragma: no cover
        raise NotImplementedError

    def _chunk_len(self, n: int) -> int:
        if self.chunk_size:
            return self.chunk_size
        # ~4 chunks per worker: small enough that a deadline loses little, big enough to keep workers busy; at
        # least 8 jobs, so that many workers do not make a batch many calls (each has a fixed cost).
        return max(min(n, 8), math.ceil(n / (4 * self.workers)))

    def _lookup(self, part: Sequence[Job], keys: list[bytes], todo: OrderedDict[bytes, list[int]], base: int,
                owned: dict[bytes, asyncio.Future], borrowed: dict[bytes, asyncio.Future],
                ) -> tuple[list[JobResult | None], list[bytes]]:
        """For jobs base.. of a batch: the results the cache already has, and the keys of those still to run
        (added to todo, which groups the batch's job indices by key: a duplicate shares the first one's run).
        A key another batch is running goes to borrowed (its run's future), one this batch runs to owned. On
        the event loop, in one step: between the cache's answer and the reservation no run can end."""
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
                if cache is None or not dedup:
                    new.append(k)
                elif (run := self._inflight.get(k)) is not None and run.get_loop() is loop:
                    borrowed[k] = run
                else:
                    owned[k] = self._inflight[k] = loop.create_future()
                    new.append(k)
        return results, new

    def _settle(self, k: bytes, res: JobResult | None, owned: dict[bytes, asyncio.Future]) -> None:
        """Record the run of a key this batch owns, once, as soon as its chunk ends: the cache first (a miss
        too: the key's first run, so it is never cached), then the batches awaiting it (in one step on the
        event loop, so that no batch finds neither)."""
        run = owned.pop(k, None)
        if run is None:
            return
        self.result_cache.put(k[:KEY_BYTES], res)
        if self._inflight.get(k) is run:
            del self._inflight[k]
        if not run.done():
            run.set_result(res)

    async def _borrow(self, k: bytes, run: asyncio.Future, todo: OrderedDict[bytes, list[int]], jobs: list[Job],
                      deadline: float, deadline_s: float, owned: dict[bytes, asyncio.Future],
                      reran: set[bytes]) -> JobResult | None:
        """The verdict of another batch's run of k, awaited until this batch's deadline (then cut, as the pool
        cuts a job that has not ended); if that run ends with no verdict of the program, this batch runs k."""
        t0 = time.monotonic()
        try:
            res = await asyncio.wait_for(asyncio.shield(run), timeout=max(deadline - t0, 0.0))
        except TimeoutError:
            return _cut(jobs[todo[k][0]], time.monotonic() - t0)
        if program_decided(res):
            return replace(res, cached=True)
        if time.monotonic() >= deadline:
            return _cut(jobs[todo[k][0]], time.monotonic() - t0)
        owned[k] = self._inflight[k] = asyncio.get_running_loop().create_future()
        reran.add(k)
        out = await self._wait([self._start([k], todo, jobs, deadline, owned=owned)], deadline + _LATE_S, deadline_s, 1)
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
        try:
            async for part in parts:
                base = len(jobs)
                jobs.extend(part)
                # Off the event loop: hashing a big batch's code takes tens of milliseconds.
                keys = await asyncio.to_thread(lambda p=part: [result_key(job, limits) for job in p])
                res, new = self._lookup(part, keys, todo, base, owned, borrowed)
                results.extend(res)
                waiting.extend(new)
                if progress is not None:
                    progress(len(res) - res.count(None))
                while len(waiting) >= size:
                    chunks.append(self._start(waiting[:size], todo, jobs, t0 + deadline_s, progress, owned))
                    del waiting[:size]
            if waiting:
                chunks.append(self._start(waiting, todo, jobs, t0 + deadline_s, progress, owned))
            lent = list(borrowed)
            outs, *got = await asyncio.gather(
                self._wait(chunks, t0 + deadline_s + _LATE_S, deadline_s, len(todo) - len(lent)),
                *(self._borrow(k, borrowed[k], todo, jobs, t0 + deadline_s, deadline_s, owned, reran) for k in lent))
        finally:  # chunks abandoned, the batch cancelled or failed: those awaiting its runs run them themselves
            for k in list(owned):
                self._settle(k, None, owned)
        if self.result_cache is not None and not self.sandbox_cfg.dedup:  # runs of their own, none owned
            for k, res in outs.items():
                self.result_cache.put(k[:KEY_BYTES], res)
        outs.update(zip(lent, got, strict=True))
        if progress is not None and lent:
            progress(sum(len(todo[k]) for k in lent))
        missed = cut = probed = infra = shared = 0
        for k, idx in todo.items():
            res = outs[k]
            if res is None:
                missed += len(idx)
                continue
            if res.infra:  # the sandbox decided it, not the program
                if res.infra in (INFRA_CUT, INFRA_PROBE):  # cut; "probe": scored by the run that exceeded its probe
                    cut += len(idx)
                    probed += len(idx) if res.infra == INFRA_PROBE else 0
                else:
                    infra += len(idx)
            for n, i in enumerate(idx):
                results[i] = res if n == 0 else replace(res, cached=True)
            shared += len(idx) - 1
        hits = len(jobs) - len(todo) - shared
        joined = sum(1 for k in lent if outs[k] is not None and outs[k].cached)  # the others: cut waiting, or run here
        stats = {"jobs": len(jobs), "executed": len(todo) - len(lent) + len(reran), "cache_hits": hits + shared + joined,
                 "result_cache_hits": hits, "inflight_joined": joined,
                 "deadline_missed": missed, "deadline_cut": cut, "deadline_probe": probed,
                 "infra_failed": infra,
                 "seconds": time.monotonic() - t0}
        if cut or missed:
            log.warning("batch deadline (%.1fs) passed: %d of %d jobs cut%s; they get the cut reward, not a verdict%s",
                        deadline_s, cut + missed, len(jobs), f" ({missed} never answered)" if missed else "",
                        f", but for {probed} that had exceeded their probe: their first run's" if probed else "")
        if before is not None:
            after = self.result_cache.stats()
            stats.update(result_cache_misses=after.misses - before.misses,
                         result_cache_evictions=after.evictions - before.evictions,
                         result_cache_entries=after.entries, result_cache_mb=round(after.bytes / 2**20, 2))
        self.last_stats = stats
        return results

    def _start(self, keys: list[bytes], todo: OrderedDict[bytes, list[int]], jobs: list[Job], deadline: float,
               progress: Callable[[int], None] | None = None,
               owned: dict[bytes, asyncio.Future] | None = None) -> tuple[list[bytes], asyncio.Future]:
        """A chunk of the batch's unique jobs, running until the batch deadline (a monotonic time); the keys of
        it this batch owns are settled as soon as it ends."""
        left = max(deadline - time.monotonic(), 0.0)
        task = asyncio.ensure_future(self._run_chunk([jobs[todo[k][0]] for k in keys], left))
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
        done, pending = await asyncio.wait(tasks, timeout=max(deadline - time.monotonic(), 0.0)) if tasks else ((), ())
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
                    log.error("executor failed on %d jobs (scored as failed): %r", len(keys), task.exception())
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

    async def _run_chunk(self, jobs: list[Job], deadline_s: float) -> list[JobResult]:
        return await self.sandbox.arun(jobs, deadline_s=deadline_s)


class _SandboxActor:
    """Ray actor body: a warm Sandbox pool on one node (threaded: several chunks share the pool)."""

    def __init__(self, sandbox_cfg: dict) -> None:
        self.sandbox = Sandbox(SandboxConfig(**sandbox_cfg))
        self.sandbox.start()

    def info(self) -> dict:
        import socket

        return {**self.sandbox.info(), "node": socket.gethostname()}

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


class RayExecutor(BaseExecutor):
    """Sandbox pools on a Ray cluster; chunks go to the actor with the fewest jobs in flight."""

    name = "ray"

    def __init__(self, sandbox_cfg: SandboxConfig, address: str | None, actors: int = 2,
                 ship_code: bool = True, actor_cpus: float = 1.0, result_cache: ResultCache | None = None,
                 chunk_size: int = 0, start_timeout_s: float = 120.0) -> None:
        super().__init__(sandbox_cfg, result_cache, chunk_size)
        self.address, self.n_actors, self.ship_code = address, actors, ship_code
        self.actor_cpus, self.start_timeout_s = actor_cpus, start_timeout_s
        self.actors: list = []
        self._load: list[int] = []
        self._dispatched: list[int] = []
        self._info: dict = {}

    @property
    def workers(self) -> int:
        return self.sandbox_cfg.workers * self.n_actors

    def start(self) -> None:
        host = (self.address or "").rsplit(":", 1)[0]
        if host in ("127.0.0.1", "localhost"):
            # Ray rewrites a loopback address to this machine's outward IP, where a loopback-only cluster
            # has no raylet, and the driver waits forever; this switch keeps node addresses on loopback.
            os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
        import ray

        if not ray.is_initialized():
            with tempfile.TemporaryDirectory(prefix="coderl-ray-") as tmp:
                runtime_env = {"py_modules": [_shippable_package(Path(tmp))]} if self.ship_code else None
                ray.init(address=self.address, runtime_env=runtime_env, log_to_driver=False,
                         logging_level=logging.WARNING)
        actor_cls = ray.remote(_SandboxActor)
        self.actors = [actor_cls.options(num_cpus=self.actor_cpus, max_concurrency=8,
                                         scheduling_strategy="SPREAD").remote(self.sandbox_cfg.model_dump())
                       for _ in range(self.n_actors)]
        self._load = [0] * len(self.actors)
        self._dispatched = [0] * len(self.actors)
        refs = [a.info.remote() for a in self.actors]
        ready, not_ready = ray.wait(refs, num_returns=len(refs), timeout=self.start_timeout_s)
        if not_ready:
            raise RuntimeError(f"Ray could not start {len(not_ready)} of {len(refs)} sandbox actors within "
                               f"{self.start_timeout_s:.0f}s (not enough free CPUs for --ray_actors "
                               f"{self.n_actors} x {self.actor_cpus} CPU?)")
        infos = ray.get(ready)
        self._info = {**infos[0], "actors": len(infos), "nodes": sorted({i.get("node", "?") for i in infos}),
                      "workers": self.workers}

    def close(self) -> None:
        import ray

        for a in self.actors:
            try:
                ray.get(a.close.remote(), timeout=10)
            except Exception:  # the actor may already be gone; ray.kill below still frees it
                pass
            ray.kill(a)
        self.actors = []

    def info(self) -> dict:
        return {**self._info, "actor_jobs": list(self._dispatched)}

    async def _run_chunk(self, jobs: list[Job], deadline_s: float) -> list[JobResult]:
        k = min(range(len(self.actors)), key=self._load.__getitem__)
        self._load[k] += len(jobs)
        self._dispatched[k] += len(jobs)
        try:
            return await self.actors[k].run.remote(jobs, deadline_s)
        finally:
            self._load[k] -= len(jobs)


def make_executor(cfg) -> BaseExecutor:
    """The executor a CoderlConfig asks for (not started)."""
    s = cfg.server
    cache = ResultCache(s.cache_size, int(s.cache_max_mb * 2**20), s.cache_max_uses) if s.result_cache and s.cache_size else None
    if s.executor == "ray":
        return RayExecutor(cfg.sandbox, s.ray_address, s.ray_actors, s.ray_ship_code,
                           result_cache=cache, chunk_size=s.chunk_size)
    return LocalExecutor(cfg.sandbox, result_cache=cache, chunk_size=s.chunk_size)

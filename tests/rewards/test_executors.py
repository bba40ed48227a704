"""rewards/executors.py: the batch deadline carried down to the pools (LocalExecutor, RayExecutor), turns
among concurrent batches (FairShare), and RayExecutor through the real server: Ray actors, each holding a warm
Sandbox pool, on a local Ray instance bound to loopback (started here, shut down in teardown), and on a
3-node cluster of Ray's own cluster_utils, where a node and then the head are removed mid-run."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from coderl.rewards.config import SandboxConfig
from coderl.rewards.executors import LocalExecutor, RayExecutor
from coderl.rewards.labels import parse_label
from coderl.rewards.result_cache import ResultCache
from coderl.rewards.sandbox import Job
from coderl.rewards.sandbox.pool import run_bound_s
from tests.support import (
    PARTIAL_RATE,
    PROBLEMS,
    SYSTEM_THINK,
    ServerProc,
    chatml,
    rows,
    run_server_expecting_exit,
    think,
    write_jsonl,
)

pytestmark = pytest.mark.timeout(180)


@pytest.fixture(scope="module")
def ray_address():
    import ray  # a test dependency (pyproject extra "ray"): never skipped
    # "local": a new instance, whatever address a cluster (this module's cluster_utils one) left in /tmp/ray
    ray.init(address="local", num_cpus=2, include_dashboard=False, _node_ip_address="127.0.0.1", log_to_driver=False)
    try:
        address = ray.get_runtime_context().gcs_address
        assert address.startswith("127.0.0.1:"), address
        yield address
    finally:
        ray.shutdown()


def test_ray_executor_scores_batches_on_actors(tmp_path, ray_address):
    data = write_jsonl(tmp_path / "train.jsonl", rows())
    server = ServerProc(["--data_path", str(data), "--port", "0", "--executor", "ray", "--ray_address", ray_address,
                         "--ray_actors", "2", "--workers", "1", "--test_timeout_s", "3"])
    try:
        queries, expected = [], []
        for f, (user, _, good, partial) in PROBLEMS.items():
            for i in range(4):  # distinct code per sample: nothing is deduplicated away
                queries.append(chatml(SYSTEM_THINK, user, think(f"{good}\n# sample {i}")))
                queries.append(chatml(SYSTEM_THINK, user, think(f"{partial}\n# sample {i}")))
                expected += [1.0, PARTIAL_RATE[f]]
        out = httpx.post(f"{server.url}/get_reward", json={"query": queries}, timeout=120).json()
        assert out["scores"] == pytest.approx(expected)
        health = httpx.get(f"{server.url}/health", timeout=10).json()
        assert health["executor"] == "ray" and health["workers"] == 2
        iso = health["isolation"]
        assert iso["actors"] == 2 and iso["mode"] in ("bwrap", "rlimits")
        assert sum(iso["actor_jobs"]) == len(queries) and min(iso["actor_jobs"]) > 0  # both actors got work
        # The result cache lives on the driver: a repeated batch is answered without reaching the actors.
        again = httpx.post(f"{server.url}/get_reward", json={"query": queries}, timeout=120).json()
        assert again["scores"] == out["scores"]
        health = httpx.get(f"{server.url}/health", timeout=10).json()
        assert sum(health["isolation"]["actor_jobs"]) == len(queries)
        metrics = httpx.get(f"{server.url}/metrics", timeout=10).text
        assert f"coderl_result_cache_hits_total {float(len(queries))}" in metrics
    finally:
        assert server.stop() in (0, -15, 15), server.output()  # Ray's SIGTERM handler exits with 15


LABEL = parse_label({"format": "assert", "tests": ["assert f(1) == 2", "assert f(2) == 3"]})
GOOD, HANG = "def f(x):\n    return x + 1\n", "def f(x):\n    while True:\n        pass\n"
CFG = SandboxConfig(workers=2, test_timeout_s=5.0, probe_s=0.2)  # the right job runs first in every pool
# A run starts only with its bound left before the deadline (pool.run_bound_s: the 8 s job limit + margin). A
# deadline 0.9 s past that bound lets the first runs that start at once run, and no rerun: a rerun is taken
# after its first run's 1 s probe ran out.
CUT_CFG = SandboxConfig(workers=2, test_timeout_s=4.0, job_timeout_s=8.0, probe_s=1.0)
CUT_DEADLINE_S = run_bound_s(LABEL, CUT_CFG) + 0.9


def _cut_batch(executor, n_hangs: int = 4, deadline_s: float = CUT_DEADLINE_S):
    jobs = [Job(GOOD, LABEL)] + [Job(HANG + f"# {i}\n", LABEL) for i in range(n_hangs)]
    t0 = time.monotonic()
    res = asyncio.run(executor.run(jobs, deadline_s))
    return res, time.monotonic() - t0


def test_local_executor_cuts_at_the_deadline_and_never_caches_a_cut():
    ex = LocalExecutor(CUT_CFG, result_cache=ResultCache(100, 1 << 26), chunk_size=1)
    ex.start()
    try:
        res, took = _cut_batch(ex)
        # settled as soon as no run of theirs could start in time, not at the deadline
        assert took < 4.0, f"{took:.1f} s: the executor waited for work that could not start in time"
        assert res[0].pass_rate == 1.0 and not res[0].infra
        # the first run exceeded the probe, its rerun could not start: that run's verdict ("probe"); or its
        # first run could not start in time ("deadline": the neutral reward, its place in the queue decided it)
        assert {r.infra for r in res[1:]} <= {"probe", "deadline"} and all(r.status == "timeout" for r in res[1:])
        assert "probe" in {r.infra for r in res[1:]}
        st = ex.last_stats
        assert st["deadline_cut"] == 4 and st["deadline_missed"] == 0
        again, _ = _cut_batch(ex)  # the same jobs: only the right program's verdict was kept
        assert ex.last_stats["result_cache_hits"] == 1 and ex.last_stats["executed"] == 4
        assert again[0].pass_rate == 1.0 and {r.infra for r in again[1:]} <= {"probe", "deadline"}
        t0 = time.monotonic()  # the cut jobs were stopped: the workers take the next batch at once
        after = asyncio.run(ex.run([Job(GOOD + f"# after {i}\n", LABEL) for i in range(4)], 30))
        assert [r.pass_rate for r in after] == [1.0] * 4 and time.monotonic() - t0 < 2.0
        assert ex.info()["stats"]["worker_restarts"] == 0
    finally:
        ex.close()


def test_ray_executor_passes_the_deadline_to_its_actors(ray_address):
    ex = RayExecutor(CUT_CFG.model_copy(update={"workers": 1}), ray_address, actors=2, chunk_size=1)
    ex.start()
    try:
        res, took = _cut_batch(ex, n_hangs=3)
        assert took < 6, f"{took:.1f} s"
        assert res[0].pass_rate == 1.0
        assert {r.infra for r in res[1:]} <= {"probe", "deadline"}
        assert ex.last_stats["deadline_cut"] == 3
        after = asyncio.run(ex.run([Job(GOOD + f"# after {i}\n", LABEL) for i in range(2)], 30))
        assert [r.pass_rate for r in after] == [1.0, 1.0]
    finally:
        ex.close()


def test_identical_jobs_run_once_per_batch_unless_dedup_is_off():
    """The one in-batch dedup (the pool runs every job it is given): the same label and the same code byte for
    byte run once, and a progress callback hears of every job."""
    wrong = "def f(x):\n    return 2\n"
    jobs = [Job(GOOD, LABEL), Job(GOOD + "\n", LABEL), Job(GOOD, LABEL), Job(wrong, LABEL), Job(GOOD, LABEL)]
    for dedup, executed in ((True, 3), (False, 5)):
        with LocalExecutor(CFG.model_copy(update={"dedup": dedup})) as ex:
            seen = []
            res = asyncio.run(ex.run(jobs, 60, seen.append))
            assert ex.last_stats["executed"] == executed and ex.info()["stats"]["jobs"] == executed
            assert sum(seen) == len(jobs)
        assert [r.pass_rate for r in res] == [1.0, 1.0, 1.0, 0.5, 1.0]
        assert [r.cached for r in res] == ([False, False, True, False, True] if dedup else [False] * 5)


def test_a_label_is_serialised_once_from_parse_to_the_judge(monkeypatch):
    """The label's canonical JSON and digest are computed once per Label; the result cache, the dedup, the plan
    cache and the workers' spec caches all key on the digest (no re-dump per batch, chunk or job)."""
    from coderl.rewards.labels import Label
    from coderl.rewards.sandbox.plan import plan

    dumps = []
    to_dict = Label.to_dict
    monkeypatch.setattr(Label, "to_dict", lambda self: dumps.append(1) or to_dict(self))
    label = parse_label({"format": "assert", "tests": ["assert f(1) == 2", "assert f(2) == 3"], "source": "once"})
    with LocalExecutor(CFG, result_cache=ResultCache(100, 1 << 26), chunk_size=2) as ex:
        for _ in range(2):
            res = asyncio.run(ex.run([Job(GOOD + f"# {i}\n", label) for i in range(6)], 60))
            assert [r.pass_rate for r in res] == [1.0] * 6
    assert len(dumps) == 1 and plan(label)["digest"] == label.digest and len(label.digest) == 64


# ------------------------------------------------- single flight: one run of a key across concurrent batches


@pytest.fixture(scope="module")
def cached():
    with LocalExecutor(CFG, result_cache=ResultCache(100, 1 << 26)) as ex:
        yield ex


def _slow(s: float, tag: str) -> str:
    return f"import time\ndef f(x):\n    time.sleep({s})\n    return x + 1\n# {tag}\n"


async def _owner_then_joiner(ex, owner_jobs, owner_deadline, joiner_jobs, joiner_deadline, cancel_owner=False):
    """Two batches: the owner starts first (its runs reserved), the joiner meets the same keys in flight."""
    owner = asyncio.ensure_future(ex.run(owner_jobs, owner_deadline))
    while not ex._inflight and not owner.done():  # the owner has reserved its keys (or already ended)
        await asyncio.sleep(0.01)
    if cancel_owner:
        owner.cancel()
    t0 = time.monotonic()
    joined = await ex.run(joiner_jobs, joiner_deadline)
    took, stats = time.monotonic() - t0, ex.last_stats
    try:
        first = await owner
    except asyncio.CancelledError:
        first = None
    return first, joined, took, stats


# Right when its coin says so, else wrong and slow: a cache that keeps whichever concurrent run ends first
# keeps its passes (red team r27).
_SLOW_WHEN_WRONG = ("import os, time\ndef f(x):\n    if os.urandom(1)[0] < 128:\n        time.sleep(0.6)\n"
                    "        return x\n    return x + 1\n")


def test_concurrent_batches_run_a_key_once_and_get_its_one_verdict(cached):
    codes = [f"{_SLOW_WHEN_WRONG}# variant {i}\n" for i in range(6)]

    async def both():
        a = asyncio.ensure_future(cached.run([Job(c, LABEL) for c in codes], 60))
        await asyncio.sleep(0)
        b = await cached.run([Job(c, LABEL) for c in codes], 60)
        b_stats = cached.last_stats
        return await a, b, b_stats

    a, b, b_stats = asyncio.run(both())
    assert [(r.status, r.passed) for r in a] == [(r.status, r.passed) for r in b]
    assert sum(not r.cached for r in a + b) == len(codes)  # each variant ran once, in one of the batches
    assert b_stats["inflight_joined"] == len(codes) - b_stats["executed"]
    again = asyncio.run(cached.run([Job(c, LABEL) for c in codes], 60))
    assert [(r.status, r.passed) for r in again] == [(r.status, r.passed) for r in a] and all(r.cached for r in again)


BOUND_S = run_bound_s(LABEL, CFG)  # no run starts with less than this left before its batch's deadline


@pytest.mark.parametrize("program", ["right", "slow_wrong"])
def test_a_joiner_whose_deadline_comes_first_runs_the_key_apart(cached, program):
    # The owner's run (deadline later than the joiner's) could still be going at the joiner's deadline: awaited, it
    # gave the joiner the neutral cut, which a wrong program bought by being slow. The joiner runs the key itself:
    # its own run's verdict, never cached (the key's first run is the owner's).
    code = _slow(0.4, f"joiner apart {program}")
    if program == "slow_wrong":
        code = code.replace("return x + 1", "return x")
    first, joined, took, stats = asyncio.run(_owner_then_joiner(
        cached, [Job(code, LABEL)], BOUND_S + 30, [Job(code, LABEL)], BOUND_S + 5))
    want = 1.0 if program == "right" else 0.0
    assert joined[0].pass_rate == want and not joined[0].infra and not joined[0].cached, joined[0]
    assert stats["executed"] == 1 and stats["inflight_joined"] == 0 and stats["deadline_cut"] == 0
    assert first[0].pass_rate == want and not first[0].infra
    again = asyncio.run(cached.run([Job(code, LABEL)], 30))[0]
    assert again.cached and again.pass_rate == want  # the owner's run is the one kept
    assert not cached._inflight


def test_a_joiner_whose_own_run_cannot_start_is_cut_as_it_would_be(cached):
    # A joiner whose deadline leaves no time for a run of its own gets what its own run would: not started, the
    # neutral cut, whatever the program does (its speed cannot change that no run of it starts).
    code = _slow(2.0, "joiner cut")
    first, joined, took, stats = asyncio.run(_owner_then_joiner(cached, [Job(code, LABEL)], BOUND_S + 10,
                                                                [Job(code, LABEL)], 0.5))
    assert took < 1.5, f"{took:.1f} s: the joiner waited past its deadline"
    assert joined[0].infra == "deadline" and joined[0].status == "timeout" and stats["deadline_cut"] == 1
    assert first[0].pass_rate == 1.0 and not first[0].infra  # the owner's run went on, its verdict cached
    assert asyncio.run(cached.run([Job(code, LABEL)], 30))[0].cached


@pytest.mark.parametrize("how", ["owner_cut", "owner_cancelled"])
def test_a_joiner_runs_the_key_itself_when_the_owners_run_gives_no_verdict(cached, how):
    # owner_cut: its first run exceeds the 0.2 s probe and its rerun cannot start before its deadline ("probe", or
    # "deadline" if even the first could not); the joiner, with the time for a run of its own, runs it
    code = _slow(0.8, how)
    first, joined, _, stats = asyncio.run(_owner_then_joiner(
        cached, [Job(code, LABEL)], BOUND_S + 0.15 if how == "owner_cut" else 30, [Job(code, LABEL)], BOUND_S + 30,
        cancel_owner=how == "owner_cancelled"))
    assert joined[0].pass_rate == 1.0 and not joined[0].infra and not joined[0].cached
    assert stats["executed"] == 1 and stats["inflight_joined"] == 0
    if first is not None:
        assert first[0].infra in ("deadline", "probe")
    assert not cached._inflight  # nothing left reserved


def test_a_joiner_with_no_time_for_its_own_run_takes_the_owners_scored_cut():
    # The owner's run exceeded its 1 s probe and its rerun could not start before the owner's deadline: scored by
    # that first run ("probe"). A joiner left without the time for a run of its own takes that result, what its own
    # run would have had time for at most, never the neutral cut of a job that did not start.
    hang = HANG + "# scored cut\n"
    with LocalExecutor(CUT_CFG, result_cache=ResultCache(100, 1 << 26)) as ex:
        first, joined, _, stats = asyncio.run(_owner_then_joiner(
            ex, [Job(hang, LABEL)], CUT_DEADLINE_S, [Job(hang, LABEL)], CUT_DEADLINE_S + 0.05))
    assert first[0].infra == "probe", (first[0].infra, first[0].detail)
    assert joined[0].infra == "probe" and joined[0].status == "timeout" and stats["inflight_joined"] == 1
    assert stats["deadline_probe"] == 1 and stats["executed"] == 0


def test_a_small_batch_is_not_held_behind_a_large_one():
    """FairShare: a batch arriving behind a large one takes turns with it, chunk by chunk."""
    slow = "import time\ndef f(x):\n    time.sleep(0.15)\n    return x + 1\n"
    ex = LocalExecutor(CFG.model_copy(update={"probe_s": 0.0}))
    ex.start()
    try:
        async def both():
            t0 = time.monotonic()
            big = asyncio.ensure_future(ex.run([Job(slow + f"# big {i}\n", LABEL) for i in range(32)], 60))
            await asyncio.sleep(0.3)
            t1 = time.monotonic()
            small = await ex.run([Job(slow + f"# small {i}\n", LABEL) for i in range(2)], 60)
            small_s = time.monotonic() - t1
            res = await big
            return small, small_s, res, time.monotonic() - t0, big.done()

        small, small_s, big, big_s, _ = asyncio.run(both())
        assert [r.pass_rate for r in small + big] == [1.0] * 34
        # 32 jobs of ~0.3 s on 2 workers: ~5 s; first come, first served, the small batch waited all of it
        assert small_s < big_s / 3, (small_s, big_s)
    finally:
        ex.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_ray_start_up_errors_name_the_address_and_the_cause_at_once(tmp_path):
    address = f"127.0.0.1:{_free_port()}"
    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match=f"cannot reach the Ray cluster at --ray_address {address}: .*refused"):
        RayExecutor(CFG, address).start()
    assert time.monotonic() - t0 < 10
    data = write_jsonl(tmp_path / "train.jsonl", rows())
    p = run_server_expecting_exit(["--data_path", str(data), "--port", "0", "--executor", "ray", "--ray_address", address])
    assert p.returncode == 1 and f"cannot reach the Ray cluster at --ray_address {address}" in p.stderr, p.stderr
    assert "refused" in p.stderr and "Traceback" not in p.stderr


def _node_sockets(address: str) -> dict[str, str]:
    """Ray node id -> raylet socket of each node of the cluster at address (asked by a driver of its own: this
    process's Ray is the module fixture's)."""
    script = (f"import json, logging, ray; ray.init(address={address!r}, logging_level=logging.WARNING, "
              "log_to_driver=False); print(json.dumps({n['NodeID']: n['RayletSocketName'] for n in ray.nodes() "
              "if n['Alive']}))")
    env = {**os.environ, "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}  # keeps a loopback address (RayExecutor.start)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True, env=env)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _right(tag: str, n: int) -> list[str]:
    code = "import time\ndef mul(a, b):\n    time.sleep(0.05)\n    return a * b\n"
    return [chatml(SYSTEM_THINK, PROBLEMS["assert"][0], think(code + f"# {tag} {i}")) for i in range(n)]


def _lost(out: dict) -> int:
    """Right programs that got neither their reward nor the cut report."""
    return sum(s != 1.0 and c != 1.0 for s, c in zip(out["scores"], out["extra_logs"]["reward/cut"], strict=True))


def _until(check, timeout_s: float, what: str):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        got = check()
        if got:
            return got
        time.sleep(0.5)
    raise AssertionError(f"not within {timeout_s:.0f}s: {what}")


@pytest.mark.timeout(600)
def test_a_lost_ray_node_and_a_lost_head_cost_no_right_program(tmp_path):
    """A 3-node cluster (Ray's cluster_utils), 2 actors: the node of one is removed mid-batch. Its chunks rerun
    on the live actor, the next batch never picks the dead one, it is replaced on the free node, and /health and
    /metrics say so. Then the head is removed: readiness turns false with the reason, and a batch is reported
    cut, never scored 0."""
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, connect=False,
                      head_node_args={"num_cpus": 0, "include_dashboard": False, "node_ip_address": "127.0.0.1"})
    server = None
    try:
        nodes = [cluster.add_node(num_cpus=1, node_ip_address="127.0.0.1") for _ in range(3)]
        data = write_jsonl(tmp_path / "train.jsonl", rows())
        server = ServerProc(["--data_path", str(data), "--port", "0", "--executor", "ray", "--ray_address",
                             cluster.address, "--ray_actors", "2", "--workers", "1", "--ray_health_s", "1",
                             "--probe_s", "0", "--test_timeout_s", "10", "--chunk_size", "2"], timeout_s=300)

        def health() -> dict:
            return httpx.get(f"{server.url}/health", timeout=30).json()

        h = health()
        iso = h["isolation"]
        assert h["ready"] and iso["actors"] == 2 and len(iso["nodes"]) == 2, h
        sockets = _node_sockets(cluster.address)
        victim_id = next(n for n in iso["nodes"] if n != iso["driver_node"])
        victim = next(n for n in nodes if n.raylet_socket_name == sockets[victim_id])

        batch = _right("first", 24)
        with ThreadPoolExecutor(1) as pool:
            first = pool.submit(httpx.post, f"{server.url}/get_reward", json={"query": batch}, timeout=300)
            _until(lambda: health()["isolation"]["actor_nodes"][0]["jobs"] > 0, 60, "the batch reached the actors")
            time.sleep(1.0)
            cluster.remove_node(victim, allow_graceful=False)
            out = first.result().json()
        assert _lost(out) == 0 and sum(out["scores"]) >= 1, out
        out = httpx.post(f"{server.url}/get_reward", json={"query": _right("next", 16)}, timeout=300).json()
        assert _lost(out) == 0, out

        h = _until(lambda: (h := health())["isolation"]["actors"] == 2 and h, 120, "the lost actor replaced")
        iso = h["isolation"]
        assert h["ready"] and victim_id not in iso["nodes"] and len(iso["nodes"]) == 2, h
        assert iso["actor_failures"] >= 1 and iso["actors_replaced"] >= 1, iso
        out = httpx.post(f"{server.url}/get_reward", json={"query": _right("after", 8)}, timeout=300).json()
        assert out["scores"] == [1.0] * 8, out
        metrics = httpx.get(f"{server.url}/metrics", timeout=30).text
        assert "coderl_ray_actors_alive 2.0" in metrics and "coderl_executor_ready 1.0" in metrics
        assert f'coderl_ray_node_actors{{node="{victim_id}"}}' not in metrics

        cluster.remove_node(cluster.head_node, allow_graceful=False)
        h = _until(lambda: not (h := health())["ready"] and h, 60, "/health says not ready without the head")
        assert "Ray" in h["not_ready"], h
        out = httpx.post(f"{server.url}/get_reward", json={"query": _right("headless", 4)}, timeout=300).json()
        assert _lost(out) == 0 and out["extra_logs"]["reward/cut"] == [1.0] * 4, out
        assert "coderl_executor_ready 0.0" in httpx.get(f"{server.url}/metrics", timeout=30).text
        assert "Traceback" not in server.output(), server.output()
    finally:
        if server is not None:
            server.stop()
        cluster.shutdown()

"""rewards/executors.py RayExecutor through the real server: Ray actors, each holding a warm Sandbox pool,
on a local Ray instance bound to loopback (started here, shut down in teardown)."""

from __future__ import annotations

import httpx
import pytest

from tests.support import PARTIAL_RATE, PROBLEMS, SYSTEM_THINK, ServerProc, chatml, rows, think, write_jsonl

pytestmark = pytest.mark.timeout(180)


@pytest.fixture(scope="module")
def ray_address():
    import ray  # a test dependency (pyproject extra "ray"): never skipped
    ray.init(num_cpus=2, include_dashboard=False, _node_ip_address="127.0.0.1", log_to_driver=False)
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

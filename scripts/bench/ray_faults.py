#!/usr/bin/env python
"""Ray executor faults: right programs kept, cut or lost when a node and then the head are lost mid-run.

    python -m scripts.bench.ray_faults [--batch 48] [--baseline_ref main]

A Ray cluster on this machine (Ray's own `ray.cluster_utils.Cluster`: a head with no CPU for actors, three
1-CPU nodes), the real server as a subprocess (`--executor ray --ray_actors 2 --workers 1`), batches of
`--batch` right programs (distinct code, ~0.2 s of work each). The phases of issue 32:

    node lost mid-batch  ->  the next batch at once  ->  a batch after Ray declares the node dead  ->
    a batch after the head is lost

Printed per phase: right programs that kept their reward, that were reported cut (`reward/cut`: the cut
reward, no verdict), and that were lost (scored as failures, nothing reported), and what /health said after
it. The node removed is one that holds an actor (asked of the cluster by a driver of this process, which
also finds the driver's node when the server's /health does not say it). The baseline is `--baseline_ref`
extracted with `git archive`, run the same way in the same run ('' = none). Figures: docs/performance.md
("Ray executor faults").
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]

import httpx  # noqa: E402

from scripts.bench.fairness import checkout, start  # noqa: E402
from scripts.bench.workloads import PROBLEMS, SYSTEM_THINK, chatml, rows, write_jsonl  # noqa: E402

os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # node addresses stay on loopback


def right(tag: str, n: int) -> list[str]:
    code = "import time\ndef mul(a, b):\n    time.sleep(0.05)\n    return a * b\n"
    return [chatml(SYSTEM_THINK, PROBLEMS["assert"][0],
                   f"<think>\nok\n</think>\n<answer>\n```python\n{code}# {tag} {i}\n```\n</answer>") for i in range(n)]


def tally(out: dict) -> dict:
    cut = out["extra_logs"].get("reward/cut", [0.0] * len(out["scores"]))
    kept = sum(s == 1.0 for s in out["scores"])
    reported = sum(s != 1.0 and c == 1.0 for s, c in zip(out["scores"], cut, strict=True))
    return {"right": len(out["scores"]), "kept": kept, "cut": reported, "lost": len(out["scores"]) - kept - reported}


def actor_nodes(ray) -> set[str]:
    return {a["Address"]["NodeID"] for a in ray._private.state.actors().values()
            if a["State"] == "ALIVE" and a["ActorClassName"].endswith("_SandboxActor")}


def scenario(root: Path, data: Path, args, tag: str) -> list[dict]:
    import ray
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, connect=False,
                      head_node_args={"num_cpus": 0, "include_dashboard": False, "node_ip_address": "127.0.0.1"})
    proc = None
    phases = []
    try:
        nodes = [cluster.add_node(num_cpus=1, node_ip_address="127.0.0.1") for _ in range(3)]
        extra = ("--executor", "ray", "--ray_address", cluster.address, "--ray_actors", "2", "--probe_s", "0",
                 "--test_timeout_s", "10")
        if tag == "ours":
            extra += ("--ray_health_s", "1")
        proc, url = start(root, data, 1, extra)
        client = httpx.Client(timeout=600)

        def health() -> dict:
            try:
                h = client.get(f"{url}/health", timeout=30).json()
                iso = h["isolation"]
                return {"ready": h["ready"], "actors": iso.get("actors"), "nodes": len(iso.get("nodes", []))}
            except httpx.HTTPError as e:
                return {"error": type(e).__name__}

        def batch(name: str) -> dict:
            t0 = time.perf_counter()
            out = client.post(f"{url}/get_reward", json={"query": right(f"{tag}-{name}", args.batch)}).json()
            return {"phase": name, **tally(out), "seconds": round(time.perf_counter() - t0, 1)}

        client.post(f"{url}/get_reward", json={"query": right(f"{tag}-warm", 4)})
        ray.init(address=cluster.address, logging_level="WARNING", log_to_driver=False)
        sockets = {n["NodeID"]: n["RayletSocketName"] for n in ray.nodes() if n["Alive"]}
        head_id = next(k for k, v in sockets.items() if v == cluster.head_node.raylet_socket_name)
        victim_id = sorted(actor_nodes(ray) - {head_id})[0]
        victim = next(n for n in nodes if n.raylet_socket_name == sockets[victim_id])
        ray.shutdown()

        with ThreadPoolExecutor(1) as pool:
            first = pool.submit(batch, "node lost mid-batch")
            time.sleep(args.kill_after_s)
            cluster.remove_node(victim, allow_graceful=False)
            phases.append({**first.result(), "health": health()})
        phases.append({**batch("next batch at once"), "health": health()})
        time.sleep(args.declared_dead_s)
        phases.append({**batch(f"after {args.declared_dead_s:.0f} s (node declared dead)"), "health": health()})
        cluster.remove_node(cluster.head_node, allow_graceful=False)
        time.sleep(5)
        phases.append({**batch("head lost"), "health": health()})
        return phases
    finally:
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(timeout=60)
            except Exception:
                proc.kill()
        cluster.shutdown()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--batch", type=int, default=48, help="right programs per batch")
    ap.add_argument("--kill_after_s", type=float, default=2.0, help="when the node goes, after the batch starts")
    ap.add_argument("--declared_dead_s", type=float, default=40.0,
                    help="wait before the third batch (Ray's heartbeat timeout marks the node dead)")
    ap.add_argument("--baseline_ref", default="main", help="git ref to compare with ('' = none)")
    args = ap.parse_args()
    runs = {}
    with tempfile.TemporaryDirectory(prefix="coderl-rayfault-") as tmp:
        data = write_jsonl(Path(tmp) / "train.jsonl", rows())
        if args.baseline_ref:
            runs[f"baseline ({args.baseline_ref})"] = scenario(checkout(args.baseline_ref, Path(tmp) / "base"), data,
                                                               args, "base")
        runs["this checkout"] = scenario(REPO_ROOT, data, args, "ours")
    print(json.dumps({"args": vars(args), "runs": runs}, indent=1))
    print(f"\n{args.batch} right programs per batch; 2 actors on a 3-node cluster (+ head)")
    print(f"{'server':18} {'phase':36} {'kept':>5} {'cut':>5} {'lost':>5} {'s':>6}  /health after")
    for name, phases in runs.items():
        for p in phases:
            print(f"{name:18} {p['phase']:36} {p['kept']:5} {p['cut']:5} {p['lost']:5} {p['seconds']:6}  {p['health']}")


if __name__ == "__main__":
    main()

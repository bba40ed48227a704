#!/usr/bin/env python
"""Nothing after the deadline (issue 35, item 4): how long past its deadline the real server answers hostile batches.

The real server (rewards/reward_server.py, --workers 2) indexes one problem per label format; requests are sent over
loopback HTTP as OpenRLHF sends them (ChatML, pads, every response distinct, so no result-cache hit). Each batch holds
--n responses of one kind, spread over the five problems:

* normal: the right program in the think/answer format (the baseline, in the same run);
* blocks: Python blocks that name the entry point without binding it, each nested lambdas sized to compile just under
  the syntax helper's per-check bound: extraction compiles every one (the 64 K per-response budget);
* slow_compile: one 40 K block of nested lambdas not naming the entry point (compiled after a cut, and in the sandbox);
* deep_nesting: blocks naming the entry point whose compile raises RecursionError or MemoryError (chains, unaries);
* many_candidates: ~500 small blocks naming the entry point (one compile each, in-process then in the helper);
* large: ~1.9 MB responses (max_query_chars is 2 M): prose with 1000 fence lines, then the right program.

Per deadline and kind, over every request: the answer time (client side: from sending the body to the whole answer)
minus the deadline, its max and p99, and how many requests went past deadline + 5 s (the target: none).

    python -m scripts.bench.deadline                                  # 2 s deadline, every kind; 150 s, blocks
    python -m scripts.bench.deadline --deadlines 2 --kinds normal,blocks --repeats 5 --json out.json
    python -m scripts.bench.deadline --baseline_repo /path/to/other/checkout   # same batches, that checkout's server
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from scripts.bench.workloads import PROBLEMS, SYSTEM_THINK, ServerProc, chatml, rows, write_jsonl

MARGIN_S = 5.0  # issue 35's target: every request answers within deadline + 5 s
FORMATS = list(PROBLEMS)
_ENTRY = {f: PROBLEMS[f][1].get("entry_point") or "main" for f in FORMATS}


def _think(code: str) -> str:
    return f"<think>\nLet me write it.\n</think>\n<answer>\n```python\n{code}\n```\n</answer>"


def _lambdas(name: str, depth: int, i: int) -> str:
    """Nested lambdas (compile() is quadratic in their depth) ending in the name: it is named, never bound."""
    return f"x{i} = " + "lambda: " * depth + name


def normal(fmt: str, nonce: str) -> str:
    return _think(f"{PROBLEMS[fmt][2]}\n# {nonce}")


def blocks(fmt: str, nonce: str, depth: int = 1200, count: int = 6) -> str:
    name = _ENTRY[fmt]
    body = "".join(f"```python\n{_lambdas(name, depth, i)}  # {nonce}\n```\n" for i in range(count))
    return f"<think>\nDrafts.\n</think>\n<answer>\n{body}</answer>"


def slow_compile(fmt: str, nonce: str) -> str:
    return _think("".join(f"y{j} = " + "lambda: " * 2_500 + "0\n" for j in range(2)) + f"# {nonce}")


def deep_nesting(fmt: str, nonce: str) -> str:
    name = _ENTRY[fmt]
    kinds = [f"x = {name}" + " + 1" * 12_000, f"x = {name}" + ".a" * 25_000, f"x = {name}" + "()" * 25_000,
             "x = " + "-" * 50_000 + name, "x = " + "not " * 12_000 + name]
    body = "".join(f"```python\n{k}  # {nonce}\n```\n" for k in kinds)
    return f"<think>\nDrafts.\n</think>\n<answer>\n{body}</answer>"


def many_candidates(fmt: str, nonce: str) -> str:
    name = _ENTRY[fmt]
    body = "".join(f"```python\nprint({name}({i}))  # {nonce}\n```\n" for i in range(499))
    return f"<think>\nExamples.\n</think>\n{body}"


def large(fmt: str, nonce: str) -> str:
    prose = ("Some words about the problem. " * 40 + "\n```\n") * 1000  # 1000 fence lines: MAX_FENCE_LINES
    prose += ("More words without any fence at all. " * 50 + "\n") * 350
    return f"<think>\n{prose}\n</think>\n" + _think(f"{PROBLEMS[fmt][2]}\n# {nonce}")[len("<think>\nLet me write it.\n</think>\n"):]


KINDS = {"normal": normal, "blocks": blocks, "slow_compile": slow_compile, "deep_nesting": deep_nesting,
         "many_candidates": many_candidates, "large": large}


def batch(kind: str, n: int, tag: str) -> list[str]:
    """n queries of one kind, as OpenRLHF sends them, spread over the problems; each distinct."""
    out = []
    for i in range(n):
        fmt = FORMATS[i % len(FORMATS)]
        out.append(chatml(SYSTEM_THINK, PROBLEMS[fmt][0], KINDS[kind](fmt, f"{tag} {i}")))
    return out


def post(url: str, queries: list[str], timeout_s: float = 900.0) -> tuple[float, dict]:
    """(seconds from sending the body to the whole answer, the answer)."""
    import httpx

    body = json.dumps({"query": queries}).encode()
    t0 = time.monotonic()
    r = httpx.post(f"{url}/get_reward", content=body, headers={"content-type": "application/json"}, timeout=timeout_s)
    took = time.monotonic() - t0
    r.raise_for_status()
    return took, r.json()


def summary(overs: list[float]) -> dict:
    """max, p99 (nearest rank) and median of the time past the deadline, and how many went past MARGIN_S."""
    s = sorted(overs)
    p99 = s[min(len(s) - 1, max(0, -(-99 * len(s) // 100) - 1))]
    return {"requests": len(s), "max_s": round(s[-1], 2), "p99_s": round(p99, 2),
            "median_s": round(statistics.median(s), 2), f"over_{MARGIN_S:g}s": sum(o > MARGIN_S for o in s)}


def play(deadline_s: float, kinds: list[str], n: int, repeats: int, data: Path, repo: Path | None = None,
         concurrency: int = 1) -> dict:
    """Each kind's batches `repeats` times, `concurrency` at once (normal first: the baseline), against one server
    with this deadline."""
    from concurrent.futures import ThreadPoolExecutor

    args = ["--data_path", str(data), "--port", "0", "--workers", "2", "--batch_deadline_s", str(deadline_s),
            "--log_every_n_batches", "1"]
    server = ServerProc(args) if repo is None else _other_server(repo, args)
    out = {}
    try:
        post(server.url, batch("normal", 2, f"warm {time.time()}"))  # the sandboxes warm
        for kind in kinds:
            overs, cut, rewards = [], [], []
            batches = [batch(kind, n, f"{kind} {deadline_s} {r} {time.time()}") for r in range(repeats)]
            with ThreadPoolExecutor(concurrency) as pool:
                answers = list(pool.map(lambda b: post(server.url, b), batches))
            for r, (took, answer) in enumerate(answers):
                overs.append(took - deadline_s)
                cut.append(statistics.fmean(answer["extra_logs"].get("reward/cut", [0.0])))
                rewards.append(statistics.fmean(answer["rewards"]))
                print(json.dumps({"deadline_s": deadline_s, "kind": kind, "repeat": r, "took_s": round(took, 2),
                                  "over_s": round(took - deadline_s, 2), "cut": round(cut[-1], 3)}), flush=True)
            out[kind] = {**summary(overs), "cut_share": round(statistics.fmean(cut), 3),
                         "mean_reward": round(statistics.fmean(rewards), 3)}
    finally:
        server.stop()
    return out


def _other_server(repo: Path, args: list[str]) -> ServerProc:
    """A ServerProc running another checkout's rewards/reward_server.py (its own code on PYTHONPATH)."""
    import scripts.bench.workloads as w

    saved = w.SERVER
    w.SERVER = repo / "rewards" / "reward_server.py"
    try:
        return ServerProc(args, env={"PYTHONPATH": str(repo)})
    finally:
        w.SERVER = saved


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m scripts.bench.deadline", description=__doc__.split("\n\n")[0])
    ap.add_argument("--deadlines", default="2,150", help="batch deadlines to play, seconds")
    ap.add_argument("--kinds", default=",".join(KINDS), help=f"kinds at the first deadline (of {', '.join(KINDS)})")
    ap.add_argument("--long_kinds", default="normal,blocks",
                    help="kinds at the later deadlines (each hostile batch there takes the whole deadline)")
    ap.add_argument("--n", type=int, default=16, help="responses per batch at the first deadline")
    ap.add_argument("--long_n", type=int, default=128, help="responses per batch at the later deadlines (enough work "
                    "to outlast the default deadline)")
    ap.add_argument("--repeats", type=int, default=3, help="batches per kind at the first deadline")
    ap.add_argument("--long_repeats", type=int, default=1)
    ap.add_argument("--concurrency", type=int, default=1, help="batches of a kind sent at once")
    ap.add_argument("--baseline_repo", default="", help="also play the batches against this checkout's server")
    ap.add_argument("--json", default="", help="also write the figures here")
    a = ap.parse_args(argv)
    deadlines = [float(x) for x in a.deadlines.split(",") if x]
    for kinds in (a.kinds, a.long_kinds):
        unknown = sorted(set(kinds.split(",")) - set(KINDS))
        if unknown:
            ap.error(f"unknown kinds {unknown}; known: {sorted(KINDS)}")
    repos = {"this": None, **({"baseline": Path(a.baseline_repo).resolve()} if a.baseline_repo else {})}
    results: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        data = write_jsonl(Path(tmp) / "train.jsonl", rows())
        for which, repo in repos.items():
            for j, d in enumerate(deadlines):
                kinds = (a.kinds if j == 0 else a.long_kinds).split(",")
                n, reps = (a.n, a.repeats) if j == 0 else (a.long_n, a.long_repeats)
                results.setdefault(which, {})[f"{d:g}"] = play(d, kinds, n, reps, data, repo, a.concurrency)
    print(f"\n{'server':<9} {'deadline':>8} {'kind':<16} {'reqs':>4} {'max +s':>7} {'p99 +s':>7} {'median':>7} "
          f"{'>+5s':>4} {'cut':>5}  vs normal (max)")
    worst = 0
    for which, per in results.items():
        for d, kinds in per.items():
            base = kinds.get("normal", {}).get("max_s")
            for kind, r in kinds.items():
                ratio = f"{r['max_s'] - base:+.2f} s" if base is not None and kind != "normal" else ""
                print(f"{which:<9} {d:>8} {kind:<16} {r['requests']:>4} {r['max_s']:>7.2f} {r['p99_s']:>7.2f} "
                      f"{r['median_s']:>7.2f} {r[f'over_{MARGIN_S:g}s']:>4} {r['cut_share']:>5.2f}  {ratio}")
                if which == "this":
                    worst += r[f"over_{MARGIN_S:g}s"]
    if a.json:
        Path(a.json).write_text(json.dumps(results, indent=1))
    return 0 if worst == 0 else 1


if __name__ == "__main__":
    sys.exit(main())

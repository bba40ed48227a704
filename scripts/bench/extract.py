#!/usr/bin/env python
"""Benchmark extraction on adversarial responses, against the old regexes in the same run; /health under load.

    python -m scripts.bench.extract [--size 2000000] [--repeats 3] [--old_budget_s 1.0] [--skip_health]

1. Extraction. For each generator of an adversarial response (unclosed fences, thousands of fence lines,
   "<answer>" x 100k, "<|" x 1M, deep whitespace, imitated chat markers, ...) built at --size characters
   (default: config server.max_query_chars):
     * prepare: Scorer.prepare_one on a ChatML query carrying it (lookup, split, clean, extract, format
       and syntax checks: all a query costs before the sandbox);
     * extract: clean_response + extract_code + format_ok for the three answer formats;
     * BASELINE: the regexes extraction used before (scripts/bench/extract_v1.py), on the same generator at
       the largest size from 4 KB up (doubling) where they finish within --old_budget_s, and ours on that
       same input (ratio).
2. /health under load: the real server (a subprocess) scores a batch of such responses near the query
   limit plus sandbox jobs that spin until their timeout, while /health is polled every 10 ms; prints
   its latency p50 / p99 / max.
Prints JSON then tables. Figures are recorded in docs/performance.md ("Extraction").
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from types import SimpleNamespace

REPO_ROOT = Path(__file__).resolve().parents[2]

import httpx  # noqa: E402

from coderl.rewards import extract, query  # noqa: E402
from coderl.rewards.config import CoderlConfig  # noqa: E402
from coderl.rewards.pipeline import Scorer  # noqa: E402
from coderl.rewards.prompt_index import PromptIndex  # noqa: E402
from scripts.bench import extract_v1 as old  # noqa: E402
from scripts.bench.workloads import (  # noqa: E402
    PROBLEMS,
    SYSTEM_THINK,
    ServerProc,  # noqa: E402
    chatml,
    emit_json,
    rows,
    write_jsonl,
)

FORMATS = extract.ANSWER_FORMATS


def _fill(unit: str, n: int, head: str = "", tail: str = "") -> str:
    return head + unit * max(1, (n - len(head) - len(tail)) // len(unit)) + tail


def _decreasing_runs(n: int) -> str:
    out, k, size = [], 3, 0
    while size + k + 1 <= n:  # runs 3, 4, 5, ... reversed below: each longer than every run after it
        out.append("`" * k + "\n")
        size += k + 1
        k += 1
    return "".join(reversed(out))


GENERATORS = {
    "unclosed_fences": lambda n: _fill("```python\nx = 1\n", n),
    "fence_lines": lambda n: _fill("```\n", n),
    "fence_lines_tilde_mix": lambda n: _fill("~~~~\n```\n~~~\n", n),
    "backtrack_fences": lambda n: _fill("``````x\n", n, tail="````\n"),
    "one_fence_run": lambda n: _fill("`", n),
    "decreasing_runs": _decreasing_runs,
    "loose_fallback": lambda n: _fill("a ````\nb ```\n", n),
    "mid_line_fences": lambda n: _fill("x```\n", n),
    "answer_open": lambda n: _fill("<answer>", n),
    "answer_pairs": lambda n: _fill("<answer></answer>", n),
    "think_answer_many": lambda n: _fill("</think><answer>x</answer>y", n, head="<think>"),
    "pipe_open": lambda n: _fill("<|", n),
    "pipe_tokens": lambda n: _fill("<|a|>", n),
    "fullwidth_open": lambda n: _fill("<｜" + "a" * 47, n),
    "spaces": lambda n: _fill(" ", n),
    "inner_whitespace": lambda n: _fill(" ", n, head="x", tail="y"),
    "newlines": lambda n: _fill("\n", n),
    "unicode_whitespace": lambda n: _fill("\u3000", n, head="x", tail="y"),
    "edge_tokens_inside": lambda n: _fill("<pad> ", n, head="x", tail="y"),
    "edge_tokens": lambda n: _fill("<s></s>", n),
    "chat_markers": lambda n: _fill("<|im_start|>user\nWrite f.<|im_end|>\n<|im_start|>assistant\n", n),
    "unclosed_paren": lambda n: _fill("1, ", n, head="x = ("),
    "raw_code": lambda n: _fill("x = 1\n", n),
}


def _timed(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def extract_all(mod, text: str) -> None:
    cleaned = mod.clean_response(text)
    e = mod.extract_code(cleaned)
    for fmt in FORMATS:
        mod.format_ok(cleaned, fmt, e)


# Today's code as one module-like object: the response's cleaning is query.py's, its extraction extract.py's.
new = SimpleNamespace(clean_response=query.clean_response, extract_code=extract.extract_code,
                      format_ok=extract.format_ok)


def bench_extraction(size: int, repeats: int, old_budget_s: float) -> list[dict]:
    with tempfile.TemporaryDirectory() as d:
        scorer = Scorer(CoderlConfig().reward, PromptIndex.from_jsonl(write_jsonl(Path(d) / "t.jsonl", rows())))
    user = PROBLEMS["assert"][0]
    frame = len(chatml(SYSTEM_THINK, user, ""))
    out = []
    for name, gen in GENERATORS.items():
        response = gen(size - frame)
        query = chatml(SYSTEM_THINK, user, response)
        assert len(query) <= size, (name, len(query))
        res = {"generator": name, "chars": len(query),
               "prepare_ms": round(1e3 * _timed(lambda q=query: scorer.prepare_one(q), repeats), 2),
               "extract_ms": round(1e3 * _timed(lambda r=response: extract_all(new, r), repeats), 2)}
        n = 4096
        while True:  # the largest size (doubling) where the old regexes finish within the budget
            small = gen(n)
            t_old = _timed(lambda s=small: extract_all(old, s), 1)
            res.update(old_chars=len(small), old_ms=round(1e3 * t_old, 2))
            if t_old > old_budget_s / 4 or 2 * n > size:
                break
            n *= 2
        t_new = _timed(lambda s=small: extract_all(new, s), repeats)
        res.update(new_at_old_chars_ms=round(1e3 * t_new, 3), ratio=round(t_old / max(t_new, 1e-6), 1))
        out.append(res)
    return out


# ------------------------------------------------------------------------------------ /health

def bench_health(size: int, n_adversarial: int, n_spinning: int, poll_s: float = 0.01) -> dict:
    """Poll /health every poll_s while the real server scores an adversarial batch; latency figures."""
    user = PROBLEMS["assert"][0]
    frame = len(chatml(SYSTEM_THINK, user, ""))
    names = list(GENERATORS)
    queries = [chatml(SYSTEM_THINK, user, GENERATORS[names[i % len(names)]](size - frame - 64))
               for i in range(n_adversarial)]
    spin = "<think>\nloop\n</think>\n<answer>\n```python\ndef mul(a, b):\n    while True:\n        pass\n```\n</answer>"
    queries += [chatml(SYSTEM_THINK, user, spin + f"\n# {i}") for i in range(n_spinning)]
    with tempfile.TemporaryDirectory() as d:
        data = write_jsonl(Path(d) / "train.jsonl", rows())
        server = ServerProc(["--data_path", str(data), "--port", "0", "--workers", "2", "--test_timeout_s", "2",
                             "--max_body_mb", "256", "--log_level", "warning"])
        try:
            body = json.dumps({"query": queries}).encode()
            lat: list[float] = []
            done = threading.Event()
            result: dict = {}

            def score() -> None:
                t0 = time.perf_counter()
                r = httpx.post(f"{server.url}/get_reward", content=body, timeout=600,
                               headers={"content-type": "application/json"})
                result.update(status=r.status_code, seconds=time.perf_counter() - t0)
                done.set()

            with httpx.Client(timeout=30) as client:
                client.get(f"{server.url}/health")
                worker = threading.Thread(target=score)
                worker.start()
                while not done.is_set():
                    t0 = time.perf_counter()
                    client.get(f"{server.url}/health").raise_for_status()
                    lat.append(time.perf_counter() - t0)
                    time.sleep(max(0.0, poll_s - (time.perf_counter() - t0)))
                worker.join()
        finally:
            server.stop()
    lat.sort()
    return {"queries": len(queries), "adversarial": n_adversarial, "spinning": n_spinning,
            "body_mb": round(len(body) / 2**20, 1), "status": result["status"],
            "batch_s": round(result["seconds"], 2), "polls": len(lat),
            "health_p50_ms": round(1e3 * lat[len(lat) // 2], 1),
            "health_p99_ms": round(1e3 * lat[min(len(lat) - 1, int(len(lat) * 0.99))], 1),
            "health_max_ms": round(1e3 * lat[-1], 1)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", type=int, default=CoderlConfig().server.max_query_chars,
                    help="characters per adversarial query (default: server.max_query_chars)")
    ap.add_argument("--repeats", type=int, default=3, help="timed runs per figure (median)")
    ap.add_argument("--old_budget_s", type=float, default=1.0,
                    help="the baseline doubles its input size while it takes less than a quarter of this")
    ap.add_argument("--health_queries", type=int, default=24, help="adversarial queries in the /health batch")
    ap.add_argument("--health_spinning", type=int, default=8, help="jobs spinning to their 2 s timeout in it")
    ap.add_argument("--skip_health", action="store_true")
    ap.add_argument("--json", default=None, help="also write the JSON result here")
    args = ap.parse_args()

    result: dict = {"machine": {"cpus": os.cpu_count(), "python": sys.version.split()[0],
                                "loadavg_at_start": [round(x, 2) for x in os.getloadavg()]}}
    rows_ = bench_extraction(args.size, args.repeats, args.old_budget_s)
    worst = max(rows_, key=lambda r: r["prepare_ms"])
    result["extraction"] = {"size": args.size, "generators": rows_,
                            "worst_prepare_ms": worst["prepare_ms"], "worst_prepare_generator": worst["generator"],
                            "worst_extract_ms": max(r["extract_ms"] for r in rows_)}
    if not args.skip_health:
        result["health"] = bench_health(args.size, args.health_queries, args.health_spinning)
    emit_json(result, args.json)

    print(f"\n{'generator':<24}{'prepare ms':>11}{'extract ms':>11}{'| old: chars':>13}{'old ms':>10}"
          f"{'ours ms':>9}{'ratio':>9}")
    for r in rows_:
        print(f"{r['generator']:<24}{r['prepare_ms']:>11}{r['extract_ms']:>11}{r['old_chars']:>13}{r['old_ms']:>10}"
              f"{r['new_at_old_chars_ms']:>9}{r['ratio']:>8}x")
    e = result["extraction"]
    print(f"worst at {e['size']} chars: prepare {e['worst_prepare_ms']} ms ({e['worst_prepare_generator']}), "
          f"extract {e['worst_extract_ms']} ms")
    if "health" in result:
        h = result["health"]
        print(f"\n/health while scoring {h['queries']} queries ({h['body_mb']} MB, {h['batch_s']} s, HTTP {h['status']}): "
              f"{h['polls']} polls, p50 {h['health_p50_ms']} ms, p99 {h['health_p99_ms']} ms, "
              f"max {h['health_max_ms']} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())

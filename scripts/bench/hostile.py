#!/usr/bin/env python
"""What a hostile program costs the reward server itself, against an honest one of the same shape, in one run.

The sandbox bounds what a program costs inside it (time, memory, processes); this measures what stays outside:
the server's own CPU and GIL, shared by every request. Each figure is hostile / honest, measured side by side.

* call_values: call-format jobs of --cases cases each (bubblewrap pool, --workers). Honest: `return x * x`;
  hostile: a ~50 KB wrong list for every case. Figure: the server process's CPU per job (its dispatcher threads
  read every case's return value). The value once crossed as a repr read with ast.literal_eval; it crosses as
  JSON now (rewards/sandbox/inside/formats/call.py): `read_ms` times both readings of the hostile value.
* inline_compile: the syntax check (rewards/syntax.py) of responses of --chars characters. Honest: ordinary
  functions; hostile: nested lambdas, which compile() takes quadratic time on. Figure: the longest the GIL was
  held (a 1 ms ticker thread's worst lag), what the server's event loop waits while a response is compiled;
  with syntax.INLINE_CHARS as it is and as --baseline_inline_chars (the bound before the red team: 16384).

    python -m scripts.bench.hostile                       # both, 8 jobs x 40 cases, 4 K and 16 K responses
    python -m scripts.bench.hostile --only inline_compile --chars 4096,16384 --json out.json
"""

from __future__ import annotations

import argparse
import ast
import json
import resource
import sys
import threading
import time

from coderl.rewards import syntax
from coderl.rewards.config import SandboxConfig
from coderl.rewards.labels import parse_label
from coderl.rewards.sandbox import Job, Sandbox
from scripts.bench.workloads import emit_json

HONEST_UNIT = ("def has_close(numbers, threshold):\n    for i, a in enumerate(numbers):\n"
               "        for j, b in enumerate(numbers):\n            if i != j and abs(a - b) < threshold:\n"
               "                return True\n    return False\n\n")


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def call_values(jobs: int, cases: int, workers: int) -> dict:
    label = parse_label({"format": "call", "entry_point": "f",
                         "tests": [{"input": [i], "output": i * i} for i in range(cases)]})
    programs = {"honest": "def f(x):\n    return x * x\n", "hostile": "def f(x):\n    return [[x] * 5] * 3000\n"}
    out = {}
    with Sandbox(SandboxConfig(isolation="bwrap", workers=workers)) as sb:
        sb.run([Job(programs["honest"] + "# warm-up\n", label)] * workers)
        for kind, code in programs.items():
            batch = [Job(code + f"# {i}\n", label) for i in range(jobs)]
            c0, t0 = _cpu(), time.monotonic()
            results = sb.run(batch)
            out[kind] = {"server_cpu_ms_per_job": round((_cpu() - c0) / jobs * 1000, 2),
                         "wall_s": round(time.monotonic() - t0, 2),
                         "pass_rate": sum(r.pass_rate for r in results) / jobs}
    out["ratio"] = round(out["hostile"]["server_cpu_ms_per_job"] / max(out["honest"]["server_cpu_ms_per_job"], 1e-3), 1)
    value = [[7] * 5] * 3000
    as_repr, as_json = repr(value), json.dumps(value)
    out["read_ms"] = {"repr_literal_eval": _best(lambda: ast.literal_eval(as_repr)), "json_loads": _best(lambda: json.loads(as_json))}
    return out


def _best(fn, n: int = 5) -> float:
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return round(min(times) * 1000, 2)


def _gil_hold(fn) -> tuple[float, float]:
    """(seconds fn took, the longest a 1 ms ticker thread waited past its tick while fn ran)."""
    worst, stop = [0.0], threading.Event()

    def tick():
        last = time.monotonic()
        while not stop.is_set():
            time.sleep(0.001)
            now = time.monotonic()
            worst[0] = max(worst[0], now - last - 0.001)
            last = now

    t = threading.Thread(target=tick, daemon=True)
    t.start()
    time.sleep(0.01)
    t0 = time.monotonic()
    fn()
    took = time.monotonic() - t0
    stop.set()
    t.join()
    return took, worst[0]


def inline_compile(chars: list[int], repeats: int, inline_chars: int) -> dict:
    """inline_compile's figures with syntax.INLINE_CHARS set to inline_chars for the run."""
    out, kept = {}, syntax.INLINE_CHARS
    syntax.INLINE_CHARS = inline_chars
    try:
        for n in chars:
            out[str(n)] = _compile_row(n, repeats)
    finally:
        syntax.INLINE_CHARS = kept
    return out


def _compile_row(n: int, repeats: int) -> dict:
    """Honest and hostile responses of n characters: wall time and GIL hold of the syntax check."""
    honest = (HONEST_UNIT * (n // len(HONEST_UNIT) + 1))[:n]
    honest = honest[:honest.rfind("\n\n") + 1]
    hostile = "x = " + "lambda: " * ((n - 6) // 8) + "1\n"
    row = {}
    for kind, code in (("honest", honest), ("hostile", hostile)):
        assert syntax.parses(code), kind
        runs = [_gil_hold(lambda code=code: syntax.parses(code)) for _ in range(repeats)]
        row[kind] = {"chars": len(code), "wall_ms": round(min(r[0] for r in runs) * 1000, 1),
                     "gil_hold_ms": round(max(r[1] for r in runs) * 1000, 1)}
    row["gil_ratio"] = round(row["hostile"]["gil_hold_ms"] / max(row["honest"]["gil_hold_ms"], 1.0), 1)
    return row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", choices=("call_values", "inline_compile"), default=None)
    ap.add_argument("--jobs", type=int, default=8)
    ap.add_argument("--cases", type=int, default=40)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--chars", default="4096,16384", help="response lengths for inline_compile, comma-separated")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--baseline_inline_chars", type=int, default=16384)
    ap.add_argument("--json", default=None)
    a = ap.parse_args(argv)
    res = {"inline_chars": syntax.INLINE_CHARS}
    if a.only in (None, "call_values"):
        res["call_values"] = call_values(a.jobs, a.cases, a.workers)
    if a.only in (None, "inline_compile"):
        chars = [int(c) for c in a.chars.split(",")]
        res["inline_compile"] = inline_compile(chars, a.repeats, syntax.INLINE_CHARS)
        res["inline_compile_baseline"] = inline_compile(chars, a.repeats, a.baseline_inline_chars)
    syntax._helper.close()
    emit_json(res, a.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())

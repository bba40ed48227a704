#!/usr/bin/env python
"""Benchmark GRPO's log-prob forwards, each distinct prompt run once (learning_check/prefix.py) vs TRL 0.17's own.

One optimizer step's worth of them at the learning check's CPU defaults: a model of --shape (random init),
--prompts prompts of --prompt_len tokens (left-padded to it, as TRL pads), --generations completions each of up
to --completion_len tokens; per round the reference forward (no grad) and the policy's forward + backward, both
ways, in alternating order. Prints seconds per round each way, the ratio, and the largest log-prob difference.

    python -m scripts.bench.grpo_logps                 # small, 8 x 8, 130 + 96 tokens, 2 threads, 4 rounds
    python -m scripts.bench.grpo_logps --rounds 6 --json out.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--shape", default="small")
    p.add_argument("--vocab", type=int, default=1024)
    p.add_argument("--prompts", type=int, default=8)
    p.add_argument("--generations", type=int, default=8)
    p.add_argument("--prompt_len", type=int, default=130)
    p.add_argument("--completion_len", type=int, default=96)
    p.add_argument("--rounds", type=int, default=4)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--json", help="Also write the figures here.")
    a = p.parse_args(argv)

    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM
    from trl import GRPOTrainer

    from coderl.learning_check.model import SHAPES
    from coderl.learning_check.prefix import per_token_logps

    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    model = Qwen2ForCausalLM(Qwen2Config(vocab_size=a.vocab, max_position_embeddings=1024, tie_word_embeddings=True,
                                         **SHAPES[a.shape]))
    n, c = a.prompts * a.generations, a.completion_len
    prompts = torch.randint(1, a.vocab, (a.prompts, a.prompt_len))
    pmask = torch.ones_like(prompts)
    for i in range(a.prompts):  # prompts of different lengths, left-padded
        pmask[i, :i * 3] = 0
    ids = torch.cat([prompts.repeat_interleave(a.generations, 0), torch.randint(1, a.vocab, (n, c))], 1)
    cmask = (torch.arange(c) < torch.randint(c // 3, c + 1, (n, 1))).long()  # completions ending at EOS
    mask = torch.cat([pmask.repeat_interleave(a.generations, 0), cmask], 1)

    trl_own = GRPOTrainer._get_per_token_logps.__wrapped__  # without TRL's profiling wrapper, which needs a trainer
    ways = {"trl": lambda: trl_own(type("T", (), {"temperature": 1.0})(), model, ids, mask, c),
            "shared_prompt": lambda: per_token_logps(model, ids, mask, c, 1.0)}
    times: dict[str, list[float]] = {w: [] for w in ways}
    with torch.no_grad():
        diff = (ways["trl"]() - ways["shared_prompt"]()).abs().max().item()
    for r in range(a.rounds + 1):
        for w in (list(ways) if r % 2 else list(ways)[::-1]):
            t = time.perf_counter()
            with torch.no_grad():
                ways[w]()  # the reference model's forward
            (ways[w]() * cmask).sum().backward()  # the policy's
            model.zero_grad(set_to_none=True)
            if r:  # round 0 warms up
                times[w].append(time.perf_counter() - t)
    med = {w: statistics.median(t) for w, t in times.items()}
    out = {"shape": a.shape, "rows": n, "prompt_len": a.prompt_len, "completion_len": c, "threads": a.threads,
           "rounds": a.rounds, "seconds": {w: round(v, 3) for w, v in med.items()},
           "speedup": round(med["trl"] / med["shared_prompt"], 2), "max_logp_diff": diff}
    print(f"{n} rows ({a.prompts} prompts x {a.generations}), {a.prompt_len} + {c} tokens, {a.shape}, "
          f"{a.threads} threads, median of {a.rounds} rounds (reference forward + policy forward/backward):")
    print(f"  TRL 0.17 (every row in full): {med['trl']:.2f} s")
    print(f"  each distinct prompt once:    {med['shared_prompt']:.2f} s   ({out['speedup']:.2f}x)")
    print(f"  largest log-prob difference:  {diff:.1e}")
    if a.json:
        Path(a.json).write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

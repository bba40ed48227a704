#!/usr/bin/env python
"""Benchmark prompts run once per distinct prompt (rewards/evaluation/prefill.py) against every row in full.

At the learning check's CPU defaults, a model of --shape (random init), --prompts prompts of up to --prompt_len
tokens (left-padded, as TRL and generate_hf pad), --generations rows each:
- log-probs: one GRPO step's forwards, the reference's (no grad) and the policy's forward + backward over
  completions of up to --completion_len tokens; TRL 0.17's `_get_per_token_logps` vs learning_check/prefix.py;
- generate: --completion_len new tokens sampled per row (a random model seldom ends early), plain HF generate
  vs prefill.generate, the same seed.
Rounds alternate the order. Prints the median seconds each way, the ratio, and how far the results differ.

    python -m scripts.bench.shared_prompt                       # small, 8 x 8, 130 + 96 tokens, 2 threads
    python -m scripts.bench.shared_prompt --prompts 32 --parts generate   # the held-out evaluation's batch of 256
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

PARTS = ("logps", "generate")


def _timed(ways: dict, rounds: int, run) -> dict[str, float]:
    """Median seconds of run(way) per way over `rounds` rounds after one warm-up round, alternating the order."""
    times: dict[str, list[float]] = {w: [] for w in ways}
    for r in range(rounds + 1):
        for w in (list(ways) if r % 2 else list(ways)[::-1]):
            t = time.perf_counter()
            run(ways[w])
            if r:
                times[w].append(time.perf_counter() - t)
    return {w: statistics.median(t) for w, t in times.items()}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--shape", default="small")
    p.add_argument("--vocab", type=int, default=1024)
    p.add_argument("--prompts", type=int, default=8)
    p.add_argument("--generations", type=int, default=8)
    p.add_argument("--prompt_len", type=int, default=130)
    p.add_argument("--completion_len", type=int, default=96)
    p.add_argument("--parts", default=",".join(PARTS), help=f"Comma-separated, of {', '.join(PARTS)}.")
    p.add_argument("--rounds", type=int, default=4)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--json", help="Also write the figures here.")
    a = p.parse_args(argv)
    parts = a.parts.split(",")
    if not set(parts) <= set(PARTS):
        p.error(f"--parts: one of {', '.join(PARTS)}, got {a.parts!r}")

    import torch
    from transformers import GenerationConfig, Qwen2Config, Qwen2ForCausalLM
    from trl import GRPOTrainer

    from coderl.learning_check.model import SHAPES
    from coderl.learning_check.prefix import per_token_logps
    from coderl.rewards.evaluation import prefill

    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    model = Qwen2ForCausalLM(Qwen2Config(vocab_size=a.vocab, max_position_embeddings=1024, tie_word_embeddings=True,
                                         eos_token_id=0, pad_token_id=0, **SHAPES[a.shape]))
    n, c = a.prompts * a.generations, a.completion_len
    prompts = torch.randint(1, a.vocab, (a.prompts, a.prompt_len))
    pmask = torch.ones_like(prompts)
    for i in range(a.prompts):  # prompts of different lengths, left-padded
        pmask[i, :(i * 3) % (a.prompt_len // 2)] = 0
    prompts, pmask = prompts.repeat_interleave(a.generations, 0), pmask.repeat_interleave(a.generations, 0)
    out: dict = {"shape": a.shape, "rows": n, "prompt_len": a.prompt_len, "completion_len": c, "threads": a.threads,
                 "rounds": a.rounds}
    print(f"{n} rows ({a.prompts} prompts x {a.generations}), {a.prompt_len} + {c} tokens, {a.shape}, "
          f"{a.threads} threads, median of {a.rounds} rounds")

    if "logps" in parts:
        ids = torch.cat([prompts, torch.randint(1, a.vocab, (n, c))], 1)
        cmask = (torch.arange(c) < torch.randint(c // 3, c + 1, (n, 1))).long()  # completions ending at EOS
        mask = torch.cat([pmask, cmask], 1)
        trl_own = GRPOTrainer._get_per_token_logps.__wrapped__  # without TRL's profiling wrapper (needs a trainer)
        ways = {"every row": lambda: trl_own(type("T", (), {"temperature": 1.0})(), model, ids, mask, c),
                "once per prompt": lambda: per_token_logps(model, ids, mask, c, 1.0)}
        with torch.no_grad():
            diff = (ways["every row"]() - ways["once per prompt"]()).abs().max().item()

        def step(way):
            with torch.no_grad():
                way()  # the reference model's forward
            (way() * cmask).sum().backward()  # the policy's
            model.zero_grad(set_to_none=True)

        med = _timed(ways, a.rounds, step)
        out["logps"] = {"seconds": med, "speedup": med["every row"] / med["once per prompt"], "max_logp_diff": diff}
        print(f"log-probs (reference forward + policy forward/backward): every row {med['every row']:.2f} s, "
              f"once per prompt {med['once per prompt']:.2f} s ({out['logps']['speedup']:.2f}x); "
              f"largest log-prob difference {diff:.1e}")

    if "generate" in parts:
        config = GenerationConfig(do_sample=True, max_new_tokens=c, min_new_tokens=c, pad_token_id=0, eos_token_id=0,
                                  top_k=0)
        ways = {"every row": lambda: model.generate(input_ids=prompts, attention_mask=pmask, generation_config=config),
                "once per prompt": lambda: prefill.generate(model, prompts, pmask, generation_config=config)}
        seqs = {}

        def sample(way):
            torch.manual_seed(0)
            with torch.no_grad():
                seqs[way] = way()

        med = _timed(ways, a.rounds, sample)
        same = (seqs[ways["every row"]] == seqs[ways["once per prompt"]]).all(1).float().mean().item()
        out["generate"] = {"seconds": med, "speedup": med["every row"] / med["once per prompt"],
                           "same_samples": same}
        print(f"generate ({c} new tokens per row): every row {med['every row']:.2f} s, once per prompt "
              f"{med['once per prompt']:.2f} s ({out['generate']['speedup']:.2f}x); {same:.0%} of the rows sampled "
              "the same tokens")
    if a.json:
        Path(a.json).write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

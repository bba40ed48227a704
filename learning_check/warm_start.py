"""CLI: fit a tokenizer on the train prompts+solutions, build a small Qwen2 model, SFT it, save an HF dir.

    python learning_check/warm_start.py --train data/train.jsonl --out_dir runs/lc/sft --shape small --steps 600

Writes model, tokenizer, sft_log.jsonl and warm_start.json (its settings) into a temp dir next to --out_dir,
renamed into place at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from coderl.learning_check.model import SHAPES, build_model, n_params, save_model
from coderl.learning_check.report import WARM_START_FILE
from coderl.learning_check.sft import SFTConfig, load_demonstrations, train
from coderl.learning_check.tokenizer import build_tokenizer
from coderl.rewards.errors import DataError
from coderl.rewards.evaluation.generate import render_prompts


def main(argv: list[str] | None = None) -> int:
    d = SFTConfig()
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--train", required=True, help="train.jsonl from data/preprocess.py --keep_reference.")
    p.add_argument("--out_dir", required=True, help="Gets the HF model dir (config, safetensors, tokenizer).")
    p.add_argument("--shape", default="small", choices=list(SHAPES), help="Model size (learning_check/model.py).")
    p.add_argument("--vocab_size", type=int, default=1024, help="BPE vocabulary fitted to the train text.")
    p.add_argument("--steps", type=int, default=d.steps, help="SFT optimizer steps.")
    p.add_argument("--batch_size", type=int, default=d.batch_size, help="Examples per step.")
    p.add_argument("--lr", type=float, default=d.lr, help="Peak learning rate (warmup, cosine to 10%%).")
    p.add_argument("--max_len", type=int, default=d.max_len, help="Longest prompt+response in tokens.")
    p.add_argument("--seed", type=int, default=d.seed, help="Init, shuffling.")
    p.add_argument("--noise", type=float, default=d.noise,
                   help="Share of drawn examples trained on a near miss of the reference instead "
                        "(learning_check/near_miss.py: an imperfect demonstrator, as a pretrained model is).")
    p.add_argument("--near_misses", type=int, default=8, help="Near misses drawn per row (with --noise).")
    p.add_argument("--group_batches", type=int, default=d.group_batches,
                   help="Batches drawn together and split by length, so that each pads less (1 = off).")
    p.add_argument("--device", default="auto", help="cuda, cpu or auto (cuda when available).")
    p.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's own choice).")
    a = p.parse_args(argv)

    import torch

    if a.threads:
        torch.set_num_threads(a.threads)
    device = ("cuda" if torch.cuda.is_available() else "cpu") if a.device == "auto" else a.device
    try:
        if not 0 <= a.noise < 1:
            raise DataError(f"--noise must be in [0, 1), got {a.noise}")
        if a.group_batches < 1:
            raise DataError(f"--group_batches must be at least 1, got {a.group_batches}")
        examples, misses = load_demonstrations(a.train, a.near_misses if a.noise else 0, seed=a.seed)
    except (DataError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if not examples:
        print(f"error: {a.train}: no rows", file=sys.stderr)
        return 2
    # Fit on exactly what the model sees: the chat-rendered prompts (template applied by a throwaway
    # tokenizer with the same template) and the responses.
    seed_tok = build_tokenizer([m if isinstance(m, str) else json.dumps(m) for m, _ in examples[:50]], 300)
    texts = render_prompts(seed_tok, [m for m, _ in examples]) + [r for _, r in examples]
    tok = build_tokenizer(texts, a.vocab_size)
    model = build_model(tok, a.shape, seed=a.seed, max_positions=max(1024, a.max_len)).to(device)
    cfg = SFTConfig(steps=a.steps, batch_size=a.batch_size, lr=a.lr, seed=a.seed, max_len=a.max_len, noise=a.noise,
                    group_batches=a.group_batches,
                    warmup_steps=min(d.warmup_steps, max(1, a.steps // 10)), log_every=max(1, min(50, a.steps // 10)))
    out = Path(a.out_dir)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        t0 = time.monotonic()
        print(f"warm start: {len(examples)} examples, {n_params(model) / 1e6:.2f}M params ({a.shape}), vocab "
              f"{len(tok)}, {a.steps} steps x {a.batch_size} on {device}, near-miss share {a.noise} "
              f"({sum(map(bool, misses))} rows have near misses)", flush=True)
        with open(tmp / "sft_log.jsonl", "w") as fh:
            def log(rec: dict) -> None:
                fh.write(json.dumps(rec) + "\n")
                fh.flush()
                print(f"  step {rec['step']}: loss {rec['loss']} ({rec['seconds']} s)", flush=True)
            train(model, tok, examples, cfg, log, near_misses=misses)
        save_model(model.to("cpu"), tok, tmp)
        # what the report states about the warm start (its demonstrator above all)
        (tmp / WARM_START_FILE).write_text(json.dumps({
            "shape": a.shape, "params": n_params(model), "steps": a.steps, "batch_size": a.batch_size, "lr": a.lr,
            "seed": a.seed, "noise": a.noise, "near_misses": a.near_misses if a.noise else 0,
            "rows": len(examples), "rows_with_near_misses": sum(map(bool, misses))}, indent=1) + "\n")
        if out.exists():
            shutil.rmtree(out)
        os.replace(tmp, out)
    except ValueError as e:
        shutil.rmtree(tmp, ignore_errors=True)
        print(f"error: {e}", file=sys.stderr)
        return 2
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    print(f"saved {out} in {time.monotonic() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())

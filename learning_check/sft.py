"""Supervised warm start: train a causal LM on the reference solutions of a preprocessed JSONL.

Each example is the row's prompt exactly as OpenRLHF builds it (the tokenizer's chat template over the
row's "input" messages, add_generation_prompt=True) followed by the reference solution in the answer
format the row's system prompt asks for, then EOS. The loss covers the response tokens only. A plain
PyTorch loop rather than OpenRLHF's SFT trainer: it runs the same on a CPU (the tested DRY_RUN) and a GPU,
and needs no DeepSpeed launcher for a model of a few million parameters.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from coderl.rewards.errors import DataError
from coderl.rewards.evaluation.generate import encode_prompts, render_prompts
from coderl.rewards.evaluation.prefill import prefix_cache
from coderl.rewards.prompt_index import load_problems

from .near_miss import near_miss, normalized


def response_for(code: str, answer_format: str | None) -> str:
    """A response in `answer_format` (label.extra.answer_format) whose extracted code is `code`."""
    block = f"```python\n{code.rstrip()}\n```"
    if answer_format == "think_answer":
        return f"<think>\nApply the steps in order.\n</think>\n<answer>\n{block}\n</answer>"
    return block


def load_examples(path: str | Path) -> list[tuple[list | str, str]]:
    """(messages, response) per row; DataError naming the line of a row without reference_solution."""
    return load_demonstrations(path)[0]


def load_demonstrations(path: str | Path, near_misses: int = 0, seed: int = 0
                        ) -> tuple[list[tuple[list | str, str]], list[list[str]]]:
    """(messages, response) per row and, per row, `near_misses` near-miss responses drawn (fewer where a draw
    changes nothing).

    With near misses every reference is written as ast.unparse writes it (near_miss.normalized), so that a
    near miss differs from it only in what was mutated, not in layout the policy could key on.
    """
    problems, _ = load_problems(path)
    rng = random.Random(seed)
    examples, misses = [], []
    for pr in problems:
        ref = pr.label.reference_solution
        if not ref:
            raise DataError(f"{path}: line {pr.line}: the label has no reference_solution (preprocess the data "
                            "with --keep_reference to train on it)")
        if near_misses:
            try:
                ref = normalized(ref)
            except SyntaxError as e:
                raise DataError(f"{path}: line {pr.line}: the reference_solution does not parse: {e}") from None
        # drawn, not deduplicated: repeats keep the kinds in MUTATIONS's proportions
        variants = [v for v in (near_miss(ref, rng) for _ in range(near_misses)) if v not in (None, ref)]
        examples.append((pr.messages, response_for(ref, pr.answer_format)))
        misses.append([response_for(v, pr.answer_format) for v in variants])
    return examples, misses


@dataclass(frozen=True)
class SFTConfig:
    steps: int = 600
    batch_size: int = 32
    lr: float = 1e-3
    warmup_steps: int = 30
    weight_decay: float = 0.01
    seed: int = 0
    max_len: int = 512
    log_every: int = 50
    # share of drawn examples whose target is one of the row's near misses instead of its reference
    noise: float = 0.0
    # batches drawn together and split by length (transformers' group_by_length, in spirit): less padding, but
    # batches of like problems; its warm starts were weaker (docs/learning_check.md), so 1: off
    group_batches: int = 1


def encode_examples(tokenizer, examples: list[tuple[list | str, str]], max_len: int) -> list[tuple[list[int], int]]:
    """(token ids, prompt length) per example; ValueError naming the first one longer than max_len."""
    prompts = encode_prompts(tokenizer, render_prompts(tokenizer, [m for m, _ in examples]))
    out = []
    for i, (p, (_, resp)) in enumerate(zip(prompts, examples, strict=True)):
        r = tokenizer(resp, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
        if len(p) + len(r) > max_len:
            raise ValueError(f"example {i} has {len(p) + len(r)} tokens, more than max_len={max_len}")
        out.append((p + r, len(p)))
    return out


def shared_prefix(rows: list[tuple[list[int], int]]) -> list[int]:
    """The longest token prefix every row's prompt starts with, ending before the shortest prompt does."""
    if not rows:
        return []
    first, _ = rows[0]
    n = min(plen for _, plen in rows) - 1
    for ids, _ in rows[1:]:
        n = next((i for i in range(n) if ids[i] != first[i]), n)
    return first[:max(n, 0)]


def _batch(rows: list[tuple[list[int], int]], pad: int, device, skip: int = 0):
    """Right-padded (ids, mask, labels) of the rows with their first `skip` tokens left out."""
    import torch

    width = max(len(ids) for ids, _ in rows) - skip
    ids = torch.full((len(rows), width), pad, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    labels = torch.full((len(rows), width), -100, dtype=torch.long)
    for i, (seq, plen) in enumerate(rows):
        seq = seq[skip:]
        ids[i, :len(seq)] = torch.tensor(seq)
        mask[i, :len(seq)] = 1
        labels[i, plen - skip:len(seq)] = torch.tensor(seq[plen - skip:])
    return ids.to(device), mask.to(device), labels.to(device)


def batch_loss(model, rows: list[tuple[list[int], int]], pad: int, prefix: list[int]):
    """Mean next-token loss over the rows' response tokens, `prefix` (every row's first tokens) run once.

    The prefix's keys and values are computed once and given to every row (evaluation.prefill.prefix_cache), so
    its forward and backward cost 1/len(rows) of running it per row; the loss and gradients are those of the full
    rows.
    """
    import torch
    import torch.nn.functional as F

    device = next(model.parameters()).device
    ids, mask, labels = _batch(rows, pad, device, skip=len(prefix))
    past = None
    if prefix:
        n = len(rows)
        past = prefix_cache(model, torch.tensor([prefix], device=device), None,
                            torch.zeros(n, dtype=torch.long, device=device))
        mask = torch.cat([torch.ones((n, len(prefix)), dtype=mask.dtype, device=device), mask], dim=1)
    logits = model(input_ids=ids, attention_mask=mask, past_key_values=past, use_cache=False).logits
    return F.cross_entropy(logits[:, :-1].flatten(0, 1).float(), labels[:, 1:].flatten(), ignore_index=-100)


def draw_batches(data: list[tuple[list[int], int]], alts: list[list[tuple[list[int], int]]], cfg: SFTConfig,
                 rng: random.Random) -> Iterator[list[tuple[list[int], int]]]:
    """Endless batches of cfg.batch_size rows from shuffled passes over `data`, each row replaced by one of
    its `alts` with probability cfg.noise; cfg.group_batches batches (at most a pass) are drawn at a time,
    sorted by length and cut, so that each pads to about its own rows' length, and given in random order."""
    order: list[int] = []
    # a group within one pass over the data, or a small set's repeats would sort into batches of one row
    k = cfg.batch_size * max(1, min(cfg.group_batches, len(data) // cfg.batch_size))
    while True:
        while len(order) < k:
            order += rng.sample(range(len(data)), len(data))
        idx, order = order[:k], order[k:]
        drawn = sorted((rng.choice(alts[i]) if alts[i] and rng.random() < cfg.noise else data[i] for i in idx),
                       key=lambda r: len(r[0]))
        group = [drawn[j:j + cfg.batch_size] for j in range(0, k, cfg.batch_size)]
        rng.shuffle(group)
        yield from group


def train(model, tokenizer, examples: list[tuple[list | str, str]], cfg: SFTConfig,
          log: Callable[[dict], None] = lambda _: None, near_misses: list[list[str]] | None = None) -> list[dict]:
    """cfg.steps AdamW steps (linear warmup, cosine decay) on shuffled, length-grouped batches; returns the
    logged records.

    With cfg.noise > 0, each drawn example whose row has near misses (load_demonstrations) is, with that
    probability, one of them drawn uniformly instead of the reference.
    """
    import torch

    device = next(model.parameters()).device
    data = encode_examples(tokenizer, examples, cfg.max_len)
    alts: list[list[tuple[list[int], int]]] = [[] for _ in data]
    if cfg.noise > 0 and near_misses:
        flat = [(i, (examples[i][0], r)) for i, rs in enumerate(near_misses) for r in rs]
        for (i, _), enc in zip(flat, encode_examples(tokenizer, [e for _, e in flat], cfg.max_len), strict=True):
            alts[i].append(enc)
    rng = random.Random(cfg.seed)
    torch.manual_seed(cfg.seed)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay, betas=(0.9, 0.95))

    def lr_at(step: int) -> float:
        if step < cfg.warmup_steps:
            return cfg.lr * (step + 1) / cfg.warmup_steps
        done = (step - cfg.warmup_steps) / max(1, cfg.steps - cfg.warmup_steps)
        return cfg.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(done, 1.0))))

    autocast = torch.autocast("cuda", dtype=torch.bfloat16) if device.type == "cuda" else torch.autocast(
        "cpu", enabled=False)
    prefix = shared_prefix(data)
    batches = draw_batches(data, alts, cfg, rng)
    records, t0, running = [], time.monotonic(), 0.0
    model.train()
    for step in range(cfg.steps):
        rows = next(batches)
        for g in opt.param_groups:
            g["lr"] = lr_at(step)
        with autocast:
            loss = batch_loss(model, rows, tokenizer.pad_token_id, prefix)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        running += loss.item()
        if (step + 1) % cfg.log_every == 0 or step + 1 == cfg.steps:
            n = (step % cfg.log_every) + 1
            rec = {"step": step + 1, "loss": round(running / n, 4), "lr": lr_at(step),
                   "seconds": round(time.monotonic() - t0, 1)}
            records.append(rec)
            log(rec)
            running = 0.0
    model.eval()
    return records

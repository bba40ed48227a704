"""The warm start's batches: the shared prompt prefix run once must not change the loss or its gradients."""

from __future__ import annotations

import itertools
import random

import pytest
import torch

from coderl.learning_check.model import build_model
from coderl.learning_check.sft import SFTConfig, _batch, batch_loss, draw_batches, shared_prefix, train
from coderl.learning_check.tokenizer import build_tokenizer

PROMPT = "<|im_start|>system\nSolve it.<|im_end|>\n<|im_start|>user\nWrite f(x) where x is {}.<|im_end|>\n"


def _rows(tok, n: int = 12, seed: int = 0) -> list[tuple[list[int], int]]:
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        p = tok(PROMPT.format(" and ".join(["a list"] * rng.randint(1, 4))), add_special_tokens=False)["input_ids"]
        r = tok("def f(x):\n    return x" + " + 1" * rng.randint(0, 6 + i % 3), add_special_tokens=False)["input_ids"]
        rows.append((p + r + [tok.eos_token_id], len(p)))
    return rows


@pytest.fixture(scope="module")
def tok():
    return build_tokenizer([PROMPT.format("a list and a list"), "def f(x):\n    return x + 1 + 1"] * 20, 300)


def test_shared_prefix_stops_before_the_shortest_prompt():
    assert shared_prefix([([1, 2, 3, 9], 3), ([1, 2, 4, 9], 3)]) == [1, 2]
    # a prompt that is all prefix keeps its last token out, so that its first label has a logit in the batch
    assert shared_prefix([([1, 2, 3, 9], 3), ([1, 2, 3, 8, 9], 4)]) == [1, 2]
    assert shared_prefix([([5, 2], 1), ([1, 2], 1)]) == []
    assert shared_prefix([]) == []


@pytest.mark.parametrize("with_prefix", [True, False])
def test_batch_loss_equals_the_full_rows_loss_and_gradients(tok, with_prefix):
    rows = _rows(tok)
    prefix = shared_prefix(rows) if with_prefix else []
    assert not with_prefix or len(prefix) > 5
    model = build_model(tok, "nano", seed=0)

    def grads(loss):
        model.zero_grad(set_to_none=True)
        loss.backward()
        return loss.item(), [p.grad.clone() for p in model.parameters()]

    ids, mask, labels = _batch(rows, tok.pad_token_id, "cpu")
    want, want_g = grads(model(input_ids=ids, attention_mask=mask, labels=labels).loss)
    got, got_g = grads(batch_loss(model, rows, tok.pad_token_id, prefix))
    assert got == pytest.approx(want, rel=1e-5)
    for a, b in zip(got_g, want_g, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-6)


def test_draw_batches_groups_by_length_and_covers_every_row(tok):
    rows = _rows(tok, n=64, seed=1)
    pads = {}
    for group in (1, 4):
        cfg = SFTConfig(batch_size=8, group_batches=group)
        drawn = list(itertools.islice(draw_batches(rows, [[] for _ in rows], cfg, random.Random(0)), 8))
        # one pass over the data: every row exactly once
        assert sorted(map(id, (r for b in drawn for r in b))) == sorted(map(id, rows))
        assert all(len(b) == 8 for b in drawn)
        pads[group] = sum(max(len(s) for s, _ in b) * len(b) - sum(len(s) for s, _ in b) for b in drawn)
    assert pads[4] < pads[1] / 2
    # a group never spans more than one pass: 4 rows in batches of 2 are grouped 2 batches at a time, not 8
    few = [([1, 2, 3] + [4] * n, 2) for n in range(4)]
    two = list(itertools.islice(draw_batches(few, [[] for _ in few], SFTConfig(batch_size=2, group_batches=8),
                                             random.Random(0)), 2))
    assert sorted(map(id, (r for b in two for r in b))) == sorted(map(id, few))


def test_train_on_grouped_prefix_batches_lowers_the_loss(tok):
    examples = [([{"role": "system", "content": "Solve it."},
                  {"role": "user", "content": f"Write f(x) where x is {' and '.join(['a list'] * (i % 3 + 1))}."}],
                 "def f(x):\n    return x" + " + 1" * (i % 5)) for i in range(16)]
    model = build_model(tok, "nano", seed=0)
    recs = train(model, tok, examples, SFTConfig(steps=30, batch_size=4, lr=1e-2, warmup_steps=3, log_every=10,
                                                 group_batches=2))
    assert [r["step"] for r in recs] == [10, 20, 30]
    assert recs[-1]["loss"] < recs[0]["loss"] * 0.7

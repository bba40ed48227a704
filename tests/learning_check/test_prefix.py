"""GRPO with each distinct prompt run once must give TRL 0.17's log-probs, gradients and samples."""

from __future__ import annotations

import types

import pytest
import torch
from trl import GRPOTrainer

from coderl.learning_check.prefix import SharedPrompt, per_token_logps
from coderl.learning_check.trl_grpo import build_parser
from coderl.rewards.evaluation import prefill

VOCAB, PROMPT, COMPLETION, GROUP = 300, 30, 20, 4


class _Temperature:
    temperature = 0.7


def _model():
    from transformers import Qwen2Config, Qwen2ForCausalLM

    from coderl.learning_check.model import SHAPES

    torch.manual_seed(0)
    return Qwen2ForCausalLM(Qwen2Config(vocab_size=VOCAB, max_position_embeddings=256, tie_word_embeddings=True,
                                        **SHAPES["nano"]))


def _batch(prompts: int, group: int, seed: int = 0):
    """TRL's layout: left-padded prompts, each repeated `group` times, right-padded completions; rows shuffled."""
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(1, VOCAB, (prompts, PROMPT), generator=g)
    mask = torch.ones_like(ids)
    for i in range(prompts):  # prompts of different lengths
        ids[i, :i * 5], mask[i, :i * 5] = 0, 0
    n = prompts * group
    completions = torch.randint(1, VOCAB, (n, COMPLETION), generator=g)
    cmask = (torch.arange(COMPLETION) < torch.randint(1, COMPLETION + 1, (n, 1), generator=g)).long()
    order = torch.randperm(n, generator=g)
    ids = torch.cat([ids.repeat_interleave(group, 0), completions], 1)[order]
    mask = torch.cat([mask.repeat_interleave(group, 0), cmask], 1)[order]
    return ids, mask, cmask[order]


def _trl(model, ids, mask):
    # TRL's own method, without its profiling wrapper (which needs a whole trainer)
    return GRPOTrainer._get_per_token_logps.__wrapped__(_Temperature(), model, ids, mask, COMPLETION)


def _grads(model, logps, weights):
    model.zero_grad(set_to_none=True)
    (logps * weights).sum().backward()
    return [p.grad.clone() for p in model.parameters()]


@pytest.mark.parametrize("prompts,group", [(3, 4), (5, 1)])  # (5, 1): no prompt repeats, the full rows' path
def test_logps_and_gradients_equal_trls(prompts, group):
    model = _model()
    ids, mask, cmask = _batch(prompts, group)
    want = _trl(model, ids, mask)
    got = per_token_logps(model, ids, mask, COMPLETION, _Temperature.temperature)
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
    weights = torch.randn(want.shape, generator=torch.Generator().manual_seed(1)) * cmask
    for a, b in zip(_grads(model, got, weights), _grads(model, want, weights), strict=True):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)


class _Trainer(SharedPrompt, _Temperature):
    """The mixin over the parts of TRL 0.17's GRPOTrainer it uses (the whole trainer: test_trl_grpo.py's dry run)."""

    def __init__(self, model):
        self.model, self.accelerator = model, types.SimpleNamespace(unwrap_model=lambda m: m)
        super().__init__()


def test_the_mixin_chunks_as_trl_does():
    model = _model()
    ids, mask, _ = _batch(3, 4, seed=2)
    with torch.no_grad():
        want = _trl(model, ids, mask)
        got = _Trainer(model)._get_per_token_logps(model, ids, mask, COMPLETION, batch_size=5)  # chunks split groups
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


def test_the_mixin_samples_as_trl_does():
    from transformers import GenerationConfig

    model = _model()
    ids, mask, _ = _batch(3, 4, seed=3)
    prompts, prompt_mask = ids[:, :PROMPT], mask[:, :PROMPT]
    config = GenerationConfig(do_sample=True, max_new_tokens=8, pad_token_id=0, eos_token_id=1, top_k=0)
    torch.manual_seed(4)
    want = model.generate(prompts, attention_mask=prompt_mask, generation_config=config)
    _Trainer(model)
    assert model.generate.func is prefill.generate  # as TRL 0.17 calls it: prompt ids positional
    torch.manual_seed(4)
    assert torch.equal(model.generate(prompts, attention_mask=prompt_mask, generation_config=config), want)


def test_on_by_default_and_off_by_flag():
    args = ["--model", "m", "--train", "t", "--out_dir", "o"]
    assert build_parser().parse_args(args).shared_prompt == 1
    assert build_parser().parse_args([*args, "--shared_prompt", "0"]).shared_prompt == 0

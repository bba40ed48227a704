"""rewards/evaluation/prefill.py: prompts shared by rows of a batch run once, on a random Qwen2 through real HF generate."""

from __future__ import annotations

import pytest
import torch

from coderl.rewards.evaluation import prefill

VOCAB, EOS, PAD = 300, 5, 0


@pytest.fixture(scope="module")
def model():
    from transformers import Qwen2Config, Qwen2ForCausalLM

    from coderl.learning_check.model import SHAPES

    torch.manual_seed(0)
    return Qwen2ForCausalLM(Qwen2Config(vocab_size=VOCAB, max_position_embeddings=256, tie_word_embeddings=True,
                                        eos_token_id=EOS, pad_token_id=PAD, **SHAPES["nano"])).eval()


def _prompts(group: int):
    """3 left-padded prompts of different lengths, each repeated `group` times, rows shuffled."""
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(EOS + 1, VOCAB, (3, 20), generator=g)
    mask = torch.ones_like(ids)
    ids[0, :6], mask[0, :6], ids[2, :2], mask[2, :2] = PAD, 0, PAD, 0
    order = torch.randperm(3 * group, generator=g)
    return ids.repeat_interleave(group, 0)[order], mask.repeat_interleave(group, 0)[order]


def test_distinct_rows_maps_every_row_to_its_prefix():
    ids, mask = _prompts(4)
    (d_ids, d_mask), rows = prefix = prefill.distinct_rows(ids, mask)
    assert len(d_ids) == 3 and torch.equal(d_ids[rows], ids) and torch.equal(d_mask[rows], mask)
    assert prefill.distinct_rows(*_prompts(1)) is None and prefix is not None


def _config(**kw):
    from transformers import GenerationConfig

    return GenerationConfig(max_new_tokens=12, pad_token_id=PAD, eos_token_id=EOS, **kw)


def test_samples_are_plain_generates_and_each_prompt_prefills_once(model):
    ids, mask = _prompts(4)
    sample = _config(do_sample=True, temperature=1.0, top_k=0, top_p=1.0)
    torch.manual_seed(1)
    want = model.generate(input_ids=ids, attention_mask=mask, generation_config=sample)
    widths = []
    hook = model.get_decoder().register_forward_pre_hook(
        lambda _m, _a, kw: widths.append(tuple(kw["input_ids"].shape)), with_kwargs=True)
    try:
        torch.manual_seed(1)
        got = prefill.generate(model, ids, mask, generation_config=sample)
    finally:
        hook.remove()
    assert torch.equal(got, want)  # the same draws from the same logits
    assert widths[0] == (3, 19) and widths[1] == (12, 1)  # 3 prompts but their last token once, then each row's last
    greedy = _config(do_sample=False, output_scores=True, return_dict_in_generate=True)
    plain = model.generate(input_ids=ids, attention_mask=mask, generation_config=greedy)
    shared = prefill.generate(model, ids, mask, generation_config=greedy)
    for a, b in zip(shared.scores, plain.scores, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-5)


def test_distinct_prompts_generate_as_plain(model):
    ids, mask = _prompts(1)
    greedy = _config(do_sample=False)
    assert torch.equal(prefill.generate(model, ids, mask, generation_config=greedy),
                       model.generate(input_ids=ids, attention_mask=mask, generation_config=greedy))

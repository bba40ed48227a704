"""data/prompt_budget.py: prompt lengths equal the token count of OpenRLHF 0.5.7's own prompt (its real
preprocess_data from the release wheel, then tokenize_fn's encoding) under a real BPE tokenizer."""

from __future__ import annotations

import pytest

from coderl.data.prompt_budget import load_tokenizer, prompt_lengths
from tests.support import humaneval_rows, openrlhf_preprocess_data, tiny_checkpoint

pytestmark = pytest.mark.timeout(300)


def test_lengths_are_what_openrlhf_truncates(tmp_path, openrlhf_wheel):
    tok = load_tokenizer(str(tiny_checkpoint(tmp_path / "tiny")))
    system = {"role": "system", "content": "You are a helpful programming assistant."}
    rows = [{"input": [system, {"role": "user", "content": p["prompt"]}]} for p in humaneval_rows()[:300:7]]
    rows.append({"input": "a bare string is one user message"})
    preprocess_data = openrlhf_preprocess_data(openrlhf_wheel)
    reference = [len(tok(preprocess_data(r, input_key="input", apply_chat_template=tok.apply_chat_template),
                         add_special_tokens=False)["input_ids"]) for r in rows]
    lengths = prompt_lengths(tok, [r["input"] for r in rows])
    assert lengths == reference and len(set(lengths)) > 10  # varied lengths, each exactly OpenRLHF's


def test_a_tokenizer_that_does_not_load_is_named(tmp_path):
    with pytest.raises(ValueError, match=f"cannot load the tokenizer at {tmp_path / 'none'}"):
        load_tokenizer(str(tmp_path / "none"))

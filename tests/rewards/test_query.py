"""rewards/query.py: template splitting, pads and end tokens, normalisation (the lookup walk: test_prompt_index.py)."""

from __future__ import annotations

import pytest

from coderl.rewards.query import clean_response, normalize, split_templated, strip_leading_pads
from tests.rewards.test_extract import CODE, LOOKALIKES
from tests.support import SYSTEM_THINK, block, chatml, llama3, think


def test_chatml_split_finds_last_user_message_system_and_response():
    q = chatml(SYSTEM_THINK, "Write f.", think(CODE))
    s = split_templated(q)
    assert s.template == "chatml"
    assert s.user == "Write f."
    assert s.system == SYSTEM_THINK
    assert s.response.startswith("<think>") and s.response.endswith("<|endoftext|>")
    assert clean_response(s.response) == think(CODE)


def test_llama3_split_and_clean():
    q = llama3("sys", "  Write f.  ", block(CODE))
    s = split_templated(q)
    assert (s.template, s.user, s.system) == ("llama3", "Write f.", "sys")
    assert clean_response(s.response) == block(CODE)


def test_raw_prompt_is_not_a_template_and_pads_strip():
    assert split_templated("<|endoftext|><|endoftext|>Write f.def f(): pass") is None
    assert strip_leading_pads("<|endoftext|> <s><|endoftext|>Write f.") == "Write f."


@pytest.mark.parametrize("tail", ["<|im_end|><|endoftext|><|endoftext|>", "<|eot_id|><|end_of_text|>",
                                  "</s><pad><pad>", "<|endoftext|>", "", "  \n"])
def test_clean_response_drops_eos_and_pads(tail):
    assert clean_response(block(CODE) + tail) == block(CODE)


@pytest.mark.parametrize("tok", LOOKALIKES)
def test_clean_response_removes_tokens_only_at_the_ends(tok):
    body = f"Here:\n```python\nprint('{tok}')  # {tok}\n```\nDone {tok} here."
    for lead, tail in (("", ""), ("<s>", "</s>"), ("  <pad>", "<|im_end|><|endoftext|>"), ("\n", "<eos> \n")):
        assert clean_response(lead + body + tail) == body
    assert clean_response("<|im_end|>" * 3) == "" and clean_response("  ") == ""
    # A tokenizer's own special tokens (passed in) likewise only at the ends.
    assert clean_response("<tool>x<tool> y<tool>", ("<tool>",)) == "x<tool> y"


def test_normalize_ignores_whitespace_differences():
    assert normalize(" a\n b\t c ") == normalize("a b c") == "abc"

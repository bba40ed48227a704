"""rewards/extract.py: template splitting, special-token stripping, code extraction, format check."""

from __future__ import annotations

import pytest

from coderl.rewards.extract import (
    clean_response,
    extract_code,
    fenced_blocks,
    format_ok,
    normalize,
    split_templated,
    strip_leading_pads,
)
from tests.support import SYSTEM_THINK, block, chatml, llama3, think

CODE = "def f(x):\n    return x + 1"


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


def test_clean_response_removes_stray_special_tokens_but_keeps_markup_in_code():
    text = "```python\nprint('<s>bold</s>')<|im_start|>\n```"
    assert clean_response(text) == "```python\nprint('<s>bold</s>')\n```"


def test_normalize_ignores_whitespace_differences():
    assert normalize(" a\n b\t c ") == normalize("a b c") == "abc"


def test_extraction_order_answer_then_python_block_then_block_then_raw():
    assert extract_code(think(CODE)) == extract_code(think(CODE))
    e = extract_code(think(CODE))
    assert (e.code.strip(), e.source) == (CODE, "answer_block")
    e = extract_code("<think>x</think><answer>\n" + CODE + "\n</answer>")
    assert (e.code.strip(), e.source) == (CODE, "answer")
    # the answer wins over blocks outside it
    e = extract_code("```python\nwrong()\n```\n<answer>```python\n" + CODE + "\n```</answer>")
    assert e.code.strip() == CODE
    # last python block wins over an earlier one and over a later non-python block
    e = extract_code("```python\nfirst()\n```\ntext\n```python\n" + CODE + "\n```\n```text\nout\n```")
    assert (e.code.strip(), e.source) == (CODE, "python_block")
    e = extract_code("```\nfirst()\n```\n```js\n" + CODE + "\n```")
    assert (e.code.strip(), e.source) == (CODE, "block")
    e = extract_code(CODE)
    assert (e.code, e.source) == (CODE, "raw")


def test_missing_or_unparsable_answer_is_none_not_an_exception():
    for text in ["", "   ", "I cannot solve this.", "def broken(:\n  pass", "<answer></answer>",
                 "<answer>", "\x00\x00", "(" * 10000]:
        e = extract_code(text)
        assert e.code is None and e.source == "none"


def test_fence_not_on_its_own_line_is_still_found():
    blocks = fenced_blocks("Sure! ```python\n" + CODE + "```")
    assert blocks and blocks[-1][1].strip() == CODE


def test_format_think_answer():
    good = think(CODE)
    assert format_ok(good, "think_answer", extract_code(good))
    only_block = block(CODE)
    assert not format_ok(only_block, "think_answer", extract_code(only_block))
    no_think = "<answer>```python\n" + CODE + "\n```</answer>"
    assert not format_ok(no_think, "think_answer", extract_code(no_think))
    trailing = good + "\nextra text"
    assert not format_ok(trailing, "think_answer", extract_code(trailing))
    reversed_order = "<answer>```python\nx=1\n```</answer><think>hm</think>"
    assert not format_ok(reversed_order, "think_answer", extract_code(reversed_order))
    empty_answer = "<think>hm</think><answer>   </answer>"
    assert not format_ok(empty_answer, "think_answer", extract_code(empty_answer))


def test_format_code_block_and_any():
    assert format_ok(block(CODE), "code_block", extract_code(block(CODE)))
    assert not format_ok(CODE, "code_block", extract_code(CODE))
    assert format_ok(CODE, "any", extract_code(CODE))
    assert not format_ok("no code here", "any", extract_code("no code here"))

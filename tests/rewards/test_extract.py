"""rewards/extract.py: code extraction (one span as written, from the cleaned response), format check."""

from __future__ import annotations

import pytest

from coderl.rewards.extract import extract_code, fenced_blocks, format_ok
from coderl.rewards.query import clean_response
from coderl.rewards.syntax import parses
from tests.support import block, think

CODE = "def f(x):\n    return x + 1"


# Text a model can write as plain characters that looks like structure: special tokens, end markers, pads,
# reasoning/answer tags, fences not at a line start. Inside the graded code each must stay as written and
# must not change which span is graded.
LOOKALIKES = ["<|im_start|>", "<|im_end|>", "<|endoftext|>", "<|eot_id|>", "<|end|>", "<｜end▁of▁sentence｜>",
              "<s>", "</s>", "<pad>", "<end_of_turn>", "[PAD]", "<think>", "</think>", "<answer>", "</answer>",
              "<answer></answer>", "</answer><answer>", "</think>\n<answer>", "x ```python", "~~ ~"]


def _uses(tok: str) -> list[str]:
    """Programs that hold tok: in a comment, a string literal, a triple-quoted string's own line."""
    return [f"def f(x):\n    return x + 1  # {tok}\n", f"S = {tok!r}\ndef f(x):\n    return x + 1\n",
            f'D = """\n{tok}\n"""\ndef f(x):\n    return x + 1\n']


@pytest.mark.parametrize("tok", LOOKALIKES)
def test_the_graded_code_is_the_final_answer_exactly_as_written(tok):
    """Nothing inside the final answer's code is deleted or moves where the answer starts or ends; an earlier
    draft (in the reasoning, or before the answer) is never graded instead."""
    draft = "def f(x):\n    return 0\n"
    for code in _uses(tok):
        response = (f"<think>\nA draft:\n```python\n{draft}```\n</think>\n<answer>\n```python\n{code}```\n"
                    "</answer>")
        for tail in ("", "<|im_end|><|endoftext|><|endoftext|>", "</s><pad><pad>", "<|eot_id|>"):
            cleaned = clean_response(response + tail)
            assert cleaned == response, (tok, code)
            e = extract_code(cleaned, "f")
            assert (e.code, e.source) == (code, "answer_block"), (tok, code)
            assert format_ok(cleaned, "think_answer", e), (tok, code)
        block_only = f"Sure.\n```python\n{draft}```\nFinal:\n```python\n{code}```\n"
        assert extract_code(clean_response(block_only + "<|im_end|>"), "f").code == code, (tok, code)


def test_an_end_marker_written_inside_the_final_answer_does_not_cut_the_response():
    final = "def f(x):\n    return x + 1  # ends with <|im_end|> and <|endoftext|>\n"
    response = f"Draft:\n```python\ndef f(x):\n    return x\n```\nFinal:\n```python\n{final}```"
    assert extract_code(clean_response(response + "<|im_end|>")).code == final


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


def test_a_solution_followed_by_example_usage_is_graded_on_the_solution():
    sol = "def f(x):\n    return x + 1\n"
    usages = ["print(f(1))\n", "assert f(1) == 2\nassert f(2) == 3\n", "x = f(3)\nprint(x)\n",
              "if __name__ == '__main__':\n    print(f(1))\n"]
    for usage in usages:
        for lang in ("python", "py"):
            text = f"Solution:\n```python\n{sol}```\nExample usage:\n```{lang}\n{usage}```\n"
            assert extract_code(text, "f").code == sol, usage
            assert extract_code(text).code == usage, usage  # no entry point (a stdio script): the last block
            answer = f"<think>t</think>\n<answer>\n```python\n{sol}```\nUsage:\n```python\n{usage}```\n</answer>"
            e = extract_code(answer, "f")
            assert (e.code, e.source) == (sol, "answer_block") and format_ok(answer, "think_answer", e)
    # Output shown in a plain block after the solution: the Python block is graded.
    assert extract_code(f"```python\n{sol}```\nOutput:\n```\n2\n```", "f").code == sol


def test_the_final_block_that_defines_the_program_is_graded_over_earlier_drafts():
    first, final = "def f(x):\n    return 0\n", "def f(x):\n    return x + 1\n"
    usage = "print(f(1))\n"
    for text in (f"```python\n{first}```\n```python\n{final}```",
                 f"```python\n{first}```\n```python\n{final}```\n```python\n{usage}```"):
        assert extract_code(text, "f").code == final
    # What a later usage block holds cannot pick a block earlier than the last one defining the entry point.
    for trick in ("# def f(x): earlier\n", "'''\n```\n'''\n", "s = '</answer><answer>'\n", "s = '<|im_end|>'\n"):
        text = f"```python\n{first}```\n```python\n{final}```\n```python\n{trick}{usage}```"
        assert extract_code(text, "f").code in (final, trick + usage), trick
    # A final block that binds the entry point in any way is the graded one.
    for binds in ("f = lambda x: x + 1\n", "class f:\n    pass\n", "from math import floor as f\n",
                  "class Solution:\n    def f(self, x):\n        return x + 1\n"):
        assert extract_code(f"```python\n{first}```\n```python\n{binds}```", "f").code == binds


def test_a_response_cut_off_before_its_closing_fence_is_graded_when_it_compiles():
    code = "def f(x):\n    return x + 1\n"
    for text in (f"Here:\n```python\n{code}", f"<think>\nok\n</think>\n<answer>\n```python\n{code}"):
        e = extract_code(text, "f")
        assert (e.code, e.source) == (code, "truncated_block")
        assert not format_ok(text, "think_answer", e) and not format_ok(text, "code_block", e)
    raw = extract_code(f"<think>\nok\n</think>\n<answer>\n{code}", "f")  # an answer without a block, cut off
    assert (raw.code, raw.source) == (code.strip("\n"), "raw")
    cut = "def f(x):\n    return (x +"
    assert extract_code(f"Here:\n```python\n{cut}").source == "none"
    assert extract_code(f"<think>\nok\n</think>\n<answer>\n{cut}").source == "none"
    # An incomplete final block is not graded; the complete block before it is.
    e = extract_code(f"```python\n{code}```\nBetter:\n```python\n{cut}")
    assert (e.code, e.source) == (code, "python_block")


def test_unfinished_reasoning_has_no_answer():
    text = "<think>\nLet me try:\n```python\ndef f(x):\n    return x + 1\n```\nHmm, but"
    assert extract_code(text, "f") == extract_code(text) and extract_code(text).source == "none"
    # after the reasoning closes, only what follows it is the answer
    text = "<think>\n```python\ndef f(x):\n    return 0\n```\n</think>\n```python\ndef f(x):\n    return 1\n```"
    assert extract_code(text, "f").code == "def f(x):\n    return 1\n"


def test_an_answer_inside_the_reasoning_is_a_draft():
    draft, final = "def f(x):\n    return 0\n", "def f(x):\n    return x + 1\n"
    after = f"<think>\nTry:\n<answer>\n```python\n{draft}```\n</answer>\nNo.\n</think>\n```python\n{final}```"
    assert extract_code(after, "f").code == final and extract_code(after).code == final
    raw = f"<think>\n<answer>{draft}</answer>\n</think>\n{final}"
    assert extract_code(raw, "f").code == final.strip("\n")
    # a prompt that opened the reasoning: the response starts inside it
    assert extract_code(f"Try:\n<answer>\n{draft}</answer>\n</think>\n```python\n{final}```", "f").code == final
    # reasoning never closed: whatever it holds, answers included, is no final answer
    assert extract_code(f"<think>\n<answer>\n```python\n{final}```\n</answer>", "f").source == "none"
    # the final answer after the reasoning is still the last pair there
    both = f"<think>\n<answer>{draft}</answer>\n</think>\n<answer>\n```python\n{final}```\n</answer>"
    e = extract_code(both, "f")
    assert (e.code, e.source) == (final, "answer_block")


def test_the_block_that_defines_the_entry_point_is_decided_by_what_the_code_binds():
    sol = "def f(x):\n    return x + 1\n"
    # a later block that only looks like a definition (a nested helper, a comment, a string, a parameter)
    for later in ("def test():\n    def f(x):\n        return 0\n    assert f(1) == 0\n",
                  "# def f(x): the solution above\nprint(f(1))\n", "s = 'def f(x): pass'\nprint(s)\n",
                  "check = lambda f: f(1) == 2\nprint(check(f))\n"):
        assert extract_code(f"```python\n{sol}```\n```python\n{later}```", "f").code == sol, later
    # a later block that binds it in a form no line-based test sees
    for binds in ("g, f = None, lambda x: x + 1\n", "if True:\n    f = lambda x: x + 1\n",
                  "with open(__file__) as fh:\n    pass\n(f := lambda x: x + 1)\n", "ｆ = lambda x: x + 1\n",
                  "try:\n    from math import floor as f\nexcept ImportError:\n    pass\n"):
        assert extract_code(f"```python\n{sol}```\n```python\n{binds}```", "f").code == binds, binds
    # a final block that does not compile but names the entry point is the final attempt, not the draft before it
    broken = "def f(x):\n    return (x +\n"
    assert extract_code(f"```python\n{sol}```\n```python\n{broken}```", "f").code == broken


def test_choosing_a_block_compiles_at_most_max_chars_of_code():
    sol = "def f(x):\n    return x + 1\n"
    usage = "print(f(1))\n" * 50
    text = f"```python\n{sol}```\n" + f"```python\n{usage}```\n" * 40
    assert extract_code(text, "f").code == sol  # 40 usage blocks, all compiled: within the default budget
    assert extract_code(text, "f", max_chars=len(usage) * 3).code == usage  # past the budget: the last block


def test_choosing_a_block_ends_at_the_callers_time():
    """Blocks that name the entry point without binding it are each compiled; until (the request's deadline)
    ends the search wherever it is: the choice is unknown (OutOfTime), and the caller cuts the response."""
    import time

    from coderl.rewards.syntax import OutOfTime
    slow = "".join(f"```python\nx{i} = " + "lambda: " * 1200 + "f\n```\n" for i in range(6))  # ~0.5 s each
    parses("# padding\n" * 500 + "x = 1\n")  # the syntax helper runs: its start is not what is measured
    t0 = time.monotonic()
    with pytest.raises(OutOfTime):
        extract_code(slow, "f", until=t0 + 0.3)
    assert time.monotonic() - t0 < 1.0
    sol = "```python\ndef f(x):\n    return x\n```\n"
    assert extract_code(sol, "f", until=time.monotonic() + 30).code == "def f(x):\n    return x\n"


def test_tags_inside_code_blocks_are_code():
    code = "S = '<think>'\nT = '</answer>'\ndef f(x):\n    return x + 1\n"
    ok = f"<think>\nplan\n```python\nprint('<answer>')\n```\n</think>\n<answer>\n```python\n{code}```\n</answer>"
    assert extract_code(ok, "f").code == code and format_ok(ok, "think_answer", extract_code(ok, "f"))
    # a tag outside code is structure: a second answer after the think/answer pair breaks the format
    bad = ok + "\n<answer>x</answer>"
    assert not format_ok(bad, "think_answer", extract_code(bad, "f"))
    # a closing tag inside an unclosed block is code: no answer closes
    unclosed = "<think>t</think>\n<answer>\n```python\nx = 1\n</answer>"
    assert not format_ok(unclosed, "think_answer", extract_code(unclosed))


@pytest.mark.parametrize("entry", ["f", None])
def test_a_response_written_with_crlf_line_endings_is_graded_on_the_same_code(entry):
    # A closing fence followed by the \r of its \r\n never closed its block: the block ran to the end of the
    # response, swallowing </answer>, and an honest answer written with \r\n got no code at all.
    lf = "<think>x</think>\n<answer>\n```python\ndef f(x):\n    return x\n```\n</answer>"
    crlf = lf.replace("\n", "\r\n")
    got = {}
    for name, text in (("lf", lf), ("crlf", crlf)):
        e = extract_code(clean_response(text), entry)
        got[name] = (e.code.replace("\r\n", "\n") if e.code else None, e.source, format_ok(text, "think_answer", e))
    assert got["crlf"] == got["lf"] == ("def f(x):\n    return x\n", "answer_block", True)
    usage = crlf.replace("</answer>", "```python\r\nprint(f(1))\r\n```\r\n</answer>")  # a usage block after it
    assert extract_code(usage, entry).code == ("def f(x):\r\n    return x\r\n" if entry else "print(f(1))\r\n")


# Spellings of one response that Python and Markdown read alike: each is graded on the plain spelling's code
# (a response in CR alone had no fenced block; one starting with a BOM failed the format check; red team r27).
SPELLINGS = {"crlf": lambda t: t.replace("\n", "\r\n"), "cr": lambda t: t.replace("\n", "\r"),
             "bom": lambda t: "\ufeff" + t, "bom_cr": lambda t: "\ufeff" + t.replace("\n", "\r"),
             "bom_after_pads": lambda t: "<|endoftext|>\ufeff" + t}
_TRIPLE = 'def f(x):\n    s = """a\nb"""\n    return x + len(s)\n'


@pytest.mark.parametrize("how", sorted(SPELLINGS))
@pytest.mark.parametrize("form,fmt", [(think, "think_answer"), (block, "code_block"), (lambda c: c, "any")],
                         ids=["think", "block", "raw"])
def test_a_spelling_python_reads_alike_is_graded_on_the_plain_spellings_code(how, form, fmt):
    plain = clean_response(form(_TRIPLE) + "<|im_end|>")
    e = extract_code(plain, "f")
    assert e.code is not None and parses(e.code) and format_ok(plain, fmt, e)
    spelled = clean_response(SPELLINGS[how](form(_TRIPLE)) + "<|im_end|>")
    got = extract_code(spelled, "f")
    assert (got.code, got.source, format_ok(spelled, fmt, got)) == (e.code, e.source, True), how

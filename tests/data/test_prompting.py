"""Tests for data/prompting.py: exact signatures via ast, system prompts, question normalisation."""

from __future__ import annotations

import pytest

from coderl.data import prompting

pytestmark = pytest.mark.timeout(30)

REF = '''import math

@functools.cache
def area(r: float,
         scale: float = 1.0) -> float:  # multi-line header
    """Docstring."""
    return math.pi * r * r * scale

def one(x): return x

async def fetch(url, *, retries=3):
    pass

class Grid(Base):
    size = 3
    def __init__(self, n):
        self.n = n
    def cell(self, i, j) -> int:
        return i * j
    def _hidden(self):
        pass
'''


def test_signatures_exact_headers():
    sig = prompting.signatures(REF, {"area", "one", "fetch", "Grid"})
    assert "def area(r: float,\n         scale: float = 1.0) -> float:" in sig
    assert "# multi-line header" not in sig and "Docstring" not in sig and "@functools" not in sig
    assert "def one(x):" in sig and "return x" not in sig
    assert "async def fetch(url, *, retries=3):" in sig
    assert "class Grid(Base):" in sig and "    def __init__(self, n):" in sig
    assert "    def cell(self, i, j) -> int:" in sig and "_hidden" not in sig
    assert compile(sig, "<sig>", "exec")  # the block itself is valid Python
    assert prompting.signatures(REF, {"nothing"}) is None
    assert prompting.signatures("def broken(:\n", None) is None


def test_function_signature_top_level_and_method():
    assert prompting.function_signature(REF, "one").startswith("def one(x):")
    sol = "class Solution:\n    def twoSum(self, nums: List[int], target: int) -> List[int]:\n        pass\n"
    sig = prompting.function_signature(sol, "twoSum")
    assert sig.startswith("class Solution:\n    def twoSum(self, nums: List[int], target: int) -> List[int]:")
    assert prompting.function_signature(sol, "missing") is None


def test_referenced_names_in_source_order():
    tests = ["self.assertEqual(helper(1), 2)", "import solution\nsolution.main()"]
    assert prompting.referenced(["main", "unused", "helper"], tests) == ["main", "helper"]
    assert prompting.referenced(["add"], ["padding(3); add_one(2)"]) == []  # whole identifiers only
    assert prompting.referenced([], tests) == []


def test_normalize_question():
    assert prompting.normalize_question("  Add\tTWO \n numbers ") == prompting.normalize_question("add two numbers")


def test_system_prompts(tmp_path):
    sp = prompting.load_system_prompt()
    assert sp.answer_format == "think_answer" and "<think>" in sp.text and "<answer>" in sp.text
    cb = prompting.load_system_prompt("code_block")
    assert cb.answer_format == "code_block" and "```python" in cb.text and "<think>" not in cb.text
    f = tmp_path / "p.txt"
    f.write_text("custom\n")
    assert prompting.load_system_prompt(file=str(f), answer_format="code_block") == \
        prompting.SystemPrompt("custom", "code_block")
    with pytest.raises(ValueError, match="known: code_block, think_answer"):
        prompting.load_system_prompt("nope")


def test_user_prompt_modes():
    u = prompting.user_prompt("Sum it.", mode="function", signature="def f(a, b):\n    ...")
    assert "Sum it." in u and "def f(a, b):" in u
    assert "starter" in prompting.user_prompt("Q", mode="function", starter_code="class S:\n  def g(self): ").lower()
    assert "standard input" in prompting.user_prompt("Q", mode="stdio")
    assert "`g`" in prompting.user_prompt("Q", mode="function", entry_point="g")
    assert "def h(x):" in prompting.user_prompt("def h(x):\n    '''doc'''\n", mode="complete")

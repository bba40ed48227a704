"""rewards/syntax.py: the syntax component's check is compile(), in-process and in the helper for large code."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from coderl.rewards import syntax
from coderl.rewards.syntax import INLINE_CHARS, parses

# Each parses (ast.parse accepts it) but does not compile: the sandbox would report `syntax` for every test.
PARSES_ONLY = [
    "return 1\n",
    "def f(x):\n    return x\nreturn f\n",
    "yield 1\n",
    "x = [(yield) for _ in range(2)]\n",
    "nonlocal x\n",
    "def f(x):\n    global x\n",
    "def f():\n    x = 1\n    global x\n",
    "await g()\n",
    "break\n",
    "def f():\n    continue\n",
    "from __future__ import braces\n",
    "def f(a, a):\n    pass\n",
]
COMPILES = ["def f(x):\n    return x\n", "x = 1\n", "async def f():\n    await g()\n", "def f():\n    yield 1\n",
            "s = '\\d'\n", "assert (x, 'always true')\n"]  # the last two only warn


def _large(code: str) -> str:
    """code behind enough comment lines to go to the helper interpreter."""
    pad = "# padding\n" * (INLINE_CHARS // 10 + 1)
    return pad + code


@pytest.mark.parametrize("code", PARSES_ONLY)
@pytest.mark.parametrize("size", ["inline", "helper"])
def test_code_that_parses_but_does_not_compile_gets_no_syntax_credit(code, size):
    import ast

    ast.parse(code)  # the premise: the parser alone accepts it
    assert not parses(code if size == "inline" else _large(code))


@pytest.mark.parametrize("code", COMPILES)
@pytest.mark.parametrize("size", ["inline", "helper"])
def test_code_that_compiles_passes(code, size):
    assert parses(code if size == "inline" else _large(code))


def test_no_warning_about_the_program_reaches_stderr():
    # In a fresh interpreter with the default filters, as the server runs: pytest installs filters of its own.
    script = ("import sys\nfrom coderl.rewards.syntax import parses\n"
              f"assert all(parses(c) for c in {COMPILES!r})\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "Warning" not in out.stderr, out.stderr


def test_empty_and_garbage():
    assert not parses("") and not parses("  \n") and not parses("x = \x00") and not parses(_large("def ("))


def test_code_the_compiler_is_slow_on_is_compiled_out_of_process():
    # compile() is quadratic in the nesting of lambdas: a 16 K response of them held the server's GIL (its event
    # loop, /health) ~0.5 s when it was compiled in-process (the red team of the reward, r26). Past INLINE_CHARS
    # it goes to the helper, whose wait releases the GIL; below it the worst case is ~30 ms
    # (python -m scripts.bench.hostile).
    nested = ["x = " + "lambda: " * (INLINE_CHARS // 8 + k) + "1\n" for k in (-1, 0)]
    assert len(nested[0]) <= INLINE_CHARS < len(nested[1])
    for code, helped in zip(nested, (False, True), strict=True):
        syntax._helper.close()
        assert parses(code) and (syntax._helper._proc is not None) == helped


def test_a_check_is_bounded_by_size_and_by_time():
    # One helper answers one request at a time: a 2 MB response held every check behind it up to 30 s (the red
    # team of the reward, r27). Past max_chars code counts as not compiling without being compiled; within it a
    # request gets 1 s plus 20 us per character (20x what honest code takes), and a hostile one is cut there.
    honest = "def f(x):\n    return x + 1\n" * 2000
    assert parses(honest) and not parses(honest, max_chars=len(honest) - 1)
    syntax._helper.close()
    assert not parses("x = 1\n" * (syntax.MAX_CHARS // 6 + 1)) and syntax._helper._proc is None  # never sent
    slow = "x = " + "lambda: " * 2000 + "1\n"  # compiles (nested lambdas do, above), ~1 s here
    budget = syntax._BASE_S, syntax._PER_CHAR_S
    try:
        syntax._BASE_S, syntax._PER_CHAR_S = 0.05, 0.0
        t0 = time.monotonic()
        assert not parses(slow)  # cut at its budget
        assert time.monotonic() - t0 < 1.0  # not at the compile's end
    finally:
        syntax._BASE_S, syntax._PER_CHAR_S = budget
    assert parses(honest)  # the helper cut at its budget was replaced


def test_a_check_ends_at_its_callers_time():
    """until (a request's deadline) bounds a check wherever it waits: before it starts, in the helper's compile
    (abandoned, the helper replaced), and queued behind another check; the answer is unknown (OutOfTime)."""
    slow = "x = " + "lambda: " * 2700 + "1\n"  # 1-4 s of compile in the helper (its own bound: 1.4 s)
    small = _large("def f(x):\n    return x\n")
    with pytest.raises(syntax.OutOfTime):
        parses("def f(x):\n    return x\n", until=time.monotonic())  # no time: not even the inline compile
    with pytest.raises(syntax.OutOfTime):
        syntax.binds(slow, "f", until=time.monotonic() - 1)
    assert parses(small)  # the helper runs: its start is not what is measured
    t0 = time.monotonic()
    with pytest.raises(syntax.OutOfTime):
        parses(slow, until=t0 + 0.1)
    assert time.monotonic() - t0 < 0.6  # abandoned at until, not at the compile's end
    assert parses(small, until=time.monotonic() + 30)  # a fresh helper answers
    holder = _hold_helper(slow)  # another request's check holds the helper
    t0 = time.monotonic()
    with pytest.raises(syntax.OutOfTime):
        syntax.binds(small, "f", until=t0 + 0.2)
    assert time.monotonic() - t0 < 0.6  # did not wait for the other check
    holder.join()


def _hold_helper(code: str):
    """A thread whose check of `code` holds the syntax helper, started and holding it when this returns."""
    import threading

    holder = threading.Thread(target=parses, args=(code,))
    holder.start()
    for _ in range(500):
        if syntax._helper._lock.locked():
            break
        time.sleep(0.01)
    return holder


def test_a_budget_is_charged_with_the_checks_own_compiling_never_its_wait_for_the_helper():
    """A response's preparation budget (rewards/pipeline.py) bounds its own compiles: one that would exceed it is
    abandoned (OverBudget, the helper replaced), and what is left carries over between checks; waiting behind
    another request's check in the helper costs it nothing."""
    slow = "x = " + "lambda: " * 2700 + "1\n"  # 1-4 s of compile in the helper
    small = _large("def f(x):\n    return x\n")
    assert parses(small)  # the helper runs: its start is not what is measured
    budget = syntax.Budget(0.2)
    t0 = time.monotonic()
    with pytest.raises(syntax.OverBudget):
        syntax.binds(slow, "f", budget=budget)
    assert time.monotonic() - t0 < 0.7 and budget.left <= 0  # abandoned at the budget, not at the compile's end
    with pytest.raises(syntax.OverBudget):
        parses("def f(x):\n    return x\n", budget=budget)  # spent: not even an inline compile
    budget = syntax.Budget(0.3)
    assert syntax.binds(small, "f", budget=budget) and 0 < budget.left < 0.3  # an honest check: charged, answered
    holder = _hold_helper(slow)  # another request's check holds the helper for seconds
    t0 = time.monotonic()
    assert syntax.binds(small, "f", budget=budget)  # waited for the helper, then compiled within its budget
    assert time.monotonic() - t0 > 0.5 and budget.left > 0
    holder.join()


# (code, binds f?): what the compiled module binds, however it is spelled; scopes as Python has them.
BINDINGS = [
    ("def f(x):\n    return x\n", True), ("async def f():\n    pass\n", True), ("class f:\n    pass\n", True),
    ("f = lambda x: x\n", True), ("f: int = 1\n", True), ("a, (b, f) = 1, (2, 3)\n", True),
    ("[*f] = [1]\n", True), ("(f := 1)\n", True), ("[(f := x) for x in 'ab']\n", True),
    ("for f in [1]:\n    pass\n", True), ("with open('x') as f:\n    pass\n", True),
    ("if True:\n    def f():\n        pass\n", True), ("try:\n    from math import floor as f\nexcept E:\n    pass\n", True),
    ("import f.path\n", True), ("ｆ = 1\n", True),  # NFKC: Python reads ｆ as f
    ("try:\n    pass\nexcept E as f:\n    pass\n", True),
    ("match 1:\n    case f:\n        pass\n", True),
    ("class Solution:\n    def f(self, x):\n        return x\n", True), ("class Solution:\n    f = staticmethod(g)\n", True),
    ("print(f(1))\n", False), ("def g():\n    def f():\n        pass\n", False), ("def g():\n    f = 1\n", False),
    ("[1 for f in 'ab']\n", False), ("g = lambda f: f\n", False), ("class C:\n    def f(self):\n        pass\n", False),
    ("# def f(x):\nx = 1\n", False), ("s = 'def f(x): pass'\n", False), ("import os.f\n", False),
    ("from math import f as g\n", False), ("from math import *\n", False),  # the sandbox's stdlib has no such name
]


@pytest.mark.parametrize("code,bound", BINDINGS)
@pytest.mark.parametrize("size", ["inline", "helper"])
def test_binds_is_what_the_compiled_code_binds(code, bound, size):
    text = code if size == "inline" else _large(code)
    assert syntax.binds(text, "f") is bound
    assert syntax.binds(text + "return 1\n", "f") is None  # does not compile: undecided, as parses says

"""The grammar of the synthetic task: small typed steps, each as a spec phrase, a code line and Python.

A problem is a chain of steps applied to one variable ``x`` (see data/synthetic/tasks.py). Every step
exists three times over, kept side by side so they cannot drift apart: the words of the spec, the line
of the reference solution, and a Python function that computes the expected test outputs (the
reference code is never executed in-process; ``preprocess.py --verify`` runs it in the sandbox and so
checks the two against each other).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

DOMAINS = ("int", "str", "list")
DOMAIN_WORDS = {"int": "an integer", "str": "a string of lowercase letters", "list": "a list of integers"}
LETTERS = "abcdef"  # inputs use few letters so that replace/count/remove steps change something


@dataclass(frozen=True)
class Primitive:
    """One step: x (of domain `takes`) -> x (of domain `gives`)."""

    name: str  # stable id, e.g. "list.add"; a problem's structure is its tuple of names
    takes: str
    gives: str
    phrase: str  # spec words, with {c} / {a} / {b} for the constants
    code: str  # body line(s) of `def f(x):`, 4-space indented, same placeholders
    fn: Callable[..., Any]  # (x, **consts) -> new x
    consts: dict[str, tuple] | None = None  # placeholder -> the values it may take

    def sample_consts(self, rng) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for k, values in (self.consts or {}).items():
            choices = [v for v in values if v not in out.values()]  # replace 'a' with 'a' says nothing
            out[k] = rng.choice(choices)
        return out

    def words(self, consts: dict[str, Any]) -> str:
        return self.phrase.format(**consts)

    def lines(self, consts: dict[str, Any]) -> str:
        return self.code.format(**consts)


def _p(name, takes, gives, phrase, code, fn, **consts) -> Primitive:
    return Primitive(name, takes, gives, phrase, "    " + code.replace("\n", "\n    "), fn, consts or None)


_SMALL = tuple(range(2, 10))
_FACTORS = tuple(range(2, 6))
_THRESHOLDS = tuple(range(0, 13))
_COUNTS = tuple(range(1, 5))
_CHARS = tuple(LETTERS)
_SUFFIXES = tuple(LETTERS) + ("ab", "cd", "ef", "xy", "zz")

PRIMITIVES: tuple[Primitive, ...] = (
    # integers
    _p("int.add", "int", "int", "add {c}", "x = x + {c}", lambda x, c: x + c, c=_SMALL),
    _p("int.sub", "int", "int", "subtract {c}", "x = x - {c}", lambda x, c: x - c, c=_SMALL),
    _p("int.mul", "int", "int", "multiply it by {c}", "x = x * {c}", lambda x, c: x * c, c=_FACTORS),
    _p("int.floordiv", "int", "int", "divide it by {c}, rounding down", "x = x // {c}", lambda x, c: x // c,
       c=_FACTORS),
    _p("int.mod", "int", "int", "take the remainder modulo {c}", "x = x % {c}", lambda x, c: x % c, c=_SMALL),
    _p("int.neg", "int", "int", "negate it", "x = -x", lambda x: -x),
    _p("int.abs", "int", "int", "take its absolute value", "x = abs(x)", abs),
    _p("int.square", "int", "int", "square it", "x = x * x", lambda x: x * x),
    _p("int.min", "int", "int", "cap it at {c}", "x = min(x, {c})", lambda x, c: min(x, c), c=_THRESHOLDS),
    _p("int.max", "int", "int", "raise it to at least {c}", "x = max(x, {c})", lambda x, c: max(x, c),
       c=_THRESHOLDS),
    _p("int.halve_even", "int", "int", "if it is even, halve it", "if x % 2 == 0:\n    x = x // 2",
       lambda x: x // 2 if x % 2 == 0 else x),
    _p("int.sub_if_gt", "int", "int", "if it is greater than {c}, subtract {c}", "if x > {c}:\n    x = x - {c}",
       lambda x, c: x - c if x > c else x, c=_THRESHOLDS),
    _p("int.str", "int", "str", "convert it to a string", "x = str(x)", str),
    _p("int.digits", "int", "list", "make the list of its decimal digits", "x = [int(d) for d in str(abs(x))]",
       lambda x: [int(d) for d in str(abs(x))]),
    # strings
    _p("str.upper", "str", "str", "convert it to upper case", "x = x.upper()", str.upper),
    _p("str.reverse", "str", "str", "reverse it", "x = x[::-1]", lambda x: x[::-1]),
    _p("str.append", "str", "str", "append '{c}'", "x = x + '{c}'", lambda x, c: x + c, c=_SUFFIXES),
    _p("str.prepend", "str", "str", "prepend '{c}'", "x = '{c}' + x", lambda x, c: c + x, c=_SUFFIXES),
    _p("str.double", "str", "str", "repeat it twice", "x = x * 2", lambda x: x * 2),
    _p("str.first", "str", "str", "keep its first {c} characters", "x = x[:{c}]", lambda x, c: x[:c], c=_COUNTS),
    _p("str.drop", "str", "str", "drop its first {c} characters", "x = x[{c}:]", lambda x, c: x[c:], c=_COUNTS),
    _p("str.replace", "str", "str", "replace every '{a}' with '{b}'", "x = x.replace('{a}', '{b}')",
       lambda x, a, b: x.replace(a, b), a=_CHARS, b=_CHARS),
    _p("str.remove", "str", "str", "remove every '{c}'", "x = x.replace('{c}', '')",
       lambda x, c: x.replace(c, ""), c=_CHARS),
    _p("str.sort", "str", "str", "sort its characters", "x = ''.join(sorted(x))", lambda x: "".join(sorted(x))),
    _p("str.len", "str", "int", "take its length", "x = len(x)", len),
    _p("str.count", "str", "int", "count the '{c}' characters", "x = x.count('{c}')", lambda x, c: x.count(c),
       c=_CHARS),
    _p("str.codes", "str", "list", "make the list of its character codes", "x = [ord(ch) for ch in x]",
       lambda x: [ord(ch) for ch in x]),
    # lists of integers
    _p("list.sort", "list", "list", "sort it", "x = sorted(x)", sorted),
    _p("list.reverse", "list", "list", "reverse it", "x = x[::-1]", lambda x: x[::-1]),
    _p("list.add", "list", "list", "add {c} to each element", "x = [v + {c} for v in x]",
       lambda x, c: [v + c for v in x], c=_SMALL),
    _p("list.mul", "list", "list", "multiply each element by {c}", "x = [v * {c} for v in x]",
       lambda x, c: [v * c for v in x], c=_FACTORS),
    _p("list.square", "list", "list", "square each element", "x = [v * v for v in x]", lambda x: [v * v for v in x]),
    _p("list.neg", "list", "list", "negate each element", "x = [-v for v in x]", lambda x: [-v for v in x]),
    _p("list.evens", "list", "list", "keep only the even elements", "x = [v for v in x if v % 2 == 0]",
       lambda x: [v for v in x if v % 2 == 0]),
    _p("list.odds", "list", "list", "keep only the odd elements", "x = [v for v in x if v % 2 == 1]",
       lambda x: [v for v in x if v % 2 == 1]),
    _p("list.gt", "list", "list", "keep only the elements greater than {c}", "x = [v for v in x if v > {c}]",
       lambda x, c: [v for v in x if v > c], c=_THRESHOLDS),
    _p("list.append", "list", "list", "append {c}", "x = x + [{c}]", lambda x, c: x + [c], c=_THRESHOLDS),
    _p("list.first", "list", "list", "keep the first {c} elements", "x = x[:{c}]", lambda x, c: x[:c], c=_COUNTS),
    _p("list.drop", "list", "list", "drop the first {c} elements", "x = x[{c}:]", lambda x, c: x[c:], c=_COUNTS),
    _p("list.dedup", "list", "list", "sort it and remove duplicates", "x = sorted(set(x))",
       lambda x: sorted(set(x))),
    _p("list.sum", "list", "int", "take the sum", "x = sum(x)", sum),
    _p("list.len", "list", "int", "take the length", "x = len(x)", len),
    _p("list.max", "list", "int", "take the largest element, or 0 if there is none", "x = max(x, default=0)",
       lambda x: max(x, default=0)),
)
BY_NAME = {p.name: p for p in PRIMITIVES}
assert len(BY_NAME) == len(PRIMITIVES), "primitive names must be unique"


def random_input(domain: str, rng) -> Any:
    """A test input of `domain`."""
    if domain == "int":
        return rng.randint(-30, 60)
    if domain == "str":
        return "".join(rng.choice(LETTERS) for _ in range(rng.randint(3, 7)))
    if domain == "list":
        return [rng.randint(-5, 15) for _ in range(rng.randint(3, 6))]
    raise ValueError(f"unknown domain {domain!r}; known: {', '.join(DOMAINS)}")

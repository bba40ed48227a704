"""`call` (APPS / TACO with fn_name, LeetCode style): a list of {"input": [args], "output": value}. The judge
calls `entry_point(*input)` (or `Solution().entry_point(*input)`) and reports the return value as JSON text; the
comparison with `output` happens outside (verdict), so the expected value never enters the sandbox.

JSON, not repr: the server reads every case's value on its dispatcher thread, and a value is up to the output
limit (64 KB by default) per case. The C JSON parser reads that in ~1 ms; `ast.literal_eval` of a repr took
~80 ms, so a program returning big wrong values for every case of a 40-case label held the server's CPU for
seconds per job (tests/rewards/sandbox/test_adversarial.py "big_call_values", scripts/bench/hostile.py)."""

import copy
import json
import math
from fractions import Fraction

from .. import framing
from .common import MUST_PAIR, pair_tests

NAME = "call"
HOOKS = frozenset()
NEEDS_ENTRY_POINT = True
# The call format runs the program after these imports: APPS's and TACO's call-based harnesses prepend them
# (and LeetCode's environment provides them), so `List[int]` annotations, `lru_cache`, `Counter`, `heapq`
# functions work without an import there. TACO's `import numpy as np` is left out: only the standard library
# exists in the sandbox.
PRELUDE = (
    "import sys\nimport time\nimport itertools\nfrom itertools import accumulate, product, permutations, "
    "combinations\nimport collections\nfrom collections import Counter, OrderedDict, deque, defaultdict, "
    "ChainMap\nfrom functools import lru_cache\nimport math\n"
    "from math import sqrt, sin, cos, tan, ceil, fabs, floor, gcd, exp, log, log2\nimport fractions\n"
    "from typing import List, Tuple\nimport random\nimport heapq\nfrom heapq import *\n")
_NEAR_INT = Fraction(1, 10 ** 6)


def _check(where, t):
    if "input" not in t or "output" not in t:
        return f"{where} {MUST_PAIR}"
    if not isinstance(t["input"], list):
        return f"{where}.input must be a list of positional args"
    return None


def validate_tests(tests) -> str | None:
    return pair_tests(tests, _check)


def plan(label) -> dict:
    # setup_code runs after the format's imports and before the program: a dataset's harness's own implicit
    # imports (LiveCodeBench's, data/schemas/testcases.py), so the program sees the namespace it would there.
    prelude = PRELUDE + label.setup_code if label.setup_code else PRELUDE
    return {"plan": [list(t["input"]) for t in label.tests], "prelude": prelude}  # expected values stay here


# --------------------------------------------------------------------------- inside the judge: the runner

def canon(value, depth=0):
    """value as JSON builtins for the server's comparison (dict keys strings, tuples lists), or raise."""
    t = type(value)
    if depth > 50:
        raise ValueError("return value nested too deeply")
    if value is None or t is bool or t is int or t is str:
        return value
    if t is float:  # inf and nan stay floats (JSON's Infinity, NaN), never the string 'inf' a test may expect
        return value
    if isinstance(value, (list, tuple)):
        return [canon(v, depth + 1) for v in value]
    if isinstance(value, dict):
        out = {(k if type(k) is str else repr(canon(k, depth + 1))): canon(v, depth + 1) for k, v in value.items()}
        if len(out) != len(value):  # {1: x, '1': y} must not compare as the one key '1'
            raise ValueError("return value has dict keys that are equal as strings")
        return out
    raise TypeError(f"return value of type {t.__name__} is not comparable (use builtin types)")


def runner(job, ns):
    from ..proxy import _is_proxy
    spec, s = job.spec, job.session
    entry = spec.entry_point
    klass = ns.get("Solution")
    fn = None
    if _is_proxy(klass):
        try:
            fn = getattr(klass(), entry)
        except AttributeError:
            fn = None
    if fn is None:
        fn = ns.get(entry)
    if fn is None:
        raise NameError(f"entry point {entry!r} is not defined by the program")

    def case(i):
        # A copy: the program may change its arguments in place (written back), and the spec is cached for
        # every later job of this label.
        text = json.dumps(canon(fn(*copy.deepcopy(spec.plan[i]))), ensure_ascii=False)
        if s.taint:
            return None
        if len(text) > job.max_value_repr:
            raise ValueError(f"return value too large ({len(text)} characters)")
        return text

    def run():
        for i in job.order:
            if s.gone:
                return
            job.one(i, lambda i=i: case(i), success=framing.OK)

    return run


# ------------------------------------------------------------------------------ outside: the verdict

def _same(got, want) -> bool:
    if isinstance(want, bool) or isinstance(got, bool):  # Python's == (APPS compares with it): True == 1
        return type(got) in (bool, int) and type(want) in (bool, int) and got == want
    if type(want) is int and type(got) is int:  # exact: a tolerance would pass 1000001 for 1000000
        return got == want
    if type(want) is int and type(got) is float:  # only float noise: 1000000008.0 is not 1000000007
        return math.isfinite(got) and abs(Fraction(got) - want) <= _NEAR_INT
    if isinstance(want, (int, float)) and isinstance(got, (int, float)):
        try:
            return math.isclose(got, want, rel_tol=1e-6, abs_tol=1e-9)
        except OverflowError:  # an int beyond any float, against a float
            return False
    if isinstance(want, (list, tuple)) and isinstance(got, (list, tuple)):
        return len(got) == len(want) and all(_same(g, w) for g, w in zip(got, want, strict=False))
    if isinstance(want, dict) and isinstance(got, dict):
        return set(map(str, got)) == set(map(str, want)) and all(
            _same(got[k], want[k] if k in want else want[str(k)]) for k in got)
    return type(got) is type(want) and got == want


def judge_call(value_json: str | None, expected) -> tuple[bool, str]:
    """The return value (JSON text, NaN and Infinity as floats: never the strings a test may expect) against the
    expected output."""
    try:
        got = json.loads(value_json) if value_json is not None else None
    except (ValueError, TypeError, RecursionError):
        return False, "unreadable return value"
    if _same(got, expected):
        return True, ""
    return False, f"expected {json.dumps(expected)[:150]}, got {value_json[:150] if value_json else None}"


def verdict(record: dict, test) -> tuple[bool, str]:
    """The sandbox's "ok" record of one case (the return value as JSON) against the test's expected output."""
    return judge_call(record.get("value"), test["output"])

"""The trusted side of a job, computed outside the sandbox: which test cases a label declares (with
``ast``), in which order they run, what the sandbox is told, and how stdio / call results are judged.

The sandbox never sees expected stdio outputs or call return values: it reports what the program
printed or returned, and the comparison happens here (docs/label_format.md has the rules).
"""

from __future__ import annotations

import ast
import decimal
import hashlib
import json
import math
from collections import OrderedDict
from fractions import Fraction

from coderl.rewards.labels import Label

_TESTCASE_BASES = {"TestCase", "IsolatedAsyncioTestCase"}
_MODULE_FIXTURES = {"setUpModule", "tearDownModule"}
# The call format runs the program after these imports: APPS's and TACO's call-based harnesses prepend them
# (and LeetCode's environment provides them), so `List[int]` annotations, `lru_cache`, `Counter`, `heapq`
# functions work without an import there. TACO's `import numpy as np` is left out: only the standard library
# exists in the sandbox.
CALL_PRELUDE = (
    "import sys\nimport time\nimport itertools\nfrom itertools import accumulate, product, permutations, "
    "combinations\nimport collections\nfrom collections import Counter, OrderedDict, deque, defaultdict, "
    "ChainMap\nfrom functools import lru_cache\nimport math\n"
    "from math import sqrt, sin, cos, tan, ceil, fabs, floor, gcd, exp, log, log2\nimport fractions\n"
    "from typing import List, Tuple\nimport random\nimport heapq\nfrom heapq import *\n")
_CACHE: OrderedDict = OrderedDict()
_CACHE_SIZE = 4096
_NEAR_INT_CALL = Fraction(1, 10 ** 6)


def _unittest_plan(modules) -> list:
    plan = []
    for idx, src in enumerate(modules):
        try:
            tree = ast.parse(src)
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            plan.append([idx, None, None])  # the module itself is broken: one "syntax" case
            continue
        test_classes: set[str] = set()
        classes: dict[str, ast.ClassDef] = {}
        fixtures = any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name in _MODULE_FIXTURES
                       for n in tree.body)
        for node in tree.body:
            if not isinstance(node, ast.ClassDef):
                continue
            classes[node.name] = node
            bases = {b.attr if isinstance(b, ast.Attribute) else getattr(b, "id", None) for b in node.bases}
            if not (bases & _TESTCASE_BASES or bases & test_classes):
                continue
            test_classes.add(node.name)
            plan += [[idx, node.name, m] for m in _test_methods(node, classes, fixtures)]
    return plan


def _test_methods(node: ast.ClassDef, classes: dict, module_fixtures: bool) -> list[str]:
    """The test* methods a class defines or inherits from classes of its module (a mixin's tests run too:
    left out, they would be checks the program never faced), less those that check nothing."""
    methods = _methods(node, classes, 0)  # the class's own and its module bases' methods, nearest first
    # A fixture (setUp, setUpClass, ...) or a redefined assert method is the test's own code and may call the
    # program: then even a test that only passes exercises it. Only without any can a test check nothing.
    plain = not module_fixtures and all(name.startswith("test") for name in methods)
    return [name for name, fn in methods.items() if name.startswith("test") and not (plain and _checks_nothing(fn))]


def _methods(node: ast.ClassDef, classes: dict, depth: int) -> dict:
    found = {item.name: item for item in node.body if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))}
    for b in node.bases if depth < 20 else ():
        base = classes.get(getattr(b, "id", None))
        if base is not None and base is not node:
            for name, fn in _methods(base, classes, depth + 1).items():
                found.setdefault(name, fn)
    return found


def unittest_cases(module: str) -> list[tuple[str | None, str | None]]:
    """(class, method) of each test case a unittest module declares, in outcome order; (None, None) for a
    module that does not parse (its one `syntax` case)."""
    return [(c, m) for _, c, m in _unittest_plan([module])]


def method_source(classes: dict, cls: str, name: str):
    """The def a test class of the module (`classes`: name -> ClassDef) runs as `name`: its own or the nearest
    module base's, as in _test_methods; None when it has none."""
    node = classes.get(cls)
    return None if node is None else _methods(node, classes, 0).get(name)


def _names_nothing(nodes) -> bool:
    return not any(isinstance(n, ast.Name) for node in nodes for n in ast.walk(node))


def _checks_nothing(fn) -> bool:
    """A test method whose every statement is `pass`, a constant, an assert naming nothing or a TestCase
    assert*/fail* call on arguments naming nothing: in a class without fixtures or methods of its own besides
    tests, it passes or fails the same for every program, like `assert True` in a check()."""
    for stmt in fn.body:
        if isinstance(stmt, ast.Pass) or (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)):
            continue
        if isinstance(stmt, ast.Assert) and not _checks_something(stmt):
            continue
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        if (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                and isinstance(call.func.value, ast.Name) and call.func.value.id == "self"
                and call.func.attr.startswith(("assert", "fail"))
                and _names_nothing([*call.args, *(k.value for k in call.keywords)])):
            continue
        return False
    return True


def _checks_something(node: ast.Assert) -> bool:
    """The assert's condition names something, so it may depend on the program: one without any name
    (`assert True`, `assert 1 == 1`, `assert not ''`) is built of literals and operators on them, holds or
    fails the same for every program, and verifies nothing. A name may be the program's (the entry point, a
    builtin it shadows), so every name counts."""
    return any(isinstance(n, ast.Name) for n in ast.walk(node.test))


def is_case(stmt: ast.stmt) -> bool:
    """A top-level statement of check() that is one humaneval test case: not a def, and holds an assert whose
    condition can depend on the program (see _checks_something); other statements run, but are not cases."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return False
    return any(isinstance(n, ast.Assert) and _checks_something(n) for n in ast.walk(stmt))


def _assert_test_counts(test: str) -> bool:
    """An assert-format test is a case unless it is only asserts that check nothing (then it binds nothing
    either); one that does not parse stays a case (it fails as `syntax`)."""
    try:
        body = ast.parse(test).body
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return True
    return not body or not all(isinstance(s, ast.Assert) and not _checks_something(s) for s in body)


def _humaneval_plan(program: str) -> tuple[list, str]:
    """Units {"setup": src, "test": src}: each top-level statement of check() that is_case is one test case;
    the statements before it are its setup, those after the last one end the last case. Falls back to one
    case = check(candidate) when check() has no assert at all (it checks by raising), and to no case when
    its asserts can none of them depend on the program."""
    whole = [{"setup": "", "test": "check(__candidate__)"}]
    try:
        tree = ast.parse(program)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return whole, "candidate"
    checks = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "check"]
    if not checks or not checks[-1].args.args:
        return whole, "candidate"
    fn = checks[-1]
    param = fn.args.args[0].arg
    units, pending = [], []
    for stmt in fn.body:
        if is_case(stmt):
            units.append({"setup": "\n".join(ast.unparse(s) for s in pending), "test": ast.unparse(stmt)})
            pending = []
        else:
            pending.append(stmt)
    if pending and units:  # statements after the last assert still check (a raise, a helper): the last case runs them
        units[-1]["test"] += "\n" + "\n".join(ast.unparse(s) for s in pending)
    if not units and any(isinstance(n, ast.Assert) for n in ast.walk(fn)):
        return [], param  # asserts, none of which can depend on the program: nothing to pass
    try:
        for u in units:
            compile(u["setup"], "<check>", "exec")
            compile(u["test"], "<check>", "exec")
    except SyntaxError:  # e.g. `return` in check's body: cannot be split, run it whole
        return whole, param
    return (units or whole), param


def plan(label: Label, label_json: str | None = None) -> dict:
    """What the sandbox runs for this label: {"digest", "spec": {format, plan, order, ...}}, cached by label.

    label_json: label.to_json() when the caller already has it (a batch shares a few labels).
    """
    key = label.to_json() if label_json is None else label_json
    hit = _CACHE.get(key)
    if hit is not None:
        _CACHE.move_to_end(key)
        return hit
    fmt = label.format
    spec: dict = {"format": fmt, "entry_point": label.entry_point, "setup_code": label.setup_code}
    if fmt == "unittest":
        spec["plan"] = _unittest_plan(label.tests)
        spec["tests"] = list(label.tests)
        # unittest's loader order: modules in label order, classes and methods by name.
        spec["order"] = sorted(range(len(spec["plan"])), key=lambda i: (
            spec["plan"][i][0], spec["plan"][i][1] or "", spec["plan"][i][2] or ""))
    elif fmt == "assert":
        spec["plan"] = [t for t in label.tests if _assert_test_counts(t)]
    elif fmt == "humaneval":
        spec["plan"], spec["check_param"] = _humaneval_plan(label.tests[0])
        spec["tests"] = list(label.tests)
    elif fmt == "stdio":
        spec["plan"] = [t["input"] for t in label.tests]  # expected outputs stay here
    elif fmt == "call":
        spec["plan"] = [list(t["input"]) for t in label.tests]  # expected values stay here
        spec["prelude"] = CALL_PRELUDE
    else:  # parse_label prevents this
        raise ValueError(f"unknown label format {fmt!r}")
    spec.setdefault("order", list(range(len(spec["plan"]))))
    out = {"digest": hashlib.blake2b(json.dumps(spec, sort_keys=True).encode("utf-8", "surrogatepass"),
                                     digest_size=16).hexdigest(), "spec": spec}
    _CACHE[key] = out
    if len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return out


def count_tests(label: Label) -> int:
    """Number of test cases the label declares, counted statically (ast), outside the sandbox."""
    return len(plan(label)["spec"]["plan"])


def normalize_output(text: str) -> list[str]:
    """stdio normalisation (APPS's): lines (\\r\\n, \\r end them too), each stripped, empty ones dropped."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return [s for s in (line.strip() for line in lines) if s]


def _is_int(token: str) -> bool:
    return token.lstrip("+-").isdigit()


_NEAR_INT = decimal.Decimal("1e-6")


def _same_token(got: str, want: str) -> bool:
    """Equal text, or two numbers (not both integers) within 1e-6, absolute or relative to the expected. An
    integer expected takes the absolute bound only: relative to a large integer, 1e-6 spans other integers
    (`1000000008.0` for 1000000007), while no two integers are within 1e-6 of each other."""
    if got == want:
        return True
    if _is_int(got) and _is_int(want):
        return False
    if _is_int(want):
        return _near_int(got, want)
    try:
        g, w = float(got), float(want)
    except ValueError:
        return False
    return math.isfinite(g) and math.isfinite(w) and abs(g - w) <= 1e-6 * max(1.0, abs(w))


def _near_int(got: str, want: str) -> bool:
    """got is a number within 1e-6 of the integer want, computed exactly (a float would round a large one)."""
    try:
        g, w = decimal.Decimal(got), decimal.Decimal(want)
    except (decimal.InvalidOperation, ValueError):
        return False
    if not g.is_finite():
        return False
    with decimal.localcontext() as ctx:  # room for want's digits: the difference is exact where it matters
        ctx.prec = len(want) + 30
        ctx.Emax, ctx.Emin = decimal.MAX_EMAX, decimal.MIN_EMIN
        return abs(g - w) <= _NEAR_INT


def _same_line(got: str, want: str) -> bool:
    g, w = got.split(), want.split()
    return len(g) == len(w) and all(_same_token(a, b) for a, b in zip(g, w, strict=True))


def judge_stdio(stdout: str, truncated: bool, expected: str) -> tuple[bool, str]:
    """APPS/TACO's comparison, kept to what is sound (docs/label_format.md): line by line, token by token in
    order, numbers within tolerance; APPS's order-blind token-set fallback is not applied."""
    if truncated:
        return False, "output exceeded the capture limit"
    got, want = normalize_output(stdout), normalize_output(expected)
    if got == want:
        return True, ""
    for i in range(max(len(got), len(want))):
        g = got[i] if i < len(got) else None
        w = want[i] if i < len(want) else None
        if g is None or w is None or not _same_line(g, w):
            return False, (f"line {i + 1}: expected {(w or '<no more lines expected>')[:120]!r}, "
                           f"got {(g or '<missing line>')[:120]!r}")
    return True, ""


def _same(got, want) -> bool:
    if isinstance(want, bool) or isinstance(got, bool):  # Python's == (APPS compares with it): True == 1
        return type(got) in (bool, int) and type(want) in (bool, int) and got == want
    if type(want) is int and type(got) is int:  # exact: a tolerance would pass 1000001 for 1000000
        return got == want
    if type(want) is int and type(got) is float:  # only float noise: 1000000008.0 is not 1000000007
        return math.isfinite(got) and abs(Fraction(got) - want) <= _NEAR_INT_CALL
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


class _Floats(ast.NodeTransformer):
    """`inf` and `nan` in a return value's repr are floats (the repr of one), never strings: a string 'inf' is
    quoted, so the two cannot be confused."""

    def visit_Name(self, node):
        return ast.Constant(float(node.id)) if node.id in ("inf", "nan") else node


def _literal(text: str):
    return ast.literal_eval(_Floats().visit(ast.parse(text.lstrip(" \t"), mode="eval")).body)


def judge_call(value_repr: str | None, expected) -> tuple[bool, str]:
    try:
        got = _literal(value_repr) if value_repr is not None else None
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return False, "unreadable return value"
    if _same(got, expected):
        return True, ""
    return False, f"expected {json.dumps(expected)[:150]}, got {value_repr[:150] if value_repr else None}"

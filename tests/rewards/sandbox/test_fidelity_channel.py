"""The channel-limit analyser (scripts/bench/fidelity/channel.py) on hand-made test modules and on real HumanEval."""

from __future__ import annotations

import ast
import json
import subprocess
import sys

import pytest

from scripts.bench.fidelity.channel import (
    Solution,
    assert_cases,
    humaneval_cases,
    summarize,
    unittest_cases,
)
from scripts.bench.fidelity.suites import labels
from tests.support import humaneval_rows

SOLUTION = '''
import sys
counter = 0
LIMIT = 10

class Point:
    def __init__(self, x, y):
        self.x, self.y = x, y

class InvalidInput(ValueError):
    pass

def make_point(x) -> Point:
    return Point(x, x)

def add(a, b):
    return a + b

def greet(name):
    print("hello", name)

def bump():
    global counter
    counter += 1

def sort_in_place(xs):
    xs.sort()

def apply(fn, x):
    return fn(x)

def same(x):
    return x

def ask():
    return int(input())
'''


def module(*methods: str, header: str = "") -> str:
    body = "".join(f"    def test_{i}(self):\n" + "".join(f"        {line}\n" for line in m.split("\n"))
                   for i, m in enumerate(methods))
    return f"import io\nimport sys\nimport unittest\nfrom unittest import mock\n{header}\nclass T(unittest.TestCase):\n{body}"


CASES = [  # (test method body, reasons)
    ("self.assertEqual(add(1, 2), 3)", set()),
    ("p = make_point(2)\nself.assertEqual(p.x, 2)\nself.assertTrue(bool(p))\nself.assertEqual(len(str(p)) > 0, True)",
     set()),
    ("self.assertIsNone(greet('x'))", set()),
    ("self.assertIs(same(None), None)", set()),
    ("with self.assertRaises(ValueError):\n    add(None, 1)", set()),
    ("buf = io.StringIO()\nfrom contextlib import redirect_stdout\nwith redirect_stdout(buf):\n    greet('x')\n"
     "self.assertEqual(buf.getvalue(), 'hello x\\n')", {"stdout"}),
    ("sys.stdout = io.StringIO()\ngreet('x')", {"stdout"}),
    ("with mock.patch('builtins.print') as p:\n    greet('x')\np.assert_called_once()", {"stdout"}),
    ("with mock.patch.object(sys, 'stdout', new=io.StringIO()):\n    greet('x')", {"stdout"}),
    ("with mock.patch('builtins.input', return_value='3'):\n    self.assertEqual(ask(), 3)", {"patching"}),
    ("sys.stdin = io.StringIO('3')\nself.assertEqual(ask(), 3)", {"patching"}),
    ("bump()\nself.assertEqual(counter, 1)", {"globals"}),
    ("self.assertEqual(LIMIT, 10)", {"globals"}),
    ("self.assertEqual(Point(1, 2), Point(1, 2))", {"opaque_compare"}),
    ("p = make_point(1)\nq = Point(1, 1)\nself.assertTrue(p == q)", {"opaque_compare"}),
    ("p = Point(1, 2)\nself.assertIn(p, [p])", {"opaque_compare"}),
    ("self.assertIsInstance(make_point(1), Point)", {"opaque_type"}),
    ("self.assertTrue(type(make_point(1)) is Point)", {"opaque_type"}),
    ("xs = [1]\nself.assertIs(same(xs), xs)", {"identity"}),
    ("self.assertEqual(apply(lambda v: v + 1, 1), 2)", {"callback"}),
    ("def double(v):\n    return 2 * v\nself.assertEqual(apply(double, 2), 4)", {"callback"}),
    ("with self.assertRaises(InvalidInput):\n    add(1, 2)", {"solution_exc"}),
    ("xs = [3, 1, 2]\nsort_in_place(xs)\nself.assertEqual(xs, [1, 2, 3])", {"in_place"}),
    ("xs = [3, 1, 2]\nself.assertEqual(sorted(xs), [1, 2, 3])", set()),
    ("counter = 5\nself.assertEqual(counter, 5)", set()),  # the test's own variable shadows the solution's
]


@pytest.mark.parametrize("body,reasons", CASES, ids=[f"{i}-{sorted(r)}" for i, (_, r) in enumerate(CASES)])
def test_unittest_reasons(body, reasons):
    cases = unittest_cases(module(body), Solution.from_source(SOLUTION))
    assert [r for _, r in cases] == [reasons]


def test_fixtures_and_decorators_belong_to_their_methods():
    src = ("import io\nimport sys\nimport unittest\nfrom unittest import mock\n\n"
           "class T(unittest.TestCase):\n    def setUp(self):\n        sys.stdout = io.StringIO()\n\n"
           "    def test_a(self):\n        self.assertEqual(add(1, 2), 3)\n\n"
           "    def test_b(self):\n        self.assertEqual(add(2, 2), 4)\n\n"
           "class U(unittest.TestCase):\n    @mock.patch('sys.stdin')\n    def test_c(self, stdin):\n        pass\n\n"
           "    def test_d(self):\n        pass\n")
    assert unittest_cases(src, Solution.from_source(SOLUTION)) == [
        ("T.test_a", {"stdout"}), ("T.test_b", {"stdout"}), ("U.test_c", {"patching"}), ("U.test_d", set())]


def test_module_level_code_belongs_to_every_case():
    src = ("import unittest\n\nclass Mine(Point):\n    pass\n\n"
           "class T(unittest.TestCase):\n    def test_a(self):\n        self.assertEqual(add(1, 2), 3)\n")
    assert unittest_cases(src, Solution.from_source(SOLUTION)) == [("T.test_a", {"opaque_type"})]


def test_humaneval_and_assert_formats():
    test = ("def check(candidate):\n    assert candidate(1, 2) == 3\n    xs = [2, 1]\n    sort_in_place(xs)\n"
            "    assert xs == [1, 2]\n    assert counter == 0\n")
    sol = Solution.from_source(SOLUTION)
    assert humaneval_cases(test, sol) == [("case 1", set()), ("case 2", {"in_place"}), ("case 3", {"globals"})]
    assert assert_cases("p = Point(1, 2)", ["assert add(1, 2) == 3", "assert p == Point(1, 2)"], sol) == [
        ("assert 1", set()), ("assert 2", {"opaque_compare"})]


def test_without_solution_source_free_names_are_guessed():
    src = module("self.assertEqual(Point(1, 2), make(1))", "self.assertEqual(total, 3)", "self.assertEqual(f(MAX), 1)")
    sol = Solution.from_free_names([ast.parse(src)])
    assert sol.classes == {"Point"} and sol.functions == {"make", "f"} and sol.variables == {"total", "MAX"}
    assert [r for _, r in unittest_cases(src, sol)] == [{"opaque_compare"}, {"globals"}, {"globals"}]


def test_humaneval_needs_nothing_the_channel_lacks():
    # A measured fact about the real suite (and its CodeRM-style / assert rewrites): every HumanEval test
    # case compares plain data returned by the entry point.
    cases = {"humaneval": [], "unittest": [], "assert": []}
    for i, row in enumerate(humaneval_rows()):
        sol = Solution.from_source(row["prompt"] + row["canonical_solution"])
        lb = labels(row, i)
        cases["humaneval"] += [r for _, r in humaneval_cases(row["test"], sol)]
        cases["unittest"] += [r for _, r in unittest_cases(lb["unittest"].tests[0], sol)]
        cases["assert"] += [r for _, r in assert_cases(lb["assert"].setup_code, list(lb["assert"].tests), sol)]
    for fmt, rs in cases.items():
        s = summarize(rs)
        # 1181 asserts in the check programs, of which 48 are `assert True`: they verify nothing and are no case.
        assert s["cases"] == 1133 and s["not_judgeable"] == 0, (fmt, s)


def test_script_on_preprocessed_coderm_rows(tmp_path, repo_root):
    # Real parts: parquet -> data/preprocess.py (keeping reference solutions) -> the script's --jsonl path.
    import pyarrow as pa
    import pyarrow.parquet as pq
    greet_tests = [{"ut_id": 0, "code": module(
        "buf = io.StringIO()\nfrom contextlib import redirect_stdout\nwith redirect_stdout(buf):\n    greet('x')\n"
        "self.assertEqual(buf.getvalue(), 'hello x\\n')", "self.assertIsNone(greet('y'))")}]
    stack_tests = [{"ut_id": 0, "code": module("s = Stack()\ns.push(1)\nself.assertEqual(s.pop(), 1)",
                                               "self.assertIsInstance(Stack(), Stack)")}]
    rows = [{"task_id": 1, "question": "Print a greeting.", "code_generate": None, "unit_tests": json.dumps(greet_tests),
             "code_ground_truth": "def greet(name):\n    print('hello', name)\n"},
            {"task_id": 2, "question": "A stack.", "code_generate": None, "unit_tests": json.dumps(stack_tests),
             "code_ground_truth": "class Stack:\n    def __init__(self):\n        self.items = []\n\n"
                                  "    def push(self, x):\n        self.items.append(x)\n\n"
                                  "    def pop(self):\n        return self.items.pop()\n"}]
    (tmp_path / "in").mkdir()
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "in" / "coderm.parquet")
    pre = subprocess.run([sys.executable, str(repo_root / "data" / "preprocess.py"), "--no_progress",
                          "--input_dir", str(tmp_path / "in"), "--output_dir", str(tmp_path / "out"),
                          "--test_ratio", "0", "--keep_reference"], capture_output=True, text=True, timeout=120)
    assert pre.returncode == 0, pre.stderr
    out = tmp_path / "channel.json"
    p = subprocess.run([sys.executable, "-m", "scripts.bench.channel_limits", "--json", str(out),
                        "--jsonl", str(tmp_path / "out" / "train.jsonl")],
                       capture_output=True, text=True, timeout=120, cwd=str(repo_root))
    assert p.returncode == 0, p.stderr
    assert "HumanEval check programs" in p.stdout and "not judgeable" in p.stdout
    suites = {s["suite"]: s for s in json.loads(out.read_text())["suites"]}
    assert suites["HumanEval check programs"]["cases"] == 1133  # 1181 asserts less 48 `assert True`
    assert suites["HumanEval check programs"]["not_judgeable"] == 0
    coderm = suites["CodeRM-UnitTest (unittest)"]
    assert (coderm["cases"], coderm["not_judgeable"], coderm["by_reason"]) == (4, 2, {"stdout": 1, "opaque_type": 1})

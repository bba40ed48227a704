"""The label-format registry: exactly the documented formats, each holding its whole contract; no bubblewrap."""

import json
import re
import types

import pytest

from coderl.rewards.labels import LabelError, parse_label
from coderl.rewards.sandbox.inside import formats
from coderl.rewards.sandbox.inside.formats import NAMES, REGISTRY
from coderl.rewards.sandbox.isolation import bootstrap
from coderl.rewards.sandbox.plan import plan
from tests.support import REPO_ROOT

DOC = (REPO_ROOT / "docs" / "label_format.md").read_text()


def test_the_registry_is_exactly_the_documented_list_in_its_order():
    section = DOC.split("\n## Formats\n", 1)[1].split("\n## ", 1)[0]
    assert tuple(re.findall(r"^### `(\w+)`", section, re.M)) == NAMES
    row = next(line for line in DOC.splitlines() if line.startswith("| `format` |"))
    assert tuple(re.findall(r"`(\w+)`", row.split("one of", 1)[1])) == NAMES


def test_every_format_module_holds_the_contract():
    for name, fmt in REGISTRY.items():
        assert fmt.module.NAME == name and callable(fmt.validate_tests) and callable(fmt.plan)
        assert fmt.runner is None or callable(fmt.runner)
    # The worker runs a format's cases itself (one process per case, inside/worker.py _run_stdin_cases) only
    # for stdio; every other format needs a runner in the judge. Formats whose sandbox reports "ok" are judged
    # outside.
    assert {n for n, f in REGISTRY.items() if f.stdin_cases} == {n for n, f in REGISTRY.items() if f.runner is None}
    assert {n for n, f in REGISTRY.items() if f.stdin_cases} == {"stdio", "checker"}
    assert {n for n, f in REGISTRY.items() if f.verdict is not None} == {"stdio", "call", "checker"}


def test_a_module_without_its_contract_is_refused_by_name():
    incomplete = types.ModuleType("pytest_style")
    incomplete.NAME, incomplete.validate_tests = "pytest", lambda tests: None
    with pytest.raises(TypeError, match="pytest_style defines no plan"):
        formats._register(incomplete)


def test_the_sandbox_receives_every_format_module():
    src = bootstrap({"mode": "bwrap"})
    compile(src, "<bootstrap>", "exec")
    for mod in formats._MODULES:
        assert f"'inside.formats.{mod.__name__.rpartition('.')[2]}'" in src
    assert "'inside.formats'" in src and "_PACKAGES = ['inside.formats']" in src


@pytest.mark.parametrize("fmt,tests,field", [
    ("unittest", ["import unittest", " "], "label.tests[1] must be a non-empty string"),
    ("assert", [3], "label.tests[0] must be a non-empty string"),
    ("humaneval", ["def check(c): pass", "def check(c): pass"], "exactly one check program"),
    ("stdio", [{"input": "1", "output": 2}], "label.tests[0].output must be a string"),
    ("stdio", ["1"], "label.tests[0] must be an object with 'input' and 'output'"),
    ("call", [{"input": [1], "output": 1}, {"input": 1, "output": 1}], "label.tests[1].input must be a list"),
    ("call", [{"input": [1]}], "label.tests[0] must be an object with 'input' and 'output'"),
    ("pytest", ["from solution import f", ""], "label.tests[1] must be a non-empty string"),
    ("checker", [{"input": "1", "output": "1"}], "label.tests[0].checker must be the checker program"),
    ("checker", [{"input": "1", "output": "1", "checker": "print(1"}], "label.tests[0].checker does not compile"),
    ("checker", [{"input": "1", "output": "1", "checker": "print(1)"}, {"input": "2", "output": "2", "checker": "x"}],
     "label.tests[1].checker: only the first case carries the checker"),
])
def test_a_format_names_the_field_it_refuses(fmt, tests, field):
    with pytest.raises(LabelError, match=re.escape(field)):
        parse_label({"format": fmt, "tests": tests, "entry_point": "f"})


def test_entry_point_is_required_where_the_format_says():
    needs = {n for n, f in REGISTRY.items() if f.needs_entry_point}
    assert needs == {"humaneval", "call"}
    for name in needs:
        with pytest.raises(LabelError, match=f"label.entry_point is required for format '{name}'"):
            parse_label({"format": name, "tests": [{"input": [1], "output": 1}] if name == "call" else ["x"]})


def test_plans_count_cases_and_keep_expected_values_outside():
    label = parse_label({"format": "assert", "tests": ["assert f(1) == 2", "assert True", "x = 1"]})
    assert plan(label)["spec"]["plan"] == ["assert f(1) == 2", "x = 1"]  # `assert True` checks nothing
    modules = ["import unittest\nclass TB(unittest.TestCase):\n    def test_z(self): f()\n    def test_a(self): f()\n"
               "class TA(TB):\n    pass\n"]
    spec = plan(parse_label({"format": "unittest", "tests": modules}))["spec"]
    assert [spec["plan"][i][1:] for i in spec["order"]] == [["TA", "test_a"], ["TA", "test_z"], ["TB", "test_a"],
                                                             ["TB", "test_z"]]
    check = "def check(candidate):\n    x = 2\n    assert candidate(1) == x\n    assert True\n    assert candidate(2)\n"
    spec = plan(parse_label({"format": "humaneval", "tests": [check], "entry_point": "f"}))["spec"]
    assert [u["setup"] for u in spec["plan"]] == ["x = 2", "assert True"] and spec["check_param"] == "candidate"
    for fmt, test in (("stdio", {"input": "3\n", "output": "SECRET-9\n"}), ("call", {"input": [3], "output": "SECRET-9"})):
        spec = plan(parse_label({"format": fmt, "tests": [test], "entry_point": "f"}))["spec"]
        assert "SECRET-9" not in json.dumps(spec) and len(spec["plan"]) == 1


def test_verdicts_judge_outside():
    stdio, call = REGISTRY["stdio"].verdict, REGISTRY["call"].verdict
    assert stdio({"stdout": "0.5000001\r\n\n 3 \n"}, {"output": "0.5\n3"}) == (True, "")
    assert stdio({"stdout": "1000000008.0"}, {"output": "1000000007"})[0] is False
    assert stdio({"stdout": "1", "truncated": True}, {"output": "1"}) == (False, "output exceeded the capture limit")
    assert call({"value": "[1, 2.0000000001]"}, {"output": [1, 2]}) == (True, "")
    assert call({"value": "true"}, {"output": 1}) == (True, "")
    assert call({"value": "1000001"}, {"output": 1000000})[0] is False
    assert call({"value": "<object>"}, {"output": 1}) == (False, "unreadable return value")
    assert call({"value": "[NaN, Infinity]"}, {"output": ["nan", "inf"]})[0] is False  # floats, never strings
    assert call({"value": '{"1": null}'}, {"output": {"1": None}}) == (True, "")
    # the value is JSON, read by the C parser in linear time: the server never evaluates Python syntax
    for python_only in ("None", "(1, 2)", "{1: 2}", "[1, 2,]"):
        assert call({"value": python_only}, {"output": [1, 2]}) == (False, "unreadable return value")


def test_verify_keeps_what_the_format_says():
    out = REGISTRY["assert"].keep(["a", "b", "c"], ["passed", "failed"], [1, 0, 1])
    assert out == {"kept": ["a"], "kept_cases": 1, "dropped": ["tests[1] (no case)", "tests[2] (failed)"]}
    check = "def check(candidate):\n    assert candidate(1) == 1\n    assert candidate(2) == 3\n    assert candidate(3)\n"
    out = REGISTRY["humaneval"].keep([check], ["passed", "failed", "passed"], [3])
    assert out["kept"] == ["def check(candidate):\n    assert candidate(1) == 1\n    assert candidate(3)\n"]
    assert out["counts"] == {"humaneval_asserts_dropped": 1} and out["rewritten"] and out["kept_cases"] == 2
    assert REGISTRY["humaneval"].keep([check], ["failed"] * 3, [3])["kept"] == []
    module = ("import unittest\nclass T(unittest.TestCase):\n    def test_a(self):\n        self.assertEqual(f(), 1)\n"
              "    def test_b(self):\n        self.assertEqual(f(), 2)\n")
    out = REGISTRY["unittest"].keep([module], ["passed", "failed"], [2])
    assert out["dropped"] == ["tests[0] T.test_b (failed)"] and out["counts"]["test_methods_dropped"] == 1
    assert "test_b" not in out["kept"][0] and "test_a" in out["kept"][0] and out["kept_cases"] == 1
    assert REGISTRY["unittest"].keep([module], ["failed"] * 2, [2])["kept"] == []

"""The `pytest` label format: its static plan (one case per collected item), and KodCode-style test files run by
the real pytest in the judge of a real bubblewrap pool."""

import pytest

from coderl.rewards.config import SandboxConfig
from coderl.rewards.labels import parse_label
from coderl.rewards.sandbox import Job, Sandbox
from coderl.rewards.sandbox.inside.formats import pytests
from coderl.rewards.sandbox.plan import count_tests, plan

pytestmark = pytest.mark.timeout(240)

# Shaped as KodCode-V1's rows are (its `test` column): `from solution import ...`, bare asserts, pytest's own.
KODCODE_TEST = '''import pytest
from solution import merge_intervals

def test_merge_overlapping():
    assert merge_intervals([[1, 3], [2, 6], [8, 10]]) == [[1, 6], [8, 10]]

def test_merge_empty():
    assert merge_intervals([]) == []

@pytest.mark.parametrize("given, want", [
    ([[1, 4], [4, 5]], [[1, 5]]),
    ([[1, 4], [0, 4]], [[0, 4]]),
    ([[1, 2]], [[1, 2]]),
])
def test_merge_cases(given, want):
    assert merge_intervals(given) == want

def test_bad_input():
    with pytest.raises(TypeError):
        merge_intervals(None)
'''
MERGE = '''def merge_intervals(intervals):
    if intervals is None:
        raise TypeError("intervals")
    out = []
    for a, b in sorted(intervals):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out
'''


def _nodes(src):
    return [(c["node"], c.get("k"), c.get("n")) for c in plan(parse_label({"format": "pytest", "tests": [src]}))["spec"]["plan"]]


def test_the_plan_counts_items_as_pytest_collects_them():
    assert _nodes(KODCODE_TEST) == [
        ("test_merge_overlapping", 0, 1), ("test_merge_empty", 0, 1), ("test_merge_cases", 0, 3),
        ("test_merge_cases", 1, 3), ("test_merge_cases", 2, 3), ("test_bad_input", 0, 1)]
    src = ("import pytest, unittest\nfrom solution import f\n"
           "pytestmark = pytest.mark.parametrize('z', [1, 2])\n"
           "@pytest.mark.parametrize('a', [1, 2])\n@pytest.mark.parametrize('b', (3, 4, 5))\n"
           "def test_grid(a, b, z):\n    assert f(a, b)\n"
           "class TestF:\n    def test_m(self, z):\n        assert f(z)\n    def helper(self):\n        pass\n"
           "    class TestInner:\n        def test_i(self, z):\n            assert f(z)\n"
           "class TestNotCollected:\n    def __init__(self):\n        pass\n    def test_x(self):\n        assert f()\n"
           "class U(unittest.TestCase):\n    def test_u(self):\n        self.assertTrue(f())\n"
           "def test_rebound():\n    assert f()\ntest_rebound = None\n")
    assert _nodes(src) == [("test_grid", k, 12) for k in range(12)] + [
        ("TestF::test_m", 0, 2), ("TestF::test_m", 1, 2), ("TestF::TestInner::test_i", 0, 2),
        ("TestF::TestInner::test_i", 1, 2), ("U::test_u", 0, 1)]


def test_items_counted_only_at_run_time_are_one_case():
    src = ("import pytest\nfrom solution import f\nCASES = [1, 2, 3]\n"
           "@pytest.mark.parametrize('x', CASES)\ndef test_dynamic(x):\n    assert f(x)\n"
           "def test_plain():\n    assert f(0)\n")
    assert _nodes(src) == [("test_dynamic", 0, None), ("test_plain", 0, 1)]
    fixture_params = ("import pytest\nfrom solution import f\n@pytest.fixture(params=[1, 2])\ndef n(request):\n"
                      "    return request.param\ndef test_n(n):\n    assert f(n)\n")
    assert _nodes(fixture_params) == [("test_n", 0, None)]


def test_a_test_that_checks_nothing_is_no_case_and_a_broken_module_is_one():
    assert _nodes("from solution import f\ndef test_free():\n    assert True\ndef test_real():\n    assert f()\n") \
        == [("test_real", 0, 1)]
    # with a fixture in the module, even an empty test runs code of the test's that may call the program
    assert len(_nodes("import pytest\n@pytest.fixture(autouse=True)\ndef s():\n    pass\ndef test_free():\n    pass\n")) == 1
    label = parse_label({"format": "pytest", "tests": ["def test_x(:\n    pass\n", KODCODE_TEST]})
    assert plan(label)["spec"]["plan"][0] == {"m": 0, "node": None} and count_tests(label) == 7


def test_pytest_itself_is_never_imported_outside_the_judge():
    import ast
    import sys
    tree = ast.parse(open(pytests.__file__).read())
    top = {a.name.split(".")[0] for n in tree.body if isinstance(n, ast.Import) for a in n.names}
    top |= {n.module.split(".")[0] for n in tree.body if isinstance(n, ast.ImportFrom) and n.module and not n.level}
    assert top <= set(sys.stdlib_module_names), top  # the plan runs on the server; pytest only in the runner


@pytest.fixture(scope="module")
def sb():
    with Sandbox(SandboxConfig(isolation="bwrap", workers=1, test_timeout_s=3.0, job_timeout_s=20.0)) as s:
        yield s


def _run(sb, code, tests):
    return sb.run([Job(code, parse_label({"format": "pytest", "tests": tests}))])[0]


def _statuses(r):
    return [o.status for o in r.outcomes]


def test_a_kodcode_row_grades_the_reference_and_a_wrong_program(sb):
    good = _run(sb, MERGE, [KODCODE_TEST])
    assert _statuses(good) == ["passed"] * 6, [o.detail for o in good.outcomes]
    wrong = _run(sb, MERGE.replace("a <= out[-1][1]", "a < out[-1][1]"), [KODCODE_TEST])
    # per item: only the parametrize case with touching intervals fails
    assert _statuses(wrong) == ["passed", "passed", "failed", "passed", "passed", "passed"], \
        [o.detail for o in wrong.outcomes]
    assert "assert [[1, 4], [4, 5]] == [[1, 5]]" in wrong.outcomes[2].detail


def test_pytest_features_run_as_pytest_runs_them(sb):
    tests = ['''import pytest
from solution import mean, greet, save

@pytest.fixture
def data():
    return [1.0, 2.0, 4.0]

def test_approx(data):
    assert mean(data) == pytest.approx(2.3333333, rel=1e-6)

def test_capsys(capsys):
    greet("ann")
    assert capsys.readouterr().out == "hello ann\\n"

def test_tmp_path(tmp_path):
    p = tmp_path / "out.txt"
    save(str(p), "x")
    assert p.read_text() == "x"

def test_fail_explicitly():
    if mean([1.0]) != 1.0:
        pytest.fail("mean of one value")

@pytest.mark.skip(reason="not today")
def test_skipped():
    assert mean([1.0]) == 1.0

@pytest.mark.xfail
def test_xfail():
    assert mean([1.0]) == 2.0

class TestSetup:
    def setup_method(self):
        self.values = [2.0, 4.0]

    def test_uses_setup(self):
        assert mean(self.values) == 3.0
''']
    code = ("def mean(xs):\n    return sum(xs) / len(xs)\n"
            "def greet(name):\n    print('hello', name)\n"
            "def save(path, text):\n    with open(path, 'w') as f:\n        f.write(text)\n")
    r = _run(sb, code, tests)
    assert _statuses(r) == ["passed", "passed", "passed", "passed", "unsupported", "unsupported", "passed"], \
        [o.detail for o in r.outcomes]


def test_a_module_that_does_not_load_fails_each_of_its_cases(sb):
    r = _run(sb, "def other():\n    return 1\n", [KODCODE_TEST])
    assert _statuses(r) == ["error"] * 6 and "merge_intervals" in r.outcomes[0].detail
    r = _run(sb, MERGE, ["def test_x(:\n    pass\n", KODCODE_TEST])
    assert _statuses(r) == ["syntax"] + ["passed"] * 6, [o.detail for o in r.outcomes]


def test_items_counted_at_run_time_pass_together(sb):
    tests = ["import pytest\nfrom solution import sq\nCASES = [(2, 4), (3, 9)]\n"
             "@pytest.mark.parametrize('x, y', CASES)\ndef test_sq(x, y):\n    assert sq(x) == y\n"
             "def test_zero():\n    assert sq(0) == 0\n"]
    assert _statuses(_run(sb, "def sq(x):\n    return x * x\n", tests)) == ["passed", "passed"]
    assert _statuses(_run(sb, "def sq(x):\n    return 4 if x == 2 else 0\n", tests)) == ["failed", "passed"]


def test_the_program_cannot_import_pytest(sb):
    tests = ["from solution import has_pytest\ndef test_it():\n    assert has_pytest() is False\n"]
    code = ("def has_pytest():\n    try:\n        import pytest\n        return True\n"
            "    except ImportError:\n        return False\n")
    assert _statuses(_run(sb, code, tests)) == ["passed"]

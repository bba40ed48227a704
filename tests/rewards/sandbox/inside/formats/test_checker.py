"""The `checker` label format: validation, what the plan sends in, the outside verdict, --verify's cut, and cases
judged by a checker program in a real bubblewrap pool."""

import pytest

from coderl.rewards.config import SandboxConfig
from coderl.rewards.labels import parse_label
from coderl.rewards.sandbox import Job, Sandbox
from coderl.rewards.sandbox.inside.formats import checker
from coderl.rewards.sandbox.plan import plan

pytestmark = pytest.mark.timeout(240)

# Shaped as open-r1/codeforces' generated checkers are: argv input, jury answer, contestant output; prints 1 or 0.
PAIR_SUM = '''import sys
n, target = map(int, open(sys.argv[1]).read().split()[:2])
jury = open(sys.argv[2]).read().split()
try:
    a, b = map(int, open(sys.argv[3]).read().split())
except ValueError:
    print(0)
    sys.exit(0)
if jury == ["-1"]:
    print(1 if (a, b) == (-1, -1) else 0)
else:
    print(1 if 1 <= a <= n and 1 <= b <= n and a != b and a + b == target else 0)
'''
LABEL = {"format": "checker", "tests": [{"input": "5 7\n", "output": "2 5\n", "checker": PAIR_SUM},
                                        {"input": "4 7\n", "output": "3 4\n"}, {"input": "2 9\n", "output": "-1\n"}]}


def test_the_plan_sends_the_answers_and_the_checker_to_the_worker_only():
    spec = plan(parse_label(LABEL))["spec"]
    assert spec["plan"] == ["5 7\n", "4 7\n", "2 9\n"] and spec["answers"] == ["2 5\n", "3 4\n", "-1\n"]
    assert repr(PAIR_SUM) in spec["checker"] and "solution_output.txt" in spec["checker"]
    compile(spec["checker"], "<checker>", "exec")


def test_the_verdict_is_the_checkers_exit_and_its_1():
    ok = {"status": "ok", "truncated": False}
    assert checker.verdict({**ok, "checker": {"status": "ok", "stdout": " 1\n"}}, None) == (True, "")
    assert not checker.verdict({**ok, "checker": {"status": "ok", "stdout": "0\n"}}, None)[0]
    assert not checker.verdict({**ok, "checker": {"status": "ok", "stdout": "ok 1\n"}}, None)[0]
    assert not checker.verdict({**ok, "checker": {"status": "error", "stdout": "1"}}, None)[0]
    assert not checker.verdict({**ok, "truncated": True, "checker": {"status": "ok", "stdout": "1"}}, None)[0]
    assert not checker.verdict(ok, None)[0]  # the checker never ran


def test_verify_keeps_the_passing_cases_with_the_checker_on_the_first():
    tests = parse_label(LABEL).tests
    kept = checker.keep(list(tests), ["failed", "passed", "passed"], [1, 1, 1])
    assert [t["input"] for t in kept["kept"]] == ["4 7\n", "2 9\n"] and kept["kept"][0]["checker"] == PAIR_SUM
    assert "checker" not in kept["kept"][1] and kept["kept_cases"] == 2
    parse_label({"format": "checker", "tests": kept["kept"]})
    assert checker.keep(list(tests), ["failed"] * 3, [1, 1, 1])["kept"] == []


@pytest.fixture(scope="module")
def sb():
    with Sandbox(SandboxConfig(isolation="bwrap", workers=1, test_timeout_s=3.0, job_timeout_s=20.0)) as s:
        yield s


def _statuses(sb, code):
    r = sb.run([Job(code, parse_label(LABEL))])[0]
    return [o.status for o in r.outcomes], [o.detail for o in r.outcomes]


SOLVE = ("n, t = map(int, input().split())\n"
         "pairs = [(a, t - a) for a in range(1, n + 1) if 1 <= t - a <= n and a != t - a]\n")


def test_any_valid_answer_passes_and_a_wrong_one_fails(sb):
    # the jury printed 2 5 and 3 4; other valid pairs pass too, as the checker says
    assert _statuses(sb, SOLVE + "print(*pairs[-1]) if pairs else print(-1, -1)\n")[0] == ["passed"] * 3
    assert _statuses(sb, SOLVE + "print(*pairs[0]) if pairs else print(-1, -1)\n")[0] == ["passed"] * 3
    statuses, details = _statuses(sb, "n, t = map(int, input().split())\nprint(1, t - 1)\n")
    assert statuses == ["failed", "failed", "failed"] and "the checker said '0'" in details[0]
    assert _statuses(sb, "import sys\nsys.exit(2)\n")[0] == ["error"] * 3


def test_a_checker_that_fails_passes_nothing(sb):
    broken = {"format": "checker", "tests": [{"input": "1\n", "output": "1\n", "checker": "raise ValueError('bug')"}]}
    r = sb.run([Job("print(input())\n", parse_label(broken))])[0]
    assert [o.status for o in r.outcomes] == ["failed"] and "the checker failed (error)" in r.outcomes[0].detail

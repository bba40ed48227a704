"""rewards/sandbox.py: the five test formats, per-test credit, ordering, asyncio, pool recovery,
environment scrubbing and the rlimits fallback. Real bubblewrap sandboxes, no mocks."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time

import psutil
import pytest

from coderl.rewards.config import SandboxConfig
from coderl.rewards.labels import parse_label
from coderl.rewards.sandbox import STATUSES, Job, Sandbox, SandboxError, count_tests, isolation_info
from coderl.rewards.sandbox.pool import pinned_cpu, run_bound_s, time_limits

pytestmark = pytest.mark.timeout(120)

FAST = dict(workers=2, test_timeout_s=2.0, job_timeout_s=10.0)
STARVED_CAP = SandboxConfig().starved_factor  # a limit's wall clock on a starved machine, at most (inside/worker.py)


@pytest.fixture(scope="module")
def sb():
    with Sandbox(SandboxConfig(isolation="bwrap", **FAST)) as s:
        yield s


UNITTEST_TESTS = [
    "import unittest\n\nclass TestAdd(unittest.TestCase):\n"
    "    def test_small(self):\n        self.assertEqual(add(1, 2), 3)\n"
    "    def test_zero(self):\n        self.assertEqual(add(0, 0), 0)\n\n"
    "if __name__ == '__main__':\n    unittest.main()\n",
    "import unittest\nfrom solution import mul\n\nclass TestMul(unittest.TestCase):\n"
    "    def test_mul(self):\n        self.assertEqual(mul(2, 3), 6)\n",
]
LABELS = {
    "unittest": {"format": "unittest", "tests": UNITTEST_TESTS, "time_limit_s": 0.5},
    "assert": {"format": "assert", "tests": ["assert add(1, 2) == 3", "assert add(0, 0) == 0",
                                             "assert mul(2, 3) == 6"], "time_limit_s": 0.5},
    "humaneval": {"format": "humaneval", "entry_point": "add", "time_limit_s": 0.5, "tests": [
        "def check(candidate):\n    assert candidate(1, 2) == 3\n    x = 0\n    assert candidate(x, x) == 0\n"
        "    for a in range(3):\n        assert candidate(a, a) == 2 * a\n"]},
    "stdio": {"format": "stdio", "time_limit_s": 0.5, "tests": [
        {"input": "1 2\n", "output": "3\n"}, {"input": "0 0\n", "output": "0"}, {"input": "2 3\n", "output": "5 \n\n"}]},
    "call": {"format": "call", "entry_point": "add", "time_limit_s": 0.5, "tests": [
        {"input": [1, 2], "output": 3}, {"input": [0, 0], "output": 0}, {"input": [[1], [2]], "output": [1, 2]}]},
}
FN = "def add(a, b):\n    return a + b\n\ndef mul(a, b):\n    return a * b\n"
PROGRAMS = {
    "passing": FN,
    "failing": "def add(a, b):\n    return 7\n\ndef mul(a, b):\n    return 7\n",
    # add is right for equal arguments only (a + a): partial credit in every format.
    "partial": "def add(a, b):\n    return a + a\n\ndef mul(a, b):\n    return a * b\n",
    "syntax": "def add(a, b)\n    return a + b\n",
    "runtime": "def add(a, b):\n    raise ValueError('boom')\n\ndef mul(a, b):\n    raise ValueError('boom')\n",
    "timeout": "def add(a, b):\n    while True:\n        pass\n\ndef mul(a, b):\n    while True:\n        pass\n",
}
STDIO = {
    "passing": "a, b = map(int, input().split())\nprint(a + b)\n",
    "failing": "print(7)\n",
    "partial": "a, b = map(int, input().split())\nprint(a + a)\n",
    "syntax": "print(\n",
    "runtime": "raise ValueError('boom')\n",
    "timeout": "while True:\n    pass\n",
}
EXPECTED = {  # variant -> (statuses allowed for every test, must some test pass, must some test fail)
    "passing": ({"passed"}, True, False),
    "failing": ({"failed"}, False, True),
    "partial": ({"passed", "failed"}, True, True),
    "syntax": ({"syntax"}, False, True),
    "runtime": ({"error"}, False, True),
    "timeout": ({"timeout"}, False, True),
}


@pytest.fixture(scope="module")
def format_results(sb):
    keys, jobs = [], []
    for fmt, label in LABELS.items():
        for variant in EXPECTED:
            code = (STDIO if fmt == "stdio" else PROGRAMS)[variant]
            keys.append((fmt, variant))
            jobs.append(Job(code, parse_label(label)))
    return dict(zip(keys, sb.run(jobs), strict=False))


@pytest.mark.parametrize("variant", list(EXPECTED))
@pytest.mark.parametrize("fmt", list(LABELS))
def test_formats(format_results, fmt, variant):
    r = format_results[(fmt, variant)]
    allowed, some_pass, some_fail = EXPECTED[variant]
    assert r.expected == count_tests(parse_label(LABELS[fmt])) == len(r.outcomes) == 3
    statuses = [o.status for o in r.outcomes]
    assert set(statuses) <= allowed, (statuses, [o.detail for o in r.outcomes])
    assert ("passed" in statuses) == some_pass
    assert (r.passed < r.expected) == some_fail
    assert all(s in STATUSES for s in statuses)
    if variant == "partial":
        assert 0 < r.pass_rate < 1
    if variant in ("runtime", "syntax"):
        assert all(o.detail for o in r.outcomes)  # the traceback excerpt says why
    if variant == "passing":
        assert r.status == "passed" and r.pass_rate == 1.0


def test_count_tests_is_static_and_per_case():
    assert count_tests(parse_label(LABELS["unittest"])) == 3  # per test method, across modules
    he = parse_label({"format": "humaneval", "entry_point": "f", "tests": [
        "def check(candidate):\n    data = [1, 2]\n    def helper(x):\n        assert x\n"
        "    assert candidate(1)\n    assert candidate(2)\n"]})
    assert count_tests(he) == 2  # asserts inside a nested def are not cases
    whole = parse_label({"format": "humaneval", "entry_point": "f", "tests": [
        "def check(candidate):\n    if candidate(1) != 1:\n        return False\n    helper(candidate)\n"]})
    assert count_tests(whole) == 1  # no assert to split on: the whole check is one case
    broken = parse_label({"format": "unittest", "tests": ["class (:"]})
    assert count_tests(broken) == 1


def test_an_assert_that_cannot_depend_on_the_program_is_no_case():
    """Credit only for tests that exercise the program: a condition that names nothing holds for every program."""
    constant = ("assert True", "assert True, 'good for debugging'", "assert 1 == 1", "assert not ''",
                "assert (1, 2)[0] < 3", "assert 'ab'.upper() == 'AB'", "assert (lambda: 1)()")
    checks = ("assert candidate(1) == 2", "assert x == 2", "assert abs(candidate(1)) > 0", "assert True == f(1)",
              "assert len('ab') == 2")  # a name may be the program's: a builtin it shadows counts too
    for c in constant:
        he = parse_label({"format": "humaneval", "entry_point": "f", "tests": [
            f"def check(candidate):\n    x = candidate(1)\n    {c}\n    assert candidate(2) == 3\n    {c}\n"]})
        assert count_tests(he) == 1, c
        only = parse_label({"format": "humaneval", "entry_point": "f", "tests": [f"def check(candidate):\n    {c}\n"]})
        assert count_tests(only) == 0, c  # not the whole check as one free case
        asserts = parse_label({"format": "assert", "entry_point": "f", "tests": [c, "assert f(1) == 2", f"{c}\n{c}"]})
        assert count_tests(asserts) == 1, c
    for c in checks:
        he = parse_label({"format": "humaneval", "entry_point": "f", "tests": [
            f"def check(candidate):\n    x = candidate(1)\n    {c}\n"]})
        assert count_tests(he) == 1, c
        assert count_tests(parse_label({"format": "assert", "entry_point": "f", "tests": [c]})) == 1, c
    # An assert-format test that also binds or runs something stays a case, as before.
    assert count_tests(parse_label({"format": "assert", "entry_point": "f", "tests": ["import math"]})) == 1
    # unittest: a test method that only asserts on constants (or only passes) checks nothing either, unless
    # its class has code of its own besides tests (a fixture, a redefined assert method: it may call f).
    mod = ("import unittest\nclass T(unittest.TestCase):\n    def test_a(self):\n        self.assertEqual(f(1), 2)\n"
           "    def test_free(self):\n        'Doc.'\n        self.assertTrue(True)\n        self.assertEqual(1, 1, msg='m')\n"
           "    def test_pass(self):\n        pass\n"
           "class U(T):\n    def assertTrue(self, x):\n        super().assertTrue(f(x))\n")
    assert count_tests(parse_label({"format": "unittest", "tests": [mod]})) == 4  # T.test_a; U: all three
    fixture = mod.replace("class U(T):", "def setUpModule():\n    f(0)\nclass U(T):")
    assert count_tests(parse_label({"format": "unittest", "tests": [fixture]})) == 6


def test_results_in_input_order_and_isolated(sb):
    label = parse_label({"format": "assert", "tests": [f"assert f() == {i}" for i in range(6)]})
    jobs = [Job(f"def f():\n    return {i}\n", label) for i in range(6)]
    jobs.insert(3, Job("import os\nos._exit(0)\n", label))  # a bad job between good ones
    res = sb.run(jobs)
    expected_pass = [0, 1, 2, None, 3, 4, 5]
    for r, i in zip(res, expected_pass, strict=False):
        if i is None:
            assert r.passed == 0 and {o.status for o in r.outcomes} == {"killed"}
        else:
            assert [o.status == "passed" for o in r.outcomes] == [k == i for k in range(6)]


def test_the_pool_runs_every_job_it_is_given(sb):
    """The one in-batch dedup is the executor's (tests/rewards/test_executors.py): the pool runs each job."""
    label = parse_label(LABELS["assert"])
    before = sb.info()["stats"]["jobs"]
    res = sb.run([Job(FN, label), Job(FN, label), Job(FN, label)])
    assert [r.cached for r in res] == [False] * 3 and all(r.pass_rate == 1.0 for r in res)
    assert len({id(r) for r in res}) == 3 and sb.info()["stats"]["jobs"] - before == 3


def test_stdio_compares_every_line(sb):
    label = parse_label({"format": "stdio", "tests": [{"input": "", "output": "1\n2\n3\n"}]})
    programs = {
        "print('1\\n2\\n3')": "passed",
        "print('1  \\r\\n2\\n3\\n\\n\\n')": "passed",  # trailing spaces, \r\n, trailing blank lines
        "print('1\\n2')": "failed",  # a missing line
        "print('1\\n2\\n3\\n4')": "failed",  # an extra line
        "print(' 1\\n\\n2  \\n 3.0000001')": "passed",  # APPS: lines stripped, blank ones dropped, numbers close
        "print('1 2 3')": "failed",  # the same tokens on other lines
        "print('1\\n3\\n2')": "failed",  # in another order
        "print('1\\n2\\n3.001')": "failed",  # beyond 1e-6
        "import sys\nsys.stdout.write('1\\n2\\n3')\nsys.exit(0)": "passed",
        "print(1)\nprint(2)\nprint(3)\nexit()\nprint(4)": "passed",
        "print('1\\n2\\n3')\nraise SystemExit(3)": "error",
        "print('1\\n2\\n3' + 'x' * 200000)": "failed",  # capped output never passes
    }
    res = sb.run([Job(code, label) for code in programs])
    assert [r.outcomes[0].status for r in res] == list(programs.values()), [r.outcomes[0].detail for r in res]


def test_stdio_reads_stdin_and_gets_eof(sb):
    label = parse_label({"format": "stdio", "tests": [{"input": "3\n1\n2\n3\n", "output": "6\n"}]})
    code = "import sys\nn = int(input())\nprint(sum(int(x) for x in sys.stdin.read().split()))\n"
    assert sb.run([Job(code, label)])[0].pass_rate == 1.0
    hang = "import sys\nprint(6)\nsys.stdin.read()\nsys.stdin.read()\n"  # EOF, not a hang
    assert sb.run([Job(hang, label)])[0].outcomes[0].status == "passed"


# How a stdio program's process ends, as plain `python prog.py` ends it: non-daemon threads are waited for, then
# atexit handlers run; a daemon thread is not waited for. The first is the usual way to get a deeper stack in
# competitive programming; the sandbox once ended the process when the main module did, so it printed nothing.
STDIO_ENDINGS = {
    "thread_main": ("import sys, threading\ndef main():\n    print(int(input()) ** 2)\nsys.setrecursionlimit(10 ** 6)\n"
                    "threading.stack_size(2 ** 26)\nthreading.Thread(target=main).start()\n"),
    "thread_exits": ("import sys, threading, time\ndef main():\n    time.sleep(0.05)\n    print(int(input()) ** 2)\n"
                     "    sys.exit(3)\nthreading.Thread(target=main).start()\n"),
    "atexit": "import atexit\nn = int(input())\natexit.register(lambda: print(n * n))\n",
    "exit_then_atexit": "import atexit, sys\nn = int(input())\natexit.register(print, n * n)\nsys.exit(0)\n",
    "daemon_thread": ("import threading, time\ndef main():\n    time.sleep(0.2)\n    print(int(input()) ** 2)\n"
                      "threading.Thread(target=main, daemon=True).start()\n"),
    "raise_after_thread": ("import threading\ndef main():\n    print(int(input()) ** 2)\n"
                           "threading.Thread(target=main).start()\nraise ValueError('after')\n"),
    # A process the program started writes after the program exited: a harness reads the pipes to their end, so
    # that output counts (red team r28: it was cut off, and garbage written that way passed).
    "child_writes_after_exit": ("import os, time\nprint(int(input()) ** 2, flush=True)\nif os.fork() == 0:\n"
                                "    time.sleep(0.1)\n    print('garbage', flush=True)\n    os._exit(0)\n"),
    "child_answers_after_exit": ("import os, time\nn = int(input())\nif os.fork() == 0:\n    os.setsid()\n"
                                 "    time.sleep(0.1)\n    print(n * n, flush=True)\n    os._exit(0)\n"),
}


@pytest.mark.parametrize("name", list(STDIO_ENDINGS))
def test_a_stdio_program_ends_as_plain_python_ends_it(sb, name):
    code = STDIO_ENDINGS[name]
    plain = subprocess.run([sys.executable, "-c", code], input="3\n", capture_output=True, text=True, timeout=30)
    label = parse_label({"format": "stdio", "tests": [{"input": "3\n", "output": "9\n"}]})
    outcome = sb.run([Job(code, label)])[0].outcomes[0]
    want = "passed" if plain.returncode == 0 and plain.stdout == "9\n" else "error" if plain.returncode else "failed"
    assert outcome.status == want, (plain.returncode, plain.stdout, outcome.detail)


def test_a_stdio_case_whose_output_a_left_process_holds_open_times_out(sb):
    # plain: the harness's read of the pipes to their end outlives the limit (subprocess's TimeoutExpired)
    code = "import os, time\nprint(int(input()) ** 2, flush=True)\nif os.fork() == 0:\n    time.sleep(20)\n"
    label = parse_label({"format": "stdio", "time_limit_s": 0.5, "tests": [{"input": "3\n", "output": "9\n"}]})
    outcome = sb.run([Job(code, label)])[0].outcomes[0]
    assert outcome.status == "timeout" and "held its output" in outcome.detail, outcome


def test_call_format_semantics(sb):
    label = parse_label({"format": "call", "entry_point": "twoSum", "tests": [
        {"input": [[2, 7, 11, 15], 9], "output": [0, 1]}, {"input": [[3, 3], 6], "output": [0, 1]}]})
    leet = "class Solution:\n    def twoSum(self, nums, target):\n        return (0, 1)\n"
    assert sb.run([Job(leet, label)])[0].pass_rate == 1.0  # Solution class, tuple == list
    cheat = ("class Eq(list):\n    def __eq__(self, other):\n        return True\n"
             "def twoSum(nums, target):\n    return Eq()\n")
    r = sb.run([Job(cheat, label)])[0]
    assert r.passed == 0  # an always-equal object is not a comparable return value
    fl = parse_label({"format": "call", "entry_point": "f", "tests": [{"input": [], "output": 0.3},
                                                                       {"input": [], "output": True}]})
    assert [o.status for o in sb.run([Job("def f():\n    return 0.1 + 0.2\n", fl)])[0].outcomes] == \
        ["passed", "failed"]  # floats within 1e-6; True is not 0.3...


def test_humaneval_partial_credit_and_setup_between_asserts(sb):
    label = parse_label(LABELS["humaneval"])
    code = "def add(a, b):\n    return a + b if a < 2 else 0\n"
    r = sb.run([Job(code, label)])[0]
    assert [o.status for o in r.outcomes] == ["passed", "passed", "failed"]


def test_unittest_setup_class_and_missing_entry(sb):
    mod = ("import unittest\nclass T(unittest.TestCase):\n    @classmethod\n    def setUpClass(cls):\n"
           "        cls.base = add(1, 1)\n    def setUp(self):\n        self.x = 1\n"
           "    def test_a(self):\n        self.assertEqual(self.base + self.x, 3)\n"
           "    def test_b(self):\n        with self.assertRaises(ZeroDivisionError):\n            add(1, 0) / 0\n")
    label = parse_label({"format": "unittest", "tests": [mod]})
    assert sb.run([Job(FN, label)])[0].pass_rate == 1.0
    r = sb.run([Job("x = 1\n", label)])[0]
    assert [o.status for o in r.outcomes] == ["error", "error"]


def test_timeout_is_enforced_from_outside(sb):
    # The program swallows every exception, including any in-process alarm.
    code = ("def f():\n    while True:\n        try:\n            while True:\n                pass\n"
            "        except BaseException:\n            pass\n\ndef g():\n    return 1\n")
    label = parse_label({"format": "assert", "time_limit_s": 0.5, "tests": ["assert f()", "assert g()"]})
    t0 = time.monotonic()
    r = sb.run([Job(code, label)])[0]
    assert [o.status for o in r.outcomes] == ["timeout", "timeout"]  # the hang ended the job
    assert r.outcomes[1].detail == "not run: test 0 exceeded its time limit"
    assert time.monotonic() - t0 < 5


@pytest.mark.parametrize("code, status", [
    ("raise ValueError('at import')\n", "error"),
    ("import sys\nsys.exit(3)\n", "killed"),
    ("def add(a, b)\n    return a\n", "syntax"),
    ("def plus(a, b):\n    return a + b\n", "error"),  # no entry point
])
def test_a_program_that_does_not_load_frees_its_worker_at_once(code, status):
    """Early in RL training most programs fail to load: each must cost milliseconds, not the test time limit
    the worker would wait out for records that never come."""
    label = parse_label({"format": "humaneval", "entry_point": "add", "tests": [
        "def check(candidate):\n    assert candidate(1, 2) == 3\n    assert candidate(0, 0) == 0\n"]})
    with Sandbox(SandboxConfig(isolation="bwrap", workers=1, test_timeout_s=30.0, job_timeout_s=60.0)) as s:
        t0 = time.monotonic()
        results = s.run([Job(code, label), Job(FN, label)])
        took = time.monotonic() - t0
    assert [o.status for o in results[0].outcomes] == [status, status]
    assert results[1].pass_rate == 1.0  # the same worker (and judge) took the next job
    assert took < 15, f"{took:.1f} s: the worker waited for the 30 s test limit"


SPIN = FN + "def spin(*a):\n    while True:\n        pass\n"


@pytest.mark.parametrize("tests, statuses", [
    # The judge holds its records back for a moment and sends them together (inside/worker.py, _HOLD_S):
    # after a kill it must still credit what was decided and charge the timeout to the test that hung.
    (["assert add(1, 2) == 3", "assert mul(2, 3) == 6", "assert spin()", "assert add(2, 2) == 4"],
     ["passed", "passed", "timeout", "timeout"]),
    # A test that loops in the judge itself: the judge cannot answer, so the worker must find the test again.
    (["assert add(1, 2) == 3", "while True:\n    pass", "assert add(2, 2) == 4"], ["passed", "timeout", "timeout"]),
])
def test_a_hang_ends_its_job_after_one_limit(sb, tests, statuses):
    """Plain Python under one overall limit stops at its first hang: so does a job, and a program that never
    ends costs one per-test limit, however many tests follow."""
    label = parse_label({"format": "assert", "time_limit_s": 0.5, "tests": tests + ["assert add(0, 0) == 0"] * 16})
    t0 = time.monotonic()
    r = sb.run([Job(SPIN, label)])[0]
    took = time.monotonic() - t0
    assert [o.status for o in r.outcomes] == statuses + ["timeout"] * 16
    hung = statuses.index("timeout")
    assert r.outcomes[-1].detail == f"not run: test {hung} exceeded its time limit"
    # one limit (its wall clock up to STARVED_CAP x on a starved machine) plus a probe, not one per test (17 x 0.5 s)
    assert took < STARVED_CAP * 0.5 + 0.5 + 1.5, f"{took:.1f} s: more than one limit (plus a probe) for one hang"


def test_a_fixture_that_hangs_costs_the_tests_it_sets_up(sb):
    mod = ("import unittest\nclass A(unittest.TestCase):\n    def test_ok(self):\n        self.assertEqual(add(1, 2), 3)\n"
           "class B(unittest.TestCase):\n    @classmethod\n    def setUpClass(cls):\n        spin()\n"
           "    def test_x(self):\n        pass\n    def test_y(self):\n        pass\n"
           "class C(unittest.TestCase):\n    def test_z(self):\n        self.assertEqual(mul(2, 3), 6)\n")
    label = parse_label({"format": "unittest", "time_limit_s": 0.5, "tests": [mod]})
    assert [o.status for o in sb.run([Job(SPIN, label)])[0].outcomes] == ["passed", "timeout", "timeout", "timeout"]


def test_each_worker_keeps_to_a_cpu_of_its_own():
    # pin_workers: with one worker per usable CPU, a worker, its judge and its programs stay on one CPU, each
    # worker on another; a smaller pool, or pin_workers off, leaves the scheduler free.
    cpus = sorted(os.sched_getaffinity(0))
    assert [pinned_cpu(k, 4, [0, 1, 2, 3]) for k in range(4)] == [0, 1, 2, 3]
    assert pinned_cpu(0, 2, [0, 1, 2, 3]) is None and pinned_cpu(0, 8, [0, 1, 2, 3]) is None
    assert pinned_cpu(1, 2, [4, 9], enabled=False) is None
    label = parse_label({"format": "assert", "tests": ["assert not CPUS, CPUS"]})
    jobs = [Job(f"import os\nCPUS = sorted(os.sched_getaffinity(0))  # {i}\n", label) for i in range(8)]
    seen = {}
    n = min(len(cpus), 8)  # the real pool on this machine (CI's has 2 CPUs: every one of them)
    for pin in (True, False):
        cfg = {**FAST, "workers": n}
        with Sandbox(SandboxConfig(isolation="bwrap", pin_workers=pin, **cfg)) as s:
            seen[pin] = {r.outcomes[0].detail.rsplit("AssertionError: ", 1)[-1] for r in s.run(jobs)}
    assert seen[False] == {str(cpus)}
    if n == len(cpus) and n > 1:
        assert seen[True] <= {str([c]) for c in cpus} and len(seen[True]) > 1


def test_the_zygotes_rehearsal_takes_the_paths_of_a_real_job():
    # The zygote runs a stand-in job before its first fork so that candidates inherit warm code; one that
    # errs (the candidate's protocol changed under it) would warm the wrong paths and save nothing.
    code = ("import json, os, socket\na, b = socket.socketpair()\nos.dup2(a.fileno(), 3)\n"
            "from coderl.rewards.sandbox.inside import zygote\nprint(json.dumps([r[0] for r in zygote._rehearse()]))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert json.loads(out.stdout) == ["ok", "ok", "ok", "raise", "ok", "ok", "ok", "raise"], out.stderr


def test_memory_limit(sb):
    label = parse_label({"format": "assert", "tests": ["assert len(f()) > 0", "assert g()"]})
    r = sb.run([Job("def f():\n    return bytearray(8 * 1024 ** 3)\n\ndef g():\n    return 1\n", label)])[0]
    assert [o.status for o in r.outcomes] == ["memory", "passed"]


# Each child holds less than memory_mb (RLIMIT_AS, per process), together more than job_memory_mb.
# The program goes on once they hold it (a loaded machine may take a while to fill 450 MB on one CPU), and lets
# the worker read the job's memory a few times.
_FORKED_HOGS = ("import os, time\nr, w = os.pipe()\nfor _ in range(3):\n    if os.fork() == 0:\n"
                "        b = bytearray(150 << 20)\n        os.write(w, b'x')\n        time.sleep(5)\n        os._exit(0)\n"
                "for _ in range(3):\n    os.read(r, 1)\ntime.sleep(0.3)\n")


def test_a_jobs_processes_together_stay_within_job_memory():
    """RLIMIT_AS bounds one process: a job forking max_processes children held that many times memory_mb (the
    host's memory, shared with every worker's jobs and the trainer). The job's processes together are bounded;
    a right program forking small children beside it keeps its verdict (red team r28)."""
    cfg = SandboxConfig(isolation="bwrap", workers=2, test_timeout_s=3.0, job_timeout_s=10.0, memory_mb=256,
                        job_memory_mb=256)
    fn = parse_label({"format": "assert", "tests": ["assert f(2) == 4"]})
    stdio = parse_label({"format": "stdio", "tests": [{"input": "2\n", "output": "4\n"}]})
    small = ("import os\nkids = [os.fork() for _ in range(3)]\nif 0 in kids:\n    os._exit(0)\n"
             "for k in kids:\n    os.waitpid(k, 0)\n")
    with Sandbox(cfg) as s:
        r = s.run([Job(_FORKED_HOGS + "def f(x):\n    return x * x\n", fn),
                   Job(_FORKED_HOGS + "print(int(input()) ** 2)\n", stdio),
                   Job(small + "def f(x):\n    return x * x\n", fn),
                   Job(small + "print(int(input()) ** 2)\n", stdio)])
    assert [[o.status for o in x.outcomes] for x in r] == [["memory"], ["memory"], ["passed"], ["passed"]], r
    assert "256 MiB together" in r[0].outcomes[0].detail


def test_environment_is_scrubbed(sb, monkeypatch):
    monkeypatch.setenv("WANDB_API_KEY", "sekrit-wandb-123")
    monkeypatch.setenv("HF_TOKEN", "sekrit-hf-456")
    code = f"""
import os
def leak():
    found = [repr(dict(os.environ))]
    for pid in ("self", "1", "{os.getpid()}", "{os.getppid()}"):
        try:
            found.append(open(f"/proc/{{pid}}/environ", "rb").read().decode("latin-1"))
        except Exception as e:
            found.append(type(e).__name__)
    return "\\n".join(found)
"""
    label = parse_label({"format": "assert", "tests": ["assert 'sekrit' in leak()", "assert len(leak()) > 0",
                                                       "assert 'WANDB' not in leak() and 'HF_TOKEN' not in leak()"]})
    with Sandbox(SandboxConfig(isolation="bwrap", workers=1)) as fresh:  # started after the secret was set
        for s in (sb, fresh):
            assert [o.status for o in s.run([Job(code, label)])[0].outcomes] == ["failed", "passed", "passed"]


def test_arun_does_not_block_the_event_loop(sb):
    label = parse_label({"format": "assert", "tests": ["assert f()"]})
    jobs = [Job(f"import time\ndef f():\n    time.sleep(0.4)\n    return {i + 1}\n", label) for i in range(4)]

    async def main():
        ticks = 0

        async def ticker():
            nonlocal ticks
            while True:
                await asyncio.sleep(0.01)
                ticks += 1

        t = asyncio.create_task(ticker())
        res = await sb.arun(jobs)
        t.cancel()
        return res, ticks

    res, ticks = asyncio.run(main())
    assert all(r.pass_rate == 1.0 for r in res)
    assert ticks >= 30  # ~0.8 s of jobs on 2 workers; the loop kept ticking meanwhile


def test_thread_safe_concurrent_runs(sb):
    label = parse_label({"format": "assert", "tests": ["assert f() == 1"]})
    out: dict = {}

    def worker(k):
        out[k] = sb.run([Job(f"def f():\n    return {1 if k % 2 else 2}  # {k}\n", label) for _ in range(3)])

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(out) == list(range(6))
    for k, res in out.items():
        assert [r.pass_rate for r in res] == [1.0 if k % 2 else 0.0] * 3


def _worker_pids() -> list[int]:
    me = psutil.Process()
    return [p.pid for p in me.children(recursive=True)  # the interpreters bwrap started (not job children)
            if p.name().startswith("python") and p.parent() and p.parent().name() == "bwrap"]


def test_dead_worker_is_replaced_and_its_job_run_again(sb):
    label = parse_label({"format": "assert", "tests": ["assert f()"]})
    slow = [Job(f"import time\ndef f():\n    time.sleep(1.5)\n    return {i}\n", label) for i in (1, 2)]
    results: list = []
    before = sb.info()["stats"]["rerun_lost"]
    t = threading.Thread(target=lambda: results.extend(sb.run(slow)))
    t.start()
    time.sleep(0.6)
    victims = _worker_pids()
    assert len(victims) == 2
    os.kill(victims[0], signal.SIGKILL)
    t.join(60)
    # the job in flight on the killed worker was no failure of its program: it ran again on a fresh worker
    assert [(r.outcomes[0].status, r.infra) for r in results] == [("passed", ""), ("passed", "")]
    assert sb.info()["stats"]["rerun_lost"] == before + 1
    assert sb.run([Job(FN, parse_label(LABELS["assert"]))])[0].pass_rate == 1.0
    assert sb.info()["workers_alive"] == 2


def _judge_pids() -> list[int]:
    """Each worker's judge: of the two processes a worker forks, the later one (the zygote comes first)."""
    out = []
    for pid in _worker_pids():
        helpers = sorted(psutil.Process(pid).children(), key=lambda p: (p.create_time(), p.pid))
        if len(helpers) == 2:
            out.append(helpers[1].pid)
    return out


SLOW3 = parse_label({"format": "assert", "tests": ["assert f(1) == 1", "assert f(2) == 2", "assert f(3) == 3"]})
SLOW_RIGHT = "import time\ndef f(x):\n    time.sleep(0.4)\n    return x\n"


def test_a_judge_killed_from_outside_costs_no_verdict(sb):
    # SIGKILL from outside the job (here: this process; an operator, the OOM killer) is not the program's doing:
    # no process of the job can signal the judge (its own pid namespace holds them). The job runs again.
    before = sb.info()["stats"]["rerun_lost"]
    results: list = []
    t = threading.Thread(target=lambda: results.extend(sb.run([Job(SLOW_RIGHT + f"# {i}\n", SLOW3) for i in (1, 2)])))
    t.start()
    time.sleep(0.6)  # both jobs mid-test (each test takes 0.4 s)
    judges = _judge_pids()
    assert len(judges) == 2
    for pid in judges:
        os.kill(pid, signal.SIGKILL)
    t.join(60)
    assert [(r.pass_rate, r.infra) for r in results] == [(1.0, ""), (1.0, "")], \
        [[(o.status, o.detail[:80]) for o in r.outcomes] for r in results]
    assert sb.info()["stats"]["rerun_lost"] == before + 2


def test_a_job_lost_twice_is_reported_as_cut_never_as_the_programs_failure():
    with Sandbox(SandboxConfig(isolation="bwrap", workers=1, test_timeout_s=2.0, job_timeout_s=10.0)) as s:
        results: list = []
        t = threading.Thread(target=lambda: results.extend(s.run([Job(SLOW_RIGHT, SLOW3)])))
        t.start()
        killed: set[int] = set()
        deadline = time.monotonic() + 20
        while t.is_alive() and time.monotonic() < deadline:  # every judge, as soon as the job is mid-test
            time.sleep(0.5)
            for pid in set(_judge_pids()) - killed:
                os.kill(pid, signal.SIGKILL)
                killed.add(pid)
        t.join(30)
        (r,) = results
        assert r.infra == "lost" and len(killed) >= 2, (r, killed)
        assert s.info()["stats"]["lost"] == 1 and s.info()["stats"]["rerun_lost"] == 1
        assert "killed from outside the job" in r.detail


@pytest.mark.parametrize("how", ["kill_itself", "close_its_channel", "kill_its_parent", "exit"])
def test_a_program_cannot_pass_for_a_lost_job(sb, how):
    # What a program does to itself (or to whatever of the sandbox it can reach) is its own verdict, never "lost":
    # no rerun, no neutral reward.
    body = {"kill_itself": "os.kill(os.getpid(), signal.SIGKILL)", "close_its_channel": "os.close(3)",
            "kill_its_parent": "os.kill(os.getppid(), signal.SIGKILL)\n    os.kill(1, signal.SIGKILL)",
            "exit": "os._exit(0)"}[how]
    before = sb.info()["stats"]
    code = f"import os, signal\ndef f(x):\n    {body}\n    return x\n"
    (r,) = sb.run([Job(code, SLOW3)])
    assert r.infra == "" and r.passed == 0, [(o.status, o.detail[:80]) for o in r.outcomes]
    after = sb.info()["stats"]
    assert (after["rerun_lost"], after["lost"]) == (before["rerun_lost"], before["lost"])


def test_info_and_isolation(sb):
    info = sb.info()
    assert info["mode"] == "bwrap" and info["warnings"] == [] and info["workers"] == 2
    assert info["bwrap_version"].startswith("bubblewrap")
    assert info["sandbox_uid"] != 0 or os.geteuid() != 0
    assert isolation_info(SandboxConfig(isolation="rlimits"))["mode"] == "rlimits"


def test_closed_pool_raises():
    s = Sandbox(SandboxConfig(workers=1))
    s.start()
    s.close()
    with pytest.raises(SandboxError, match="closed"):
        s.run([Job(FN, parse_label(LABELS["assert"]))])


def test_rlimits_fallback_mode(monkeypatch):
    monkeypatch.setenv("WANDB_API_KEY", "sekrit-wandb-123")
    code = FN + "import os\ndef env():\n    return repr(dict(os.environ))\n"
    label = parse_label({"format": "assert", "time_limit_s": 0.5, "tests": [
        "assert add(1, 2) == 3", "assert 'sekrit' not in env()", "assert mul(2, 2) == 5"]})
    with Sandbox(SandboxConfig(isolation="rlimits", workers=1)) as s:
        assert s.info()["mode"] == "rlimits" and s.info()["warnings"]  # loud: weaker isolation
        r = s.run([Job(code, label), Job(PROGRAMS["timeout"], label), Job(STDIO["passing"], parse_label(LABELS["stdio"]))])
    assert [o.status for o in r[0].outcomes] == ["passed", "passed", "failed"]
    assert [o.status for o in r[1].outcomes] == ["timeout", "timeout", "timeout"]  # the first hang ends the job
    assert r[2].pass_rate == 1.0


# Values cross to the judge as plain data (docs/sandbox.md): what is equal in Python stays equal. Comparing
# objects of the program's own classes is "unsupported" (tests/rewards/sandbox/test_channel.py).
LEGIT_SOLUTION = (
    "import collections, enum, fractions\n"
    "class Point:\n    def __init__(self, x, y):\n        self.x, self.y = x, y\n"
    "    def __eq__(self, o):\n        return isinstance(o, Point) and (self.x, self.y) == (o.x, o.y)\n"
    "    def __hash__(self):\n        return hash((self.x, self.y))\n"
    "Pair = collections.namedtuple('Pair', 'a b')\nclass Color(enum.IntEnum):\n    RED = 1\n"
    "def f(k):\n    return {'int': 2, 'nested': [1, [2.0, (3, {'a': [4]})]], 'set': {1, 2}, 'none': None,\n"
    "            'nt': Pair(1, 2), 'point': Point(1, 2), 'points': [Point(1, 2)], 'counter': collections.Counter('aab'),\n"
    "            'od': collections.OrderedDict(a=1), 'dd': collections.defaultdict(list, {'a': [1]}), 'float': 0.1 + 0.2,\n"
    "            'perm': [3, 1, [2]], 'enum': Color.RED, 'frac': fractions.Fraction(1, 2), 'text': 'abc',\n"
    "            'big': list(range(20000))}[k]\n")
LEGIT_CHECKS = [  # (== / != / in expression, unittest assertion)
    ("f('int') == 2.0", "self.assertEqual(f('int'), 2.0)"),
    ("f('nested') == [1, [2, (3, {'a': [4]})]]", "self.assertEqual(f('nested'), [1, [2, (3, {'a': [4]})]])"),
    ("f('set') == {2, 1} and f('set') != {1}", "self.assertSetEqual(f('set'), {1, 2})"),
    ("f('none') == None", "self.assertEqual(f('none'), None)"),
    ("f('nt') == (1, 2)", "self.assertTupleEqual(f('nt'), (1, 2))"),
    ("f('counter') == {'a': 2, 'b': 1}", "self.assertDictEqual(f('counter'), {'a': 2, 'b': 1})"),
    ("f('od') == {'a': 1} and f('dd') == {'a': [1]}", "self.assertEqual(f('dd'), {'a': [1]})"),
    ("abs(f('float') - 0.3) < 1e-9 and f('float') != 0.3", "self.assertAlmostEqual(f('float'), 0.3)"),
    ("sorted(f('perm')[:2]) == [1, 3] and [2] in f('perm')", "self.assertCountEqual(f('perm'), [[2], 1, 3])"),
    ("f('enum') == 1 and f('frac') == 0.5", "self.assertEqual(f('enum'), 1)"),
    ("'b' in f('text') and 'z' not in f('text') and 1 < 2 == 2.0", "self.assertNotIn('z', f('text'))"),
    ("f('big') == list(range(20000))", "self.assertEqual(f('big'), list(range(20000)))"),
]


def test_plain_data_keeps_legitimate_tests_passing(sb):
    ut = "import unittest\nclass T(unittest.TestCase):\n" + "".join(
        f"    def test_{i}(self):\n        {a}\n" for i, (_, a) in enumerate(LEGIT_CHECKS))
    he = "def check(candidate):\n" + "".join(f"    assert {e}\n" for e, _ in LEGIT_CHECKS)
    labels = [{"format": "assert", "tests": [f"assert {e}" for e, _ in LEGIT_CHECKS]},
              {"format": "unittest", "tests": [ut]}, {"format": "humaneval", "entry_point": "f", "tests": [he]}]
    results = sb.run([Job(LEGIT_SOLUTION, parse_label(lab)) for lab in labels])
    for lab, r in zip(labels, results, strict=True):
        assert r.expected == len(LEGIT_CHECKS), lab["format"]
        assert r.pass_rate == 1.0, (lab["format"], [(i, o.detail) for i, o in enumerate(r.outcomes) if o.status != "passed"])


def test_cancelled_arun_leaves_the_pool_working(sb):
    label = parse_label(LABELS["assert"])
    slow = [Job("import time\ntime.sleep(0.4)\n" + FN + f"# {i}\n", label) for i in range(5)]

    async def cancel_mid_flight():
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(sb.arun(slow), 0.1)  # two jobs running, three queued: all cancelled

    asyncio.run(cancel_mid_flight())
    time.sleep(1.0)  # the running ones finish and complete their (cancelled) futures
    assert sb.info()["workers_alive"] == sb.config.workers
    res = sb.run([Job(FN + f"# after {i}\n", label) for i in range(4)])
    assert [r.pass_rate for r in res] == [1.0] * 4
    assert sb.info()["workers_alive"] == sb.config.workers


# ----------------------------------------------------------------------------- lanes, limits and deadline cuts
HANG = "def add(a, b):\n    while True:\n        pass\n"
BUSY = ("import time\ndef add(a, b):\n    t = time.process_time()\n    while time.process_time() - t < {s}:\n"
        "        pass\n    return a + b\n")  # a CPU-heavy honest program: right, but needs {s} s of CPU per test
ADD = parse_label({"format": "assert", "tests": ["assert add(1, 2) == 3", "assert add(2, 2) == 4"]})


@pytest.fixture(scope="module")
def lanes():
    with Sandbox(SandboxConfig(isolation="bwrap", workers=2, test_timeout_s=1.5, job_timeout_s=10.0,
                               probe_s=0.1)) as s:
        yield s


def test_time_limits_come_from_the_label():
    cfg = SandboxConfig(test_timeout_s=4.0, job_timeout_s=20.0, probe_s=0.5)
    assert time_limits(ADD, cfg) == (4.0, 20.0, 0.5)  # no data: the documented default
    verified = parse_label({**json.loads(ADD.to_json()), "ref_time_s": 0.01})
    assert time_limits(verified, cfg) == (1.0, 20.0, 0.0)  # the floor; a limit that tight needs no probe
    heavy = parse_label({**json.loads(ADD.to_json()), "ref_time_s": 4.6})
    assert time_limits(heavy, cfg) == (18.4, 36.8, 0.0)  # 4 x the reference; the job fits two such tests
    assert time_limits(verified, cfg.model_copy(update={"probe_s": 0.2, "time_floor_s": 2.0}))[2] == 0.2
    huge = parse_label({**json.loads(ADD.to_json()), "ref_time_s": 30.0})
    assert time_limits(huge, cfg)[0] == 20.0  # the cap
    given = parse_label({**json.loads(ADD.to_json()), "ref_time_s": 0.01, "time_limit_s": 0.3})
    assert time_limits(given, cfg) == (0.3, 20.0, 0.0)  # the dataset's own limit wins; no probe would be short enough
    assert time_limits(ADD, cfg.model_copy(update={"probe_s": 0.0}))[2] == 0.0


def test_a_right_program_gets_the_same_verdict_among_more_hangs_than_workers(lanes):
    right = [Job(FN + f"# right {i}\n", ADD) for i in range(4)]
    wrong = [Job(PROGRAMS["failing"] + f"# wrong {i}\n", ADD) for i in range(4)]
    hangs = [Job(HANG + f"# hang {i}\n", ADD) for i in range(6)]
    alone = lanes.run(right[:1] + wrong[:1])
    slow0 = lanes.info()["stats"]["slow_lane"]
    t0 = time.monotonic()
    batch = [j for trio in zip(hangs, right + wrong[:2], strict=False) for j in trio] + wrong[2:]
    res = lanes.run(batch)
    took = time.monotonic() - t0
    by_code = {j.code: r for j, r in zip(batch, res, strict=True)}
    for j in right:
        assert [o.status for o in by_code[j.code].outcomes] == [o.status for o in alone[0].outcomes] == ["passed"] * 2
    for j in wrong:
        assert [o.status for o in by_code[j.code].outcomes] == [o.status for o in alone[1].outcomes]
    for j in hangs:
        r = by_code[j.code]
        assert [o.status for o in r.outcomes] == ["timeout", "timeout"] and not r.infra
        assert r.outcomes[1].detail == "not run: test 0 exceeded its time limit"
    # each hang costs a probe plus one full limit: it runs once in the slow lane, whatever else is in the batch
    assert lanes.info()["stats"]["slow_lane"] - slow0 == len(hangs)
    # 6 x (0.1 + 1.5) / 2 = 4.8 s idle; a limit's wall clock grows up to STARVED_CAP x on a starved machine
    assert took < 6 * (0.1 + STARVED_CAP * 1.5) / 2 + 3, f"{took:.1f} s"


def test_the_fast_lane_runs_honest_work_before_reruns(lanes):
    hangs = [Job(HANG + f"# first {i}\n", ADD) for i in range(4)]
    order: list[str] = []

    def later():
        time.sleep(0.5)  # the hangs have left the fast lane and wait in the slow one
        t = time.monotonic()
        r = lanes.run([Job(FN + "# later\n", ADD)])
        order.append(f"{r[0].status} {time.monotonic() - t:.2f}")

    th = threading.Thread(target=later)
    th.start()
    lanes.run(hangs)
    th.join(10)
    status, took = order[0].split()
    assert status == "passed"
    # at most the slow-lane job a worker is running (its limit, up to STARVED_CAP x its wall clock when starved)
    assert float(took) < STARVED_CAP * 1.5 + 0.6, f"{took} s: a later call's first run waited behind the slow lane"


@pytest.mark.parametrize("seconds", [0.3])
def test_a_cpu_heavy_honest_program_keeps_its_verdict(lanes, seconds):
    before = lanes.info()["stats"]["slow_lane"]
    r = lanes.run([Job(BUSY.format(s=seconds), ADD), Job(HANG + "# beside it\n", ADD)])
    assert [o.status for o in r[0].outcomes] == ["passed", "passed"], [o.detail for o in r[0].outcomes]
    assert lanes.info()["stats"]["slow_lane"] - before >= 2  # both exceeded the 0.1 s probe: ran again in full


STARVED = """
import json, os, subprocess, sys, time
from coderl.rewards.config import SandboxConfig
from coderl.rewards.labels import parse_label
from coderl.rewards.sandbox import Job, Sandbox
cpu = int(sys.argv[1])
os.sched_setaffinity(0, {cpu})  # the pool, its worker and every program share one CPU with the hogs
busy = "import time\\ndef add(a, b):\\n    t = time.process_time()\\n    while time.process_time() - t < %s:\\n        pass\\n    return a + b\\n"
jobs = {"right": busy % 0.5, "slow": busy % 1.6, "sleeps": "import time\\ndef add(a, b):\\n    time.sleep(1.6)\\n    return a + b\\n",
        "hang": "def add(a, b):\\n    while True:\\n        pass\\n"}
label = parse_label({"format": "assert", "time_limit_s": 1.0, "tests": ["assert add(1, 2) == 3"]})
# The program's own children hold its CPU while its main process spins: the main process's wait is theirs. It
# needs 1.2 s of its children's CPU beside its own spin, over the 1 s limit, and was credited that wait.
forks = ("import os, time\\ndef add(a, b):\\n    kids = set()\\n    for _ in range(3):\\n        pid = os.fork()\\n"
         "        if pid == 0:\\n            t = time.process_time()\\n            while time.process_time() - t < 0.4:\\n"
         "                pass\\n            os._exit(0)\\n        kids.add(pid)\\n    while kids:\\n"
         "        kids.discard(os.waitpid(-1, os.WNOHANG)[0])\\n    return a + b\\n")
hog = "import os, time\\nos.sched_setaffinity(0, {%d})\\nt = time.monotonic()\\nwhile time.monotonic() - t < 40:\\n    pass\\n" % cpu
with Sandbox(SandboxConfig(isolation="bwrap", workers=1, probe_s=0.0, job_timeout_s=30.0)) as sb:
    sb.run([Job(busy % 0.01, label)])  # warm
    t0 = time.monotonic()
    r = sb.run([Job(forks, label)])[0]  # no hogs: its own children are all that holds its CPU
    out = {"forks": [r.outcomes[0].status, time.monotonic() - t0]}
    # each hog in a session of its own, as the sandbox's workers are: with autogroup scheduling (a group per
    # session) two hogs of the test's session would hold only the share of one group beside the candidate's
    hogs = [subprocess.Popen([sys.executable, "-c", hog], start_new_session=True) for _ in range(2)]
    try:
        time.sleep(1.0)  # the hogs are up and spinning
        for name, code in jobs.items():
            t0 = time.monotonic()
            r = sb.run([Job(code, label)])[0]
            out[name] = [r.outcomes[0].status, time.monotonic() - t0]
    finally:
        for h in hogs:
            h.kill()
print(json.dumps(out))
"""


def test_a_starved_program_is_timed_by_the_time_it_could_run():
    """A machine busy with other work (a trainer beside the reward server) must not fail a right program: the
    time a test waits for a CPU held by others is not charged to it, while computing and sleeping are."""
    cpu = min(os.sched_getaffinity(0))
    out = subprocess.run([sys.executable, "-c", STARVED, str(cpu)], capture_output=True, text=True, timeout=100)
    assert out.returncode == 0, out.stderr[-3000:]
    got = json.loads(out.stdout.splitlines()[-1])
    # 0.5 s of CPU at a third of a CPU: ~1.5 s of wall clock, over the 1 s limit, yet right
    assert got["right"][0] == "passed", got
    assert got["right"][1] > 1.0, f"{got}: the CPU was not contended, nothing was tested"
    assert got["slow"][0] == "timeout", got  # 1.6 s of CPU is over the limit however long it waited
    assert got["sleeps"][0] == "timeout", got  # sleeping is the program's own time, as in plain Python
    assert got["hang"][0] == "timeout" and got["hang"][1] < STARVED_CAP * 1.0 + 3, got  # bounded
    # its children's 1.2 s of CPU, over the limit: the wait they caused its main process is not credited (it
    # passed, red team r27); a plain run on this one CPU times out too
    assert got["forks"][0] == "timeout", got


def test_ref_time_s_drives_the_limit(lanes):
    verified = parse_label({**json.loads(ADD.to_json()), "ref_time_s": 0.05})  # limit: the 1 s floor, not 1.5 s
    slow = "import time\ndef add(a, b):\n    time.sleep(1.2)\n    return a + b\n"  # its own time, whatever the load
    r = lanes.run([Job(slow, verified), Job(slow, ADD)])
    assert r[0].outcomes[0].status == "timeout"  # 1.2 s > 1.0 s: the label's own limit
    assert [o.status for o in r[1].outcomes] == ["passed", "passed"]  # 1.2 s < 1.5 s: the default


def test_stdio_lanes_hangs_and_cuts(lanes):
    label = parse_label({"format": "stdio", "tests": [{"input": f"{i} 1\n", "output": f"{i + 1}\n"} for i in range(5)]})
    busy = ("import time\nt = time.process_time()\nwhile time.process_time() - t < 0.2:\n    pass\n"
            "a, b = map(int, input().split())\nprint(a + b)\n")
    t0 = time.monotonic()
    r = lanes.run([Job(STDIO["timeout"], label), Job(busy, label), Job(STDIO["passing"], label)])
    assert time.monotonic() - t0 < 0.1 + STARVED_CAP * 1.5 + 0.3 * 5 + 3
    assert [o.status for o in r[0].outcomes] == ["timeout"] * 5  # one case hung: the job ended
    assert r[0].outcomes[1].detail == "not run: test 0 exceeded its time limit"
    assert r[1].pass_rate == 1.0 and r[2].pass_rate == 1.0
    t0 = time.monotonic()
    cut = lanes.run([Job(STDIO["timeout"] + f"# {i}\n", label) for i in range(4)], deadline_s=0.3)
    assert time.monotonic() - t0 < 1.0
    # cut in the slow lane (their first run, which exceeded the probe) or before their first run ended
    assert {(r.infra, r.outcomes[0].detail) for r in cut} <= {("probe", "wall-clock limit exceeded"),
                                                              ("deadline", "cut by the batch deadline")}
    assert all(r.status == "timeout" for r in cut)
    after = lanes.run([Job(STDIO["passing"] + f"# {i}\n", label) for i in range(2)])
    assert [r.pass_rate for r in after] == [1.0, 1.0]


# A run starts only with its bound (its job limit, 8 s here, + pool.START_MARGIN_S) left before its call's deadline.
# A deadline 0.9 s past the bound lets the first runs that start at once run, and no rerun: a rerun is taken after its
# first run's 1 s probe ran out.
CUT_CFG = SandboxConfig(isolation="bwrap", workers=2, test_timeout_s=4.0, job_timeout_s=8.0, probe_s=1.0)
BOUND_S = run_bound_s(ADD, CUT_CFG)


@pytest.fixture(scope="module")
def cutting():
    with Sandbox(CUT_CFG) as s:
        yield s


def test_no_run_starts_that_could_still_be_going_at_the_deadline(cutting):
    stats0 = dict(cutting.info()["stats"])
    t0 = time.monotonic()
    res = cutting.run([Job(FN + "# cut right\n", ADD)] + [Job(HANG + f"# cut {i}\n", ADD) for i in range(2)],
                      deadline_s=BOUND_S + 0.9)
    assert time.monotonic() - t0 < 4.0  # settled once nothing of it could start in time, not at the deadline
    assert res[0].pass_rate == 1.0 and not res[0].infra
    for r in res[1:]:  # exceeded the probe (their choice of speed), no time for the rerun: scored by that run
        assert r.infra == "probe" and [o.status for o in r.outcomes] == ["timeout", "timeout"], (r.infra, r.detail)
    t0 = time.monotonic()
    none = cutting.run([Job(FN + f"# too late {i}\n", ADD) for i in range(3)], deadline_s=BOUND_S - 0.5)
    assert time.monotonic() - t0 < 1.0  # nothing could start: settled at once
    for r in none:  # never started: no evidence about the program (the neutral reward), nothing it chose
        assert r.infra == "deadline" and r.status == "timeout" and r.detail == "cut by the batch deadline"
    t0 = time.monotonic()
    after = cutting.run([Job(FN + f"# after {i}\n", ADD) for i in range(4)])
    assert time.monotonic() - t0 < 1.5, "the next call waited for work the deadline left unstarted"
    assert [r.pass_rate for r in after] == [1.0] * 4
    stats = cutting.info()["stats"]
    assert stats["not_started"] - stats0["not_started"] == 5 and stats["overrun"] == stats0["overrun"]
    assert stats["worker_restarts"] == stats0["worker_restarts"]
    assert cutting.info()["workers_alive"] == 2


def test_a_slow_wrong_program_never_reaches_the_neutral_cut(cutting):
    # A wrong program slow enough to still be running at the deadline (2 tests x 1.5 s in its one run) got the
    # neutral reward, its prompt's mean (issue 35). Whatever the deadline, it now either runs to its verdict or does
    # not start, as its fast twin.
    label = parse_label({**json.loads(ADD.to_json()), "time_limit_s": 3.0})  # a 1 s probe is over a quarter: one run
    slow = "import time\ndef add(a, b):\n    time.sleep(1.5)\n    return -1\n"
    fast = "def add(a, b):\n    return -1\n"
    bound = run_bound_s(label, CUT_CFG)
    for k, deadline in enumerate((bound - 0.5, bound + 0.5)):
        t0 = time.monotonic()
        cheat, twin = cutting.run([Job(slow + f"# {k}\n", label), Job(fast + f"# {k}\n", label)], deadline_s=deadline)
        assert time.monotonic() - t0 < deadline
        if deadline < bound:  # neither could start: the same cut for both, whatever their speed
            assert cheat.infra == twin.infra == "deadline"
        else:  # both ran to their verdict: wrong
            assert not cheat.infra and not twin.infra and cheat.pass_rate == twin.pass_rate == 0.0
            assert [o.status for o in cheat.outcomes] == ["failed", "failed"]


def test_an_overrun_is_scored_as_timeouts_never_the_neutral_cut(cutting):
    # A run still going at the deadline started with its whole bound left, so it is past its job limit: its decided
    # tests stand, the others time out ("overrun", never cached), what the job limit would have left it. No worker
    # overruns here by itself: the call is cut from outside while the run goes on, as a deadline that came early.
    slow = "import time\ndef add(a, b):\n    time.sleep(0.8)\n    return -1\n"  # wrong; each test over the probe
    label = parse_label({**json.loads(ADD.to_json()), "time_limit_s": 3.0})  # no probe: one run, 2 x 0.8 s
    stats0 = dict(cutting.info()["stats"])
    items, batch = cutting._submit([Job(slow, label)], deadline_s=BOUND_S + 30)
    time.sleep(0.5)
    cutting._cut(batch)
    r = items[0].result
    assert r.infra == "overrun" and r.pass_rate == 0.0 and r.status == "timeout", (r.infra, r.detail)
    finished = cutting.run([Job(slow + "# twin\n", label)])[0]
    assert not finished.infra and finished.pass_rate == 0.0 and r.pass_rate <= finished.pass_rate
    stats = cutting.info()["stats"]
    assert stats["overrun"] - stats0["overrun"] == 1 and stats["aborted"] - stats0["aborted"] == 1
    assert stats["worker_restarts"] == stats0["worker_restarts"]  # aborted in its worker, which stayed warm


def test_a_rerun_with_full_limits_is_no_second_try_at_the_tests_the_first_run_decided():
    # The slow lane reruns a job from the start; a test its first run decided kept the rerun's verdict, so a
    # program that slept past the probe whenever it had guessed drew again (0.40 of its 1-in-4 guesses passed).
    # Here the program tells its runs apart by the one worker's job directory: the probe run (job 1) fails test
    # a, the rerun (job 2) would pass it; test a keeps the first run's verdict, test b (the one that exceeded
    # the probe) gets the rerun's (red team r28).
    code = ("import os, time\ndef f(x):\n    return 4 if '/job2-' in os.getcwd() else 5\n"
            "def g():\n    if '/job1-' in os.getcwd():\n        time.sleep(0.8)\n    return 1\n")
    label = parse_label({"format": "unittest", "time_limit_s": 3.0, "tests": [
        "import unittest\nclass T(unittest.TestCase):\n    def test_a(self):\n        self.assertEqual(f(2), 4)\n"
        "    def test_b(self):\n        self.assertEqual(g(), 1)\n"]})
    with Sandbox(SandboxConfig(isolation="bwrap", workers=1, probe_s=0.5, job_timeout_s=10.0)) as s:
        r = s.run([Job(code, label)])[0]
        assert s.info()["stats"]["slow_lane"] == 1
    assert [o.status for o in r.outcomes] == ["failed", "passed"], [o.detail for o in r.outcomes]


def test_a_job_cut_after_exceeding_its_probe_keeps_its_first_run(cutting):
    # A hang deferred to the slow lane and cut there by the batch deadline got the neutral reward (its prompt's
    # mean: a right program's beside it), more than a wrong answer finishing gets. Its first run is evidence: it
    # keeps that run's verdict (at the probe's limits), never more than finishing would give it.
    half = "def add(a, b):\n    while a == 2:\n        pass\n    return a + b\n"  # passes test 0, hangs on test 1
    t0 = time.monotonic()
    # the probe runs end after ~1 s; their reruns cannot start with their bound left
    res = cutting.run([Job(half + "# probe cut\n", ADD), Job(HANG + "# probe cut\n", ADD)], deadline_s=BOUND_S + 0.9)
    assert time.monotonic() - t0 < 4.0
    assert [r.infra for r in res] == ["probe", "probe"], [(r.infra, r.detail) for r in res]
    assert [[o.status for o in r.outcomes] for r in res] == [["passed", "timeout"], ["timeout", "timeout"]]
    assert res[0].outcomes[1].detail == "wall-clock limit exceeded" and "rerun with full limits" in res[0].detail
    finished = cutting.run([Job(half + "# probe cut, finished\n", ADD)])[0]  # what finishing gives: no more
    assert [o.status for o in finished.outcomes] == ["passed", "timeout"] and not finished.infra


def test_a_cancelled_arun_aborts_its_running_jobs(lanes):
    stats0 = dict(lanes.info()["stats"])

    # 1 s: past the 0.1 s probes, inside the 1.5 s slow-lane reruns of 4 hangs on 2 workers, so a run is going
    # when the call is given up even on a loaded machine (at 0.3 s it could fall between the two lanes)
    async def give_up():
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(lanes.arun([Job(HANG + f"# gone {i}\n", ADD) for i in range(4)]), 1.0)

    asyncio.run(give_up())
    t0 = time.monotonic()
    assert lanes.run([Job(FN + "# next\n", ADD)])[0].pass_rate == 1.0
    assert time.monotonic() - t0 < 1.0
    assert lanes.info()["stats"]["aborted"] - stats0["aborted"] >= 1
    assert lanes.info()["stats"]["worker_restarts"] == stats0["worker_restarts"]


# A guesser that learns its verdict and stalls past the probe when it is failing: its probe run (job 1 of the one
# worker) answers wrong, learns so from what the test sends it next and sleeps past the probe; a rerun would answer
# right. The test was informed when the probe ran out, so that run is final: the test fails, no slow lane.
_WRONG = "import os, time\nWRONG = '/job1-' in os.getcwd()\ndef stall():\n    if WRONG:\n        time.sleep(1.0)\n"
_UT = "import unittest\nfrom solution import *\nclass T(unittest.TestCase):\n"
INFORMED = {
    "callback_raises": ("unittest", _WRONG + "def f(cb):\n    try:\n        cb(5 if WRONG else 4)\n"
                        "    except BaseException:\n        stall()\n        raise\n",
                        _UT + "    def test_a(self):\n        def cb(v):\n            self.assertEqual(v, 4)\n"
                        "        f(cb)\n"),
    "exit_gets_the_exception": ("unittest", _WRONG + "def f(x):\n    return 5 if WRONG else 4\nclass Ctx:\n"
                                "    def __enter__(self):\n        return self\n    def __exit__(self, et, ev, tb):\n"
                                "        if et is not None:\n            stall()\n        return False\n",
                                _UT + "    def test_a(self):\n        with Ctx():\n            self.assertEqual(f(2), 4)\n"),
    "teardown": ("unittest", _WRONG + "def f(x):\n    return 5 if WRONG else 4\ndef g():\n    stall()\n",
                 _UT + "    def tearDown(self):\n        g()\n    def test_a(self):\n        self.assertEqual(f(2), 4)\n"),
    "cleanup": ("unittest", _WRONG + "def f(x):\n    return 5 if WRONG else 4\ndef g():\n    stall()\n",
                _UT + "    def test_a(self):\n        self.addCleanup(g)\n        self.assertEqual(f(2), 4)\n"),
    "subtest_second_call": ("unittest", _WRONG + "N = []\ndef f(x):\n    N.append(x)\n    if len(N) > 1:\n"
                            "        stall()\n    return 5 if WRONG else 2 * x\n",
                            _UT + "    def test_a(self):\n        for x in (2, 3):\n            with self.subTest(x=x):\n"
                            "                self.assertEqual(f(x), 2 * x)\n"),
    "captured_output": ("unittest", _WRONG + "def f(x):\n    print(5 if WRONG else 4)\ndef g(seen):\n    stall()\n",
                        _UT + "    def test_a(self):\n        import io, contextlib\n        buf = io.StringIO()\n"
                        "        with contextlib.redirect_stdout(buf):\n            f(2)\n        g(buf.getvalue())\n"
                        "        self.assertEqual(buf.getvalue(), '4\\n')\n"),
    "humaneval_callback": ("humaneval", _WRONG + "def f(cb):\n    try:\n        cb(5 if WRONG else 4)\n"
                           "    except BaseException:\n        stall()\n        raise\n",
                           "def check(candidate):\n    def cb(v):\n        if v != 4:\n            raise AssertionError(v)\n"
                           "    assert candidate(cb) is None\n"),
    "pytest_fixture_teardown": ("pytest", _WRONG + "def f(x):\n    return 5 if WRONG else 4\ndef g():\n    stall()\n",
                                "import pytest\nfrom solution import f, g\n@pytest.fixture\ndef res():\n    yield\n"
                                "    g()\ndef test_a(res):\n    assert f(2) == 4\n"),
}


def _informed_label(fmt, test):
    if fmt == "humaneval":
        return parse_label({"format": "humaneval", "entry_point": "f", "tests": [test], "time_limit_s": 3.0})
    return parse_label({"format": fmt, "tests": [test], "time_limit_s": 3.0})


@pytest.mark.parametrize("way", sorted(INFORMED))
def test_a_test_the_program_was_informed_of_is_decided_by_its_first_run(way):
    fmt, code, test = INFORMED[way]
    with Sandbox(SandboxConfig(isolation="bwrap", workers=1, probe_s=0.5, job_timeout_s=10.0)) as s:
        r = s.run([Job(code, _informed_label(fmt, test))])[0]
        slow = s.info()["stats"]["slow_lane"]
    assert [o.status for o in r.outcomes] == ["failed"], [(o.status, o.detail) for o in r.outcomes]
    assert slow == 0


def test_an_uninformed_test_the_probe_ended_is_judged_by_the_rerun():
    # stalling on a test's first request tells the program nothing of its outcome: the rerun decides it
    code = _WRONG + "def f(x):\n    stall()\n    return 4\n"
    with Sandbox(SandboxConfig(isolation="bwrap", workers=1, probe_s=0.5, job_timeout_s=10.0)) as s:
        r = s.run([Job(code, _informed_label("unittest", _UT + "    def test_a(self):\n"
                                             "        self.assertEqual(f(2), 4)\n"))])[0]
        assert s.info()["stats"]["slow_lane"] == 1
    assert [o.status for o in r.outcomes] == ["passed"]


def test_honest_slow_programs_called_often_in_one_test_pass_in_the_fast_lane():
    # 6 calls of 0.15 s CPU each in one test, and a callback called 100 times with 0.01 s CPU before each: past the
    # 0.5 s probe, informed from their second frame, so the run goes on to the full limit (3 s) and stands
    many = parse_label({"format": "assert", "time_limit_s": 3.0,
                        "tests": ["assert [add(i, 1) for i in range(6)] == [1, 2, 3, 4, 5, 6]"]})
    heavy = ("import time\ndef each(cb, n):\n    for i in range(n):\n        t = time.process_time()\n"
             "        while time.process_time() - t < 0.01:\n            pass\n        cb(i)\n    return n\n")
    cbs = parse_label({"format": "assert", "time_limit_s": 3.0, "tests": ["assert each(lambda i: None, 100) == 100"]})
    with Sandbox(SandboxConfig(isolation="bwrap", workers=1, probe_s=0.5, job_timeout_s=10.0)) as s:
        res = s.run([Job(BUSY.format(s=0.15), many), Job(heavy, cbs)])
        assert s.info()["stats"]["slow_lane"] == 0
    assert [r.pass_rate for r in res] == [1.0, 1.0], [[o.detail for o in r.outcomes] for r in res]
    assert all(r.outcomes[0].runtime_s > 0.5 for r in res)  # they did outlive the probe

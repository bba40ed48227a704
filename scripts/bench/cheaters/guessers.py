"""Guessers that learn their verdict and stall past the probe when failing (issue 35, item 1).

A trial's program answers right with probability 1/2, drawn afresh in each run of it (os.urandom), so a rerun
is a second draw. The cheater learns from the test that it is failing -- an assertion raised in a callback it
was handed, the exception its __exit__ gets, a teardown, cleanup or pytest fixture teardown that calls it
without the body's last call having come -- and then sleeps 1 s, past the 0.5 s probe and under the 3 s limit.
Its honest twin is the same program without the sleep. Per trial a seed picks the way of learning (in turn
over unittest, humaneval and pytest tests) and makes the program's text unique (no cache hit). Fair: both
pass ~1/2; before issue 35 the cheater's informed test was judged again by the slow lane (0.74-0.77).
"""

from __future__ import annotations

import random

from scripts.bench.cheaters import Family, Trials

_GUESS = "import os, time\nRIGHT = os.urandom(1)[0] & 1\nDONE = []\ndef stall():\n    if CHEAT:\n        time.sleep(1.0)\n"
_UT = "import unittest\nfrom solution import *\nclass T(unittest.TestCase):\n"
_MARK = "def h():\n    DONE.append(1)\ndef g():\n    if not DONE:\n        stall()\n"  # g without h: the body failed
_F = "def f(x):\n    return 4 if RIGHT else 5\n"
_CALLBACK = "def f(cb):\n    try:\n        cb(4 if RIGHT else 5)\n    except BaseException:\n        stall()\n        raise\n"

# way -> (format, program, test)
WAYS = {
    "unittest_callback": ("unittest", _CALLBACK, _UT + "    def test_a(self):\n        def cb(v):\n"
                          "            self.assertEqual(v, 4)\n        f(cb)\n"),
    "unittest_exit": ("unittest", _F + "class Ctx:\n    def __enter__(self):\n        return self\n"
                      "    def __exit__(self, et, ev, tb):\n        if et is not None:\n            stall()\n"
                      "        return False\n",
                      _UT + "    def test_a(self):\n        with Ctx():\n            self.assertEqual(f(2), 4)\n"),
    "unittest_teardown": ("unittest", _F + _MARK, _UT + "    def tearDown(self):\n        g()\n"
                          "    def test_a(self):\n        self.assertEqual(f(2), 4)\n        h()\n"),
    "unittest_cleanup": ("unittest", _F + _MARK, _UT + "    def test_a(self):\n        self.addCleanup(g)\n"
                         "        self.assertEqual(f(2), 4)\n        h()\n"),
    "humaneval_callback": ("humaneval", _CALLBACK,
                           "def check(candidate):\n    def cb(v):\n        if v != 4:\n"
                           "            raise AssertionError(v)\n    assert candidate(cb) is None\n"),
    "pytest_fixture_teardown": ("pytest", _F + _MARK, "import pytest\nfrom solution import f, g, h\n@pytest.fixture\n"
                                "def res():\n    yield\n    g()\ndef test_a(res):\n    assert f(2) == 4\n    h()\n"),
}


def _label(fmt: str, test: str):
    from coderl.rewards.labels import parse_label
    extra = {"entry_point": "f"} if fmt == "humaneval" else {}
    return parse_label({"format": fmt, "tests": [test], "time_limit_s": 3.0, **extra})


def play(n: int, workers: int) -> Trials:
    from coderl.rewards.config import SandboxConfig
    from coderl.rewards.sandbox import Sandbox
    from coderl.rewards.sandbox.results import Job
    ways = sorted(WAYS)
    labels = {w: _label(WAYS[w][0], WAYS[w][2]) for w in ways}
    jobs, kinds = [], []
    for trial in range(n):
        seed = random.Random(trial).getrandbits(48)
        way = ways[trial % len(ways)]
        for cheat in (True, False):
            code = f"CHEAT = {cheat}\n# trial {trial} seed {seed}\n" + _GUESS + WAYS[way][1]
            jobs.append(Job(code, labels[way]))
            kinds.append(cheat)
    with Sandbox(SandboxConfig(isolation="bwrap", workers=workers, probe_s=0.5, job_timeout_s=10.0)) as sb:
        results = sb.run(jobs)
        stats = sb.info()["stats"]
    cheater = [r.pass_rate for r, c in zip(results, kinds, strict=True) if c]
    honest = [r.pass_rate for r, c in zip(results, kinds, strict=True) if not c]
    return Trials(cheater=cheater, honest=honest,
                  notes={"fair": 0.5, "ways": len(ways), "slow_lane": stats.get("slow_lane", 0)})


FAMILY = Family("guessers", __doc__.splitlines()[0], play)

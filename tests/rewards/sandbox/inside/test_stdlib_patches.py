"""inside/stdlib_patches.py: the judge's patches record the test's context managers and seeding, once."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.support import REPO_ROOT

# The patches change the standard library of the process that makes them: a fresh interpreter.
_PROBE = """
import json, random, unittest, warnings
from unittest import mock
from coderl.rewards.sandbox.inside import mirrors, stdlib_patches
stdlib_patches.install()
stdlib_patches.install()  # once per process: a second call wraps nothing twice
seen = []
with mock.patch("time.sleep"), warnings.catch_warnings():
    tc = unittest.TestCase()
    with tc.assertLogs("x"):
        seen.append([len(mirrors.ACTIVE_PATCHES), len(mirrors.ACTIVE_WARNING_CAPTURES), len(mirrors.ACTIVE_LOG_CAPTURES)])
        __import__("logging").getLogger("x").info("y")
seen.append([len(mirrors.ACTIVE_PATCHES), len(mirrors.ACTIVE_WARNING_CAPTURES), len(mirrors.ACTIVE_LOG_CAPTURES)])
seen.append(sorted(mirrors.RANDOM_SEEDED))
random.seed(3)
seen.append(sorted(mirrors.RANDOM_SEEDED))
seen.append(random.random() == random.Random(3).random())
tc.assertSetEqual({1}, {1})
print(json.dumps(seen))
"""


def test_context_managers_in_effect_and_seeding_are_recorded():
    p = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=60, cwd=REPO_ROOT)
    assert p.returncode == 0, p.stderr[-2000:]
    inside, after, unseeded, seeded, same = json.loads(p.stdout.splitlines()[-1])
    assert inside == [1, 1, 1] and after == [0, 0, 0]
    assert unseeded == [] and seeded == ["seed"] and same

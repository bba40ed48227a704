"""The judge's patches of the standard library, made once per process before any job (install()).

They tell the judge what only the test's own objects know: which of its context managers are in effect
(mock.patch, assertLogs / assertNoLogs, warnings.catch_warnings and assertWarns: mirrors.py hands them on to
the program), whether it seeded random (the program then continues the test's sequence), and they keep
assertSetEqual from asking an object of the program. stdlib only: runs inside the sandbox (the judge).
"""

import random
import unittest
import unittest._log
import unittest.mock
import warnings

from . import mirrors
from .proxy import _is_proxy

_INSTALLED = []


def _track(cls, active):
    """cls's instances are in `active` from their __enter__ to their __exit__."""
    enter, exit_ = cls.__enter__, cls.__exit__

    def __enter__(self):
        result = enter(self)
        active.append(self)
        return result

    def __exit__(self, *exc):
        try:
            return exit_(self, *exc)
        finally:
            for i in range(len(active) - 1, -1, -1):
                if active[i] is self:
                    del active[i]
                    break

    cls.__enter__, cls.__exit__ = __enter__, __exit__


def _track_random():
    """random.seed / setstate in the tests mark that the program's random module must follow the test's."""
    for name in ("seed", "setstate"):
        original = getattr(random, name)

        def wrapper(*args, _original=original, _name=name, **kwargs):
            mirrors.RANDOM_SEEDED.add(_name)
            return _original(*args, **kwargs)

        setattr(random, name, wrapper)


def _guard_set_equal():
    """unittest's assertSetEqual asks its first argument for `difference(second)`: an object of the program would
    receive the expected set and answer whether they differ (assertEqual on two sets comes here too)."""
    original = unittest.TestCase.assertSetEqual

    def assertSetEqual(self, set1, set2, msg=None):
        for v in (set1, set2):
            if _is_proxy(v):
                raise v._coderl_s.unjudgeable("assertSetEqual with an object of the program")
        return original(self, set1, set2, msg)

    unittest.TestCase.assertSetEqual = assertSetEqual


def install():
    """Every patch, once per process."""
    if _INSTALLED:
        return
    _guard_set_equal()
    _track_random()
    _track(unittest.mock._patch, mirrors.ACTIVE_PATCHES)
    _track(unittest._log._AssertLogsContext, mirrors.ACTIVE_LOG_CAPTURES)
    _track(warnings.catch_warnings, mirrors.ACTIVE_WARNING_CAPTURES)  # the test's own, and assertWarns's
    _INSTALLED.append(True)

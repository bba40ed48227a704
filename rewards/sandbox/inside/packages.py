"""The judge's third-party packages (pytest and what it imports): compiled on the host, received by the worker
after it forked the zygote and imported before it forks the judge, so the judge has them and no candidate does.

Why not mounted files: a program reads whatever the sandbox mounts (and, in the rlimits fallback, the host), and
the zygote, forked before, would not even hold them in memory; a program of a job cannot import pytest, as plain
execution in the sandbox has only the standard library, while the tests that KodCode's harness runs under pytest
get it. The table maps a module name to [is a package, its code object (marshal, base64), its file name].
"""

import base64
import importlib.util
import marshal
import sys


class Finder:
    """A meta-path finder and loader for the received modules, after the standard library's (which always wins)."""

    def __init__(self, table):
        self.table = table

    def find_spec(self, name, path=None, target=None):
        entry = self.table.get(name)
        if entry is None:
            return None
        return importlib.util.spec_from_loader(name, self, origin=entry[2], is_package=bool(entry[0]))

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        _is_pkg, code, origin = self.table[module.__name__]
        module.__file__ = origin
        exec(marshal.loads(base64.b64decode(code)), module.__dict__)


def install(table, preload=("pytest",)):
    """Make the table importable (in this process and the processes it forks from now on) and import `preload`,
    so that a judge started later finds it loaded; the names that imported."""
    if not table:
        return []
    sys.meta_path.append(Finder(table))
    loaded = []
    for name in preload:
        try:
            __import__(name)
            loaded.append(name)
        except Exception:
            pass
    return loaded

"""Fidelity family: class-level unittest suites in ClassEval's style (issue 25, the class-level corpus).

A task is one class that needs only the standard library and a `unittest` module appended to the program, as
ClassEval ships them: one `TestCase` class per method of the class under test (`<Class>Test<Method>`, methods
`test_<method>_<n>`) and a `...TestMain` running a whole scenario. The tests construct the class, call its
methods and assert on results, attributes and state the test itself set (`obj.balance = 500`,
`game.board[0][0] = 'X'`); staticmethods called on the class, program objects handed to each other
(`a.transfer(b, 300)`); `setUp` / `tearDown` with files in the cwd, sqlite3 databases read back through the
program's own cursor (`self.db.cursor.execute(...)`) and through a connection of the test, json / csv / zip /
xml files the program wrote, `datetime` values in attributes and built by the test, seeded `random`,
`sys.stdout` swapped for an `io.StringIO` by assignment or by `patch`, `unittest.mock.patch` of standard-library
functions and of `builtins.open` / `input` / `print`, `assertRaises` (with `str(cm.exception)`),
`assertAlmostEqual(..., delta=)`, `assertLogs`, collections (`deque`, `Counter`, `OrderedDict`, `defaultdict`)
compared with the test's literals, and dict-like program classes (`__getitem__` / `__setitem__` / `__iter__` /
`__len__`). Per task: the reference program, plausible bugs and one seeded AST mutant of each kind.
"""

from __future__ import annotations

from scripts.bench.fidelity.tasks import load
from scripts.bench.fidelity.written import WrittenFamily

FAMILY = WrittenFamily("classeval", load("classeval"))  # data/classeval.yaml
TASKS = FAMILY.tasks
programs = FAMILY.programs

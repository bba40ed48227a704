"""Fidelity family: tests that use a standard-library module only the program imported (issue 25, class 2).

In plain Python a CodeRM-style test module, or an MBPP assert, runs appended to the program: a module the
program imported at top level (under any alias, `import a.b`, `from x import y` of a module or of a name) is
the tests' too. Real suites lean on it: `sqlite3.connect(path)` to read back the database the program wrote,
`zipfile.ZipFile` on the archive it made, `csv.reader`, `io.StringIO`, `heapq` / `bisect` / `statistics` to
compute an expected value, `decimal` / `fractions` literals, `textwrap.dedent`, `string.ascii_lowercase`, an
aliased `re`, `os.path.join` after `import os.path`, `abc.Mapping` after `from collections import abc`,
`ET.fromstring` after `import xml.etree.ElementTree as ET`. Per task: the reference program, a plausible bug
or two and seeded AST mutants; the verdicts of plain Python decide, in the same test.
"""

from __future__ import annotations

from scripts.bench.fidelity.tasks import load
from scripts.bench.fidelity.written import WrittenFamily

FAMILY = WrittenFamily("imports", load("imports"))  # data/imports.yaml
TASKS = FAMILY.tasks
programs = FAMILY.programs

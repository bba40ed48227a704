"""Second held-out fidelity family: tasks written apart from all the others, in idioms none of them uses.

The first held-out family (heldout_style.py) found gaps the grown families could not; this one was written
afresh again, aiming at what no family exercised yet: LLM-written test modules with module-level fixtures
and helper functions (and stray pytest-style `def test_x():` functions, which unittest ignores), test classes
inheriting `setUp` and class attributes, nested dicts of floats checked with `assertAlmostEqual` loops, a
program-defined exception hierarchy caught by its base class, `assertLogs` on the program's own logger,
`subTest` loops failing in some iterations, tests that consume what the program returns with `zip`,
`itertools.islice`, `enumerate`, `sorted(..., key=...)`, `set()`, `Counter()`, `str()`/`repr()`/f-strings,
`json.dumps`, `copy.deepcopy`, `hash`, `type(x).__name__`, `dataclasses.asdict`, slicing and string methods,
the numeric tower (`Fraction`, `Decimal`, complex), bytes/bytearray, datetime arithmetic, `functools.reduce`
over program callbacks, program classes with container protocols, context managers, decorators the program
defines applied to the test's functions, classmethods/staticmethods/properties, `__slots__`,
`field(default_factory=...)`, enums, NamedTuples, closures and module counters; stdio programs reading
`sys.stdin.buffer`, mixing `input()` with `sys.stdin.readline`, writing without a newline, `print(*xs)`,
leaving with `sys.exit(0)` / `exit()`; call programs returning tuples, None, nested lists, floats, dicts.

Per task: the reference program (`canonical`), sometimes a correct alternative (`alt:*`), 1-3 plausible bugs
(`bug:*`, verdict left to the reference) and one seeded AST mutant of each kind. Rows go through the
preprocessor's converters (data/schemas/), as in the other families.
"""

from __future__ import annotations

from scripts.bench.fidelity.tasks import load
from scripts.bench.fidelity.written import WrittenFamily

FAMILY = WrittenFamily("heldout2", load("heldout2"))  # data/heldout2.yaml
TASKS = FAMILY.tasks
programs = FAMILY.programs

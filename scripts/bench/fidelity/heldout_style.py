"""Held-out-style fidelity family: tasks written apart from the other families, in other idioms.

The other families grew with the executor and may fit it; this one was written afresh, the way real data and
LLM-generated tests look, across every label format: CodeRM-UnitTest-style modules (`from solution import *`,
`import solution`, `@patch` decorators with mock arguments, `patch('sys.stdout', new_callable=io.StringIO)`,
`redirect_stdout`, `cm.exception`, `assertRaisesRegex`, `subTest`, `setUpClass`, Mock collaborators with
methods, `lru_cache` introspection, context managers, async tests, enums, namedtuples, program exceptions
with attributes), MBPP asserts, HumanEval `check(candidate)` programs, APPS/TACO/CodeContests stdio
(multi-case input, EOF loops, big inputs, `Case #i:` output, precision) and call problems (LeetCode
`class Solution`, codewars functions).

Per task: the reference program (`canonical`), sometimes a correct alternative (`alt:*`), 1-3 plausible bugs
(`bug:*`, verdict left to the reference) and one seeded AST mutant of each kind (scripts/bench/
fidelity/corpus.py). Rows go through the preprocessor's converters (data/schemas/), as in the other families.
"""

from __future__ import annotations

from scripts.bench.fidelity.tasks import load
from scripts.bench.fidelity.written import WrittenFamily

FAMILY = WrittenFamily("heldout", load("heldout"))  # data/heldout.yaml
TASKS = FAMILY.tasks
programs = FAMILY.programs

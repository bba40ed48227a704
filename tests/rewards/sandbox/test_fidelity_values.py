"""Values that cross the channel, graded as plain Python grades them (issue 25, classes 1 and 3), the reference
executor (scripts/bench/fidelity/reference.py) run in the same test:

* iteration order: a test hands the program sets and frozensets with a table history (grown then shrunk,
  colliding hashes, an add after a discard), in dicts and lists too, and dicts with deletions, Counters,
  OrderedDicts, defaultdicts and dict views; the program returns `tuple(s)`,
  `list(s)`, `next(iter(s))`, `str(s)` or keeps the set and answers later; the asserts compare with the
  set's own order and with the literal plain Python printed. A wrong program (sorted order) fails them.
* standard-library methods in the test's data: `datetime.now`, `time.time`, `random.random`, `'abc'.upper`,
  `acc.append`, `dict.fromkeys`, a seeded `random.Random(3).choice`, stored and never called, or called.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from coderl.rewards.labels import Label
from scripts.bench.fidelity.corpus import Program, dedent
from scripts.bench.fidelity.measure import measure_work

pytestmark = pytest.mark.timeout(600)

# Sets with a history: each one's order is its table's, not its items'.
SETS = dedent("""
    SHRUNK = set(range(100))
    for _i in range(95):
        SHRUNK.discard(_i)
    AFTER = {1, 9, 17, 25}
    AFTER.discard(1)
    AFTER.add(33)
    COLLIDE = set()
    for _v in (8, 16, 0, 24, 32, 40, 3):
        COLLIDE.add(_v)
    COLLIDE.discard(16)
    COLLIDE.add(48)
    BIG = {(1 << 40) + 7 * _k for _k in range(30)}
    for _k in range(0, 30, 3):
        BIG.discard((1 << 40) + 7 * _k)
    WORDS = set()
    for _w in "the quick brown fox jumps over the lazy dog and again".split():
        WORDS.add(_w)
    WORDS.discard("fox")
    WORDS.add("cat")
    PAIRS = {(i, -i) for i in range(40)} - {(i, -i) for i in range(0, 40, 2)}
    FROZEN = frozenset(SHRUNK | {1, 9})
    import collections
    D = {k: k * k for k in (5, 3, 9, 1)}
    del D[3]
    D[3] = 0
    COUNTS = collections.Counter("mississippi banana")
    ORDERED = collections.OrderedDict.fromkeys("abcde")
    ORDERED.move_to_end("b")
    DEFAULT = collections.defaultdict(list, {"z": [1], "a": [2]})
    ALL = [SHRUNK, AFTER, COLLIDE, BIG, WORDS, PAIRS]
""")


_NAMES = ("SHRUNK", "AFTER", "COLLIDE", "BIG", "PAIRS", "WORDS")
_LITERALS = (*(f"tuple({n})" for n in _NAMES), *(f"tuple(set(list({n})))" for n in _NAMES),
             "next(iter(SHRUNK))", "tuple(frozenset({9, 1, 17, 25}))", "str(WORDS)")


def _plain_literals() -> dict[str, str]:
    """What plain Python prints for each of _LITERALS over SETS, in a fresh interpreter with the sandbox's hash
    seed (PYTHONHASHSEED=0: a set of strings has that order there): the literal a test's author wrote."""
    code = f"import json\n{SETS}\nprint(json.dumps([repr(eval(e)) for e in {list(_LITERALS)!r}]))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60,
                         env={**os.environ, "PYTHONHASHSEED": "0"}).stdout
    return dict(zip(_LITERALS, json.loads(out), strict=True))


PLAIN = _plain_literals()


ORDER_TESTS = [
    *(f"assert as_tuple({n}) == tuple({n})" for n in ("SHRUNK", "AFTER", "COLLIDE", "BIG", "WORDS", "PAIRS")),
    *(f"assert as_tuple({n}) == {PLAIN[f'tuple({n})']}" for n in ("SHRUNK", "AFTER", "COLLIDE", "BIG", "PAIRS", "WORDS")),
    "assert as_list(COLLIDE) == list(COLLIDE)",
    f"assert first(SHRUNK) == {PLAIN['next(iter(SHRUNK))']}",
    "assert first(AFTER) == next(iter(AFTER))",
    "assert text(AFTER) == str(AFTER) and text(BIG) == str(BIG)",
    "assert text(WORDS) == str(WORDS)",
    f"assert text(WORDS) == {PLAIN['str(WORDS)']}",
    "assert nested({'a': SHRUNK, 'b': [AFTER, COLLIDE]}) == [tuple(SHRUNK), [tuple(AFTER), tuple(COLLIDE)]]",
    "assert keep(BIG) == len(BIG) and kept_tuple() == tuple(BIG)",
    "assert as_tuple(FROZEN) == tuple(FROZEN)",
    f"assert as_tuple(frozenset({{9, 1, 17, 25}})) == {PLAIN['tuple(frozenset({9, 1, 17, 25}))']}",
    "assert [as_tuple(s) for s in ALL] == [tuple(s) for s in ALL]",
    "assert as_list(D) == [5, 9, 1, 3] and as_list(D.items()) == list(D.items())",
    "assert as_list(COUNTS.most_common()) == COUNTS.most_common() and top(COUNTS) == COUNTS.most_common()",
    "assert as_list(ORDERED) == list('acdeb') and as_list(DEFAULT) == ['z', 'a']",
    "assert as_list(D.keys()) == list(D) and as_list(reversed(D)) == list(reversed(D))",
]

# The false positive of a receiver that rebuilds the set from its items: a test whose literal is that rebuilt
# order (its author's set had another history) fails in plain Python, and must fail here.
REBUILT_TESTS = [f"assert as_tuple({n}) == {PLAIN[f'tuple(set(list({n})))']}" for n in _NAMES
                 if PLAIN[f"tuple(set(list({n})))"] != PLAIN[f"tuple({n})"]]

ORDER_PROGRAM = """
    kept = None

    def as_tuple(s):
        return tuple(s)

    def as_list(s):
        return list(s)

    def first(s):
        return next(iter(s))

    def text(s):
        return str(s)

    def nested(d):
        return [tuple(v) if isinstance(v, (set, frozenset)) else [tuple(x) for x in v] for v in d.values()]

    def keep(s):
        global kept
        kept = s
        return len(s)

    def kept_tuple():
        return tuple(kept)

    def top(c):
        return c.most_common()
"""

# Wrong ones: an order plain Python does not give (the false positive of a receiver that rebuilt the set).
ORDER_WRONG = {
    "sorted": ORDER_PROGRAM.replace("return tuple(s)", "return tuple(sorted(s))"),
    "rebuilt": ORDER_PROGRAM.replace("return tuple(s)", "return tuple(set(list(s)))"),
    "first_min": ORDER_PROGRAM.replace("return next(iter(s))", "return min(s)"),
}

ORDER_UNITTEST = SETS + dedent("""
    import unittest

    class TestOrder(unittest.TestCase):
        def test_tuple(self):
            for s in ALL:
                self.assertEqual(as_tuple(s), tuple(s))

        def test_literal(self):
            self.assertEqual(as_tuple(SHRUNK), {shrunk})

        def test_text(self):
            self.assertEqual(text(COLLIDE), str(COLLIDE))
""").replace("{shrunk}", PLAIN["tuple(SHRUNK)"])

METHODS_SETUP = dedent("""
    import datetime as _dt
    from datetime import datetime
    import collections, math, random, time
    acc = []
    r = random.Random(3)
""")

METHODS_TESTS = [
    "assert store([datetime.now, 1]) == 2",
    "assert store({'time': datetime.now, 'n': 3}) == 2 and saved_count() == 2",
    "assert store([time.time, math.sqrt, random.random, 'abc'.upper, acc.append, dict.fromkeys]) == 6",
    "assert store((_dt.datetime.now, random.choice, collections.Counter.fromkeys)) == 3",
    "assert kinds([datetime.now, time.time, random.random]) == ['datetime', 'float', 'float']",
    "assert call(datetime.now).year >= 2024",
    "assert call('abc'.upper) == 'ABC'",
    "assert feed(acc.append, [1, 2]) is None and acc == [1, 2]",
    "assert call(dict.fromkeys, 'ab') == {'a': None, 'b': None}",
    "assert call(r.choice, [1, 2, 3, 4]) == random.Random(3).choice([1, 2, 3, 4])",
    "assert call(math.sqrt, 16) == 4.0",
]

METHODS_PROGRAM = """
    saved = None

    def store(items):
        global saved
        saved = items
        return len(items)

    def saved_count():
        return len(saved)

    def kinds(fs):
        return [type(f()).__name__ for f in fs]

    def call(f, *args):
        return f(*args)

    def feed(sink, xs):
        for x in xs:
            sink(x)
"""

METHODS_WRONG = {
    "kinds_of_functions": METHODS_PROGRAM.replace("type(f())", "type(f)"),
    "feed_once": METHODS_PROGRAM.replace("for x in xs:\n            sink(x)", "sink(xs)"),
}


def _programs() -> list[Program]:
    out = []

    def add(task, kind, code, label, correct):
        out.append(Program(pid=f"{task}:{kind}", task_id=task, kind=kind, code=dedent(code), correct=correct,
                           label=label))

    order = Label(format="assert", tests=tuple(ORDER_TESTS), setup_code=SETS)
    order_ut = Label(format="unittest", tests=(ORDER_UNITTEST,))
    methods = Label(format="assert", tests=tuple(METHODS_TESTS), setup_code=METHODS_SETUP)
    for task, label, program, wrong in (("order", order, ORDER_PROGRAM, ORDER_WRONG),
                                        ("order_ut", order_ut, ORDER_PROGRAM, ORDER_WRONG),
                                        ("methods", methods, METHODS_PROGRAM, METHODS_WRONG)):
        add(task, "canonical", program, label, True)
        for name, code in wrong.items():
            add(task, f"bug:{name}", code, label, None)
    # one assert per program too: each test case's verdict on its own
    for i, test in enumerate(ORDER_TESTS):
        for kind, code in (("canonical", ORDER_PROGRAM), ("bug:sorted", ORDER_WRONG["sorted"])):
            add(f"order_{i}", kind, code, Label(format="assert", tests=(test,), setup_code=SETS), kind == "canonical")
    for i, test in enumerate(REBUILT_TESTS):
        add(f"order_rebuilt_{i}", "canonical", ORDER_PROGRAM, Label(format="assert", tests=(test,), setup_code=SETS),
            None)
    for i, test in enumerate(METHODS_TESTS):
        add(f"methods_{i}", "canonical", METHODS_PROGRAM, Label(format="assert", tests=(test,),
                                                                setup_code=METHODS_SETUP), True)
    return out


@pytest.fixture(scope="module")
def report() -> dict:
    programs = _programs()
    return measure_work([(p, p.label.format, p.label) for p in programs], workers=2, concurrent=True)


def test_the_family_holds_the_false_positive_of_a_plain_rebuild():
    assert len(REBUILT_TESTS) >= 4, REBUILT_TESTS


def test_values_cross_as_plain_python_sees_them(report):
    assert report["reference_rejects_correct"] == []
    assert report["disagreements"] == [], report["disagreements"]
    assert all(u["unsupported_cases"] == 0 for u in report["unsupported"].values()), report["unsupported"]


def test_the_wrong_programs_fail_in_plain_python(report):
    for fmt, f in report["formats"].items():  # the bugs discriminate: plain Python fails them
        assert f["reference_passed"] < f["programs"], (fmt, f)

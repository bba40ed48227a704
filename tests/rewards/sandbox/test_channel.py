"""What tests can do with a program through the judge's plain-data channel (docs/sandbox.md, "The channel"):
ordinary Python semantics wherever values can cross, "unsupported" (never a pass, never a silent fail)
where a test would need the program to decide a comparison. Real bubblewrap sandboxes, no mocks."""

from __future__ import annotations

import pytest

from coderl.rewards.config import SandboxConfig
from coderl.rewards.labels import parse_label
from coderl.rewards.sandbox import Job, Sandbox

pytestmark = pytest.mark.timeout(180)


@pytest.fixture(scope="module")
def sb():
    # Nothing here is meant to time out: generous limits keep the verdicts independent of machine load.
    with Sandbox(SandboxConfig(isolation="bwrap", workers=2, test_timeout_s=15.0, job_timeout_s=60.0)) as s:
        yield s


def _ut(*bodies: str, header: str = "") -> dict:
    src = "import unittest\n" + header + "class T(unittest.TestCase):\n" + "".join(
        f"    def test_{i:02d}(self):\n" + "".join(f"        {line}\n" for line in body.split("\n"))
        for i, body in enumerate(bodies))
    return {"format": "unittest", "tests": [src]}


# program -> unittest bodies that must all pass: what plain Python gives, through the channel.
PASSING = {
    "values": (
        "import collections, fractions, decimal, datetime, types\n"
        "from typing import NamedTuple\nclass P(NamedTuple):\n    x: int\n    y: int = 0\n"
        "Pair = collections.namedtuple('Pair', 'a b', defaults=[5])\n"
        "def f(k):\n    return {'nt': P(1), 'pair': Pair(1), 'counter': collections.Counter('aab'),\n"
        "            'od': collections.OrderedDict(a=1), 'dd': collections.defaultdict(list, a=[1]),\n"
        "            'ul': collections.UserList([1, 2]), 'us': collections.UserString('ab'),\n"
        "            'cm': collections.ChainMap({'a': 1}, {'b': 2}), 'mp': types.MappingProxyType({'a': 1}),\n"
        "            'dq': collections.deque([1, 2], maxlen=3), 'fr': fractions.Fraction(1, 3),\n"
        "            'dec': decimal.Decimal('1.10'), 'date': datetime.date(2024, 2, 29), 'big': 3 ** 5000,\n"
        "            'nan': float('nan'), 'c': 1 + 2j, 'b': b'\\x00\\xff', 'set': {1, 2}, 'fs': frozenset({3}),\n"
        "            'rng': range(0, 10, 3), 'nested': [(1, [2.5, {'k': (None, True)}])], 'ns': types.SimpleNamespace(a=1)}[k]\n",
        ["self.assertEqual(f('nt'), (1, 0))\nself.assertEqual(f('nt').y, 0)\nself.assertEqual(f('pair').b, 5)",
         "self.assertEqual(f('counter'), {'a': 2, 'b': 1})\nself.assertEqual(f('counter').most_common(1), [('a', 2)])",
         "self.assertEqual(f('od'), {'a': 1})\nself.assertEqual(f('dd')['a'], [1])\nself.assertEqual(f('dd')['zz'], [])",
         "self.assertEqual(f('ul'), [1, 2])\nself.assertEqual(f('us'), 'ab')\nself.assertEqual(f('cm')['b'], 2)",
         "self.assertEqual(f('mp'), {'a': 1})\nself.assertEqual(list(f('dq')), [1, 2])\nself.assertEqual(f('dq').maxlen, 3)",
         "self.assertAlmostEqual(f('fr'), 1 / 3)\nself.assertEqual(str(f('dec')), '1.10')\nself.assertEqual(f('date').weekday(), 3)",
         "self.assertEqual(f('big') % 1000, 3 ** 5000 % 1000)\nself.assertNotEqual(f('nan'), f('nan'))\nself.assertEqual(f('c').imag, 2)",
         "self.assertEqual(f('b'), bytes([0, 255]))\nself.assertEqual(f('set') | f('fs'), {1, 2, 3})\nself.assertEqual(list(f('rng')), [0, 3, 6, 9])",
         "self.assertEqual(f('nested'), [(1, [2.5, {'k': (None, True)}])])\nself.assertEqual(f('ns').a, 1)"]),
    "objects_of_the_program": (
        "class Stack:\n    def __init__(self):\n        self.items = []\n    def push(self, x):\n        self.items.append(x)\n"
        "        return self\n    def pop(self):\n        if not self.items:\n            raise IndexError('empty')\n        return self.items.pop()\n"
        "    def __len__(self):\n        return len(self.items)\n    def __iter__(self):\n        return iter(self.items)\n"
        "    def __repr__(self):\n        return f'Stack({self.items})'\n"
        "def gen(n):\n    for i in range(n):\n        yield i * i\n"
        "class Node:\n    def __init__(self, val, nxt=None):\n        self.val, self.next = val, nxt\n"
        "def reverse(head):\n    prev = None\n    while head:\n        head.next, prev, head = prev, head, head.next\n    return prev\n",
        ["s = Stack()\ns.push(1).push(2)\nself.assertEqual(len(s), 2)\nself.assertEqual(list(s), [1, 2])\nself.assertEqual(s.pop(), 2)",
         "s = Stack()\nwith self.assertRaises(IndexError):\n    s.pop()\nself.assertIsInstance(s, Stack)\nself.assertEqual(repr(s), 'Stack([])')",
         "self.assertEqual(list(gen(4)), [0, 1, 4, 9])\nself.assertEqual(sum(gen(3)), 5)\nself.assertEqual(s.items if (s := Stack()) else [], [])",
         "h = reverse(Node(1, Node(2, Node(3))))\nout = []\nwhile h:\n    out.append(h.val)\n    h = h.next\nself.assertEqual(out, [3, 2, 1])",
         "self.assertIsNone(reverse(None))\nself.assertTrue(Stack().push(0))\nself.assertFalse(len(Stack()))"]),
    "exceptions": (
        "class InsufficientFunds(ValueError):\n    def __init__(self, need):\n        super().__init__(f'need {need}')\n        self.need = need\n"
        "class Account:\n    def __init__(self, balance):\n        self.balance = balance\n"
        "    def withdraw(self, x):\n        if x > self.balance:\n            raise InsufficientFunds(x - self.balance)\n"
        "        self.balance -= x\n        return self.balance\n"
        "def parse(s):\n    return int(s)\n",
        ["a = Account(10)\nwith self.assertRaises(InsufficientFunds) as cm:\n    a.withdraw(15)\nself.assertEqual(cm.exception.need, 5)",
         "with self.assertRaises(ValueError):\n    Account(1).withdraw(2)\nwith self.assertRaisesRegex(ValueError, 'need 1'):\n    Account(1).withdraw(2)",
         "with self.assertRaises(ValueError):\n    parse('x')\ntry:\n    parse('y')\nexcept ValueError as e:\n    self.assertIn('invalid literal', str(e))",
         "self.assertEqual(Account(5).withdraw(2), 3)\nself.assertTrue(issubclass(InsufficientFunds, ValueError))"]),
    "in_place_and_callbacks": (
        "def rotate(nums, k):\n    k %= len(nums)\n    nums[:] = nums[-k:] + nums[:-k]\n"
        "def fill(d):\n    d['x'] = 1\n"
        "def apply(fn, xs):\n    return [fn(x) for x in xs]\n"
        "def sort_by(xs, key):\n    return sorted(xs, key=key)\n"
        "def drain(it):\n    return list(it)\n",
        ["nums = [1, 2, 3, 4]\nrotate(nums, 1)\nself.assertEqual(nums, [4, 1, 2, 3])\nd = {}\nfill(d)\nself.assertEqual(d, {'x': 1})",
         "self.assertEqual(apply(lambda v: v * 10, [1, 2]), [10, 20])\nself.assertEqual(sort_by(['bb', 'a'], len), ['a', 'bb'])",
         "self.assertEqual(drain(iter([3, 4])), [3, 4])\nself.assertEqual(drain(x * 2 for x in range(3)), [0, 2, 4])",
         "self.assertEqual(sort_by(['B', 'a'], str.lower), ['a', 'B'])"]),
    "stdio_of_the_program": (
        "def greet(name):\n    print(f'Hello, {name}!')\ndef ask():\n    a = input('a? ')\n    b = input()\n    return int(a) + int(b)\n"
        "import sys\ndef read_all():\n    return sys.stdin.read().split()\n",
        ["import io, contextlib\nbuf = io.StringIO()\nwith contextlib.redirect_stdout(buf):\n    greet('Bob')\n"
         "self.assertEqual(buf.getvalue(), 'Hello, Bob!\\n')",
         "from unittest import mock\nwith mock.patch('builtins.print') as p:\n    greet('Al')\np.assert_called_once_with('Hello, Al!')",
         "from unittest import mock\nwith mock.patch('builtins.input', side_effect=['2', '3']):\n    self.assertEqual(ask(), 5)",
         "import io, sys\nfrom unittest import mock\nwith mock.patch('sys.stdout', new_callable=io.StringIO) as out:\n    greet('Cy')\n"
         "self.assertIn('Cy', out.getvalue())",
         "import io, sys\nfrom unittest import mock\nwith mock.patch('sys.stdin', io.StringIO('1 2\\n3')):\n    self.assertEqual(read_all(), ['1', '2', '3'])"]),
    "plain_python_programs": (
        "import traceback, inspect, sys, doctest, dataclasses, functools\n"
        "def where():\n    return inspect.currentframe().f_code.co_name\n"
        "def describe():\n    try:\n        1 / 0\n    except ZeroDivisionError:\n        return traceback.format_exc().splitlines()[-1]\n"
        "sys.settrace(None)\ndoctest.testmod()\n"
        "@dataclasses.dataclass\nclass Pt:\n    x: int\n    y: int = 2\n"
        "def as_tuple(p):\n    return dataclasses.astuple(p)\n"
        "@functools.lru_cache(None)\ndef fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n",
        ["self.assertEqual(where(), 'where')\nself.assertEqual(describe(), 'ZeroDivisionError: division by zero')",
         "self.assertEqual(as_tuple(Pt(1)), (1, 2))\nself.assertEqual(Pt(3).y, 2)\nself.assertEqual(fib(80), 23416728348467685)"]),
}

UNSUPPORTED = {  # the program decides, or would see a test's value: "unsupported", whatever the test does
    "compare_objects_of_the_program": (
        "class P:\n    def __init__(self, x):\n        self.x = x\n    def __eq__(self, o):\n        return self.x == o.x\n"
        "    def __sub__(self, o):\n        return self.x - o\n"
        "def make(x):\n    return P(x)\n",
        ["self.assertEqual(make(1), P(1))", "self.assertIn(P(1), [make(1)])", "self.assertTrue(make(2) == 2)",
         "try:\n    self.assertEqual(make(1), 5)\nexcept Exception:\n    pass",
         "self.assertLess(abs(make(1) - 1), 1e-9)"]),
    "patch_the_solution": (
        "def helper():\n    return 1\ndef f():\n    return helper() + 1\n",
        ["from unittest import mock\nimport solution\nwith mock.patch.object(solution, 'helper', return_value=5):\n"
         "    self.assertEqual(f(), 6)"]),
}


@pytest.fixture(scope="module")
def results(sb):
    keys, jobs = [], []
    for group in (PASSING, UNSUPPORTED):
        for name, (code, bodies) in group.items():
            keys.append(name)
            jobs.append(Job(code, parse_label(_ut(*bodies))))
    return dict(zip(keys, sb.run(jobs), strict=True))


@pytest.mark.parametrize("name", list(PASSING))
def test_plain_python_semantics_through_the_channel(results, name):
    r = results[name]
    assert r.pass_rate == 1.0, [(i, o.status, o.detail) for i, o in enumerate(r.outcomes) if o.status != "passed"]


@pytest.mark.parametrize("name", list(UNSUPPORTED))
def test_what_the_channel_cannot_judge_is_unsupported(results, name):
    r = results[name]
    assert {o.status for o in r.outcomes} == {"unsupported"}, [(o.status, o.detail) for o in r.outcomes]
    assert all("not judgeable" in o.detail for o in r.outcomes)


def test_call_and_humaneval_formats_use_the_channel_too(sb):
    code = "from typing import List, NamedTuple\nclass R(NamedTuple):\n    lo: int\n    hi: int\n" \
           "def span(xs: List[int]) -> R:\n    return R(min(xs), max(xs))\n"
    he = parse_label({"format": "humaneval", "entry_point": "span", "tests": [
        "def check(candidate):\n    assert candidate([3, 1, 2]) == (1, 3)\n    assert candidate([5]).hi == 5\n"]})
    call = parse_label({"format": "call", "entry_point": "span", "tests": [
        {"input": [[3, 1, 2]], "output": [1, 3]}, {"input": [[0]], "output": [0, 1]}]})
    res = sb.run([Job(code, he), Job(code, call)])
    assert [o.status for o in res[0].outcomes] == ["passed", "passed"]
    assert [o.status for o in res[1].outcomes] == ["passed", "failed"]


def test_solution_hooks_never_run_but_the_tests_own_do(sb):
    code = "log = []\ndef setUpModule():\n    raise RuntimeError('a solution hook ran')\ndef add(a, b):\n    return a + b\n"
    mod = ("import unittest\nSTATE = []\ndef setUpModule():\n    STATE.append('module')\n"
           "class T(unittest.TestCase):\n    @classmethod\n    def setUpClass(cls):\n        STATE.append('class')\n"
           "    def test_a(self):\n        self.assertEqual(STATE, ['module', 'class'])\n"
           "    def test_b(self):\n        self.assertEqual(add(2, 2), 4)\n")
    r = sb.run([Job(code, parse_label({"format": "unittest", "tests": [mod]}))])[0]
    assert r.pass_rate == 1.0, [o.detail for o in r.outcomes]


def test_big_values_stay_with_the_program(sb):
    code = ("TABLE = list(range(3_000_000))\ndef big(n):\n    return 'x' * n\ndef many(n):\n    return list(range(n))\n")
    ut = _ut("self.assertEqual(len(big(30_000_000)), 30_000_000)", "self.assertEqual(sum(many(2_000_000)), 1999999000000)",
             "self.assertEqual(TABLE[10], 10)\nself.assertEqual(len(TABLE), 3_000_000)", "self.assertEqual(big(3), 'xxx')")
    r = sb.run([Job(code, parse_label(ut))])[0]
    assert r.pass_rate == 1.0, [(o.status, o.detail) for o in r.outcomes]

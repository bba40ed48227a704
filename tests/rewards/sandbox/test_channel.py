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
    "shared_state_outside_calls": (  # a generator's next, a context manager, a property run program code too
        "import time\ndef countdown(n):\n    while n:\n        print('T', n)\n        yield n\n        n -= 1\n    print('go')\n"
        "class Timer:\n    def __enter__(self):\n        self.t0 = time.perf_counter()\n        return self\n"
        "    def __exit__(self, *exc):\n        self.elapsed = time.perf_counter() - self.t0\n"
        "    @property\n    def loud(self):\n        print('read')\n        return 1\n",
        ["import io, contextlib\nbuf = io.StringIO()\nwith contextlib.redirect_stdout(buf):\n    self.assertEqual(list(countdown(2)), [2, 1])\n"
         "self.assertEqual(buf.getvalue(), 'T 2\\nT 1\\ngo\\n')",
         "from unittest import mock\nwith mock.patch('time.perf_counter', side_effect=[10.0, 12.5]):\n    with Timer() as t:\n        pass\n"
         "self.assertEqual(t.elapsed, 2.5)",
         "import io\nfrom unittest import mock\nwith mock.patch('sys.stdout', new_callable=io.StringIO) as out:\n    self.assertEqual(Timer().loud, 1)\n"
         "self.assertEqual(out.getvalue(), 'read\\n')"]),
    "coroutines_of_the_program": (  # awaited in an IsolatedAsyncioTestCase, or run by asyncio.run in the test
        "import asyncio\nasync def double(x):\n    await asyncio.sleep(0.001)\n    if x is None:\n        raise KeyError('x')\n"
        "    return 2 * x\nasync def both(a, b):\n    return list(await asyncio.gather(double(a), double(b)))\n",
        ["import asyncio\nself.assertEqual(asyncio.run(double(21)), 42)\nself.assertEqual(asyncio.run(both(1, 2)), [2, 4])",
         "import asyncio\nwith self.assertRaises(KeyError):\n    asyncio.run(double(None))",
         "import asyncio\nasync def go():\n    self.assertEqual(await double(3), 6)\n    with self.assertRaises(KeyError):\n"
         "        await double(None)\nasyncio.run(go())"]),
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
    "types_and_identity": (  # the proxies carry their class; a class keeping object's == compares by identity
        "import enum, re\nclass Color(enum.Enum):\n    RED = 1\n    GREEN = 2\n"
        "class Circle:\n    def __init__(self, r):\n        self.r = r\n"
        "class Bag:\n    def __init__(self, xs):\n        self.xs = xs\n    def __iter__(self):\n        return iter(self.xs)\n"
        "def gen(n):\n    yield from range(n)\ndef word(s):\n    return re.search('[a-z]+', s)\n",
        ["import types, collections.abc\nself.assertIsInstance(gen(2), types.GeneratorType)\n"
         "self.assertIsInstance(gen(2), collections.abc.Iterator)\nself.assertNotIsInstance(Circle(1), collections.abc.Sized)",
         "self.assertEqual(type(Circle(1)).__name__, 'Circle')\nself.assertEqual(Circle(2).__class__.__name__, 'Circle')\n"
         "self.assertEqual(type(word('ab')).__name__, 'Match')\nself.assertIsInstance(word('ab'), re.Match)",
         "self.assertNotEqual(Color.RED, Color.GREEN)\nself.assertIn(Color.GREEN, list(Color))\n"
         "a, b = Circle(1), Circle(1)\nself.assertIn(b, [a, b])\nself.assertNotIn(Circle(1), [a, b])\nself.assertNotEqual(a, b)\n"
         "self.assertNotEqual(a, 1)\nwith self.assertRaises(TypeError):\n    a < b",
         "bag = Bag([1, 2])\nself.assertIn(2, bag)\nself.assertNotIn(5, bag)\nwith self.assertRaises(TypeError):\n    len(bag)\n"
         "with self.assertRaises(TypeError):\n    1 in Circle(1)"],
        "import re\n"),
    "mocks_and_patched_stdlib": (  # the program calls back the test's mocks and sees its patches
        "import time, random, os, sys, functools\n"
        "def retry(fn, n=3, delay=1.0):\n    for i in range(n):\n        try:\n            return fn()\n"
        "        except ValueError:\n            if i == n - 1:\n                raise\n            time.sleep(delay)\n"
        "def roll(k):\n    return [random.randint(1, 6) for _ in range(k)]\n"
        "def env(name):\n    return os.environ.get(name, 'unset')\ndef args():\n    return sys.argv[1:]\n"
        "def first_line(path):\n    with open(path) as fh:\n        return fh.readline().strip()\n"
        "def wrap(fn):\n    @functools.wraps(fn)\n    def inner(*a):\n        return fn(*a)\n    return inner\n"
        "def sort_by(xs, key):\n    return sorted(xs, key=key)\n"
        "def lines():\n    out = []\n    while True:\n        try:\n            out.append(input())\n"
        "        except EOFError:\n            return out\n"
        "def warn(msg):\n    print(msg, file=sys.stderr)\n",
        ["with mock.patch('time.sleep') as sleep:\n    fn = mock.Mock(side_effect=[ValueError, ValueError, 'ok'])\n"
         "    self.assertEqual(retry(fn, delay=5), 'ok')\nself.assertEqual(fn.call_count, 3)\nsleep.assert_called_with(5)",
         "with mock.patch('random.randint', return_value=4) as r:\n    self.assertEqual(roll(2), [4, 4])\n"
         "self.assertEqual(r.call_count, 2)\nimport random\nrandom.seed(5)\nwant = [random.randint(1, 6) for _ in range(4)]\n"
         "random.seed(5)\nself.assertEqual(roll(4), want)",
         "with mock.patch.dict('os.environ', {'APP_X': 'on'}):\n    self.assertEqual(env('APP_X'), 'on')\n"
         "self.assertEqual(env('APP_X'), 'unset')\nwith mock.patch.object(sys, 'argv', ['prog', '-v']):\n"
         "    self.assertEqual(args(), ['-v'])",
         "with mock.patch('builtins.open', mock.mock_open(read_data='first\\nsecond\\n')) as m:\n"
         "    self.assertEqual(first_line('any.txt'), 'first')\nm.assert_called_once_with('any.txt')",
         "def double(x):\n    'doc'\n    return 2 * x\nw = wrap(double)\nself.assertEqual((w(3), w.__name__, w.__doc__), (6, 'double', 'doc'))\n"
         "import operator\nself.assertEqual(sort_by([(1, 'b'), (2, 'a')], operator.itemgetter(1)), [(2, 'a'), (1, 'b')])",
         "with mock.patch('builtins.input', side_effect=['a', 'b', EOFError]):\n    self.assertEqual(lines(), ['a', 'b'])\n"
         "with mock.patch('sys.stderr', new_callable=io.StringIO) as err:\n    warn('careful')\n"
         "self.assertEqual(err.getvalue(), 'careful\\n')"],
        "import io, sys\n"),
    "arguments_and_streams": (  # in-place changes (also later ones), the test's own objects back, file objects
        "import collections, csv, heapq, logging, warnings, sys\n"
        "def tally(c, d, items):\n    for i in items:\n        c[i] += 1\n        d.append(i)\n"
        "def same(xs):\n    xs.sort()\n    return xs\n"
        "class Heap:\n    def __init__(self, data):\n        self.data = data\n        heapq.heapify(data)\n"
        "    def push(self, x):\n        heapq.heappush(self.data, x)\n"
        "class Sorter:\n    def __init__(self, xs):\n        self.xs = xs\n    def run(self):\n        self.xs.sort()\n"
        "def rotate(m):\n    for i in range(len(m)):\n        for j in range(i + 1, len(m)):\n"
        "            m[i][j], m[j][i] = m[j][i], m[i][j]\n    for row in m:\n        row.reverse()\n"
        "def flip(m):\n    m[:] = [row[::-1] for row in m]\n"
        "def rows(f):\n    return [r for r in csv.reader(f)]\n"
        "def squares(it):\n    for x in it:\n        yield x * x\n"
        "def depth(v):\n    return 1 + depth(v[0]) if v else 0\n"
        "def noisy(x):\n    logging.getLogger('solution').warning('odd input %s', x)\n"
        "    warnings.warn('old api', DeprecationWarning)\n    return x\n",
        ["c, d = collections.Counter(a=1), collections.deque(maxlen=2)\ntally(c, d, 'aab')\n"
         "self.assertEqual(c, collections.Counter(a=3, b=1))\nself.assertEqual(list(d), ['a', 'b'])",
         "xs = [3, 1, 2]\nself.assertIs(same(xs), xs)\nself.assertEqual(xs, [1, 2, 3])",
         "data = [5, 1, 4]\nh = Heap(data)\nh.push(0)\nself.assertEqual(data[0], 0)\nself.assertEqual(sorted(data), [0, 1, 4, 5])\n"
         "orig = [3, 1, 2]\nSorter(orig).run()\nself.assertEqual(orig, [1, 2, 3])",
         "self.assertEqual(rows(io.StringIO('a,b\\n1,2\\n')), [['a', 'b'], ['1', '2']])",
         "m = [[1, 2], [3, 4]]\nfirst = m[0]\nrotate(m)\nself.assertEqual(m, [[3, 1], [4, 2]])\nself.assertIs(m[0], first)\n"
         "self.assertEqual(first, [3, 1])\nm = [[1, 2], [3, 4]]\nfirst = m[0]\nflip(m)\nself.assertIsNot(m[0], first)\n"
         "self.assertEqual((m, first), ([[2, 1], [4, 3]], [1, 2]))",
         "seen = []\ndef src():\n    for i in range(100):\n        seen.append(i)\n        yield i\n"
         "g = squares(src())\nnext(g)\nnext(g)\nself.assertEqual(seen, [0, 1])\nimport itertools\n"
         "self.assertEqual(list(itertools.islice(squares(itertools.count()), 3)), [0, 1, 4])",
         "v = []\nfor _ in range(300):\n    v = [v]\nold = sys.getrecursionlimit()\nsys.setrecursionlimit(4000)\n"
         "try:\n    self.assertEqual(depth(v), 300)\nfinally:\n    sys.setrecursionlimit(old)",
         "with self.assertLogs('solution', level='WARNING') as cm:\n    with self.assertWarns(DeprecationWarning):\n"
         "        noisy(7)\nself.assertEqual(cm.output, ['WARNING:solution:odd input 7'])"],
        "import io, sys\n"),
    "containers_shared_with_the_program": (  # one object in plain Python: changes cross both ways
        "class Inv:\n    def __init__(self, tags=None):\n        self.tags = [] if tags is None else tags\n"
        "    def count(self):\n        return len(self.tags)\n"
        "history = []\ndef add(x):\n    history.append(x)\n    return len(history)\n"
        "_cache = {}\ndef get(k):\n    if k not in _cache:\n        _cache[k] = [k]\n    return _cache[k]\n"
        "class Sorter:\n    def __init__(self, xs):\n        self.xs = xs\n    def run(self):\n        self.xs.sort()\n",
        ["a = Inv()\na.tags.append('x')\nself.assertEqual(a.count(), 1)\nt = a.tags\nself.assertIs(a.tags, t)\n"
         "a.tags.clear()\nself.assertEqual((a.count(), t), (0, []))\nself.assertEqual(Inv().tags, [])",
         "from solution import history\nadd(1)\nself.assertEqual(history, [1])\nhistory.clear()\n"
         "self.assertEqual(add(5), 1)\nself.assertEqual(history, [5])",
         "r = get(1)\nr.append(2)\nself.assertEqual(get(1), [1, 2])\nself.assertIs(get(1), r)",
         "data = [3, 1]\ns = Sorter(data)\ndata.append(0)\ns.run()\nself.assertEqual(data, [0, 1, 3])"]),
    "the_tests_exhausted_side_effect": (  # its StopIteration ends the program's input loop, to the test
        "def main():\n    total = 0\n    while True:\n        cmd = input('> ')\n        if cmd == 'quit':\n"
        "            return total\n        total += int(cmd)\n",
        ["with mock.patch('builtins.input', side_effect=['1', '2', 'quit']):\n    self.assertEqual(main(), 3)",
         "with mock.patch('builtins.input', side_effect=['1']):\n    with self.assertRaises(StopIteration):\n"
         "        main()"]),
    "slices_for_the_program": (  # a slice is plain data: obj[1:3] on the program's own sequence class
        "class Seq:\n    def __init__(self, xs):\n        self.xs = list(xs)\n    def __getitem__(self, i):\n"
        "        return Seq(self.xs[i]) if isinstance(i, slice) else self.xs[i]\n"
        "def cut(xs, s):\n    return xs[s], (s.start, s.stop, s.step)\n",
        ["s = Seq('abcd')[1:3]\nself.assertEqual(s.xs, ['b', 'c'])\nself.assertEqual(Seq(range(9))[::4].xs, [0, 4, 8])\n"
         "self.assertEqual(Seq('ab')[-1], 'b')",
         "self.assertEqual(cut([1, 2, 3, 4], slice(None, -1, 2)), ([1, 3], (None, -1, 2)))"]),
    "items_of_the_arguments_come_back_as_themselves": (  # dedupe(records)[0] is records[0] in plain Python
        "def dedupe(records):\n    out = []\n    for r in records:\n        if r not in out:\n            out.append(r)\n"
        "    return out\ndef find(people, name):\n    return next(p for p in people if p['name'] == name)\n"
        "def ends(rows):\n    rows[0].append(0)\n    return rows[0], rows[-1]\ndef copies(rows):\n    return [list(r) for r in rows]\n",
        ["a, b, c = {'x': 1}, {'x': 1}, {'x': 2}\nout = dedupe([a, b, c])\nself.assertEqual(out, [{'x': 1}, {'x': 2}])\n"
         "self.assertIs(out[0], a)\nself.assertIs(out[1], c)",
         "people = [{'name': 'a'}, {'name': 'b'}]\np = find(people, name='b')\nself.assertIs(p, people[1])\n"
         "p['age'] = 3\nself.assertEqual(people[1], {'name': 'b', 'age': 3})",
         "rows = [[1], [2]]\nfirst, last = ends(rows)\nself.assertIs(first, rows[0])\nself.assertIs(last, rows[1])\n"
         "self.assertEqual(first, [1, 0])\nself.assertIsNot(copies(rows)[0], rows[0])"]),
    "dataclasses_of_the_program": (  # dataclasses.asdict / fields / is_dataclass read a program dataclass's data
        "from dataclasses import dataclass, field, InitVar\nfrom typing import ClassVar\n"
        "@dataclass\nclass Item:\n    sku: str\n    qty: int = 1\n"
        "@dataclass\nclass Order:\n    who: str\n    items: list = field(default_factory=list)\n    kind: ClassVar[str] = 'o'\n"
        "    seed: InitVar[int] = 0\n    def __post_init__(self, seed):\n        self.items.extend(Item(str(i)) for i in range(seed))\n"
        "class Plain:\n    pass\n",
        ["import dataclasses\no = Order('ann', seed=2)\nself.assertTrue(dataclasses.is_dataclass(o))\n"
         "self.assertEqual([f.name for f in dataclasses.fields(o)], ['who', 'items'])\n"
         "self.assertEqual(dataclasses.asdict(o), {'who': 'ann', 'items': [{'sku': '0', 'qty': 1}, {'sku': '1', 'qty': 1}]})\n"
         "self.assertEqual(dataclasses.astuple(Item('x', 3)), ('x', 3))\nself.assertFalse(dataclasses.is_dataclass(Plain()))\n"
         "with self.assertRaises(TypeError):\n    dataclasses.asdict(Plain())",
         "import dataclasses\na = Item('x', 2)\nb = dataclasses.replace(a, qty=5)\nself.assertEqual((b.sku, b.qty, a.qty), ('x', 5, 2))\n"
         "self.assertEqual(type(b).__name__, 'Item')\nself.assertEqual(a.__class__('y').sku, 'y')"]),
    "namedtuples_keep_their_methods": (  # a NamedTuple result is a value and still has the program's methods
        "from typing import NamedTuple\nimport urllib.parse\nclass P(NamedTuple):\n    x: int\n    y: int = 0\n"
        "    def scaled(self, k):\n        return P(self.x * k, self.y * k)\n    @property\n    def norm1(self):\n"
        "        return abs(self.x) + abs(self.y)\n    @staticmethod\n    def origin():\n        return P(0)\n    UNIT = 1\n"
        "def make(x, y=0):\n    return P(x, y)\ndef total(p):\n    return p.norm1 + p.scaled(2).x\n"
        "def url():\n    return urllib.parse.urlparse('http://a/b?c=1')\n",
        ["p = make(1, -2)\nself.assertEqual(p, (1, -2))\nself.assertEqual(p.scaled(3), (3, -6))\nself.assertEqual(p.norm1, 3)\n"
         "self.assertEqual(p._replace(y=5).scaled(2).y, 10)\nself.assertEqual(p.origin(), (0, 0))\n"
         "self.assertEqual((p.UNIT, type(p).__name__, p._asdict()), (1, 'P', {'x': 1, 'y': -2}))",
         "self.assertEqual(total(make(2, 2)), 8)\nself.assertEqual(total(make(1)._replace(y=1)), 4)",
         "self.assertEqual(url().netloc, 'a')\nself.assertEqual(url().geturl(), 'http://a/b?c=1')"]),
    "exception_chains": (  # raise ... from e: the test reads __cause__ / __context__ of the program's exception
        "class Bad(Exception):\n    pass\ndef parse(t):\n    try:\n        return int(t)\n    except ValueError as e:\n"
        "        raise Bad('nan') from e\ndef get(d):\n    try:\n        return d['k']\n    except KeyError:\n"
        "        raise Bad('missing')\ndef quiet():\n    try:\n        1 / 0\n    except ZeroDivisionError:\n"
        "        raise Bad('q') from None\n",
        ["with self.assertRaises(Bad) as cm:\n    parse('x')\nself.assertIsInstance(cm.exception.__cause__, ValueError)\n"
         "self.assertIs(cm.exception.__context__, cm.exception.__cause__)\nself.assertTrue(cm.exception.__suppress_context__)\n"
         "self.assertIn('invalid literal', str(cm.exception.__cause__))",
         "with self.assertRaises(Bad) as cm:\n    get({})\nself.assertIsNone(cm.exception.__cause__)\n"
         "self.assertIsInstance(cm.exception.__context__, KeyError)\nself.assertFalse(cm.exception.__suppress_context__)",
         "with self.assertRaises(Bad) as cm:\n    quiet()\nself.assertIsNone(cm.exception.__cause__)\n"
         "self.assertTrue(cm.exception.__suppress_context__)\nself.assertIsInstance(cm.exception.__context__, ZeroDivisionError)"]),
    "paths_are_data": (  # pathlib paths cross as paths, both ways (a test's tempdir / 'x.txt')
        "from pathlib import Path, PurePosixPath\ndef save(d, name, text):\n    p = Path(d) / name\n    p.write_text(text)\n"
        "    return p\ndef size(p):\n    return len(open(p).read())\ndef pure():\n    return PurePosixPath('a/b.txt')\n",
        ["import tempfile\nfrom pathlib import Path, PurePosixPath\nwith tempfile.TemporaryDirectory() as t:\n"
         "    p = save(Path(t), 'x.txt', 'hello')\n    self.assertIsInstance(p, Path)\n    self.assertEqual(p, Path(t) / 'x.txt')\n"
         "    self.assertEqual(p.read_text(), 'hello')\n    self.assertEqual(size(p), 5)\n"
         "self.assertEqual(pure(), PurePosixPath('a') / 'b.txt')\nself.assertEqual(pure().suffix, '.txt')"]),
    "catch_warnings_in_the_test": (  # warnings.catch_warnings(record=True) sees what the program warns
        "import warnings\ndef old(x):\n    warnings.warn('old is deprecated', DeprecationWarning, stacklevel=2)\n    return x\n"
        "def clip(v):\n    if v < 0:\n        warnings.warn('clipped', RuntimeWarning)\n    return max(v, 0)\n",
        ["import warnings\nwith warnings.catch_warnings(record=True) as w:\n    warnings.simplefilter('always')\n"
         "    self.assertEqual(old(1), 1)\n    clip(2)\nself.assertEqual([x.category for x in w], [DeprecationWarning])\n"
         "self.assertIn('deprecated', str(w[0].message))",
         "import warnings\nwith warnings.catch_warnings():\n    warnings.simplefilter('error')\n"
         "    with self.assertRaises(RuntimeWarning):\n        clip(-1)\nwith warnings.catch_warnings(record=True) as w:\n"
         "    warnings.simplefilter('ignore')\n    clip(-1)\nself.assertEqual(w, [])"]),
    "generators_driven_by_the_test": (  # send / throw / close on the program's generator, as next() is
        "def avg():\n    total = n = 0\n    mean = None\n    while True:\n        try:\n            x = yield mean\n"
        "        except ValueError:\n            total = n = 0\n            mean = None\n            continue\n"
        "        total += x\n        n += 1\n        mean = total / n\ndef two():\n    yield 1\n    yield 2\n",
        ["g = avg()\nself.assertIsNone(next(g))\nself.assertEqual(g.send(10), 10.0)\nself.assertEqual(g.send(20), 15.0)\n"
         "self.assertIsNone(g.throw(ValueError))\nself.assertEqual(g.send(4), 4.0)\ng.close()\n"
         "with self.assertRaises(StopIteration):\n    g.send(1)",
         "g = two()\nself.assertEqual(g.send(None), 1)\nwith self.assertRaises(KeyError):\n    g.throw(KeyError('k'))\n"
         "self.assertEqual(list(g), [])\nh = two()\nnext(h)\nnext(h)\nwith self.assertRaises(StopIteration):\n    h.send(None)"]),
    "enum_members_with_a_builtin_mixin": (  # IntEnum / (str, Enum) members: their value, and name, identity, methods
        "from enum import Enum, IntEnum, IntFlag\nclass Level(IntEnum):\n    LOW = 1\n    HIGH = 2\n"
        "    def label(self):\n        return self.name.title()\n"
        "class Status(str, Enum):\n    ON = 'on'\n    OFF = 'off'\n    @property\n    def flipped(self):\n"
        "        return Status.OFF if self is Status.ON else Status.ON\n"
        "class Perm(IntFlag):\n    R = 4\n    W = 2\ndef worst(levels):\n    return max(levels)\n"
        "def is_on(s):\n    return s is Status.ON\n",
        ["self.assertEqual(Level.HIGH, 2)\nself.assertEqual(Level(2).name, 'HIGH')\nself.assertIs(Level(2), Level.HIGH)\n"
         "self.assertEqual(Level.LOW.value, 1)\nself.assertIsInstance(Level.LOW, Level)\nself.assertIsInstance(Level.LOW, int)\n"
         "self.assertEqual(worst([Level.LOW, Level.HIGH]).label(), 'High')\nself.assertLess(Level.LOW, Level.HIGH)\n"
         "self.assertEqual(repr(Level.LOW), '<Level.LOW: 1>')\nself.assertEqual([m.name for m in Level], ['LOW', 'HIGH'])",
         "self.assertEqual(Status.ON, 'on')\nself.assertEqual(Status('off').value, 'off')\nself.assertIs(Status.ON.flipped, Status.OFF)\n"
         "self.assertTrue(is_on(Status.ON))\nself.assertFalse(is_on('on'))\nself.assertEqual(str(Status.ON), 'Status.ON')\n"
         "self.assertEqual({Status.ON: 1}['on'], 1)",
         "self.assertEqual(Perm.R | Perm.W, 6)\nself.assertEqual(Perm.R.name, 'R')\nself.assertEqual(int(Perm.W), 2)"]),
    "copies_of_the_programs_objects": (  # copy.copy / deepcopy of a program object: the program copies it
        "class Cart:\n    def __init__(self):\n        self.items = []\n    def add(self, x):\n        self.items.append(x)\n"
        "        return self\n",
        ["import copy\nc = Cart().add(1)\nd = copy.deepcopy(c)\nd.add(2)\nself.assertEqual((c.items, d.items), ([1], [1, 2]))\n"
         "s = copy.copy(c)\ns.add(3)\nself.assertEqual(c.items, [1, 3])\nself.assertIsNot(s, c)\n"
         "pair = copy.deepcopy([c, c])\nself.assertIs(pair[0], pair[1])\nself.assertIsNot(pair[0], c)"]),
    "abstract_base_classes_of_the_program": (  # class Config(Mapping): isinstance(c, Mapping) as in plain Python
        "import collections.abc\nclass Config(collections.abc.Mapping):\n    def __init__(self, d):\n        self._d = dict(d)\n"
        "    def __getitem__(self, k):\n        return self._d[k]\n    def __iter__(self):\n        return iter(self._d)\n"
        "    def __len__(self):\n        return len(self._d)\nclass Bag(collections.abc.MutableSet):\n"
        "    def __init__(self):\n        self.s = set()\n    def __contains__(self, x):\n        return x in self.s\n"
        "    def __iter__(self):\n        return iter(self.s)\n    def __len__(self):\n        return len(self.s)\n"
        "    def add(self, x):\n        self.s.add(x)\n    def discard(self, x):\n        self.s.discard(x)\n",
        ["from collections.abc import Mapping, MutableMapping, MutableSet, Sequence\nc = Config({'a': 1})\n"
         "self.assertIsInstance(c, Mapping)\nself.assertNotIsInstance(c, MutableMapping)\nself.assertEqual(dict(c), {'a': 1})\n"
         "self.assertEqual(c.get('b', 5), 5)\nself.assertIsInstance(Bag(), MutableSet)\nself.assertNotIsInstance(Bag(), Sequence)"]),
    "log_handlers_of_the_test": (  # a logging.Handler the test adds to the program's logger sees its records
        "import logging\nlog = logging.getLogger('shop')\nsub = logging.getLogger('shop.db')\n"
        "def buy(x):\n    log.info('bought %s', x)\n    sub.debug('row %d', 1)\n    return x\n",
        ["import logging\nclass Keep(logging.Handler):\n    def __init__(self):\n        super().__init__()\n"
         "        self.seen = []\n    def emit(self, r):\n        self.seen.append((r.name, r.levelname, r.getMessage()))\n"
         "h = Keep()\nlg = logging.getLogger('shop')\nlg.addHandler(h)\nlg.setLevel(logging.DEBUG)\ntry:\n    buy('tea')\n"
         "finally:\n    lg.removeHandler(h)\n    lg.setLevel(logging.NOTSET)\n"
         "self.assertEqual(h.seen, [('shop', 'INFO', 'bought tea'), ('shop.db', 'DEBUG', 'row 1')])\n"
         "h2 = Keep()\nh2.setLevel(logging.INFO)\nlg.addHandler(h2)\ntry:\n    buy('x')\nfinally:\n    lg.removeHandler(h2)\n"
         "self.assertEqual(h2.seen, [])"]),
    "stdlib_names_the_program_imported": (  # from datetime import datetime in the program, import * in the test
        "from datetime import datetime, timedelta\nfrom time import time\nfrom copy import deepcopy\n"
        "from bisect import bisect\nimport json\ndef stamp():\n    return datetime(2024, 1, 1) + timedelta(days=1)\n",
        ["self.assertEqual(stamp(), datetime(2024, 1, 2))\nself.assertIsInstance(time(), float)\n"
         "self.assertEqual(deepcopy([1]), [1])\nself.assertEqual(bisect([1, 3], 2), 1)\nself.assertEqual(json.dumps([1]), '[1]')\n"
         "import solution\nself.assertIs(solution.datetime, datetime)"],
        "from datetime import datetime\nfrom solution import *\n"),
    "defaultdicts_with_the_programs_factory": (  # defaultdict(lambda: defaultdict(int)): a missing key in the test
        "from collections import defaultdict\ndef nested(pairs):\n    d = defaultdict(lambda: defaultdict(int))\n"
        "    for a, b in pairs:\n        d[a][b] += 1\n    return d\ndef pairs():\n    return defaultdict(lambda: [0, 0])\n",
        ["d = nested([('a', 'x'), ('a', 'x')])\nself.assertEqual(d['a']['x'], 2)\nself.assertEqual(d['zz']['q'], 0)\n"
         "self.assertEqual(sorted(d), ['a', 'zz'])\np = pairs()\np['k'][0] += 1\nself.assertEqual(p, {'k': [1, 0]})"]),
    "the_tests_objects_in_the_program": (  # the test's own methods decide comparisons of its objects
        "import heapq\nclass PQ:\n    def __init__(self):\n        self.h = []\n    def push(self, item):\n"
        "        heapq.heappush(self.h, item)\n    def pop(self):\n        return heapq.heappop(self.h)\n"
        "def describe(x):\n    return str(x) + '|' + repr(x)\ndef keys(view):\n    return len(view), sorted(view), 'a' in view\n"
        "def dedupe(objs):\n    return list(dict.fromkeys(objs))\n",
        ["q = PQ()\nfor p, n in [(3, 'c'), (1, 'a'), (2, 'b')]:\n    q.push(Task(p, n))\n"
         "self.assertEqual([q.pop().name for _ in range(3)], ['a', 'b', 'c'])",
         "self.assertEqual(describe(Task(1, 'x')), 'Task(x)|<Task x>')\n"
         "self.assertEqual(keys({'a': 1, 'b': 2}.keys()), (2, ['a', 'b'], True))",
         "a, b, c = Task(1, 'a'), Task(1, 'b'), Task(2, 'c')\nself.assertEqual([t.name for t in dedupe([a, b, c])], ['a', 'c'])"],
        "class Task:\n    def __init__(self, p, name):\n        self.p, self.name = p, name\n"
        "    def __lt__(self, o):\n        return self.p < o.p\n    def __eq__(self, o):\n        return isinstance(o, Task) and self.p == o.p\n"
        "    def __hash__(self):\n        return hash(self.p)\n    def __str__(self):\n        return 'Task(%s)' % self.name\n"
        "    def __repr__(self):\n        return '<Task %s>' % self.name\n"),
    "classeval_state": (  # class-level suites: state the test hands over, assigns, patches and reads back
        "import datetime\nimport sqlite3\nclass Hotel:\n    def __init__(self, rooms):\n        self.rooms = rooms\n        self.action = None\n"
        "    def free(self, kind):\n        return self.rooms[kind]\n    def book(self, kind):\n        self.rooms[kind] -= 1\n"
        "    def store(self, x):\n        self.kept = x\n        return self.kept is x\n"
        "    def run(self):\n        return self.action('x') if self.action else 'none'\n"
        "    def now(self):\n        return datetime.datetime.now()\n"
        "    def db(self):\n        return sqlite3.connect(':memory:')\n"
        "    def book_of(self, title):\n        return Book(title, 1965, ['tag'])\n"
        "import dataclasses\n@dataclasses.dataclass\nclass Book:\n    title: str\n    year: int\n"
        "    tags: list = dataclasses.field(default_factory=list, compare=False)\n"
        "@dataclasses.dataclass(order=True, frozen=True)\nclass Version:\n    major: int\n    minor: int = 0\n"
        "class Adder:\n    def __call__(self, x):\n        return x + 1\n",
        # a kept argument read back through an attribute is the test's own object, changed by either side
        ["rooms = {'single': 3}\nh = Hotel(rooms)\nself.assertIs(h.rooms, rooms)\nh.rooms['single'] = 0\n"
         "self.assertEqual(h.free('single'), 0)\nh.book('single')\nself.assertEqual(rooms, {'single': -1})",
         # a container the test assigns to an attribute is one object on both sides
         "items = {'a': 1}\nh = Hotel({})\nh.rooms = items\nitems['b'] = 2\nself.assertEqual(h.free('b'), 2)\n"
         "h.book('a')\nself.assertEqual(items, {'a': 0, 'b': 2})\nself.assertIs(h.rooms, items)",
         "s = object()\nh = Hotel({})\nself.assertTrue(h.store(s))\nself.assertIs(h.kept, s)",  # a bare sentinel
         # an instance of a program class with __call__ is named and compared as any object of the program
         "a, b = Adder(), Adder()\nself.assertNotEqual(a, b)\nself.assertEqual(a, a)\nself.assertEqual(a(1), 2)\n"
         "self.assertEqual(a.__class__.__name__, 'Adder')\nself.assertEqual(type(b).__name__, 'Adder')",
         # patch('datetime.datetime'): the values that cross are still datetime's own
         "fixed = datetime.datetime(2020, 5, 5)\nwith mock.patch('datetime.datetime') as m:\n    m.now.return_value = fixed\n"
         "    self.assertEqual(Hotel({}).now(), fixed)\nself.assertIs(type(Hotel({}).now()), datetime.datetime)",
         # the truth of a test's callable the program keeps
         "h = Hotel({})\nh.action = lambda s: s * 2\nself.assertEqual(h.run(), 'xx')\nh.action = None\n"
         "self.assertEqual(h.run(), 'none')\nh.action = mock.MagicMock(return_value=1)\nself.assertEqual(h.run(), 1)",
         # a callable standard-library object of the program is typed as itself
         "c = Hotel({}).db()\nself.assertIsInstance(c, sqlite3.Connection)\n"
         "self.assertEqual(c.execute('select 1').fetchall(), [(1,)])\nc.close()",
         # a dataclass keeping the generated ==: compared on its fields, as that method does
         "self.assertEqual(Hotel({}).book_of('Dune'), Book('Dune', 1965))\nself.assertIn(Book('Dune', 1965), [Hotel({}).book_of('Dune')])\n"
         "self.assertNotEqual(Hotel({}).book_of('Dune'), Book('Dune', 1966))\nself.assertNotEqual(Book('Dune', 1965), ('Dune', 1965))",
         # order=True: ordering on the same fields; frozen: hashable as the program hashes it
         "vs = [Version(1, 10), Version(0, 9), Version(1, 2)]\nself.assertEqual(sorted(vs), [Version(0, 9), Version(1, 2), Version(1, 10)])\n"
         "self.assertLess(Version(1, 2), Version(1, 10))\nself.assertEqual(len({Version(1, 2), Version(1, 2), Version(2)}), 2)\n"
         "with self.assertRaises(TypeError):\n    Version(1) < (1, 0)"]),
    "views_of_the_programs_dicts": (  # dict views: == and `in` as the genuine view of the items they yield now
        "from collections import OrderedDict\nclass Rates:\n    def __init__(self):\n        self.rates = {'USD': 1.0, 'EUR': 0.9}\n"
        "    def currencies(self):\n        return self.rates.keys()\n    def pairs(self):\n        return self.rates.items()\n"
        "    def amounts(self):\n        return self.rates.values()\n    def ordered(self):\n        return OrderedDict(self.rates).keys()\n",
        ["r = Rates()\nk = r.currencies()\nself.assertEqual(k, {'USD', 'EUR'})\nself.assertIn('EUR', k)\n"
         "self.assertNotIn('JPY', k)\nr.rates['JPY'] = 150\nself.assertIn('JPY', k)\nself.assertNotEqual(k, {'USD'})",
         "r = Rates()\nself.assertEqual(r.pairs(), {('USD', 1.0), ('EUR', 0.9)})\nself.assertIn(('EUR', 0.9), r.pairs())\n"
         "self.assertEqual(r.ordered(), {'EUR', 'USD'})\nself.assertNotEqual(r.currencies(), ['USD', 'EUR'])\n"
         "self.assertNotEqual(r.amounts(), r.amounts())\nself.assertEqual(sorted(r.amounts()), [0.9, 1.0])"]),
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
        for name, (code, bodies, *header) in group.items():
            keys.append(name)
            jobs.append(Job(code, parse_label(_ut(*bodies, header="from unittest import mock\n" + "".join(header)))))
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


def test_a_container_the_program_shares_is_one_object_as_in_plain_python(sb):
    # A mutable default shared by every instance: plain Python fails each test (the test's append reaches the
    # shared list). When a returned container was a copy, the test's changes never reached the program and
    # this wrong program passed.
    bug = ("class Inv:\n    def __init__(self, tags=[]):\n        self.tags = tags\n"
           "    def count(self):\n        return len(self.tags)\n")
    ut = _ut("a = Inv()\na.tags.append('x')\nself.assertEqual(Inv().tags, [])",
             "a = Inv()\na.tags.append('y')\nself.assertEqual(a.count(), 1)", header="from solution import *\n")
    r = sb.run([Job(bug, parse_label(ut))])[0]
    assert [o.status for o in r.outcomes] == ["failed", "failed"], [(o.status, o.detail) for o in r.outcomes]
    assert "['x'] != []" in r.outcomes[0].detail and "2 != 1" in r.outcomes[1].detail


def test_a_candidate_lying_about_its_objects_decides_nothing(sb):
    # The program rewrites its own candidate: every object claims object's equality and ordering, str as its
    # class and every special method. The judge then compares by identity only: never a pass.
    code = ("import sys\nC = sys.modules['inside.candidate']\nhonest = C.Server._info\n"
            "C.Server._info = lambda self, obj: {**honest(self, obj), 'eq': 1, 'ord': 1,\n"
            "    'c': ['R', 'builtins', 'str'], 'm': list(sys.modules['inside.protocol'].CAPS)}\n"
            "class Evil:\n    def __eq__(self, o):\n        return True\n    __hash__ = object.__hash__\n"
            "    def __contains__(self, x):\n        return True\n    def __iter__(self):\n        return iter(['secret'])\n"
            "def f(x):\n    return Evil()\n")
    ut = _ut("self.assertEqual(f(1), 'secret')", "self.assertTrue(f(1) == 'secret')", "self.assertFalse(f(1) != 'secret')",
             "self.assertIn(f(1), ['secret'])", "self.assertCountEqual([f(1)], ['secret'])", "self.assertIn('x', f(1))",
             "self.assertIsInstance(f(1), str)")
    r = sb.run([Job(code, parse_label(ut))])[0]
    assert [o.status for o in r.outcomes][:6] == ["failed"] * 5 + ["unsupported"], [(o.status, o.detail) for o in r.outcomes]
    assert r.outcomes[6].status == "passed"  # the lie reaches isinstance, which decides nothing about values


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


def test_a_claim_of_shared_container_hands_back_only_what_the_program_holds(sb):
    # The program rewrites its candidate to claim that every result is the first container the judge follows
    # (the test's argument it kept, tid 1) or one it never saw: the test gets back its own kept object in the
    # state the program gave it (as an honest `return KEEP[0]` would), never another object of the test.
    code = ("import sys\nC = sys.modules['inside.candidate']\nok = C.Server._ok\n"
            "C.Server._ok = lambda self, value, kept: [*ok(self, value, False)[:2], {'shared': 1}]\n"
            "KEEP = []\ndef keep(d):\n    KEEP.append(d)\n    return len(KEEP)\ndef fresh():\n    return {'a': 1}\n"
            "def lie():\n    C.Server._ok = lambda self, value, kept: [*ok(self, value, False)[:2], {'shared': 7}]\n"
            "    return {'b': 2}\n")
    ut = _ut("other = {'q': 1}\nr = fresh()\nself.assertEqual(r, {'a': 1})\nself.assertIsNot(r, other)\n"
             "self.assertEqual(other, {'q': 1})",
             "d = {'z': 0}\nkeep(d)\nother = {'q': 1}\nr = lie()\nself.assertEqual(r, {'b': 2})\nself.assertIsNot(r, d)\n"
             "self.assertEqual((d, other), ({'z': 0}, {'q': 1}))")
    r = sb.run([Job(code, parse_label(ut))])[0]
    assert [o.status for o in r.outcomes] == ["passed", "passed"], [(o.status, o.detail) for o in r.outcomes]


def test_a_candidate_claiming_its_object_is_a_dict_view_decides_nothing(sb):
    # A view's == and `in` are decided on the items the program's object yields: a lie only chooses those items,
    # as returning them would; an always-equal object never decides, and endless items are never all fetched.
    code = ("import itertools, sys\nC = sys.modules['inside.candidate']\nhonest = C.Server._info\n"
            "C.Server._info = lambda self, obj: {**honest(self, obj), 'vw': 'keys'}\n"
            "class Evil:\n    def __eq__(self, o):\n        return True\n    __hash__ = object.__hash__\n"
            "    def __contains__(self, x):\n        return True\n    def __iter__(self):\n        return iter(['a'])\n"
            "class Endless(Evil):\n    def __iter__(self):\n        return itertools.count()\n"
            "def f():\n    return Evil()\ndef g():\n    return Endless()\n")
    ut = _ut("self.assertEqual(f(), {'secret'})", "self.assertIn('secret', f())", "self.assertEqual(f(), {'a'})",
             "self.assertEqual(g(), {1})")
    r = sb.run([Job(code, parse_label(ut))])[0]
    assert [o.status for o in r.outcomes] == ["failed", "failed", "passed", "unsupported"], \
        [(o.status, o.detail) for o in r.outcomes]


def test_a_method_of_the_test_case_is_a_callback_and_the_test_case_stays_the_judges(sb):
    # `lib.on_add(self.handler)`: the program calls the test's own method, as in plain Python; through it the
    # program reaches neither the TestCase (its assertions, its expected values) nor unittest's own methods.
    code = ("class Library:\n    def __init__(self):\n        self.listeners = []\n"
            "    def on_add(self, fn):\n        self.listeners.append(fn)\n"
            "    def add(self, title):\n        return [fn(title) for fn in self.listeners]\n"
            "    def peek(self, fn):\n        out = []\n        for name in ('__self__', '__func__', 'expected', 'seen'):\n"
            "            try:\n                out.append(repr(getattr(fn, name)))\n"
            "            except Exception as e:\n                out.append(type(e).__name__)\n        return out\n")
    mod = ("import unittest\nclass T(unittest.TestCase):\n    expected = 'secret'\n"
           "    def setUp(self):\n        self.seen = []\n"
           "    def handler(self, title):\n        self.seen.append(title)\n        return len(self.seen)\n"
           "    def test_callback(self):\n        lib = Library()\n        lib.on_add(self.handler)\n"
           "        self.assertEqual(lib.add('x'), [1])\n        self.assertEqual(self.seen, ['x'])\n"
           "    def test_nothing_else(self):\n"
           "        self.assertEqual(Library().peek(self.handler), ['AttributeError'] * 4)\n"
           "    def test_unittest_methods_stay(self):\n        lib = Library()\n        lib.on_add(self.fail)\n")
    r = sb.run([Job(code, parse_label({"format": "unittest", "tests": [mod]}))])[0]
    assert [o.status for o in r.outcomes] == ["passed", "passed", "unsupported"], \
        [(o.status, o.detail) for o in r.outcomes]


def test_what_a_callable_of_the_test_does_to_the_programs_arguments_reaches_the_program(sb):
    # `patch('random.shuffle', lambda x: x.reverse())`: in plain Python the test's function gets the program's
    # own list; what it does to it in place is the program's list's state afterwards. Anything else stays as it
    # was: a callable that only reads, or a change the channel cannot carry back.
    code = ("import random\nclass Deck:\n    def __init__(self):\n        self.cards = ['A', 'B', 'C']\n"
            "    def shuffle(self):\n        random.shuffle(self.cards)\n        return self.cards\n"
            "    def each(self, fn):\n        box = {'n': 0}\n        fn(self.cards, box=box)\n        return self.cards, box\n")
    ut = _ut("with mock.patch('random.shuffle', lambda x: x.reverse()):\n    self.assertEqual(Deck().shuffle(), ['C', 'B', 'A'])",
             "def fn(cards, box):\n    cards.append('D')\n    box['n'] += 1\nself.assertEqual(Deck().each(fn), (['A', 'B', 'C', 'D'], {'n': 1}))",
             "seen = []\nself.assertEqual(Deck().each(lambda c, box: seen.append(len(c))), (['A', 'B', 'C'], {'n': 0}))\n"
             "self.assertEqual(seen, [3])",
             "import threading\ndef fn(cards, box):\n    box['lock'] = threading.Lock()\n    cards.append(2)\n"
             "self.assertEqual(Deck().each(fn), (['A', 'B', 'C', 2], {'n': 0}))", header="from unittest import mock\n")
    r = sb.run([Job(code, parse_label(ut))])[0]
    assert [o.status for o in r.outcomes] == ["passed"] * 4, \
        [(o.status, o.detail) for o in r.outcomes]


def test_a_candidate_claiming_generated_dataclass_equality_decides_nothing(sb):
    # A dataclass whose class keeps the generated == compares as that method does, on its fields: a candidate
    # claiming so for an always-equal object only chooses what its fields hold; objects of other classes or
    # test values never equal it, and the program's own __eq__ never runs.
    code = ("import sys\nC = sys.modules['inside.candidate']\nhonest = C.Server._info\n"
            "C.Server._info = lambda self, obj: {**honest(self, obj), 'df': ['x'], 'ef': ['x'], 'eo': 1}\n"
            "class Evil:\n    def __init__(self, x):\n        self.x = x\n    def __eq__(self, o):\n        return True\n"
            "    __hash__ = object.__hash__\n"
            "def f(x):\n    return Evil(x)\n")
    ut = _ut("self.assertEqual(f(1), f(2))", "self.assertEqual(f(1), 'secret')", "self.assertEqual(f(1), f(1))",
             "self.assertIn(f(3), [f(3)])", "self.assertNotEqual(f(1), f(2))", "self.assertLess(f(2), f(1))",
             "self.assertLess(f(1), 5)")
    r = sb.run([Job(code, parse_label(ut))])[0]
    assert [o.status for o in r.outcomes] == ["failed", "failed", "passed", "passed", "passed", "failed", "error"], \
        [(o.status, o.detail) for o in r.outcomes]

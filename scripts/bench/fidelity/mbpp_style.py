"""MBPP-style fidelity family: one function per task, `assert` lists, `test_setup_code` / `test_imports`.

Rows are written in MBPP's own two shapes (full: `text` + `test_setup_code`; sanitized: `prompt` +
`test_imports`) and become labels through the preprocessor's converter (data/formats/mbpp.py), so the
family also checks that conversion. What the asserts exercise: floats (`math.isclose`, `round`), sets,
tuples, dicts, strings, None, bools, nested lists, generators consumed by `list()`, stable sorting, big
ints, regex results (strings, tuples, match objects), setup code that builds inputs or defines classes
(MBPP's binary-tree tasks).

Programs per task: the reference (`canonical`), hand-written correct alternatives (`alt:*`, what models
write instead: a generator, a Counter, frozenset, a lambda, 1/0 for booleans, ...), hand-written wrong
ones (`bug:*`, plausible mistakes: unstable tie order, tuples for lists, no rounding, ...; verdict left to
the reference) and the seeded AST mutants of scripts/bench/fidelity/corpus.py.
"""

from __future__ import annotations

import ast
import random

from coderl.data.formats import RowContext, mbpp
from coderl.rewards.labels import Label
from scripts.bench.fidelity.corpus import PLAIN, Program, ast_mutants, numbered, wrap
from scripts.bench.fidelity.corpus import dedent as _d

# id, question, reference code, asserts, setup/imports, correct alternatives, wrong variants
TASKS: list[dict] = [
    dict(id=1, text="Write a function to find the area of a circle.",
         code=_d("""
            import math
            def circle_area(r):
                return math.pi * r * r
         """),
         tests=["assert math.isclose(circle_area(10), 314.15926535897927, rel_tol=0.001)",
                "assert math.isclose(circle_area(5), 78.53981633974483, rel_tol=0.001)",
                "assert math.isclose(circle_area(4), 50.26548245743669, rel_tol=0.001)"],
         imports=["import math"],
         right={"no_import": "def circle_area(r):\n    return 3.141592653589793 * r ** 2\n",
                "lambda": "circle_area = lambda r: 3.14159 * r * r\n"},
         wrong={"perimeter": "import math\ndef circle_area(r):\n    return 2 * math.pi * r\n"}),
    dict(id=2, text="Write a function to find the average of a list rounded to 2 decimal places.",
         code="def average(xs):\n    return round(sum(xs) / len(xs), 2)\n",
         tests=["assert average([1, 2, 3, 4]) == 2.5", "assert average([1.5, 2.5, 3.0]) == 2.33",
                "assert round(average([10, 20, 25]), 1) == 18.3"],
         right={"statistics": "import statistics\ndef average(xs):\n    return round(statistics.mean(xs), 2)\n",
                "fsum": "import math\ndef average(xs):\n    return round(math.fsum(xs) / len(xs), 2)\n"},
         wrong={"no_round": "def average(xs):\n    return sum(xs) / len(xs)\n",
                "floor_div": "def average(xs):\n    return round(sum(xs) // len(xs), 2)\n"}),
    dict(id=3, text="Write a function to find the shared elements from the given two lists.",
         code="def similar_elements(a, b):\n    return tuple(set(a) & set(b))\n",
         tests=["assert set(similar_elements((3, 4, 5, 6), (5, 7, 4, 10))) == set((4, 5))",
                "assert set(similar_elements((1, 2, 3, 4), (5, 4, 3, 7))) == set((3, 4))",
                "assert set(similar_elements((11, 12, 14, 13), (17, 15, 14, 13))) == set((13, 14))"],
         right={"frozenset": "def similar_elements(a, b):\n    return frozenset(a).intersection(b)\n",
                "generator": "def similar_elements(a, b):\n    return (x for x in a if x in b)\n"},
         wrong={"union": "def similar_elements(a, b):\n    return set(a) | set(b)\n"}),
    dict(id=4, text="Write a function that returns the set of common elements of two lists.",
         code="def common(a, b):\n    return set(a) & set(b)\n",
         tests=["assert common([1, 2, 3], [2, 3, 4]) == {2, 3}", "assert common([1], [2]) == set()",
                "assert common(['a', 'b'], ['b', 'c']) == {'b'}"],
         right={"frozenset": "def common(a, b):\n    return frozenset(a) & frozenset(b)\n",
                "comprehension": "def common(a, b):\n    return {x for x in a if x in b}\n"},
         wrong={"list": "def common(a, b):\n    return [x for x in a if x in b]\n"}),
    dict(id=5, text="Write a function to find the minimum and maximum of a list as a tuple.",
         code="def min_max(xs):\n    return (min(xs), max(xs))\n",
         tests=["assert min_max([3, 1, 2]) == (1, 3)", "assert min_max([5]) == (5, 5)",
                "assert min_max([-1, -7, 4, 0]) == (-7, 4)"],
         right={"namedtuple": "from collections import namedtuple\nMM = namedtuple('MM', 'lo hi')\n"
                              "def min_max(xs):\n    s = sorted(xs)\n    return MM(s[0], s[-1])\n",
                "bare": "def min_max(xs):\n    return min(xs), max(xs)\n"},
         wrong={"list": "def min_max(xs):\n    return [min(xs), max(xs)]\n"}),
    dict(id=6, text="Write a function to count the frequency of each character in a string.",
         code="def char_freq(s):\n    d = {}\n    for c in s:\n        d[c] = d.get(c, 0) + 1\n    return d\n",
         tests=["assert char_freq('hello') == {'h': 1, 'e': 1, 'l': 2, 'o': 1}",
                "assert char_freq('') == {}", "assert char_freq('a a') == {'a': 2, ' ': 1}"],
         right={"counter": "from collections import Counter\ndef char_freq(s):\n    return Counter(s)\n",
                "defaultdict": "from collections import defaultdict\ndef char_freq(s):\n    d = defaultdict(int)\n"
                               "    for c in s:\n        d[c] += 1\n    return d\n"},
         wrong={"no_space": "def char_freq(s):\n    return {c: s.count(c) for c in s if c != ' '}\n"}),
    dict(id=7, text="Write a function to reverse the words in a string.",
         code="def reverse_words(s):\n    return ' '.join(reversed(s.split()))\n",
         tests=["assert reverse_words('python program') == 'program python'",
                "assert reverse_words('java language') == 'language java'",
                "assert reverse_words('indian man') == 'man indian'"],
         right={"slice": "def reverse_words(s):\n    return ' '.join(s.split()[::-1])\n"},
         wrong={"chars": "def reverse_words(s):\n    return s[::-1]\n"}),
    dict(id=8, text="Write a python function to find the first repeated character in a given string.",
         code=_d("""
            def first_repeated_char(s):
                seen = set()
                for c in s:
                    if c in seen:
                        return c
                    seen.add(c)
                return None
         """),
         tests=["assert first_repeated_char('abcabc') == 'a'", "assert first_repeated_char('abc') == None",
                "assert first_repeated_char('123123') == '1'", "assert first_repeated_char('abbac') is not None"],
         right={"index": "def first_repeated_char(s):\n    for i, c in enumerate(s):\n        if s[:i + 1].count(c) > 1:\n"
                         "            return c\n"},
         wrong={"string_none": "def first_repeated_char(s):\n    for i, c in enumerate(s):\n"
                               "        if c in s[:i]:\n            return c\n    return 'None'\n"}),
    dict(id=9, text="Write a function to check if the given integer is a prime number.",
         code=_d("""
            def is_prime(n):
                if n < 2:
                    return False
                i = 2
                while i * i <= n:
                    if n % i == 0:
                        return False
                    i += 1
                return True
         """),
         tests=["assert is_prime(13) == True", "assert is_prime(1) == False", "assert not is_prime(9)",
                "assert is_prime(7919)"],
         right={"all": "def is_prime(n):\n    return n > 1 and all(n % d for d in range(2, int(n ** 0.5) + 1))\n",
                "ints": "def is_prime(n):\n    if n < 2:\n        return 0\n    for d in range(2, int(n ** 0.5) + 1):\n"
                        "        if n % d == 0:\n            return 0\n    return 1\n"},
         wrong={"odd": "def is_prime(n):\n    return n % 2 == 1\n"}),
    dict(id=10, text="Write a function to transpose a matrix given as a list of lists.",
         code="def transpose(m):\n    return [[row[i] for row in m] for i in range(len(m[0]))]\n",
         tests=["assert transpose([[1, 2], [3, 4]]) == [[1, 3], [2, 4]]",
                "assert transpose([[1, 2, 3]]) == [[1], [2], [3]]",
                "assert transpose([[1], [2]]) == [[1, 2]]"],
         right={"zip": "def transpose(m):\n    return list(map(list, zip(*m)))\n"},
         wrong={"tuples": "def transpose(m):\n    return list(zip(*m))\n"}),
    dict(id=11, text="Write a generator function that yields the even numbers below n.",
         code="def evens(n):\n    for i in range(n):\n        if i % 2 == 0:\n            yield i\n",
         tests=["assert list(evens(10)) == [0, 2, 4, 6, 8]", "assert list(evens(1)) == [0]",
                "assert sum(evens(7)) == 12", "assert next(evens(5)) == 0"],
         right={"range": "def evens(n):\n    return iter(range(0, n, 2))\n",
                "filter": "def evens(n):\n    return filter(lambda x: x % 2 == 0, range(n))\n"},
         wrong={"inclusive": "def evens(n):\n    return iter(range(0, n + 1, 2))\n"}),
    dict(id=12, text="Write a function to sort a list of words by length, keeping the original order of ties.",
         code="def sort_by_length(words):\n    return sorted(words, key=len)\n",
         tests=["assert sort_by_length(['bb', 'a', 'cc', 'd']) == ['a', 'd', 'bb', 'cc']",
                "assert sort_by_length(['xyz', 'ab', 'cd', 'e']) == ['e', 'ab', 'cd', 'xyz']",
                "assert sort_by_length([]) == []"],
         right={"in_place": "def sort_by_length(words):\n    words = list(words)\n    words.sort(key=lambda w: len(w))\n"
                            "    return words\n",
                "decorated": "def sort_by_length(words):\n    return [w for _, _, w in sorted((len(w), i, w) "
                             "for i, w in enumerate(words))]\n"},
         wrong={"unstable": "def sort_by_length(words):\n    return sorted(words, key=len, reverse=True)[::-1]\n",
                "alpha": "def sort_by_length(words):\n    return sorted(words, key=lambda w: (len(w), w[::-1]))\n"}),
    dict(id=13, text="Write a function to compute the factorial of n.",
         code="def factorial(n):\n    r = 1\n    for i in range(2, n + 1):\n        r *= i\n    return r\n",
         tests=["assert factorial(0) == 1", "assert factorial(5) == 120",
                "assert factorial(50) == 30414093201713378043612608166064768844377641568960512000000000000",
                "assert factorial(300) % 10 ** 9 == 0 and len(str(factorial(300))) == 615"],
         right={"math": "import math\ndef factorial(n):\n    return math.factorial(n)\n",
                "reduce": "from functools import reduce\nimport operator\ndef factorial(n):\n"
                          "    return reduce(operator.mul, range(1, n + 1), 1)\n"},
         wrong={"float": "import math\ndef factorial(n):\n    return int(math.gamma(n + 1))\n"}),
    dict(id=14, text="Write a function to return the n-th Fibonacci number.",
         code="def fib(n):\n    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a\n",
         tests=["assert fib(10) == 55", "assert fib(1) == 1",
                "assert fib(300) == 222232244629420445529739893461909967206666939096499764990979600"],
         right={"lru_cache": "import functools, sys\nsys.setrecursionlimit(5000)\n@functools.lru_cache(maxsize=None)\n"
                             "def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n"},
         wrong={"binet": "def fib(n):\n    phi = (1 + 5 ** 0.5) / 2\n    return round(phi ** n / 5 ** 0.5)\n"}),
    dict(id=15, text="Write a function to find all numbers in a string using regex.",
         code="import re\ndef find_numbers(s):\n    return re.findall(r'\\d+', s)\n",
         tests=["assert find_numbers('a1b22c333') == ['1', '22', '333']", "assert find_numbers('none') == []",
                "assert find_numbers('7 and 8') == ['7', '8']"],
         right={"finditer": "import re\ndef find_numbers(s):\n    return [m.group() for m in re.finditer('[0-9]+', s)]\n"},
         wrong={"ints": "import re\ndef find_numbers(s):\n    return [int(x) for x in re.findall(r'\\d+', s)]\n",
                "digits": "import re\ndef find_numbers(s):\n    return re.findall(r'\\d', s)\n"}),
    dict(id=16, text="Write a function that matches a string that has an a followed by zero or more b's.",
         code=_d("""
            import re
            def text_match(text):
                if re.search('ab*?', text):
                    return 'Found a match!'
                else:
                    return 'Not matched!'
         """),
         tests=["assert text_match('ac') == 'Found a match!'", "assert text_match('dc') == 'Not matched!'",
                "assert text_match('abba') == 'Found a match!'"],
         right={"in": "def text_match(text):\n    return 'Found a match!' if 'a' in text else 'Not matched!'\n"},
         wrong={"fullmatch": "import re\ndef text_match(text):\n"
                             "    return 'Found a match!' if re.fullmatch('ab*', text) else 'Not matched!'\n"}),
    dict(id=17, text="Write a function to extract year, month and date from a url by using regex.",
         code="import re\ndef extract_date(url):\n    return re.findall(r'/(\\d{4})/(\\d{1,2})/(\\d{1,2})/', url)\n",
         tests=["assert extract_date('https://x.com/news/2016/09/02/story/') == [('2016', '09', '02')]",
                "assert extract_date('https://y.org/2020/11/03/a/b') == [('2020', '11', '03')]",
                "assert extract_date('no date') == []"],
         right={"groups": "import re\ndef extract_date(url):\n"
                          "    return [m.groups() for m in re.finditer(r'/(\\d{4})/(\\d{1,2})/(\\d{1,2})/', url)]\n"},
         wrong={"lists": "import re\ndef extract_date(url):\n"
                         "    return [list(t) for t in re.findall(r'/(\\d{4})/(\\d{1,2})/(\\d{1,2})/', url)]\n"}),
    dict(id=18, text="Write a function that returns the regex match of a word starting with a capital letter.",
         code="import re\ndef capital_word(s):\n    return re.search(r'\\b[A-Z][a-z]+', s)\n",
         tests=["assert capital_word('hello World') is not None", "assert capital_word('all lower') is None",
                "assert capital_word('say Hi there').group() == 'Hi'",
                "assert capital_word('x Yz').span() == (2, 4)"],
         right={"compiled": "import re\nPAT = re.compile(r'\\b[A-Z][a-z]+')\ndef capital_word(s):\n    return PAT.search(s)\n"},
         wrong={"match": "import re\ndef capital_word(s):\n    return re.match(r'[A-Z][a-z]+', s)\n"}),
    dict(id=19, text="Write a function to check whether the given binary tree is balanced.",
         code=_d("""
            def height(node):
                if node is None:
                    return 0
                return max(height(node.left), height(node.right)) + 1
            def is_tree_balanced(root):
                if root is None:
                    return True
                lh, rh = height(root.left), height(root.right)
                return abs(lh - rh) <= 1 and is_tree_balanced(root.left) and is_tree_balanced(root.right)
         """),
         tests=["assert is_tree_balanced(root) == False", "assert is_tree_balanced(root1) == True",
                "assert is_tree_balanced(root2) == False"],
         setup=_d("""
            class Node:
                def __init__(self, data):
                    self.data = data
                    self.left = None
                    self.right = None
            root = Node(1)
            root.left = Node(2)
            root.right = Node(3)
            root.left.left = Node(4)
            root.left.right = Node(5)
            root.left.left.left = Node(8)
            root1 = Node(1)
            root1.left = Node(2)
            root1.right = Node(3)
            root1.left.left = Node(4)
            root1.left.right = Node(5)
            root1.right.left = Node(6)
            root1.left.left.left = Node(7)
            root2 = Node(1)
            root2.left = Node(2)
            root2.left.left = Node(3)
            root2.left.left.left = Node(7)
         """),
         right={"one_pass": _d("""
            def is_tree_balanced(root):
                def check(n):
                    if not n:
                        return 0
                    l, r = check(n.left), check(n.right)
                    if l < 0 or r < 0 or abs(l - r) > 1:
                        return -1
                    return 1 + max(l, r)
                return check(root) >= 0
         """)},
         wrong={"root_only": "def h(n):\n    return 0 if n is None else 1 + max(h(n.left), h(n.right))\n"
                             "def is_tree_balanced(root):\n    return abs(h(root.left) - h(root.right)) <= 1\n"}),
    dict(id=20, text="Write a function to find the maximum value in the n-th column of a list of tuples.",
         code="def max_of_nth(test_list, n):\n    return max(sub[n] for sub in test_list)\n",
         tests=["assert max_of_nth([(5, 6, 7), (1, 3, 5), (8, 9, 19)], 2) == 19",
                "assert max_of_nth([(6, 7, 8), (2, 4, 6), (9, 10, 20)], 1) == 10",
                "assert max_of_nth(data, 0) == 9"],
         setup="data = [(7, 8, 9), (3, 5, 7), (9, 11, 21)]\n",
         right={"sorted": "def max_of_nth(test_list, n):\n    return sorted(test_list, key=lambda t: t[n])[-1][n]\n"},
         wrong={"row": "def max_of_nth(test_list, n):\n    return max(test_list)[n]\n"}),
    dict(id=21, text="Write a function to remove duplicates from a list, preserving order.",
         code="def remove_duplicates(xs):\n    out = []\n    for x in xs:\n        if x not in out:\n            out.append(x)\n"
              "    return out\n",
         tests=["assert remove_duplicates([3, 1, 3, 2, 1]) == [3, 1, 2]", "assert remove_duplicates([]) == []",
                "assert remove_duplicates(['b', 'a', 'b']) == ['b', 'a']"],
         right={"fromkeys": "def remove_duplicates(xs):\n    return list(dict.fromkeys(xs))\n"},
         wrong={"sorted_set": "def remove_duplicates(xs):\n    return sorted(set(xs))\n"}),
    dict(id=22, text="Write a function to find the most common word and its count.",
         code="from collections import Counter\ndef most_common_word(s):\n    return Counter(s.split()).most_common(1)[0]\n",
         tests=["assert most_common_word('a b a c b a') == ('a', 3)", "assert most_common_word('x') == ('x', 1)",
                "assert most_common_word('q w w q') == ('q', 2)"],
         right={"max": "def most_common_word(s):\n    w = s.split()\n    best = max(w, key=w.count)\n    return best, w.count(best)\n"},
         wrong={"list": "from collections import Counter\ndef most_common_word(s):\n"
                        "    return list(Counter(s.split()).most_common(1)[0])\n"}),
    dict(id=23, text="Write a function to merge two dictionaries.",
         code="def merge_dicts(d1, d2):\n    return {**d1, **d2}\n",
         tests=["assert merge_dicts({'a': 1}, {'b': 2}) == {'a': 1, 'b': 2}",
                "assert merge_dicts({'a': 1}, {'a': 3}) == {'a': 3}", "assert merge_dicts({}, {}) == {}"],
         right={"update": "def merge_dicts(d1, d2):\n    d1.update(d2)\n    return d1\n",
                "chainmap": "from collections import ChainMap\ndef merge_dicts(d1, d2):\n    return ChainMap(d2, d1)\n",
                "or": "def merge_dicts(d1, d2):\n    return d1 | d2\n"},
         wrong={"first_wins": "def merge_dicts(d1, d2):\n    return {**d2, **d1}\n"}),
    dict(id=24, text="Write a function to flatten a nested list.",
         code=_d("""
            def flatten(nested):
                out = []
                for x in nested:
                    if isinstance(x, list):
                        out.extend(flatten(x))
                    else:
                        out.append(x)
                return out
         """),
         tests=["assert flatten([1, [2, [3, [4]]]]) == [1, 2, 3, 4]", "assert flatten([]) == []",
                "assert flatten([[10, 20], [30], 40]) == [10, 20, 30, 40]"],
         right={"generator": "def _walk(xs):\n    for x in xs:\n        if isinstance(x, list):\n            yield from _walk(x)\n"
                             "        else:\n            yield x\ndef flatten(nested):\n    return list(_walk(nested))\n",
                "stack": "def flatten(nested):\n    out, stack = [], [iter(nested)]\n    while stack:\n"
                         "        for x in stack[-1]:\n            if isinstance(x, list):\n                stack.append(iter(x))\n"
                         "                break\n            out.append(x)\n        else:\n            stack.pop()\n    return out\n"},
         wrong={"one_level": "def flatten(nested):\n    return [y for x in nested for y in (x if isinstance(x, list) else [x])]\n"}),
    dict(id=25, text="Write a function to find all pairs in a list that sum to a target.",
         code=_d("""
            def get_pairs(xs, target):
                out = []
                for i in range(len(xs)):
                    for j in range(i + 1, len(xs)):
                        if xs[i] + xs[j] == target:
                            out.append((xs[i], xs[j]))
                return out
         """),
         tests=["assert get_pairs([1, 5, 7, -1, 5], 6) == [(1, 5), (1, 5), (7, -1)]",
                "assert get_pairs([1, 1, 1], 2) == [(1, 1), (1, 1), (1, 1)]", "assert get_pairs([], 3) == []"],
         right={"combinations": "from itertools import combinations\ndef get_pairs(xs, target):\n"
                                "    return [p for p in combinations(xs, 2) if sum(p) == target]\n"},
         wrong={"lists": "from itertools import combinations\ndef get_pairs(xs, target):\n"
                         "    return [list(p) for p in combinations(xs, 2) if sum(p) == target]\n"}),
    dict(id=26, text="Write a function to get all subsets of a list of length k.",
         code="from itertools import combinations\ndef subsets(xs, k):\n    return [list(c) for c in combinations(xs, k)]\n",
         tests=["assert subsets([1, 2, 3], 2) == [[1, 2], [1, 3], [2, 3]]", "assert subsets([1, 2], 0) == [[]]",
                "assert subsets(['a', 'b', 'c'], 3) == [['a', 'b', 'c']]"],
         right={"recursive": _d("""
            def subsets(xs, k):
                if k == 0:
                    return [[]]
                if len(xs) < k:
                    return []
                return [[xs[0]] + s for s in subsets(xs[1:], k - 1)] + subsets(xs[1:], k)
         """)},
         wrong={"tuples": "from itertools import combinations\ndef subsets(xs, k):\n    return list(combinations(xs, k))\n"}),
    dict(id=27, text="Write a function to rotate a list to the right by k positions.",
         code="def rotate_right(xs, k):\n    if not xs:\n        return []\n    k %= len(xs)\n    return xs[-k:] + xs[:-k]\n",
         tests=["assert rotate_right([1, 2, 3, 4, 5], 2) == [4, 5, 1, 2, 3]", "assert rotate_right([1], 7) == [1]",
                "assert rotate_right([1, 2, 3], 3) == [1, 2, 3]", "assert rotate_right([], 2) == []"],
         right={"deque": "from collections import deque\ndef rotate_right(xs, k):\n    d = deque(xs)\n    d.rotate(k)\n"
                         "    return list(d)\n"},
         wrong={"left": "def rotate_right(xs, k):\n    if not xs:\n        return []\n    k %= len(xs)\n    return xs[k:] + xs[:k]\n"}),
    dict(id=28, text="Write a function to find the second smallest number in a list.",
         code=_d("""
            def second_smallest(numbers):
                uniq = sorted(set(numbers))
                if len(uniq) < 2:
                    return None
                return uniq[1]
         """),
         tests=["assert second_smallest([1, 2, -8, -2, 0, -2]) == -2", "assert second_smallest([1, 1]) == None",
                "assert second_smallest([2, 2, 3]) == 3", "assert second_smallest([]) is None"],
         right={"heapq": "import heapq\ndef second_smallest(numbers):\n    u = heapq.nsmallest(2, set(numbers))\n"
                         "    return u[1] if len(u) == 2 else None\n"},
         wrong={"dupes": "def second_smallest(numbers):\n    s = sorted(numbers)\n    return s[1] if len(s) > 1 else None\n"}),
    dict(id=29, text="Write a function to convert a camel case string to snake case.",
         code="import re\ndef camel_to_snake(s):\n    return re.sub(r'(?<!^)(?=[A-Z])', '_', s).lower()\n",
         tests=["assert camel_to_snake('PythonProgram') == 'python_program'",
                "assert camel_to_snake('myVarName') == 'my_var_name'", "assert camel_to_snake('x') == 'x'"],
         right={"loop": "def camel_to_snake(s):\n    out = ''\n    for i, c in enumerate(s):\n"
                        "        out += ('_' if c.isupper() and i else '') + c.lower()\n    return out\n"},
         wrong={"no_lower": "import re\ndef camel_to_snake(s):\n    return re.sub(r'(?<!^)(?=[A-Z])', '_', s)\n"}),
    dict(id=30, text="Write a function to find the median of a list of numbers.",
         code=_d("""
            def median(xs):
                s = sorted(xs)
                n = len(s)
                mid = n // 2
                return s[mid] if n % 2 else (s[mid - 1] + s[mid]) / 2
         """),
         tests=["assert median([3, 1, 2]) == 2", "assert median([4, 1, 3, 2]) == 2.5",
                "assert math.isclose(median([0.1, 0.2, 0.3, 0.4]), 0.25)"],
         imports=["import math"],
         right={"statistics": "import statistics\ndef median(xs):\n    return statistics.median(xs)\n"},
         wrong={"int_div": "def median(xs):\n    s = sorted(xs)\n    n = len(s)\n    return s[n // 2] if n % 2 else "
                           "(s[n // 2 - 1] + s[n // 2]) // 2\n"}),
    dict(id=31, text="Write a function to compute the square root of x with Newton's method.",
         code=_d("""
            def sqrt_newton(x):
                if x == 0:
                    return 0.0
                g = x
                for _ in range(60):
                    g = (g + x / g) / 2
                return g
         """),
         tests=["assert math.isclose(sqrt_newton(2), 1.4142135623730951, abs_tol=1e-09)",
                "assert math.isclose(sqrt_newton(144), 12.0)", "assert sqrt_newton(0) == 0"],
         imports=["import math"],
         right={"pow": "def sqrt_newton(x):\n    return x ** 0.5\n",
                "math": "import math\ndef sqrt_newton(x):\n    return math.sqrt(x)\n"},
         wrong={"few_steps": "def sqrt_newton(x):\n    g = x or 1.0\n    for _ in range(3):\n        g = (g + x / g) / 2\n"
                             "    return g if x else 0.0\n"}),
    dict(id=32, text="Write a function to parse 'key=value' pairs separated by semicolons into a dict of ints.",
         code=_d("""
            def parse_kv(s):
                out = {}
                for part in s.split(';'):
                    if part.strip():
                        k, v = part.split('=')
                        out[k.strip()] = int(v)
                return out
         """),
         tests=["assert parse_kv('a=1; b=2') == {'a': 1, 'b': 2}", "assert parse_kv('') == {}",
                "assert parse_kv('x=-5;') == {'x': -5}"],
         right={"comprehension": "def parse_kv(s):\n    return {k.strip(): int(v) for k, v in "
                                 "(p.split('=') for p in s.split(';') if p.strip())}\n"},
         wrong={"strings": "def parse_kv(s):\n    return {k.strip(): v.strip() for k, v in "
                           "(p.split('=') for p in s.split(';') if p.strip())}\n"}),
    dict(id=33, text="Write a function to split a list into chunks of size n.",
         code="def chunk(xs, n):\n    return [xs[i:i + n] for i in range(0, len(xs), n)]\n",
         tests=["assert chunk([1, 2, 3, 4, 5], 2) == [[1, 2], [3, 4], [5]]", "assert chunk([], 3) == []",
                "assert chunk(['a', 'b'], 5) == [['a', 'b']]"],
         right={"islice": "from itertools import islice\ndef chunk(xs, n):\n    it = iter(xs)\n"
                          "    return list(iter(lambda: list(islice(it, n)), []))\n"},
         wrong={"generator": "def chunk(xs, n):\n    return (xs[i:i + n] for i in range(0, len(xs), n))\n"}),
    dict(id=34, text="Write a function to check whether the given number is a perfect square.",
         code="import math\ndef is_perfect_square(n):\n    return n >= 0 and math.isqrt(n) ** 2 == n\n",
         tests=["assert is_perfect_square(10) == False", "assert is_perfect_square(36)",
                "assert is_perfect_square(14) is False", "assert is_perfect_square(10 ** 40) is True"],
         right={"bisect": "def is_perfect_square(n):\n    lo, hi = 0, n + 1\n    while lo < hi:\n        mid = (lo + hi) // 2\n"
                          "        if mid * mid < n:\n            lo = mid + 1\n        else:\n            hi = mid\n"
                          "    return lo * lo == n\n"},
         wrong={"float": "def is_perfect_square(n):\n    return int(n ** 0.5) ** 2 == n\n"}),
    dict(id=35, text="Write a function to find the word lengths in a sentence as a dict.",
         code="def word_lengths(s):\n    return {w: len(w) for w in s.split()}\n",
         tests=["assert word_lengths('the quick fox') == {'the': 3, 'quick': 5, 'fox': 3}",
                "assert word_lengths('') == {}", "assert sorted(word_lengths('aa b').items()) == [('aa', 2), ('b', 1)]"],
         right={"ordered": "from collections import OrderedDict\ndef word_lengths(s):\n"
                           "    return OrderedDict((w, len(w)) for w in s.split())\n"},
         wrong={"list": "def word_lengths(s):\n    return [(w, len(w)) for w in s.split()]\n"}),
    dict(id=36, text="Write a function to find the nested list elements which are present in another list.",
         code="def intersection_nested_lists(l1, l2):\n    return [[n for n in lst if n in l1] for lst in l2]\n",
         tests=["assert intersection_nested_lists([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14], "
                "[[12, 18, 23, 25, 45], [7, 11, 19, 24, 28], [1, 5, 8, 18, 15, 16]]) == [[12], [7, 11], [1, 5, 8]]",
                "assert intersection_nested_lists([[2, 3, 1], [4, 5], [6, 8]], [[4, 5], [6, 8]]) == [[], []]",
                "assert intersection_nested_lists(['john', 'amal', 'joel', 'george'], "
                "[['john'], ['jack', 'john', 'mary'], ['howard', 'john'], ['jude']]) == "
                "[['john'], ['john'], ['john'], []]"],
         right={"filter": "def intersection_nested_lists(l1, l2):\n"
                          "    return [list(filter(lambda x: x in l1, sub)) for sub in l2]\n"},
         wrong={"sets": "def intersection_nested_lists(l1, l2):\n"
                        "    return [sorted(set(sub) & set(l1)) for sub in l2]\n"}),
]

# The same tasks' rows alternate between MBPP's full and sanitized shapes (both go through the converter).
_SANITIZED_EVERY = 2


def rows() -> list[dict]:
    """MBPP rows: even ids in the sanitized shape (prompt + test_imports), odd ids in the full one."""
    out = []
    for t in TASKS:
        imports, setup = list(t.get("imports", [])), t.get("setup", "")
        if t["id"] % _SANITIZED_EVERY == 0:
            row = {"task_id": t["id"], "prompt": t["text"], "code": t["code"], "test_list": t["tests"],
                   "test_imports": imports, "source_file": "fidelity"}
            if setup:  # the sanitized release has no setup column: MBPP's tree tasks keep it in the full one
                row["test_setup_code"] = setup
        else:
            row = {"task_id": t["id"], "text": t["text"], "code": t["code"], "test_list": t["tests"],
                   "test_setup_code": "\n".join(imports + [setup]).strip("\n"), "challenge_test_list": []}
        out.append(row)
    return out


def label(row: dict, index: int) -> Label:
    p = mbpp.convert(row, RowContext("mbpp.jsonl", index))
    return Label(format=p.format, tests=tuple(p.tests), entry_point=p.entry_point, setup_code=p.setup_code,
                 source=mbpp.SOURCE, source_id=p.source_id)


def programs(seed: int = 0, every: int = 1, mutants: int = 2, plain: int = 2) -> list[Program]:
    """Every program of the family (every N-th task), each with its task's label."""
    out = []
    names = sorted(PLAIN)
    for i, (task, row) in enumerate(zip(TASKS, rows(), strict=True)):
        if i % every:
            continue
        tid = f"mbpp/{task['id']}"
        lb = label(row, i)
        code = task["code"]
        items: list[tuple[str, str, bool | None]] = [("canonical", code, True)]
        items += [(f"alt:{k}", v, True) for k, v in task.get("right", {}).items()]
        items += [(f"bug:{k}", v, None) for k, v in task.get("wrong", {}).items()]
        items += ast_mutants(ast.parse(code), lambda kind, tid=tid: random.Random(f"{seed}:{tid}:{kind}"), mutants)
        for k in range(plain):  # the HumanEval corpus's plain-Python wrappers, rotated over the tasks
            name = names[(i * plain + k) % len(names)]
            items.append((f"plain:{name}", wrap(code, lb.entry_point, PLAIN[name]), PLAIN[name].correct))
        out += numbered(tid, items, lb)
    return out

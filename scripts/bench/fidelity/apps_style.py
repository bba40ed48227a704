"""APPS/TACO-style fidelity family: standard-input programs and call-based (`fn_name`) problems.

Rows have APPS/TACO's columns (question, solutions, input_output JSON, starter_code) and become labels
through the preprocessor's converter (data/formats/apps_taco.py): `stdio` without `fn_name`, `call` with
it (expected values wrapped in one-element lists, as APPS stores them). The reference executor gets the
raw `input_output` and judges it the way APPS/TACO's testing_util does (scripts/bench/fidelity/reference.py):
stdio programs run as a plain `python prog.py` subprocess; call programs are imported after TACO's
import prelude and `Solution().<fn_name>(*inputs)` (or the module-level function) is compared with `==`.

What the programs exercise: `input()`, `sys.stdin.readline`, `sys.stdin.read()`, `sys.stdin.buffer`,
`open(0)`, iteration over `sys.stdin`, reading until EOFError, `print` with `sep`/`end`/`*args`,
`sys.stdout.write`, trailing whitespace, floats printed at another precision, `exit()` / `sys.exit(0)` /
`quit()` / `raise SystemExit` / `exit(print(...))`, deep recursion in a thread with a big stack, outputs
larger than the default capture limit; LeetCode `class Solution` (with `List[int]` annotations and no
import, which TACO's prelude provides), codewars-style module functions, tuples for lists, floats,
booleans.
"""

from __future__ import annotations

import ast
import json
import random
from itertools import accumulate

from coderl.data.formats import RowContext, apps_taco
from coderl.rewards.labels import Label
from scripts.bench.fidelity.corpus import Program, ast_mutants, numbered
from scripts.bench.fidelity.corpus import dedent as _d

TASKS: list[dict] = []


def stdio(name: str, question: str, code: str, tests: list[tuple[str, str]], right=None, wrong=None) -> None:
    TASKS.append(dict(name=name, question=question, code=_d(code),
                      io={"inputs": [i for i, _ in tests], "outputs": [o for _, o in tests]},
                      right={k: _d(v) for k, v in (right or {}).items()},
                      wrong={k: _d(v) for k, v in (wrong or {}).items()}))


def call(name: str, question: str, code: str, fn_name: str, tests: list[tuple[list, object]], starter="",
         right=None, wrong=None) -> None:
    # APPS stores every expected return value wrapped in a one-element list.
    TASKS.append(dict(name=name, question=question, code=_d(code), starter=starter,
                      io={"fn_name": fn_name, "inputs": [i for i, _ in tests], "outputs": [[o] for _, o in tests]},
                      right={k: _d(v) for k, v in (right or {}).items()},
                      wrong={k: _d(v) for k, v in (wrong or {}).items()}))


# ------------------------------------------------------------------------------------------ stdio

stdio("a_plus_b", "Read two integers and print their sum.", """
    a, b = map(int, input().split())
    print(a + b)
""", [("1 2\n", "3\n"), ("-5 5\n", "0\n"), ("1000000000 1000000000\n", "2000000000\n")], right={
    "readline": "import sys\na, b = map(int, sys.stdin.readline().split())\nsys.stdout.write(str(a + b) + '\\n')\n",
    "read_all": "import sys\nprint(sum(map(int, sys.stdin.read().split())))\n",
    "open0": "print(sum(int(x) for x in open(0).read().split()))\n",
    "buffer": "import sys\nprint(sum(map(int, sys.stdin.buffer.read().split())))\n",
    "main_guard": "def main():\n    a, b = map(int, input().split())\n    print(a + b)\n\n\nif __name__ == '__main__':\n    main()\n",
}, wrong={"concat": "a, b = input().split()\nprint(a + b)\n"})

stdio("max_per_case", "T test cases: each gives n and n integers; print the maximum of each.", """
    t = int(input())
    for _ in range(t):
        n = int(input())
        arr = list(map(int, input().split()))
        print(max(arr))
""", [("2\n3\n1 5 2\n1\n-7\n", "5\n-7\n"), ("1\n4\n4 4 4 4\n", "4\n"),
      ("3\n2\n1 2\n2\n2 1\n3\n0 0 0\n", "2\n2\n0\n")], right={
    "joined": _d("""
        import sys
        data = sys.stdin.read().split()
        t, pos, out = int(data[0]), 1, []
        for _ in range(t):
            n = int(data[pos])
            out.append(max(map(int, data[pos + 1:pos + 1 + n])))
            pos += 1 + n
        print("\\n".join(map(str, out)))
    """),
    "input_alias": _d("""
        import sys
        input = sys.stdin.readline
        for _ in range(int(input())):
            input()
            print(max(map(int, input().split())))
    """),
    "write_end": _d("""
        import sys
        t = int(input())
        res = []
        for _ in range(t):
            input()
            res.append(max(int(x) for x in input().split()))
        sys.stdout.write("\\n".join(map(str, res)))
    """),
}, wrong={"min": "t = int(input())\nfor _ in range(t):\n    input()\n    print(min(map(int, input().split())))\n"})

stdio("circle_area", "Given the radius r, print the area of the circle with 6 digits after the decimal point.", """
    import math
    r = float(input())
    print(f"{math.pi * r * r:.6f}")
""", [("1\n", "3.141593\n"), ("2.5\n", "19.634954\n"), ("0\n", "0.000000\n")], right={
    "repr": "import math\nr = float(input())\nprint(math.pi * r * r)\n",
    "more_digits": "import math\nprint('%.10f' % (math.pi * float(input()) ** 2))\n",
    "round": "from math import pi\nr = float(input())\nprint(round(pi * r ** 2, 6))\n",
}, wrong={"two_digits": "import math\nr = float(input())\nprint('%.2f' % (math.pi * r * r))\n",
          "int": "import math\nprint(int(math.pi * float(input()) ** 2))\n"})

stdio("palindromes", "For each of the T strings print YES if it is a palindrome and NO otherwise.", """
    t = int(input())
    for _ in range(t):
        s = input().strip()
        print("YES" if s == s[::-1] else "NO")
""", [("3\nabba\nabc\nx\n", "YES\nNO\nYES\n"), ("2\nab\naa\n", "NO\nYES\n"), ("1\nracecar\n", "YES\n")], right={
    "loop": _d("""
        def is_pal(s):
            i, j = 0, len(s) - 1
            while i < j:
                if s[i] != s[j]:
                    return False
                i += 1
                j -= 1
            return True
        for _ in range(int(input())):
            print(["NO", "YES"][is_pal(input().strip())])
    """),
}, wrong={"lower": "for _ in range(int(input())):\n    s = input()\n    print('yes' if s == s[::-1] else 'no')\n"})

stdio("count_hash", "Given an n x m grid of '.' and '#', print the number of '#' in each row, then the total.", """
    n, m = map(int, input().split())
    total = 0
    for _ in range(n):
        row = input()
        c = row.count("#")
        total += c
        print(c)
    print(total)
""", [("2 3\n#.#\n...\n", "2\n0\n2\n"), ("1 1\n#\n", "1\n1\n"), ("3 2\n##\n#.\n.#\n", "2\n1\n1\n4\n")], right={
    "lines": _d("""
        import sys
        lines = sys.stdin.read().splitlines()
        counts = [line.count("#") for line in lines[1:]]
        print(*counts, sep="\\n")
        print(sum(counts))
    """),
}, wrong={"total_first": _d("""
    n, m = map(int, input().split())
    rows = [input() for _ in range(n)]
    print(sum(r.count("#") for r in rows))
    for r in rows:
        print(r.count("#"))
""")})

stdio("sorted_list", "Read n and n integers; print them sorted, separated by spaces.", """
    n = int(input())
    a = sorted(map(int, input().split()))
    print(*a)
""", [("5\n3 1 2 5 4\n", "1 2 3 4 5\n"), ("1\n42\n", "42\n"), ("3\n-1 -3 -2\n", "-3 -2 -1\n")], right={
    "join": "input()\nprint(' '.join(map(str, sorted(map(int, input().split())))))\n",
    "trailing_space": "input()\nfor x in sorted(map(int, input().split())):\n    print(x, end=' ')\nprint()\n",
    "no_newline": "import sys\ninput()\nsys.stdout.write(' '.join(str(x) for x in sorted(int(v) for v in input().split())))\n",
    "double_space": "input()\nprint('  '.join(map(str, sorted(map(int, input().split())))))\n",
}, wrong={"brackets": "input()\nprint(sorted(map(int, input().split())))\n",
          "lexicographic": "input()\nprint(*sorted(input().split()))\n"})

stdio("early_exit", "Print -1 if the list has no even number; otherwise print the first even number.", """
    n = int(input())
    a = list(map(int, input().split()))
    for x in a:
        if x % 2 == 0:
            print(x)
            exit()
    print(-1)
""", [("3\n1 3 5\n", "-1\n"), ("4\n1 4 6 7\n", "4\n"), ("1\n2\n", "2\n")], right={
    "sys_exit": "import sys\ninput()\nfor x in map(int, input().split()):\n    if x % 2 == 0:\n        print(x)\n        sys.exit(0)\nprint(-1)\n",
    "quit": "input()\nfor x in map(int, input().split()):\n    if x % 2 == 0:\n        print(x)\n        quit()\nprint(-1)\n",
    "raise": "input()\nfor x in map(int, input().split()):\n    if not x % 2:\n        print(x)\n        raise SystemExit\nprint(-1)\n",
    "exit_print": "input()\na = [int(x) for x in input().split() if int(x) % 2 == 0]\nif not a:\n    exit(print(-1))\nprint(a[0])\n",
    "sys_exit_none": "import sys\ninput()\nev = [x for x in map(int, input().split()) if x % 2 == 0]\nprint(ev[0] if ev else -1)\nsys.exit()\n",
}, wrong={"exit_one": "import sys\ninput()\nfor x in map(int, input().split()):\n    if x % 2 == 0:\n        print(x)\n        sys.exit(1)\nprint(-1)\n",
          "exit_message": "import sys\ninput()\nfor x in map(int, input().split()):\n    if x % 2 == 0:\n        sys.exit(str(x))\nprint(-1)\n"})

stdio("tree_depth", "A rooted tree with n nodes (root 1) is given by n-1 edges; print its height in edges.", """
    import sys
    import threading


    def main():
        data = sys.stdin.read().split()
        n = int(data[0])
        adj = [[] for _ in range(n + 1)]
        for i in range(n - 1):
            u, v = int(data[1 + 2 * i]), int(data[2 + 2 * i])
            adj[u].append(v)
            adj[v].append(u)

        def dfs(u, parent):
            best = 0
            for w in adj[u]:
                if w != parent:
                    best = max(best, 1 + dfs(w, u))
            return best

        print(dfs(1, 0))


    sys.setrecursionlimit(1 << 20)
    threading.stack_size(1 << 26)
    t = threading.Thread(target=main)
    t.start()
    t.join()
""", [("3\n1 2\n1 3\n", "1\n"), ("1\n", "0\n"),
      ("6000\n" + "".join(f"{i} {i + 1}\n" for i in range(1, 6000)), "5999\n")], right={
    "iterative": _d("""
        import sys
        from collections import deque
        data = list(map(int, sys.stdin.read().split()))
        n = data[0]
        adj = [[] for _ in range(n + 1)]
        for i in range(n - 1):
            u, v = data[1 + 2 * i], data[2 + 2 * i]
            adj[u].append(v)
            adj[v].append(u)
        depth = [-1] * (n + 1)
        depth[1] = 0
        q = deque([1])
        while q:
            u = q.popleft()
            for w in adj[u]:
                if depth[w] < 0:
                    depth[w] = depth[u] + 1
                    q.append(w)
        print(max(depth[1:]))
    """),
}, wrong={"nodes": _d("""
    import sys
    sys.setrecursionlimit(100000)
    data = sys.stdin.read().split()
    n = int(data[0])
    adj = [[] for _ in range(n + 1)]
    for i in range(n - 1):
        u, v = int(data[1 + 2 * i]), int(data[2 + 2 * i])
        adj[u].append(v)
        adj[v].append(u)
    def dfs(u, p):
        return 1 + max((dfs(w, u) for w in adj[u] if w != p), default=0)
    print(dfs(1, 0))
""")})

stdio("until_eof", "Read lines until end of input; print each line's word count.", """
    while True:
        try:
            line = input()
        except EOFError:
            break
        print(len(line.split()))
""", [("hello world\na b c\n\n", "2\n3\n0\n"), ("one\n", "1\n"), ("x y\nz", "2\n1\n")], right={
    "for_stdin": "import sys\nfor line in sys.stdin:\n    print(len(line.split()))\n",
    "readlines": "import sys\nprint('\\n'.join(str(len(l.split())) for l in sys.stdin.readlines()))\n",
}, wrong={"skip_empty": "import sys\nfor line in sys.stdin:\n    if line.strip():\n        print(len(line.split()))\n"})

stdio("prefix_sums", "Read n and n integers; print the n prefix sums, one per line.", """
    import sys
    data = sys.stdin.buffer.read().split()
    n = int(data[0])
    s = 0
    out = []
    for x in data[1:n + 1]:
        s += int(x)
        out.append(s)
    sys.stdout.write("\\n".join(map(str, out)) + "\\n")
""", [("3\n1 2 3\n", "1\n3\n6\n"), ("1\n-5\n", "-5\n"),
      ("20000\n" + " ".join(str(i % 97) for i in range(20000)) + "\n",
       "".join(f"{s}\n" for s in accumulate(i % 97 for i in range(20000))))], right={
    "accumulate": "from itertools import accumulate\nn = int(input())\nprint(*accumulate(map(int, input().split())), sep='\\n')\n",
}, wrong={"off_by_one": "import sys\nd = sys.stdin.read().split()\ns = 0\nfor x in d[1:]:\n    print(s)\n    s += int(x)\n"})

stdio("coordinates", "Given two points, print the midpoint coordinates and the distance, 6 decimals.", """
    x1, y1, x2, y2 = map(float, input().split())
    print("%.6f %.6f" % ((x1 + x2) / 2, (y1 + y2) / 2))
    print("%.6f" % (((x1 - x2) ** 2 + (y1 - y2) ** 2) ** 0.5))
""", [("0 0 3 4\n", "1.500000 2.000000\n5.000000\n"), ("1 1 1 1\n", "1.000000 1.000000\n0.000000\n"),
      ("-1 2 2 -2\n", "0.500000 0.000000\n5.000000\n")], right={
    "plain_print": "import math\nx1, y1, x2, y2 = map(float, input().split())\nprint((x1 + x2) / 2, (y1 + y2) / 2)\n"
                   "print(math.hypot(x1 - x2, y1 - y2))\n",
}, wrong={"swapped": "x1, y1, x2, y2 = map(float, input().split())\nprint('%.6f %.6f' % ((y1 + y2) / 2, (x1 + x2) / 2))\n"
                     "print('%.6f' % (((x1 - x2) ** 2 + (y1 - y2) ** 2) ** 0.5))\n"})

stdio("matrix_rotate", "Read an n x n matrix and print it rotated 90 degrees clockwise.", """
    n = int(input())
    m = [input().split() for _ in range(n)]
    for row in zip(*m[::-1]):
        print(" ".join(row))
""", [("2\n1 2\n3 4\n", "3 1\n4 2\n"), ("1\n9\n", "9\n"), ("3\n1 2 3\n4 5 6\n7 8 9\n", "7 4 1\n8 5 2\n9 6 3\n")],
    right={"indices": "n = int(input())\nm = [input().split() for _ in range(n)]\nfor j in range(n):\n"
                      "    print(*[m[n - 1 - i][j] for i in range(n)])\n"},
    wrong={"counter": "n = int(input())\nm = [input().split() for _ in range(n)]\nfor row in list(zip(*m))[::-1]:\n"
                      "    print(' '.join(row))\n"})

stdio("fizzbuzz", "Print FizzBuzz for 1..n.", """
    n = int(input())
    for i in range(1, n + 1):
        print("FizzBuzz" if i % 15 == 0 else "Fizz" if i % 3 == 0 else "Buzz" if i % 5 == 0 else i)
""", [("5\n", "1\n2\nFizz\n4\nBuzz\n"), ("15\n", "1\n2\nFizz\n4\nBuzz\nFizz\n7\n8\nFizz\nBuzz\n11\nFizz\n13\n14\nFizzBuzz\n"),
      ("1\n", "1\n")], right={
    "crlf": "import sys\nn = int(input())\nfor i in range(1, n + 1):\n"
            "    sys.stdout.write((('Fizz' * (i % 3 == 0) + 'Buzz' * (i % 5 == 0)) or str(i)) + '\\r\\n')\n",
    "leading_blank": "n = int(input())\nprint()\nfor i in range(1, n + 1):\n"
                     "    print(('Fizz' * (i % 3 == 0) + 'Buzz' * (i % 5 == 0)) or i)\n",
}, wrong={"buzz_first": "n = int(input())\nfor i in range(1, n + 1):\n"
                        "    print('Buzz' if i % 5 == 0 else 'Fizz' if i % 3 == 0 else i)\n"})

stdio("gcd_lcm", "For each pair a b print gcd and lcm.", """
    from math import gcd
    t = int(input())
    for _ in range(t):
        a, b = map(int, input().split())
        g = gcd(a, b)
        print(g, a * b // g)
""", [("2\n4 6\n7 13\n", "2 12\n1 91\n"), ("1\n10 10\n", "10 10\n"),
      ("1\n123456789012 987654321098\n", "2 60966315568292943087588\n")], right={
    "euclid": _d("""
        def g(a, b):
            while b:
                a, b = b, a % b
            return a
        for _ in range(int(input())):
            a, b = map(int, input().split())
            print(g(a, b), end=" ")
            print(a // g(a, b) * b)
    """),
}, wrong={"float_lcm": "from math import gcd\nfor _ in range(int(input())):\n    a, b = map(int, input().split())\n"
                       "    print(gcd(a, b), int(a * b / gcd(a, b)))\n"})

stdio("string_compress", "Compress a string by run lengths: aaabcc -> a3b1c2.", """
    s = input().strip()
    out = []
    i = 0
    while i < len(s):
        j = i
        while j < len(s) and s[j] == s[i]:
            j += 1
        out.append(s[i] + str(j - i))
        i = j
    print("".join(out))
""", [("aaabcc\n", "a3b1c2\n"), ("z\n", "z1\n"), ("abab\n", "a1b1a1b1\n")], right={
    "groupby": "from itertools import groupby\nprint(''.join(k + str(len(list(g))) for k, g in groupby(input().strip())))\n",
}, wrong={"counter": "from collections import Counter\nprint(''.join(k + str(v) for k, v in Counter(input().strip()).items()))\n"})

stdio("interactive_style", "Read q queries 'add x' / 'sum'; print the running sum for each 'sum' query.", """
    import sys
    q = int(sys.stdin.readline())
    total = 0
    for _ in range(q):
        parts = sys.stdin.readline().split()
        if parts[0] == "add":
            total += int(parts[1])
        else:
            print(total, flush=True)
""", [("4\nadd 5\nsum\nadd -2\nsum\n", "5\n3\n"), ("1\nsum\n", "0\n"), ("3\nadd 1\nadd 2\nadd 3\n", "")], right={
    "stdout_buffer": _d("""
        import sys
        lines = sys.stdin.read().split("\\n")
        total, out = 0, []
        for line in lines[1:int(lines[0]) + 1]:
            cmd = line.split()
            if cmd[0] == "add":
                total += int(cmd[1])
            else:
                out.append(str(total))
        sys.stdout.buffer.write(("\\n".join(out) + ("\\n" if out else "")).encode())
    """),
}, wrong={"print_all": "import sys\nq = int(input())\nt = 0\nfor _ in range(q):\n    p = input().split()\n"
                       "    if p[0] == 'add':\n        t += int(p[1])\n    print(t)\n"})

# ------------------------------------------------------------------------------------------ call

call("two_sum", "LeetCode 1: return indices of the two numbers adding up to target.", """
    class Solution:
        def twoSum(self, nums: List[int], target: int) -> List[int]:
            seen = {}
            for i, n in enumerate(nums):
                if target - n in seen:
                    return [seen[target - n], i]
                seen[n] = i
            return []
""", "twoSum", [([[2, 7, 11, 15], 9], [0, 1]), ([[3, 2, 4], 6], [1, 2]), ([[3, 3], 6], [0, 1])],
    starter="class Solution:\n    def twoSum(self, nums: List[int], target: int) -> List[int]:\n        ",
    right={"typing_import": """
        from typing import List
        class Solution:
            def twoSum(self, nums: List[int], target: int) -> List[int]:
                for i in range(len(nums)):
                    for j in range(i + 1, len(nums)):
                        if nums[i] + nums[j] == target:
                            return [i, j]
    """, "tuple": """
        class Solution:
            def twoSum(self, nums, target):
                pos = {}
                for i, n in enumerate(nums):
                    if target - n in pos:
                        return pos[target - n], i
                    pos[n] = i
    """}, wrong={"reversed": """
        class Solution:
            def twoSum(self, nums, target):
                seen = {}
                for i, n in enumerate(nums):
                    if target - n in seen:
                        return [i, seen[target - n]]
                    seen[n] = i
    """})

call("sum_two_smallest", "Codewars: return the sum of the two lowest positive numbers.", """
    def sum_two_smallest_numbers(numbers):
        a, b = sorted(numbers)[:2]
        return a + b
""", "sum_two_smallest_numbers", [([[19, 5, 42, 2, 77]], 7), ([[10, 343445353, 3453445, 3453545353453]], 3453455),
                                  ([[2, 9, 6, -1]], 1)],
    right={"heapq": "import heapq\ndef sum_two_smallest_numbers(numbers):\n    return sum(heapq.nsmallest(2, numbers))\n",
           "no_import": "def sum_two_smallest_numbers(numbers):\n    return sum(nsmallest(2, numbers))\n"},
    wrong={"largest": "def sum_two_smallest_numbers(numbers):\n    return sum(sorted(numbers)[-2:])\n"})

call("average", "Return the average of a list of numbers (0 for an empty list).", """
    def find_average(nums):
        return sum(nums) / len(nums) if nums else 0
""", "find_average", [([[1, 2, 3]], 2), ([[1, 2]], 1.5), ([[]], 0), ([[0.1, 0.2, 0.3]], 0.2)],
    right={"fsum": "import math\ndef find_average(nums):\n    return math.fsum(nums) / len(nums) if nums else 0\n",
           "statistics": "import statistics\ndef find_average(nums):\n    return statistics.fmean(nums) if nums else 0\n"},
    wrong={"int": "def find_average(nums):\n    return sum(nums) // len(nums) if nums else 0\n"})

call("is_isogram", "Return True if no letter repeats (case-insensitive).", """
    def is_isogram(string):
        s = string.lower()
        return len(set(s)) == len(s)
""", "is_isogram", [(["Dermatoglyphics"], True), (["aba"], False), (["moOse"], False), ([""], True)],
    right={"loop": "def is_isogram(string):\n    seen = set()\n    for c in string.lower():\n        if c in seen:\n"
                   "            return False\n        seen.add(c)\n    return True\n",
           "counter": "def is_isogram(string):\n    return max(Counter(string.lower()).values(), default=0) <= 1\n"},
    wrong={"case": "def is_isogram(string):\n    return len(set(string)) == len(string)\n",
           "int_bool": "def is_isogram(string):\n    s = string.lower()\n    return int(len(set(s)) == len(s))\n"})

call("pairs_list", "Return the list of [i, j] index pairs (i < j) whose values are equal.", """
    class Solution:
        def equalPairs(self, nums):
            out = []
            for i in range(len(nums)):
                for j in range(i + 1, len(nums)):
                    if nums[i] == nums[j]:
                        out.append([i, j])
            return out
""", "equalPairs", [([[1, 2, 1, 2]], [[0, 2], [1, 3]]), ([[5]], []), ([[7, 7, 7]], [[0, 1], [0, 2], [1, 2]])],
    right={"tuples": """
        from itertools import combinations
        class Solution:
            def equalPairs(self, nums):
                return [(i, j) for i, j in combinations(range(len(nums)), 2) if nums[i] == nums[j]]
    """}, wrong={"unordered": """
        class Solution:
            def equalPairs(self, nums):
                pos = {}
                for i, v in enumerate(nums):
                    pos.setdefault(v, []).append(i)
                return [[i, j] for v in sorted(pos, reverse=True) for a, i in enumerate(pos[v]) for j in pos[v][a + 1:]]
    """})

call("word_counts", "Return a dict mapping each word to its count.", """
    def count_words(text):
        counts = {}
        for w in text.split():
            counts[w] = counts.get(w, 0) + 1
        return counts
""", "count_words", [(["a b a"], {"a": 2, "b": 1}), ([""], {}), (["x x x"], {"x": 3})],
    right={"counter": "from collections import Counter\ndef count_words(text):\n    return dict(Counter(text.split()))\n"},
    wrong={"list": "def count_words(text):\n    w = text.split()\n    return sorted((x, w.count(x)) for x in set(w))\n"})

call("climb_stairs", "LeetCode 70: number of ways to climb n stairs taking 1 or 2 steps.", """
    class Solution:
        @lru_cache(None)
        def climbStairs(self, n: int) -> int:
            if n <= 2:
                return n
            return self.climbStairs(n - 1) + self.climbStairs(n - 2)
""", "climbStairs", [([2], 2), ([3], 3), ([45], 1836311903), ([1], 1)],
    starter="class Solution:\n    def climbStairs(self, n: int) -> int:\n        ",
    right={"loop": """
        class Solution:
            def climbStairs(self, n):
                a, b = 1, 1
                for _ in range(n):
                    a, b = b, a + b
                return a
    """}, wrong={"fib_offset": """
        class Solution:
            def climbStairs(self, n):
                a, b = 0, 1
                for _ in range(n):
                    a, b = b, a + b
                return a
    """})

call("nested_result", "Return [min, max] of each row of a matrix.", """
    def row_bounds(matrix):
        return [[min(r), max(r)] for r in matrix]
""", "row_bounds", [([[[1, 5, 3], [4, 2]]], [[1, 5], [2, 4]]), ([[[7]]], [[7, 7]]), ([[]], [])],
    right={"tuples": "def row_bounds(matrix):\n    return [(min(r), max(r)) for r in matrix]\n"},
    wrong={"swap": "def row_bounds(matrix):\n    return [[max(r), min(r)] for r in matrix]\n"})


def rows() -> list[dict]:
    """APPS/TACO rows (question, solutions JSON, input_output JSON, starter_code)."""
    return [{"problem_id": f"apps/{t['name']}", "question": t["question"], "solutions": json.dumps([t["code"]]),
             "input_output": json.dumps(t["io"]), "starter_code": t.get("starter", "")} for t in TASKS]


def label(row: dict, index: int) -> Label:
    p = apps_taco.convert(row, RowContext("apps.jsonl", index))
    return Label(format=p.format, tests=tuple(p.tests), entry_point=p.entry_point, source=apps_taco.SOURCE,
                 source_id=p.source_id)


def programs(seed: int = 0, every: int = 1, mutants: int = 2) -> list[Program]:
    """Every program of the family (every N-th task); the reference reads the raw `input_output`."""
    out = []
    for i, (t, row) in enumerate(zip(TASKS, rows(), strict=True)):
        if i % every:
            continue
        tid = row["problem_id"]
        items: list[tuple[str, str, bool | None]] = [("canonical", t["code"], True)]
        items += [(f"alt:{k}", v, True) for k, v in t["right"].items()]
        items += [(f"bug:{k}", v, None) for k, v in t["wrong"].items()]
        items += ast_mutants(ast.parse(t["code"]), lambda kind, tid=tid: random.Random(f"{seed}:{tid}:{kind}"), mutants)
        out += numbered(tid, items, label(row, i), {"apps": t["io"]})
    return out

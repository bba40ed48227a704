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
(`bug:*`, verdict left to the reference) and one seeded AST mutant of each kind (tests/rewards/sandbox/
fidelity/corpus.py). Rows go through the preprocessor's converters (data/formats/), as in the other families.
"""

from __future__ import annotations

from scripts.bench.fidelity.written import WrittenFamily

FAMILY = WrittenFamily("heldout")
TASKS, ut, asserts, check, stdio, call = (FAMILY.tasks, FAMILY.ut, FAMILY.asserts, FAMILY.check, FAMILY.stdio,
                                          FAMILY.call)


# ------------------------------------------------------------------------------------------ unittest

ut("fizzbuzz_print", """
    def fizzbuzz(n):
        for i in range(1, n + 1):
            if i % 15 == 0:
                print("FizzBuzz")
            elif i % 3 == 0:
                print("Fizz")
            elif i % 5 == 0:
                print("Buzz")
            else:
                print(i)
""", """
    import io
    import unittest
    from unittest.mock import patch
    from solution import fizzbuzz


    class TestFizzBuzz(unittest.TestCase):
        @patch('sys.stdout', new_callable=io.StringIO)
        def test_first_fifteen(self, mock_stdout):
            fizzbuzz(15)
            lines = mock_stdout.getvalue().strip().split('\\n')
            self.assertEqual(len(lines), 15)
            self.assertEqual(lines[2], 'Fizz')
            self.assertEqual(lines[4], 'Buzz')
            self.assertEqual(lines[-1], 'FizzBuzz')

        @patch('sys.stdout', new_callable=io.StringIO)
        def test_one(self, mock_stdout):
            fizzbuzz(1)
            self.assertEqual(mock_stdout.getvalue(), '1\\n')

        def test_zero_prints_nothing(self):
            with patch('sys.stdout', new=io.StringIO()) as fake_out:
                fizzbuzz(0)
                self.assertEqual(fake_out.getvalue(), '')

        def test_returns_none(self):
            with patch('sys.stdout', new_callable=io.StringIO):
                self.assertIsNone(fizzbuzz(3))


    if __name__ == '__main__':
        unittest.main()
""", right={"join": """
    def fizzbuzz(n):
        out = []
        for i in range(1, n + 1):
            s = ("Fizz" if i % 3 == 0 else "") + ("Buzz" if i % 5 == 0 else "")
            out.append(s or str(i))
        if out:
            print("\\n".join(out))
"""}, wrong={"off_by_one": """
    def fizzbuzz(n):
        for i in range(1, n):
            if i % 15 == 0:
                print("FizzBuzz")
            elif i % 3 == 0:
                print("Fizz")
            elif i % 5 == 0:
                print("Buzz")
            else:
                print(i)
""", "returns": """
    def fizzbuzz(n):
        out = []
        for i in range(1, n + 1):
            out.append("FizzBuzz" if i % 15 == 0 else "Fizz" if i % 3 == 0 else "Buzz" if i % 5 == 0 else str(i))
        return out
"""})

ut("greet_input", """
    def main():
        name = input("Enter your name: ").strip()
        if not name:
            print("Hello, stranger!")
        else:
            print(f"Hello, {name.title()}!")
""", """
    import unittest
    from unittest.mock import patch
    from solution import main


    class TestGreeting(unittest.TestCase):
        @patch('builtins.print')
        @patch('builtins.input', return_value='alice')
        def test_greets_by_name(self, mock_input, mock_print):
            main()
            mock_input.assert_called_once_with("Enter your name: ")
            mock_print.assert_called_once_with("Hello, Alice!")

        @patch('builtins.print')
        @patch('builtins.input', return_value='   ')
        def test_blank_name(self, mock_input, mock_print):
            main()
            mock_print.assert_called_with("Hello, stranger!")

        @patch('builtins.input', side_effect=['bob smith'])
        def test_title_case(self, _):
            with patch('builtins.print') as p:
                main()
            args, kwargs = p.call_args
            self.assertEqual(args[0], "Hello, Bob Smith!")
            self.assertEqual(kwargs, {})


    if __name__ == '__main__':
        unittest.main()
""", wrong={"no_strip": """
    def main():
        name = input("Enter your name: ")
        if not name:
            print("Hello, stranger!")
        else:
            print(f"Hello, {name.title()}!")
""", "capitalize": """
    def main():
        name = input("Enter your name: ").strip()
        print(f"Hello, {name.capitalize()}!" if name else "Hello, stranger!")
""", "no_prompt": """
    def main():
        name = input().strip()
        print(f"Hello, {name.title()}!" if name else "Hello, stranger!")
"""})

ut("stack_custom_error", """
    class StackEmptyError(Exception):
        pass


    class Stack:
        def __init__(self):
            self._items = []

        def push(self, item):
            self._items.append(item)

        def pop(self):
            if not self._items:
                raise StackEmptyError("pop from empty stack")
            return self._items.pop()

        def peek(self):
            if not self._items:
                raise StackEmptyError("peek from empty stack")
            return self._items[-1]

        def is_empty(self):
            return len(self._items) == 0

        def size(self):
            return len(self._items)

        def __len__(self):
            return len(self._items)
""", """
    import unittest
    from solution import Stack, StackEmptyError


    class TestStack(unittest.TestCase):
        def setUp(self):
            self.stack = Stack()

        def test_new_stack_is_empty(self):
            self.assertTrue(self.stack.is_empty())
            self.assertEqual(self.stack.size(), 0)
            self.assertEqual(len(self.stack), 0)

        def test_push_pop_order(self):
            for x in [1, 2, 3]:
                self.stack.push(x)
            self.assertEqual(self.stack.pop(), 3)
            self.assertEqual(self.stack.pop(), 2)
            self.assertEqual(self.stack.size(), 1)

        def test_peek_does_not_remove(self):
            self.stack.push('a')
            self.assertEqual(self.stack.peek(), 'a')
            self.assertEqual(len(self.stack), 1)

        def test_pop_empty_raises(self):
            with self.assertRaises(StackEmptyError) as cm:
                self.stack.pop()
            self.assertEqual(str(cm.exception), "pop from empty stack")

        def test_peek_empty_raises_message(self):
            with self.assertRaisesRegex(StackEmptyError, "peek"):
                self.stack.peek()

        def test_error_is_exception(self):
            self.assertTrue(issubclass(StackEmptyError, Exception))

        def test_push_none(self):
            self.stack.push(None)
            self.assertFalse(self.stack.is_empty())
            self.assertIsNone(self.stack.pop())


    if __name__ == '__main__':
        unittest.main()
""", wrong={"index_error": """
    class StackEmptyError(Exception):
        pass


    class Stack:
        def __init__(self):
            self._items = []

        def push(self, item):
            self._items.append(item)

        def pop(self):
            return self._items.pop()

        def peek(self):
            return self._items[-1]

        def is_empty(self):
            return not self._items

        def size(self):
            return len(self._items)

        def __len__(self):
            return len(self._items)
""", "fifo": """
    class StackEmptyError(Exception):
        pass


    class Stack:
        def __init__(self):
            self._items = []

        def push(self, item):
            self._items.append(item)

        def pop(self):
            if not self._items:
                raise StackEmptyError("pop from empty stack")
            return self._items.pop(0)

        def peek(self):
            if not self._items:
                raise StackEmptyError("peek from empty stack")
            return self._items[0]

        def is_empty(self):
            return not self._items

        def size(self):
            return len(self._items)

        def __len__(self):
            return len(self._items)
""", "message": """
    class StackEmptyError(Exception):
        pass


    class Stack:
        def __init__(self):
            self._items = []

        def push(self, item):
            self._items.append(item)

        def pop(self):
            if not self._items:
                raise StackEmptyError("stack is empty")
            return self._items.pop()

        def peek(self):
            if not self._items:
                raise StackEmptyError("stack is empty")
            return self._items[-1]

        def is_empty(self):
            return not self._items

        def size(self):
            return len(self._items)

        def __len__(self):
            return len(self._items)
"""})

ut("bank_account", """
    class InsufficientFundsError(Exception):
        def __init__(self, balance, amount):
            super().__init__(f"Cannot withdraw {amount}: balance is {balance}")
            self.balance = balance
            self.amount = amount


    class BankAccount:
        interest_rate = 0.02

        def __init__(self, owner, balance=0.0):
            if balance < 0:
                raise ValueError("Initial balance must be non-negative")
            self.owner = owner
            self._balance = balance
            self.transactions = []

        @property
        def balance(self):
            return self._balance

        def deposit(self, amount):
            if amount <= 0:
                raise ValueError("Deposit amount must be positive")
            self._balance += amount
            self.transactions.append(("deposit", amount))
            return self._balance

        def withdraw(self, amount):
            if amount <= 0:
                raise ValueError("Withdrawal amount must be positive")
            if amount > self._balance:
                raise InsufficientFundsError(self._balance, amount)
            self._balance -= amount
            self.transactions.append(("withdraw", amount))
            return self._balance

        def apply_interest(self):
            self._balance += self._balance * self.interest_rate
            return self._balance
""", """
    import unittest
    from solution import *


    class TestBankAccount(unittest.TestCase):
        @classmethod
        def setUpClass(cls):
            cls.owner = "Jane Doe"

        def setUp(self):
            self.account = BankAccount(self.owner, 100.0)

        def test_initial_state(self):
            self.assertEqual(self.account.owner, "Jane Doe")
            self.assertEqual(self.account.balance, 100.0)
            self.assertListEqual(self.account.transactions, [])

        def test_deposit(self):
            new_balance = self.account.deposit(50)
            self.assertEqual(new_balance, 150.0)
            self.assertEqual(self.account.transactions[-1], ("deposit", 50))

        def test_withdraw(self):
            self.account.withdraw(30)
            self.assertEqual(self.account.balance, 70.0)

        def test_overdraw(self):
            with self.assertRaises(InsufficientFundsError) as context:
                self.account.withdraw(500)
            self.assertEqual(context.exception.amount, 500)
            self.assertEqual(context.exception.balance, 100.0)
            self.assertIn("Cannot withdraw", str(context.exception))
            self.assertEqual(self.account.balance, 100.0)

        def test_invalid_amounts(self):
            for bad in (0, -5, -0.01):
                with self.subTest(amount=bad):
                    with self.assertRaisesRegex(ValueError, "must be positive"):
                        self.account.deposit(bad)
                    with self.assertRaises(ValueError):
                        self.account.withdraw(bad)

        def test_negative_initial(self):
            self.assertRaises(ValueError, BankAccount, "X", -1)

        def test_interest(self):
            self.assertAlmostEqual(self.account.apply_interest(), 102.0, places=7)

        def test_balance_read_only(self):
            with self.assertRaises(AttributeError):
                self.account.balance = 1000


    if __name__ == '__main__':
        unittest.main()
""", wrong={"allows_overdraft": """
    class InsufficientFundsError(Exception):
        def __init__(self, balance, amount):
            super().__init__(f"Cannot withdraw {amount}: balance is {balance}")
            self.balance = balance
            self.amount = amount


    class BankAccount:
        interest_rate = 0.02

        def __init__(self, owner, balance=0.0):
            if balance < 0:
                raise ValueError("Initial balance must be non-negative")
            self.owner = owner
            self._balance = balance
            self.transactions = []

        @property
        def balance(self):
            return self._balance

        def deposit(self, amount):
            if amount <= 0:
                raise ValueError("Deposit amount must be positive")
            self._balance += amount
            self.transactions.append(("deposit", amount))
            return self._balance

        def withdraw(self, amount):
            if amount <= 0:
                raise ValueError("Withdrawal amount must be positive")
            self._balance -= amount
            self.transactions.append(("withdraw", amount))
            return self._balance

        def apply_interest(self):
            self._balance += self._balance * self.interest_rate
            return self._balance
""", "plain_attr": """
    class InsufficientFundsError(Exception):
        def __init__(self, balance, amount):
            super().__init__(f"Cannot withdraw {amount}: balance is {balance}")
            self.balance = balance
            self.amount = amount


    class BankAccount:
        interest_rate = 0.02

        def __init__(self, owner, balance=0.0):
            if balance < 0:
                raise ValueError("Initial balance must be non-negative")
            self.owner = owner
            self.balance = balance
            self.transactions = []

        def deposit(self, amount):
            if amount <= 0:
                raise ValueError("Deposit amount must be positive")
            self.balance += amount
            self.transactions.append(("deposit", amount))
            return self.balance

        def withdraw(self, amount):
            if amount <= 0:
                raise ValueError("Withdrawal amount must be positive")
            if amount > self.balance:
                raise InsufficientFundsError(self.balance, amount)
            self.balance -= amount
            self.transactions.append(("withdraw", amount))
            return self.balance

        def apply_interest(self):
            self.balance += self.balance * self.interest_rate
            return self.balance
"""})

ut("lru_cache_class", """
    from collections import OrderedDict


    class LRUCache:
        def __init__(self, capacity: int):
            self.capacity = capacity
            self.cache = OrderedDict()

        def get(self, key: int) -> int:
            if key not in self.cache:
                return -1
            self.cache.move_to_end(key)
            return self.cache[key]

        def put(self, key: int, value: int) -> None:
            if key in self.cache:
                self.cache.move_to_end(key)
            self.cache[key] = value
            if len(self.cache) > self.capacity:
                self.cache.popitem(last=False)
""", """
    import unittest


    class TestLRUCache(unittest.TestCase):
        def test_leetcode_example(self):
            cache = LRUCache(2)
            cache.put(1, 1)
            cache.put(2, 2)
            self.assertEqual(cache.get(1), 1)
            cache.put(3, 3)
            self.assertEqual(cache.get(2), -1)
            cache.put(4, 4)
            self.assertEqual(cache.get(1), -1)
            self.assertEqual(cache.get(3), 3)
            self.assertEqual(cache.get(4), 4)

        def test_update_existing(self):
            cache = LRUCache(2)
            cache.put(1, 1)
            cache.put(2, 2)
            cache.put(1, 10)
            cache.put(3, 3)
            self.assertEqual(cache.get(1), 10)
            self.assertEqual(cache.get(2), -1)

        def test_capacity_one(self):
            cache = LRUCache(1)
            cache.put(2, 1)
            self.assertEqual(cache.get(2), 1)
            cache.put(3, 2)
            self.assertEqual(cache.get(2), -1)
            self.assertEqual(cache.get(3), 2)

        def test_put_returns_none(self):
            self.assertIsNone(LRUCache(3).put(1, 1))

        def test_many_operations(self):
            cache = LRUCache(50)
            for i in range(200):
                cache.put(i, i * i)
            hits = [cache.get(i) for i in range(200)]
            self.assertEqual(sum(1 for h in hits if h != -1), 50)
            self.assertEqual(hits[-1], 199 * 199)


    if __name__ == "__main__":
        unittest.main()
""", right={"dict": """
    class LRUCache:
        def __init__(self, capacity):
            self.capacity = capacity
            self.d = {}

        def get(self, key):
            if key not in self.d:
                return -1
            v = self.d.pop(key)
            self.d[key] = v
            return v

        def put(self, key, value):
            self.d.pop(key, None)
            self.d[key] = value
            if len(self.d) > self.capacity:
                del self.d[next(iter(self.d))]
"""}, wrong={"no_touch_on_get": """
    from collections import OrderedDict


    class LRUCache:
        def __init__(self, capacity):
            self.capacity = capacity
            self.cache = OrderedDict()

        def get(self, key):
            return self.cache.get(key, -1)

        def put(self, key, value):
            if key in self.cache:
                self.cache.move_to_end(key)
            self.cache[key] = value
            if len(self.cache) > self.capacity:
                self.cache.popitem(last=False)
""", "evict_newest": """
    from collections import OrderedDict


    class LRUCache:
        def __init__(self, capacity):
            self.capacity = capacity
            self.cache = OrderedDict()

        def get(self, key):
            if key not in self.cache:
                return -1
            self.cache.move_to_end(key)
            return self.cache[key]

        def put(self, key, value):
            if len(self.cache) >= self.capacity and key not in self.cache:
                self.cache.popitem()
            self.cache[key] = value
            self.cache.move_to_end(key)
"""})

ut("fib_generator", """
    def fibonacci():
        a, b = 0, 1
        while True:
            yield a
            a, b = b, a + b


    def fib_upto(limit):
        for x in fibonacci():
            if x > limit:
                return
            yield x
""", """
    import itertools
    import types
    import unittest

    from solution import fibonacci, fib_upto


    class TestFibonacciGenerator(unittest.TestCase):
        def test_is_generator(self):
            self.assertIsInstance(fibonacci(), types.GeneratorType)

        def test_first_ten(self):
            self.assertEqual(list(itertools.islice(fibonacci(), 10)), [0, 1, 1, 2, 3, 5, 8, 13, 21, 34])

        def test_next(self):
            gen = fibonacci()
            self.assertEqual(next(gen), 0)
            self.assertEqual(next(gen), 1)
            self.assertEqual(next(gen), 1)
            self.assertEqual(next(gen), 2)

        def test_big_term(self):
            value = next(itertools.islice(fibonacci(), 300, None))
            a, b = 0, 1
            for _ in range(300):
                a, b = b, a + b
            self.assertEqual(value, a)
            self.assertGreater(value, 10 ** 60)

        def test_upto(self):
            self.assertEqual(list(fib_upto(20)), [0, 1, 1, 2, 3, 5, 8, 13])
            self.assertEqual(list(fib_upto(0)), [0])

        def test_upto_exhausts(self):
            gen = fib_upto(1)
            self.assertEqual(list(gen), [0, 1, 1])
            with self.assertRaises(StopIteration):
                next(gen)


    if __name__ == '__main__':
        unittest.main()
""", wrong={"starts_at_one": """
    def fibonacci():
        a, b = 1, 1
        while True:
            yield a
            a, b = b, a + b


    def fib_upto(limit):
        for x in fibonacci():
            if x > limit:
                return
            yield x
""", "list_upto": """
    def fibonacci():
        a, b = 0, 1
        while True:
            yield a
            a, b = b, a + b


    def fib_upto(limit):
        out = []
        for x in fibonacci():
            if x > limit:
                return out
            out.append(x)
"""})

ut("config_json", """
    import json

    DEFAULTS = {"host": "localhost", "port": 8080, "debug": False}


    def load_config(text):
        data = json.loads(text)
        if not isinstance(data, dict):
            raise TypeError("config must be a JSON object")
        config = dict(DEFAULTS)
        config.update(data)
        if not isinstance(config["port"], int) or not (0 < config["port"] < 65536):
            raise ValueError(f"invalid port: {config['port']!r}")
        return config


    def dump_config(config):
        return json.dumps(config, sort_keys=True, indent=2)
""", """
    import json
    import unittest

    from solution import load_config, dump_config, DEFAULTS


    class TestLoadConfig(unittest.TestCase):
        def test_empty_object_gives_defaults(self):
            self.assertDictEqual(load_config("{}"), {"host": "localhost", "port": 8080, "debug": False})

        def test_override(self):
            cfg = load_config('{"port": 9000, "debug": true}')
            self.assertEqual(cfg["port"], 9000)
            self.assertIs(cfg["debug"], True)
            self.assertEqual(cfg["host"], "localhost")

        def test_defaults_not_mutated(self):
            load_config('{"host": "example.com"}')
            self.assertEqual(DEFAULTS["host"], "localhost")

        def test_invalid_json(self):
            with self.assertRaises(json.JSONDecodeError):
                load_config("{not json}")
            with self.assertRaises(ValueError):
                load_config("")

        def test_not_an_object(self):
            with self.assertRaisesRegex(TypeError, "JSON object"):
                load_config("[1, 2]")

        def test_bad_port(self):
            for port in (0, 70000, '"80"'):
                with self.subTest(port=port):
                    with self.assertRaises(ValueError) as cm:
                        load_config('{"port": %s}' % port)
                    self.assertTrue(str(cm.exception).startswith("invalid port"))

        def test_dump_roundtrip(self):
            text = dump_config({"b": 1, "a": [1, 2]})
            self.assertEqual(json.loads(text), {"a": [1, 2], "b": 1})
            self.assertMultiLineEqual(text, '{\\n  "a": [\\n    1,\\n    2\\n  ],\\n  "b": 1\\n}')


    if __name__ == '__main__':
        unittest.main()
""", wrong={"mutates_defaults": """
    import json

    DEFAULTS = {"host": "localhost", "port": 8080, "debug": False}


    def load_config(text):
        data = json.loads(text)
        if not isinstance(data, dict):
            raise TypeError("config must be a JSON object")
        config = DEFAULTS
        config.update(data)
        if not isinstance(config["port"], int) or not (0 < config["port"] < 65536):
            raise ValueError(f"invalid port: {config['port']!r}")
        return config


    def dump_config(config):
        return json.dumps(config, sort_keys=True, indent=2)
""", "no_indent": """
    import json

    DEFAULTS = {"host": "localhost", "port": 8080, "debug": False}


    def load_config(text):
        data = json.loads(text)
        if not isinstance(data, dict):
            raise TypeError("config must be a JSON object")
        config = {**DEFAULTS, **data}
        if not isinstance(config["port"], int) or not (0 < config["port"] < 65536):
            raise ValueError(f"invalid port: {config['port']!r}")
        return config


    def dump_config(config):
        return json.dumps(config, sort_keys=True)
"""})

ut("top_k_words", """
    import re
    from collections import Counter


    def word_counts(text):
        return Counter(re.findall(r"[a-z']+", text.lower()))


    def top_k(text, k):
        counts = word_counts(text)
        return [w for w, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:k]]
""", """
    import unittest
    from collections import Counter
    from solution import word_counts, top_k

    TEXT = "The cat and the hat. The cat sat! And then? the END"


    class TestWordCounts(unittest.TestCase):
        def test_counts(self):
            counts = word_counts(TEXT)
            self.assertEqual(counts["the"], 4)
            self.assertEqual(counts["cat"], 2)
            self.assertEqual(counts["missing"], 0)

        def test_is_counter_like(self):
            self.assertIsInstance(word_counts("a b"), dict)
            self.assertEqual(dict(word_counts("b a b")), {"a": 1, "b": 2})

        def test_counter_equality(self):
            self.assertEqual(word_counts("x y x"), Counter({"x": 2, "y": 1}))

        def test_apostrophes(self):
            self.assertIn("don't", word_counts("Don't stop"))


    class TestTopK(unittest.TestCase):
        def test_top_two(self):
            self.assertEqual(top_k(TEXT, 2), ["the", "and"])

        def test_ties_any_order(self):
            self.assertCountEqual(top_k("a b c", 3), ["c", "b", "a"])

        def test_k_larger_than_vocab(self):
            self.assertEqual(len(top_k("one two", 10)), 2)

        def test_empty(self):
            self.assertEqual(top_k("", 3), [])
            self.assertFalse(top_k("...", 1))


    if __name__ == '__main__':
        unittest.main()
""", wrong={"most_common": """
    import re
    from collections import Counter


    def word_counts(text):
        return Counter(re.findall(r"[a-z']+", text.lower()))


    def top_k(text, k):
        return [w for w, _ in word_counts(text).most_common(k)]
""", "case_sensitive": """
    import re
    from collections import Counter


    def word_counts(text):
        return Counter(re.findall(r"[A-Za-z']+", text))


    def top_k(text, k):
        counts = word_counts(text)
        return [w for w, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:k]]
"""})

ut("roman", """
    VALUES = [(1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"),
              (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")]


    def to_roman(num):
        if not isinstance(num, int) or isinstance(num, bool):
            raise TypeError("expected an int")
        if not 0 < num < 4000:
            raise ValueError("number out of range (must be 1..3999)")
        out = []
        for value, letters in VALUES:
            while num >= value:
                out.append(letters)
                num -= value
        return "".join(out)


    def from_roman(s):
        table = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}
        total = 0
        for i, ch in enumerate(s):
            v = table[ch]
            if i + 1 < len(s) and table[s[i + 1]] > v:
                total -= v
            else:
                total += v
        return total
""", """
    import unittest
    from solution import to_roman, from_roman


    class RomanNumeralTests(unittest.TestCase):
        known = {1: "I", 4: "IV", 9: "IX", 14: "XIV", 40: "XL", 90: "XC", 400: "CD",
                 1994: "MCMXCIV", 2024: "MMXXIV", 3999: "MMMCMXCIX"}

        def test_to_roman_known_values(self):
            for number, numeral in self.known.items():
                with self.subTest(number=number):
                    self.assertEqual(to_roman(number), numeral)

        def test_from_roman_known_values(self):
            for number, numeral in self.known.items():
                with self.subTest(numeral=numeral):
                    self.assertEqual(from_roman(numeral), number)

        def test_roundtrip(self):
            for n in range(1, 4000, 37):
                self.assertEqual(from_roman(to_roman(n)), n)

        def test_out_of_range(self):
            for bad in (0, -1, 4000):
                with self.subTest(bad=bad):
                    self.assertRaises(ValueError, to_roman, bad)

        def test_type_error(self):
            with self.assertRaises(TypeError):
                to_roman(3.5)
            with self.assertRaises(TypeError):
                to_roman("10")

        def test_error_message(self):
            with self.assertRaisesRegex(ValueError, r"1\\.\\.3999"):
                to_roman(5000)


    if __name__ == '__main__':
        unittest.main(verbosity=2)
""", wrong={"no_subtractive": """
    VALUES = [(1000, "M"), (500, "D"), (100, "C"), (50, "L"), (10, "X"), (5, "V"), (1, "I")]


    def to_roman(num):
        if not isinstance(num, int) or isinstance(num, bool):
            raise TypeError("expected an int")
        if not 0 < num < 4000:
            raise ValueError("number out of range (must be 1..3999)")
        out = []
        for value, letters in VALUES:
            while num >= value:
                out.append(letters)
                num -= value
        return "".join(out)


    def from_roman(s):
        table = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}
        return sum(table[c] for c in s)
""", "no_type_check": """
    VALUES = [(1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"),
              (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")]


    def to_roman(num):
        if not 0 < num < 4000:
            raise ValueError("number out of range (must be 1..3999)")
        out = []
        for value, letters in VALUES:
            while num >= value:
                out.append(letters)
                num -= value
        return "".join(out)


    def from_roman(s):
        table = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}
        total = 0
        for i, ch in enumerate(s):
            v = table[ch]
            total += -v if i + 1 < len(s) and table[s[i + 1]] > v else v
        return total
"""})

ut("logger_collaborator", """
    def process_orders(orders, logger, notifier=None):
        processed = 0
        for order in orders:
            if order.get("qty", 0) <= 0:
                logger.warning("skipping order %s", order.get("id"))
                continue
            logger.info("processing order %s", order["id"])
            if notifier is not None:
                notifier.send(order["id"], status="processed")
            processed += 1
        return processed
""", """
    import unittest
    from unittest.mock import MagicMock, Mock, call
    from solution import process_orders


    class TestProcessOrders(unittest.TestCase):
        def setUp(self):
            self.logger = MagicMock()
            self.orders = [{"id": 1, "qty": 2}, {"id": 2, "qty": 0}, {"id": 3, "qty": 5}]

        def test_count(self):
            self.assertEqual(process_orders(self.orders, self.logger), 2)

        def test_logging_calls(self):
            process_orders(self.orders, self.logger)
            self.assertEqual(self.logger.info.call_count, 2)
            self.logger.warning.assert_called_once_with("skipping order %s", 2)
            self.logger.info.assert_has_calls([call("processing order %s", 1), call("processing order %s", 3)])

        def test_notifier(self):
            notifier = Mock()
            process_orders(self.orders, self.logger, notifier)
            notifier.send.assert_any_call(3, status="processed")
            self.assertEqual(notifier.send.call_count, 2)

        def test_empty(self):
            logger = Mock()
            self.assertEqual(process_orders([], logger), 0)
            logger.info.assert_not_called()


    if __name__ == "__main__":
        unittest.main()
""", wrong={"no_skip": """
    def process_orders(orders, logger, notifier=None):
        processed = 0
        for order in orders:
            logger.info("processing order %s", order["id"])
            if notifier is not None:
                notifier.send(order["id"], status="processed")
            processed += 1
        return processed
""", "positional_status": """
    def process_orders(orders, logger, notifier=None):
        processed = 0
        for order in orders:
            if order.get("qty", 0) <= 0:
                logger.warning("skipping order %s", order.get("id"))
                continue
            logger.info("processing order %s", order["id"])
            if notifier:
                notifier.send(order["id"], "processed")
            processed += 1
        return processed
"""})

ut("memo_fib", """
    from functools import lru_cache


    @lru_cache(maxsize=None)
    def fib(n):
        if n < 0:
            raise ValueError("n must be >= 0")
        if n < 2:
            return n
        return fib(n - 1) + fib(n - 2)
""", """
    import unittest
    import solution


    class TestMemoFib(unittest.TestCase):
        def setUp(self):
            solution.fib.cache_clear()

        def test_values(self):
            self.assertEqual([solution.fib(i) for i in range(10)], [0, 1, 1, 2, 3, 5, 8, 13, 21, 34])

        def test_large(self):
            self.assertEqual(solution.fib(200), 280571172992510140037611932413038677189525)

        def test_cache_is_used(self):
            solution.fib(30)
            info = solution.fib.cache_info()
            self.assertGreater(info.hits, 0)
            self.assertEqual(info.currsize, 31)

        def test_negative(self):
            with self.assertRaises(ValueError):
                solution.fib(-1)


    if __name__ == "__main__":
        unittest.main()
""", wrong={"no_cache": """
    def fib(n):
        if n < 0:
            raise ValueError("n must be >= 0")
        a, b = 0, 1
        for _ in range(n):
            a, b = b, a + b
        return a
""", "small_cache": """
    from functools import lru_cache


    @lru_cache(maxsize=16)
    def fib(n):
        if n < 0:
            raise ValueError("n must be >= 0")
        if n < 2:
            return n
        return fib(n - 1) + fib(n - 2)
"""})

ut("async_fetch", """
    import asyncio


    async def fetch_value(key, delay=0):
        await asyncio.sleep(delay)
        if key is None:
            raise KeyError("key is required")
        return key.upper()


    async def fetch_all(keys):
        return await asyncio.gather(*(fetch_value(k) for k in keys))
""", """
    import asyncio
    import unittest
    from solution import fetch_value, fetch_all


    class TestFetchAsync(unittest.IsolatedAsyncioTestCase):
        async def test_single(self):
            self.assertEqual(await fetch_value("abc"), "ABC")

        async def test_gather_order(self):
            result = await fetch_all(["a", "b", "c"])
            self.assertEqual(list(result), ["A", "B", "C"])

        async def test_missing_key(self):
            with self.assertRaises(KeyError):
                await fetch_value(None)


    class TestFetchSync(unittest.TestCase):
        def test_run(self):
            self.assertEqual(asyncio.run(fetch_value("x")), "X")


    if __name__ == "__main__":
        unittest.main()
""", wrong={"lower": """
    import asyncio


    async def fetch_value(key, delay=0):
        await asyncio.sleep(delay)
        if key is None:
            raise KeyError("key is required")
        return key.lower()


    async def fetch_all(keys):
        return [await fetch_value(k) for k in keys]
"""})

ut("argparse_exit", """
    import argparse
    import sys


    def parse_args(argv=None):
        parser = argparse.ArgumentParser(description="Sum numbers")
        parser.add_argument("numbers", nargs="+", type=int)
        parser.add_argument("--square", action="store_true")
        return parser.parse_args(argv)


    def main(argv=None):
        args = parse_args(argv)
        nums = [n * n for n in args.numbers] if args.square else args.numbers
        print(sum(nums))
        return 0
""", """
    import io
    import unittest
    from contextlib import redirect_stdout, redirect_stderr
    from solution import main, parse_args


    class TestCLI(unittest.TestCase):
        def test_sum(self):
            buf = io.StringIO()
            with redirect_stdout(buf):
                code = main(["1", "2", "3"])
            self.assertEqual(code, 0)
            self.assertEqual(buf.getvalue().strip(), "6")

        def test_square(self):
            buf = io.StringIO()
            with redirect_stdout(buf):
                main(["--square", "3", "4"])
            self.assertEqual(buf.getvalue(), "25\\n")

        def test_parse(self):
            args = parse_args(["5", "--square"])
            self.assertEqual(args.numbers, [5])
            self.assertTrue(args.square)

        def test_missing_numbers_exits(self):
            with redirect_stderr(io.StringIO()):
                with self.assertRaises(SystemExit) as cm:
                    main([])
            self.assertEqual(cm.exception.code, 2)

        def test_bad_int_exits(self):
            err = io.StringIO()
            with redirect_stderr(err):
                with self.assertRaises(SystemExit):
                    parse_args(["x"])
            self.assertIn("invalid int value", err.getvalue())


    if __name__ == "__main__":
        unittest.main()
""", wrong={"float": """
    import argparse


    def parse_args(argv=None):
        parser = argparse.ArgumentParser(description="Sum numbers")
        parser.add_argument("numbers", nargs="*", type=float)
        parser.add_argument("--square", action="store_true")
        return parser.parse_args(argv)


    def main(argv=None):
        args = parse_args(argv)
        nums = [n * n for n in args.numbers] if args.square else args.numbers
        print(sum(nums))
        return 0
"""})

ut("timer_context", """
    import time


    class Timer:
        def __init__(self, label="block"):
            self.label = label
            self.elapsed = None

        def __enter__(self):
            self._start = time.perf_counter()
            return self

        def __exit__(self, exc_type, exc, tb):
            self.elapsed = time.perf_counter() - self._start
            return False

        def __repr__(self):
            return f"Timer(label={self.label!r}, elapsed={self.elapsed})"
""", """
    import unittest
    from unittest.mock import patch
    from solution import Timer


    class TestTimer(unittest.TestCase):
        @patch("time.perf_counter", side_effect=[10.0, 12.5])
        def test_elapsed_with_mock(self, mock_counter):
            with Timer("load") as t:
                pass
            self.assertAlmostEqual(t.elapsed, 2.5)
            self.assertEqual(mock_counter.call_count, 2)

        def test_real_clock(self):
            with Timer() as t:
                sum(range(1000))
            self.assertIsNotNone(t.elapsed)
            self.assertGreaterEqual(t.elapsed, 0.0)
            self.assertLess(t.elapsed, 5.0)

        def test_exception_propagates(self):
            t = Timer()
            with self.assertRaises(ZeroDivisionError):
                with t:
                    1 / 0
            self.assertIsNotNone(t.elapsed)

        def test_repr(self):
            self.assertEqual(repr(Timer("x")), "Timer(label='x', elapsed=None)")


    if __name__ == "__main__":
        unittest.main()
""", wrong={"swallows": """
    import time


    class Timer:
        def __init__(self, label="block"):
            self.label = label
            self.elapsed = None

        def __enter__(self):
            self._start = time.perf_counter()
            return self

        def __exit__(self, exc_type, exc, tb):
            self.elapsed = time.perf_counter() - self._start
            return True

        def __repr__(self):
            return f"Timer(label={self.label!r}, elapsed={self.elapsed})"
""", "time_time": """
    import time


    class Timer:
        def __init__(self, label="block"):
            self.label = label
            self.elapsed = None

        def __enter__(self):
            self._start = time.time()
            return self

        def __exit__(self, *exc):
            self.elapsed = time.time() - self._start

        def __repr__(self):
            return f"Timer(label={self.label!r}, elapsed={self.elapsed})"
"""})

ut("shapes_hierarchy", """
    import math
    from abc import ABC, abstractmethod


    class Shape(ABC):
        count = 0

        def __init__(self):
            Shape.count += 1

        @abstractmethod
        def area(self):
            ...

        def describe(self):
            return f"{type(self).__name__} with area {self.area():.2f}"


    class Circle(Shape):
        def __init__(self, r):
            super().__init__()
            if r < 0:
                raise ValueError("radius must be non-negative")
            self.r = r

        def area(self):
            return math.pi * self.r ** 2


    class Rectangle(Shape):
        def __init__(self, w, h):
            super().__init__()
            self.w, self.h = w, h

        def area(self):
            return self.w * self.h


    class Square(Rectangle):
        def __init__(self, side):
            super().__init__(side, side)


    def total_area(shapes):
        return sum(s.area() for s in shapes)
""", """
    import math
    import unittest
    from solution import Shape, Circle, Rectangle, Square, total_area


    class TestShapes(unittest.TestCase):
        def test_abstract(self):
            with self.assertRaises(TypeError):
                Shape()

        def test_circle_area(self):
            self.assertAlmostEqual(Circle(2).area(), 12.566370614359172, places=5)
            self.assertTrue(math.isclose(Circle(1).area(), math.pi))

        def test_square_is_rectangle(self):
            sq = Square(3)
            self.assertIsInstance(sq, Rectangle)
            self.assertIsInstance(sq, Shape)
            self.assertTrue(issubclass(Square, Shape))
            self.assertNotIsInstance(sq, Circle)
            self.assertEqual(sq.area(), 9)

        def test_describe(self):
            self.assertEqual(Square(2).describe(), "Square with area 4.00")
            self.assertRegex(Circle(1).describe(), r"^Circle with area 3\\.14$")

        def test_total_area(self):
            shapes = [Rectangle(2, 3), Square(1), Circle(0)]
            self.assertEqual(total_area(shapes), 7)

        def test_counter_increments(self):
            before = Shape.count
            Circle(1)
            Square(2)
            self.assertEqual(Shape.count, before + 2)

        def test_negative_radius(self):
            self.assertRaisesRegex(ValueError, "non-negative", Circle, -1)

        def test_sorted_by_area(self):
            shapes = [Square(3), Rectangle(1, 2), Circle(1)]
            ordered = sorted(shapes, key=lambda s: s.area())
            self.assertEqual([type(s).__name__ for s in ordered], ["Rectangle", "Circle", "Square"])


    if __name__ == "__main__":
        unittest.main()
""", wrong={"not_abstract": """
    import math


    class Shape:
        count = 0

        def __init__(self):
            Shape.count += 1

        def area(self):
            return 0

        def describe(self):
            return f"{type(self).__name__} with area {self.area():.2f}"


    class Circle(Shape):
        def __init__(self, r):
            super().__init__()
            if r < 0:
                raise ValueError("radius must be non-negative")
            self.r = r

        def area(self):
            return math.pi * self.r ** 2


    class Rectangle(Shape):
        def __init__(self, w, h):
            super().__init__()
            self.w, self.h = w, h

        def area(self):
            return self.w * self.h


    class Square(Rectangle):
        def __init__(self, side):
            super().__init__(side, side)


    def total_area(shapes):
        return sum(s.area() for s in shapes)
""", "square_separate": """
    import math
    from abc import ABC, abstractmethod


    class Shape(ABC):
        count = 0

        def __init__(self):
            Shape.count += 1

        @abstractmethod
        def area(self):
            ...

        def describe(self):
            return f"{type(self).__name__} with area {self.area():.2f}"


    class Circle(Shape):
        def __init__(self, r):
            super().__init__()
            if r < 0:
                raise ValueError("radius must be non-negative")
            self.r = r

        def area(self):
            return math.pi * self.r ** 2


    class Rectangle(Shape):
        def __init__(self, w, h):
            super().__init__()
            self.w, self.h = w, h

        def area(self):
            return self.w * self.h


    class Square(Shape):
        def __init__(self, side):
            super().__init__()
            self.side = side

        def area(self):
            return self.side ** 2


    def total_area(shapes):
        return sum(s.area() for s in shapes)
"""})

ut("enum_status", """
    from enum import Enum, auto
    from typing import NamedTuple


    class Status(Enum):
        PENDING = auto()
        ACTIVE = auto()
        CLOSED = auto()


    class Ticket(NamedTuple):
        id: int
        title: str
        status: Status = Status.PENDING


    def parse_status(text):
        try:
            return Status[text.strip().upper()]
        except KeyError:
            raise ValueError(f"unknown status: {text}") from None


    def advance(ticket):
        order = list(Status)
        i = order.index(ticket.status)
        if i == len(order) - 1:
            return ticket
        return ticket._replace(status=order[i + 1])
""", """
    import unittest
    from solution import Status, Ticket, parse_status, advance


    class TestStatus(unittest.TestCase):
        def test_parse(self):
            self.assertIs(parse_status(" active "), Status.ACTIVE)
            self.assertEqual(parse_status("closed"), Status.CLOSED)
            self.assertEqual(parse_status("pending").name, "PENDING")

        def test_unknown(self):
            with self.assertRaises(ValueError) as cm:
                parse_status("done")
            self.assertEqual(str(cm.exception), "unknown status: done")
            self.assertIsNone(cm.exception.__cause__)

        def test_values_distinct(self):
            self.assertEqual(len({s.value for s in Status}), 3)
            self.assertNotEqual(Status.ACTIVE, Status.CLOSED)

        def test_ticket_defaults(self):
            t = Ticket(1, "Bug")
            self.assertEqual(t.status, Status.PENDING)
            self.assertEqual(t[:2], (1, "Bug"))

        def test_advance(self):
            t = advance(Ticket(7, "x"))
            self.assertIs(t.status, Status.ACTIVE)
            self.assertEqual(t.id, 7)
            t = advance(advance(t))
            self.assertIs(t.status, Status.CLOSED)


    if __name__ == "__main__":
        unittest.main()
""", wrong={"wraps_past_end": """
    from enum import Enum, auto
    from typing import NamedTuple


    class Status(Enum):
        PENDING = auto()
        ACTIVE = auto()
        CLOSED = auto()


    class Ticket(NamedTuple):
        id: int
        title: str
        status: Status = Status.PENDING


    def parse_status(text):
        try:
            return Status[text.strip().upper()]
        except KeyError:
            raise ValueError(f"unknown status: {text}")


    def advance(ticket):
        order = list(Status)
        i = order.index(ticket.status)
        return ticket._replace(status=order[(i + 1) % len(order)])
"""})

ut("rotate_inplace", """
    def rotate(matrix):
        n = len(matrix)
        for i in range(n):
            for j in range(i + 1, n):
                matrix[i][j], matrix[j][i] = matrix[j][i], matrix[i][j]
        for row in matrix:
            row.reverse()


    def remove_duplicates(nums):
        if not nums:
            return 0
        k = 1
        for i in range(1, len(nums)):
            if nums[i] != nums[k - 1]:
                nums[k] = nums[i]
                k += 1
        return k
""", """
    import copy
    import unittest
    from solution import rotate, remove_duplicates


    class TestInPlace(unittest.TestCase):
        def test_rotate_3x3(self):
            m = [[1, 2, 3], [4, 5, 6], [7, 8, 9]]
            result = rotate(m)
            self.assertIsNone(result)
            self.assertEqual(m, [[7, 4, 1], [8, 5, 2], [9, 6, 3]])

        def test_rotate_four_times_is_identity(self):
            m = [[5, 1, 9, 11], [2, 4, 8, 10], [13, 3, 6, 7], [15, 14, 12, 16]]
            original = copy.deepcopy(m)
            for _ in range(4):
                rotate(m)
            self.assertEqual(m, original)

        def test_row_objects_kept(self):
            m = [[1, 2], [3, 4]]
            first = m[0]
            rotate(m)
            self.assertIs(m[0], first)
            self.assertEqual(first, [3, 1])

        def test_remove_duplicates(self):
            nums = [0, 0, 1, 1, 1, 2, 2, 3, 3, 4]
            k = remove_duplicates(nums)
            self.assertEqual(k, 5)
            self.assertEqual(nums[:k], [0, 1, 2, 3, 4])
            self.assertEqual(len(nums), 10)

        def test_remove_duplicates_empty(self):
            nums = []
            self.assertEqual(remove_duplicates(nums), 0)
            self.assertEqual(nums, [])


    if __name__ == "__main__":
        unittest.main()
""", wrong={"copy": """
    def rotate(matrix):
        return [list(r) for r in zip(*matrix[::-1])]


    def remove_duplicates(nums):
        if not nums:
            return 0
        k = 1
        for i in range(1, len(nums)):
            if nums[i] != nums[k - 1]:
                nums[k] = nums[i]
                k += 1
        return k
""", "rebinds": """
    def rotate(matrix):
        matrix[:] = [list(r) for r in zip(*matrix[::-1])]


    def remove_duplicates(nums):
        uniq = sorted(set(nums))
        nums[:] = uniq
        return len(uniq)
"""})

ut("mutable_default", """
    def add_tag(tag, tags=None):
        if tags is None:
            tags = []
        tags.append(tag)
        return tags


    _registry = {}


    def register(name, value):
        if name in _registry:
            raise KeyError(f"{name} already registered")
        _registry[name] = value
        return len(_registry)


    def lookup(name, default=None):
        return _registry.get(name, default)


    def clear():
        _registry.clear()
""", """
    import unittest
    from solution import add_tag, register, lookup, clear


    class TestDefaults(unittest.TestCase):
        def test_fresh_list_each_call(self):
            self.assertEqual(add_tag("a"), ["a"])
            self.assertEqual(add_tag("b"), ["b"])

        def test_given_list_is_extended(self):
            tags = ["x"]
            out = add_tag("y", tags)
            self.assertIs(out, tags)
            self.assertEqual(tags, ["x", "y"])


    class TestRegistry(unittest.TestCase):
        def setUp(self):
            clear()

        def tearDown(self):
            clear()

        def test_register_and_lookup(self):
            self.assertEqual(register("one", 1), 1)
            self.assertEqual(register("two", 2), 2)
            self.assertEqual(lookup("two"), 2)
            self.assertIsNone(lookup("three"))
            self.assertEqual(lookup("three", 0), 0)

        def test_duplicate(self):
            register("k", 1)
            with self.assertRaises(KeyError):
                register("k", 2)
            self.assertEqual(lookup("k"), 1)

        def test_state_persists_between_calls(self):
            for i in range(5):
                register(f"n{i}", i)
            self.assertEqual(register("last", None), 6)


    if __name__ == "__main__":
        unittest.main()
""", wrong={"shared_default": """
    def add_tag(tag, tags=[]):
        tags.append(tag)
        return tags


    _registry = {}


    def register(name, value):
        if name in _registry:
            raise KeyError(f"{name} already registered")
        _registry[name] = value
        return len(_registry)


    def lookup(name, default=None):
        return _registry.get(name, default)


    def clear():
        _registry.clear()
""", "overwrites": """
    def add_tag(tag, tags=None):
        tags = list(tags or [])
        tags.append(tag)
        return tags


    _registry = {}


    def register(name, value):
        _registry[name] = value
        return len(_registry)


    def lookup(name, default=None):
        return _registry.get(name, default)


    def clear():
        global _registry
        _registry = {}
"""})

ut("generator_prints", """
    def countdown(n):
        while n > 0:
            print(f"T-minus {n}")
            yield n
            n -= 1
        print("Liftoff!")


    def report(items):
        for i, item in enumerate(items, 1):
            print(f"{i}. {item}")
        print(f"Total: {len(items)}", end="")
""", """
    import io
    import unittest
    from contextlib import redirect_stdout
    from unittest.mock import patch
    from solution import countdown, report


    class TestCountdown(unittest.TestCase):
        def test_values(self):
            with redirect_stdout(io.StringIO()):
                self.assertEqual(list(countdown(3)), [3, 2, 1])

        def test_output(self):
            buf = io.StringIO()
            with redirect_stdout(buf):
                for _ in countdown(2):
                    pass
            self.assertEqual(buf.getvalue(), "T-minus 2\\nT-minus 1\\nLiftoff!\\n")


    class TestReport(unittest.TestCase):
        @patch("sys.stdout", new_callable=io.StringIO)
        def test_report(self, out):
            report(["apple", "pear"])
            self.assertMultiLineEqual(out.getvalue(), "1. apple\\n2. pear\\nTotal: 2")

        def test_empty(self):
            with patch("sys.stdout", new_callable=io.StringIO) as out:
                report([])
            self.assertEqual(out.getvalue(), "Total: 0")


    if __name__ == "__main__":
        unittest.main()
""", wrong={"no_liftoff": """
    def countdown(n):
        while n > 0:
            print(f"T-minus {n}")
            yield n
            n -= 1


    def report(items):
        for i, item in enumerate(items, 1):
            print(f"{i}. {item}")
        print(f"Total: {len(items)}")
"""})

ut("inventory_dataclass", """
    from dataclasses import dataclass, field, asdict


    @dataclass
    class Item:
        name: str
        price: float
        quantity: int = 0
        tags: list = field(default_factory=list)

        @property
        def total(self):
            return round(self.price * self.quantity, 2)


    class Inventory:
        def __init__(self):
            self._items = {}

        def add(self, item):
            if item.name in self._items:
                raise ValueError(f"duplicate item: {item.name}")
            self._items[item.name] = item

        def get(self, name):
            return self._items.get(name)

        def value(self):
            return round(sum(i.total for i in self._items.values()), 2)

        def names(self):
            return sorted(self._items)

        def to_dict(self):
            return {name: asdict(item) for name, item in self._items.items()}

        def __len__(self):
            return len(self._items)
""", """
    import unittest
    from solution import Item, Inventory


    class TestInventory(unittest.TestCase):
        def setUp(self):
            self.inv = Inventory()
            self.inv.add(Item("widget", 2.50, 4))
            self.inv.add(Item("gadget", 10.0, 1, ["sale"]))

        def test_len_and_names(self):
            self.assertEqual(len(self.inv), 2)
            self.assertListEqual(self.inv.names(), ["gadget", "widget"])

        def test_value(self):
            self.assertAlmostEqual(self.inv.value(), 20.0)

        def test_get(self):
            item = self.inv.get("widget")
            self.assertIsNotNone(item)
            self.assertEqual(item.quantity, 4)
            self.assertEqual(item.total, 10.0)
            self.assertIsNone(self.inv.get("nothing"))

        def test_defaults_not_shared(self):
            a, b = Item("a", 1.0), Item("b", 1.0)
            a.tags.append("x")
            self.assertEqual(b.tags, [])

        def test_duplicate(self):
            with self.assertRaisesRegex(ValueError, "duplicate item: widget"):
                self.inv.add(Item("widget", 1.0))

        def test_to_dict(self):
            d = self.inv.to_dict()
            self.assertDictEqual(d["gadget"], {"name": "gadget", "price": 10.0, "quantity": 1, "tags": ["sale"]})

        def test_mutate_item(self):
            self.inv.get("gadget").quantity = 3
            self.assertEqual(self.inv.value(), 40.0)

        def test_repr(self):
            self.assertEqual(repr(Item("x", 1.5)), "Item(name='x', price=1.5, quantity=0, tags=[])")


    if __name__ == "__main__":
        unittest.main()
""", wrong={"shared_tags": """
    class Item:
        shared = []

        def __init__(self, name, price, quantity=0, tags=None):
            self.name, self.price, self.quantity = name, price, quantity
            self.tags = tags if tags is not None else Item.shared

        @property
        def total(self):
            return round(self.price * self.quantity, 2)

        def __repr__(self):
            return f"Item(name={self.name!r}, price={self.price!r}, quantity={self.quantity!r}, tags={self.tags!r})"


    class Inventory:
        def __init__(self):
            self._items = {}

        def add(self, item):
            if item.name in self._items:
                raise ValueError(f"duplicate item: {item.name}")
            self._items[item.name] = item

        def get(self, name):
            return self._items.get(name)

        def value(self):
            return round(sum(i.total for i in self._items.values()), 2)

        def names(self):
            return sorted(self._items)

        def to_dict(self):
            return {n: dict(vars(i)) for n, i in self._items.items()}

        def __len__(self):
            return len(self._items)
""", "overwrite": """
    from dataclasses import dataclass, field, asdict


    @dataclass
    class Item:
        name: str
        price: float
        quantity: int = 0
        tags: list = field(default_factory=list)

        @property
        def total(self):
            return round(self.price * self.quantity, 2)


    class Inventory:
        def __init__(self):
            self._items = {}

        def add(self, item):
            self._items[item.name] = item

        def get(self, name):
            return self._items.get(name)

        def value(self):
            return round(sum(i.total for i in self._items.values()), 2)

        def names(self):
            return sorted(self._items)

        def to_dict(self):
            return {name: asdict(item) for name, item in self._items.items()}

        def __len__(self):
            return len(self._items)
"""})

ut("money_eq", """
    from functools import total_ordering


    @total_ordering
    class Money:
        def __init__(self, cents):
            self.cents = int(cents)

        @classmethod
        def from_str(cls, text):
            dollars, _, cents = text.strip().lstrip("$").partition(".")
            return cls(int(dollars) * 100 + int((cents + "00")[:2]))

        def __eq__(self, other):
            return isinstance(other, Money) and self.cents == other.cents

        def __lt__(self, other):
            return self.cents < other.cents

        def __add__(self, other):
            return Money(self.cents + other.cents)

        def __hash__(self):
            return hash(self.cents)

        def __str__(self):
            return f"${self.cents // 100}.{self.cents % 100:02d}"
""", """
    import unittest
    from solution import Money


    class TestMoney(unittest.TestCase):
        def test_parse_and_str(self):
            self.assertEqual(str(Money.from_str("$3.5")), "$3.50")
            self.assertEqual(Money.from_str("12.34").cents, 1234)

        def test_add(self):
            total = Money(150) + Money(275)
            self.assertEqual(total.cents, 425)

        def test_equality(self):
            self.assertEqual(Money.from_str("1.00"), Money(100))

        def test_ordering(self):
            self.assertLess(Money(1), Money(2))
            self.assertEqual(max([Money(5), Money(50), Money(7)]).cents, 50)


    if __name__ == "__main__":
        unittest.main()
""", wrong={"float_cents": """
    class Money:
        def __init__(self, cents):
            self.cents = cents

        @classmethod
        def from_str(cls, text):
            return cls(float(text.strip().lstrip("$")) * 100)

        def __eq__(self, other):
            return isinstance(other, Money) and self.cents == other.cents

        def __lt__(self, other):
            return self.cents < other.cents

        def __add__(self, other):
            return Money(self.cents + other.cents)

        def __hash__(self):
            return hash(self.cents)

        def __str__(self):
            return f"${self.cents / 100:.2f}"
"""})

ut("patch_solution_helper", """
    import random


    def roll_die():
        return random.randint(1, 6)


    def play_round():
        a, b = roll_die(), roll_die()
        if a == b:
            return "double"
        return "high" if a + b > 7 else "low"
""", """
    import unittest
    from unittest.mock import patch
    import solution


    class TestPlayRound(unittest.TestCase):
        @patch("solution.roll_die", side_effect=[3, 3])
        def test_double(self, _):
            self.assertEqual(solution.play_round(), "double")

        @patch("random.randint", side_effect=[6, 5])
        def test_high_via_random(self, mock_randint):
            self.assertEqual(solution.play_round(), "high")
            mock_randint.assert_called_with(1, 6)

        def test_range(self):
            for _ in range(50):
                self.assertIn(solution.roll_die(), range(1, 7))


    if __name__ == "__main__":
        unittest.main()
""", wrong={"zero_based": """
    import random


    def roll_die():
        return random.randint(0, 5)


    def play_round():
        a, b = roll_die(), roll_die()
        if a == b:
            return "double"
        return "high" if a + b > 7 else "low"
"""})

ut("file_like_io", """
    import csv
    import io


    def count_lines(stream):
        return sum(1 for line in stream if line.strip())


    def write_csv(rows, stream):
        writer = csv.writer(stream, lineterminator="\\n")
        writer.writerow(["name", "score"])
        for name, score in rows:
            writer.writerow([name, score])
        return len(rows)


    def read_scores(stream):
        reader = csv.DictReader(stream)
        return {row["name"]: int(row["score"]) for row in reader}


    def checksum(data: bytes) -> str:
        return f"{sum(data) % 256:02x}"
""", """
    import io
    import unittest
    from solution import count_lines, write_csv, read_scores, checksum


    class TestFileLike(unittest.TestCase):
        def test_count_lines(self):
            self.assertEqual(count_lines(io.StringIO("a\\n\\nb\\n  \\nc")), 3)

        def test_write_then_read(self):
            buf = io.StringIO()
            n = write_csv([("ann", 90), ("bob", 75)], buf)
            self.assertEqual(n, 2)
            self.assertEqual(buf.getvalue(), "name,score\\nann,90\\nbob,75\\n")
            buf.seek(0)
            self.assertEqual(read_scores(buf), {"ann": 90, "bob": 75})

        def test_checksum_bytes(self):
            self.assertEqual(checksum(b"\\x01\\x02\\xff"), "02")
            self.assertEqual(checksum(bytes(range(10))), "2d")
            self.assertIsInstance(checksum(b""), str)


    if __name__ == "__main__":
        unittest.main()
""", wrong={"crlf": """
    import csv


    def count_lines(stream):
        return len(stream.read().splitlines())


    def write_csv(rows, stream):
        writer = csv.writer(stream)
        writer.writerow(["name", "score"])
        for name, score in rows:
            writer.writerow([name, score])
        return len(rows)


    def read_scores(stream):
        reader = csv.DictReader(stream)
        return {row["name"]: int(row["score"]) for row in reader}


    def checksum(data):
        return hex(sum(data) % 256)
"""})

ut("unicode_text", """
    import unicodedata


    def normalize(text):
        text = unicodedata.normalize("NFKD", text)
        return "".join(c for c in text if not unicodedata.combining(c)).casefold()


    def is_palindrome(text):
        cleaned = [c for c in normalize(text) if c.isalnum()]
        return cleaned == cleaned[::-1]


    def char_widths(text):
        return [len(c.encode("utf-8")) for c in text]
""", """
    import unittest
    from solution import normalize, is_palindrome, char_widths


    class TestUnicode(unittest.TestCase):
        def test_normalize(self):
            self.assertEqual(normalize("Crème Brûlée"), "creme brulee")
            self.assertEqual(normalize("STRASSE"), normalize("straße"))

        def test_palindromes(self):
            cases = [("A man, a plan, a canal: Panama", True), ("Ésope reste ici et se repose", True),
                     ("héllo", False), ("", True), ("日本日", True)]
            for text, expected in cases:
                with self.subTest(text=text):
                    self.assertEqual(is_palindrome(text), expected)

        def test_widths(self):
            self.assertEqual(char_widths("aé€😀"), [1, 2, 3, 4])


    if __name__ == "__main__":
        unittest.main()
""", wrong={"lower": """
    def normalize(text):
        return text.lower()


    def is_palindrome(text):
        cleaned = [c for c in normalize(text) if c.isalnum()]
        return cleaned == cleaned[::-1]


    def char_widths(text):
        return [len(c.encode("utf-8")) for c in text]
"""})

ut("dates", """
    from datetime import date, datetime, timedelta


    def days_between(a: str, b: str) -> int:
        d1 = datetime.strptime(a, "%Y-%m-%d").date()
        d2 = datetime.strptime(b, "%Y-%m-%d").date()
        return abs((d2 - d1).days)


    def add_business_days(start: date, n: int) -> date:
        current = start
        while n > 0:
            current += timedelta(days=1)
            if current.weekday() < 5:
                n -= 1
        return current


    def parse_timestamp(text):
        return datetime.fromisoformat(text)
""", """
    import datetime
    import unittest
    from solution import days_between, add_business_days, parse_timestamp


    class TestDates(unittest.TestCase):
        def test_days_between(self):
            self.assertEqual(days_between("2024-01-01", "2024-03-01"), 60)
            self.assertEqual(days_between("2023-03-01", "2023-01-01"), 59)

        def test_business_days(self):
            friday = datetime.date(2024, 5, 10)
            self.assertEqual(add_business_days(friday, 1), datetime.date(2024, 5, 13))
            self.assertEqual(add_business_days(friday, 5), datetime.date(2024, 5, 17))
            self.assertIsInstance(add_business_days(friday, 0), datetime.date)

        def test_timestamp(self):
            ts = parse_timestamp("2024-02-29T13:45:00")
            self.assertEqual(ts.year, 2024)
            self.assertEqual((ts.hour, ts.minute), (13, 45))
            self.assertEqual(ts + datetime.timedelta(hours=11), datetime.datetime(2024, 3, 1, 0, 45))

        def test_invalid(self):
            with self.assertRaises(ValueError):
                days_between("2024-02-30", "2024-03-01")


    if __name__ == "__main__":
        unittest.main()
""", wrong={"thirty_day_months": """
    from datetime import date, datetime, timedelta


    def days_between(a, b):
        y1, m1, d1 = map(int, a.split("-"))
        y2, m2, d2 = map(int, b.split("-"))
        return abs((y2 * 360 + m2 * 30 + d2) - (y1 * 360 + m1 * 30 + d1))


    def add_business_days(start, n):
        return start + timedelta(days=n)


    def parse_timestamp(text):
        return datetime.fromisoformat(text)
"""})

ut("test_helpers_mixin", """
    import heapq
    import bisect


    def k_smallest(nums, k):
        return heapq.nsmallest(k, nums)


    def merge_sorted(*lists):
        return list(heapq.merge(*lists))


    def insert_sorted(arr, x):
        bisect.insort(arr, x)
        return arr


    def rank(arr, x):
        return bisect.bisect_left(sorted(arr), x)
""", """
    import bisect
    import heapq
    import random
    import unittest
    from solution import *


    def brute_k_smallest(nums, k):
        return sorted(nums)[:k]


    class RandomDataMixin:
        def make(self, n, seed=0):
            rng = random.Random(seed)
            return [rng.randint(-100, 100) for _ in range(n)]


    class TestHeapFunctions(RandomDataMixin, unittest.TestCase):
        def test_k_smallest_matches_brute_force(self):
            for seed in range(5):
                data = self.make(30, seed)
                with self.subTest(seed=seed):
                    self.assertEqual(k_smallest(data, 5), brute_k_smallest(data, 5))

        def test_merge(self):
            self.assertEqual(merge_sorted([1, 4, 9], [2, 3], [], [0, 10]), [0, 1, 2, 3, 4, 9, 10])


    class TestBisectFunctions(RandomDataMixin, unittest.TestCase):
        def test_insert_keeps_order(self):
            arr = sorted(self.make(20))
            insert_sorted(arr, 7)
            self.assertEqual(arr, sorted(arr))
            self.assertIn(7, arr)

        def test_rank(self):
            data = self.make(40, 3)
            for x in (-100, 0, 55, 101):
                self.assertEqual(rank(data, x), bisect.bisect_left(sorted(data), x))


    if __name__ == "__main__":
        unittest.main()
""", wrong={"largest": """
    import heapq
    import bisect


    def k_smallest(nums, k):
        return sorted(heapq.nlargest(k, nums))


    def merge_sorted(*lists):
        return sorted(sum(lists, []))


    def insert_sorted(arr, x):
        return sorted(arr + [x])


    def rank(arr, x):
        return bisect.bisect_right(sorted(arr), x)
"""})

ut("queue_two_stacks", """
    class MyQueue:
        def __init__(self):
            self.inbox, self.outbox = [], []

        def push(self, x):
            self.inbox.append(x)

        def _shift(self):
            if not self.outbox:
                while self.inbox:
                    self.outbox.append(self.inbox.pop())

        def pop(self):
            self._shift()
            if not self.outbox:
                raise IndexError("pop from empty queue")
            return self.outbox.pop()

        def peek(self):
            self._shift()
            return self.outbox[-1] if self.outbox else None

        def empty(self):
            return not self.inbox and not self.outbox

        def __iter__(self):
            yield from reversed(self.outbox)
            yield from self.inbox

        def __bool__(self):
            return not self.empty()
""", """
    import unittest
    from solution import MyQueue


    class TestMyQueue(unittest.TestCase):
        def setUp(self):
            self.q = MyQueue()

        def test_fifo(self):
            for i in range(5):
                self.q.push(i)
            self.assertEqual([self.q.pop() for _ in range(5)], list(range(5)))
            self.assertTrue(self.q.empty())

        def test_interleaved(self):
            self.q.push(1)
            self.q.push(2)
            self.assertEqual(self.q.peek(), 1)
            self.q.push(3)
            self.assertEqual(self.q.pop(), 1)
            self.assertEqual(list(self.q), [2, 3])

        def test_truthiness(self):
            self.assertFalse(self.q)
            self.q.push("x")
            self.assertTrue(self.q)
            self.assertIn("x", self.q)
            self.assertNotIn("y", self.q)

        def test_empty_behaviour(self):
            self.assertIsNone(self.q.peek())
            self.assertRaises(IndexError, self.q.pop)


    if __name__ == "__main__":
        unittest.main()
""", wrong={"lifo": """
    class MyQueue:
        def __init__(self):
            self.items = []

        def push(self, x):
            self.items.append(x)

        def pop(self):
            if not self.items:
                raise IndexError("pop from empty queue")
            return self.items.pop()

        def peek(self):
            return self.items[-1] if self.items else None

        def empty(self):
            return not self.items

        def __iter__(self):
            return iter(self.items)

        def __bool__(self):
            return bool(self.items)
"""})

ut("validation_errors", """
    class ValidationError(Exception):
        def __init__(self, field, message):
            super().__init__(f"{field}: {message}")
            self.field = field
            self.message = message


    class AgeError(ValidationError, ValueError):
        pass


    def validate_user(data):
        if not isinstance(data, dict):
            raise TypeError("data must be a dict")
        name = data.get("name")
        if not name or not name.strip():
            raise ValidationError("name", "required")
        age = data.get("age")
        if not isinstance(age, int) or isinstance(age, bool):
            raise AgeError("age", "must be an integer")
        if not 0 <= age <= 150:
            raise AgeError("age", f"out of range: {age}")
        return {"name": name.strip(), "age": age}
""", """
    import unittest
    from solution import ValidationError, AgeError, validate_user


    class TestValidateUser(unittest.TestCase):
        def test_valid(self):
            self.assertEqual(validate_user({"name": " Ann ", "age": 30}), {"name": "Ann", "age": 30})

        def test_missing_name(self):
            with self.assertRaises(ValidationError) as cm:
                validate_user({"age": 3})
            self.assertEqual(cm.exception.field, "name")
            self.assertEqual(cm.exception.message, "required")
            self.assertEqual(cm.exception.args, ("name: required",))

        def test_age_errors_are_value_errors(self):
            for bad in (-1, 151, "10", True, None):
                with self.subTest(age=bad):
                    with self.assertRaises(ValueError) as cm:
                        validate_user({"name": "x", "age": bad})
                    self.assertIsInstance(cm.exception, AgeError)
                    self.assertIsInstance(cm.exception, ValidationError)

        def test_message(self):
            with self.assertRaisesRegex(AgeError, r"^age: out of range: 200$"):
                validate_user({"name": "x", "age": 200})

        def test_type(self):
            self.assertRaises(TypeError, validate_user, [("name", "x")])

        def test_catch_base(self):
            try:
                validate_user({"name": "", "age": 1})
            except ValidationError as e:
                self.assertEqual(str(e), "name: required")
            else:
                self.fail("ValidationError not raised")


    if __name__ == "__main__":
        unittest.main()
""", wrong={"bool_accepted": """
    class ValidationError(Exception):
        def __init__(self, field, message):
            super().__init__(f"{field}: {message}")
            self.field = field
            self.message = message


    class AgeError(ValidationError, ValueError):
        pass


    def validate_user(data):
        if not isinstance(data, dict):
            raise TypeError("data must be a dict")
        name = data.get("name")
        if not name or not name.strip():
            raise ValidationError("name", "required")
        age = data.get("age")
        if not isinstance(age, int):
            raise AgeError("age", "must be an integer")
        if not 0 <= age <= 150:
            raise AgeError("age", f"out of range: {age}")
        return {"name": name.strip(), "age": age}
""", "not_value_error": """
    class ValidationError(Exception):
        def __init__(self, field, message):
            super().__init__(f"{field}: {message}")
            self.field = field
            self.message = message


    class AgeError(ValidationError):
        pass


    def validate_user(data):
        if not isinstance(data, dict):
            raise TypeError("data must be a dict")
        name = data.get("name")
        if not name or not name.strip():
            raise ValidationError("name", "required")
        age = data.get("age")
        if type(age) is not int:
            raise AgeError("age", "must be an integer")
        if not 0 <= age <= 150:
            raise AgeError("age", f"out of range: {age}")
        return {"name": name.strip(), "age": age}
"""})

ut("linked_list_reverse", """
    from typing import Optional


    class ListNode:
        def __init__(self, val=0, next=None):
            self.val = val
            self.next = next


    class Solution:
        def reverseList(self, head: Optional[ListNode]) -> Optional[ListNode]:
            prev = None
            while head:
                head.next, prev, head = prev, head, head.next
            return prev

        def middleNode(self, head: Optional[ListNode]) -> Optional[ListNode]:
            slow = fast = head
            while fast and fast.next:
                slow, fast = slow.next, fast.next.next
            return slow
""", """
    import unittest
    from solution import ListNode, Solution


    def build(values):
        dummy = ListNode()
        cur = dummy
        for v in values:
            cur.next = ListNode(v)
            cur = cur.next
        return dummy.next


    def to_list(node):
        out = []
        while node:
            out.append(node.val)
            node = node.next
        return out


    class TestLinkedList(unittest.TestCase):
        def setUp(self):
            self.sol = Solution()

        def test_reverse(self):
            self.assertEqual(to_list(self.sol.reverseList(build([1, 2, 3, 4, 5]))), [5, 4, 3, 2, 1])

        def test_reverse_empty(self):
            self.assertIsNone(self.sol.reverseList(None))

        def test_reverse_keeps_nodes(self):
            head = build([1, 2])
            tail = head.next
            self.assertIs(self.sol.reverseList(head), tail)
            self.assertIsNone(head.next)

        def test_middle(self):
            self.assertEqual(self.sol.middleNode(build([1, 2, 3, 4, 5])).val, 3)
            self.assertEqual(to_list(self.sol.middleNode(build([1, 2, 3, 4, 5, 6]))), [4, 5, 6])


    if __name__ == "__main__":
        unittest.main()
""", wrong={"first_middle": """
    class ListNode:
        def __init__(self, val=0, next=None):
            self.val = val
            self.next = next


    class Solution:
        def reverseList(self, head):
            prev = None
            while head:
                head.next, prev, head = prev, head, head.next
            return prev

        def middleNode(self, head):
            slow = fast = head
            while fast.next and fast.next.next:
                slow, fast = slow.next, fast.next.next
            return slow
"""})

ut("script_menu", """
    def main():
        total = 0
        while True:
            cmd = input("> ").strip().lower()
            if cmd == "quit":
                print(f"Final total: {total}")
                break
            if cmd.startswith("add "):
                try:
                    total += int(cmd[4:])
                except ValueError:
                    print("Invalid number")
                    continue
                print(f"Total: {total}")
            else:
                print(f"Unknown command: {cmd}")


    if __name__ == "__main__":
        main()
""", """
    import io
    import sys
    import unittest
    from unittest.mock import patch

    import solution


    class TestMenu(unittest.TestCase):
        def run_main(self, inputs):
            with patch("builtins.input", side_effect=inputs), patch("sys.stdout", new=io.StringIO()) as out:
                solution.main()
            return out.getvalue()

        def test_add_and_quit(self):
            self.assertEqual(self.run_main(["add 5", "add 10", "quit"]),
                             "Total: 5\\nTotal: 15\\nFinal total: 15\\n")

        def test_invalid(self):
            output = self.run_main(["add x", "QUIT"])
            self.assertIn("Invalid number", output)
            self.assertTrue(output.endswith("Final total: 0\\n"))

        def test_unknown(self):
            self.assertRegex(self.run_main(["jump", "quit"]), r"Unknown command: jump")

        def test_runs_out_of_input(self):
            with self.assertRaises(StopIteration):
                self.run_main(["add 1"])


    if __name__ == "__main__":
        unittest.main()
""", wrong={"no_lower": """
    def main():
        total = 0
        while True:
            cmd = input("> ").strip()
            if cmd == "quit":
                print(f"Final total: {total}")
                break
            if cmd.startswith("add "):
                try:
                    total += int(cmd[4:])
                except ValueError:
                    print("Invalid number")
                    continue
                print(f"Total: {total}")
            else:
                print(f"Unknown command: {cmd}")
""", "eof": """
    def main():
        total = 0
        while True:
            try:
                cmd = input("> ").strip().lower()
            except (EOFError, StopIteration):
                break
            if cmd == "quit":
                print(f"Final total: {total}")
                break
            if cmd.startswith("add "):
                try:
                    total += int(cmd[4:])
                except ValueError:
                    print("Invalid number")
                    continue
                print(f"Total: {total}")
            else:
                print(f"Unknown command: {cmd}")
"""})

ut("subclass_limit", """
    class Plugin:
        registry = []

        def __init_subclass__(cls, **kwargs):
            super().__init_subclass__(**kwargs)
            Plugin.registry.append(cls.__name__)

        def run(self, text):
            raise NotImplementedError


    def apply_all(plugins, text):
        for p in plugins:
            text = p.run(text)
        return text
""", """
    import unittest
    from solution import Plugin, apply_all


    class TestPlugins(unittest.TestCase):
        def test_base_raises(self):
            with self.assertRaises(NotImplementedError):
                Plugin().run("x")

        def test_subclass_registers(self):
            class Upper(Plugin):
                def run(self, text):
                    return text.upper()

            self.assertIn("Upper", Plugin.registry)
            self.assertEqual(apply_all([Upper()], "abc"), "ABC")


    if __name__ == "__main__":
        unittest.main()
""", wrong={"no_registry": """
    class Plugin:
        registry = []

        def run(self, text):
            raise NotImplementedError


    def apply_all(plugins, text):
        for p in plugins:
            text = p.run(text)
        return text
"""})


# ------------------------------------------------------------------------------------------ MBPP asserts

asserts("remove_odd", "def remove_odd(l):\n    return [x for x in l if x % 2 == 0]\n",
        ["assert remove_odd([1,2,3]) == [2]", "assert remove_odd([2,4,6]) == [2,4,6]", "assert remove_odd([10,20,3]) == [10,20]"],
        wrong={"inplace": "def remove_odd(l):\n    for i in l:\n        if i % 2 != 0:\n            l.remove(i)\n    return l\n"})
asserts("triangle_area", "import math\ndef area_triangle(a, b, c):\n    s = (a + b + c) / 2\n    return math.sqrt(s * (s - a) * (s - b) * (s - c))\n",
        ["assert abs(area_triangle(3, 4, 5) - 6.0) < 1e-6", "assert math.isclose(area_triangle(5, 5, 6), 12.0)",
         "assert round(area_triangle(7, 8, 9), 2) == 26.83"], imports=["import math"],
        wrong={"half": "def area_triangle(a, b, c):\n    return a * b / 2\n"})
asserts("find_pairs", "def find_pairs(nums, target):\n    return {(a, b) for a in nums for b in nums if a + b == target and a != b}\n",
        ["assert set(find_pairs([1, 2, 3], 3)) == {(1, 2), (2, 1)}", "assert find_pairs([5], 10) == set()",
         "assert len(find_pairs([1, 2, 3, 4], 5)) == 4"],
        wrong={"list": "def find_pairs(nums, target):\n    return [(a, b) for a in nums for b in nums if a != b and a + b == target]\n",
               "ordered": "def find_pairs(nums, target):\n    return {(a, b) for a in nums for b in nums if a < b and a + b == target}\n"})
asserts("str_to_tuple", "def str_to_tuple(s):\n    return tuple(int(x) for x in s.split(', '))\n",
        ["assert str_to_tuple(\"1, -5, 4, 6, 7\") == (1, -5, 4, 6, 7)", "assert str_to_tuple(\"1, 2, 3, 4, 5\") == (1, 2, 3, 4, 5)",
         "assert str_to_tuple(\"4, 6, 9, 11, 13, 14\") == (4, 6, 9, 11, 13, 14)"],
        wrong={"list": "def str_to_tuple(s):\n    return [int(x) for x in s.split(', ')]\n",
               "strings": "def str_to_tuple(s):\n    return tuple(s.split(', '))\n"})
asserts("is_diff", "def is_Diff(n):\n    return n % 11 == 0\n",
        ["assert is_Diff (12345) == False", "assert is_Diff(1212112) == True", "assert is_Diff(1212) == False"],
        wrong={"int": "def is_Diff(n):\n    return n % 11\n"})
asserts("text_match", "import re\ndef text_match(text):\n    if re.search('ab*?', text):\n        return 'Found a match!'\n    else:\n        return 'Not matched!'\n",
        ["assert text_match(\"ac\")==('Found a match!')", "assert text_match(\"dc\")==('Not matched!')",
         "assert text_match(\"abbbba\")==('Found a match!')"],
        wrong={"fullmatch": "import re\ndef text_match(text):\n    return 'Found a match!' if re.fullmatch('ab*', text) else 'Not matched!'\n"})
asserts("max_chain", """
    class Pair(object):
        def __init__(self, a, b):
            self.a = a
            self.b = b


    def max_chain_length(arr, n):
        arr = sorted(arr, key=lambda p: p.b)
        count, end = 0, float('-inf')
        for p in arr:
            if p.a > end:
                count += 1
                end = p.b
        return count
""", ["assert max_chain_length([Pair(5, 24), Pair(15, 25),Pair(27, 40), Pair(50, 60)], 4) == 3",
      "assert max_chain_length([Pair(1, 2), Pair(3, 4),Pair(5, 6), Pair(7, 8)], 4) == 4",
      "assert max_chain_length([Pair(19, 10), Pair(11, 12),Pair(13, 14), Pair(15, 16), Pair(31, 54)], 5) == 5"],
    wrong={"by_start": """
    class Pair(object):
        def __init__(self, a, b):
            self.a = a
            self.b = b


    def max_chain_length(arr, n):
        arr = sorted(arr, key=lambda p: p.a)
        count, end = 0, float('-inf')
        for p in arr:
            if p.a > end:
                count += 1
                end = p.b
        return count
"""})
asserts("fib_big", "def fib(n):\n    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a\n",
        ["assert fib(100) == 354224848179261915075", "assert fib(0) == 0", "assert str(fib(500)).startswith('1394232245')"],
        wrong={"float": "def fib(n):\n    phi = (1 + 5 ** 0.5) / 2\n    return round(phi ** n / 5 ** 0.5)\n"})
asserts("first_non_repeating", "def first_non_repeating(s):\n    for c in s:\n        if s.count(c) == 1:\n            return c\n    return None\n",
        ["assert first_non_repeating('aabb') is None", "assert first_non_repeating('abcab') == 'c'",
         "assert first_non_repeating('') == None"],
        wrong={"empty_string": "def first_non_repeating(s):\n    for c in s:\n        if s.count(c) == 1:\n            return c\n    return ''\n"})
asserts("sort_sublists", "def sort_sublists(lists):\n    return [sorted(x) for x in lists]\n",
        ["assert sort_sublists([['green', 'orange'], ['black', 'white'], ['white', 'black', 'orange']])==[['green', 'orange'], ['black', 'white'], ['black', 'orange', 'white']]",
         "assert sort_sublists(([' red ','green'],['blue ',' black'],[' orange','brown']))==[[' red ', 'green'], [' black', 'blue '], [' orange', 'brown']]",
         "assert sort_sublists(([\"zilver\",\"gold\"], [\"magnesium\",\"aluminium\"], [\"steel\", \"bronze\"]))==[['gold', 'zilver'],['aluminium', 'magnesium'], ['bronze', 'steel']]"],
        right={"map": "def sort_sublists(input_list):\n    result = list(map(sorted, input_list))\n    return result\n"},
        wrong={"strip": "def sort_sublists(lists):\n    return [sorted(x, key=str.strip) for x in lists]\n"})
asserts("to_bytes", "def xor_bytes(data, key):\n    return bytes(b ^ key[i % len(key)] for i, b in enumerate(data))\n",
        ["assert xor_bytes(b'abc', b'k') == b'\\n\\t\\x08'", "assert xor_bytes(xor_bytes(b'hello', b'key'), b'key') == b'hello'",
         "assert isinstance(xor_bytes(b'', b'x'), bytes)"],
        wrong={"bytearray_str": "def xor_bytes(data, key):\n    return ''.join(chr(b ^ key[i % len(key)]) for i, b in enumerate(data))\n"})
asserts("nested_tuple_setup", "def count_in_tree(tree, value):\n    if tree is None:\n        return 0\n    return (tree.val == value) + count_in_tree(tree.left, value) + count_in_tree(tree.right, value)\n",
        ["assert count_in_tree(root, 1) == 2", "assert count_in_tree(root, 9) == 0", "assert count_in_tree(None, 1) == 0"],
        setup="""
            class Node:
                def __init__(self, val, left=None, right=None):
                    self.val, self.left, self.right = val, left, right
            root = Node(1, Node(2, Node(1)), Node(3))
        """,
        wrong={"root_only": "def count_in_tree(tree, value):\n    return int(tree is not None and tree.val == value)\n"})


# ------------------------------------------------------------------------------------------ HumanEval check()

check("he_sort_even", "sort_even", '''
    def sort_even(l: list):
        """Return l with the values at even indices sorted, odd indices unchanged."""
''', """
    def sort_even(l: list):
        evens = sorted(l[::2])
        out = list(l)
        out[::2] = evens
        return out
""", """
    METADATA = {'author': 'heldout', 'dataset': 'test'}


    def check(candidate):
        assert tuple(candidate([1, 2, 3])) == tuple([1, 2, 3])
        assert tuple(candidate([5, 3, -5, 2, -3, 3, 9, 0, 123, 1, -10])) == tuple([-10, 3, -5, 2, -3, 3, 5, 0, 9, 1, 123])
        assert candidate([]) == []
        for n in range(1, 8):
            l = list(range(n, 0, -1))
            assert candidate(l)[1::2] == l[1::2]
""", wrong={"all_sorted": "def sort_even(l):\n    return sorted(l)\n"})
check("he_mean_abs_dev", "mean_absolute_deviation", '''
    from typing import List


    def mean_absolute_deviation(numbers: List[float]) -> float:
        """Mean absolute deviation around the mean."""
''', """
    from typing import List


    def mean_absolute_deviation(numbers: List[float]) -> float:
        mean = sum(numbers) / len(numbers)
        return sum(abs(x - mean) for x in numbers) / len(numbers)
""", """
    import math


    def check(candidate):
        assert abs(candidate([1.0, 2.0, 3.0]) - 2.0/3.0) < 1e-6
        assert abs(candidate([1.0, 2.0, 3.0, 4.0]) - 1.0) < 1e-6
        assert math.isclose(candidate([1.0, 2.0, 3.0, 4.0, 5.0]), 6.0/5.0, rel_tol=1e-9)
        assert candidate([7.0]) == 0.0, "single element"
""", wrong={"median": "import statistics\ndef mean_absolute_deviation(numbers):\n    m = statistics.median(numbers)\n    return sum(abs(x - m) for x in numbers) / len(numbers)\n"})
check("he_unique_sorted", "unique", '''
    def unique(l: list):
        """Return sorted unique elements in a list."""
''', "def unique(l: list):\n    return sorted(set(l))\n", """
    def check(candidate):
        assert candidate([5, 3, 5, 2, 3, 3, 9, 0, 123]) == [0, 2, 3, 5, 9, 123]
        assert candidate([]) == []
        assert set(candidate(['b', 'a', 'b'])) == {'a', 'b'}
        assert True, "This prints if this assert fails 1 (good for debugging!)"
        assert candidate(list(range(1000, 0, -1)))[:3] == [1, 2, 3]
""", right={"dict": "def unique(l):\n    return sorted(dict.fromkeys(l))\n"},
    wrong={"set": "def unique(l):\n    return list(set(l))\n"})
check("he_parse_music", "parse_music", '''
    from typing import List


    def parse_music(music_string: str) -> List[int]:
        """'o' is 4 beats, 'o|' is 2, '.|' is 1."""
''', """
    from typing import List


    def parse_music(music_string: str) -> List[int]:
        beats = {'o': 4, 'o|': 2, '.|': 1}
        return [beats[x] for x in music_string.split(' ') if x]
""", """
    def check(candidate):
        assert candidate('') == []
        assert candidate('o o o o') == [4, 4, 4, 4]
        assert candidate('.| .| .| .|') == [1, 1, 1, 1]
        assert candidate('o| o| .| .| o o o o') == [2, 2, 1, 1, 4, 4, 4, 4]
        assert candidate('o| .| o| .| o o| o o|') == [2, 1, 2, 1, 4, 2, 4, 2]
""", wrong={"swap": "def parse_music(music_string):\n    beats = {'o': 4, 'o|': 1, '.|': 2}\n    return [beats[x] for x in music_string.split()]\n"})
check("he_helper_in_check", "encode_shift", '''
    def encode_shift(s: str):
        """Shift every lowercase letter by 5 in the alphabet."""
''', "def encode_shift(s: str):\n    return ''.join(chr(((ord(ch) + 5 - ord('a')) % 26) + ord('a')) for ch in s)\n", """
    from random import randint, choice
    import string


    def check(candidate):
        def decode(s):
            return ''.join(chr(((ord(ch) - 5 - ord('a')) % 26) + ord('a')) for ch in s)

        import random
        random.seed(11)
        letters = string.ascii_lowercase
        for _ in range(50):
            word = ''.join(choice(letters) for _ in range(randint(10, 20)))
            assert decode(candidate(word)) == word
        assert candidate('xyz') == 'cde'
""", wrong={"no_wrap": "def encode_shift(s):\n    return ''.join(chr(ord(ch) + 5) for ch in s)\n"})
check("he_float_str", "format_ratio", '''
    def format_ratio(a: int, b: int) -> str:
        """a / b as a percentage with one decimal, or 'n/a' when b is 0."""
''', "def format_ratio(a: int, b: int) -> str:\n    if b == 0:\n        return 'n/a'\n    return f'{100 * a / b:.1f}%'\n", """
    def check(candidate):
        assert candidate(1, 3) == '33.3%'
        assert candidate(2, 3) == '66.7%'
        assert candidate(0, 0) == 'n/a'
        assert candidate(5, 5) == '100.0%'
        assert candidate(1, 8) == '12.5%'
""", wrong={"round_half_up": "def format_ratio(a, b):\n    if not b:\n        return 'n/a'\n    return str(round(100 * a / b, 1)) + '%'\n",
            "none": "def format_ratio(a, b):\n    if b:\n        return f'{100 * a / b:.1f}%'\n"})


# ------------------------------------------------------------------------------------------ stdio

stdio("multi_case_pointer", """
    import sys


    def main():
        data = sys.stdin.read().split()
        idx = 0
        t = int(data[idx]); idx += 1
        out = []
        for _ in range(t):
            n, k = int(data[idx]), int(data[idx + 1]); idx += 2
            a = list(map(int, data[idx:idx + n])); idx += n
            a.sort(reverse=True)
            out.append(str(sum(a[:k])))
        sys.stdout.write("\\n".join(out) + "\\n")


    main()
""", [("3\n5 2\n1 9 3 7 5\n3 3\n-1 -2 -3\n1 1\n1000000000\n", "16\n-6\n1000000000\n"),
      ("1\n4 1\n  4   4 4 4  \n", "4\n")],
    wrong={"ascending": "import sys\nd = sys.stdin.read().split()\nt = int(d[0]); i = 1\nfor _ in range(t):\n    n, k = int(d[i]), int(d[i+1]); i += 2\n    a = sorted(map(int, d[i:i+n])); i += n\n    print(sum(a[:k]))\n"})
stdio("eof_loop", """
    while True:
        try:
            line = input()
        except EOFError:
            break
        if not line.strip():
            continue
        a, b = map(int, line.split())
        print(a + b)
""", [("1 2\n3 4\n\n10 -10\n", "3\n7\n0\n"), ("5 5", "10\n")],
    right={"stdin_iter": "import sys\nfor line in sys.stdin:\n    if line.strip():\n        print(sum(map(int, line.split())))\n"},
    wrong={"first_only": "a, b = map(int, input().split())\nprint(a + b)\n"})
stdio("case_numbers", """
    T = int(input())
    for case in range(1, T + 1):
        n = int(input())
        words = input().split()
        print("Case #%d: %s" % (case, " ".join(reversed(words))))
""", [("2\n3\nthis is test\n1\nfoobar\n", "Case #1: test is this\nCase #2: foobar\n")],
    right={"fstring": "for i in range(int(input())):\n    input()\n    print(f'Case #{i + 1}:', *input().split()[::-1])\n"},
    wrong={"zero_based": "for i in range(int(input())):\n    input()\n    print(f'Case #{i}:', *input().split()[::-1])\n",
           "no_space": "for i in range(int(input())):\n    input()\n    print(f'Case #{i + 1}:' + ' '.join(input().split()[::-1]))\n"})
stdio("precision_mean", """
    n = int(input())
    xs = list(map(float, input().split()))
    mean = sum(xs) / n
    var = sum((x - mean) ** 2 for x in xs) / n
    print("%.6f %.6f" % (mean, var ** 0.5))
""", [("3\n1 2 3\n", "2.000000 0.816497\n"), ("1\n5\n", "5.000000 0.000000\n"), ("4\n1.5 2.5 3.5 4.5\n", "3.000000 1.118034\n")],
    right={"statistics": "import statistics\ninput()\nxs = [float(x) for x in input().split()]\nprint('{:.10f} {:.10f}'.format(statistics.fmean(xs), statistics.pstdev(xs)))\n"},
    wrong={"sample_std": "import statistics\nn = int(input())\nxs = list(map(float, input().split()))\nprint('%.6f %.6f' % (sum(xs) / n, statistics.stdev(xs) if n > 1 else 0))\n",
           "two_digits": "n = int(input())\nxs = list(map(float, input().split()))\nm = sum(xs) / n\nprint('%.2f %.2f' % (m, (sum((x - m) ** 2 for x in xs) / n) ** 0.5))\n"})
stdio("sep_end", """
    n = int(input())
    print(*range(1, n + 1), sep=",")
    print("done", end="")
""", [("3\n", "1,2,3\ndone"), ("1\n", "1\ndone\n")],
    wrong={"spaces": "n = int(input())\nprint(*range(1, n + 1))\nprint('done')\n"})
_BIG_N = 100000
_BIG = [(i * 7919) % 1000003 - 500000 for i in range(_BIG_N)]


def _kadane(a):
    best = cur = a[0]
    for x in a[1:]:
        cur = max(x, cur + x)
        best = max(best, cur)
    return best


stdio("big_input", """
    import sys
    input = sys.stdin.readline
    n = int(input())
    a = list(map(int, input().split()))
    best = cur = a[0]
    for x in a[1:]:
        cur = max(x, cur + x)
        best = max(best, cur)
    print(best)
""", [(f"{_BIG_N}\n" + " ".join(map(str, _BIG)) + "\n", f"{_kadane(_BIG)}\n"), ("5\n-2 1 -3 4 -1\n", "4\n"), ("1\n-7\n", "-7\n")],
    wrong={"zero_floor": "n = int(input())\na = list(map(int, input().split()))\nbest = cur = 0\nfor x in a:\n    cur = max(0, cur + x)\n    best = max(best, cur)\nprint(best)\n"})
stdio("yes_no_grid", """
    from collections import deque
    import sys


    def solve():
        it = iter(sys.stdin.read().split("\\n"))
        t = int(next(it))
        for _ in range(t):
            n, m = map(int, next(it).split())
            grid = [next(it).strip() for _ in range(n)]
            seen = [[False] * m for _ in range(n)]
            q = deque()
            if grid[0][0] == ".":
                q.append((0, 0))
                seen[0][0] = True
            while q:
                r, c = q.popleft()
                for dr, dc in ((1, 0), (-1, 0), (0, 1), (0, -1)):
                    nr, nc = r + dr, c + dc
                    if 0 <= nr < n and 0 <= nc < m and not seen[nr][nc] and grid[nr][nc] == ".":
                        seen[nr][nc] = True
                        q.append((nr, nc))
            print("YES" if seen[n - 1][m - 1] else "NO")


    solve()
""", [("2\n2 2\n.#\n..\n2 2\n.#\n#.\n", "YES\nNO\n"), ("1\n1 3\n...\n", "YES\n"), ("1\n1 1\n#\n", "NO\n")],
    wrong={"lower": "import sys\nlines = sys.stdin.read().split()\nt = int(lines[0])\nfor _ in range(t):\n    print('yes')\n"})
stdio("deep_recursion", """
    import sys
    sys.setrecursionlimit(20000)


    def depth(n):
        return 0 if n == 0 else 1 + depth(n - 1)


    print(depth(int(input())))
""", [("5000\n", "5000\n"), ("0\n", "0\n")],
    wrong={"off": "import sys\nsys.setrecursionlimit(20000)\ndef depth(n):\n    return 1 if n <= 1 else 1 + depth(n - 1)\nprint(depth(int(input())))\n"})
stdio("big_power", "n = int(input())\nprint(2 ** n)\nprint(len(str(2 ** n)))\n",
      [("1000\n", str(2 ** 1000) + "\n302\n"), ("0\n", "1\n1\n")],
      wrong={"float": "n = int(input())\nprint(int(2.0 ** n))\nprint(len(str(int(2.0 ** n))))\n"})
stdio("trailing_ws_expected", """
    n = int(input())
    for i in range(1, n + 1):
        print(" ".join("*" * i))
""", [("3\n", "* \n* * \n* * * \n\n"), ("1\n", "*")],
    wrong={"no_sep": "n = int(input())\nfor i in range(1, n + 1):\n    print('*' * i)\n"})


# ------------------------------------------------------------------------------------------ call

call("lc_two_sum", """
    class Solution:
        def twoSum(self, nums: List[int], target: int) -> List[int]:
            seen = {}
            for i, n in enumerate(nums):
                if target - n in seen:
                    return [seen[target - n], i]
                seen[n] = i
            return []
""", "twoSum", [([[2, 7, 11, 15], 9], [0, 1]), ([[3, 2, 4], 6], [1, 2]), ([[3, 3], 6], [0, 1])],
    wrong={"swapped": "class Solution:\n    def twoSum(self, nums, target):\n        seen = {}\n        for i, n in enumerate(nums):\n            if target - n in seen:\n                return [i, seen[target - n]]\n            seen[n] = i\n"})
call("lc_valid_parens", """
    class Solution:
        def isValid(self, s: str) -> bool:
            pairs = {')': '(', ']': '[', '}': '{'}
            stack = []
            for ch in s:
                if ch in pairs:
                    if not stack or stack.pop() != pairs[ch]:
                        return False
                else:
                    stack.append(ch)
            return not stack
""", "isValid", [(["()[]{}"], True), (["(]"], False), (["(("], False), ([""], True)],
    wrong={"count_only": "class Solution:\n    def isValid(self, s):\n        return s.count('(') == s.count(')') and s.count('[') == s.count(']')\n"})
call("cw_digital_root", """
    def digital_root(n):
        while n >= 10:
            n = sum(int(d) for d in str(n))
        return n
""", "digital_root", [([16], 7), ([942], 6), ([132189], 6), ([493193], 2), ([0], 0)],
    right={"formula": "def digital_root(n):\n    return 0 if n == 0 else 1 + (n - 1) % 9\n"},
    wrong={"one_pass": "def digital_root(n):\n    return sum(int(d) for d in str(n))\n"})
call("lc_group_anagrams", """
    from collections import defaultdict


    class Solution:
        def groupAnagrams(self, strs: List[str]) -> List[List[str]]:
            groups = defaultdict(list)
            for s in strs:
                groups[''.join(sorted(s))].append(s)
            return list(groups.values())
""", "groupAnagrams", [([["eat", "tea", "tan", "ate", "nat", "bat"]], [["eat", "tea", "ate"], ["tan", "nat"], ["bat"]]),
                      ([[""]], [[""]]), ([["a"]], [["a"]])],
    wrong={"sorted_groups": "class Solution:\n    def groupAnagrams(self, strs):\n        g = {}\n        for s in strs:\n            g.setdefault(''.join(sorted(s)), []).append(s)\n        return sorted(sorted(v) for v in g.values())\n"})
call("cw_float_avg", """
    def find_average(nums):
        return sum(nums) / len(nums) if nums else 0
""", "find_average", [([[1, 2, 3]], 2), ([[1.5, 2.5]], 2.0), ([[]], 0)],
    wrong={"int_div": "def find_average(nums):\n    return sum(nums) // len(nums) if nums else 0\n"})
call("cw_tuple_result", """
    def min_max(lst):
        return [min(lst), max(lst)]
""", "min_max", [([[1, 2, 3, 4, 5]], [1, 5]), ([[2334454, 5]], [5, 2334454]), ([[1]], [1, 1])],
    right={"tuple": "def min_max(lst):\n    return min(lst), max(lst)\n"},
    wrong={"sorted_full": "def min_max(lst):\n    return sorted(lst)\n"})


programs = FAMILY.programs

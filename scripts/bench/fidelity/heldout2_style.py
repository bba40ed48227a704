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
preprocessor's converters (data/formats/), as in the other families.
"""

from __future__ import annotations

from scripts.bench.fidelity.written import WrittenFamily

FAMILY = WrittenFamily("heldout2")
TASKS, ut, asserts, check, stdio, call = (FAMILY.tasks, FAMILY.ut, FAMILY.asserts, FAMILY.check, FAMILY.stdio,
                                          FAMILY.call)


# ------------------------------------------------------------------------------------------ unittest

ut("fixtures_and_helpers", """
    def merge_intervals(intervals):
        out = []
        for start, end in sorted(intervals):
            if out and start <= out[-1][1]:
                out[-1][1] = max(out[-1][1], end)
            else:
                out.append([start, end])
        return out
""", """
    import unittest
    from solution import merge_intervals

    # Test fixtures
    OVERLAPPING = [[1, 3], [2, 6], [8, 10], [15, 18]]
    TOUCHING = [[1, 4], [4, 5]]
    EXPECTED = {
        "overlapping": [[1, 6], [8, 10], [15, 18]],
        "touching": [[1, 5]],
    }


    def is_sorted_disjoint(intervals):
        return all(a[1] < b[0] for a, b in zip(intervals, intervals[1:]))


    def test_pytest_style_is_not_collected():
        assert merge_intervals([]) == ["never checked by unittest"]


    class TestMergeIntervals(unittest.TestCase):
        def assertMerged(self, given, expected):
            result = merge_intervals(given)
            self.assertEqual(result, expected)
            self.assertTrue(is_sorted_disjoint(result))

        def test_overlapping(self):
            self.assertMerged(OVERLAPPING, EXPECTED["overlapping"])

        def test_touching(self):
            self.assertMerged(TOUCHING, EXPECTED["touching"])

        def test_unsorted_input(self):
            self.assertMerged([[8, 10], [1, 3], [2, 6]], [[1, 6], [8, 10]])

        def test_empty(self):
            self.assertEqual(merge_intervals([]), [])

        def test_does_not_mutate_fixture(self):
            before = [list(x) for x in OVERLAPPING]
            merge_intervals(OVERLAPPING)
            self.assertEqual(OVERLAPPING, before)
""", right={"copying": """
    def merge_intervals(intervals):
        out = []
        for s, e in sorted(map(tuple, intervals)):
            if out and s <= out[-1][1]:
                out[-1] = [out[-1][0], max(out[-1][1], e)]
            else:
                out.append([s, e])
        return out
"""}, wrong={"mutates": """
    def merge_intervals(intervals):
        intervals.sort()
        out = []
        for iv in intervals:
            if out and iv[0] <= out[-1][1]:
                out[-1][1] = max(out[-1][1], iv[1])
            else:
                out.append(iv)
        return out
""", "strict_touch": """
    def merge_intervals(intervals):
        out = []
        for start, end in sorted(intervals):
            if out and start < out[-1][1]:
                out[-1][1] = max(out[-1][1], end)
            else:
                out.append([start, end])
        return out
"""})

ut("inherited_setup", """
    class Cart:
        TAX = 0.1

        def __init__(self, owner):
            self.owner = owner
            self.items = {}

        def add(self, name, price, qty=1):
            if price < 0 or qty <= 0:
                raise ValueError("bad item")
            p, q = self.items.get(name, (price, 0))
            self.items[name] = (price, q + qty)

        def remove(self, name):
            del self.items[name]

        def subtotal(self):
            return sum(p * q for p, q in self.items.values())

        def total(self):
            return round(self.subtotal() * (1 + self.TAX), 2)
""", """
    import unittest
    from solution import Cart


    class CartTestBase(unittest.TestCase):
        owner = "ann"
        prices = {"apple": 0.5, "pear": 0.75}

        def setUp(self):
            self.cart = Cart(self.owner)
            for name, price in self.prices.items():
                self.cart.add(name, price, 2)


    class TestCartBasics(CartTestBase):
        def test_owner(self):
            self.assertEqual(self.cart.owner, "ann")

        def test_subtotal(self):
            self.assertAlmostEqual(self.cart.subtotal(), 2.5)

        def test_add_accumulates(self):
            self.cart.add("apple", 0.5, 3)
            self.assertEqual(self.cart.items["apple"], (0.5, 5))


    class TestCartTotals(CartTestBase):
        owner = "bob"
        prices = {"melon": 3.0}

        def test_owner_overridden(self):
            self.assertEqual(self.cart.owner, "bob")

        def test_total_with_tax(self):
            self.assertEqual(self.cart.total(), 6.6)

        def test_remove(self):
            self.cart.remove("melon")
            self.assertEqual(self.cart.subtotal(), 0)
            with self.assertRaises(KeyError):
                self.cart.remove("melon")

        def test_invalid(self):
            with self.assertRaises(ValueError):
                self.cart.add("x", -1)
            with self.assertRaises(ValueError):
                self.cart.add("x", 1, 0)


    class TestClassTax(CartTestBase):
        def test_tax_is_class_attribute(self):
            self.assertEqual(Cart.TAX, 0.1)
            self.assertEqual(self.cart.TAX, 0.1)
""", wrong={"replace_qty": """
    class Cart:
        TAX = 0.1

        def __init__(self, owner):
            self.owner = owner
            self.items = {}

        def add(self, name, price, qty=1):
            if price < 0 or qty <= 0:
                raise ValueError("bad item")
            self.items[name] = (price, qty)

        def remove(self, name):
            del self.items[name]

        def subtotal(self):
            return sum(p * q for p, q in self.items.values())

        def total(self):
            return round(self.subtotal() * (1 + self.TAX), 2)
""", "remove_silent": """
    class Cart:
        TAX = 0.1

        def __init__(self, owner):
            self.owner = owner
            self.items = {}

        def add(self, name, price, qty=1):
            if price < 0 or qty <= 0:
                raise ValueError("bad item")
            p, q = self.items.get(name, (price, 0))
            self.items[name] = (price, q + qty)

        def remove(self, name):
            self.items.pop(name, None)

        def subtotal(self):
            return sum(p * q for p, q in self.items.values())

        def total(self):
            return round(self.subtotal() * (1 + self.TAX), 2)
"""})

ut("nested_float_stats", """
    def group_stats(rows):
        groups = {}
        for key, value in rows:
            groups.setdefault(key, []).append(value)
        out = {}
        for key, vals in groups.items():
            mean = sum(vals) / len(vals)
            var = sum((v - mean) ** 2 for v in vals) / len(vals)
            out[key] = {"mean": mean, "std": var ** 0.5, "values": sorted(vals)}
        return out
""", """
    import math
    import unittest
    from solution import group_stats

    ROWS = [("a", 0.1), ("a", 0.2), ("b", 1.0), ("a", 0.3), ("b", 3.0)]


    class TestGroupStats(unittest.TestCase):
        def setUp(self):
            self.stats = group_stats(ROWS)

        def test_keys(self):
            self.assertEqual(sorted(self.stats), ["a", "b"])
            self.assertIsInstance(self.stats["a"], dict)

        def test_means_almost_equal(self):
            expected = {"a": 0.2, "b": 2.0}
            for key, mean in expected.items():
                self.assertAlmostEqual(self.stats[key]["mean"], mean, places=9)

        def test_std(self):
            self.assertAlmostEqual(self.stats["a"]["std"], math.sqrt(2 / 3) / 10, delta=1e-12)
            self.assertEqual(self.stats["b"]["std"], 1.0)

        def test_values_nested(self):
            for got, want in zip(self.stats["a"]["values"], [0.1, 0.2, 0.3]):
                self.assertAlmostEqual(got, want)
            self.assertEqual(self.stats["b"], {"mean": 2.0, "std": 1.0, "values": [1.0, 3.0]})

        def test_not_exact_float(self):
            self.assertNotEqual(self.stats["a"]["mean"], 0.2)
""", wrong={"sample_std": """
    def group_stats(rows):
        groups = {}
        for key, value in rows:
            groups.setdefault(key, []).append(value)
        out = {}
        for key, vals in groups.items():
            mean = sum(vals) / len(vals)
            var = sum((v - mean) ** 2 for v in vals) / max(1, len(vals) - 1)
            out[key] = {"mean": mean, "std": var ** 0.5, "values": sorted(vals)}
        return out
""", "unsorted": """
    def group_stats(rows):
        groups = {}
        for key, value in rows:
            groups.setdefault(key, []).append(value)
        out = {}
        for key, vals in groups.items():
            mean = round(sum(vals) / len(vals), 6)
            var = sum((v - mean) ** 2 for v in vals) / len(vals)
            out[key] = {"mean": mean, "std": var ** 0.5, "values": vals}
        return out
"""})

ut("exception_hierarchy", """
    class ConfigError(Exception):
        pass


    class MissingKey(ConfigError, KeyError):
        def __init__(self, key):
            super().__init__(key)
            self.key = key


    class BadValue(ConfigError, ValueError):
        pass


    def parse_config(text):
        out = {}
        for n, line in enumerate(text.splitlines(), 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            if "=" not in line:
                raise ConfigError(f"line {n}: no '='")
            k, v = (s.strip() for s in line.split("=", 1))
            if not v:
                raise BadValue(f"line {n}: empty value for {k}")
            out[k] = v
        for required in ("name", "port"):
            if required not in out:
                raise MissingKey(required)
        if not out["port"].isdigit():
            raise BadValue("port must be numeric")
        out["port"] = int(out["port"])
        return out
""", """
    import unittest
    from solution import parse_config, ConfigError, MissingKey, BadValue


    class TestParseConfig(unittest.TestCase):
        def test_ok(self):
            cfg = parse_config("# c\\nname = web\\nport=8080\\n")
            self.assertEqual(cfg, {"name": "web", "port": 8080})

        def test_missing_key_is_config_and_key_error(self):
            with self.assertRaises(MissingKey) as cm:
                parse_config("name=x")
            self.assertEqual(cm.exception.key, "port")
            self.assertIsInstance(cm.exception, ConfigError)
            self.assertIsInstance(cm.exception, KeyError)

        def test_caught_by_base(self):
            for text in ("name=x\\nport=", "garbage", "port=1"):
                with self.subTest(text=text):
                    with self.assertRaises(ConfigError):
                        parse_config(text)

        def test_bad_value_is_value_error(self):
            with self.assertRaises(ValueError) as cm:
                parse_config("name=a\\nport=http")
            self.assertIn("numeric", str(cm.exception))
            self.assertTrue(issubclass(type(cm.exception), ConfigError))

        def test_except_clause_order(self):
            try:
                parse_config("name=a")
            except BadValue:
                self.fail("wrong class")
            except KeyError as e:
                self.assertEqual(e.args, ("port",))
""", wrong={"flat": """
    class ConfigError(Exception):
        pass


    class MissingKey(ConfigError):
        def __init__(self, key):
            super().__init__(key)
            self.key = key


    class BadValue(ConfigError):
        pass


    def parse_config(text):
        out = {}
        for n, line in enumerate(text.splitlines(), 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            if "=" not in line:
                raise ConfigError(f"line {n}: no '='")
            k, v = (s.strip() for s in line.split("=", 1))
            if not v:
                raise BadValue(f"line {n}: empty value for {k}")
            out[k] = v
        for required in ("name", "port"):
            if required not in out:
                raise MissingKey(required)
        if not out["port"].isdigit():
            raise BadValue("port must be numeric")
        out["port"] = int(out["port"])
        return out
""", "plain_keyerror": """
    class ConfigError(Exception):
        pass


    class MissingKey(ConfigError, KeyError):
        def __init__(self, key):
            super().__init__(key)
            self.key = key


    class BadValue(ConfigError, ValueError):
        pass


    def parse_config(text):
        out = dict(line.split("=", 1) for line in text.splitlines() if "=" in line and not line.startswith("#"))
        out = {k.strip(): v.strip() for k, v in out.items()}
        if any(not v for v in out.values()):
            raise BadValue("empty")
        out["port"] = int(out["port"])
        out["name"]
        return out
"""})

ut("logs_own_logger", """
    import logging

    logger = logging.getLogger(__name__)


    def withdraw(balance, amount):
        if amount <= 0:
            logger.error("invalid amount %s", amount)
            return balance
        if amount > balance:
            logger.warning("insufficient funds: %s > %s", amount, balance)
            return balance
        logger.info("withdrew %s", amount)
        return balance - amount
""", """
    import logging
    import unittest
    from solution import withdraw


    class TestWithdrawLogging(unittest.TestCase):
        def test_warning_on_overdraft(self):
            with self.assertLogs("solution", level="WARNING") as cm:
                self.assertEqual(withdraw(10, 50), 10)
            self.assertEqual(cm.output, ["WARNING:solution:insufficient funds: 50 > 10"])

        def test_info_logged(self):
            with self.assertLogs(level="INFO") as cm:
                withdraw(10, 3)
            self.assertEqual(len(cm.records), 1)
            self.assertEqual(cm.records[0].levelname, "INFO")
            self.assertEqual(cm.records[0].getMessage(), "withdrew 3")

        def test_error_level(self):
            with self.assertLogs("solution") as cm:
                withdraw(5, -1)
            self.assertTrue(cm.output[0].startswith("ERROR:"))
            self.assertEqual(cm.records[0].name, "solution")

        def test_no_warning_when_ok(self):
            with self.assertLogs("solution", level="DEBUG") as cm:
                self.assertEqual(withdraw(10, 10), 0)
            self.assertNotIn("WARNING", " ".join(cm.output))
""", wrong={"root_logger": """
    import logging


    def withdraw(balance, amount):
        if amount <= 0:
            logging.error("invalid amount %s", amount)
            return balance
        if amount > balance:
            logging.warning("insufficient funds: %s > %s", amount, balance)
            return balance
        logging.info("withdrew %s", amount)
        return balance - amount
""", "strict_gt": """
    import logging

    logger = logging.getLogger(__name__)


    def withdraw(balance, amount):
        if amount <= 0:
            logger.error("invalid amount %s", amount)
            return balance
        if amount >= balance:
            logger.warning("insufficient funds: %s > %s", amount, balance)
            return balance
        logger.info("withdrew %s", amount)
        return balance - amount
"""})

ut("subtest_partial", """
    def is_leap(year):
        return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
""", """
    import unittest
    from solution import is_leap

    CASES = [(1996, True), (1900, False), (2000, True), (2023, False), (2400, True), (2100, False)]


    class TestLeap(unittest.TestCase):
        def test_table(self):
            for i, (year, expected) in enumerate(CASES):
                with self.subTest(i=i, year=year):
                    self.assertIs(is_leap(year), expected)

        def test_count_in_century(self):
            self.assertEqual(sum(map(is_leap, range(1901, 2001))), 25)

        def test_returns_bool(self):
            self.assertEqual(type(is_leap(2004)).__name__, "bool")
""", wrong={"no_400": "def is_leap(year):\n    return year % 4 == 0 and year % 100 != 0\n",
            "only_4": "def is_leap(year):\n    return year % 4 == 0\n",
            "int_result": "def is_leap(year):\n    return int(year % 4 == 0 and (year % 100 != 0 or year % 400 == 0))\n"})

ut("generator_consumers", """
    def primes():
        found = []
        n = 2
        while True:
            if all(n % p for p in found if p * p <= n):
                found.append(n)
                yield n
            n += 1


    def chunked(seq, size):
        for i in range(0, len(seq), size):
            yield seq[i:i + size]
""", """
    import itertools
    import types
    import unittest
    from solution import primes, chunked


    class TestGenerators(unittest.TestCase):
        def test_islice(self):
            self.assertEqual(list(itertools.islice(primes(), 8)), [2, 3, 5, 7, 11, 13, 17, 19])

        def test_zip_with_range(self):
            pairs = list(zip(range(4), primes()))
            self.assertEqual(pairs, [(0, 2), (1, 3), (2, 5), (3, 7)])

        def test_enumerate_start(self):
            for i, p in enumerate(primes(), start=1):
                if i == 10:
                    self.assertEqual(p, 29)
                    break

        def test_next_and_type(self):
            g = primes()
            self.assertIsInstance(g, types.GeneratorType)
            self.assertEqual(next(g), 2)
            self.assertEqual(next(g), 3)

        def test_chunked(self):
            self.assertEqual(list(chunked("abcdefg", 3)), ["abc", "def", "g"])
            self.assertEqual([len(c) for c in chunked(list(range(10)), 4)], [4, 4, 2])
            self.assertEqual(list(chunked([], 2)), [])

        def test_takewhile(self):
            self.assertEqual(sum(itertools.takewhile(lambda p: p < 50, primes())), 328)
""", wrong={"include_one": """
    def primes():
        n = 1
        while True:
            if all(n % d for d in range(2, int(n ** 0.5) + 1)):
                yield n
            n += 1


    def chunked(seq, size):
        for i in range(0, len(seq), size):
            yield seq[i:i + size]
""", "chunk_drop_tail": """
    def primes():
        found = []
        n = 2
        while True:
            if all(n % p for p in found if p * p <= n):
                found.append(n)
                yield n
            n += 1


    def chunked(seq, size):
        for i in range(0, len(seq) - size + 1, size):
            yield seq[i:i + size]
"""})

ut("dict_views_counter", """
    from collections import Counter


    def word_freq(text):
        words = [w.strip(".,!?").lower() for w in text.split()]
        return dict(Counter(w for w in words if w))


    def top_words(text, k):
        freq = word_freq(text)
        return sorted(freq, key=lambda w: (-freq[w], w))[:k]
""", """
    import unittest
    from collections import Counter
    from solution import word_freq, top_words

    TEXT = "The cat and the hat. The cat sat! And so?"


    class TestWordFreq(unittest.TestCase):
        def setUp(self):
            self.freq = word_freq(TEXT)

        def test_items_sorted_by_count(self):
            ranked = sorted(self.freq.items(), key=lambda kv: (-kv[1], kv[0]))
            self.assertEqual(ranked[:3], [("the", 3), ("and", 2), ("cat", 2)])

        def test_keys_view_as_set(self):
            self.assertEqual(set(self.freq.keys()), {"the", "cat", "and", "hat", "sat", "so"})
            self.assertTrue(self.freq.keys() >= {"cat", "hat"})

        def test_values(self):
            self.assertEqual(sum(self.freq.values()), 10)
            self.assertEqual(max(self.freq.values()), 3)

        def test_counter_of_result(self):
            self.assertEqual(Counter(self.freq), Counter(the=3, cat=2, And=0, **{"and": 2, "hat": 1, "sat": 1, "so": 1}))
            self.assertEqual(Counter(top_words(TEXT, 6))["cat"], 1)

        def test_top_words(self):
            self.assertEqual(top_words(TEXT, 2), ["the", "and"])
            self.assertEqual(top_words("", 3), [])

        def test_is_plain_dict(self):
            self.assertIs(type(self.freq), dict)
""", wrong={"case_sensitive": """
    from collections import Counter


    def word_freq(text):
        words = [w.strip(".,!?") for w in text.split()]
        return dict(Counter(w for w in words if w))


    def top_words(text, k):
        freq = word_freq(text)
        return sorted(freq, key=lambda w: (-freq[w], w))[:k]
""", "counter_type": """
    from collections import Counter


    def word_freq(text):
        return Counter(w for w in (x.strip(".,!?").lower() for x in text.split()) if w)


    def top_words(text, k):
        return [w for w, _ in word_freq(text).most_common(k)]
"""})

ut("str_repr_format", """
    class Temperature:
        def __init__(self, celsius):
            self.celsius = celsius

        @property
        def fahrenheit(self):
            return self.celsius * 9 / 5 + 32

        def __repr__(self):
            return f"Temperature({self.celsius!r})"

        def __str__(self):
            return f"{self.celsius:.1f}\\u00b0C"

        def __format__(self, spec):
            if spec == "F":
                return f"{self.fahrenheit:.1f}\\u00b0F"
            return format(str(self), spec)
""", """
    import unittest
    from solution import Temperature


    class TestTemperatureText(unittest.TestCase):
        def test_str(self):
            self.assertEqual(str(Temperature(21.456)), "21.5\\u00b0C")

        def test_repr(self):
            self.assertEqual(repr(Temperature(3)), "Temperature(3)")
            self.assertEqual(repr([Temperature(1), Temperature(2.5)]), "[Temperature(1), Temperature(2.5)]")

        def test_fstring(self):
            t = Temperature(100)
            self.assertEqual(f"{t}", "100.0\\u00b0C")
            self.assertEqual(f"{t!r}", "Temperature(100)")
            self.assertEqual(f"{t:F}", "212.0\\u00b0F")
            self.assertEqual(f"[{t:>8}]", "[ 100.0\\u00b0C]")

        def test_format_builtin(self):
            self.assertEqual(format(Temperature(-40), "F"), "-40.0\\u00b0F")
            self.assertEqual("{}|{!r}".format(Temperature(0), Temperature(0)), "0.0\\u00b0C|Temperature(0)")

        def test_property(self):
            self.assertAlmostEqual(Temperature(37).fahrenheit, 98.6)
""", wrong={"no_format": """
    class Temperature:
        def __init__(self, celsius):
            self.celsius = celsius

        @property
        def fahrenheit(self):
            return self.celsius * 9 / 5 + 32

        def __repr__(self):
            return f"Temperature({self.celsius!r})"

        def __str__(self):
            return f"{self.celsius:.1f}\\u00b0C"
""", "repr_is_str": """
    class Temperature:
        def __init__(self, celsius):
            self.celsius = celsius

        @property
        def fahrenheit(self):
            return self.celsius * 9 / 5 + 32

        def __str__(self):
            return f"{self.celsius:.1f}\\u00b0C"

        __repr__ = __str__

        def __format__(self, spec):
            if spec == "F":
                return f"{self.fahrenheit:.1f}\\u00b0F"
            return format(str(self), spec)
"""})

ut("json_deepcopy_cache", """
    _CACHE = {}


    def load_profile(user_id):
        if user_id not in _CACHE:
            _CACHE[user_id] = {"id": user_id, "tags": ["new"], "scores": {"math": 1.5}}
        return _CACHE[user_id]
""", """
    import copy
    import json
    import unittest
    from solution import load_profile


    class TestProfile(unittest.TestCase):
        def test_json_roundtrip(self):
            p = load_profile(7)
            text = json.dumps(p, sort_keys=True)
            self.assertEqual(text, '{"id": 7, "scores": {"math": 1.5}, "tags": ["new"]}')
            self.assertEqual(json.loads(text), p)

        def test_deepcopy_is_independent(self):
            p = load_profile(8)
            q = copy.deepcopy(p)
            q["tags"].append("changed")
            self.assertEqual(load_profile(8)["tags"], ["new"])
            self.assertIsNot(q, p)

        def test_cached_same_object(self):
            self.assertIs(load_profile(9), load_profile(9))

        def test_shallow_copy_shares(self):
            p = load_profile(10)
            c = copy.copy(p)
            c["tags"].append("shared")
            self.assertEqual(load_profile(10)["tags"], ["new", "shared"])
""", wrong={"fresh_each_time": """
    def load_profile(user_id):
        return {"id": user_id, "tags": ["new"], "scores": {"math": 1.5}}
""", "int_score": """
    _CACHE = {}


    def load_profile(user_id):
        if user_id not in _CACHE:
            _CACHE[user_id] = {"id": user_id, "tags": ["new"], "scores": {"math": 1}}
        return _CACHE[user_id]
"""})

ut("container_protocol", """
    class Playlist:
        def __init__(self, name, songs=None):
            self.name = name
            self._songs = list(songs or [])

        def add(self, song):
            self._songs.append(song)
            return self

        def __len__(self):
            return len(self._songs)

        def __iter__(self):
            return iter(self._songs)

        def __getitem__(self, index):
            if isinstance(index, slice):
                return Playlist(self.name, self._songs[index])
            return self._songs[index]

        def __bool__(self):
            return bool(self._songs)

        def __reversed__(self):
            return reversed(self._songs)
""", """
    import unittest
    from solution import Playlist


    class TestPlaylist(unittest.TestCase):
        def setUp(self):
            self.p = Playlist("mix", ["a", "b", "c"])

        def test_len_and_bool(self):
            self.assertEqual(len(self.p), 3)
            self.assertTrue(self.p)
            self.assertFalse(Playlist("empty"))
            if Playlist("e"):
                self.fail("empty playlist is truthy")

        def test_iteration(self):
            self.assertEqual(list(self.p), ["a", "b", "c"])
            self.assertEqual([s.upper() for s in self.p], ["A", "B", "C"])
            self.assertEqual(list(reversed(self.p)), ["c", "b", "a"])

        def test_indexing(self):
            self.assertEqual(self.p[0], "a")
            self.assertEqual(self.p[-1], "c")
            with self.assertRaises(IndexError):
                self.p[3]

        def test_slicing_returns_playlist(self):
            s = self.p[1:]
            self.assertIsInstance(s, Playlist)
            self.assertEqual(list(s), ["b", "c"])
            self.assertEqual(s.name, "mix")

        def test_chaining(self):
            self.assertIs(self.p.add("d"), self.p)
            self.assertEqual(len(self.p), 4)

        def test_in_via_iteration(self):
            self.assertIn("b", list(self.p))
            self.assertEqual(sorted(self.p, reverse=True), ["c", "b", "a"])
""", wrong={"slice_list": """
    class Playlist:
        def __init__(self, name, songs=None):
            self.name = name
            self._songs = list(songs or [])

        def add(self, song):
            self._songs.append(song)
            return self

        def __len__(self):
            return len(self._songs)

        def __iter__(self):
            return iter(self._songs)

        def __getitem__(self, index):
            return self._songs[index]
""", "shared_default": """
    class Playlist:
        def __init__(self, name, songs=[]):
            self.name = name
            self._songs = songs

        def add(self, song):
            self._songs.append(song)

        def __len__(self):
            return len(self._songs)

        def __iter__(self):
            return iter(self._songs)

        def __getitem__(self, index):
            if isinstance(index, slice):
                return Playlist(self.name, self._songs[index])
            return self._songs[index]
"""})

ut("numeric_tower", """
    from decimal import Decimal, ROUND_HALF_UP
    from fractions import Fraction


    def harmonic(n):
        return sum(Fraction(1, k) for k in range(1, n + 1))


    def money_split(total, parts):
        total = Decimal(total)
        share = (total / parts).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
        last = total - share * (parts - 1)
        return [share] * (parts - 1) + [last]


    def roots(a, b, c):
        d = (b * b - 4 * a * c) ** 0.5
        return ((-b + d) / (2 * a), (-b - d) / (2 * a))
""", """
    import math
    import unittest
    from decimal import Decimal
    from fractions import Fraction
    from solution import harmonic, money_split, roots


    class TestNumbers(unittest.TestCase):
        def test_fraction(self):
            h = harmonic(4)
            self.assertEqual(h, Fraction(25, 12))
            self.assertIsInstance(h, Fraction)
            self.assertEqual((h.numerator, h.denominator), (25, 12))
            self.assertAlmostEqual(float(h), 2.0833333333)

        def test_fraction_arithmetic(self):
            self.assertEqual(harmonic(2) - Fraction(1, 2), 1)
            self.assertLess(harmonic(3), 2)

        def test_decimal(self):
            parts = money_split("10.00", 3)
            self.assertEqual(parts, [Decimal("3.33"), Decimal("3.33"), Decimal("3.34")])
            self.assertEqual(sum(parts), Decimal("10.00"))
            self.assertEqual(str(parts[-1]), "3.34")

        def test_complex(self):
            r1, r2 = roots(1, 0, 1)
            self.assertIsInstance(r1, complex)
            self.assertTrue(math.isclose(r1.imag, 1.0))
            self.assertAlmostEqual(abs(r2), 1.0)
            self.assertEqual(roots(1, -3, 2), (2.0, 1.0))
""", wrong={"float_harmonic": """
    from decimal import Decimal, ROUND_HALF_UP
    from fractions import Fraction


    def harmonic(n):
        return sum(1 / k for k in range(1, n + 1))


    def money_split(total, parts):
        total = Decimal(total)
        share = (total / parts).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
        last = total - share * (parts - 1)
        return [share] * (parts - 1) + [last]


    def roots(a, b, c):
        d = (b * b - 4 * a * c) ** 0.5
        return ((-b + d) / (2 * a), (-b - d) / (2 * a))
""", "float_money": """
    from fractions import Fraction


    def harmonic(n):
        return sum(Fraction(1, k) for k in range(1, n + 1))


    def money_split(total, parts):
        share = round(float(total) / parts, 2)
        return [share] * (parts - 1) + [round(float(total) - share * (parts - 1), 2)]


    def roots(a, b, c):
        d = (b * b - 4 * a * c) ** 0.5
        return ((-b + d) / (2 * a), (-b - d) / (2 * a))
"""})

ut("bytes_codec", """
    def xor_bytes(data, key):
        return bytes(b ^ key[i % len(key)] for i, b in enumerate(data))


    def swap_nibbles(buf):
        for i, b in enumerate(buf):
            buf[i] = ((b & 0x0F) << 4) | (b >> 4)
        return None


    def checksum(data):
        return sum(data) & 0xFF
""", """
    import unittest
    from solution import xor_bytes, swap_nibbles, checksum


    class TestBytes(unittest.TestCase):
        def test_xor_roundtrip(self):
            enc = xor_bytes(b"hello", b"k")
            self.assertIsInstance(enc, bytes)
            self.assertEqual(xor_bytes(enc, b"k"), b"hello")
            self.assertEqual(enc.hex(), "030e070704")

        def test_indexing_bytes(self):
            enc = xor_bytes(b"ab", b"\\x01\\x02")
            self.assertEqual(enc[0], 0x60)
            self.assertEqual(list(enc), [96, 96])
            self.assertEqual(enc[:1], b"`")

        def test_swap_in_place(self):
            buf = bytearray(b"\\x12\\xab")
            self.assertIsNone(swap_nibbles(buf))
            self.assertEqual(buf, bytearray(b"\\x21\\xba"))

        def test_checksum(self):
            self.assertEqual(checksum(b"\\xff\\x02"), 1)
            self.assertEqual(checksum(bytearray(300)), 0)
""", wrong={"returns_copy": """
    def xor_bytes(data, key):
        return bytes(b ^ key[i % len(key)] for i, b in enumerate(data))


    def swap_nibbles(buf):
        buf = bytearray(((b & 0x0F) << 4) | (b >> 4) for b in buf)
        return None


    def checksum(data):
        return sum(data) & 0xFF
""", "bytearray_result": """
    def xor_bytes(data, key):
        return bytearray(b ^ key[i % len(key)] for i, b in enumerate(data))


    def swap_nibbles(buf):
        for i, b in enumerate(buf):
            buf[i] = ((b & 0x0F) << 4) | (b >> 4)


    def checksum(data):
        return sum(data) % 255
"""})

ut("datetime_arith", """
    from datetime import date, datetime, timedelta


    def add_business_days(start, days):
        current = start
        while days > 0:
            current += timedelta(days=1)
            if current.weekday() < 5:
                days -= 1
        return current


    def duration(start_iso, end_iso):
        return datetime.fromisoformat(end_iso) - datetime.fromisoformat(start_iso)
""", """
    import unittest
    from datetime import date, datetime, timedelta
    from solution import add_business_days, duration


    class TestDates(unittest.TestCase):
        def test_over_weekend(self):
            self.assertEqual(add_business_days(date(2024, 3, 8), 1), date(2024, 3, 11))

        def test_result_arithmetic(self):
            d = add_business_days(date(2024, 1, 1), 5)
            self.assertEqual(d - date(2024, 1, 1), timedelta(days=7))
            self.assertEqual(d.isoformat(), "2024-01-08")
            self.assertEqual(d.weekday(), 0)
            self.assertLess(date(2024, 1, 1), d)

        def test_zero(self):
            self.assertEqual(add_business_days(date(2024, 3, 9), 0), date(2024, 3, 9))

        def test_duration(self):
            td = duration("2024-01-01T10:00:00", "2024-01-02T12:30:00")
            self.assertEqual(td.total_seconds(), 95400)
            self.assertEqual(td.days, 1)
            self.assertEqual(str(td), "1 day, 2:30:00")
            self.assertEqual(datetime(2024, 1, 1, 10) + td, datetime(2024, 1, 2, 12, 30))
""", wrong={"calendar_days": """
    from datetime import date, datetime, timedelta


    def add_business_days(start, days):
        return start + timedelta(days=days)


    def duration(start_iso, end_iso):
        return datetime.fromisoformat(end_iso) - datetime.fromisoformat(start_iso)
""", "seconds": """
    from datetime import date, datetime, timedelta


    def add_business_days(start, days):
        current = start
        while days > 0:
            current += timedelta(days=1)
            if current.weekday() < 5:
                days -= 1
        return current


    def duration(start_iso, end_iso):
        return (datetime.fromisoformat(end_iso) - datetime.fromisoformat(start_iso)).total_seconds()
"""})

ut("reduce_callbacks", """
    from functools import reduce


    def compose(*funcs):
        def composed(x):
            return reduce(lambda acc, f: f(acc), reversed(funcs), x)
        return composed


    def gcd2(a, b):
        while b:
            a, b = b, a % b
        return a


    def make_key(field, descending=False):
        def key(record):
            value = record[field]
            return -value if descending else value
        return key
""", """
    import functools
    import unittest
    from solution import compose, gcd2, make_key


    class TestCallbacks(unittest.TestCase):
        def test_compose_order(self):
            inc_then_double = compose(lambda x: x * 2, lambda x: x + 1)
            self.assertEqual(inc_then_double(3), 8)
            self.assertEqual(compose()(5), 5)

        def test_reduce_with_program_function(self):
            self.assertEqual(functools.reduce(gcd2, [84, 126, 210]), 42)
            self.assertEqual(functools.reduce(gcd2, [7], 0), 7)

        def test_map_filter(self):
            self.assertEqual(list(map(gcd2, [12, 9], [18, 6])), [6, 3])
            self.assertEqual(list(filter(lambda n: gcd2(n, 6) == 1, range(1, 12))), [1, 5, 7, 11])

        def test_sorted_with_program_key(self):
            rows = [{"n": "a", "age": 30}, {"n": "b", "age": 20}, {"n": "c", "age": 40}]
            self.assertEqual([r["n"] for r in sorted(rows, key=make_key("age"))], ["b", "a", "c"])
            self.assertEqual([r["n"] for r in sorted(rows, key=make_key("age", True))], ["c", "a", "b"])
            self.assertEqual(max(rows, key=make_key("age"))["n"], "c")

        def test_partial(self):
            g6 = functools.partial(gcd2, 6)
            self.assertEqual([g6(x) for x in (4, 9, 35)], [2, 3, 1])
""", wrong={"compose_wrong_order": """
    from functools import reduce


    def compose(*funcs):
        def composed(x):
            return reduce(lambda acc, f: f(acc), funcs, x)
        return composed


    def gcd2(a, b):
        while b:
            a, b = b, a % b
        return a


    def make_key(field, descending=False):
        def key(record):
            value = record[field]
            return -value if descending else value
        return key
""", "key_ignores_desc": """
    from functools import reduce


    def compose(*funcs):
        def composed(x):
            return reduce(lambda acc, f: f(acc), reversed(funcs), x)
        return composed


    def gcd2(a, b):
        while b:
            a, b = b, a % b
        return a


    def make_key(field, descending=False):
        return lambda record: record[field]
"""})

ut("decorator_on_test_function", """
    import functools


    def count_calls(func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            wrapper.calls += 1
            return func(*args, **kwargs)
        wrapper.calls = 0
        return wrapper


    def retry(times):
        def decorate(func):
            @functools.wraps(func)
            def wrapper(*args, **kwargs):
                last = None
                for _ in range(times):
                    try:
                        return func(*args, **kwargs)
                    except Exception as e:
                        last = e
                raise last
            return wrapper
        return decorate
""", """
    import unittest
    from solution import count_calls, retry


    class TestDecorators(unittest.TestCase):
        def test_count_calls(self):
            @count_calls
            def square(x):
                return x * x

            self.assertEqual(square(3), 9)
            self.assertEqual(square(4), 16)
            self.assertEqual(square.calls, 2)
            self.assertEqual(square.__name__, "square")

        def test_retry_succeeds_eventually(self):
            attempts = []

            @retry(3)
            def flaky():
                attempts.append(1)
                if len(attempts) < 3:
                    raise ConnectionError("down")
                return "ok"

            self.assertEqual(flaky(), "ok")
            self.assertEqual(len(attempts), 3)

        def test_retry_gives_up(self):
            calls = []

            @retry(2)
            def broken():
                calls.append(1)
                raise ValueError("nope")

            with self.assertRaises(ValueError):
                broken()
            self.assertEqual(len(calls), 2)

        def test_wraps_docstring(self):
            @retry(1)
            def documented():
                "Doc."
                return 1

            self.assertEqual(documented.__doc__, "Doc.")
""", wrong={"no_wraps": """
    def count_calls(func):
        def wrapper(*args, **kwargs):
            wrapper.calls += 1
            return func(*args, **kwargs)
        wrapper.calls = 0
        return wrapper


    def retry(times):
        def decorate(func):
            def wrapper(*args, **kwargs):
                for i in range(times):
                    try:
                        return func(*args, **kwargs)
                    except Exception:
                        if i == times - 1:
                            raise
            return wrapper
        return decorate
""", "retry_once_more": """
    import functools


    def count_calls(func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            wrapper.calls += 1
            return func(*args, **kwargs)
        wrapper.calls = 0
        return wrapper


    def retry(times):
        def decorate(func):
            @functools.wraps(func)
            def wrapper(*args, **kwargs):
                for _ in range(times):
                    try:
                        return func(*args, **kwargs)
                    except Exception:
                        pass
                return func(*args, **kwargs)
            return wrapper
        return decorate
"""})

ut("context_manager_resource", """
    class Connection:
        open_count = 0

        def __init__(self, name):
            self.name = name
            self.closed = True
            self.log = []

        def __enter__(self):
            Connection.open_count += 1
            self.closed = False
            self.log.append("open")
            return self

        def __exit__(self, exc_type, exc, tb):
            self.closed = True
            self.log.append("close" if exc_type is None else "rollback")
            return False

        def query(self, sql):
            if self.closed:
                raise RuntimeError("closed")
            self.log.append(sql)
            return len(sql)
""", """
    import unittest
    from solution import Connection


    class TestConnection(unittest.TestCase):
        def test_with_block(self):
            with Connection("db") as c:
                self.assertFalse(c.closed)
                self.assertEqual(c.query("SELECT 1"), 8)
            self.assertTrue(c.closed)
            self.assertEqual(c.log, ["open", "SELECT 1", "close"])

        def test_query_after_close(self):
            c = Connection("db")
            with c:
                pass
            with self.assertRaises(RuntimeError):
                c.query("x")

        def test_error_inside_block_propagates(self):
            c = Connection("db")
            with self.assertRaises(KeyError):
                with c:
                    {}["missing"]
            self.assertEqual(c.log, ["open", "rollback"])

        def test_class_counter(self):
            before = Connection.open_count
            with Connection("a"), Connection("b"):
                pass
            self.assertEqual(Connection.open_count, before + 2)
""", wrong={"swallows": """
    class Connection:
        open_count = 0

        def __init__(self, name):
            self.name = name
            self.closed = True
            self.log = []

        def __enter__(self):
            Connection.open_count += 1
            self.closed = False
            self.log.append("open")
            return self

        def __exit__(self, exc_type, exc, tb):
            self.closed = True
            self.log.append("close" if exc_type is None else "rollback")
            return True

        def query(self, sql):
            if self.closed:
                raise RuntimeError("closed")
            self.log.append(sql)
            return len(sql)
""", "instance_counter": """
    class Connection:
        def __init__(self, name):
            self.name = name
            self.closed = True
            self.log = []
            self.open_count = 0

        def __enter__(self):
            self.open_count += 1
            self.closed = False
            self.log.append("open")
            return self

        def __exit__(self, exc_type, exc, tb):
            self.closed = True
            self.log.append("close")

        def query(self, sql):
            if self.closed:
                raise RuntimeError("closed")
            self.log.append(sql)
            return len(sql)
"""})

ut("class_static_property_slots", """
    class Color:
        __slots__ = ("r", "g", "b")

        def __init__(self, r, g, b):
            for v in (r, g, b):
                if not Color.valid(v):
                    raise ValueError(f"component out of range: {v}")
            self.r, self.g, self.b = r, g, b

        @staticmethod
        def valid(v):
            return isinstance(v, int) and 0 <= v <= 255

        @classmethod
        def from_hex(cls, text):
            text = text.lstrip("#")
            return cls(*(int(text[i:i + 2], 16) for i in (0, 2, 4)))

        @property
        def hex(self):
            return "#{:02x}{:02x}{:02x}".format(self.r, self.g, self.b)

        @property
        def brightness(self):
            return (self.r * 299 + self.g * 587 + self.b * 114) / 1000
""", """
    import unittest
    from solution import Color


    class TestColor(unittest.TestCase):
        def test_from_hex_classmethod(self):
            c = Color.from_hex("#ff8000")
            self.assertEqual((c.r, c.g, c.b), (255, 128, 0))
            self.assertEqual(c.hex, "#ff8000")
            self.assertIsInstance(c, Color)

        def test_staticmethod(self):
            self.assertTrue(Color.valid(0))
            self.assertFalse(Color.valid(256))
            self.assertFalse(Color(1, 2, 3).valid(1.5))

        def test_slots(self):
            c = Color(1, 2, 3)
            with self.assertRaises(AttributeError):
                c.alpha = 0.5
            self.assertFalse(hasattr(c, "__dict__"))

        def test_property_read_only(self):
            c = Color(0, 0, 0)
            with self.assertRaises(AttributeError):
                c.hex = "#ffffff"
            self.assertEqual(Color(255, 255, 255).brightness, 255.0)

        def test_invalid(self):
            with self.assertRaisesRegex(ValueError, "out of range: 300"):
                Color(300, 0, 0)
""", wrong={"no_slots": """
    class Color:
        def __init__(self, r, g, b):
            for v in (r, g, b):
                if not Color.valid(v):
                    raise ValueError(f"component out of range: {v}")
            self.r, self.g, self.b = r, g, b

        @staticmethod
        def valid(v):
            return isinstance(v, int) and 0 <= v <= 255

        @classmethod
        def from_hex(cls, text):
            text = text.lstrip("#")
            return cls(*(int(text[i:i + 2], 16) for i in (0, 2, 4)))

        @property
        def hex(self):
            return "#{:02x}{:02x}{:02x}".format(self.r, self.g, self.b)

        @property
        def brightness(self):
            return (self.r * 299 + self.g * 587 + self.b * 114) / 1000
""", "upper_hex": """
    class Color:
        __slots__ = ("r", "g", "b")

        def __init__(self, r, g, b):
            for v in (r, g, b):
                if not Color.valid(v):
                    raise ValueError(f"component out of range: {v}")
            self.r, self.g, self.b = r, g, b

        @staticmethod
        def valid(v):
            return 0 <= v <= 255

        @classmethod
        def from_hex(cls, text):
            text = text.lstrip("#")
            return cls(*(int(text[i:i + 2], 16) for i in (0, 2, 4)))

        @property
        def hex(self):
            return "#{:02X}{:02X}{:02X}".format(self.r, self.g, self.b)

        @property
        def brightness(self):
            return (self.r * 299 + self.g * 587 + self.b * 114) / 1000
"""})

ut("dataclass_factory_asdict", """
    from dataclasses import dataclass, field, asdict


    @dataclass
    class Order:
        customer: str
        lines: list = field(default_factory=list)
        discount: float = 0.0

        def add_line(self, sku, qty, price):
            self.lines.append({"sku": sku, "qty": qty, "price": price})

        def total(self):
            gross = sum(l["qty"] * l["price"] for l in self.lines)
            return round(gross * (1 - self.discount), 2)

        def to_dict(self):
            return asdict(self)
""", """
    import dataclasses
    import unittest
    from solution import Order


    class TestOrder(unittest.TestCase):
        def test_default_factory_not_shared(self):
            a, b = Order("a"), Order("b")
            a.add_line("x", 1, 2.0)
            self.assertEqual(b.lines, [])
            self.assertEqual(len(a.lines), 1)

        def test_total(self):
            o = Order("c", discount=0.25)
            o.add_line("x", 2, 10.0)
            o.add_line("y", 1, 5.5)
            self.assertEqual(o.total(), 19.12)

        def test_to_dict(self):
            o = Order("d")
            o.add_line("z", 3, 1.0)
            self.assertEqual(o.to_dict(), {"customer": "d", "lines": [{"sku": "z", "qty": 3, "price": 1.0}],
                                           "discount": 0.0})

        def test_asdict_in_test(self):
            o = Order("e", discount=0.1)
            self.assertEqual(dataclasses.asdict(o)["discount"], 0.1)
            self.assertTrue(dataclasses.is_dataclass(o))
            self.assertEqual([f.name for f in dataclasses.fields(o)], ["customer", "lines", "discount"])

        def test_replace(self):
            o = Order("f")
            p = dataclasses.replace(o, customer="g")
            self.assertEqual(p.customer, "g")
            self.assertEqual(o.customer, "f")
""", wrong={"shared_list": """
    from dataclasses import dataclass, asdict

    _LINES = []


    @dataclass
    class Order:
        customer: str
        lines: list = None
        discount: float = 0.0

        def __post_init__(self):
            if self.lines is None:
                self.lines = _LINES

        def add_line(self, sku, qty, price):
            self.lines.append({"sku": sku, "qty": qty, "price": price})

        def total(self):
            gross = sum(l["qty"] * l["price"] for l in self.lines)
            return round(gross * (1 - self.discount), 2)

        def to_dict(self):
            return asdict(self)
""", "no_round": """
    from dataclasses import dataclass, field, asdict


    @dataclass
    class Order:
        customer: str
        lines: list = field(default_factory=list)
        discount: float = 0.0

        def add_line(self, sku, qty, price):
            self.lines.append({"sku": sku, "qty": qty, "price": price})

        def total(self):
            return sum(l["qty"] * l["price"] for l in self.lines) * (1 - self.discount)

        def to_dict(self):
            return asdict(self)
"""})

ut("enum_namedtuple_api", """
    from enum import Enum, IntEnum
    from typing import NamedTuple


    class Suit(Enum):
        CLUBS = "c"
        DIAMONDS = "d"
        HEARTS = "h"
        SPADES = "s"


    class Rank(IntEnum):
        JACK = 11
        QUEEN = 12
        KING = 13
        ACE = 14


    class Card(NamedTuple):
        rank: int
        suit: Suit

        def label(self):
            name = Rank(self.rank).name.title() if self.rank > 10 else str(self.rank)
            return f"{name} of {self.suit.name.title()}"


    def parse_card(text):
        rank, suit = text[:-1], text[-1]
        value = {"J": 11, "Q": 12, "K": 13, "A": 14}.get(rank) or int(rank)
        return Card(value, Suit(suit))
""", """
    import unittest
    from solution import Suit, Rank, Card, parse_card


    class TestCards(unittest.TestCase):
        def test_enum_lookup(self):
            self.assertIs(Suit("h"), Suit.HEARTS)
            self.assertIs(Suit["SPADES"], Suit.SPADES)
            self.assertEqual([s.value for s in Suit], ["c", "d", "h", "s"])
            self.assertEqual(len(Suit), 4)

        def test_intenum_compares_with_int(self):
            self.assertEqual(Rank.QUEEN, 12)
            self.assertTrue(Rank.ACE > Rank.KING)
            self.assertEqual(Rank.JACK + 1, 12)

        def test_namedtuple(self):
            c = parse_card("QH".replace("H", "h"))
            self.assertEqual(c.rank, 12)
            self.assertIs(c.suit, Suit.HEARTS)
            rank, suit = c
            self.assertEqual(rank, 12)
            self.assertEqual(c._asdict(), {"rank": 12, "suit": Suit.HEARTS})
            self.assertEqual(c._replace(rank=13).label(), "King of Hearts")

        def test_label(self):
            self.assertEqual(parse_card("10s").label(), "10 of Spades")
            self.assertEqual(parse_card("Ac").label(), "Ace of Clubs")

        def test_is_tuple(self):
            self.assertIsInstance(parse_card("2d"), tuple)
            self.assertEqual(parse_card("2d")[0], 2)
""", wrong={"string_suit": """
    from enum import Enum, IntEnum
    from typing import NamedTuple


    class Suit(Enum):
        CLUBS = "c"
        DIAMONDS = "d"
        HEARTS = "h"
        SPADES = "s"


    class Rank(IntEnum):
        JACK = 11
        QUEEN = 12
        KING = 13
        ACE = 14


    class Card(NamedTuple):
        rank: int
        suit: str

        def label(self):
            return f"{self.rank} of {self.suit}"


    def parse_card(text):
        rank, suit = text[:-1], text[-1]
        value = {"J": 11, "Q": 12, "K": 13, "A": 14}.get(rank) or int(rank)
        return Card(value, suit)
""", "plain_enum_rank": """
    from enum import Enum
    from typing import NamedTuple


    class Suit(Enum):
        CLUBS = "c"
        DIAMONDS = "d"
        HEARTS = "h"
        SPADES = "s"


    class Rank(Enum):
        JACK = 11
        QUEEN = 12
        KING = 13
        ACE = 14


    class Card(NamedTuple):
        rank: int
        suit: Suit

        def label(self):
            name = Rank(self.rank).name.title() if self.rank > 10 else str(self.rank)
            return f"{name} of {self.suit.name.title()}"


    def parse_card(text):
        rank, suit = text[:-1], text[-1]
        value = {"J": 11, "Q": 12, "K": 13, "A": 14}.get(rank) or int(rank)
        return Card(value, Suit(suit))
"""})

ut("closures_and_counters", """
    _calls = {"n": 0}


    def make_accumulator(start=0):
        total = start

        def add(x):
            nonlocal total
            _calls["n"] += 1
            total += x
            return total
        return add


    def call_count():
        return _calls["n"]


    def make_multipliers(n):
        return [lambda x, i=i: x * i for i in range(n)]
""", """
    import unittest
    from solution import make_accumulator, call_count, make_multipliers


    class TestClosures(unittest.TestCase):
        def test_accumulates(self):
            acc = make_accumulator(10)
            self.assertEqual(acc(5), 15)
            self.assertEqual(acc(-3), 12)

        def test_independent(self):
            a, b = make_accumulator(), make_accumulator(100)
            a(1)
            self.assertEqual(b(1), 101)
            self.assertEqual(a(1), 2)

        def test_global_counter_through_function(self):
            before = call_count()
            acc = make_accumulator()
            for _ in range(3):
                acc(1)
            self.assertEqual(call_count() - before, 3)

        def test_late_binding(self):
            self.assertEqual([f(10) for f in make_multipliers(4)], [0, 10, 20, 30])
            self.assertTrue(callable(make_multipliers(1)[0]))
""", wrong={"late_binding_bug": """
    _calls = {"n": 0}


    def make_accumulator(start=0):
        total = [start]

        def add(x):
            _calls["n"] += 1
            total[0] += x
            return total[0]
        return add


    def call_count():
        return _calls["n"]


    def make_multipliers(n):
        return [lambda x: x * i for i in range(n)]
""", "shared_total": """
    _calls = {"n": 0}
    _total = [0]


    def make_accumulator(start=0):
        _total[0] = start

        def add(x):
            _calls["n"] += 1
            _total[0] += x
            return _total[0]
        return add


    def call_count():
        return _calls["n"]


    def make_multipliers(n):
        return [lambda x, i=i: x * i for i in range(n)]
"""})

ut("recursion_limits", """
    import sys

    sys.setrecursionlimit(10000)


    def depth(tree):
        if not tree:
            return 0
        return 1 + max(depth(child) for child in tree)


    def countdown(n):
        return [] if n == 0 else [n] + countdown(n - 1)


    def forever(n):
        return forever(n + 1)
""", """
    import unittest
    from solution import depth, countdown, forever


    def chain(n):
        node = []
        for _ in range(n):
            node = [node]
        return node


    class TestRecursion(unittest.TestCase):
        def test_deep_list(self):
            self.assertEqual(len(countdown(2500)), 2500)
            self.assertEqual(countdown(3), [3, 2, 1])

        def test_tree_depth(self):
            self.assertEqual(depth([[], [[]]]), 2)
            self.assertEqual(depth([]), 0)

        def test_chain(self):
            self.assertEqual(depth(chain(400)), 400)

        def test_unbounded_raises(self):
            with self.assertRaises(RecursionError):
                forever(0)
""", wrong={"iter_off": """
    import sys

    sys.setrecursionlimit(10000)


    def depth(tree):
        if not tree:
            return 1
        return 1 + max(depth(child) for child in tree)


    def countdown(n):
        return list(range(n, 0, -1))


    def forever(n):
        return forever(n + 1)
""", "default_limit": """
    def depth(tree):
        if not tree:
            return 0
        return 1 + max(depth(child) for child in tree)


    def countdown(n):
        return [] if n == 0 else [n] + countdown(n - 1)


    def forever(n):
        return forever(n + 1)
"""})

ut("iterator_class", """
    class Countdown:
        def __init__(self, start):
            self.current = start

        def __iter__(self):
            return self

        def __next__(self):
            if self.current <= 0:
                raise StopIteration
            self.current -= 1
            return self.current + 1


    class Fib:
        def __init__(self, limit):
            self.limit = limit

        def __iter__(self):
            a, b = 0, 1
            while a <= self.limit:
                yield a
                a, b = b, a + b
""", """
    import unittest
    from solution import Countdown, Fib


    class TestIterators(unittest.TestCase):
        def test_list(self):
            self.assertEqual(list(Countdown(3)), [3, 2, 1])

        def test_next_then_exhausted(self):
            it = Countdown(1)
            self.assertEqual(next(it), 1)
            with self.assertRaises(StopIteration):
                next(it)
            self.assertEqual(next(it, "done"), "done")

        def test_iter_returns_self(self):
            c = Countdown(2)
            self.assertIs(iter(c), c)

        def test_reusable_iterable(self):
            f = Fib(10)
            self.assertEqual(list(f), [0, 1, 1, 2, 3, 5, 8])
            self.assertEqual(sum(f), 20)
            self.assertEqual(dict(enumerate(Fib(2))), {0: 0, 1: 1, 2: 1, 3: 2})

        def test_unpack(self):
            a, b, c = Countdown(3)
            self.assertEqual((a, b, c), (3, 2, 1))
""", wrong={"off_by_one": """
    class Countdown:
        def __init__(self, start):
            self.current = start

        def __iter__(self):
            return self

        def __next__(self):
            if self.current < 0:
                raise StopIteration
            self.current -= 1
            return self.current + 1


    class Fib:
        def __init__(self, limit):
            self.limit = limit

        def __iter__(self):
            a, b = 0, 1
            while a <= self.limit:
                yield a
                a, b = b, a + b
""", "one_shot_fib": """
    class Countdown:
        def __init__(self, start):
            self.current = start

        def __iter__(self):
            return self

        def __next__(self):
            if self.current <= 0:
                raise StopIteration
            self.current -= 1
            return self.current + 1


    class Fib:
        def __init__(self, limit):
            self.limit = limit
            self.a, self.b = 0, 1

        def __iter__(self):
            return self

        def __next__(self):
            if self.a > self.limit:
                raise StopIteration
            v = self.a
            self.a, self.b = self.b, self.a + self.b
            return v
"""})

ut("assert_vocabulary", """
    import re


    def tokenize(expr):
        return tuple(re.findall(r"\\d+\\.\\d+|\\d+|[-+*/()]", expr))


    def report(rows):
        width = max(len(r[0]) for r in rows)
        return "\\n".join(f"{name:<{width}} | {score:>3}" for name, score in rows)
""", """
    import unittest
    from solution import tokenize, report


    class TestVocabulary(unittest.TestCase):
        def test_tuple_equal(self):
            self.assertTupleEqual(tokenize("3+4.5*(2-1)"), ("3", "+", "4.5", "*", "(", "2", "-", "1", ")"))

        def test_sequence_and_count(self):
            self.assertSequenceEqual(tokenize("1 + 2"), ["1", "+", "2"])
            self.assertCountEqual(tokenize("(1)"), [")", "1", "("])

        def test_regex_and_greater(self):
            self.assertRegex(" ".join(tokenize("10/5")), r"^10 / 5$")
            self.assertGreaterEqual(len(tokenize("1+1+1")), 5)
            self.assertNotIn(" ", tokenize("1 + 1"))

        def test_multiline(self):
            self.assertMultiLineEqual(report([("ann", 90), ("bo", 7)]), "ann |  90\\nbo  |   7")

        def test_string_methods_on_result(self):
            text = report([("x", 1), ("yy", 22)])
            self.assertEqual(text.splitlines()[1].split("|")[0].rstrip(), "yy")
            self.assertTrue(text.startswith("x "))
            self.assertEqual(text.count("|"), 2)
            self.assertEqual(text.upper()[:2], "X ")
""", wrong={"list_result": """
    import re


    def tokenize(expr):
        return re.findall(r"\\d+\\.\\d+|\\d+|[-+*/()]", expr)


    def report(rows):
        width = max(len(r[0]) for r in rows)
        return "\\n".join(f"{name:<{width}} | {score:>3}" for name, score in rows)
""", "no_decimal": """
    import re


    def tokenize(expr):
        return tuple(re.findall(r"\\d+|[-+*/().]", expr))


    def report(rows):
        return "\\n".join(f"{name} | {score}" for name, score in rows)
"""})

ut("sorted_program_objects", """
    class Task:
        def __init__(self, title, priority, done=False):
            self.title = title
            self.priority = priority
            self.done = done


    class TaskList:
        def __init__(self):
            self.tasks = []

        def add(self, title, priority):
            task = Task(title, priority)
            self.tasks.append(task)
            return task

        def pending(self):
            return [t for t in self.tasks if not t.done]

        def complete(self, title):
            for t in self.tasks:
                if t.title == title:
                    t.done = True
                    return True
            return False
""", """
    import operator
    import unittest
    from solution import TaskList, Task


    class TestTaskList(unittest.TestCase):
        def setUp(self):
            self.tl = TaskList()
            for title, prio in [("write", 2), ("read", 1), ("sleep", 3)]:
                self.tl.add(title, prio)

        def test_sorted_by_attribute(self):
            ordered = sorted(self.tl.pending(), key=lambda t: t.priority)
            self.assertEqual([t.title for t in ordered], ["read", "write", "sleep"])

        def test_attrgetter(self):
            top = max(self.tl.tasks, key=operator.attrgetter("priority"))
            self.assertEqual(top.title, "sleep")

        def test_complete(self):
            self.assertTrue(self.tl.complete("read"))
            self.assertFalse(self.tl.complete("nothing"))
            self.assertEqual({t.title for t in self.tl.pending()}, {"write", "sleep"})

        def test_same_objects(self):
            t = self.tl.add("eat", 0)
            self.assertIs(self.tl.tasks[-1], t)
            self.assertIn(t, self.tl.pending())
            self.assertEqual(type(t).__name__, "Task")
            self.assertIsInstance(t, Task)

        def test_mutating_returned_task(self):
            self.tl.tasks[0].done = True
            self.assertEqual(len(self.tl.pending()), 2)
""", wrong={"copies": """
    import copy


    class Task:
        def __init__(self, title, priority, done=False):
            self.title = title
            self.priority = priority
            self.done = done


    class TaskList:
        def __init__(self):
            self.tasks = []

        def add(self, title, priority):
            task = Task(title, priority)
            self.tasks.append(task)
            return copy.copy(task)

        def pending(self):
            return [t for t in self.tasks if not t.done]

        def complete(self, title):
            for t in self.tasks:
                if t.title == title:
                    t.done = True
                    return True
            return False
""", "complete_returns_none": """
    class Task:
        def __init__(self, title, priority, done=False):
            self.title = title
            self.priority = priority
            self.done = done


    class TaskList:
        def __init__(self):
            self.tasks = []

        def add(self, title, priority):
            task = Task(title, priority)
            self.tasks.append(task)
            return task

        def pending(self):
            return [t for t in self.tasks if not t.done]

        def complete(self, title):
            for t in self.tasks:
                if t.title == title:
                    t.done = True
                    return True
"""})

ut("print_star_stderr", """
    import sys


    def show_matrix(m):
        for row in m:
            print(*row)


    def warn(msg):
        print("warning:", msg, file=sys.stderr)


    def progress(n):
        for i in range(n):
            sys.stdout.write(f"\\r{i + 1}/{n}")
        sys.stdout.write("\\n")
""", """
    import io
    import sys
    import unittest
    from contextlib import redirect_stdout, redirect_stderr
    from solution import show_matrix, warn, progress


    class TestOutput(unittest.TestCase):
        def test_matrix(self):
            buf = io.StringIO()
            with redirect_stdout(buf):
                show_matrix([[1, 2], [3, 4]])
            self.assertEqual(buf.getvalue(), "1 2\\n3 4\\n")

        def test_warn_goes_to_stderr(self):
            out, err = io.StringIO(), io.StringIO()
            with redirect_stdout(out), redirect_stderr(err):
                warn("low disk")
            self.assertEqual(out.getvalue(), "")
            self.assertEqual(err.getvalue(), "warning: low disk\\n")

        def test_progress_carriage_returns(self):
            buf = io.StringIO()
            old = sys.stdout
            sys.stdout = buf
            try:
                progress(3)
            finally:
                sys.stdout = old
            self.assertEqual(buf.getvalue(), "\\r1/3\\r2/3\\r3/3\\n")
            self.assertEqual(buf.getvalue().split("\\r")[-1], "3/3\\n")
""", wrong={"list_repr": """
    import sys


    def show_matrix(m):
        for row in m:
            print(row)


    def warn(msg):
        print("warning:", msg, file=sys.stderr)


    def progress(n):
        for i in range(n):
            sys.stdout.write(f"\\r{i + 1}/{n}")
        sys.stdout.write("\\n")
""", "warn_stdout": """
    import sys


    def show_matrix(m):
        for row in m:
            print(*row)


    def warn(msg):
        print("warning:", msg)


    def progress(n):
        for i in range(n):
            print(f"\\r{i + 1}/{n}", end="")
        print()
"""})

ut("hash_and_identity", """
    def freeze(obj):
        if isinstance(obj, dict):
            return frozenset((k, freeze(v)) for k, v in obj.items())
        if isinstance(obj, list):
            return tuple(freeze(x) for x in obj)
        return obj


    def dedupe(records):
        seen = set()
        out = []
        for r in records:
            key = freeze(r)
            if key not in seen:
                seen.add(key)
                out.append(r)
        return out
""", """
    import unittest
    from solution import freeze, dedupe


    class TestFreeze(unittest.TestCase):
        def test_hashable(self):
            f = freeze({"a": [1, 2], "b": {"c": 3}})
            self.assertEqual(hash(f), hash(freeze({"b": {"c": 3}, "a": [1, 2]})))
            self.assertIsInstance(f, frozenset)
            self.assertEqual({f: 1}[freeze({"a": [1, 2], "b": {"c": 3}})], 1)

        def test_tuple(self):
            self.assertEqual(freeze([1, [2, 3]]), (1, (2, 3)))
            self.assertEqual(type(freeze([])).__name__, "tuple")

        def test_dedupe_keeps_first_objects(self):
            a, b, c = {"x": 1}, {"x": 1}, {"x": 2}
            out = dedupe([a, b, c])
            self.assertEqual(out, [{"x": 1}, {"x": 2}])
            self.assertIs(out[0], a)
            self.assertIs(out[1], c)

        def test_none_passthrough(self):
            self.assertIsNone(freeze(None))
""", wrong={"str_key": """
    def freeze(obj):
        if isinstance(obj, dict):
            return frozenset((k, freeze(v)) for k, v in obj.items())
        if isinstance(obj, list):
            return tuple(freeze(x) for x in obj)
        return obj


    def dedupe(records):
        seen = {}
        for r in records:
            seen[str(freeze(r))] = r
        return list(seen.values())
""", "list_tuple": """
    def freeze(obj):
        if isinstance(obj, dict):
            return frozenset((k, freeze(v)) for k, v in obj.items())
        if isinstance(obj, list):
            return tuple(obj)
        return obj


    def dedupe(records):
        out = []
        for r in records:
            if r not in out:
                out.append(r)
        return out
"""})

ut("pathlib_files", """
    from pathlib import Path


    def write_report(directory, name, lines):
        path = Path(directory) / f"{name}.txt"
        path.write_text("\\n".join(lines) + "\\n")
        return path


    def count_lines(path):
        with open(path) as fh:
            return sum(1 for line in fh if line.strip())


    def find_txt(directory):
        return sorted(p.name for p in Path(directory).glob("*.txt"))
""", """
    import os
    import tempfile
    import unittest
    from pathlib import Path
    from solution import write_report, count_lines, find_txt


    class TestFiles(unittest.TestCase):
        def setUp(self):
            self.tmp = tempfile.TemporaryDirectory()
            self.dir = Path(self.tmp.name)

        def tearDown(self):
            self.tmp.cleanup()

        def test_returns_path(self):
            p = write_report(self.dir, "r1", ["a", "b"])
            self.assertIsInstance(p, Path)
            self.assertEqual(p, self.dir / "r1.txt")
            self.assertEqual(p.name, "r1.txt")
            self.assertTrue(p.exists())
            self.assertEqual(p.read_text(), "a\\nb\\n")

        def test_count_lines_path_and_str(self):
            p = self.dir / "x.txt"
            p.write_text("1\\n\\n2\\n3\\n")
            self.assertEqual(count_lines(p), 3)
            self.assertEqual(count_lines(str(p)), 3)

        def test_find(self):
            for n in ("b", "a"):
                write_report(self.tmp.name, n, ["x"])
            (self.dir / "c.csv").write_text("")
            self.assertEqual(find_txt(self.dir), ["a.txt", "b.txt"])
            self.assertEqual(sorted(os.listdir(self.dir)), ["a.txt", "b.txt", "c.csv"])
""", wrong={"str_path": """
    import os


    def write_report(directory, name, lines):
        path = os.path.join(str(directory), name + ".txt")
        with open(path, "w") as fh:
            fh.write("\\n".join(lines) + "\\n")
        return path


    def count_lines(path):
        with open(path) as fh:
            return len(fh.readlines())


    def find_txt(directory):
        return sorted(n for n in os.listdir(directory) if n.endswith(".txt"))
"""})

ut("exception_chaining", """
    class ValidationError(Exception):
        def __init__(self, field, message):
            super().__init__(f"{field}: {message}")
            self.field = field


    def parse_age(text):
        try:
            age = int(text)
        except ValueError as e:
            raise ValidationError("age", "not a number") from e
        if age < 0:
            raise ValidationError("age", "negative")
        return age


    def load(record):
        try:
            return {"age": parse_age(record["age"])}
        except KeyError:
            raise ValidationError("record", "missing age")
""", """
    import unittest
    from solution import parse_age, load, ValidationError


    class TestChaining(unittest.TestCase):
        def test_cause(self):
            with self.assertRaises(ValidationError) as cm:
                parse_age("abc")
            self.assertIsInstance(cm.exception.__cause__, ValueError)
            self.assertTrue(cm.exception.__suppress_context__)
            self.assertEqual(cm.exception.field, "age")

        def test_no_cause(self):
            with self.assertRaises(ValidationError) as cm:
                parse_age("-3")
            self.assertIsNone(cm.exception.__cause__)
            self.assertEqual(str(cm.exception), "age: negative")

        def test_implicit_context(self):
            with self.assertRaises(ValidationError) as cm:
                load({})
            self.assertIsInstance(cm.exception.__context__, KeyError)
            self.assertIsNone(cm.exception.__cause__)

        def test_ok(self):
            self.assertEqual(load({"age": "42"}), {"age": 42})
""", wrong={"no_from": """
    class ValidationError(Exception):
        def __init__(self, field, message):
            super().__init__(f"{field}: {message}")
            self.field = field


    def parse_age(text):
        if not text.lstrip("-").isdigit():
            raise ValidationError("age", "not a number")
        age = int(text)
        if age < 0:
            raise ValidationError("age", "negative")
        return age


    def load(record):
        if "age" not in record:
            raise ValidationError("record", "missing age")
        return {"age": parse_age(record["age"])}
"""})

ut("catch_warnings_record", """
    import warnings


    def old_api(x):
        warnings.warn("old_api is deprecated; use new_api", DeprecationWarning, stacklevel=2)
        return new_api(x)


    def new_api(x):
        return x * 2


    def risky(values):
        if any(v < 0 for v in values):
            warnings.warn("negative values clipped", RuntimeWarning)
        return [max(0, v) for v in values]
""", """
    import unittest
    import warnings
    from solution import old_api, new_api, risky


    class TestWarnings(unittest.TestCase):
        def test_deprecation_recorded(self):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                self.assertEqual(old_api(2), 4)
            self.assertEqual(len(caught), 1)
            self.assertTrue(issubclass(caught[0].category, DeprecationWarning))
            self.assertIn("deprecated", str(caught[0].message))

        def test_new_api_silent(self):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                new_api(1)
            self.assertEqual(caught, [])

        def test_runtime_warning(self):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                self.assertEqual(risky([-1, 2]), [0, 2])
                risky([1])
            self.assertEqual([w.category for w in caught], [RuntimeWarning])

        def test_error_filter(self):
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                with self.assertRaises(RuntimeWarning):
                    risky([-5])
""", wrong={"user_warning": """
    import warnings


    def old_api(x):
        warnings.warn("old_api is deprecated; use new_api")
        return new_api(x)


    def new_api(x):
        return x * 2


    def risky(values):
        if any(v < 0 for v in values):
            warnings.warn("negative values clipped", RuntimeWarning)
        return [max(0, v) for v in values]
""", "print_instead": """
    def old_api(x):
        print("old_api is deprecated; use new_api")
        return new_api(x)


    def new_api(x):
        return x * 2


    def risky(values):
        return [max(0, v) for v in values]
"""})

ut("generator_send_close", """
    def running_average():
        total = count = 0
        average = None
        try:
            while True:
                value = yield average
                total += value
                count += 1
                average = total / count
        except GeneratorExit:
            running_average.closed += 1
            raise


    running_average.closed = 0
""", """
    import inspect
    import unittest
    from solution import running_average


    class TestCoroutine(unittest.TestCase):
        def test_send(self):
            avg = running_average()
            self.assertIsNone(next(avg))
            self.assertEqual(avg.send(10), 10.0)
            self.assertEqual(avg.send(20), 15.0)
            self.assertEqual(avg.send(0), 10.0)

        def test_close(self):
            avg = running_average()
            next(avg)
            before = running_average.closed
            avg.close()
            self.assertEqual(running_average.closed, before + 1)
            with self.assertRaises(StopIteration):
                avg.send(1)

        def test_state(self):
            avg = running_average()
            self.assertEqual(inspect.getgeneratorstate(avg), "GEN_CREATED")
            next(avg)
            self.assertEqual(inspect.getgeneratorstate(avg), "GEN_SUSPENDED")

        def test_throw(self):
            avg = running_average()
            next(avg)
            with self.assertRaises(ValueError):
                avg.throw(ValueError("stop"))
""", wrong={"int_average": """
    def running_average():
        total = count = 0
        average = None
        while True:
            value = yield average
            total += value
            count += 1
            average = total // count


    running_average.closed = 0
"""})

ut("mixin_enums", """
    from enum import Enum, IntEnum


    class Priority(IntEnum):
        LOW = 1
        MEDIUM = 2
        HIGH = 3

        def label(self):
            return self.name.capitalize()


    class Status(str, Enum):
        OPEN = "open"
        CLOSED = "closed"


    class Ticket:
        def __init__(self, title, priority=Priority.MEDIUM):
            self.title = title
            self.priority = Priority(priority)
            self.status = Status.OPEN

        def close(self):
            self.status = Status.CLOSED

        def escalate(self):
            if self.priority < Priority.HIGH:
                self.priority = Priority(self.priority + 1)
            return self.priority
""", """
    import json
    import unittest
    from solution import Priority, Status, Ticket


    class TestTickets(unittest.TestCase):
        def test_priority_from_int(self):
            t = Ticket("a", 3)
            self.assertIs(t.priority, Priority.HIGH)
            self.assertEqual(t.priority.name, "HIGH")
            self.assertEqual(t.priority.label(), "High")

        def test_escalate(self):
            t = Ticket("b")
            self.assertEqual(t.escalate(), Priority.HIGH)
            self.assertEqual(t.escalate().value, 3)
            self.assertGreater(t.priority, Priority.LOW)

        def test_status_str_enum(self):
            t = Ticket("c")
            self.assertEqual(t.status, "open")
            t.close()
            self.assertIs(t.status, Status.CLOSED)
            self.assertEqual(t.status.value, "closed")
            self.assertEqual(json.dumps({"s": t.status}), '{"s": "closed"}')

        def test_members(self):
            self.assertEqual([p.name for p in Priority], ["LOW", "MEDIUM", "HIGH"])
            self.assertEqual(sorted([Priority.HIGH, Priority.LOW]), [1, 3])
""", wrong={"no_cap": """
    from enum import Enum, IntEnum


    class Priority(IntEnum):
        LOW = 1
        MEDIUM = 2
        HIGH = 3

        def label(self):
            return self.name.capitalize()


    class Status(str, Enum):
        OPEN = "open"
        CLOSED = "closed"


    class Ticket:
        def __init__(self, title, priority=Priority.MEDIUM):
            self.title = title
            self.priority = Priority(priority)
            self.status = Status.OPEN

        def close(self):
            self.status = Status.CLOSED

        def escalate(self):
            self.priority = Priority(min(self.priority + 1, 3))
            return self.priority.value
""", "plain_strings": """
    from enum import IntEnum


    class Priority(IntEnum):
        LOW = 1
        MEDIUM = 2
        HIGH = 3

        def label(self):
            return self.name.capitalize()


    class Status:
        OPEN = "open"
        CLOSED = "closed"


    class Ticket:
        def __init__(self, title, priority=Priority.MEDIUM):
            self.title = title
            self.priority = Priority(priority)
            self.status = Status.OPEN

        def close(self):
            self.status = "Closed"

        def escalate(self):
            if self.priority < Priority.HIGH:
                self.priority = Priority(self.priority + 1)
            return self.priority
"""})

ut("copy_and_abc", """
    import collections.abc


    class Settings(collections.abc.Mapping):
        def __init__(self, **values):
            self._values = dict(values)
            self.history = []

        def __getitem__(self, key):
            return self._values[key]

        def __iter__(self):
            return iter(sorted(self._values))

        def __len__(self):
            return len(self._values)

        def updated(self, **changes):
            new = Settings(**{**self._values, **changes})
            new.history = self.history + [sorted(changes)]
            return new
""", """
    import copy
    import unittest
    from collections.abc import Mapping, MutableMapping
    from solution import Settings


    class TestSettings(unittest.TestCase):
        def setUp(self):
            self.s = Settings(debug=False, level=2)

        def test_is_read_only_mapping(self):
            self.assertIsInstance(self.s, Mapping)
            self.assertNotIsInstance(self.s, MutableMapping)
            self.assertEqual(dict(self.s), {"debug": False, "level": 2})
            self.assertEqual(list(self.s), ["debug", "level"])
            self.assertEqual(self.s.get("missing", "x"), "x")

        def test_updated_is_new(self):
            t = self.s.updated(level=3)
            self.assertIsNot(t, self.s)
            self.assertEqual(t["level"], 3)
            self.assertEqual(self.s["level"], 2)
            self.assertEqual(t.history, [["level"]])

        def test_deepcopy(self):
            c = copy.deepcopy(self.s)
            c.history.append("mine")
            self.assertEqual(self.s.history, [])
            self.assertEqual(dict(c), dict(self.s))
""", wrong={"mutates": """
    import collections.abc


    class Settings(collections.abc.Mapping):
        def __init__(self, **values):
            self._values = dict(values)
            self.history = []

        def __getitem__(self, key):
            return self._values[key]

        def __iter__(self):
            return iter(self._values)

        def __len__(self):
            return len(self._values)

        def updated(self, **changes):
            self._values.update(changes)
            self.history.append(sorted(changes))
            return self
""", "plain_class": """
    class Settings:
        def __init__(self, **values):
            self._values = dict(values)
            self.history = []

        def __getitem__(self, key):
            return self._values[key]

        def keys(self):
            return sorted(self._values)

        def get(self, key, default=None):
            return self._values.get(key, default)

        def __iter__(self):
            return iter(sorted(self._values))

        def __len__(self):
            return len(self._values)

        def updated(self, **changes):
            new = Settings(**{**self._values, **changes})
            new.history = self.history + [sorted(changes)]
            return new
"""})

ut("list_subclass_stack", """
    class Stack(list):
        def push(self, item):
            self.append(item)
            return self

        def peek(self):
            if not self:
                raise IndexError("peek from empty stack")
            return self[-1]
""", """
    import unittest
    from solution import Stack


    class TestStack(unittest.TestCase):
        def test_push_peek(self):
            s = Stack()
            s.push(1).push(2)
            self.assertEqual(s.peek(), 2)
            self.assertEqual(len(s), 2)

        def test_is_list(self):
            s = Stack([3])
            self.assertIsInstance(s, list)
            self.assertEqual(s, [3])

        def test_empty_peek(self):
            with self.assertRaises(IndexError):
                Stack().peek()
""", wrong={"peek_pops": """
    class Stack(list):
        def push(self, item):
            self.append(item)
            return self

        def peek(self):
            return self.pop()
"""})

ut("logging_handler_in_test", """
    import logging

    log = logging.getLogger("inventory")


    def restock(stock, item, qty):
        if qty <= 0:
            log.warning("ignored restock of %s by %d", item, qty)
            return stock.get(item, 0)
        stock[item] = stock.get(item, 0) + qty
        log.info("restocked %s", item)
        return stock[item]
""", """
    import logging
    import unittest
    from solution import restock


    class Collect(logging.Handler):
        def __init__(self):
            super().__init__(logging.DEBUG)
            self.messages = []

        def emit(self, record):
            self.messages.append((record.levelname, record.getMessage()))


    class TestRestock(unittest.TestCase):
        def setUp(self):
            self.handler = Collect()
            self.logger = logging.getLogger("inventory")
            self.logger.addHandler(self.handler)
            self.logger.setLevel(logging.DEBUG)

        def tearDown(self):
            self.logger.removeHandler(self.handler)

        def test_info(self):
            stock = {}
            self.assertEqual(restock(stock, "nut", 5), 5)
            self.assertEqual(self.handler.messages, [("INFO", "restocked nut")])

        def test_warning(self):
            self.assertEqual(restock({"nut": 1}, "nut", 0), 1)
            self.assertEqual(self.handler.messages[-1][0], "WARNING")
""", wrong={"print": """
    def restock(stock, item, qty):
        if qty <= 0:
            print("ignored")
            return stock.get(item, 0)
        stock[item] = stock.get(item, 0) + qty
        return stock[item]
"""})

ut("import_star_stdlib_names", """
    from collections import defaultdict
    from datetime import datetime, timedelta
    from time import time


    def bucket_by_day(events):
        days = defaultdict(lambda: defaultdict(int))
        for stamp, kind in events:
            days[stamp.date().isoformat()][kind] += 1
        return days


    def deadline(start, hours):
        return start + timedelta(hours=hours)


    def elapsed_since(t0):
        return max(0.0, time() - t0)
""", """
    import unittest
    from datetime import datetime
    from solution import *


    class TestImportStar(unittest.TestCase):
        def test_deadline(self):
            self.assertEqual(deadline(datetime(2024, 5, 1, 22), 3), datetime(2024, 5, 2, 1))

        def test_buckets(self):
            days = bucket_by_day([(datetime(2024, 1, 1, 9), "login"), (datetime(2024, 1, 1, 17), "login"),
                                  (datetime(2024, 1, 2, 8), "error")])
            self.assertEqual(days["2024-01-01"]["login"], 2)
            self.assertEqual(days["2024-01-02"]["login"], 0)
            self.assertEqual(days["2024-03-03"]["error"], 0)
            self.assertEqual(sorted(days), ["2024-01-01", "2024-01-02", "2024-03-03"])

        def test_elapsed(self):
            self.assertGreaterEqual(elapsed_since(time()), 0.0)
            self.assertLess(elapsed_since(time()), 5)
""", wrong={"plain_dict": """
    from datetime import datetime, timedelta
    from time import time


    def bucket_by_day(events):
        days = {}
        for stamp, kind in events:
            day = days.setdefault(stamp.date().isoformat(), {})
            day[kind] = day.get(kind, 0) + 1
        return days


    def deadline(start, hours):
        return start + timedelta(hours=hours)


    def elapsed_since(t0):
        return max(0.0, time() - t0)
""", "days_not_hours": """
    from collections import defaultdict
    from datetime import datetime, timedelta
    from time import time


    def bucket_by_day(events):
        days = defaultdict(lambda: defaultdict(int))
        for stamp, kind in events:
            days[stamp.date().isoformat()][kind] += 1
        return days


    def deadline(start, hours):
        return start + timedelta(days=hours)


    def elapsed_since(t0):
        return max(0.0, time() - t0)
"""})


# ------------------------------------------------------------------------------------------ assert

asserts("fraction_simplify", """
    from fractions import Fraction


    def egyptian(fr):
        out = []
        while fr.numerator:
            d = -(-fr.denominator // fr.numerator)
            out.append(Fraction(1, d))
            fr -= Fraction(1, d)
        return out
""", ["assert egyptian(Fraction(4, 13)) == [Fraction(1, 4), Fraction(1, 18), Fraction(1, 468)]",
      "assert sum(egyptian(Fraction(5, 6))) == Fraction(5, 6)",
      "assert all(isinstance(x, Fraction) and x.numerator == 1 for x in egyptian(Fraction(7, 15)))",
      "assert egyptian(Fraction(0)) == []"],
    imports=["from fractions import Fraction"],
    wrong={"floor": "from fractions import Fraction\ndef egyptian(fr):\n    out = []\n    while fr.numerator:\n        d = fr.denominator // fr.numerator + 1\n        out.append(Fraction(1, d))\n        fr -= Fraction(1, d)\n    return out\n"})
asserts("decimal_interest", """
    from decimal import Decimal, ROUND_HALF_EVEN


    def compound(principal, rate, years):
        amount = Decimal(str(principal))
        for _ in range(years):
            amount *= 1 + Decimal(str(rate))
        return amount.quantize(Decimal("0.01"), rounding=ROUND_HALF_EVEN)
""", ["assert compound(1000, 0.05, 2) == Decimal('1102.50')",
      "assert str(compound(100, 0.1, 3)) == '133.10'",
      "assert round(float(compound(1, 0.5, 1)), 2) == 1.5",
      "assert compound(10, 0, 5) == 10"],
    imports=["from decimal import Decimal"],
    wrong={"float": "def compound(principal, rate, years):\n    return round(principal * (1 + rate) ** years, 2)\n"})
asserts("set_of_pairs", """
    def pair_sums(nums, target):
        seen, out = set(), set()
        for n in nums:
            if target - n in seen:
                out.add((min(n, target - n), max(n, target - n)))
            seen.add(n)
        return out
""", ["assert pair_sums([1, 5, 3, 3, 7], 6) == {(1, 5), (3, 3)}",
      "assert set(pair_sums([2, 4, 6], 8)) == {(2, 6)}",
      "assert sorted(pair_sums([0, 4, 1, 3, 2, 2], 4)) == [(0, 4), (1, 3), (2, 2)]",
      "assert len(pair_sums([1, 2], 10)) == 0",
      "assert not pair_sums([], 0)"],
    right={"list_dedup": "def pair_sums(nums, target):\n    out = set()\n    for i in range(len(nums)):\n        for j in range(i + 1, len(nums)):\n            if nums[i] + nums[j] == target:\n                out.add(tuple(sorted((nums[i], nums[j]))))\n    return out\n"},
    wrong={"list": "def pair_sums(nums, target):\n    out = []\n    for i in range(len(nums)):\n        for j in range(i + 1, len(nums)):\n            if nums[i] + nums[j] == target:\n                out.append((nums[i], nums[j]))\n    return out\n",
           "no_dup_pair": "def pair_sums(nums, target):\n    s = set(nums)\n    return {(a, target - a) for a in s if a < target - a and target - a in s}\n"})
asserts("islice_generator", """
    def collatz(n):
        while True:
            yield n
            if n == 1:
                return
            n = n // 2 if n % 2 == 0 else 3 * n + 1
""", ["assert list(collatz(6)) == [6, 3, 10, 5, 16, 8, 4, 2, 1]",
      "assert list(itertools.islice(collatz(27), 3)) == [27, 82, 41]",
      "assert next(collatz(7)) == 7",
      "assert max(collatz(27)) == 9232",
      "assert sum(1 for _ in collatz(1)) == 1"],
    imports=["import itertools"],
    wrong={"list_no_one": "def collatz(n):\n    out = []\n    while n != 1:\n        out.append(n)\n        n = n // 2 if n % 2 == 0 else 3 * n + 1\n    return out\n"})
asserts("counter_result", """
    from collections import Counter


    def letter_counts(s):
        return Counter(c for c in s.lower() if c.isalpha())
""", ["assert letter_counts('Hello') == {'h': 1, 'e': 1, 'l': 2, 'o': 1}",
      "assert letter_counts('aAb')['a'] == 2",
      "assert letter_counts('xyz')['q'] == 0",
      "assert letter_counts('banana').most_common(1) == [('a', 3)]",
      "assert list(letter_counts('ba')) == ['b', 'a']"],
    wrong={"dict": "def letter_counts(s):\n    d = {}\n    for c in s.lower():\n        if c.isalpha():\n            d[c] = d.get(c, 0) + 1\n    return d\n",
           "case": "from collections import Counter\ndef letter_counts(s):\n    return Counter(c for c in s if c.isalpha())\n"})
asserts("complex_rotate", """
    def rotate_points(points, quarter_turns):
        factor = 1j ** (quarter_turns % 4)
        return [complex(p) * factor for p in points]
""", ["assert rotate_points([1 + 0j], 1) == [1j]",
      "assert rotate_points([2 + 1j, -1j], 2) == [-2 - 1j, 1j]",
      "assert abs(rotate_points([3 + 4j], 3)[0]) == 5.0",
      "assert [z.real for z in rotate_points([1, 2], 4)] == [1.0, 2.0]"],
    wrong={"sign": "def rotate_points(points, quarter_turns):\n    return [complex(p) * (-1j) ** (quarter_turns % 4) for p in points]\n"})
asserts("bytes_runlength", """
    def rle(data):
        out = bytearray()
        i = 0
        while i < len(data):
            j = i
            while j < len(data) and data[j] == data[i] and j - i < 255:
                j += 1
            out += bytes([j - i, data[i]])
            i = j
        return bytes(out)
""", ["assert rle(b'aaab') == b'\\x03a\\x01b'",
      "assert rle(b'') == b''",
      "assert rle(bytes(300)) == b'\\xff\\x00-\\x00'",
      "assert isinstance(rle(b'x'), bytes)",
      "assert rle(bytearray(b'zz')).hex() == '027a'"],
    wrong={"bytearray": "def rle(data):\n    out = bytearray()\n    i = 0\n    while i < len(data):\n        j = i\n        while j < len(data) and data[j] == data[i] and j - i < 255:\n            j += 1\n        out += bytes([j - i, data[i]])\n        i = j\n    return out\n",
           "no_cap": "def rle(data):\n    out = b''\n    i = 0\n    while i < len(data):\n        j = i\n        while j < len(data) and data[j] == data[i]:\n            j += 1\n        out += bytes([min(j - i, 255), data[i]])\n        i = j\n    return out\n"})
asserts("repr_str_results", """
    def describe(items):
        return {"count": len(items), "first": items[0] if items else None, "kinds": sorted({type(x).__name__ for x in items})}
""", ['assert str(describe([1, "a"])) == "{\'count\': 2, \'first\': 1, \'kinds\': [\'int\', \'str\']}"',
      "assert repr(describe([])['first']) == 'None'",
      "assert f'{describe([2.5])[\"kinds\"]}' == \"['float']\"",
      "assert describe([]) == {'count': 0, 'first': None, 'kinds': []}"],
    wrong={"unsorted_kinds": "def describe(items):\n    return {'count': len(items), 'first': items[0] if items else None, 'kinds': list(dict.fromkeys(type(x).__name__ for x in items))}\n",
           "key_order": "def describe(items):\n    return {'first': items[0] if items else None, 'count': len(items), 'kinds': sorted({type(x).__name__ for x in items})}\n"})
asserts("truthiness_none", """
    def find_first_negative(nums):
        for i, n in enumerate(nums):
            if n < 0:
                return i
        return None
""", ["assert find_first_negative([3, -1, -2]) == 1",
      "assert find_first_negative([1, 2]) is None",
      "assert find_first_negative([-5]) == 0 and find_first_negative([-5]) is not None",
      "assert not find_first_negative([])",
      "assert type(find_first_negative([0, -0.5])).__name__ == 'int'"],
    wrong={"minus_one": "def find_first_negative(nums):\n    for i, n in enumerate(nums):\n        if n < 0:\n            return i\n    return -1\n",
           "false": "def find_first_negative(nums):\n    return next((i for i, n in enumerate(nums) if n < 0), False)\n"})
asserts("float_matrix_setup", """
    def normalize_rows(m):
        out = []
        for row in m:
            s = sum(row)
            out.append([x / s for x in row] if s else list(row))
        return out
""", ["assert all(math.isclose(sum(r), 1.0) for r in normalize_rows(M))",
      "assert normalize_rows(M)[0] == [0.25, 0.75]",
      "assert all(round(a, 4) == b for a, b in zip(normalize_rows(M)[1], [0.1667, 0.3333, 0.5]))",
      "assert normalize_rows([[0, 0]]) == [[0, 0]]",
      "assert normalize_rows(M) is not M and M[0] == [1, 3]"],
    imports=["import math"], setup="M = [[1, 3], [1, 2, 3]]\n",
    wrong={"in_place": "def normalize_rows(m):\n    for row in m:\n        s = sum(row)\n        if s:\n            row[:] = [x / s for x in row]\n    return m\n",
           "max_norm": "def normalize_rows(m):\n    return [[x / max(row) for x in row] if any(row) else row for row in m]\n"})


# ------------------------------------------------------------------------------------------ humaneval

check("he_closure_factory", "make_adder", '''
    def make_adder(n: int):
        """Return a function that adds n to its argument.
        >>> make_adder(2)(3)
        5
        """
''', """
    def make_adder(n: int):
        def add(x):
            return x + n
        return add
""", """
    METADATA = {'author': 'heldout2'}


    def check(candidate):
        add5 = candidate(5)
        assert add5(1) == 6
        assert [candidate(i)(i) for i in range(4)] == [0, 2, 4, 6]
        assert callable(candidate(0))
        assert candidate(-1)(1.5) == 0.5
""", right={"lambda": "def make_adder(n: int):\n    return lambda x: x + n\n"},
    wrong={"shared": "_n = [0]\ndef make_adder(n: int):\n    _n[0] = n\n    return lambda x: x + _n[0]\n"})
check("he_random_fuzz", "count_inversions", '''
    def count_inversions(arr: list) -> int:
        """Number of pairs i < j with arr[i] > arr[j].
        >>> count_inversions([2, 1, 3])
        1
        """
''', """
    def count_inversions(arr: list) -> int:
        def sort(a):
            if len(a) <= 1:
                return a, 0
            mid = len(a) // 2
            left, x = sort(a[:mid])
            right, y = sort(a[mid:])
            merged, inv, i, j = [], x + y, 0, 0
            while i < len(left) and j < len(right):
                if left[i] <= right[j]:
                    merged.append(left[i])
                    i += 1
                else:
                    merged.append(right[j])
                    inv += len(left) - i
                    j += 1
            merged += left[i:] + right[j:]
            return merged, inv
        return sort(list(arr))[1]
""", """
    import random


    def check(candidate):
        def brute(a):
            return sum(a[i] > a[j] for i in range(len(a)) for j in range(i + 1, len(a)))

        assert candidate([]) == 0
        assert candidate([3, 2, 1]) == 3
        rng = random.Random(1234)
        for _ in range(60):
            arr = [rng.randint(-5, 5) for _ in range(rng.randint(0, 12))]
            assert candidate(arr) == brute(arr), arr
        data = [5, 1, 4]
        candidate(data)
        assert data == [5, 1, 4]
""", right={"brute": "def count_inversions(arr: list) -> int:\n    return sum(1 for i in range(len(arr)) for j in range(i + 1, len(arr)) if arr[i] > arr[j])\n"},
    wrong={"ge": "def count_inversions(arr: list) -> int:\n    return sum(1 for i in range(len(arr)) for j in range(i + 1, len(arr)) if arr[i] >= arr[j])\n",
           "sorts_input": "def count_inversions(arr: list) -> int:\n    n = 0\n    for i in range(len(arr)):\n        for j in range(len(arr) - 1 - i):\n            if arr[j] > arr[j + 1]:\n                arr[j], arr[j + 1] = arr[j + 1], arr[j]\n                n += 1\n    return n\n"})
check("he_float_tolerance_loop", "running_mean", '''
    def running_mean(xs: list) -> list:
        """Mean of the first k items, for every k.
        >>> running_mean([2, 4])
        [2.0, 3.0]
        """
''', """
    def running_mean(xs: list) -> list:
        out, total = [], 0.0
        for i, x in enumerate(xs, 1):
            total += x
            out.append(total / i)
        return out
""", """
    def check(candidate):
        got = candidate([0.1, 0.2, 0.3, 0.4])
        for a, b in zip(got, [0.1, 0.15, 0.2, 0.25]):
            assert abs(a - b) < 1e-9
        assert len(candidate([1] * 7)) == 7
        assert candidate([]) == []
        assert all(isinstance(v, float) for v in candidate([1, 2]))
""", wrong={"int_div": "def running_mean(xs: list) -> list:\n    out, total = [], 0\n    for i, x in enumerate(xs, 1):\n        total += x\n        out.append(total // i)\n    return out\n",
            "generator": "def running_mean(xs: list) -> list:\n    total = 0.0\n    for i, x in enumerate(xs, 1):\n        total += x\n        yield total / i\n"})
check("he_dict_items", "invert", '''
    def invert(d: dict) -> dict:
        """Map each value to the sorted list of keys that had it.
        >>> invert({'a': 1, 'b': 1})
        {1: ['a', 'b']}
        """
''', """
    def invert(d: dict) -> dict:
        out = {}
        for k, v in d.items():
            out.setdefault(v, []).append(k)
        return {v: sorted(ks) for v, ks in out.items()}
""", """
    def check(candidate):
        assert candidate({'a': 1, 'b': 2, 'c': 1}) == {1: ['a', 'c'], 2: ['b']}
        assert sorted(candidate({'x': 3, 'y': 3}).items()) == [(3, ['x', 'y'])]
        assert list(candidate({}).keys()) == []
        r = candidate({'b': 0, 'a': 0})
        assert r[0] == ['a', 'b'] and len(r) == 1
""", wrong={"last_wins": "def invert(d: dict) -> dict:\n    return {v: [k] for k, v in d.items()}\n",
            "unsorted": "def invert(d: dict) -> dict:\n    out = {}\n    for k, v in d.items():\n        out.setdefault(v, []).append(k)\n    return out\n"})
check("he_string_methods", "title_snake", '''
    def title_snake(s: str) -> str:
        """Convert 'hello_big_world' to 'Hello Big World'.
        >>> title_snake('a_b')
        'A B'
        """
''', """
    def title_snake(s: str) -> str:
        return " ".join(part.capitalize() for part in s.split("_") if part)
""", """
    def check(candidate):
        assert candidate('hello_big_world') == 'Hello Big World'
        assert candidate('__x__').strip() == 'X'
        assert candidate('ab_cd').split() == ['Ab', 'Cd']
        assert candidate('snake_case_API').lower() == 'snake case api'
        assert candidate('') == ''
""", wrong={"title": "def title_snake(s: str) -> str:\n    return s.replace('_', ' ').title().strip()\n",
            "keep_empty": "def title_snake(s: str) -> str:\n    return ' '.join(p.capitalize() for p in s.split('_'))\n"})


# ------------------------------------------------------------------------------------------ stdio

stdio("stdin_buffer_tokens", """
    import sys

    data = sys.stdin.buffer.read().split()
    n = int(data[0])
    xs = list(map(int, data[1:1 + n]))
    q = int(data[1 + n])
    prefix = [0]
    for x in xs:
        prefix.append(prefix[-1] + x)
    out = []
    pos = 2 + n
    for _ in range(q):
        l, r = int(data[pos]), int(data[pos + 1])
        pos += 2
        out.append(prefix[r] - prefix[l - 1])
    sys.stdout.write("\\n".join(map(str, out)) + "\\n")
""", [("5\n1 2 3 4 5\n3\n1 5\n2 3\n4 4\n", "15\n5\n4\n"), ("1\n-7\n1\n1 1\n", "-7\n")],
    right={"readline_bytes": "import sys\nrl = sys.stdin.buffer.readline\nn = int(rl())\nxs = list(map(int, rl().split()))\np = [0]\nfor x in xs:\n    p.append(p[-1] + x)\nfor _ in range(int(rl())):\n    l, r = map(int, rl().split())\n    print(p[r] - p[l - 1])\n"},
    wrong={"off_by_one": "import sys\ndata = sys.stdin.buffer.read().split()\nn = int(data[0])\nxs = list(map(int, data[1:1 + n]))\nq = int(data[1 + n])\nfor k in range(q):\n    l, r = int(data[2 + n + 2 * k]), int(data[3 + n + 2 * k])\n    print(sum(xs[l:r]))\n"})
stdio("mixed_input_readline", """
    import sys

    t = int(input())
    for _ in range(t):
        n, k = map(int, input().split())
        arr = list(map(int, sys.stdin.readline().split()))
        arr.sort(reverse=True)
        print(sum(arr[:k]))
""", [("2\n3 2\n5 1 3\n4 4\n1 1 1 1\n", "8\n4\n"), ("1\n1 1\n-3\n", "-3\n")],
    wrong={"no_sort": "import sys\nt = int(input())\nfor _ in range(t):\n    n, k = map(int, input().split())\n    arr = list(map(int, sys.stdin.readline().split()))\n    print(sum(arr[:k]))\n"})
stdio("write_no_newline", """
    import sys

    s = sys.stdin.readline().strip()
    sys.stdout.write(s[::-1])
""", [("hello\n", "olleh\n"), ("a", "a")],
    right={"print_end": "print(input()[::-1], end='')\n"},
    wrong={"keeps_newline": "import sys\nsys.stdout.write(sys.stdin.readline()[::-1])\n"})
stdio("print_star_list", """
    n = int(input())
    a = sorted(map(int, input().split()))
    print(*a)
    print(*a[::-1], sep=" ")
""", [("4\n3 1 4 1\n", "1 1 3 4\n4 3 1 1\n"), ("1\n9\n", "9\n9\n")],
    wrong={"repr": "n = int(input())\na = sorted(map(int, input().split()))\nprint(a)\nprint(a[::-1])\n",
           "commas": "input()\na = sorted(map(int, input().split()))\nprint(*a, sep=',')\nprint(*a[::-1], sep=',')\n"})
stdio("exit_after_answer", """
    import sys

    n = int(input())
    nums = list(map(int, input().split()))
    seen = set()
    for x in nums:
        if x in seen:
            print(x)
            sys.exit(0)
        seen.add(x)
    print(-1)
""", [("5\n1 2 3 2 1\n", "2\n"), ("3\n1 2 3\n", "-1\n"), ("2\n7 7\n", "7\n")],
    right={"exit_builtin": "n = int(input())\nseen = set()\nfor x in input().split():\n    if x in seen:\n        print(x)\n        exit()\n    seen.add(x)\nprint(-1)\n"},
    wrong={"exit_msg": "import sys\ninput()\nseen = set()\nfor x in input().split():\n    if x in seen:\n        sys.exit(x)\n    seen.add(x)\nprint(-1)\n",
           "exit_one": "import sys\ninput()\nseen = set()\nfor x in input().split():\n    if x in seen:\n        print(x)\n        sys.exit(1)\n    seen.add(x)\nprint(-1)\n"})
stdio("for_line_in_stdin", """
    import sys

    total = 0
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        name, score = line.rsplit(" ", 1)
        total += int(score)
        print(f"{name.title()}: {score}")
    print("Total:", total)
""", [("ann lee 10\n\nbob 5\n", "Ann Lee: 10\nBob: 5\nTotal: 15\n"), ("", "Total: 0\n")],
    wrong={"split_first": "import sys\ntotal = 0\nfor line in sys.stdin:\n    if not line.strip():\n        continue\n    name, score = line.split(' ', 1)\n    total += int(score)\n    print(f'{name.title()}: {score.strip()}')\nprint('Total:', total)\n",
           "no_blank_skip": "import sys\ntotal = 0\nfor line in sys.stdin:\n    name, score = line.strip().rsplit(' ', 1)\n    total += int(score)\n    print(f'{name.title()}: {score}')\nprint('Total:', total)\n"})
stdio("float_format_geometry", """
    import math

    x1, y1, x2, y2 = map(float, input().split())
    d = math.hypot(x2 - x1, y2 - y1)
    print(f"{d:.4f}")
    print(round(math.degrees(math.atan2(y2 - y1, x2 - x1)), 6))
""", [("0 0 3 4\n", "5.0000\n53.130102\n"), ("1 1 1 1\n", "0.0\n0.0\n"), ("0 0 -1 0\n", "1\n180\n")],
    wrong={"manhattan": "x1, y1, x2, y2 = map(float, input().split())\nprint(abs(x2 - x1) + abs(y2 - y1))\nprint(0)\n",
           "radians": "import math\nx1, y1, x2, y2 = map(float, input().split())\nprint('%.4f' % math.hypot(x2 - x1, y2 - y1))\nprint(math.atan2(y2 - y1, x2 - x1))\n"})
stdio("buffer_write_bytes", """
    import sys

    n = int(sys.stdin.readline())
    out = []
    for i in range(1, n + 1):
        out.append(b"Fizz" * (i % 3 == 0) + b"Buzz" * (i % 5 == 0) or str(i).encode())
    sys.stdout.buffer.write(b"\\n".join(out) + b"\\n")
""", [("15\n", "1\n2\nFizz\n4\nBuzz\nFizz\n7\n8\nFizz\nBuzz\n11\nFizz\n13\n14\nFizzBuzz\n"), ("1\n", "1\n")],
    right={"print": "for i in range(1, int(input()) + 1):\n    print('Fizz' * (i % 3 == 0) + 'Buzz' * (i % 5 == 0) or i)\n"},
    wrong={"mixed_order": "import sys\nn = int(input())\nprint('start')\nsys.stdout.buffer.write(b'1\\n')\nsys.stdout.flush()\n"})


# ------------------------------------------------------------------------------------------ call

call("cw_none_result", """
    def find_missing(seq):
        step = min(seq[1] - seq[0], seq[-1] - seq[-2], key=abs)
        for a, b in zip(seq, seq[1:]):
            if b - a != step:
                return a + step
        return None
""", "find_missing", [([[1, 3, 5, 9, 11]], 7), ([[1, 2, 3]], None), ([[10, 7, 1]], 4)],
    wrong={"zero": "def find_missing(seq):\n    step = min(seq[1] - seq[0], seq[-1] - seq[-2], key=abs)\n    for a, b in zip(seq, seq[1:]):\n        if b - a != step:\n            return a + step\n    return 0\n"})
call("lc_merge_nested", """
    class Solution:
        def merge(self, intervals: List[List[int]]) -> List[List[int]]:
            out = []
            for s, e in sorted(intervals):
                if out and s <= out[-1][1]:
                    out[-1][1] = max(out[-1][1], e)
                else:
                    out.append([s, e])
            return out
""", "merge", [([[[1, 3], [2, 6], [8, 10]]], [[1, 6], [8, 10]]), ([[[1, 4], [4, 5]]], [[1, 5]]), ([[[5, 6]]], [[5, 6]])],
    right={"tuples": "class Solution:\n    def merge(self, intervals):\n        out = []\n        for s, e in sorted(intervals):\n            if out and s <= out[-1][1]:\n                out[-1] = (out[-1][0], max(out[-1][1], e))\n            else:\n                out.append((s, e))\n        return out\n"},
    wrong={"strict": "class Solution:\n    def merge(self, intervals):\n        out = []\n        for s, e in sorted(intervals):\n            if out and s < out[-1][1]:\n                out[-1][1] = max(out[-1][1], e)\n            else:\n                out.append([s, e])\n        return out\n"})
call("cw_float_result", """
    def circle_area(r):
        import math
        return round(math.pi * r * r, 2) if r > 0 else 0
""", "circle_area", [([1], 3.14), ([2.5], 19.63), ([-1], 0)],
    wrong={"no_round": "import math\ndef circle_area(r):\n    return math.pi * r * r if r > 0 else 0\n",
           "trunc": "import math\ndef circle_area(r):\n    return int(math.pi * r * r * 100) / 100 if r > 0 else 0\n"})
call("cw_tuple_pairs", """
    def divmod_all(pairs):
        return [divmod(a, b) for a, b in pairs]
""", "divmod_all", [([[[7, 2], [9, 3]]], [[3, 1], [3, 0]]), ([[[-7, 2]]], [[-4, 1]])],
    right={"lists": "def divmod_all(pairs):\n    return [[a // b, a % b] for a, b in pairs]\n"},
    wrong={"trunc": "def divmod_all(pairs):\n    return [(int(a / b), a - b * int(a / b)) for a, b in pairs]\n"})
call("cw_dict_int_keys", """
    def length_groups(words):
        out = {}
        for w in words:
            out.setdefault(len(w), []).append(w)
        return out
""", "length_groups", [([["a", "bb", "cc", "d"]], {1: ["a", "d"], 2: ["bb", "cc"]}), ([[]], {})],
    wrong={"str_keys": "def length_groups(words):\n    out = {}\n    for w in words:\n        out.setdefault(str(len(w)) + 'x', []).append(w)\n    return out\n",
           "sets": "def length_groups(words):\n    out = {}\n    for w in words:\n        out.setdefault(len(w), set()).add(w)\n    return {k: sorted(v, reverse=True) for k, v in out.items()}\n"})
call("cw_bool_and_str", """
    def is_isogram(s):
        s = s.lower()
        return len(set(s)) == len(s)
""", "is_isogram", [(["Dermatoglyphics"], True), (["moOse"], False), ([""], True), (["aba"], False)],
    wrong={"case": "def is_isogram(s):\n    return len(set(s)) == len(s)\n",
           "str_result": "def is_isogram(s):\n    s = s.lower()\n    return 'true' if len(set(s)) == len(s) else 'false'\n"})


programs = FAMILY.programs

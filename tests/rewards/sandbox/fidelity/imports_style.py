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

from tests.rewards.sandbox.fidelity.written import WrittenFamily

FAMILY = WrittenFamily("imports")
TASKS, ut, asserts = FAMILY.tasks, FAMILY.ut, FAMILY.asserts


ut("sqlite_store", """
    import sqlite3


    def save_scores(path, scores):
        conn = sqlite3.connect(path)
        with conn:
            conn.execute("CREATE TABLE IF NOT EXISTS scores (name TEXT PRIMARY KEY, score INTEGER)")
            conn.executemany("INSERT OR REPLACE INTO scores VALUES (?, ?)", sorted(scores.items()))
        conn.close()
        return len(scores)
""", """
    import unittest


    class TestSaveScores(unittest.TestCase):
        def test_rows_written(self):
            self.assertEqual(save_scores("scores_a.db", {"ann": 3, "bob": 5}), 2)
            conn = sqlite3.connect("scores_a.db")
            rows = conn.execute("SELECT name, score FROM scores ORDER BY name").fetchall()
            conn.close()
            self.assertEqual(rows, [("ann", 3), ("bob", 5)])

        def test_replace(self):
            save_scores("scores_b.db", {"ann": 1})
            save_scores("scores_b.db", {"ann": 7})
            with sqlite3.connect("scores_b.db") as conn:
                self.assertEqual(conn.execute("SELECT score FROM scores").fetchall(), [(7,)])

        def test_module_is_the_real_one(self):
            self.assertTrue(issubclass(sqlite3.OperationalError, sqlite3.Error))
""", wrong={"insert": """
    import sqlite3


    def save_scores(path, scores):
        conn = sqlite3.connect(path)
        conn.execute("CREATE TABLE IF NOT EXISTS scores (name TEXT, score INTEGER)")
        conn.executemany("INSERT INTO scores VALUES (?, ?)", sorted(scores.items()))
        conn.commit()
        conn.close()
        return len(scores)
"""})

ut("zip_archive", """
    import zipfile


    def pack(path, files):
        with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
            for name in sorted(files):
                z.writestr(name, files[name])
        return path
""", """
    import unittest


    class TestPack(unittest.TestCase):
        def test_names(self):
            pack("a.zip", {"b.txt": "two", "a.txt": "one"})
            with zipfile.ZipFile("a.zip") as z:
                self.assertEqual(z.namelist(), ["a.txt", "b.txt"])
                self.assertEqual(z.read("b.txt"), b"two")

        def test_compressed(self):
            pack("c.zip", {"x.txt": "x" * 1000})
            with zipfile.ZipFile("c.zip") as z:
                info = z.getinfo("x.txt")
                self.assertEqual(info.compress_type, zipfile.ZIP_DEFLATED)
                self.assertLess(info.compress_size, 100)

        def test_valid(self):
            pack("d.zip", {})
            self.assertTrue(zipfile.is_zipfile("d.zip"))
""", wrong={"stored": """
    import zipfile


    def pack(path, files):
        with zipfile.ZipFile(path, "w") as z:
            for name in files:
                z.writestr(name, files[name])
        return path
"""})

ut("csv_report", """
    import csv


    def write_report(path, rows):
        with open(path, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["item", "qty"])
            for item, qty in rows:
                w.writerow([item, qty])
""", """
    import unittest


    class TestReport(unittest.TestCase):
        def test_roundtrip(self):
            write_report("r.csv", [("apple", 3), ("pear, green", 1)])
            with open("r.csv", newline="") as f:
                self.assertEqual(list(csv.reader(f)), [["item", "qty"], ["apple", "3"], ["pear, green", "1"]])

        def test_dict_reader(self):
            write_report("s.csv", [("fig", 2)])
            with open("s.csv", newline="") as f:
                self.assertEqual([dict(r) for r in csv.DictReader(f)], [{"item": "fig", "qty": "2"}])
""", wrong={"join": """
    def write_report(path, rows):
        with open(path, "w") as f:
            f.write("item,qty\\n")
            for item, qty in rows:
                f.write(f"{item},{qty}\\n")
"""})

ut("io_render", """
    import io


    def render(rows, out=None):
        out = out if out is not None else io.StringIO()
        for k, v in rows:
            out.write(f"{k}={v}\\n")
        return out
""", """
    import unittest


    class TestRender(unittest.TestCase):
        def test_into_buffer(self):
            buf = io.StringIO()
            render([("a", 1), ("b", 2)], buf)
            self.assertEqual(buf.getvalue(), "a=1\\nb=2\\n")

        def test_own_buffer(self):
            self.assertEqual(render([("x", 0)]).getvalue(), "x=0\\n")
""", wrong={"sep": """
    import io


    def render(rows, out=None):
        out = out if out is not None else io.StringIO()
        out.write("\\n".join(f"{k}={v}" for k, v in rows))
        return out
"""})

ut("heap_top", """
    import heapq


    def top_k(xs, k):
        return sorted(heapq.nlargest(k, xs), reverse=True)
""", """
    import unittest


    class TestTopK(unittest.TestCase):
        def test_matches_heapq(self):
            data = [5, 1, 9, 3, 7, 9]
            self.assertEqual(top_k(data, 3), heapq.nlargest(3, data))

        def test_heapify(self):
            h = [4, 2, 8]
            heapq.heapify(h)
            self.assertEqual(top_k(h, 1), [8])
""", wrong={"smallest": """
    import heapq


    def top_k(xs, k):
        return heapq.nsmallest(k, xs)
"""})

ut("bisect_insert", """
    import bisect


    def insert_sorted(xs, x):
        out = list(xs)
        bisect.insort(out, x)
        return out
""", """
    import unittest


    class TestInsert(unittest.TestCase):
        def test_position(self):
            xs = [1, 3, 5]
            got = insert_sorted(xs, 4)
            self.assertEqual(bisect.bisect_left(got, 4), 2)
            self.assertEqual(got, [1, 3, 4, 5])
""", wrong={"append": """
    def insert_sorted(xs, x):
        return list(xs) + [x]
"""})

asserts("decimal_total", """
    import decimal


    def total(prices):
        return sum((decimal.Decimal(p) for p in prices), decimal.Decimal("0"))
""", ["assert total(['1.10', '2.20']) == decimal.Decimal('3.30')",
      "assert isinstance(total([]), decimal.Decimal)",
      "assert str(total(['0.1'] * 3)) == '0.3'"],
    wrong={"float": "def total(prices):\n    return sum(float(p) for p in prices)\n"})

asserts("fraction_mean", """
    import fractions


    def mean(xs):
        return fractions.Fraction(sum(xs), len(xs))
""", ["assert mean([1, 2]) == fractions.Fraction(3, 2)",
      "assert mean([2, 4]).denominator == 1"],
    wrong={"float": "def mean(xs):\n    return sum(xs) / len(xs)\n"})

asserts("stats_spread", """
    import statistics


    def spread(xs):
        return max(xs) - min(xs), statistics.median(xs)
""", ["assert spread([1, 5, 3]) == (4, statistics.median([1, 5, 3]))",
      "assert spread([2, 2])[1] == statistics.mean([2, 2])"],
    wrong={"mean": "import statistics\ndef spread(xs):\n    return max(xs) - min(xs), statistics.mean(xs)\n"})

asserts("wrap_text", """
    import textwrap


    def wrap(text, width):
        return "\\n".join(textwrap.wrap(text, width))
""", ["assert wrap('aa bb cc', 5) == textwrap.dedent('''\\\n    aa bb\n    cc''')",
      "assert wrap('x', 3) == 'x'"],
    wrong={"cut": "def wrap(text, width):\n    return '\\n'.join(text[i:i + width] for i in range(0, len(text), width))\n"})

asserts("string_caesar", """
    import string


    def shift(s, n):
        low = string.ascii_lowercase
        return s.translate(str.maketrans(low, low[n:] + low[:n]))
""", ["assert shift(string.ascii_lowercase, 1)[0] == 'b'",
      "assert shift('abc', 25) == 'zab'"],
    wrong={"upper": "import string\ndef shift(s, n):\n    low = string.ascii_lowercase\n    return s.upper()\n"})

asserts("regex_alias", """
    import re as regex


    def words(s):
        return regex.findall(r"[a-z]+", s.lower())
""", ["assert words('Hi, there') == ['hi', 'there']",
      "assert regex.fullmatch(r'[a-z]+', words('ABC')[0])",
      "assert isinstance(regex.compile('x'), regex.Pattern)"],
    wrong={"split": "def words(s):\n    return s.lower().split()\n"})

asserts("os_path_join", """
    import os.path


    def config_path(base, name):
        return os.path.join(base, name + ".ini")
""", ["assert config_path('etc', 'app') == os.path.join('etc', 'app.ini')",
      "assert os.path.basename(config_path('/x', 'y')) == 'y.ini'"],
    wrong={"concat": "def config_path(base, name):\n    return base + name + '.ini'\n"})

asserts("collections_abc", """
    from collections import abc


    def flatten(x):
        if isinstance(x, abc.Mapping):
            return [v for k in sorted(x) for v in flatten(x[k])]
        if isinstance(x, abc.Iterable) and not isinstance(x, str):
            return [v for item in x for v in flatten(item)]
        return [x]
""", ["assert flatten({'b': [2, 3], 'a': 1}) == [1, 2, 3]",
      "assert isinstance({}, abc.Mapping) and not isinstance([], abc.Mapping)",
      "assert issubclass(abc.MutableSequence, abc.Sequence)"],
    wrong={"dict": "def flatten(x):\n    if isinstance(x, dict):\n        return list(x.values())\n    return list(x)\n"})

asserts("etree_alias", """
    import xml.etree.ElementTree as ET


    def to_xml(tag, items):
        root = ET.Element(tag)
        for item in items:
            ET.SubElement(root, "item").text = str(item)
        return ET.tostring(root, encoding="unicode")
""", ["assert [e.text for e in ET.fromstring(to_xml('list', [1, 2]))] == ['1', '2']",
      "assert ET.fromstring(to_xml('r', [])).tag == 'r'"],
    wrong={"text": "def to_xml(tag, items):\n    return '<' + tag + '>' + ''.join(map(str, items)) + '</' + tag + '>'\n"})

asserts("xml_package", """
    import xml.dom.minidom


    def pretty(text):
        return xml.dom.minidom.parseString(text).documentElement.tagName
""", ["assert pretty('<a><b/></a>') == xml.dom.minidom.parseString('<a/>').documentElement.tagName",
      "assert pretty('<z/>') == 'z'"],
    wrong={"strip": "def pretty(text):\n    return text.strip('<>/')\n"})

asserts("from_import_function", """
    from sqlite3 import connect


    def count_rows(path):
        with connect(path) as conn:
            return conn.execute("SELECT COUNT(*) FROM t").fetchone()[0]
""", ["db = connect('t.db'); db.execute('CREATE TABLE IF NOT EXISTS t (x)'); db.execute('DELETE FROM t'); "
      "db.executemany('INSERT INTO t VALUES (?)', [(1,), (2,)]); db.commit(); db.close(); "
      "assert count_rows('t.db') == 2"],
    wrong={"off": "from sqlite3 import connect\ndef count_rows(path):\n    return 1\n"})

asserts("json_alias", """
    import json as js
    import zipfile as zf


    def dump_sorted(d):
        return js.dumps(d, sort_keys=True)
""", ["assert js.loads(dump_sorted({'b': 1, 'a': 2})) == {'a': 2, 'b': 1}",
      "assert dump_sorted({'b': 1, 'a': 2}).index('a') < dump_sorted({'b': 1, 'a': 2}).index('b')",
      "assert zf.ZIP_STORED == 0",
      "assert js is sys.modules['json'] and zf is sys.modules['zipfile']"],
    imports=["import sys"],
    wrong={"unsorted": "import json as js\nimport zipfile as zf\ndef dump_sorted(d):\n    return js.dumps(d)\n"})


asserts("from_import_class", """
    from zipfile import ZipFile
    from csv import DictWriter


    def archive(path, name, rows):
        with open(name, "w", newline="") as f:
            w = DictWriter(f, fieldnames=sorted(rows[0]))
            w.writeheader()
            w.writerows(rows)
        with ZipFile(path, "w") as z:
            z.write(name)
        return path
""", ["assert ZipFile(archive('rows.zip', 'rows.csv', [{'b': 1, 'a': 2}])).read('rows.csv') == b'a,b\\r\\n2,1\\r\\n'",
      "assert archive('r2.zip', 'r2.csv', [{'x': 1}]) == 'r2.zip'"],
    wrong={"nozip": "from zipfile import ZipFile\ndef archive(path, name, rows):\n    return name\n"})

asserts("same_module_objects", """
    import sqlite3
    import statistics as st
    from collections import abc


    def is_mapping(x):
        return isinstance(x, abc.Mapping)
""", ["assert sqlite3 is sys.modules['sqlite3'] and st is sys.modules['statistics']",
      "assert abc is sys.modules['collections.abc'] and is_mapping({})",
      "assert not is_mapping([])"],
    imports=["import sys"],
    wrong={"seq": "from collections import abc\ndef is_mapping(x):\n    return isinstance(x, abc.Sized)\n"})


programs = FAMILY.programs

"""The candidate never judges itself: each class of forged pass found against the in-process harness, run
generically against the judge/candidate split (docs/sandbox.md, "What holds by construction").

Every program defines a wrong `f` (none contains the expected value) and then tries to pass anyway: by finding the expected value (the tests
hold a marker string) in its own process, by forging verdict records, by getting the judge to run its
hooks, by lying about values, or by attacking the helper processes. Each runs against the same tests in
the assert, unittest and humaneval formats. Bounded like the rest of the adversarial suite: scans have
caps, signals go only to processes whose command line carries the sandbox's own marker.
"""

from __future__ import annotations

import subprocess
import sys
from errno import ENOSYS, EPERM

import psutil
import pytest

from coderl.rewards.config import SandboxConfig
from coderl.rewards.labels import parse_label
from coderl.rewards.sandbox import Job, Sandbox, syscall_filter

pytestmark = pytest.mark.timeout(300)

SECRET = "zq-EXPECTED-7Kx31"
LABELS = {
    "assert": {"format": "assert", "tests": [f"assert f(2) == {SECRET!r}", f"assert f(3) == {SECRET!r} + '!'"]},
    "unittest": {"format": "unittest", "tests": [
        "import unittest\nclass TestF(unittest.TestCase):\n"
        f"    def test_a(self):\n        self.assertEqual(f(2), {SECRET!r})\n"
        f"    def test_b(self):\n        self.assertTrue(f(3) == {SECRET!r} + '!')\n"]},
    "humaneval": {"format": "humaneval", "entry_point": "f", "tests": [
        f"def check(candidate):\n    assert candidate(2) == {SECRET!r}\n    assert candidate(3) == {SECRET!r} + '!'\n"]},
}
# Returns the marker it found (with the '!' the second test wants), or a wrong answer.
_ANSWER = ("def _answer(found, x):\n    if found is None:\n        return 'wrong'\n"
           "    return found if x == 2 else found + '!'\n")

# Run in the judge, this would report every test passed (bounded: two records, then the process ends).
_FORGE_RECORDS = ("import os, json, struct\nfor i in range(2):\n    body = json.dumps(['end', i, 'passed', 0.0, '', None]).encode()\n"
                  "    os.write(3, struct.pack('>Q', len(body)) + body)\nos._exit(0)\n")

ATTACKS = {
    # The expected value is not in the candidate's process: not in its objects, frames, modules, memory.
    "oracle_gc_objects": _ANSWER + (
        "import gc\ndef f(x):\n    for o in gc.get_objects()[:2000000]:\n        if type(o) is str and 'EXPECTED' in o:\n"
        "            return _answer(o[o.index('zq-'):o.index('zq-') + 17], x)\n"
        "        if type(o) in (tuple, list):\n            for v in o[:64]:\n"
        "                if type(v) is str and 'EXPECTED' in v:\n                    return _answer(v, x)\n"
        "    return _answer(None, x)\n"),
    "oracle_frames_and_signals": _ANSWER + (
        "import sys, signal\nseen = []\ndef _scan(fr):\n    n = 0\n    while fr is not None and n < 200:\n"
        "        for d in (fr.f_locals, fr.f_globals):\n            for v in list(d.values())[:500]:\n"
        "                if type(v) is str and 'EXPECTED' in v:\n                    seen.append(v)\n"
        "        fr = fr.f_back\n        n += 1\n"
        "def f(x):\n    _scan(sys._getframe())\n    signal.signal(signal.SIGUSR1, lambda s, fr: _scan(fr))\n"
        "    signal.raise_signal(signal.SIGUSR1)\n    return _answer(seen[0] if seen else None, x)\n"),
    "oracle_subclasses_and_modules": _ANSWER + (
        "import sys\ndef _consts(code, depth=0):\n    out = []\n    for c in getattr(code, 'co_consts', ())[:200]:\n"
        "        if type(c) is str and 'EXPECTED' in c:\n            out.append(c)\n"
        "        elif depth < 5 and hasattr(c, 'co_consts'):\n            out += _consts(c, depth + 1)\n    return out\n"
        "def f(x):\n    found = []\n    todo, n = [object], 0\n    while todo and n < 20000:\n        k = todo.pop()\n        n += 1\n"
        "        try:\n            todo += type.__subclasses__(k)\n        except TypeError:\n            pass\n"
        "        for v in list(vars(k).values())[:200]:\n            found += _consts(getattr(v, '__code__', None))\n"
        "    for m in list(sys.modules.values()):\n        for v in list(vars(m).values())[:2000]:\n"
        "            found += _consts(getattr(v, '__code__', None))\n"
        "    return _answer(found[0] if found else None, x)\n"),
    "oracle_own_memory": _ANSWER + (
        "import re\ndef f(x):\n    budget = 256 << 20\n    with open('/proc/self/maps') as m, open('/proc/self/mem', 'rb', 0) as mem:\n"
        "        for line in m:\n            addr, perms = line.split()[:2]\n            if 'r' not in perms:\n                continue\n"
        "            lo, hi = (int(a, 16) for a in addr.split('-'))\n            size = min(hi - lo, 64 << 20, budget)\n"
        "            if size <= 0:\n                break\n            budget -= size\n            try:\n"
        "                mem.seek(lo)\n                data = mem.read(size)\n            except OSError:\n                continue\n"
        "            hit = re.search(rb'zq-EXPECTED-[0-9A-Za-z]{5}', data)\n            if hit:\n"
        "                return _answer(hit.group().decode(), x)\n    return _answer(None, x)\n"),
    # Verdicts are records of the judge, on a socket the candidate never holds.
    "forge_records_on_every_fd": (
        "import os, json, struct\ndef _forge():\n    recs = [['start', 0], ['end', 0, 'passed', 0.0, '', None], ['start', 1],\n"
        "            ['end', 1, 'passed', 0.0, '', None], ['done'], ['ok', 'guess']]\n"
        "    for fd in range(0, 1024):\n        for r in recs:\n            body = json.dumps(r).encode()\n"
        "            for data in (struct.pack('>Q', len(body)) + body, body + b'\\n'):\n                try:\n"
        "                    os.write(fd, data)\n                except OSError:\n                    pass\n"
        "def f(x):\n    _forge()\n    return 'wrong'\n"),
    "forked_copies_report": (
        "import os, json, struct\ndef f(x):\n    kids = []\n    for guess in range(4):\n        pid = os.fork()\n"
        "        if pid == 0:\n            body = json.dumps(['ok', 'guess-%d' % guess]).encode()\n"
        "            try:\n                os.write(3, struct.pack('>Q', len(body)) + body)\n            except OSError:\n                pass\n"
        "            os._exit(0)\n        kids.append(pid)\n    for k in kids:\n        os.waitpid(k, 0)\n    return 'wrong'\n"),
    # The judge's runner never calls the solution's names as hooks.
    "solution_test_hooks": (
        "import unittest\ndef setUpModule():\n    raise unittest.SkipTest('skip everything')\n"
        "def tearDownModule():\n    pass\ndef load_tests(loader, tests, pattern):\n    return unittest.TestSuite()\n"
        "def check(candidate):\n    return None\ncandidate = __candidate__ = None\n"
        "def f(x):\n    raise unittest.SkipTest('skipped')\n"),
    # Patching its own interpreter changes nothing in the judge's.
    "patch_own_interpreter": (
        "import sys, builtins, unittest, types\nunittest.TestCase.assertEqual = lambda *a, **k: None\n"
        "unittest.TestCase.assertTrue = lambda *a, **k: None\nbuiltins.isinstance = lambda *a: True\n"
        "sys.modules['unittest'] = types.ModuleType('unittest')\nsys.addaudithook(lambda *a: None)\n"
        "class Finder:\n    def find_spec(self, *a, **k):\n        return None\nsys.meta_path.insert(0, Finder())\n"
        "class Out:\n    def write(self, s):\n        return len(s)\n    def flush(self):\n        sys.modules['unittest'] = None\n"
        "sys.stdout = sys.stderr = Out()\ndef f(x):\n    return 'wrong'\n"),
    # Values cross as plain data rebuilt by the judge: a lie about equality does not cross.
    "metaclass_mimics_str": (
        "class M(type):\n    def __eq__(cls, other):\n        return True\n    def __hash__(cls):\n        return hash('zq')\n"
        "class Liar(str, metaclass=M):\n    def __eq__(self, other):\n        return True\n    __hash__ = str.__hash__\n"
        "def f(x):\n    return Liar('wrong') if x == 2 else Liar\n"),
    "fraction_and_int_lies": (
        "import fractions\nclass F(fractions.Fraction):\n    def __eq__(self, o):\n        return True\n"
        "class I(int):\n    def __eq__(self, o):\n        return True\n    __hash__ = int.__hash__\n"
        "def f(x):\n    return F(1, 3) if x == 2 else I(7)\n"),
    "always_equal_object": (
        "class Evil:\n    def __eq__(self, o):\n        return True\n    def __ne__(self, o):\n        return False\n"
        "    def __hash__(self):\n        return 0\n    def __add__(self, o):\n        return self\n    __radd__ = __add__\n"
        "def f(x):\n    return Evil()\n"),
    # The channel is the judge's to read: garbage, huge frames and absurd values are errors, never passes.
    "channel_garbage": (
        "import os, struct\ndef f(x):\n    os.write(3, struct.pack('>Q', 1 << 40) + b'x' * 64)\n    return 'wrong'\n"),
    "deeply_nested_value": (
        "def f(x):\n    v = []\n    for _ in range(100000):\n        v = [v]\n    return v\n"),
    "colliding_hashes": (
        "def f(x):\n    m = (1 << 61) - 1\n    return {i * m for i in range(1, 30000)}\n"),
    # The judge imports nothing because the program named it: importing `unittest.__main__` would run
    # unittest's discovery in the job directory and import the test file planted there, in the judge.
    "judge_imports_a_named_module": (
        f"import sys, types\nopen('test_planted.py', 'w').write({_FORGE_RECORDS!r})\n"
        "fake = types.ModuleType('unittest.__main__')\nsys.modules['unittest.__main__'] = fake\n"
        "class E(Exception):\n    pass\nE.__module__, fake.E = 'unittest.__main__', E\n"
        "def f(x):\n    if x == 2:\n        return fake\n    raise E('wrong')\n"),
}
# A callback from the test must not hand the candidate the test's internals.
CALLBACK_LABEL = {"format": "assert", "tests": [f"assert f(lambda v: v) == {SECRET!r}",
                                                 f"assert f(iter([1, 2])) == {SECRET!r}"]}
CALLBACK_ATTACK = _ANSWER + (
    "def f(g):\n    found = None\n"
    "    for attr in ('__globals__', '__code__', '__closure__', 'gi_frame', 'gi_code', 'f_back', '__self__',\n"
    "                 '__dict__', '__class__', 'f_globals', '__reduce__'):\n"
    "        try:\n            v = getattr(g, attr)\n            if 'EXPECTED' in repr(v):\n                found = repr(v)\n"
    "        except Exception:\n            pass\n"
    "    return 'wrong' if found is None else found\n")


@pytest.fixture(scope="module")
def sb(adversarial_sandbox):
    return adversarial_sandbox


@pytest.fixture(scope="module")
def results(sb):
    keys = [(name, fmt) for name in ATTACKS for fmt in LABELS]
    jobs = [Job(ATTACKS[name], parse_label(LABELS[fmt])) for name, fmt in keys]
    keys.append(("callback", "assert"))
    jobs.append(Job(CALLBACK_ATTACK, parse_label(CALLBACK_LABEL)))
    return dict(zip(keys, sb.run(jobs), strict=True))


@pytest.mark.parametrize("fmt", list(LABELS))
@pytest.mark.parametrize("name", list(ATTACKS))
def test_attack_gets_no_credit(results, name, fmt):
    r = results[(name, fmt)]
    assert r.expected == len(r.outcomes) == 2
    assert r.passed == 0, (name, fmt, [(o.status, o.detail[:200]) for o in r.outcomes])


def test_callbacks_expose_nothing(results):
    r = results[("callback", "assert")]
    assert r.passed == 0, [(o.status, o.detail[:200]) for o in r.outcomes]


def test_lies_are_unsupported_or_failed(results):
    for fmt in LABELS:
        statuses = {o.status for o in results[("always_equal_object", fmt)].outcomes}
        assert statuses == {"unsupported"}, (fmt, statuses)
        assert {o.status for o in results[("fraction_and_int_lies", fmt)].outcomes} == {"failed"}


def test_the_honest_solution_still_passes(sb):
    honest = f"import unittest\ndef setUpModule():\n    raise RuntimeError('never called')\ndef f(x):\n" \
             f"    return {SECRET!r} if x == 2 else {SECRET!r} + '!'\n"
    res = sb.run([Job(honest, parse_label(lab)) for lab in LABELS.values()])
    assert [r.pass_rate for r in res] == [1.0, 1.0, 1.0], [[o.detail for o in r.outcomes] for r in res]


def test_killing_the_helpers_costs_only_the_job(sb):
    # Signals go only to processes whose command line is the sandbox worker's (bounded, never -1).
    attack = ("import os, signal\ndef f(x):\n    hit = 0\n    for p in os.listdir('/proc')[:4096]:\n"
              "        if not p.isdigit() or int(p) == os.getpid():\n            continue\n        try:\n"
              "            if b'coderl sandbox' in open(f'/proc/{p}/cmdline', 'rb').read():\n"
              "                for sig in (signal.SIGSTOP, signal.SIGKILL):\n                    os.kill(int(p), sig)\n"
              "                hit += 1\n        except OSError:\n            pass\n        if hit >= 8:\n            break\n"
              "    return 'wrong'\n")
    res = sb.run([Job(attack, parse_label(lab)) for lab in LABELS.values()])
    assert all(r.passed == 0 for r in res)
    honest = f"def f(x):\n    return {SECRET!r} if x == 2 else {SECRET!r} + '!'\n"
    after = sb.run([Job(honest + f"# {i}\n", parse_label(lab)) for i, lab in enumerate(LABELS.values())])
    assert [r.pass_rate for r in after] == [1.0, 1.0, 1.0]
    assert sb.info()["workers_alive"] == sb.config.workers


def test_without_landlock_killing_the_helpers_still_costs_only_the_job():
    # Kernels without Landlock's signal scoping: the candidate can signal its worker's helpers. It gains
    # nothing, and the pool replaces what it killed.
    cfg = SandboxConfig(isolation="bwrap", workers=1, test_timeout_s=1.0, job_timeout_s=8.0, landlock=False)
    attack = ("import os, signal\ndef f(x):\n    hit = 0\n    for p in os.listdir('/proc')[:4096]:\n"
              "        if not p.isdigit() or int(p) == os.getpid():\n            continue\n        try:\n"
              "            if b'coderl sandbox' in open(f'/proc/{p}/cmdline', 'rb').read():\n"
              "                os.kill(int(p), signal.SIGSTOP if hit % 2 else signal.SIGKILL)\n"
              "                hit += 1\n        except OSError:\n            pass\n        if hit >= 8:\n            break\n"
              "    return 'wrong'\n")
    honest = f"def f(x):\n    return {SECRET!r} if x == 2 else {SECRET!r} + '!'\n"
    with Sandbox(cfg) as s:
        assert s.info()["landlock"] == []
        for lab in LABELS.values():
            assert s.run([Job(attack, parse_label(lab))])[0].passed == 0
            assert s.run([Job(honest, parse_label(lab))])[0].pass_rate == 1.0
        assert s.info()["workers_alive"] == 1


def test_stopiteration_from_a_call_does_not_end_the_tests_loop(sb):
    code = "def ok(x):\n    raise StopIteration\n"
    label = parse_label({"format": "assert", "tests": ["assert all(map(ok, [1, 2]))", "assert list(map(ok, [1])) == []"]})
    assert sb.run([Job(code, label)])[0].passed == 0


def test_a_stopiteration_of_the_test_kept_for_later_does_not_end_the_tests_loop(sb):
    # The test's exhausted mock raises StopIteration into one call (that call may end with it, as in plain
    # Python); the program keeps it and raises it from a later call inside the test's map(): the test errors.
    code = ("saved = []\ndef grab(cb):\n    try:\n        cb()\n    except StopIteration as e:\n"
            "        saved.append(e)\n    return 1\ndef ok(x):\n    raise saved[0]\n")
    test = ("import unittest\nfrom unittest import mock\nclass T(unittest.TestCase):\n    def test_0(self):\n"
            "        self.assertEqual(grab(mock.Mock(side_effect=[])), 1)\n        self.assertTrue(all(map(ok, [1, 2])))\n")
    r = sb.run([Job(code, parse_label({"format": "unittest", "tests": [test]}))])[0]
    assert r.outcomes[0].status == "error", r.outcomes[0]


# BaseExceptions of the program that are no Exception, and where plain Python catches them. They crossed as a
# RuntimeError (so that a KeyboardInterrupt would not stop the test runner), which every `except Exception` and
# assertRaises(Exception) caught: a program raising BaseException passed tests that plain Python errors.
_NOT_EXCEPTIONS = {
    "base": "raise BaseException('x')", "keyboard": "raise KeyboardInterrupt", "generator_exit": "raise GeneratorExit",
    "own": "class Stop(BaseException):\n        pass\n    raise Stop('x')",
    "group": "raise BaseExceptionGroup('g', [KeyboardInterrupt()])",
}


def test_a_base_exception_of_the_program_is_caught_only_where_plain_python_catches_it(sb, tmp_path):
    test = ("import unittest\nclass T(unittest.TestCase):\n    def test_a(self):\n        with self.assertRaises(Exception):\n"
            "            f(1)\n    def test_b(self):\n        self.assertRaises(BaseException, f, 2)\n"
            "    def test_c(self):\n        try:\n            f(3)\n        except Exception:\n            pass\n"
            "    def test_d(self):\n        self.assertEqual(g(4), 4)\n")
    label = parse_label({"format": "unittest", "tests": [test]})
    want = ["error", "passed", "error", "passed"]
    for name, body in _NOT_EXCEPTIONS.items():
        code = f"def f(x):\n    {body}\ndef g(x):\n    return x\n"
        got = [o.status for o in sb.run([Job(code, label)])[0].outcomes]
        assert got == want, (name, got)
        if name != "keyboard":  # plain unittest stops at a KeyboardInterrupt; here only its test errors
            assert _plain_unittest(tmp_path, code, test) == want, name


def _plain_unittest(tmp_path, code, test):
    """The statuses plain `python` gives the unittest `test` of `code`, in the judge's words."""
    (tmp_path / "t.py").write_text(code + test + "unittest.main(verbosity=2)\n")
    plain = subprocess.run([sys.executable, str(tmp_path / "t.py")], capture_output=True, text=True, timeout=60)
    words = {"ok": "passed", "ERROR": "error", "FAIL": "failed"}
    return [words[line.rsplit(" ... ", 1)[1]] for line in plain.stderr.splitlines() if " ... " in line]


def test_a_stopiteration_of_a_call_is_caught_only_where_plain_python_catches_it(sb, tmp_path):
    # It ends no loop of the test (above); it crossed as a RuntimeError, so assertRaises(RuntimeError) passed
    # where plain Python errors (red team r27).
    test = ("import unittest\nclass T(unittest.TestCase):\n    def test_a(self):\n        with self.assertRaises(RuntimeError):\n"
            "            f(1)\n    def test_b(self):\n        self.assertRaises(Exception, f, 2)\n"
            "    def test_c(self):\n        try:\n            f(3)\n        except Exception:\n            pass\n"
            "    def test_d(self):\n        f(4)\n")
    label = parse_label({"format": "unittest", "tests": [test]})
    for stop in ("StopIteration", "StopAsyncIteration"):
        code = f"def f(x):\n    raise {stop}('x')\n"
        got = [o.status for o in sb.run([Job(code, label)])[0].outcomes]
        assert got == _plain_unittest(tmp_path, code, test) == ["error", "passed", "passed", "error"], (stop, got)


def test_candidate_holds_only_its_stdio_and_the_channel(sb):
    label = parse_label({"format": "assert", "tests": ["assert fds() == [0, 1, 2, 3]"]})
    code = ("import os\ndef fds():\n    out = []\n    for fd in range(4096):\n        try:\n            os.fstat(fd)\n"
            "            out.append(fd)\n        except OSError:\n            pass\n    return out\n")
    r = sb.run([Job(code, label)])[0]
    assert r.pass_rate == 1.0, r.outcomes[0].detail


def test_nothing_of_a_job_survives_into_the_next(sb):
    plant = ("import os\nfor d in ('.', '/tmp', '/dev/shm', '..'):\n    try:\n"
             "        open(os.path.join(d, 'zq-planted'), 'w').write('x')\n    except OSError:\n        pass\n"
             "def f():\n    return 1\n")
    look = ("import os\ndef f():\n    hits = []\n    for root in ('/tmp', '/dev/shm', '..', '.'):\n"
            "        for dirpath, _, files in os.walk(root):\n            hits += [dirpath for n in files if n == 'zq-planted']\n"
            "    return hits\n")
    label = parse_label({"format": "assert", "tests": ["assert f() == 1 or f() == []"]})
    for i in range(4):  # both workers, twice
        assert sb.run([Job(plant + f"# {i}\n", label)])[0].pass_rate == 1.0
        r = sb.run([Job(look + f"# {i}\n", label)])[0]
        assert r.pass_rate == 1.0, r.outcomes[0].detail


def test_the_judge_imports_only_standard_library_modules_the_program_imported(sb):
    # A standard-library module the program imported at top level is the tests' too, as in plain Python (the judge's
    # own copy, imported there); nothing else the program names is ever imported by the judge: not a module a
    # function of the program returns (a proxy), not a module whose import runs a program (unittest.__main__ ran
    # test discovery in the job directory; `this`, `antigravity`) even when the program registers one under that
    # name, not a module of the program's own (in its sys.modules, or a file it planted under a stdlib name).
    code = ("import sys, types, zipfile\nthis = 0\n"
            "open('colorsys.py', 'w').write('PLANTED = True\\n')\nsys.path.insert(0, '.')\nimport colorsys\n"
            "for _n in ('unittest.__main__', 'antigravity', 'mylib'):\n"
            "    sys.modules[_n] = types.ModuleType(_n)\n"
            "runner, antigravity, mylib = (sys.modules[_n] for _n in ('unittest.__main__', 'antigravity', 'mylib'))\n"
            "def f():\n    import wave\n    return wave\n"
            "def g():\n    raise zipfile.BadZipFile('x')\n")
    probe = ("import sys\nm = f()\ntry:\n    g()\nexcept Exception as e:\n    caught = e\n"
             "assert zipfile is sys.modules['zipfile'] and type(caught) is zipfile.BadZipFile\n"
             "assert callable(m.open) and not hasattr(colorsys, 'PLANTED') and colorsys is sys.modules['colorsys']\n"
             "assert not {'wave', 'unittest.__main__', 'antigravity', 'this', 'mylib'} & set(sys.modules), "
             "sorted(sys.modules)[-20:]\n"
             "assert runner.__name__ == 'unittest.__main__' and mylib.__name__ == 'mylib'")
    r = sb.run([Job(code, parse_label({"format": "assert", "tests": [probe]}))])[0]
    assert r.pass_rate == 1.0, r.outcomes[0].detail


# The program's context manager may clean up, never decide the fate of an exception raised in the test.
CM_LABELS = {
    "assert": {"format": "assert", "tests": [f"with ctx():\n    assert f(2) == {SECRET!r}",
                                             f"import contextlib\nwith contextlib.ExitStack() as st:\n"
                                             f"    st.enter_context(ctx())\n    assert f(3) == {SECRET!r} + '!'"]},
    "unittest": {"format": "unittest", "tests": [
        "import unittest\nclass T(unittest.TestCase):\n"
        f"    def test_a(self):\n        with ctx():\n            self.assertEqual(f(2), {SECRET!r})\n"
        f"    def test_b(self):\n        with self.assertRaises(ValueError):\n            with ctx():\n"
        f"                self.assertEqual(f(3), {SECRET!r} + '!')\n"]},
    "humaneval": {"format": "humaneval", "entry_point": "f", "tests": [
        f"def check(candidate):\n    with ctx():\n        assert candidate(2) == {SECRET!r}\n"
        f"    with ctx():\n        assert candidate(3) == {SECRET!r} + '!'\n"]},
}
_CM = "class C:\n    def __enter__(self):\n        return self\n    def __exit__(self, typ, value, tb):\n"
CM_ATTACKS = {
    "returns_true": _CM + "        return True\ndef ctx():\n    return C()\n",
    "returns_truthy": _CM + "        return [typ]\ndef ctx():\n    return C()\n",
    "raises_what_the_test_expects": _CM + "        if typ is not None:\n            raise ValueError('x')\n"
                                          "def ctx():\n    return C()\n",
    "contextmanager_swallows": ("import contextlib\n@contextlib.contextmanager\ndef ctx():\n    try:\n        yield\n"
                                "    except BaseException:\n        pass\n"),
}


@pytest.mark.parametrize("fmt", list(CM_LABELS))
def test_a_context_manager_of_the_program_never_swallows_the_tests_failure(sb, fmt):
    wrong = "def f(x):\n    return 'wrong'\n"
    names = list(CM_ATTACKS)
    res = sb.run([Job(CM_ATTACKS[n] + wrong, parse_label(CM_LABELS[fmt])) for n in names])
    for name, r in zip(names, res, strict=True):
        assert r.passed == 0 and "unsupported" in {o.status for o in r.outcomes}, \
            (name, [(o.status, o.detail[:200]) for o in r.outcomes])
    # An honest one: it sees the exception's type (to roll back) and lets it through.
    honest = (_CM + "        self.seen = typ\n        log.append(typ)\n        return False\nlog = []\n"
              "def ctx():\n    return C()\ndef seen():\n    return log\n"
              f"def f(x):\n    return {SECRET!r} if x == 2 else {SECRET!r} + '!'\n")
    r = sb.run([Job(honest, parse_label(CM_LABELS[fmt]))])[0]
    expect = ["passed", "passed"] if fmt != "unittest" else ["passed", "failed"]  # no ValueError was raised
    assert [o.status for o in r.outcomes] == expect, [o.detail for o in r.outcomes]
    rollback = parse_label({"format": "assert", "tests": [
        "try:\n    with ctx():\n        raise KeyError('k')\nexcept KeyError:\n    pass\nassert seen() == [KeyError]"]})
    assert sb.run([Job(honest, rollback)])[0].pass_rate == 1.0


def test_a_callbacks_failed_assertion_is_never_the_programs_to_swallow(sb):
    label = parse_label({"format": "unittest", "tests": [
        "import unittest\nclass T(unittest.TestCase):\n"
        f"    def test_a(self):\n        self.assertTrue(apply(lambda v: self.assertEqual(v, {SECRET!r})))\n"
        f"    def test_b(self):\n        def check(v):\n            assert v == {SECRET!r}\n"
        "        with self.assertRaises(ValueError):\n            apply(check)\n"]})
    swallow = ("def apply(cb):\n    try:\n        cb('wrong')\n    except BaseException:\n        pass\n"
               "    return True\n")
    convert = ("def apply(cb):\n    try:\n        cb('wrong')\n    except AssertionError as e:\n"
               "        raise ValueError(str(e))\n    return True\n")
    learn = ("import re\ndef apply(cb):\n    try:\n        cb('wrong')\n    except AssertionError as e:\n"
             "        found = re.findall(r\"zq-[\\w-]+\", str(e))\n        cb(found[0] if found else 'x')\n"
             "    return True\n")
    res = sb.run([Job(code, label) for code in (swallow, convert, learn)])
    for r in res:
        assert r.passed == 0, [(o.status, o.detail[:200]) for o in r.outcomes]
    honest = f"def apply(cb):\n    cb({SECRET!r})\n    return True\n"
    assert [o.status for o in sb.run([Job(honest, label)])[0].outcomes] == ["passed", "failed"]


def test_an_object_of_the_program_has_only_its_own_special_methods(sb):
    # A plain object is neither callable nor iterable nor a context manager, through the channel as in Python.
    checks = ["assert callable(f(2))", "import collections.abc as c\nassert isinstance(f(2), c.Iterator)",
              "assert hasattr(f(2), '__iter__') or hasattr(f(2), '__len__')",
              "import contextlib\nassert isinstance(f(2), contextlib.AbstractContextManager)",
              "assert len(f(2)) >= 0"]
    label = parse_label({"format": "assert", "tests": checks})
    r = sb.run([Job("class O:\n    pass\ndef f(x):\n    return O()\n", label)])[0]
    assert r.passed == 0, [(o.status, o.detail[:200]) for o in r.outcomes]
    full = ("class O:\n    def __call__(self):\n        return 1\n    def __iter__(self):\n        return self\n"
            "    def __next__(self):\n        raise StopIteration\n    def __len__(self):\n        return 0\n"
            "    def __enter__(self):\n        return self\n    def __exit__(self, *a):\n        return False\n"
            "def f(x):\n    return O()\n")
    assert sb.run([Job(full, label)])[0].pass_rate == 1.0


def test_call_format_compares_ints_exactly_and_keys_without_collapsing(sb):
    label = parse_label({"format": "call", "entry_point": "f", "tests": [
        {"input": [1], "output": 1000000007}, {"input": [2], "output": {"1": 2}}, {"input": [3], "output": 5}]})
    near = "def f(x):\n    return {1: 1000000008, 2: {1: 2, '1': 2}, 3: 10 ** 400}[x]\n"
    r = sb.run([Job(near, label)])[0]
    assert [o.status for o in r.outcomes] == ["failed", "error", "failed"], [o.detail for o in r.outcomes]
    exact = "def f(x):\n    return {1: 1000000007, 2: {1: 2}, 3: 5}[x]\n"
    assert sb.run([Job(exact, label)])[0].pass_rate == 1.0


@pytest.fixture(scope="module")
def one_worker_no_scoping():
    """One worker (so jobs meet the same judge), without Landlock: most kernels cannot scope signals."""
    cfg = SandboxConfig(isolation="bwrap", workers=1, test_timeout_s=2.0, job_timeout_s=8.0, landlock=False)
    with Sandbox(cfg) as s:
        yield s


def test_a_job_cannot_change_the_inputs_of_a_later_job(one_worker_no_scoping):
    # Call-format inputs are cached with the label in the judge: a correct program that leaves its answer in
    # the argument list must not make a later wrong program (`return nums[0]`) pass.
    label = parse_label({"format": "call", "entry_point": "f", "tests": [
        {"input": [[1, 2, 3]], "output": 6}, {"input": [[4, 5]], "output": 9}]})
    plant = "def f(nums):\n    s = sum(nums)\n    nums[:] = [s]\n    return s\n"
    assert one_worker_no_scoping.run([Job(plant, label)])[0].pass_rate == 1.0
    r = one_worker_no_scoping.run([Job("def f(nums):\n    return nums[0]\n", label)])[0]
    assert r.passed == 0, [(o.status, o.detail) for o in r.outcomes]


# (this process, its zygote, the worker) as /proc names them: the job's pid namespace hides a candidate's parent
# (getppid() is 0 there), /proc (the worker's view) does not. For the attacks below that go after the helpers.
_WHO = ("import os\ndef _who():\n    me = int(os.readlink('/proc/self'))\n"
        "    zygote = int(open('/proc/self/stat').read().rsplit(')', 1)[1].split()[1])\n"
        "    return me, zygote, int(open(f'/proc/{zygote}/stat').read().rsplit(')', 1)[1].split()[1])\n")


def test_an_interrupt_sent_to_the_judge_passes_nothing(one_worker_no_scoping):
    # Without signal scoping a candidate may signal its judge (same uid). SIGINT, the signal Python raises as
    # KeyboardInterrupt, once ended a unittest test before any outcome, and the test was reported passed.
    attack = (_WHO + "import signal, time\ndef _judge():\n    me, zygote, worker = _who()\n"
              "    for p in os.listdir('/proc')[:4096]:\n        if p.isdigit() and int(p) not in (zygote, me):\n"
              "            try:\n                st = open(f'/proc/{p}/stat').read().rsplit(')', 1)[1].split()\n"
              "            except OSError:\n                continue\n            if int(st[1]) == worker:\n"
              "                return int(p)\n"
              "def f(x):\n    j = _judge()\n    if j:\n        for _ in range(3):\n            os.kill(j, signal.SIGINT)\n"
              "            time.sleep(0.05)\n    return 'wrong'\n")
    res = one_worker_no_scoping.run([Job(attack + f"# {fmt}\n", parse_label(lab)) for fmt, lab in LABELS.items()])
    for r in res:
        assert r.passed == 0, [(o.status, o.detail[:200]) for o in r.outcomes]
    honest = f"def f(x):\n    return {SECRET!r} if x == 2 else {SECRET!r} + '!'\n"
    assert [r.pass_rate for r in one_worker_no_scoping.run([Job(honest, parse_label(lab)) for lab in LABELS.values()])] \
        == [1.0, 1.0, 1.0]


def test_a_test_that_did_not_verify_anything_is_never_a_pass(sb):
    # A unittest test passes only when unittest reports its success: a skip the program steers (a skipIf
    # condition on its names, a skipTest on its answer) and an expected failure it makes fail are unsupported.
    label = parse_label({"format": "unittest", "tests": [
        "import unittest\nclass T(unittest.TestCase):\n"
        f"    @unittest.skipIf(f(0) is None, 'no answer')\n    def test_a(self):\n        self.assertEqual(f(2), {SECRET!r})\n"
        f"    def test_b(self):\n        if f(3) is None:\n            self.skipTest('no answer')\n"
        f"        self.assertEqual(f(3), {SECRET!r} + '!')\n"
        "    @unittest.expectedFailure\n    def test_c(self):\n        self.assertEqual(f(1), 'not what f(1) returns')\n"]})
    r = sb.run([Job("def f(x):\n    return None\n", label)])[0]
    assert [o.status for o in r.outcomes] == ["unsupported"] * 3, [o.detail for o in r.outcomes]


def test_a_job_cannot_stop_the_helpers_for_the_next_job(one_worker_no_scoping):
    # Without signal scoping a candidate may SIGSTOP its zygote or judge during its last test: the next job on
    # the worker (a sibling in the same GRPO group, whose lower reward would raise this one's advantage)
    # must not be the one that pays.
    stopper = (_WHO + "import signal\ndef f(x):\n    me, zygote, worker = _who()\n"
               "    for p in os.listdir('/proc')[:4096]:\n        if p.isdigit() and x == 3 and int(p) != me:\n"
               "            try:\n                ppid = int(open(f'/proc/{p}/stat').read().rsplit(')', 1)[1].split()[1])\n"
               "            except OSError:\n                continue\n            if int(p) == zygote or ppid == worker:\n"
               "                os.kill(int(p), signal.SIGSTOP)\n    return x * x\n")
    label = parse_label({"format": "assert", "tests": ["assert f(2) == 4", "assert f(3) == 9"]})
    one_worker_no_scoping.run([Job(stopper, label)])
    r = one_worker_no_scoping.run([Job("def f(x):\n    return x * x\n", label)])[0]
    assert r.pass_rate == 1.0, [(o.status, o.detail) for o in r.outcomes]


def test_every_statement_of_a_humaneval_check_runs(sb):
    # Statements after check()'s last assert (a raise, a helper that asserts) end the last case: once they
    # were never run, and a program wrong on them passed.
    label = parse_label({"format": "humaneval", "entry_point": "f", "tests": [
        "def _helper(c):\n    assert c(3) == 9\n\ndef check(candidate):\n    assert candidate(1) == 1\n"
        "    if candidate(2) != 4:\n        raise AssertionError('f(2)')\n    _helper(candidate)\n"]})
    res = sb.run([Job(code, label) for code in ("def f(x):\n    return 1 if x == 1 else 4 if x == 2 else 0\n",
                                                "def f(x):\n    return 1 if x == 1 else 0\n",
                                                "def f(x):\n    return x * x\n")])
    assert [r.pass_rate for r in res] == [0.0, 0.0, 1.0], [[o.detail for o in r.outcomes] for r in res]


def test_a_program_that_only_loads_gets_no_credit_from_checks_that_verify_nothing(sb):
    """Credit only for tests that exercise the program: `assert True` (HumanEval has 48) and other asserts whose
    condition names nothing are no test cases, in the humaneval and assert formats alike; nor is a unittest
    method that only asserts on constants or passes."""
    he = parse_label({"format": "humaneval", "entry_point": "f", "tests": [
        "def check(candidate):\n    assert True, 'debug 1'\n    assert candidate(1) == 2\n    assert 1 == 1\n"
        "    assert candidate(2) == 3\n    assert True\n"]})
    asserts = parse_label({"format": "assert", "entry_point": "f", "tests": [
        "assert True", "assert f(1) == 2", "assert not ''", "assert f(2) == 3"]})
    loads, right = "def f(x):\n    return None\n", "def f(x):\n    return x + 1\n"
    ut = parse_label({"format": "unittest", "tests": [
        "import unittest\nclass T(unittest.TestCase):\n    def test_free(self):\n        self.assertTrue(True)\n"
        "    def test_empty(self):\n        pass\n    def test_a(self):\n        self.assertEqual(f(1), 2)\n"
        "    def test_b(self):\n        self.assertEqual(f(2), 3)\n"]})
    res = sb.run([Job(c, lb) for lb in (he, asserts, ut) for c in (loads, right)])
    assert [(r.expected, r.passed) for r in res] == [(2, 0), (2, 2), (2, 0), (2, 2), (2, 0), (2, 2)]


def test_unittest_tests_a_class_inherits_run_too(sb):
    # A test class's test methods from a mixin of its module run as in unittest (once left out of the plan,
    # a program wrong on them passed the class's own trivial test).
    label = parse_label({"format": "unittest", "tests": [
        "import unittest\nclass Checks:\n    def test_real(self):\n        self.assertEqual(f(3), 9)\n"
        "class T(Checks, unittest.TestCase):\n    def test_a(self):\n        self.assertEqual(f(1), 1)\n"]})
    wrong, right = sb.run([Job("def f(x):\n    return 1\n", label), Job("def f(x):\n    return x * x\n", label)])
    assert [o.status for o in wrong.outcomes] == ["passed", "failed"] and right.pass_rate == 1.0


# A test's callback that fails tells the program the expected value (its assertion message): letting that
# assertion through fails the test. Making the judge die or hang (killed without signal scoping; stuck
# decoding a set of ints that all share one hash) once lost the verdicts it held back, and the tests ran again
# with a fresh candidate that read what the first one had learned from a file: a failed test then passed.
LEARN_LABELS = {
    "assert": {"format": "assert", "tests": [
        f"def _chk(v):\n    assert v == {SECRET!r}, (v, {SECRET!r})\n    return True\nassert apply(_chk)",
        f"assert apply(lambda v: v == {SECRET!r} + '!')"]},
    "unittest": {"format": "unittest", "tests": [
        "import unittest\nclass T(unittest.TestCase):\n"
        f"    def test_a(self):\n        self.assertTrue(apply(lambda v: self.assertEqual(v, {SECRET!r}) or True))\n"
        f"    def test_b(self):\n        self.assertTrue(apply(lambda v: v == {SECRET!r} + '!'))\n"]},
    "humaneval": {"format": "humaneval", "entry_point": "apply", "tests": [
        f"def check(candidate):\n    def _chk(v):\n        assert v == {SECRET!r}, (v, {SECRET!r})\n        return True\n"
        f"    assert candidate(_chk)\n    assert candidate(lambda v: v == {SECRET!r} + '!')\n"]},
}
_LEARN = ("import os, re\nP = 'learned.txt'\n"
          "def apply(cb):\n    if os.path.exists(P):\n        s = open(P).read()\n        return cb(s) or cb(s + '!')\n"
          "    try:\n        return cb('wrong')\n    except AssertionError as e:\n"
          "        open(P, 'w').write(re.findall(r'zq-[\\w-]+', str(e))[0])\n        _stop_the_judge(cb)\n        raise\n")
_KILL_JUDGE = (_WHO + "import signal\ndef _stop_the_judge(cb):\n    me, zygote, worker = _who()\n"
               "    for p in os.listdir('/proc')[:4096]:\n        if p.isdigit() and int(p) not in (zygote, me):\n"
               "            try:\n                st = open(f'/proc/{p}/stat').read().rsplit(')', 1)[1].split()\n"
               "            except OSError:\n                continue\n            if int(st[1]) == worker:\n"
               "                os.kill(int(p), signal.SIGKILL)\n")
# Cheap here (each int hashes apart), ~3 s of CPU for the judge to rebuild as a set (bounded: 20,000 items).
_STALL_JUDGE = ("class _I(int):\n    def __hash__(self):\n        return id(self)\n"
                "def _stop_the_judge(cb):\n    m = (1 << 61) - 1\n    cb({_I(i * m) for i in range(1, 20000)})\n")


def test_a_judge_that_dies_or_hangs_gives_no_second_try(one_worker_no_scoping):
    # The program cannot kill its judge any more (the judge is outside the job's pid namespace, so no pid the
    # program can name is the judge's): the test it failed stays failed; the judge killed by the worker below
    # (it hangs) is what exercises the ledger.
    res = one_worker_no_scoping.run([Job(_LEARN + _KILL_JUDGE, parse_label(lab)) for lab in LEARN_LABELS.values()])
    for fmt, r in zip(LEARN_LABELS, res, strict=True):
        assert r.outcomes[0].status == "unsupported", (fmt, [(o.status, o.detail[:200]) for o in r.outcomes])
    cfg = SandboxConfig(isolation="bwrap", workers=1, test_timeout_s=0.3, job_timeout_s=8.0)
    with Sandbox(cfg) as s:
        r = s.run([Job(_LEARN + _STALL_JUDGE, parse_label(LEARN_LABELS["assert"]))])[0]
        assert r.outcomes[0].status == "timeout", [(o.status, o.detail[:200]) for o in r.outcomes]
    honest = f"def apply(cb):\n    return cb({SECRET!r}) or cb({SECRET!r} + '!')\n"
    assert [r.pass_rate for r in one_worker_no_scoping.run([Job(honest, parse_label(lab))
                                                             for lab in LEARN_LABELS.values()])] == [1.0] * 3


# random's state crosses back from the program so that a test's next draw continues the program's. A state the
# program chose (a reseed, or pushed without the test sharing random at all) chose the inputs the test drew
# next: a program right only on the input it knew in advance passed.
RANDOM_LABELS = {
    "assert": {"format": "assert", "tests": [
        "assert f(2) == 4", "import random\nn = random.randint(0, 10 ** 9)\nassert f(n) == n * n"]},
    "assert_seeded": {"format": "assert", "tests": [
        "import random\nrandom.seed(1)\nassert f(2) == 4", "n = random.randint(0, 10 ** 9)\nassert f(n) == n * n"]},
    "unittest": {"format": "unittest", "tests": [
        "import random, unittest\nclass T(unittest.TestCase):\n    def test_a(self):\n        self.assertEqual(f(2), 4)\n"
        "    def test_b(self):\n        random.seed(1)\n        self.assertEqual(f(2), 4)\n"
        "        n = random.randint(0, 10 ** 9)\n        self.assertEqual(f(n), n * n)\n"]},
    "humaneval": {"format": "humaneval", "entry_point": "f", "tests": [
        "import random\ndef check(candidate):\n    assert candidate(2) == 4\n    n = random.randint(0, 10 ** 9)\n"
        "    assert candidate(n) == n * n\n"]},
}
_RESEED = ("import gc, random\n_KNOWN = random.Random(7).randint(0, 10 ** 9)\n"
           "def f(x):\n    if x == 2:\n        for o in gc.get_objects():\n"
           "            if type(o).__name__ == 'Server' and hasattr(o, 'random_linked'):\n"
           "                o.random_linked = True\n        random.seed(7)\n        return 4\n"
           "    return x * x if x == _KNOWN else 0\n")


def test_the_program_never_chooses_what_the_test_draws_next(sb, one_worker_no_scoping):
    res = sb.run([Job(_RESEED, parse_label(lab)) for lab in RANDOM_LABELS.values()])
    for fmt, r in zip(RANDOM_LABELS, res, strict=True):
        assert r.outcomes[-1].status == "failed", (fmt, [(o.status, o.detail[:200]) for o in r.outcomes])
    # A program that draws from the test's sequence hands it back: the test's next draw continues it.
    honest = parse_label({"format": "assert", "tests": [
        "import random\nrandom.seed(3)\na = roll(700)\nb = random.random()\nrandom.seed(3)\n"
        "want = [random.randint(1, 6) for _ in range(700)]\nassert a == want and b == random.random()"]})
    code = "import random\ndef roll(k):\n    return [random.randint(1, 6) for _ in range(k)]\n"
    assert sb.run([Job(code, honest)])[0].pass_rate == 1.0
    # Nor does one job's sequence (its test's seed) carry over to the next job's tests in the same judge.
    seeds = parse_label({"format": "assert", "tests": ["import random\nrandom.seed(42)"]})
    draws = parse_label({"format": "assert", "tests": ["import random\nassert guess() == random.random()"]})
    guess = "import random\ndef guess():\n    return random.Random(42).random()\n"
    one_worker_no_scoping.run([Job("x = 1\n", seeds)])
    assert one_worker_no_scoping.run([Job(guess, draws)])[0].passed == 0


# The program may set the data of a test's objects (node.next, acc.balance), never what the test runs or reads as
# its own record: a Mock's assertions, counters, return value, side effect or children, a method of a test class.
_BOX = ("class Box:\n    def __init__(self):\n        self.items = []\n    def valid(self):\n"
        "        return self.items == sorted(self.items) and len(self.items) == 3\n")
OVERRIDE_LABELS = {
    "assert": {"format": "assert", "tests": [
        "from unittest import mock\nm = mock.Mock()\nnotify(m)\nm.send.assert_called_once_with('hello')",
        "from unittest import mock\nm = mock.MagicMock()\nnotify(m)\nassert m.call_count == 2 and m.ack.called",
        _BOX + "b = Box()\nnotify(b)\nassert b.valid()"]},
    "unittest": {"format": "unittest", "tests": [
        "import unittest\nfrom unittest import mock\n" + _BOX + "class T(unittest.TestCase):\n"
        "    def test_a(self):\n        m = mock.Mock()\n        notify(m)\n        m.assert_called_once_with('hi')\n"
        "    def test_b(self):\n        m = mock.Mock(return_value=1)\n        notify(m)\n"
        "        self.assertEqual(m.return_value, 7)\n        m.send.assert_not_called()\n"
        "    def test_c(self):\n        b = Box()\n        notify(b)\n        self.assertTrue(b.valid())\n"]},
    "humaneval": {"format": "humaneval", "entry_point": "notify", "tests": [
        "from unittest import mock\n" + _BOX + "def check(candidate):\n    m = mock.Mock()\n    candidate(m)\n"
        "    m.send.assert_called_once_with('hello')\n    b = Box()\n    candidate(b)\n    assert b.valid()\n"]},
}
_OVERRIDE = ("def _yes(*a, **k):\n    return True\nclass _Fake:\n    def __getattr__(self, name):\n        return _yes\n"
             "def notify(m):\n    for target, name, value in [(m, 'assert_called_once_with', _yes), (m, 'call_count', 2),\n"
             "            (m, 'return_value', 7), (m, 'side_effect', _yes), (m, 'valid', _yes), (m, 'ack', _Fake()),\n"
             "            (m, 'called', True)]:\n        try:\n            setattr(target, name, value)\n"
             "        except Exception:\n            pass\n    for child in ('send', 'ack'):\n        try:\n"
             "            getattr(m, child).assert_called_once_with = _yes\n        except Exception:\n            pass\n"
             "        try:\n            setattr(m, child, _Fake())\n        except Exception:\n            pass\n")


def test_the_program_never_rewrites_the_tests_own_checks(sb):
    res = sb.run([Job(_OVERRIDE, parse_label(lab)) for lab in OVERRIDE_LABELS.values()])
    for fmt, r in zip(OVERRIDE_LABELS, res, strict=True):
        assert r.passed == 0, (fmt, [(o.status, o.detail[:200]) for o in r.outcomes])
    # Data stays the program's to set: a plain attribute of a mock, a node's link, a test object's field.
    label = parse_label({"format": "assert", "tests": [
        "from unittest import mock\nm = mock.Mock()\nconfigure(m)\nassert m.timeout == 30 and m.send.call_count == 1",
        "class Node:\n    def __init__(self, v, nxt=None):\n        self.v, self.next = v, nxt\n    def vals(self):\n"
        "        return [self.v] + (self.next.vals() if self.next else [])\n"
        "h = Node(1, Node(2))\nassert link(h).vals() == [1, 2, 3]"]})
    honest = ("def configure(m):\n    m.timeout = 30\n    m.send('x')\n"
              "class Tail:\n    v, next = 3, None\n    def vals(self):\n        return [3]\n"
              "def link(h):\n    h.next.next = Tail()\n    return h\n")
    assert sb.run([Job(honest, label)])[0].pass_rate == 1.0


def test_assert_set_equal_never_asks_the_program(sb):
    # assertSetEqual(a, b) calls a.difference(b) and b.difference(a): an object of the program received the
    # expected set and answered that nothing differs.
    label = parse_label({"format": "unittest", "tests": [
        "import unittest\nclass T(unittest.TestCase):\n"
        "    def test_a(self):\n        self.assertSetEqual(primes(10), {2, 3, 5, 7})\n"
        "    def test_b(self):\n        self.assertSetEqual({2, 3, 5, 7}, primes(10))\n"]})
    lying = ("class S:\n    seen = ()\n    def difference(self, other):\n        S.seen = set(other)\n        return set()\n"
             "    def __iter__(self):\n        return iter(S.seen)\ndef primes(n):\n    return S()\n")
    r = sb.run([Job(lying, label)])[0]
    assert [o.status for o in r.outcomes] == ["unsupported"] * 2, [o.detail for o in r.outcomes]
    honest = "def primes(n):\n    return {p for p in range(2, n) if all(p % d for d in range(2, p))}\n"
    assert sb.run([Job(honest, label)])[0].pass_rate == 1.0



def test_an_integer_answer_is_never_another_integer_written_as_a_float(sb):
    # Judged outside: a relative tolerance of 1e-6 passed 1000000008.0 for the integer 1000000007 (stdio and
    # call); an integer expected now takes only float noise (no two integers are within 1e-6).
    stdio = parse_label({"format": "stdio", "tests": [{"input": "1000000007\n", "output": "1000000007\n"},
                                                      {"input": "3\n", "output": "3 0.5\n"}]})
    call = parse_label({"format": "call", "entry_point": "f", "tests": [
        {"input": [1000000007], "output": 1000000007}, {"input": [3], "output": 3}]})
    wrong_stdio = "n = int(input())\nprint(float(n + 1) if n > 3 else '3.0 0.5000001')\n"
    wrong_call = "def f(x):\n    return float(x + 1) if x > 3 else 3.0000000000000004\n"
    honest_stdio = "n = int(input())\nprint('%.7f' % n if n > 3 else '2.9999999999999996 0.5000001')\n"
    honest_call = "def f(x):\n    return float(x)\n"
    r = sb.run([Job(wrong_stdio, stdio), Job(wrong_call, call), Job(honest_stdio, stdio), Job(honest_call, call)])
    assert [o.status for o in r[0].outcomes] == ["failed", "passed"], [o.detail for o in r[0].outcomes]
    assert [o.status for o in r[1].outcomes] == ["failed", "passed"], [o.detail for o in r[1].outcomes]
    assert r[2].pass_rate == 1.0 and r[3].pass_rate == 1.0, [o.detail for x in r[2:] for o in x.outcomes]


def test_two_values_of_the_program_holding_nans_compare_as_in_plain_python(sb, tmp_path):
    # Every NaN crossed as json's one constant object, and containers compare items by identity first: a
    # program returning [nan] passed assertEqual(f(2), f(2)) and assertIn, which plain Python fails (red team r28).
    code = "def f(x):\n    return [float('nan'), x]\n"
    test = ("import unittest\nclass T(unittest.TestCase):\n    def test_eq(self):\n        self.assertEqual(f(2), f(2))\n"
            "    def test_in(self):\n        self.assertIn(f(2)[0], [f(2)[0]])\n"
            "    def test_ne(self):\n        self.assertNotEqual(f(2), f(2))\n")
    r = sb.run([Job(code, parse_label({"format": "unittest", "tests": [test]}))])[0]
    plain = _plain_unittest(tmp_path, code, test)
    assert [o.status for o in r.outcomes] == ["failed", "failed", "passed"], [o.detail for o in r.outcomes]
    assert plain == ["failed", "failed", "passed"], plain


def test_a_call_returning_inf_or_nan_returns_a_float_not_a_string(sb):
    # The judge sent float('inf') / nan as the strings 'inf' / 'nan': they passed for an expected string.
    label = parse_label({"format": "call", "entry_point": "f", "tests": [
        {"input": [0], "output": "inf"}, {"input": [1], "output": ["nan", "-inf"]}, {"input": [2], "output": float("inf")}]})
    wrong = "def f(x):\n    return [float('inf'), [float('nan'), float('-inf')], -float('inf')][x]\n"
    honest = "def f(x):\n    return ['inf', ['nan', '-inf'], float('inf')][x]\n"
    r = sb.run([Job(wrong, label), Job(honest, label)])
    assert [o.status for o in r[0].outcomes] == ["failed"] * 3, [o.detail for o in r[0].outcomes]
    assert r[1].pass_rate == 1.0, [o.detail for o in r[1].outcomes]


def test_the_program_never_forges_a_mocks_records(sb):
    # Setting only "plain data" still rewrote a Mock's records: method_calls (a plain attribute of every
    # Mock), a child the test had not touched yet (a SimpleNamespace answering `m.send.called`), and a mock a
    # test object holds (replaced by data mimicking its calls).
    label = parse_label({"format": "unittest", "tests": [
        "import unittest\nfrom unittest import mock\nfrom unittest.mock import call\n"
        "class Svc:\n    def __init__(self):\n        self.db = mock.NonCallableMagicMock()\n"
        "        self.hooks = [mock.Mock()]\n        self.count = 0\n"
        "class T(unittest.TestCase):\n"
        "    def test_a(self):\n        m = mock.Mock()\n        notify(m)\n"
        "        self.assertEqual(m.method_calls, [call.send('hi')])\n"
        "    def test_b(self):\n        m = mock.Mock()\n        notify(m)\n        self.assertTrue(m.send.called)\n"
        "        self.assertEqual(m.send.call_args, call('hi'))\n"
        "    def test_c(self):\n        s = Svc()\n        save(s)\n        self.assertEqual(s.db.save.call_count, 1)\n"
        "        self.assertTrue(s.hooks[0].called)\n        self.assertEqual(s.count, 1)\n"
        "    def test_d(self):\n        m = mock.Mock(total=1)\n        notify(m)\n        self.assertEqual(m.total, 2)\n"]})
    forge = ("import types\nNS = types.SimpleNamespace\ndef _try(f):\n    try:\n        f()\n    except AttributeError:\n"
             "        pass\ndef notify(m):\n    _try(lambda: setattr(m, 'method_calls', [('send', ('hi',), {})]))\n"
             "    _try(lambda: setattr(m, 'send', NS(called=True, call_args=(('hi',), {}))))\n"
             "    m.total = 2\n"
             "def save(s):\n    _try(lambda: setattr(s, 'db', NS(save=NS(call_count=1))))\n"
             "    _try(lambda: setattr(s, 'hooks', [NS(called=True)]))\n    s.count = 1\n")
    honest = ("def notify(m):\n    m.send('hi')\n    m.total = 2\n"
              "def save(s):\n    s.db.save()\n    s.hooks[0]()\n    s.count = 1\n")
    r = sb.run([Job(forge, label), Job(honest, label)])
    assert [o.status for o in r[0].outcomes] == ["failed", "failed", "failed", "passed"], \
        [o.detail for o in r[0].outcomes]
    assert r[1].pass_rate == 1.0, [o.detail for o in r[1].outcomes]


def test_a_mock_in_the_tests_container_is_never_replaced_by_lookalike_data(sb):
    # In-place changes come back into the test's list: a SimpleNamespace written where the test's Mock was
    # answered `handlers[0].called`.
    label = parse_label({"format": "unittest", "tests": [
        "import unittest\nfrom unittest import mock\nclass T(unittest.TestCase):\n"
        "    def test_a(self):\n        hs = [mock.Mock(), mock.Mock()]\n        fire(hs)\n"
        "        self.assertTrue(hs[0].called)\n        self.assertEqual(hs[1].call_count, 1)\n"
        "    def test_b(self):\n        hs = {'a': mock.Mock()}\n        fire(hs)\n        self.assertTrue(hs['a'].called)\n"]})
    forge = ("import types\ndef fire(hs):\n    fake = types.SimpleNamespace(called=True, call_count=1)\n"
             "    if isinstance(hs, list):\n        hs[:] = [fake, fake]\n    else:\n        hs['a'] = fake\n")
    honest = "def fire(hs):\n    for h in (hs if isinstance(hs, list) else hs.values()):\n        h()\n"
    r = sb.run([Job(forge, label), Job(honest, label)])
    assert [o.status for o in r[0].outcomes] == ["failed", "failed"], [o.detail for o in r[0].outcomes]
    assert r[1].pass_rate == 1.0, [o.detail for o in r[1].outcomes]


def test_a_mock_is_never_replaced_by_a_stand_in_that_answers_for_the_program(sb):
    # An enum member or NamedTuple of the program crosses as a value whose attributes the program's class
    # answers (its properties): written where the test's Mock was, `called` would be the program's True.
    label = parse_label({"format": "unittest", "tests": [
        "import unittest\nfrom unittest import mock\nclass T(unittest.TestCase):\n"
        "    def test_a(self):\n        hs = [mock.Mock()]\n        fire(hs)\n        self.assertTrue(hs[0].called)\n"
        "        self.assertEqual(hs[0].call_count, 1)\n"]})
    props = "    @property\n    def called(self):\n        return True\n    @property\n    def call_count(self):\n" \
            "        return 1\n"
    enum = "from enum import IntEnum\nclass Fake(IntEnum):\n    X = 1\n" + props + "def fire(hs):\n    hs[:] = [Fake.X]\n"
    nt = "from typing import NamedTuple\nclass Fake(NamedTuple):\n    x: int = 1\n" + props + \
         "def fire(hs):\n    hs[:] = [Fake()]\n"
    r = sb.run([Job(enum, label), Job(nt, label)])
    assert [o.status for x in r for o in x.outcomes] == ["failed", "failed"], [o.detail for x in r for o in x.outcomes]


# System calls a program (and the tests, in the judge) may not make, with arguments harmless had the filter let them
# through: (name, args, errno expected). Keys and System V IPC outlive their processes, in namespaces all jobs of
# a worker (keys: of the host uid, every worker) share: one job stored there what it learned (an expected value
# a callback's assertion quoted) and the next one read it. Affinity: a job crowding the other worker's CPU. A
# memfd: memory no limit of the job counts (red team r28).
_DENIED_PROBES = [("keyctl", (0, -4, 1), EPERM), ("add_key", (0, 0, 0, 0, -4), EPERM), ("request_key", (0, 0, 0, 0), EPERM),
                  ("shmget", (0, 4096, 0o600), EPERM), ("msgget", (0, 0o600), EPERM), ("semget", (0, 1, 0o600), EPERM),
                  ("mq_open", (0, 0, 0, 0), EPERM), ("sched_setaffinity", (0, 0, 0), EPERM), ("ptrace", (0,), EPERM),
                  ("process_vm_readv", (1, 0, 0, 0, 0, 0), EPERM), ("setns", (-1, 0), EPERM),
                  ("unshare", (0x10000000,), EPERM), ("unshare", (0x20000000,), EPERM), ("unshare", (0x00020000,), EPERM),
                  ("clone3", (0, 0), ENOSYS), ("bpf", (0, 0, 0), EPERM), ("perf_event_open", (0, 0, -1, -1, 0), EPERM),
                  ("userfaultfd", (0,), EPERM), ("io_uring_setup", (0, 0), EPERM), ("personality", (0xFFFFFFFF,), EPERM),
                  ("mount", (0, 0, 0, 0, 0), EPERM), ("kexec_load", (0, 0, 0, 0), EPERM), ("init_module", (0, 0, 0), EPERM),
                  ("settimeofday", (0, 0), EPERM), ("acct", (0,), EPERM), ("kcmp", (1, 1, 0, 0, 0), EPERM),
                  ("open_by_handle_at", (-1, 0, 0), EPERM), ("memfd_create", (0, 0), EPERM),
                  ("unshare", (0x400,), 0), ("personality", (0x8,), 0)]


def _probe(names):
    calls = [(name, syscall_filter.number(name), args) for name, args, _ in names]
    return ("import ctypes, os, threading\nlibc = ctypes.CDLL(None, use_errno=True)\nlibc.syscall.restype = ctypes.c_long\n"
            f"CALLS = {calls!r}\n"
            "def probe():\n    out = []\n    for name, nr, args in CALLS:\n        ctypes.set_errno(0)\n"
            "        r = libc.syscall(nr, *[ctypes.c_long(a) for a in args])\n"
            "        out.append((name, ctypes.get_errno() if r == -1 else 0))\n    return out\n")


def test_no_job_can_make_a_kernel_object_another_job_could_reach(sb):
    expected = [(name, err) for name, _, err in _DENIED_PROBES]
    # what a program still does: processes (a worker's process count bounds them), threads, pipes
    program = _probe(_DENIED_PROBES) + (
        "def f():\n    out = probe()\n    pid = os.fork()\n    if pid == 0:\n        os._exit(7)\n"
        "    out.append(('fork', os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])))\n"
        "    t = threading.Thread(target=out.append, args=(('thread', 0),))\n    t.start()\n    t.join()\n    return out\n")
    in_judge = _probe(_DENIED_PROBES) + f"assert probe() == {expected!r}, probe()\n"
    label = parse_label({"format": "assert", "tests": [
        f"assert f() == {expected + [('fork', 7), ('thread', 0)]!r}, f()", in_judge]})
    r = sb.run([Job(program, label)])[0]
    assert [o.status for o in r.outcomes] == ["passed", "passed"], [o.detail for o in r.outcomes]
    assert sb.info()["warnings"] == []


def test_a_job_whose_candidates_die_holds_at_most_max_processes(sb):
    # Each call forks daemons until the process limit refuses, then its candidate dies and a fresh one takes the
    # next test. RLIMIT_NPROC was counted from the processes alive at each candidate's fork, so each got
    # max_processes more (4 candidates: ~70 processes under max_processes 16); a replacement starts alone now
    # (red team r28). Bounded: 200 forks a call, daemons sleep 10 s and die with the job.
    program = ("import os, time\ndef f():\n    for _ in range(200):\n        try:\n            pid = os.fork()\n"
               "        except OSError:\n            break\n        if pid == 0:\n            os.setsid()\n"
               "            os.closerange(0, 64)\n            time.sleep(10)\n            os._exit(0)\n    os._exit(1)\n"
               "def alive():\n    return len([p for p in os.listdir('/proc') if p.isdigit()])\n")
    label = parse_label({"format": "assert", "tests": ["assert f()"] * 4 + ["assert alive() < 16, alive()"]})
    r = sb.run([Job(program, label)])[0]
    assert [o.status for o in r.outcomes] == ["killed"] * 4 + ["passed"], [o.detail for o in r.outcomes]


def test_a_process_that_keeps_forking_a_successor_never_outlives_its_job(one_worker_no_scoping):
    # A process that forks a successor and exits, again and again, was missed by the sweep's listing of /proc
    # about 1 time in 7 (a red team's figure; on this VM the sweep missed none of ~80 such chains) and went on
    # writing into the next job's files after its cleanup. The chain wakes when its candidate dies (the moment
    # the worker starts ending the job), in a session of its own (out of the candidate's process group), and
    # writes the marker after 0.2 s; a fork the process limit refuses is retried (the exited generations wait as
    # zombies for the reaper). Bounded: 1 s and 50,000 generations.
    chain = ("import os, time\nBASE = os.path.dirname(os.getcwd())\ndef f():\n    return 1\n"
             "r, w = os.pipe()\nif os.fork() == 0:\n    os.setsid()\n    os.close(w)\n    os.read(r, 1)\n"
             "    t0 = time.monotonic()\n    for gen in range(50000):\n        t = time.monotonic() - t0\n"
             "        if t > 1.0:\n            break\n        try:\n            if t > 0.2:\n"
             "                os.close(os.open(os.path.join(BASE, 'zq-alive'), os.O_WRONLY | os.O_CREAT, 0o600))\n"
             "            if os.fork():\n                os._exit(0)\n        except OSError:\n            time.sleep(0.0005)\n"
             "    os._exit(0)\nos.close(r)\n")
    look = ("import os, time\ntime.sleep(0.3)\ndef f():\n"
            "    return os.path.exists(os.path.join(os.path.dirname(os.getcwd()), 'zq-alive'))\n")
    label = parse_label({"format": "assert", "tests": ["assert f() in (1, False), f()"]})
    # Control: woken at once instead (its candidate closes the pipe), the chain runs and writes within its job.
    control = chain.replace("def f():\n    return 1\n", "def f():\n    os.close(w)\n    time.sleep(0.5)\n"
                            "    return os.path.exists(os.path.join(BASE, 'zq-alive'))\n")
    r = one_worker_no_scoping.run([Job(control, parse_label({"format": "assert", "tests": ["assert f() is True"]}))])[0]
    assert r.pass_rate == 1.0, r.outcomes[0].detail
    for i in range(12):  # a 1-in-7 race would be missed 12 times in a row with probability 16 %
        ran = one_worker_no_scoping.run([Job(chain + f"# {i}\n", label)])[0]
        assert ran.pass_rate == 1.0, ran.outcomes[0].detail
        r = one_worker_no_scoping.run([Job(look + f"# {i}\n", label)])[0]
        assert r.pass_rate == 1.0, (i, r.outcomes[0].detail)


def test_a_job_cannot_reach_a_job_running_at_the_same_time_on_another_worker():
    # Workers run as one host uid. While one job holds a named process, an abstract socket and files, a job on
    # the other worker finds none of them, and no process outside its own job answers even signal 0 (its pid
    # namespace names none but its reaper, pid 1). Kernel objects (keys, IPC) are denied to both: see the test
    # above. Two idle workers take the batch's two jobs side by side.
    owner = ("import ctypes, os, socket, time\nctypes.CDLL(None).prctl(15, b'zq-owner', 0, 0, 0)\n"
             "s = socket.socket(socket.AF_UNIX)\ns.bind('\\0zq-owner')\ns.listen(1)\n"
             "for d in ('/tmp', '/dev/shm'):\n    open(os.path.join(d, 'zq-owner'), 'w').write('x')\n"
             "def f():\n    time.sleep(1.0)\n    return 1\n")
    reader = ("import os, socket, time\ntime.sleep(0.3)\n"
              "def f():\n    out = {}\n    names = []\n    for p in os.listdir('/proc'):\n        if p.isdigit():\n"
              "            try:\n                names.append(open(f'/proc/{p}/comm').read().strip())\n"
              "            except OSError:\n                pass\n    out['seen'] = 'zq-owner' in names\n"
              "    try:\n        socket.socket(socket.AF_UNIX).connect('\\0zq-owner')\n        out['socket'] = True\n"
              "    except OSError:\n        out['socket'] = False\n"
              "    out['files'] = [d for d in ('/tmp', '/dev/shm') if os.path.exists(os.path.join(d, 'zq-owner'))]\n"
              "    alive = []\n    for p in range(1, 4096):\n        try:\n            os.kill(p, 0)\n            alive.append(p)\n"
              "        except PermissionError:\n            alive.append(p)\n        except OSError:\n            pass\n"
              "    out['signalled'] = [p for p in alive if p not in (1, os.getpid())] == []\n    return out\n")
    label = parse_label({"format": "assert", "tests": [
        "r = f()\nassert r == 1 or r == {'seen': False, 'socket': False, 'files': [], 'signalled': True}, r"]})
    for landlock in (True, False):  # without Landlock, which scopes signals on this kernel, too
        with Sandbox(SandboxConfig(isolation="bwrap", workers=2, test_timeout_s=3.0, job_timeout_s=8.0,
                                   landlock=landlock)) as s:
            res = s.run([Job(owner, label), Job(reader, label)])
            assert [r.pass_rate for r in res] == [1.0, 1.0], [o.detail for r in res for o in r.outcomes]


def _judges() -> list[psutil.Process]:
    """The pool's judges: each worker (the python under bwrap) forks its zygote first, then its judge."""
    out = []
    for proc in psutil.Process().children(recursive=True):
        if proc.name().startswith("python") and proc.parent().name() == "bwrap":
            kids = sorted((k for k in proc.children() if k.name().startswith("python")), key=lambda k: k.create_time())
            out += kids[1:2]
    return out


def test_the_judges_memory_stays_bounded_job_after_job(sb):
    # What a job leaves as cyclic garbage (here its test class holds 48 MB) waited in the judge for a full
    # collection, which Python runs rarely: 12 jobs left ~290 MB per judge of the pool's two. Bounded: 12 x 48 MB.
    label = parse_label({"format": "unittest", "tests": [
        "import unittest\nclass T(unittest.TestCase):\n    blob = bytearray(48 << 20)\n"
        "    def test_a(self):\n        self.assertEqual(f(2), 4)\n"]})
    for i in range(12):
        assert sb.run([Job(f"def f(x):\n    return x * x\n# {i}\n", label)])[0].pass_rate == 1.0
    rss = [j.memory_info().rss >> 20 for j in _judges()]  # (this module's one-worker pool's judge too)
    assert len(rss) >= sb.config.workers and max(rss) < 200, rss

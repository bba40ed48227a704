"""Adversarial programs against the real bubblewrap pool: every one scores zero or is contained, the pool
keeps working, and nothing (process or file) is left behind.

Every bomb here is bounded in time, count and size, so the suite stays safe even if containment failed:
no os.kill(-1, ...), no rm -rf, no unbounded loops outside a per-test timeout.
"""

from __future__ import annotations

import os
import socket
import time

import psutil
import pytest

from coderl.rewards.labels import parse_label
from coderl.rewards.sandbox import Job
from tests.support import REPO_ROOT

pytestmark = pytest.mark.timeout(180)


@pytest.fixture(scope="module")
def host(tmp_path_factory):
    """Host-side bait: a canary path programs try to create, a 'dataset' file they try to read, and a
    listening loopback socket they try to reach."""
    d = tmp_path_factory.mktemp("host")
    secret = d / "train.jsonl"
    secret.write_text('{"answer": "HOSTSECRET-42"}\n')
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    srv.setblocking(False)
    yield {"dir": str(d), "canary": str(d / "canary.txt"), "secret": str(secret), "port": srv.getsockname()[1],
           "srv": srv}
    srv.close()


@pytest.fixture(scope="module")
def sb(adversarial_sandbox):
    return adversarial_sandbox


def _tree() -> set[int]:
    return {p.pid for p in psutil.Process().children(recursive=True)}


FN_LABEL = {"format": "assert", "tests": ["assert f(2) == 4", "assert f(3) == 9"]}
UT_LABEL = {"format": "unittest", "tests": [
    "import unittest\nclass TestF(unittest.TestCase):\n    def test_a(self):\n        self.assertEqual(f(2), 4)\n"
    "    def test_b(self):\n        self.assertEqual(sorted(f(3) for _ in range(1)), [9])\n"]}
STDIO_LABEL = {"format": "stdio", "tests": [{"input": "2\n", "output": "4\n"}, {"input": "3\n", "output": "9\n"}]}
CALL_LABEL = {"format": "call", "entry_point": "f", "tests": [{"input": [2], "output": 4}, {"input": [3], "output": 9}]}
WRONG = "def f(x):\n    return 0\n"
RAISES_LABEL = {"format": "unittest", "tests": [
    "import unittest\nclass T(unittest.TestCase):\n    def test_a(self):\n        with self.assertRaises(ValueError):\n"
    "            f(-1)\n    def test_b(self):\n        self.assertRaises(KeyError, f, -2)\n"]}
HE_LABEL = {"format": "humaneval", "entry_point": "f", "tests": [
    "def check(candidate):\n    assert candidate(2) == 4\n    assert candidate(3) == 9\n"]}
_RAISE_OWN = "def f(x):\n    raise (E if x == -1 else K)('x')\n"

# name -> (program, label). Programs define a *wrong* f, then try to escape, cheat or damage.
ADVERSARIAL = {
    "fork_bomb": ("import os, time\nfor i in range(5000):\n    try:\n        if os.fork() == 0:\n"
                  "            time.sleep(5)\n            os._exit(0)\n    except OSError:\n        break\n" + WRONG,
                  FN_LABEL),
    "fork_bomb_in_test": (WRONG.replace("return 0", "import os, time\n    for i in range(3000):\n        try:\n"
                          "            if os.fork() == 0:\n                time.sleep(5)\n                os._exit(0)\n"
                          "        except OSError:\n            pass\n    return 0"), FN_LABEL),
    "memory_bomb": ("blocks = []\nfor i in range(64):\n    blocks.append(bytearray(256 * 1024 * 1024))\n" + WRONG, FN_LABEL),
    "infinite_loop": ("while True:\n    pass\n", FN_LABEL),
    "busy_threads": ("import threading\ndef spin():\n    while True:\n        pass\n"
                     "for _ in range(8):\n    threading.Thread(target=spin, daemon=True).start()\n" + WRONG, FN_LABEL),
    "disk_fill": ("import os\nwith open('big', 'wb') as fh:\n    for i in range(2048):\n"
                  "        fh.write(b'x' * (1 << 20))\n" + WRONG, FN_LABEL),
    "many_files": ("for i in range(100000):\n    open(f'f{i}', 'w').write('x' * 4096)\n" + WRONG, FN_LABEL),
    "write_outside_tmp": ("for p in ('{canary}', '/usr/evil', '/etc/evil', '/evil', '/tmp/../evil'):\n"
                          "    try:\n        open(p, 'w').write('pwned')\n    except Exception:\n        pass\n" + WRONG,
                          FN_LABEL),
    "read_host_dataset": ("def f(x):\n    data = open('{secret}').read()\n    return 4 if x == 2 else 9\n", FN_LABEL),
    "read_repo": ("def f(x):\n    open('{repo}/pyproject.toml').read()\n    return x * x\n", FN_LABEL),
    "read_etc_passwd": ("def f(x):\n    open('/etc/passwd').read()\n    return x * x\n", FN_LABEL),
    "network_connect": ("import socket\ndef f(x):\n    socket.create_connection(('127.0.0.1', {port}), timeout=0.5)\n"
                        "    return x * x\n", FN_LABEL),
    "dns_lookup": ("import socket\ndef f(x):\n    socket.getaddrinfo('pypi.org', 443)\n    return x * x\n", FN_LABEL),
    "env_secret": ("import os\ndef f(x):\n    assert 'WANDB_API_KEY' in os.environ or 'HOSTSECRET' in "
                   "open('/proc/1/environ').read()\n    return x * x\n", FN_LABEL),
    "kill_parent": ("import os, signal\ntry:\n    os.kill(os.getppid(), signal.SIGKILL)\nexcept Exception:\n    pass\n"
                    "try:\n    os.kill(1, signal.SIGKILL)\nexcept Exception:\n    pass\n" + WRONG, FN_LABEL),
    "kill_process_group": ("import os, signal\ntry:\n    os.killpg(os.getpgid(os.getppid()), signal.SIGKILL)\n"
                           "except Exception:\n    pass\n" + WRONG, FN_LABEL),
    "ignore_sigterm": ("import signal\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                       "signal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    pass\n", FN_LABEL),
    "double_fork_daemon": ("import os, time\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n"
                           "        time.sleep(30)\n        os._exit(0)\n    os._exit(0)\n" + WRONG, FN_LABEL),
    "recursion": ("def f(x):\n    return f(x)\n", FN_LABEL),
    "c_stack_overflow": ("import sys\nsys.setrecursionlimit(10 ** 7)\ndef f(x):\n    return f(x) + 1\n", FN_LABEL),
    "huge_output": ("import sys\nfor _ in range(256):\n    sys.stdout.write('4\\n' * 100000)\n", STDIO_LABEL),
    "block_on_stdin": ("import sys\ndef f(x):\n    sys.stdin.read()\n    input()\n    return x * x\n", FN_LABEL),
    "sys_exit_before_tests": ("import sys\nsys.exit(0)\n" + WRONG, UT_LABEL),
    "os_exit_before_tests": ("import os\nos._exit(0)\n" + WRONG, UT_LABEL),
    "system_exit_in_test": ("def f(x):\n    raise SystemExit(0)\n", UT_LABEL),
    "fake_ok_output": ("import sys\nprint('.' * 2)\nprint('Ran 2 tests in 0.001s\\n\\nOK')\n"
                       "sys.stderr.write('OK\\npassed 2/2\\n')\n" + WRONG, UT_LABEL),
    "patch_assert_methods": ("import unittest\nunittest.TestCase.assertEqual = lambda *a, **k: None\n" + WRONG, UT_LABEL),
    "patch_builtins": ("import builtins\nbuiltins.sorted = lambda *a, **k: [9]\n" + WRONG, UT_LABEL),
    "replace_test_methods": ("import unittest\ndef _init_subclass(cls, **kw):\n"
                             "    for n in list(vars(cls)):\n        if n.startswith('test'):\n"
                             "            setattr(cls, n, lambda self: None)\n"
                             "unittest.TestCase.__init_subclass__ = classmethod(_init_subclass)\n" + WRONG, UT_LABEL),
    "fake_unittest_module": ("import sys, types\nfake = types.ModuleType('unittest')\n"
                             "class TestCase:\n    def __init__(self, *a):\n        pass\n"
                             "fake.TestCase = TestCase\nsys.modules['unittest'] = fake\n" + WRONG, UT_LABEL),
    "forge_result_pipe": ("import os\nfor fd in range(3, 64):\n    for i in range(2):\n        try:\n"
                          "            os.write(fd, repr(('0' * 32, 'end', i, 'passed', 0.0, '', None)).encode() + b'\\n')\n"
                          "        except OSError:\n            pass\nos._exit(0)\n", FN_LABEL),
    "frame_walk_getframe": ("import sys\ndef f(x):\n    fr = sys._getframe(1)\n    while fr:\n"
                            "        fr.f_locals.get('report')\n        fr = fr.f_back\n    return 0\n", FN_LABEL),
    "frame_walk_traceback": ("def f(x):\n    try:\n        raise ValueError\n    except ValueError as e:\n"
                             "        fr = e.__traceback__.tb_frame.f_back\n        fr.f_globals['__builtins__']\n"
                             "    return 0\n", FN_LABEL),
    "gc_walk": ("import gc\ndef f(x):\n    for o in gc.get_objects():\n        pass\n    return 0\n", FN_LABEL),
    "ctypes_escape": ("import ctypes\nlibc = ctypes.CDLL(None)\n" + WRONG, FN_LABEL),
    "subprocess_shell": ("import subprocess\ndef f(x):\n    subprocess.run(['sh', '-c', 'touch {canary}'])\n"
                         "    return 0\n", FN_LABEL),
    "os_system": ("import os\ndef f(x):\n    os.system('touch {canary}')\n    return 0\n", FN_LABEL),
    "proc_self_mem": ("def f(x):\n    open('/proc/self/mem', 'rb').read(1)\n    return 0\n", FN_LABEL),
    "raise_rlimits": ("import resource\ndef f(x):\n    resource.setrlimit(resource.RLIMIT_NPROC, (10 ** 6, 10 ** 6))\n"
                      "    return x * x\n", FN_LABEL),
    "settrace_skip_asserts": ("import sys\ndef f(x):\n    sys.settrace(lambda *a: None)\n    return 0\n", FN_LABEL),
    "chmod_trap_files": ("import os\nos.makedirs('a/b/c')\nopen('a/b/c/x', 'w').write('x')\n"
                         "os.chmod('a/b/c', 0)\nos.chmod('a/b', 0)\nos.chmod('a', 0)\n" + WRONG, FN_LABEL),
    "sleep_past_job_deadline": ("import time\ntime.sleep(60)\n" + WRONG, FN_LABEL),
    "swallow_everything": ("def f(x):\n    while True:\n        try:\n            while True:\n                pass\n"
                           "        except BaseException:\n            pass\n", FN_LABEL),
    "always_equal_object": ("class Eq(int):\n    def __eq__(self, o):\n        return True\n    __hash__ = int.__hash__\n"
                            "def f(x):\n    return Eq(0)\n", CALL_LABEL),
    # Found by the red-team review: each forged a pass before it was fixed.
    "clear_frames_globals": ("import traceback\ntraceback.clear_frames.__globals__['_classify'] = lambda e: 'passed'\n"
                             + WRONG, FN_LABEL),
    "clear_frames_closure": ("import traceback, sys\ncells = traceback.clear_frames.__closure__ or ()\n"
                             "for c in cells:\n    if type(c.cell_contents) is list:\n        c.cell_contents[0] = True\n"
                             "import ctypes\n" + WRONG, FN_LABEL),
    "traceback_property": ("import os\nclass E(Exception):\n    @property\n    def __traceback__(self):\n"
                           "        try:\n            import ctypes\n            os._exit(0)\n        except Exception:\n"
                           "            return None\ndef f(x):\n    raise E('x')\n", FN_LABEL),
    "module_class_swap": ("import sys, types, unittest\nclass Fake(unittest.TestCase):\n"
                          "    def assertEqual(self, *a, **k):\n        pass\nclass M(types.ModuleType):\n"
                          "    def __getattribute__(self, n):\n        return Fake if n == 'TestCase' else super().__getattribute__(n)\n"
                          "sys.modules['unittest'].__class__ = M\n" + WRONG, UT_LABEL),
    "fake_dunder_builtins": ("import builtins\n_b = dict(vars(builtins))\n_bc = builtins.__build_class__\n"
                             "def _fake_bc(func, name, *bases, **kw):\n    cls = _bc(func, name, *bases, **kw)\n"
                             "    for k in list(vars(cls)):\n        if k.startswith('test'):\n"
                             "            setattr(cls, k, lambda self: None)\n    return cls\n"
                             "_b['__build_class__'] = _fake_bc\n__builtins__ = _b\n" + WRONG, UT_LABEL),
    "shadow_builtin_in_tests": ("def sorted(*a, **k):\n    return [9]\ndef f(x):\n    return 0\n", UT_LABEL),
    "shadow_module_in_tests": ("class math:\n    isclose = staticmethod(lambda *a, **k: True)\ndef f(x):\n    return 0\n",
                               {"format": "assert", "tests": ["assert math.isclose(f(2), 4)", "assert math.isclose(f(3), 9)"]}),
    "testcase_getattribute": ("import unittest\ndef ga(self, n):\n    if n.startswith('assert'):\n"
                              "        return lambda *a, **k: None\n    return object.__getattribute__(self, n)\n"
                              "try:\n    unittest.TestCase.__getattribute__ = ga\nexcept TypeError:\n    pass\n" + WRONG, UT_LABEL),
    "patch_assert_midtest": ("import unittest\ndef f(x):\n    try:\n        unittest.TestCase.assertEqual = lambda *a, **k: None\n"
                             "    except TypeError:\n        pass\n    return 0\n", UT_LABEL),
    "patch_test_class_midtest": ("import unittest\ndef f(x):\n    for c in unittest.TestCase.__subclasses__():\n"
                                 "        if c.__module__.startswith('test_module'):\n"
                                 "            c.assertEqual = lambda *a, **k: None\n            c.test_b = lambda self: None\n"
                                 "    return 0\n", UT_LABEL),
    "posixsubprocess_exec": ("import _posixsubprocess\n" + WRONG, FN_LABEL),
    "chdir_proc": ("import os\nos.chdir('/proc/self')\n" + WRONG, FN_LABEL),
    "patch_posixpath_for_hook": ("import posixpath, os\nposixpath._joinrealpath = lambda *a, **k: (os.getcwd() + '/x', True)\n"
                                 "def f(x):\n    open('/dev/shm/evil', 'w').write('x')\n    return 0\n", FN_LABEL),
    # Found by the red team of the reward (r26): the server read each case's return value with ast.literal_eval,
    # ~80 ms per 64 KB value on its dispatcher thread (a 40-case label: 3 s of the server's CPU per job). The
    # value now crosses as JSON (formats/call.py); scripts/bench/hostile.py measures the server's CPU per job.
    "big_call_values": ("def f(x):\n    return [[x] * 5] * 3000\n", CALL_LABEL),
    # The red team of the reward (r26), attacks that failed, kept for their classes. A test expecting an
    # exception gets the program's own class however it names itself (a class called ValueError, a builtins
    # __module__ and qualname, a metaclass that claims them): rebuilt in the judge, never the builtin.
    "own_class_named_like_the_expected_exception": (
        "class ValueError(Exception):\n    pass\nclass KeyError(Exception):\n    pass\nE, K = ValueError, KeyError\n"
        + _RAISE_OWN, RAISES_LABEL),
    "exception_class_renamed_into_builtins": (
        "class E(Exception):\n    pass\nclass K(Exception):\n    pass\nfor c, n in ((E, 'ValueError'), (K, 'KeyError')):\n"
        "    c.__name__ = c.__qualname__ = n\n    c.__module__ = 'builtins'\n" + _RAISE_OWN, RAISES_LABEL),
    "exception_metaclass_claims_builtins": (
        "class M(type):\n    @property\n    def __module__(cls):\n        return 'builtins'\n"
        "class E(Exception, metaclass=M):\n    pass\nclass K(Exception, metaclass=M):\n    pass\n"
        "E.__qualname__, K.__qualname__ = 'ValueError', 'KeyError'\n" + _RAISE_OWN, RAISES_LABEL),
    # The right answer printed, then a process that never ends (a stdio program ends as plain Python ends:
    # its non-daemon threads are waited for), or one that ends only by a signal.
    "stdio_answer_then_endless_thread": ("import threading\nprint(int(input()) ** 2, flush=True)\n"
                                         "threading.Thread(target=lambda: any(iter(int, 1))).start()\n",
                                         STDIO_LABEL),
    "stdio_answer_then_spin": ("print(int(input()) ** 2, flush=True)\nwhile True:\n    pass\n", STDIO_LABEL),
    "stdio_answer_then_sigkill": ("import os, signal\nprint(int(input()) ** 2, flush=True)\n"
                                  "os.kill(os.getpid(), signal.SIGKILL)\n", STDIO_LABEL),
    "humaneval_redefine_check": ("def check(candidate):\n    pass\n" + WRONG, HE_LABEL),
    # Found by the red team of the reward (r28): a value the candidate forged (its Fraction codec patched to send
    # a zero denominator) raised ZeroDivisionError while the judge decoded it, and the test's assertRaises took
    # that for the program's. A tree that does not decode is the program's unreadable value (error).
    "forged_value_raises_in_the_judge": (
        "import sys, fractions\nfor c in sys.modules['inside.codec'].CODECS:\n    if c.name == 'Fraction':\n"
        "        object.__setattr__(c, 'encode', lambda obj, t, enc, depth: ['fr', 1, 0])\n"
        "def f(x):\n    return fractions.Fraction(1, 3)\n",
        {"format": "unittest", "tests": ["import unittest\nclass T(unittest.TestCase):\n    def test_a(self):\n"
                                         "        with self.assertRaises(ZeroDivisionError):\n            f(0)\n"
                                         "    def test_b(self):\n        self.assertRaises(ArithmeticError, f, 0)\n"]}),
    # The red team of the reward (r28), attacks that failed, kept for their classes: unittest's own control flow
    # raised by the program (_ShouldStop is what unittest's executor swallows as a success), and a program
    # rebinding its __name__ so that the test module's `if __name__ == '__main__': unittest.main()` would run.
    "unittest_should_stop": ("import unittest.case\ndef f(x):\n    raise unittest.case._ShouldStop()\n", UT_LABEL),
    "unittest_unexpected_success": ("import unittest.case\ndef f(x):\n    raise unittest.case._UnexpectedSuccess()\n",
                                    UT_LABEL),
    "dunder_name_main": ("__name__ = '__main__'\n" + WRONG, {"format": "unittest", "tests": [
        UT_LABEL["tests"][0] + "if __name__ == '__main__':\n    unittest.main(exit=False)\n"]}),
    "dev_shm_fill": ("import os\ndef f(x):\n    for i in range(64):\n        open(f'/dev/shm/x{i}', 'wb').write(b'x' * (1 << 20))\n"
                     "    return 0\n", FN_LABEL),
}

# The __eq__-always-True family (docs/sandbox.md, "strict comparison"): each evil value, returned by a wrong
# f, against a test written with ==, !=, unittest asserts and `in`, in the assert/unittest/humaneval formats.
_EVIL = ("class Evil:\n    def __eq__(self, o):\n        return True\n    def __ne__(self, o):\n        return False\n"
         "    def __hash__(self):\n        return 9\n    def __sub__(self, o):\n        return 0\n    __rsub__ = __sub__\n")
EVIL_VALUES = {  # name -> (program, expected f(2), expected f(3))
    "object": (_EVIL + "def f(x):\n    return Evil()\n", 4, 9),
    "int_subclass": ("class Evil(int):\n    __eq__ = lambda s, o: True\n    __ne__ = lambda s, o: False\n"
                     "    __hash__ = int.__hash__\ndef f(x):\n    return Evil(0)\n", 4, 9),
    "str_subclass": ("class Evil(str):\n    __eq__ = lambda s, o: True\n    __ne__ = lambda s, o: False\n"
                     "    __hash__ = str.__hash__\ndef f(x):\n    return Evil('0')\n", "4", "9"),
    "truthy_not_bool": ("class Evil:\n    __eq__ = lambda s, o: 'yes'\n    __ne__ = lambda s, o: ''\n"
                        "    __hash__ = lambda s: 9\ndef f(x):\n    return Evil()\n", 4, 9),
    "list_subclass": ("class Evil(list):\n    __eq__ = lambda s, o: True\n    __ne__ = lambda s, o: False\n"
                      "def f(x):\n    return Evil()\n", [4], [9]),
    "list_of_evil": (_EVIL + "def f(x):\n    return [Evil()]\n", [4], [9]),
    "dict_values": (_EVIL + "def f(x):\n    return {'r': Evil()}\n", {"r": 4}, {"r": 9}),
    "dict_keys": ("class K(str):\n    __eq__ = lambda s, o: True\n    __hash__ = lambda s: hash('r')\n"
                  "def f(x):\n    return {K('k'): 0}\n", {"r": 4}, {"r": 9}),
    "nested_tuple": (_EVIL + "def f(x):\n    return (1, [Evil()])\n", (1, [4]), (1, [9])),
}


def _forge_labels(e2, e3):
    ut = ("import unittest\nclass T(unittest.TestCase):\n    def test_a(self):\n        self.assertEqual(f(2), {e2!r})\n"
          "    def test_b(self):\n        self.assertTrue(f(3) == {e3!r})\n")
    return {
        "assert": {"format": "assert", "tests": [f"assert f(2) == {e2!r}", f"assert not (f(3) != {e3!r})"]},
        "unittest": {"format": "unittest", "tests": [ut.format(e2=e2, e3=e3)]},
        "humaneval": {"format": "humaneval", "entry_point": "f", "tests": [
            f"def check(candidate):\n    assert candidate(2) == {e2!r}\n    assert not (candidate(3) != {e3!r})\n"]},
    }


for _name, (_code, _e2, _e3) in EVIL_VALUES.items():
    for _fmt, _label in _forge_labels(_e2, _e3).items():
        ADVERSARIAL[f"eq_{_name}_{_fmt}"] = (_code, _label)


def _ut(body_a, body_b):
    return {"format": "unittest", "tests": ["import unittest\nclass T(unittest.TestCase):\n    def test_a(self):\n"
                                            f"        {body_a}\n    def test_b(self):\n        {body_b}\n"]}


_EVIL_F = _EVIL + "def f(x):\n    return Evil()\n"
_EVIL_LIST_F = _EVIL + "def f(x):\n    return [Evil()]\n"
ADVERSARIAL.update({
    "eq_assert_almost_equal": (_EVIL_F, _ut("self.assertAlmostEqual(f(2), 4.0)", "self.assertAlmostEqual(f(3), 9, delta=0.5)")),
    "eq_assert_in": (_EVIL_F, _ut("self.assertIn(f(2), [4])", "self.assertIn(f(3), {9})")),
    "eq_assert_count_equal": (_EVIL_LIST_F, _ut("self.assertCountEqual(f(2), [4])", "self.assertListEqual(f(3), [9])")),
    "eq_assert_dict_sequence": (_EVIL + "def f(x):\n    return {'r': Evil()} if x == 2 else (Evil(),)\n",
                                _ut("self.assertDictEqual(f(2), {'r': 4})", "self.assertSequenceEqual(f(3), (9,))")),
    "eq_deprecated_aliases": (_EVIL_F, _ut("self.assertEquals(f(2), 4)", "self.failUnlessEqual(f(3), 9)")),
    "eq_in_operator": (_EVIL_F, {"format": "assert", "tests": ["assert f(2) in [4, 5]", "assert f(3) in {9: 'x'}"]}),
    "eq_chained_compare": (_EVIL_F, {"format": "assert", "tests": ["assert f(2) == 4 == f(2)", "assert 0 < 9 == f(3)"]}),
    # The strict functions themselves: reachable as constants of the test methods' code, and as the
    # unittest asserts' defaults. Replacing their code or defaults is denied.
    "patch_strict_functions": (
        _EVIL + "import unittest\ndef _patch():\n    ok = lambda *a, **k: True\n"
        "    fns = [unittest.TestCase.assertEqual]\n    for c in unittest.TestCase.__subclasses__():\n"
        "        for v in list(vars(c).values()):\n"
        "            fns += [k for k in getattr(getattr(v, '__code__', None), 'co_consts', ()) if callable(k)]\n"
        "            if callable(v) and hasattr(v, '__code__'):\n"
        "                try:\n                    v.__code__ = (lambda self: None).__code__\n"
        "                except Exception:\n                    pass\n"
        "    for fn in fns:\n        for attr, val in (('__defaults__', (ok,) * 8), ('__code__', ok.__code__)):\n"
        "            try:\n                setattr(fn, attr, val)\n            except Exception:\n                pass\n"
        "        try:\n            fn.__globals__['__builtins__'] = {'len': ok}\n        except Exception:\n            pass\n"
        "def f(x):\n    _patch()\n    return Evil()\n", _ut("self.assertEqual(f(2), 4)", "self.assertTrue(f(3) == 9)")),
    # Found while closing the forge above: a test method's __globals__ is its module's namespace.
    "patch_test_module_globals": (
        "import unittest\ndef f(x):\n    for c in unittest.TestCase.__subclasses__():\n"
        "        if c.__module__.startswith('test_module'):\n            g = c.test_a.__globals__\n"
        "            g['__builtins__']['sorted'] = lambda *a, **k: [9]\n            g['unittest'] = None\n"
        "    return 0\n", UT_LABEL),
})



# The pytest format: the tests run under the real pytest in the judge; a wrong program that plants pytest's
# configuration, raises its outcome exceptions, exits early with a fake report, or hands it hooks gains nothing.
PY_LABEL = {"format": "pytest", "tests": [
    "import pytest\nfrom solution import f\n\ndef test_a():\n    assert f(2) == 4\n\n"
    "@pytest.mark.parametrize('x, y', [(3, 9)])\ndef test_b(x, y):\n    assert f(x) == y\n"]}
PY_STAR_LABEL = {"format": "pytest", "tests": [
    "from solution import *\n\ndef test_a():\n    assert f(2) == 4\n\ndef test_b():\n    assert f(3) == 9\n"]}
PY_APPROX_LABEL = {"format": "pytest", "tests": [
    "import pytest\nfrom solution import f\n\ndef test_a():\n    assert f(2) == pytest.approx(4)\n\n"
    "def test_b():\n    assert pytest.approx(9.0) == f(3)\n"]}
_PASS_EVERYTHING = ("import pytest\n@pytest.hookimpl(tryfirst=True)\ndef pytest_runtest_makereport(item, call):\n"
                    "    from _pytest.reports import TestReport\n"
                    "    return TestReport(item.nodeid, item.location, {}, 'passed', None, call.when)\n")
ADVERSARIAL.update({
    "pytest_planted_config": (
        "import os\nfor _name, _text in (('pytest.ini', '[pytest]\\naddopts = -p no:python\\npython_functions = nope\\n'),"
        " ('pyproject.toml', '[tool.pytest.ini_options]\\naddopts = \"--co\"\\n'), ('conftest.py', " + repr(_PASS_EVERYTHING)
        + "), ('tox.ini', '[pytest]\\npython_files = none\\n')):\n    with open(_name, 'w') as _fh:\n"
        "        _fh.write(_text)\nos.makedirs('__pycache__', exist_ok=True)\n"
        "def f(x):\n    return 0\n", PY_LABEL),
    "pytest_skip_from_program": ("import unittest\ndef f(x):\n    raise unittest.SkipTest('nothing to see')\n", PY_LABEL),
    "pytest_forged_outcomes": (
        "class Skipped(BaseException):\n    pass\nSkipped.__module__ = '_pytest.outcomes'\n"
        "class XFailed(Exception):\n    pass\nXFailed.__module__ = '_pytest.skipping'\n"
        "def f(x):\n    raise (Skipped if x == 2 else XFailed)('forged')\n", PY_LABEL),
    "pytest_fake_report_then_exit": (
        "import os, sys\ndef f(x):\n    sys.stdout.write('== 2 passed in 0.01s ==\\n')\n    sys.stdout.flush()\n"
        "    with open('report.xml', 'w') as fh:\n        fh.write('<testsuite failures=\"0\" tests=\"2\"/>')\n"
        "    os._exit(0)\n", PY_LABEL),
    "pytest_hooks_by_star_import": (
        "pytest_plugins = ['conftest']\npytestmark = []\n"
        "def pytest_runtest_makereport(item, call):\n    return None\n"
        "def pytest_collection_modifyitems(items):\n    items.clear()\n"
        "def test_extra():\n    return None\ndef setup_module():\n    return None\ndef f(x):\n    return 0\n", PY_STAR_LABEL),
    "pytest_approx_forge": (_EVIL_F, PY_APPROX_LABEL),
})


# The checker format: the dataset's checker judges what the program printed; a program that plants the checker's
# files or module names, leaves a process to rewrite them, or prints the checker's own "1" gains nothing.
_PERMUTATION_CHECKER = (
    "import sys\nn = int(open(sys.argv[1]).read().split()[0])\nout = open(sys.argv[3]).read().split()\n"
    "try:\n    ok = sorted(map(int, out)) == list(range(1, n + 1))\nexcept ValueError:\n    ok = False\n"
    "print(1 if ok else 0)\n")
CHECKER_LABEL = {"format": "checker", "tests": [
    {"input": "3\n", "output": "1 2 3\n", "checker": _PERMUTATION_CHECKER}, {"input": "2\n", "output": "2 1\n"}]}
ADVERSARIAL.update({
    "checker_planted_files": (
        "import os\nfor _n in ('correct_output.txt', 'input.txt'):\n    try:\n"
        "        os.symlink('solution_output.txt', _n)\n    except OSError:\n        pass\n"
        "for _n, _t in (('solution_output.txt', '1 2 3'), ('checker.py', 'print(1)'), ('json.py', 'loads = None'),"
        " ('tempfile.py', 'mkdtemp = None')):\n    with open(_n, 'w') as _f:\n        _f.write(_t)\n"
        "os.makedirs('checker-x', exist_ok=True)\nprint(0)\n", CHECKER_LABEL),
    "checker_daemon_rewrites": (
        "import os, time\nif os.fork() == 0:\n    os.close(1)\n    os.close(2)\n    end = time.time() + 3\n    while time.time() < end:\n"
        "        for root, dirs, files in os.walk('.'):\n            for f in files:\n"
        "                try:\n                    with open(os.path.join(root, f), 'w') as fh:\n"
        "                        fh.write('1 2 3')\n                except OSError:\n                    pass\n"
        "        time.sleep(0.01)\n    os._exit(0)\nprint(0)\n", CHECKER_LABEL),
    "checker_prints_its_verdict": ("print(1)\n", CHECKER_LABEL),
})

def _program(name, host):
    code, label = ADVERSARIAL[name]
    code = code.replace("{canary}", host["canary"]).replace("{secret}", host["secret"]).replace(
        "{repo}", str(REPO_ROOT)).replace("{port}", str(host["port"]))
    return Job(code, parse_label(label))


@pytest.fixture(scope="module")
def adversarial_results(sb, host):
    os.environ["WANDB_API_KEY"] = "HOSTSECRET-wandb"
    try:
        names = list(ADVERSARIAL)
        t0 = time.monotonic()
        results = dict(zip(names, sb.run([_program(n, host) for n in names]), strict=False))
        return results, time.monotonic() - t0
    finally:
        os.environ.pop("WANDB_API_KEY", None)


def test_suite_is_big_enough():
    assert len(ADVERSARIAL) >= 25


@pytest.mark.parametrize("name", list(ADVERSARIAL))
def test_adversarial_program_scores_zero(adversarial_results, name):
    results, _ = adversarial_results
    r = results[name]
    assert r.expected == len(r.outcomes) == 2
    assert r.passed == 0, (name, [(o.status, o.detail) for o in r.outcomes], r.detail)


def test_nothing_reached_the_host(adversarial_results, host):
    assert not os.path.exists(host["canary"])
    for p in ("/usr/evil", "/etc/evil", "/evil"):
        assert not os.path.exists(p)
    with pytest.raises(BlockingIOError):
        host["srv"].accept()  # nobody connected to the host's loopback listener


def test_statuses_are_meaningful(adversarial_results):
    results, elapsed = adversarial_results
    st = {n: [o.status for o in r.outcomes] for n, r in results.items()}
    want = {"infinite_loop": ["timeout"] * 2, "sleep_past_job_deadline": ["timeout"] * 2,
            "memory_bomb": ["memory"] * 2, "swallow_everything": ["timeout"] * 2,
            "sys_exit_before_tests": ["killed"] * 2, "os_exit_before_tests": ["killed"] * 2,
            "system_exit_in_test": ["killed"] * 2, "stdio_answer_then_endless_thread": ["timeout"] * 2,
            "stdio_answer_then_spin": ["timeout"] * 2, "stdio_answer_then_sigkill": ["killed"] * 2}
    wrong = {n: (st[n], [o.detail for o in results[n].outcomes]) for n in want if st[n] != want[n]}
    assert not wrong
    assert st["c_stack_overflow"][0] in ("killed", "error", "timeout", "memory")
    assert elapsed < 60


def test_no_process_left_behind(adversarial_results, sb):
    # Inside a pid namespace nothing can leave this tree: bwrap's init is every orphan's last parent.
    tree = _tree()
    deadline = time.monotonic() + 10
    # Each worker is bwrap + bwrap's init + the worker, its zygote, its judge and the reaper (init of the jobs'
    # pid namespace); every candidate and daemon must be gone.
    while len(tree) != 6 * sb.config.workers and time.monotonic() < deadline:
        time.sleep(0.1)
        tree = _tree()
    assert len(tree) == 6 * sb.config.workers, [psutil.Process(p).cmdline()[:3] for p in tree]
    assert [p for p in tree if psutil.Process(p).status() == psutil.STATUS_ZOMBIE] == []


def test_pool_still_works_and_scratch_is_clean(adversarial_results, sb):
    label = parse_label(FN_LABEL)
    good = sb.run([Job("def f(x):\n    return x * x\n", label)])[0]
    assert good.pass_rate == 1.0
    lister = ("import os\ndef f(x):\n    here = os.path.basename(os.getcwd())\n"
              "    left = [n for n in os.listdir('/tmp') if n != here] + os.listdir('/dev/shm') + os.listdir('.')\n"
              "    assert not left, left\n    return x * x\n")
    res = sb.run([Job(lister + f"# {i}\n", label) for i in range(4)])  # lands on every worker
    assert all(r.pass_rate == 1.0 for r in res), [o.detail for r in res for o in r.outcomes]
    assert sb.info()["workers_alive"] == sb.config.workers


# ---------------------------------------------------------------- the job's CPU and memory, as the kernel counts them
# Each on a pool of its own: one worker, pinned with this process to one CPU (so the starved-CPU credit matters), and
# the job cgroup where the kernel gives one (cgroups.py; without one the workers fall back to /proc, whose gap
# docs/sandbox.md states and Sandbox.info() reports).

def _statuses(sb, jobs):
    return [[o.status for o in r.outcomes] for r in sb.run(jobs)]


def _cgroup_pool(config):
    from coderl.rewards.sandbox import Sandbox
    sb = Sandbox(config)
    sb.start()
    if sb.info()["accounting"]["cgroup"] is None:
        sb.close()
        pytest.skip("no writable cgroup here: the workers use the /proc fallback (Sandbox.info()['accounting'])")
    return sb


def test_cpu_hidden_from_the_count_times_out_like_its_honest_twin():
    """A program needing 1.4 s of CPU under a 1 s limit, spread over children whose CPU left the job's /proc sum
    (auto-reaped, re-parented to the zygote by CLONE_PARENT, many short-lived, double-fork daemons) while its main
    process was credited the wait they caused, passed where its single-process twin timed out (red team, issue
    35). Counted by the job's cgroup, it times out like the twin; a right program with children still passes."""
    from scripts.bench.cheaters import cpu_hidden as ch
    cases = [(fmt, way) for way in ch.WAYS for fmt in ("call", "stdio")]
    with ch.one_cpu():
        sb = _cgroup_pool(ch.config(1))
        try:
            cheaters = _statuses(sb, [Job(ch.program(fmt, way), ch.label(fmt)) for fmt, way in cases])
            twins = _statuses(sb, [Job(ch.program(fmt, None), ch.label(fmt)) for fmt in ("call", "stdio")])
            right = _statuses(sb, [Job(ch.program(fmt, way, need_s=0.3), ch.label(fmt))
                                   for fmt in ("call", "stdio") for way in ("sigign", "clone_parent")])
        finally:
            sb.close()
    assert dict(zip(cases, cheaters, strict=True)) == {c: ["timeout"] for c in cases}
    assert twins == [["timeout"]] * 2
    assert right == [["passed"]] * 4


def test_memory_held_in_the_kernel_counts_toward_the_job_bound():
    """Socket buffers held 0.5-2.2 GiB per job while resident memory stayed under job_memory_mb (red team, issue
    35). The job's cgroup counts them: past the bound the kernel kills inside the job only, the program gets
    `memory`, and the worker, its zygote and its judge go on (no restart)."""
    from scripts.bench.cheaters import kernel_memory as km
    sb = _cgroup_pool(km.config(1))
    try:
        over = _statuses(sb, [Job(km.program(fmt, cheat), km.label(fmt))
                              for fmt in ("call", "stdio") for cheat in (True, False)])
        under = _statuses(sb, [Job(km.program(fmt, True, mb=16), km.label(fmt)) for fmt in ("call", "stdio")])
        stats = sb.info()["stats"]
    finally:
        sb.close()
    assert over == [["memory"]] * 4
    assert under == [["passed"]] * 2
    assert stats.get("worker_restarts", 0) == 0, stats

"""`unittest` (CodeRM-UnitTest): a list of unittest module sources. Credit is per test method: every test*
method of a module's TestCase classes (inherited from classes of the same module too), in unittest's loader
order, less those that check nothing; a module that does not parse is one `syntax` case. --verify cuts the
failing methods out of a module (keep)."""

import ast
import sys
import time
import types
import unittest
from collections import Counter

from ..framing import Status
from .common import PARSE_ERRORS, checks_something, names_nothing, source_tests

NAME = "unittest"
HOOKS = frozenset({"setUpModule", "tearDownModule", "load_tests"})
validate_tests = source_tests
_TESTCASE_BASES = {"TestCase", "IsolatedAsyncioTestCase"}
_MODULE_FIXTURES = {"setUpModule", "tearDownModule"}


# ------------------------------------------------------------------------------------ outside: the plan

def cases(modules) -> list:
    """[module index, class name, method name] per test case; [i, None, None] for a module that does not parse."""
    out = []
    for idx, src in enumerate(modules):
        try:
            tree = ast.parse(src)
        except PARSE_ERRORS:
            out.append([idx, None, None])  # the module itself is broken: one "syntax" case
            continue
        test_classes: set[str] = set()
        classes: dict[str, ast.ClassDef] = {}
        fixtures = any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name in _MODULE_FIXTURES
                       for n in tree.body)
        for node in tree.body:
            if not isinstance(node, ast.ClassDef):
                continue
            classes[node.name] = node
            bases = {b.attr if isinstance(b, ast.Attribute) else getattr(b, "id", None) for b in node.bases}
            if not (bases & _TESTCASE_BASES or bases & test_classes):
                continue
            test_classes.add(node.name)
            out += [[idx, node.name, m] for m in _test_methods(node, classes, fixtures)]
    return out


def _test_methods(node: ast.ClassDef, classes: dict, module_fixtures: bool) -> list[str]:
    """The test* methods a class defines or inherits from classes of its module (a mixin's tests run too:
    left out, they would be checks the program never faced), less those that check nothing."""
    methods = _methods(node, classes, 0)  # the class's own and its module bases' methods, nearest first
    # A fixture (setUp, setUpClass, ...) or a redefined assert method is the test's own code and may call the
    # program: then even a test that only passes exercises it. Only without any can a test check nothing.
    plain = not module_fixtures and all(name.startswith("test") for name in methods)
    return [name for name, fn in methods.items() if name.startswith("test") and not (plain and _checks_nothing(fn))]


def _methods(node: ast.ClassDef, classes: dict, depth: int) -> dict:
    found = {item.name: item for item in node.body if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))}
    for b in node.bases if depth < 20 else ():
        base = classes.get(getattr(b, "id", None))
        if base is not None and base is not node:
            for name, fn in _methods(base, classes, depth + 1).items():
                found.setdefault(name, fn)
    return found


def _checks_nothing(fn) -> bool:
    """A test method whose every statement is `pass`, a constant, an assert naming nothing or a TestCase
    assert*/fail* call on arguments naming nothing: in a class without fixtures or methods of its own besides
    tests, it passes or fails the same for every program, like `assert True` in a check()."""
    for stmt in fn.body:
        if isinstance(stmt, ast.Pass) or (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)):
            continue
        if isinstance(stmt, ast.Assert) and not checks_something(stmt):
            continue
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        if (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                and isinstance(call.func.value, ast.Name) and call.func.value.id == "self"
                and call.func.attr.startswith(("assert", "fail"))
                and names_nothing([*call.args, *(k.value for k in call.keywords)])):
            continue
        return False
    return True


def plan(label) -> dict:
    found = cases(label.tests)
    # unittest's loader order: modules in label order, classes and methods by name.
    order = sorted(range(len(found)), key=lambda i: (found[i][0], found[i][1] or "", found[i][2] or ""))
    return {"plan": found, "tests": list(label.tests), "order": order}


def unittest_cases(module: str) -> list[tuple[str | None, str | None]]:
    """(class, method) of each test case a unittest module declares, in outcome order; (None, None) for a
    module that does not parse (its one `syntax` case)."""
    return [(c, m) for _, c, m in cases([module])]


def method_source(classes: dict, cls: str, name: str):
    """The def a test class of the module (`classes`: name -> ClassDef) runs as `name`: its own or the nearest
    module base's, as in _test_methods; None when it has none."""
    node = classes.get(cls)
    return None if node is None else _methods(node, classes, 0).get(name)


# --------------------------------------------------------------------------- outside: what --verify keeps

def keep(tests, statuses, counts) -> dict:
    """--verify: each module with its failing test methods cut out (drop_test_methods); dropped whole when
    every method fails, when it has none, or when the cut cannot be exact."""
    kept, kept_cases, dropped, pos, rewritten, stats = [], 0, [], 0, False, Counter()
    for k, (module, n) in enumerate(zip(tests, counts, strict=True)):
        mine = statuses[pos:pos + n]
        pos += n
        found = unittest_cases(module)
        names = [f"{c}.{m}" if c else "(module)" for c, m in found]
        failing = [i for i, s in enumerate(mine) if s != Status.PASSED]
        if n and not failing:
            kept.append(module)
            kept_cases += n
            continue
        if n and len(failing) < n:
            src = drop_test_methods(module, {found[i] for i in failing})
            if src is not None:
                kept.append(src)
                kept_cases += n - len(failing)
                rewritten = True
                stats["test_methods_dropped"] += len(failing)
                dropped += [f"tests[{k}] {names[i]} ({mine[i]})" for i in failing]
                continue
            stats["unittest_modules_uncuttable"] += 1
        dropped += [f"tests[{k}] {names[i]} ({s})" for i, s in enumerate(mine)] if n else [f"tests[{k}] (no test method)"]
    return {"kept": kept, "kept_cases": kept_cases, "dropped": dropped, "rewritten": rewritten, "counts": stats}


def drop_test_methods(module: str, failing: set[tuple[str, str]]) -> str | None:
    """`module` with the (class, method) test cases in `failing` cut out of its source; None when the cut cannot
    be exact: the result must declare precisely the other cases (a method a mixin gives to two classes, a
    statement sharing a line, ...)."""
    try:
        tree = ast.parse(module)
    except PARSE_ERRORS:
        return None
    want = [case for case in unittest_cases(module) if case not in failing]
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    owner = {id(item): node for node in classes.values() for item in node.body}
    cuts: dict[int, ast.stmt] = {}
    for cls, method in failing:
        home = owner.get(id(method_source(classes, cls, method)))
        if home is None:
            return None
        for item in home.body:  # every def of that name: cutting only the last would revive an earlier one
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name == method:
                cuts[id(item)] = item
    lines = module.splitlines(keepends=True)
    drop: set[int] = set()
    pads: dict[int, str] = {}
    for item in cuts.values():
        first = min([item.lineno, *(d.lineno for d in item.decorator_list)])
        home = owner[id(item)]
        others = [s for s in home.body if id(s) not in cuts]
        if first <= home.lineno or any(s.lineno <= item.end_lineno and s.end_lineno >= first for s in others):
            return None  # shares a line with its class header or another statement
        line = lines[first - 1]
        pads[first] = line[:len(line) - len(line.lstrip())] + "pass\n"  # a class left with no body stays valid
        drop.update(range(first, item.end_lineno + 1))
    out = "".join(pads.get(no, "") if no in drop else line for no, line in enumerate(lines, 1))
    try:
        ast.parse(out)
    except SyntaxError:
        return None
    return out if unittest_cases(out) == want else None


# --------------------------------------------------------------------------- inside the judge: the runner

def runner(job, ns):
    from .. import verdicts
    spec = job.spec
    modules, broken, suite_tests, index = {}, {}, [], {}
    for i in job.order:
        midx, cls_name, meth = spec.plan[i]
        if cls_name is None:
            broken[i] = (Status.SYNTAX, "the test module does not compile")
            continue
        if midx not in modules:
            name = f"test_module_{midx}"
            mod = types.ModuleType(name)
            mod.__dict__.update(ns)
            mod.__dict__["__name__"] = name
            sys.modules[name] = mod
            try:
                exec(spec.code(spec.tests[midx], f"<test module {midx}>"), mod.__dict__)
                modules[midx] = (mod, None)
            except BaseException as e:
                modules[midx] = (mod, (job.session.taint or (verdicts.classify(e), verdicts.describe(e, job.limit))))
        mod, err = modules[midx]
        if err is not None:
            broken[i] = err
            continue
        cls = mod.__dict__.get(cls_name)
        if not (isinstance(cls, type) and issubclass(cls, unittest.TestCase)):
            broken[i] = (Status.ERROR, f"test class {cls_name} is missing or not a unittest.TestCase")
            continue
        try:
            test = cls(meth)
        except BaseException as e:
            broken[i] = (Status.ERROR, verdicts.describe(e, job.limit))
            continue
        suite_tests.append(test)
        index[id(test)] = i

    def run():
        for i in job.order:
            if i in broken:
                job.report(["end", i, broken[i][0], 0.0, broken[i][1], None])
        result = _Result(verdicts, job, index, [index[id(t)] for t in suite_tests])
        unittest.TestSuite(suite_tests).run(result)
        if not job.session.gone:
            result.flush()

    return run


class _Result(unittest.TestResult):
    """Reports each planned test the moment unittest finishes it."""

    def __init__(self, verdicts, job, index, order):
        super().__init__()
        self.verdicts, self.job, self.index = verdicts, job, index
        self.order, self.pos = order, 0  # the suite's tests in run order, and how far it got
        self.current = None
        self.fixture_error = None

    def _exc_info_to_string(self, err, test):
        return ""  # unittest's own report (a formatted traceback per failure) is never read: describe() is

    def flush(self, upto=None):
        """Report the tests unittest skipped before `upto` (None: all the rest): a fixture of theirs failed."""
        while self.pos < len(self.order) and self.order[self.pos] != upto:
            status, detail = self.fixture_error or (Status.ERROR, "the test was not run")
            self.job.report(["end", self.order[self.pos], status, 0.0, detail, None])
            self.pos += 1

    def startTest(self, test):
        super().startTest(test)
        i = self.index.get(id(test))
        if i is not None:
            self.flush(i)
            self.pos += 1
            self.current = [i, None, "", time.perf_counter()]  # passed only once unittest says so (addSuccess)
            self.job.session.taint = None

    def _mark(self, test, status, err):
        if self.current is None or self.index.get(id(test)) != self.current[0]:
            if err is not None:  # setUpClass / setUpModule (or their tearDown) failed
                self.fixture_error = (self.job.session.taint or (status, self.verdicts.describe(err[1], self.job.limit)))
            return
        if self.current[1] in (None, Status.PASSED):
            self.current[1] = status
            self.current[2] = self.verdicts.describe(err[1], self.job.limit) if err is not None else ""

    def _passed(self, test):
        if self.current is not None and self.index.get(id(test)) == self.current[0] and self.current[1] is None:
            self.current[1] = Status.PASSED

    def addSuccess(self, test):
        super().addSuccess(test)
        self._passed(test)

    # A skipped test and an expected failure verified nothing, and the program can steer either (a skipIf
    # condition on its names, a wrong answer making the expected failure fail): never a pass.
    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._unverified(test, f"the test was skipped: {reason}")

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self._unverified(test, "an expected failure: the test verifies nothing")

    def _unverified(self, test, why):
        if self.current is not None and self.index.get(id(test)) == self.current[0] and \
                self.current[1] in (None, Status.PASSED):
            self.current[1], self.current[2] = Status.UNSUPPORTED, str(why)[:self.job.limit]

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._mark(test, Status.FAILED, err)

    def addError(self, test, err):
        super().addError(test, err)
        self._mark(test, self.verdicts.classify(err[1]), err)

    def addSubTest(self, test, subtest, err):
        super().addSubTest(test, subtest, err)
        if err is not None:
            self._mark(test, Status.FAILED if issubclass(err[0], AssertionError) else self.verdicts.classify(err[1]), err)

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self._mark(test, Status.FAILED, None)

    def stopTest(self, test):
        super().stopTest(test)
        cur = self.current
        if cur is None or self.index.get(id(test)) != cur[0]:
            return
        self.current = None
        i, status, detail, t0 = cur
        s = self.job.session
        if status is None:  # unittest stopped it before an outcome (an exception that ends the run)
            status, detail = Status.ERROR, "the test did not finish"
        if s.taint:
            status, detail = s.taint
        self.job.report(["end", i, status, time.perf_counter() - t0, self.verdicts.excerpt(detail, self.job.limit), None])
        if s.gone:
            self.stop()

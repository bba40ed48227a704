"""`pytest` (KodCode, code-r1's `{"pytest": ...}`): a list of pytest test-file sources that import the program
as module `solution`. Each runs under the real pytest, in the judge: its assertion rewriting, collection,
fixtures, `parametrize`, `pytest.raises` and `approx` are pytest's own. Credit is per test item as pytest
collects them (each parametrize case), counted statically (plan); a test whose items cannot be counted without
running its module (parameters computed at run time, parametrized fixtures) is one case, passed only when all
its items pass. pytest reaches the judge alone (inside/packages.py): the program cannot import it.
"""

import ast

from ..framing import Status
from . import unittests
from .common import PARSE_ERRORS, source_tests

NAME = "pytest"
HOOKS = frozenset()
validate_tests = source_tests
_SETUP_NAMES = {"setup_module", "teardown_module", "setUpModule", "tearDownModule", "setup_function",
                "teardown_function", "setup_method", "teardown_method", "setup_class", "teardown_class",
                "setup", "teardown"}
# pytest's own options for a run in the judge: nothing read from files (no conftest or plugin the program could
# plant in the directory the judge runs in; ini files: _config_from_root), no cache written, none of the plugins
# that report to a terminal, change the judge's signal handlers or threads, or collect garbage after each test.
ARGS = ("--rootdir", "/", "--noconftest", "--continue-on-collection-errors", "--disable-plugin-autoload", "-s", "-p", "no:cacheprovider",
        "-p", "no:faulthandler", "-p", "no:terminal", "-p", "no:unraisableexception", "-p", "no:threadexception",
        "-p", "no:pastebin", "-p", "no:junitxml", "-p", "no:doctest", "-p", "no:legacypath",
        "-p", "no:setupplan", "-p", "no:setuponly", "-p", "no:stepwise", "-p", "no:warnings", "-p", "no:python_path")


# ------------------------------------------------------------------------------------ outside: the plan

def _dotted(node) -> str:
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return node.id if isinstance(node, ast.Name) else ""


def _width(deco) -> int | None:
    """How many items a `parametrize` mark makes (1 for any other decorator); None when it cannot be counted
    without running the module (argvalues computed at run time)."""
    if not (isinstance(deco, ast.Call) and _dotted(deco.func).split(".")[-1] == "parametrize"):
        return 1
    values = deco.args[1] if len(deco.args) > 1 else next(
        (k.value for k in deco.keywords if k.arg == "argvalues"), None)
    if isinstance(values, (ast.List, ast.Tuple)) and not any(isinstance(e, ast.Starred) for e in values.elts):
        return max(len(values.elts), 1)  # an empty set is one skipped item
    return None


def _times(decos, base: int | None) -> int | None:
    for d in decos:
        w = _width(d)
        base = None if w is None or base is None else base * w
    return base


def _pytestmark(body) -> list:
    """The marks a module or class sets with `pytestmark = ...` (one mark or a list of them)."""
    marks = []
    for stmt in body:
        if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in stmt.targets):
            marks = list(stmt.value.elts) if isinstance(stmt.value, (ast.List, ast.Tuple)) else [stmt.value]
    return marks


def _is_fixture(fn) -> bool:
    return any(_dotted(d.func if isinstance(d, ast.Call) else d).split(".")[-1] == "fixture"
               for d in fn.decorator_list)


def _param_fixtures(tree) -> bool:
    """The module defines a fixture with `params`: the tests using it are parametrized at run time."""
    return any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
        isinstance(d, ast.Call) and _dotted(d.func).split(".")[-1] == "fixture" and
        any(k.arg == "params" for k in d.keywords) for d in n.decorator_list) for n in ast.walk(tree))


def _inert(fn, fixtures: bool) -> bool:
    """A test that checks nothing: no argument (fixture), no decorator, no fixture or xunit setup in its module or
    class, and a body of `pass`, constants and asserts naming nothing; it passes or fails alike for every program."""
    args = fn.args
    return not fixtures and not fn.decorator_list and not (args.args or args.posonlyargs or args.kwonlyargs) and \
        unittests._checks_nothing(fn)


def _tests_of_class(node, classes, prefix, marks, width, fixtures, depth=0):
    """(node id, count) of a pytest test class's test methods (its own, then its module bases'), and of its nested
    test classes, as pytest collects them; [] when pytest would not collect it (it defines __init__)."""
    methods = unittests._methods(node, classes, 0)
    if "__init__" in methods or depth > 20:
        return []
    fixtures = fixtures or any(name in _SETUP_NAMES or _is_fixture(fn) for name, fn in methods.items())
    base = _times(marks + node.decorator_list + _pytestmark(node.body), width)
    out = []
    for name, fn in methods.items():
        if name.startswith("test") and not _inert(fn, fixtures):
            out.append((f"{prefix}{node.name}::{name}", _times(fn.decorator_list, base)))
    for inner in node.body:
        if isinstance(inner, ast.ClassDef) and inner.name.startswith("Test"):
            out += _tests_of_class(inner, {}, f"{prefix}{node.name}::", marks, width, fixtures, depth + 1)
    return out


def items(module: str) -> list | None:
    """(node id, count) of each test a pytest module declares, in definition order; count None: not countable
    statically (one case for all its items). None for a module that does not parse."""
    try:
        tree = ast.parse(module)
    except PARSE_ERRORS:
        return None
    width = 1 if not _param_fixtures(tree) else None
    marks = _pytestmark(tree.body)
    fixtures = any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and (n.name in _SETUP_NAMES or _is_fixture(n))
                   for n in tree.body)
    found: dict = {}  # a module's names, as its namespace holds them: a later definition replaces an earlier one
    classes: dict = {}
    unittest_classes = {c for c, _ in unittests.unittest_cases(module) if c}
    for node in tree.body:
        names = []
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names = [node.name]
            found[node.name] = [(node.name, _times(marks + node.decorator_list, width))] \
                if node.name.startswith("test") and not _inert(node, fixtures) else []
        elif isinstance(node, ast.ClassDef):
            classes[node.name] = node
            names = [node.name]
            if node.name in unittest_classes:  # a unittest.TestCase: pytest runs its test* methods, one item each
                found[node.name] = [(f"{node.name}::{m}", 1) for c, m in unittests.unittest_cases(module)
                                    if c == node.name]
            elif node.name.startswith("Test"):
                found[node.name] = _tests_of_class(node, classes, "", marks, width, fixtures)
            else:
                found[node.name] = []
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Import, ast.ImportFrom)):
            targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
            names = [n.id for t in targets if t is not None for n in ast.walk(t) if isinstance(n, ast.Name)]
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [(a.asname or a.name).split(".")[0] for a in node.names]
            for name in names:
                if name in found:
                    found[name] = []  # rebound to something pytest does not collect as this test
    return [entry for tests in found.values() for entry in tests]


def plan(label) -> dict:
    """One case per test item: {"m": module, "node": node id, "k": item, "n": items} ("n" None: the test's items
    are one case); {"m": module, "node": None} for a module that does not parse (its one `syntax` case)."""
    out = []
    for m, src in enumerate(label.tests):
        found = items(src)
        if found is None:
            out.append({"m": m, "node": None})
            continue
        for node, n in found:
            out += [{"m": m, "node": node, "k": k, "n": n} for k in range(n or 1)]
    return {"plan": out, "tests": list(label.tests)}


# --------------------------------------------------------------------------- inside the judge: the runner

def runner(job, ns):
    """pytest's run of the job's cases: its collection fed the label's modules (never a file), its items in the
    job's order, each case reported when its items ended. pytest is imported here only: the judge has it
    (inside/packages.py), and outside the sandbox nothing loads this half."""
    import pytest
    from _pytest.assertion.rewrite import rewrite_asserts
    from _pytest.reports import TestReport

    from .. import verdicts

    spec, sess = job.spec, job.session
    wanted = set(job.order)
    rank = {i: r for r, i in enumerate(job.order)}
    groups: dict = {}  # (module, node id) -> its cases' plan indices, in item order
    for i, case in enumerate(spec.plan):
        groups.setdefault((case["m"], case["node"]), []).append(i)
    done: set = set()

    def report(i, status, runtime, detail):
        if i in wanted and i not in done:
            done.add(i)
            job.report(["end", i, status, runtime, verdicts.excerpt(detail, job.limit), None])

    def status_of(exc):
        if isinstance(exc, pytest.skip.Exception):
            return Status.UNSUPPORTED, f"the test was skipped: {exc}"
        if isinstance(exc, pytest.fail.Exception):  # pytest.fail(), pytest.raises(...) that saw no exception
            return Status.FAILED, verdicts.describe(exc, job.limit)
        return verdicts.classify(exc), verdicts.describe(exc, job.limit)

    class Module(pytest.Module):
        """A label's test module: its source, assertion-rewritten by pytest, executed as module test_module_<m>."""

        def _getobj(self):
            import linecache
            import sys
            import types
            m = self.coderl_m
            src, filename = spec.tests[m], f"<test module {m}>"
            name = f"test_module_{m}"
            mod = types.ModuleType(name)
            mod.__file__ = filename
            sys.modules[name] = mod
            linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
            try:
                tree = ast.parse(src, filename)
                rewrite_asserts(tree, src.encode("utf-8", "surrogatepass"), filename, self.config)
                exec(compile(tree, filename, "exec"), mod.__dict__)
            except BaseException as e:
                plugin.broken[m] = sess.taint or status_of(e)
                raise
            return mod

    class Plugin:
        def __init__(self):
            self.broken = {}  # module -> (status, detail) of a module that did not load
            self.items = {}  # nodeid -> [group, position in the group]
            self.outcome = {}  # nodeid -> [status, detail, runtime]
            self.results: dict = {}  # group -> [(status, detail, runtime)] of its items that ended
            self.internal = ""  # pytest's own error, if any

        @pytest.hookimpl(tryfirst=True)
        def pytest_collection(self, session):
            root = session.config.rootpath
            collected = []
            for m in sorted({spec.plan[i]["m"] for i in wanted}):
                node = Module.from_parent(session, path=root / f"test_module_{m}.py")
                node.coderl_m = m
                found = list(session.genitems(node))
                if m in self.broken:
                    for i in sorted(wanted, key=rank.get):
                        if spec.plan[i]["m"] == m:
                            report(i, *self.broken[m][:1], 0.0, self.broken[m][1])
                    continue
                collected += found
            by_group: dict = {}
            for item in collected:
                key = (int(item.path.stem.rsplit("_", 1)[1]), item.nodeid.split("::", 1)[1].split("[", 1)[0])
                by_group.setdefault(key, []).append(item)
            run = []
            for key, cases in groups.items():
                if not wanted.intersection(cases) or key[1] is None:
                    continue
                its = by_group.get(key, [])
                exact = spec.plan[cases[0]]["n"] is not None and len(its) == len(cases)
                for pos, item in enumerate(its):
                    if not exact or cases[pos] in wanted:
                        self.items[item.nodeid] = (key, pos, exact)
                        run.append((rank.get(cases[pos] if exact else min(cases, key=lambda i: rank.get(i, 1 << 30)),
                                             1 << 30), pos, item))
                if not its:
                    for i in cases:
                        report(i, Status.ERROR, 0.0, "pytest collected no such test")
            session.items = [item for _, _, item in sorted(run, key=lambda r: (r[0], r[1]))]
            session.testscollected = len(session.items)
            session.config.hook.pytest_collection_finish(session=session)
            return True

        def pytest_runtest_logstart(self, nodeid, location):
            sess.taint = None
            self.outcome[nodeid] = [None, "", 0.0]

        @pytest.hookimpl(tryfirst=True)
        def pytest_runtest_makereport(self, item, call):
            # pytest's own report formats a traceback per failure from source files (slow, and never read:
            # the verdict's detail is describe()'s): the report carries the outcome, the status is kept here
            exc = call.excinfo.value if call.excinfo is not None else None
            out = self.outcome.setdefault(item.nodeid, [None, "", 0.0])
            out[2] += call.duration
            if exc is None:  # `outcome` is pytest's report vocabulary ("passed", "skipped", "failed"), not a Status
                outcome, longrepr = "passed", None
            elif isinstance(exc, pytest.skip.Exception):
                outcome, longrepr = "skipped", ("", 0, str(exc))
            else:
                outcome, longrepr = "failed", type(exc).__name__
            if exc is not None and out[0] is None:
                out[0], out[1] = status_of(exc)
            return TestReport(item.nodeid, item.location, {k: 1 for k in item.keywords}, outcome, longrepr,
                              call.when, duration=call.duration, start=call.start, stop=call.stop)

        def pytest_runtest_logreport(self, report):
            out = self.outcome.setdefault(report.nodeid, [None, "", 0.0])
            if hasattr(report, "wasxfail"):  # an expected failure verifies nothing, and the program can steer it
                out[0], out[1] = Status.UNSUPPORTED, "an expected failure: the test verifies nothing"
            elif report.skipped and out[0] in (None, Status.PASSED):
                out[0], out[1] = Status.UNSUPPORTED, out[1] or "the test was skipped"
            elif report.failed and out[0] is None:
                out[0], out[1] = Status.ERROR, f"the test failed in its {report.when}"

        def pytest_runtest_logfinish(self, nodeid, location):
            placed = self.items.get(nodeid)
            status, detail, runtime = self.outcome.pop(nodeid, [None, "", 0.0])
            if sess.taint:
                status, detail = sess.taint
            status = status or Status.PASSED
            if placed is not None:
                key, pos, exact = placed
                cases = groups[key]
                if exact:
                    report(cases[pos], status, runtime, detail)
                else:
                    got = self.results.setdefault(key, [])
                    got.append((status, detail, runtime))
                    total = sum(r[2] for r in got)
                    bad = next((r for r in got if r[0] != Status.PASSED), None)
                    if bad is not None or len(got) == sum(1 for v in self.items.values() if v[0] == key):
                        for i in cases:
                            report(i, bad[0] if bad else Status.PASSED, total, bad[1] if bad else "")
            if sess.gone:
                pytest_session[0].shouldstop = "the program's process ended"

        def pytest_internalerror(self, excrepr, excinfo):
            self.internal = f"{excinfo.typename}: {excinfo.value}"

        def pytest_sessionstart(self, session):
            pytest_session[0] = session

    pytest_session = [None]
    plugin = Plugin()

    def run():
        _config_from_root()
        status = pytest.main(list(ARGS), plugins=[plugin])
        if not sess.gone:
            for i in job.order:
                report(i, Status.ERROR, 0.0, f"pytest did not run the test (exit status {int(status)}) {plugin.internal}")

    return run


def _config_from_root():
    """pytest in the judge looks for its ini file (pytest.ini, pyproject.toml, ...) at the sandbox's read-only
    root only: it would search the directory the judge runs in, which the program writes (a planted pytest.ini
    with `addopts` or `python_functions` would choose what runs). Installed once per judge, on its own pytest."""
    import _pytest.config
    found = _pytest.config.determine_setup
    if getattr(found, "coderl_root", False):
        return

    def determine_setup(**kw):
        kw.update(inifile=None, args=["/"], rootdir_cmd_arg="/")
        return found(**kw)

    determine_setup.coderl_root = True
    _pytest.config.determine_setup = determine_setup

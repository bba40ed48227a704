"""Static estimate: which test cases need an operation a plain-data channel cannot judge.

Model: the narrowest channel issue 9 allows, so the figures are an upper bound for rewards/sandbox/ (whose
channel also mirrors the candidate's stdout, carries test-defined callbacks, writes in-place mutations of
arguments back and rebuilds exceptions the solution defines). Test code runs in its own process and
reaches the candidate only through a channel carrying plain data (None, bool, int, float, complex, str, bytes, list, tuple, dict, set,
frozenset, a few stdlib types); anything else is an opaque handle that allows attribute access, calls,
iteration, len, bool, str/repr and indexing. A test case is *not judgeable* when it needs (REASONS):

  stdout         to read what the candidate printed (redirect_stdout, sys.stdout = StringIO(), patching
                 sys.stdout / builtins.print, capsys)
  patching       to patch something the candidate runs with (mock.patch, patch.object, sys.stdin = ...,
                 builtins.input = ...): the patch lands in the test's process, not the candidate's
  globals        to read or write a module-level variable of the solution
  opaque_compare ==, !=, <, in, arithmetic, or an equality/ordering assert with an opaque operand (an
                 instance of a class the solution defines)
  opaque_type    isinstance / issubclass / type() against, or subclassing, a class the solution defines
  identity       `is` / assertIs between a value from the candidate and anything but None/True/False
  callback       to pass the candidate a function, lambda or object the test defines
  solution_exc   to catch an exception class the solution defines (assertRaises(SolutionError))
  in_place       to observe a mutable argument after the candidate's call (in-place mutation): data
                 crossing the channel is a copy

This is an estimate from the source (`ast`), not a measurement: values are "opaque" only when the test
builds them from a solution class (or a solution function annotated or written to return one);
anything else a solution returns is assumed to be plain data. What the solution defines comes from its
source when given, else from the names the tests use but never define (CamelCase -> class).
"""

from __future__ import annotations

import ast
import builtins
import sys
from dataclasses import dataclass, field

from coderl.rewards.sandbox.plan import is_case  # the sandbox's rule for what one humaneval test case is

REASONS = ("stdout", "patching", "globals", "opaque_compare", "opaque_type", "identity", "callback",
           "solution_exc", "in_place")
_BUILTINS = set(dir(builtins))
_SINGLETONS = (None, True, False, Ellipsis)
_COMPARE_ASSERTS = {"assertEqual", "assertEquals", "assertNotEqual", "assertNotEquals", "assertAlmostEqual",
                    "assertAlmostEquals", "assertNotAlmostEqual", "assertIn", "assertNotIn", "assertLess",
                    "assertLessEqual", "assertGreater", "assertGreaterEqual", "assertCountEqual",
                    "assertListEqual", "assertTupleEqual", "assertDictEqual", "assertSetEqual",
                    "assertSequenceEqual", "assertMultiLineEqual", "assertDictContainsSubset"}
_STDOUT_TARGETS = ("sys.stdout", "sys.stderr", "builtins.print")
_MUTABLE_BUILDERS = {"list", "dict", "set", "bytearray", "deque", "defaultdict", "OrderedDict", "Counter"}


@dataclass
class Solution:
    """What a solution module defines at top level (or what the tests suggest it defines)."""

    functions: set[str] = field(default_factory=set)
    classes: set[str] = field(default_factory=set)
    exceptions: set[str] = field(default_factory=set)
    variables: set[str] = field(default_factory=set)
    opaque_functions: set[str] = field(default_factory=set)  # return an instance of one of `classes`

    @classmethod
    def from_source(cls, src: str) -> Solution:
        sol = cls()
        tree = ast.parse(src)
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                sol.functions.add(node.name)
            elif isinstance(node, ast.ClassDef):
                sol.classes.add(node.name)
                if any(_name(b) in sol.exceptions or _name(b).endswith(("Error", "Exception")) for b in node.bases):
                    sol.exceptions.add(node.name)
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                sol.variables |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        sol.variables -= sol.functions | sol.classes
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _returns_instance(node, sol.classes):
                sol.opaque_functions.add(node.name)
        return sol

    @classmethod
    def from_free_names(cls, test_trees: list[ast.AST]) -> Solution:
        """Guess from tests alone: names they load but never bind come from the solution."""
        bound, loaded, called = set(), set(), set()
        for tree in test_trees:
            for n in ast.walk(tree):
                if isinstance(n, ast.Name):
                    (loaded if isinstance(n.ctx, ast.Load) else bound).add(n.id)
                elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    bound.add(n.name)
                elif isinstance(n, ast.arg):
                    bound.add(n.arg)
                elif isinstance(n, (ast.Import, ast.ImportFrom)):
                    bound |= {(a.asname or a.name).split(".")[0] for a in n.names}
                elif isinstance(n, ast.ExceptHandler) and n.name:
                    bound.add(n.name)
                if isinstance(n, ast.Call) and isinstance(n.func, ast.Name):
                    called.add(n.func.id)
        # a stdlib module name the tests use unimported is the solution's import: the judge imports it too
        free = loaded - bound - _BUILTINS - set(sys.stdlib_module_names) - {"self", "cls"}
        classes = {f for f in free if f[:1].isupper() and not f.isupper()}  # CamelCase, not CONSTANT
        sol = cls(functions=(free & called) - classes, classes=classes, variables=free - called - classes)
        sol.exceptions = {c for c in sol.classes if c.endswith(("Error", "Exception"))}
        return sol


def _name(node: ast.AST) -> str:
    """Dotted name of a Name/Attribute chain ('' for anything else)."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _name(node.value)
        return f"{base}.{node.attr}" if base else ""
    return ""


def _returns_instance(fn: ast.AST, classes: set[str]) -> bool:
    if fn.returns is not None and _name(fn.returns).split(".")[-1] in classes:
        return True
    return any(isinstance(n, ast.Return) and isinstance(n.value, ast.Call) and _name(n.value.func) in classes
               for n in ast.walk(fn))


class _Case:
    """The reasons one test case (a list of statements, in order) is not judgeable."""

    def __init__(self, sol: Solution, candidate_names: set[str], solution_modules: set[str]) -> None:
        self.sol = sol
        self.calls = sol.functions | sol.classes | candidate_names  # names that reach the candidate
        self.modules = solution_modules  # names the test imported the solution module as
        self.reasons: set[str] = set()
        self.opaque: set[str] = set()  # test variables holding a handle
        self.crossed: set[str] = set()  # test variables holding a value the candidate returned
        self.mutable: set[str] = set()  # test variables holding a mutable value the test built
        self.test_defs: set[str] = set()  # functions and classes the test defines
        self.passed_args: set[str] = set()  # mutable test variables handed to the candidate so far
        self.bound: set[str] = set()  # names the test binds (they shadow the solution's)

    # --- value classes ---
    def _resolve(self, func: ast.AST) -> str:
        """'NAME' for a call target that is the solution's NAME (directly or as module.NAME)."""
        name = _name(func)
        head, _, rest = name.partition(".")
        return rest if head in self.modules and rest else name

    def _is_candidate_call(self, node: ast.AST) -> bool:
        if not isinstance(node, ast.Call):
            return False
        target = self._resolve(node.func)
        if target in self.calls:
            return True
        return isinstance(node.func, ast.Attribute) and _name(node.func.value) in self.opaque  # handle.method()

    def is_opaque(self, node: ast.AST) -> bool:
        if isinstance(node, ast.Name):
            return node.id in self.opaque
        if isinstance(node, ast.Call):
            target = self._resolve(node.func)
            return target in self.sol.classes or target in self.sol.opaque_functions
        return False

    def _from_candidate(self, node: ast.AST) -> bool:
        return any(self._is_candidate_call(n) or (isinstance(n, ast.Name) and n.id in self.crossed | self.opaque)
                   for n in ast.walk(node))

    # --- statements ---
    def run(self, stmts: list[ast.stmt], scan: bool = True) -> set[str]:
        """Reasons after `stmts` (scan=False: they only bind names, e.g. earlier test cases)."""
        for stmt in stmts:
            self._bind(stmt)
            if scan:
                self._scan(stmt)
        return self.reasons

    def _bind(self, stmt: ast.stmt) -> None:
        for n in ast.walk(stmt):
            if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
                self.bound.add(n.id)
            elif isinstance(n, ast.arg):
                self.bound.add(n.arg)
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n is not stmt:
                self.test_defs.add(n.name)
            if isinstance(n, ast.ClassDef) and any(self._resolve(b) in self.sol.classes for b in n.bases):
                self.reasons.add("opaque_type")  # a test class deriving from a solution class
            if isinstance(n, ast.Assign) or (isinstance(n, ast.AnnAssign) and n.value is not None):
                targets = n.targets if isinstance(n, ast.Assign) else [n.target]
                names = {t.id for t in targets if isinstance(t, ast.Name)}
                if self.is_opaque(n.value):
                    self.opaque |= names
                elif self._from_candidate(n.value):
                    self.crossed |= names
                if isinstance(n.value, (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)) or (
                        isinstance(n.value, ast.Call) and _name(n.value.func).split(".")[-1] in _MUTABLE_BUILDERS):
                    self.mutable |= names
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            self.test_defs.add(stmt.name)

    def _scan(self, stmt: ast.stmt) -> None:
        asserting = isinstance(stmt, ast.Assert) or any(
            isinstance(n, ast.Call) and _name(n.func).startswith("self.assert") for n in ast.walk(stmt))
        if asserting and any(isinstance(n, ast.Name) and n.id in self.passed_args for n in ast.walk(stmt)):
            self.reasons.add("in_place")
        for n in ast.walk(stmt):
            self._scan_node(n)
        if isinstance(stmt, (ast.Expr, ast.Assign)) and self._is_candidate_call(stmt.value):
            self.passed_args |= {a.id for a in stmt.value.args if isinstance(a, ast.Name) and a.id in self.mutable}

    def _scan_node(self, n: ast.AST) -> None:
        """The reasons one node of a statement gives, by its kind."""
        if isinstance(n, ast.Name):
            self._scan_name(n)
        elif isinstance(n, (ast.Global, ast.Nonlocal)) and set(n.names) & self.sol.variables:
            self.reasons.add("globals")
        elif isinstance(n, ast.Attribute):
            self._scan_attribute(n)
        elif isinstance(n, ast.Compare):
            self._scan_compare(n)
        elif isinstance(n, ast.BinOp) and (self.is_opaque(n.left) or self.is_opaque(n.right)):
            self.reasons.add("opaque_compare")
        elif isinstance(n, ast.Call):
            self._scan_call(n)
        elif isinstance(n, ast.ExceptHandler) and n.type is not None:
            if self._names_one_of(n.type, self.sol.exceptions):
                self.reasons.add("solution_exc")
        elif isinstance(n, (ast.With, ast.AsyncWith)):
            if any(_name(getattr(item.context_expr, "func", item.context_expr)).split(".")[-1] in (
                    "redirect_stdout", "redirect_stderr") for item in n.items):
                self.reasons.add("stdout")
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for d in n.decorator_list:
                self._scan_patch(d.func if isinstance(d, ast.Call) else d, d)
            if {a.arg for a in n.args.args} & {"capsys", "capfd"}:
                self.reasons.add("stdout")

    def _scan_name(self, n: ast.Name) -> None:
        if n.id in self.sol.variables and n.id not in self.bound:
            self.reasons.add("globals")
        if n.id in ("capsys", "capfd"):
            self.reasons.add("stdout")

    def _scan_attribute(self, n: ast.Attribute) -> None:
        add, full = self.reasons.add, _name(n)
        in_solution = full.split(".")[0] in self.modules
        if in_solution and n.attr in self.sol.variables:
            add("globals")
        if not isinstance(n.ctx, ast.Store):
            return
        if in_solution:
            add("patching")
        if full in _STDOUT_TARGETS:
            add("stdout")
        elif full in ("sys.stdin", "builtins.input"):
            add("patching")

    def _scan_compare(self, n: ast.Compare) -> None:
        operands = [n.left, *n.comparators]
        if any(self.is_opaque(o) for o in operands):
            self.reasons.add("opaque_compare")
        for op, (a, b) in zip(n.ops, zip(operands, operands[1:], strict=False), strict=False):
            if isinstance(a, ast.Call) and _name(a.func) == "type" and self._resolve(b) in self.sol.classes:
                self.reasons.add("opaque_type")
            elif isinstance(op, (ast.Is, ast.IsNot)) and self._identity(a, b):
                self.reasons.add("identity")

    def _scan_patch(self, func: ast.AST, call: ast.AST) -> None:
        parts = _name(func).split(".")
        if not ("patch" in parts or (parts[0] == "monkeypatch" and len(parts) > 1)):
            return
        args = call.args if isinstance(call, ast.Call) else []
        if len(args) >= 2 and not isinstance(args[0], ast.Constant) and isinstance(args[1], ast.Constant):
            target = f"{_name(args[0])}.{args[1].value}"  # patch.object(sys, "stdout"), monkeypatch.setattr(...)
        else:
            target = str(args[0].value) if args and isinstance(args[0], ast.Constant) else ""
        self.reasons.add("stdout" if target in _STDOUT_TARGETS else "patching")

    def _scan_call(self, n: ast.Call) -> None:
        self._scan_patch(n.func, n)
        reason = self._call_reason(_name(n.func), n)
        if reason:
            self.reasons.add(reason)
        if self._is_candidate_call(n) and any(self._test_callable(a) for a in [*n.args, *(k.value for k in n.keywords)]):
            self.reasons.add("callback")

    def _call_reason(self, name: str, n: ast.Call) -> str | None:
        """The reason a call gives by what it is (an assert method, isinstance, pytest.raises), if any."""
        method = name[5:] if name.startswith("self.") else ""
        if method in _COMPARE_ASSERTS:
            return "opaque_compare" if any(self.is_opaque(a) for a in n.args[:2]) else None
        if method in ("assertIs", "assertIsNot"):
            return "identity" if len(n.args) >= 2 and self._identity(*n.args[:2]) else None
        if method in ("assertIsInstance", "assertNotIsInstance") or name in ("isinstance", "issubclass"):
            return "opaque_type" if len(n.args) >= 2 and self._names_one_of(n.args[1], self.sol.classes) else None
        if method in ("assertRaises", "assertRaisesRegex", "assertRaisesRegexp") or name.split(".")[-1] == "raises":
            return "solution_exc" if n.args and self._names_one_of(n.args[0], self.sol.exceptions) else None
        return None

    def _identity(self, a: ast.AST, b: ast.AST) -> bool:
        """`a is b` (or assertIs) tells the test something only the candidate's own objects could."""
        return not (_singleton(a) or _singleton(b)) and (self._from_candidate(a) or self._from_candidate(b))

    def _names_one_of(self, node: ast.AST, names: set[str]) -> bool:
        """node (a name or a tuple of names, as isinstance and except take them) names one of `names`."""
        return any(self._resolve(t) in names for t in _elts(node))

    def _test_callable(self, a: ast.AST) -> bool:
        """A function, lambda or object the test defines (a callback once handed to the candidate)."""
        return isinstance(a, ast.Lambda) or (isinstance(a, ast.Name) and a.id in self.test_defs) or (
            isinstance(a, ast.Call) and _name(a.func) in self.test_defs)


def _singleton(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and any(node.value is s for s in _SINGLETONS)


def _elts(node: ast.AST) -> list[ast.AST]:
    return list(node.elts) if isinstance(node, ast.Tuple) else [node]


def _solution_modules(trees: list[ast.AST]) -> set[str]:
    mods = {"solution"}
    for tree in trees:
        for n in ast.walk(tree):
            if isinstance(n, ast.Import):
                mods |= {a.asname or a.name for a in n.names if a.name == "solution"}
    return mods


# --- one entry point per label format -------------------------------------------------------------------

def unittest_cases(module: str, sol: Solution) -> list[tuple[str, set[str]]]:
    """[(Class.test_method, reasons)] for one unittest module (the sandbox's case rule: rewards/_plan.py)."""
    tree = ast.parse(module)
    mods = _solution_modules([tree])
    test_classes: list[ast.ClassDef] = []
    for cls in (s for s in tree.body if isinstance(s, ast.ClassDef)):
        bases = {_name(b).split(".")[-1] for b in cls.bases}
        if bases & ({"TestCase", "IsolatedAsyncioTestCase"} | {c.name for c in test_classes}):
            test_classes.append(cls)
    shared = [s for s in tree.body if s not in test_classes]  # module-level code runs for every case
    out = []
    for cls in test_classes:
        methods = [s for s in cls.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]
        fixtures = [m for m in methods if not m.name.startswith("test")]
        class_level = [s for s in cls.body if s not in methods]
        for m in (m for m in methods if m.name.startswith("test")):
            case = _Case(sol, set(), mods)
            # the class's bases and decorators, class-level code and fixtures belong to every one of its cases
            head = ast.ClassDef(cls.name, cls.bases, cls.keywords, [ast.Pass()], cls.decorator_list)
            case.run(shared + [head] + class_level)
            for f in fixtures + [m]:
                case._scan(ast.FunctionDef(f.name, f.args, [ast.Pass()], f.decorator_list, None))
                case.run(f.body)
            out.append((f"{cls.name}.{m.name}", case.reasons))
    return out


def humaneval_cases(test: str, sol: Solution) -> list[tuple[str, set[str]]]:
    """[(case k, reasons)] for one check program; `candidate` is the entry point. The statements before a
    case run before it (their effects count), earlier cases only bind names."""
    tree = ast.parse(test)
    check = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "check"][-1]
    shared = [n for n in tree.body if n is not check]
    out = []
    for k, stmt in enumerate(check.body):
        if is_case(stmt):
            case = _Case(sol, {check.args.args[0].arg}, {"solution"})
            case.run(shared)
            for prior in check.body[:k]:
                case.run([prior], scan=not is_case(prior))
            out.append((f"case {len(out) + 1}", case.run([stmt])))
    return out


def assert_cases(setup: str, asserts: list[str], sol: Solution) -> list[tuple[str, set[str]]]:
    """[(assert k, reasons)]: setup_code, then the asserts in order (earlier ones only bind names)."""
    parsed = [ast.parse(src).body for src in asserts]
    out = []
    for i, stmts in enumerate(parsed):
        case = _Case(sol, set(), {"solution"})
        case.run(ast.parse(setup or "").body)
        case.run([s for prior in parsed[:i] for s in prior], scan=False)
        out.append((f"assert {i + 1}", case.run(stmts)))
    return out


def summarize(cases: list[set[str]]) -> dict:
    """{"cases", "not_judgeable", "share", "by_reason": {reason: cases}} over a suite's test cases."""
    bad = [r for r in cases if r]
    return {"cases": len(cases), "not_judgeable": len(bad), "share": len(bad) / len(cases) if cases else 0.0,
            "by_reason": {k: sum(k in r for r in cases) for k in REASONS if any(k in r for r in cases)}}


# --- suites -------------------------------------------------------------------------------------------

def label_cases(label, reference: str | None = None) -> list[set[str]]:
    """Reasons per test case of a coderl.rewards.labels.Label; the solution from `reference` when it parses.

    stdio, checker and call cases are judged outside the sandbox from printed output / returned plain data, so
    nothing they need crosses the channel: judgeable by construction. pytest files are not analysed (no case)."""
    fmt, tests = label.format, list(label.tests)
    if fmt in ("stdio", "call", "checker"):
        return [set() for _ in tests]
    if fmt == "pytest":  # not analysed here: its fidelity family measures it against KodCode's own harness
        return []
    try:
        sol = Solution.from_source(reference) if reference else None
    except SyntaxError:
        sol = None
    if sol is None:
        sol = Solution.from_free_names([ast.parse(t) for t in tests] + [ast.parse(label.setup_code or "")])
    if label.entry_point:
        sol.functions.add(label.entry_point)
    if fmt == "unittest":
        return [r for t in tests for _, r in unittest_cases(t, sol)]
    if fmt == "assert":
        return [r for _, r in assert_cases(label.setup_code, tests, sol)]
    return [r for _, r in humaneval_cases(tests[0], sol)]


def humaneval_suites(rows: list[dict]) -> dict[str, list[set[str]]]:
    """The HumanEval check programs, and the same cases as CodeRM-style unittest modules and asserts."""
    from scripts.bench.fidelity.suites import labels
    out: dict[str, list[set[str]]] = {"HumanEval check programs": [], "HumanEval as CodeRM-style unittest": [],
                                      "HumanEval as MBPP-style asserts": []}
    for i, row in enumerate(rows):
        lb, reference = labels(row, i), row["prompt"] + row["canonical_solution"]
        for name, fmt in zip(out, ("humaneval", "unittest", "assert"), strict=True):
            out[name] += label_cases(lb[fmt], reference)
    return out


def fixture_cases(paths: list[str]) -> dict[str, list[set[str]]]:
    """Test modules and assert statements written as string literals in test files (solution guessed)."""
    out: dict[str, list[set[str]]] = {"unittest": [], "assert": []}
    for path in paths:
        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read())
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
                continue
            try:
                parsed = ast.parse(node.value)
            except (SyntaxError, ValueError):
                continue
            if "TestCase" in node.value and any(isinstance(s, ast.ClassDef) for s in parsed.body):
                out["unittest"] += [r for _, r in unittest_cases(node.value, Solution.from_free_names([parsed]))]
            elif parsed.body and all(isinstance(s, ast.Assert) for s in parsed.body):
                out["assert"] += [r for _, r in assert_cases("", [node.value], Solution.from_free_names([parsed]))]
    return out


def jsonl_cases(path: str) -> dict[str, list[set[str]]]:
    """Rows written by data/preprocess.py (reference solutions used when kept), grouped by label source."""
    import json

    from coderl.rewards.labels import parse_label
    out: dict[str, list[set[str]]] = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                label = parse_label(json.loads(line)["label"])
                key = f"{label.source or path} ({label.format})"
                out.setdefault(key, []).extend(label_cases(label, label.reference_solution))
    return out

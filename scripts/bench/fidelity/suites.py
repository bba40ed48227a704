"""One HumanEval task's tests in the three function formats, as the labels the sandbox runs.

* ``humaneval`` -- the label the preprocessor writes (data/schemas/humaneval.py's converter).
* ``unittest`` -- a CodeRM-UnitTest-style module: one TestCase, one test method per test case of
  check() (the statements before a case run first in its method), the entry point called by name,
  asserts written as self.assertEqual / assertTrue / assertAlmostEqual / ... as a test author would.
* ``assert`` -- MBPP style: the check program's other top-level code and check()'s non-assert
  statements as setup_code, then one test per case of check(), one line where the case is one assert.
"""

from __future__ import annotations

import ast
import copy

from coderl.data.schemas import RowContext, humaneval
from coderl.rewards.labels import Label
from coderl.rewards.sandbox.plan import is_case  # the sandbox's rule for what one humaneval test case is

FORMATS = ("humaneval", "unittest", "assert")


class _CallByName(ast.NodeTransformer):
    """`candidate` -> the entry point's name."""

    def __init__(self, param: str, entry_point: str) -> None:
        self.param, self.entry_point = param, entry_point

    def visit_Name(self, node: ast.Name) -> ast.Name:
        return ast.copy_location(ast.Name(self.entry_point, node.ctx), node) if node.id == self.param else node


def _self_call(method: str, *args: ast.expr, **kwargs: ast.expr) -> ast.Expr:
    call = ast.Call(ast.Attribute(ast.Name("self", ast.Load()), method, ast.Load()), list(args),
                    [ast.keyword(k, v) for k, v in kwargs.items() if v is not None])
    return ast.Expr(call)


_CMP_ASSERTS = {ast.Eq: "assertEqual", ast.NotEq: "assertNotEqual", ast.In: "assertIn", ast.NotIn: "assertNotIn",
                ast.Is: "assertIs", ast.IsNot: "assertIsNot", ast.Lt: "assertLess", ast.LtE: "assertLessEqual",
                ast.Gt: "assertGreater", ast.GtE: "assertGreaterEqual"}


class _UnittestAsserts(ast.NodeTransformer):
    """`assert <test>, msg` -> the self.assert* call a test author would write for <test>."""

    def visit_Assert(self, node: ast.Assert) -> ast.Expr:
        t, msg = node.test, node.msg
        if isinstance(t, ast.Compare) and len(t.ops) == 1:
            op, left, right = type(t.ops[0]), t.left, t.comparators[0]
            if (op in (ast.Lt, ast.LtE) and isinstance(left, ast.Call) and isinstance(left.func, ast.Name)
                    and left.func.id == "abs" and len(left.args) == 1 and isinstance(left.args[0], ast.BinOp)
                    and isinstance(left.args[0].op, ast.Sub)):  # abs(a - b) < eps
                out = _self_call("assertAlmostEqual", left.args[0].left, left.args[0].right, delta=right, msg=msg)
            elif op is ast.Is and isinstance(right, ast.Constant) and right.value is None:
                out = _self_call("assertIsNone", left, msg=msg)
            elif op is ast.Is and isinstance(right, ast.Constant) and isinstance(right.value, bool):
                out = _self_call("assertTrue" if right.value else "assertFalse", left, msg=msg)
            else:
                out = _self_call(_CMP_ASSERTS[op], left, right, msg=msg)
        elif isinstance(t, ast.UnaryOp) and isinstance(t.op, ast.Not):
            out = _self_call("assertFalse", t.operand, msg=msg)
        else:
            out = _self_call("assertTrue", t, msg=msg)
        return ast.copy_location(out, node)


def _split(test: str, entry_point: str) -> tuple[list[ast.stmt], list[tuple[list[ast.stmt], ast.stmt]]]:
    """(top-level statements other than check, [(statements before the case, the case)]), candidate renamed."""
    tree = ast.parse(test)
    check = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "check"][-1]
    rename = _CallByName(check.args.args[0].arg, entry_point)
    others = [n for n in tree.body if n is not check]
    cases, pending = [], []
    for stmt in check.body:
        stmt = rename.visit(copy.deepcopy(stmt))
        if is_case(stmt):
            cases.append((pending, stmt))
            pending = []
        else:
            pending.append(stmt)
    return others, cases


def unittest_module(test: str, entry_point: str) -> str:
    """A CodeRM-style unittest module with the same test cases as the check program `test`."""
    others, cases = _split(test, entry_point)
    methods = []
    for i, (before, case) in enumerate(cases, 1):
        # Every statement of check() that preceded this case, in order, so that each method stands alone.
        prior = [s for b, _ in cases[:i - 1] for s in b] + before
        body = [copy.deepcopy(s) for s in prior] + [_UnittestAsserts().visit(case)]
        fn = ast.FunctionDef(f"test_case_{i}", ast.arguments([], [ast.arg("self")], None, [], [], None, []),
                             body, [], None)
        methods.append(fn)
    cls = ast.ClassDef(f"Test{entry_point.title().replace('_', '')}", [ast.Attribute(
        ast.Name("unittest", ast.Load()), "TestCase", ast.Load())], [], methods, [])
    main = ast.parse('if __name__ == "__main__":\n    unittest.main()').body
    module = ast.Module([ast.Import([ast.alias("unittest")]), *others, cls, *main], [])
    return ast.unparse(ast.fix_missing_locations(module)) + "\n"


def assert_suite(test: str, entry_point: str) -> tuple[str, list[str]]:
    """(setup_code, one test per case of check()) in MBPP's assert format."""
    others, cases = _split(test, entry_point)
    setup = others + [s for before, _ in cases for s in before]
    return ast.unparse(ast.Module(setup, [])), [ast.unparse(case) for _, case in cases]


def labels(row: dict, index: int) -> dict[str, Label]:
    """{format: Label} for one HumanEval row; humaneval's is built by the preprocessor's own converter."""
    p = humaneval.convert(row, RowContext("HumanEval.jsonl.gz", index))
    base = {"entry_point": p.entry_point, "source": humaneval.SOURCE, "source_id": p.source_id}
    setup, asserts = assert_suite(row["test"], p.entry_point)
    return {
        "humaneval": Label(format=p.format, tests=tuple(p.tests), setup_code=p.setup_code, **base),
        "unittest": Label(format="unittest", tests=(unittest_module(row["test"], p.entry_point),), **base),
        "assert": Label(format="assert", tests=tuple(asserts), setup_code=setup, **base),
    }

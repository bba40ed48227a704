"""What several formats share: the static rule for an assert that checks nothing, and the shapes of test lists."""

import ast

MUST_PAIR = "must be an object with 'input' and 'output'"
PARSE_ERRORS = (SyntaxError, ValueError, MemoryError, RecursionError)  # what ast.parse / compile raise on a test


def names_nothing(nodes) -> bool:
    return not any(isinstance(n, ast.Name) for node in nodes for n in ast.walk(node))


def checks_something(node: ast.Assert) -> bool:
    """The assert's condition names something, so it may depend on the program: one without any name
    (`assert True`, `assert 1 == 1`, `assert not ''`) is built of literals and operators on them, holds or
    fails the same for every program, and verifies nothing. A name may be the program's (the entry point, a
    builtin it shadows), so every name counts."""
    return any(isinstance(n, ast.Name) for n in ast.walk(node.test))


def source_tests(tests) -> str | None:
    """tests is a list of non-empty source strings (unittest, assert, humaneval); else what is wrong."""
    for i, t in enumerate(tests):
        if not (isinstance(t, str) and t.strip() != ""):
            return f"label.tests[{i}] must be a non-empty string"
    return None


def pair_tests(tests, check) -> str | None:
    """tests is a list of {"input", "output"} objects, each passing check(where, test) (stdio, call)."""
    for i, t in enumerate(tests):
        where = f"label.tests[{i}]"
        if not isinstance(t, dict):
            return f"{where} {MUST_PAIR}"
        problem = check(where, t)
        if problem:
            return problem
    return None

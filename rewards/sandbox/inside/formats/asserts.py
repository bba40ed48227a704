"""`assert` (MBPP): a list of assert statements; `setup_code` runs first, then each statement in order, in one
namespace. One test case per statement, except one made only of asserts that check nothing."""

import ast

from .common import PARSE_ERRORS, checks_something, source_tests

NAME = "assert"
HOOKS = frozenset()
validate_tests = source_tests


def counts(test: str) -> bool:
    """An assert-format test is a case unless it is only asserts that check nothing (then it binds nothing
    either); one that does not parse stays a case (it fails as `syntax`)."""
    try:
        body = ast.parse(test).body
    except PARSE_ERRORS:
        return True
    return not body or not all(isinstance(s, ast.Assert) and not checks_something(s) for s in body)


def plan(label) -> dict:
    return {"plan": [t for t in label.tests if counts(t)]}


def runner(job, ns):
    spec = job.spec
    if spec.setup_code:
        exec(spec.code(spec.setup_code, "<setup>"), ns)
    return lambda: job.each(lambda i: exec(spec.code(spec.plan[i], "<test>"), ns))

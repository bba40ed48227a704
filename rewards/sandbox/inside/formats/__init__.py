"""The label formats, one module each, and their registry: REGISTRY is the one list of formats.

A format module holds everything about its format: what its tests look like (validate_tests), the test cases
a label declares and what the sandbox is told about them (plan), how the judge runs them (runner), how an
outcome the sandbox cannot decide is judged outside (verdict) and what --verify keeps of a label (keep). Every
format module is stdlib-only: it ships into the sandbox with the rest of inside/ (isolation.bootstrap), where
the judge calls its runner; everything else of it runs outside. Adding a format is one module here, one line
in _MODULES and its tests (docs/label_format.md, "Adding a format").

A format module defines
  NAME                          the label's "format" value
  validate_tests(tests)         the first problem of a non-empty list of tests, naming the field, or None
  plan(label)                   the spec's format-specific fields: "plan" (one entry per test case, in the
                                label's order), optionally "order" (run order), "tests", and what the runner reads
  runner(job, ns)               inside the judge: returns the callable that runs job.order's cases against the
                                program's names ns (reporting each through job.one / job.each / job.report;
                                job.spec.fields is the spec plan() made, job.spec.code() compiles a test once);
                                None: each case is the program's stdin, and the worker runs the program
                                once per case with no judge (the registry's stdin_cases; stdio)
and may define
  HOOKS                         names the tests' own code defines, which the program's must not replace
  NEEDS_ENTRY_POINT             True when the label must name its entry point
  verdict(record, test)         outside: (passed, detail) for a case the sandbox reported "ok" (it ran, and only
                                the expected value, never sent in, decides); formats without one never report "ok"
  output_room(tests)            output bytes a case may capture besides sandbox.max_output_bytes
  keep(tests, statuses, counts) --verify: what a reference solution's run keeps (statuses per case, counts:
                                cases per test): {"kept": tests, "kept_cases": n, "dropped": [each dropped
                                case or test, named], optionally "rewritten": whether a kept test was cut,
                                "counts": {verify stat: n}}; default (keep_passing): each test whose cases
                                all passed
Runners import the judge's verdicts lazily (`from .. import verdicts`): outside the sandbox, nothing imports it.
"""

from types import SimpleNamespace

from ..framing import Status
from . import asserts, call, checker, humaneval, pytests, stdio, unittests

_MODULES = (unittests, asserts, humaneval, stdio, call, pytests, checker)  # the documented order


def keep_passing(tests, statuses, counts) -> dict:
    """--verify's default: a test is kept when it declares cases and its reference passed them all."""
    kept, kept_cases, dropped, pos = [], 0, [], 0
    for k, (test, n) in enumerate(zip(tests, counts, strict=True)):
        mine = statuses[pos:pos + n]
        pos += n
        if n > 0 and all(s == Status.PASSED for s in mine):
            kept.append(test)
            kept_cases += n
        else:
            dropped.append(f"tests[{k}] ({', '.join(s for s in mine if s != Status.PASSED) or 'no case'})")
    return {"kept": kept, "kept_cases": kept_cases, "dropped": dropped}


def _register(mod) -> SimpleNamespace:
    for attr in ("NAME", "validate_tests", "plan", "runner"):
        if not hasattr(mod, attr):
            raise TypeError(f"label format module {mod.__name__} defines no {attr}")
    return SimpleNamespace(
        name=mod.NAME, module=mod, validate_tests=mod.validate_tests, plan=mod.plan, runner=mod.runner,
        stdin_cases=mod.runner is None,
        hooks=frozenset(getattr(mod, "HOOKS", ())), needs_entry_point=getattr(mod, "NEEDS_ENTRY_POINT", False),
        verdict=getattr(mod, "verdict", None), output_room=getattr(mod, "output_room", None),
        keep=getattr(mod, "keep", keep_passing))


REGISTRY = {f.name: f for f in map(_register, _MODULES)}
NAMES = tuple(REGISTRY)

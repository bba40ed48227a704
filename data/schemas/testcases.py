"""Test-case encodings several schemas share: rllm's `tests` (a list of test dicts or an APPS-style dict),
LiveCodeBench's (JSON lines of arguments), code-r1's programs, and the fences around gold solutions.

Not a schema (it is not in the dispatcher's list): the converters of deepcoder, livecodebench and verl call it.
"""

from __future__ import annotations

import base64
import io
import json
import pickle
import re
import zlib
from typing import Any

from .. import prompting
from . import CellError, Skip
from .apps_taco import io_tests

_FENCE = re.compile(r"^\s*```[\w+-]*[ \t]*\n(.*?)\n?```\s*$", re.DOTALL)


def unfence(code: str) -> str:
    """The code inside one markdown fence (PrimeIntellect's gold solutions are ```python ... ```), else as is."""
    m = _FENCE.match(code)
    return m.group(1) if m else code


def python_reference(solutions: Any, field: str) -> str | None:
    """The first solution (unfenced) that parses as Python 3, else the first one; None without any."""
    if solutions is None:
        return None
    if isinstance(solutions, str):
        solutions = [solutions]
    if not isinstance(solutions, (list, tuple)):
        raise CellError(field, f"expected a list of solution strings, got {type(solutions).__name__}")
    sols = [unfence(s) for s in solutions if isinstance(s, str) and s.strip()]
    return next((s for s in sols if prompting.top_level_defs(s) is not None), sols[0] if sols else None)


# lcb_runner runs a program after star imports of these modules, then plain imports of all but the last two,
# then sys.setrecursionlimit(50000) (testing_util.import_string): a LeetCode answer using `inf`, `bisect_left`,
# `Optional` or `reduce` unimported passes there, and so does a stdin program using `sys` unimported or recursing
# 3,000 deep. A label of its tests (functional or stdin) carries the same lines as its setup_code, which the call
# and stdio formats run before the program (docs/label_format.md).
_LCB_MODULES = ("string", "re", "datetime", "collections", "heapq", "bisect", "copy", "math", "random", "statistics",
                "itertools", "functools", "operator", "io", "sys", "json", "builtins", "typing")
LCB_PRELUDE = ("".join(f"from {m} import *\n" for m in _LCB_MODULES)
               + "".join(f"import {m}\n" for m in _LCB_MODULES[:-2]) + "sys.setrecursionlimit(50000)\n")


def lcb_call_tests(inputs: list, outputs: list, field: str) -> list[dict]:
    """LiveCodeBench's functional tests: each input is one JSON value per line (the positional arguments) and
    each output one JSON value, as lcb_runner's grade_call_based reads them."""
    tests = []
    for k, (i, o) in enumerate(zip(inputs, outputs, strict=True)):
        if not isinstance(i, str) or not isinstance(o, str):
            raise CellError(f"{field}[{k}]", "a functional test's input and output must be JSON text")
        try:
            args = [json.loads(line) for line in i.split("\n")]
        except json.JSONDecodeError as e:
            raise CellError(f"{field}[{k}].input", f"is not one JSON value per line: {e}") from None
        try:
            expected = json.loads(o)
        except json.JSONDecodeError as e:
            raise CellError(f"{field}[{k}].output", f"is not JSON: {e}") from None
        tests.append({"input": args, "output": expected})
    return tests


def from_spec(spec: Any, field: str, fn_name: str | None = None) -> tuple[str, list, str | None, str]:
    """(format, tests, fn_name, setup_code) from tests as rllm's DeepCoder data and the verl files built from it
    hold them; setup_code is LiveCodeBench's harness prelude for its tests (`testtype` functional or stdin), else "".

    - a dict {"inputs", "outputs"[, "fn_name"]} (APPS/TACO; Skywork-OR1): call-based tests whose inputs are text
      are in LiveCodeBench's encoding (one JSON argument per line), others are APPS's lists of arguments;
    - a list of {"input", "output"} dicts: stdin/stdout; LiveCodeBench's `"testtype": "functional"` ones (function
      name in their `metadata.func_name`, or `fn_name`), PrimeIntellect's `"type": "function_call"` ones (with
      `fn_name`; arguments as lists, outputs as APPS wraps them).
    """
    if isinstance(spec, dict) and "inputs" in spec and "outputs" in spec:
        name = spec.get("fn_name") or fn_name
        ins, outs = spec.get("inputs"), spec.get("outputs")
        if name and isinstance(ins, list) and isinstance(outs, list) and ins and len(ins) == len(outs) \
                and all(isinstance(i, str) for i in ins):
            return "call", lcb_call_tests(ins, outs, field), _identifier(name, f"{field}.fn_name"), LCB_PRELUDE
        return (*io_tests({**spec, "fn_name": name} if name else spec, field), "")
    if isinstance(spec, list):
        if not spec:
            raise Skip("no_tests")
        for k, t in enumerate(spec):
            if not isinstance(t, dict) or "input" not in t or "output" not in t:
                raise CellError(f"{field}[{k}]", "expected an object with 'input' and 'output'")
        first = spec[0]
        meta = first.get("metadata") if isinstance(first.get("metadata"), dict) else {}
        name = first.get("fn_name") or meta.get("func_name") or fn_name
        ins, outs = [t["input"] for t in spec], [t["output"] for t in spec]
        if first.get("testtype") == "functional":
            if not name:
                raise CellError(field, "functional tests name no function (metadata.func_name)")
            return "call", lcb_call_tests(ins, outs, field), _identifier(name, f"{field}.fn_name"), LCB_PRELUDE
        if first.get("type") == "function_call" or (name and first.get("testtype") != "stdin"):
            return (*io_tests({"inputs": ins, "outputs": outs, "fn_name": name}, field), "")
        return (*io_tests({"inputs": ins, "outputs": outs}, field), LCB_PRELUDE if first.get("testtype") == "stdin"
                else "")
    raise CellError(field, f"expected a list of test objects or an object with 'inputs' and 'outputs', got "
                           f"{type(spec).__name__}")


def _identifier(name: Any, field: str) -> str:
    if not isinstance(name, str) or not name.strip().isidentifier():
        raise CellError(field, f"is not a Python identifier: {name!r}")
    return name.strip()


MAX_PRIVATE_BYTES = 1 << 30  # LiveCodeBench's largest private tests are far below; a zlib bomb stops here


class _NoGlobals(pickle.Unpickler):
    """Unpickles plain data only: a pickle that names any class or function (code it would run) is refused."""

    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"refusing to load {module}.{name}: only plain data is expected")


def lcb_private_tests(cell: str, field: str) -> list:
    """LiveCodeBench's private tests: JSON text, or base64 of zlib of a pickle of that JSON text."""
    try:
        value = json.loads(cell)
    except json.JSONDecodeError:
        try:
            inflate = zlib.decompressobj()
            raw = inflate.decompress(base64.b64decode(cell.encode("ascii"), validate=False), MAX_PRIVATE_BYTES)
            if inflate.unconsumed_tail:
                raise CellError(field, f"decompresses to more than {MAX_PRIVATE_BYTES >> 20} MiB")
            value = _NoGlobals(io.BytesIO(raw)).load()
        except (ValueError, zlib.error, pickle.UnpicklingError, EOFError, UnicodeEncodeError) as e:
            raise CellError(field, f"is neither JSON nor base64(zlib(pickle(JSON))): {e}") from None
        if isinstance(value, (str, bytes)):
            try:
                value = json.loads(value)
            except json.JSONDecodeError as e:
                raise CellError(field, f"decodes to text that is not JSON: {e}") from None
    if not isinstance(value, list):
        raise CellError(field, f"expected a list of tests, got {type(value).__name__}")
    return value

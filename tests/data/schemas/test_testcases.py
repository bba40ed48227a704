"""The shared test-case encodings: each shape rllm, LiveCodeBench and PrimeIntellect write, and the bad ones."""

from __future__ import annotations

import base64
import json
import pickle
import zlib

import pytest

from coderl.data.schemas import CellError, Skip
from coderl.data.schemas.testcases import LCB_PRELUDE, from_spec, lcb_private_tests, python_reference, unfence


def test_unfence_and_reference_pick():
    assert unfence("```python\nprint(1)\n```") == "print(1)"
    assert unfence("```\nx = 1\n```\n") == "x = 1"
    assert unfence("print(1)\n") == "print(1)\n"  # no fence: as is
    # the first that parses as Python 3 (a Python 2 print statement does not)
    assert python_reference(["```python\nprint 1\n```", "```python\nprint(2)\n```"], "solutions") == "print(2)"
    assert python_reference(None, "solutions") is None and python_reference([], "solutions") is None
    with pytest.raises(CellError, match="expected a list of solution strings"):
        python_reference(3, "solutions")


def test_the_shapes_of_tests():
    # rllm's list of stdin/stdout dicts (codeforces, PrimeIntellect's stdin_stdout)
    assert from_spec([{"input": "1\n", "output": "2\n"}], "t") == ("stdio", [{"input": "1\n", "output": "2\n"}], None,
                                                                 "")
    # PrimeIntellect's function_call: APPS-wrapped outputs unwrapped when every one is wrapped
    fc = [{"type": "function_call", "fn_name": "f", "input": [[3, 2, 3]], "output": [3]},
          {"type": "function_call", "fn_name": "f", "input": [[1]], "output": [1]}]
    assert from_spec(fc, "t") == ("call", [{"input": [[3, 2, 3]], "output": 3}, {"input": [[1]], "output": 1}], "f", "")
    # LiveCodeBench functional: the name in each test's metadata or given by the row
    lcb = [{"input": '"ab"\n[1, 2]', "output": "true", "testtype": "functional"}]
    assert from_spec(lcb, "t", "g") == ("call", [{"input": ["ab", [1, 2]], "output": True}], "g", LCB_PRELUDE)
    assert from_spec([{**lcb[0], "metadata": {"func_name": "h"}}], "t")[2] == "h"
    # a dict: APPS's argument lists, or LiveCodeBench's text (Skywork-OR1)
    assert from_spec({"inputs": [[1, 2]], "outputs": [[3]], "fn_name": "add"}, "t") == \
        ("call", [{"input": [1, 2], "output": 3}], "add", "")
    assert from_spec({"inputs": ["1\n2"], "outputs": ["3"], "fn_name": "add"}, "t") == \
        ("call", [{"input": [1, 2], "output": 3}], "add", LCB_PRELUDE)  # with LiveCodeBench's harness imports
    assert from_spec({"inputs": ["1 2\n"], "outputs": ["3\n"]}, "t")[0] == "stdio"


def test_bad_tests_name_their_field():
    with pytest.raises(Skip):
        from_spec([], "tests")
    with pytest.raises(CellError, match="expected an object with 'input' and 'output'") as e:
        from_spec([{"input": "1"}], "tests")
    assert e.value.field == "tests[0]"
    with pytest.raises(CellError, match="not one JSON value per line") as e:
        from_spec({"inputs": ["[1,"], "outputs": ["1"], "fn_name": "f"}, "gt")
    assert e.value.field == "gt[0].input"
    with pytest.raises(CellError, match="is not a Python identifier"):
        from_spec([{"input": "1", "output": "1", "testtype": "functional", "metadata": {"func_name": "a b"}}], "t")
    with pytest.raises(CellError, match="expected a list of test objects"):
        from_spec("1 2", "t")


def test_private_tests_decoded_and_code_refused():
    tests = [{"input": "1", "output": "1", "testtype": "stdin"}]
    assert lcb_private_tests(json.dumps(tests), "p") == tests
    packed = base64.b64encode(zlib.compress(pickle.dumps(json.dumps(tests)))).decode()
    assert lcb_private_tests(packed, "p") == tests
    with pytest.raises(CellError, match="refusing to load os.system"):
        lcb_private_tests(base64.b64encode(zlib.compress(b"cos\nsystem\n(S'true'\ntR.")).decode(), "p")
    bomb = zlib.compress(b"\0" * (3 << 20))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("coderl.data.schemas.testcases.MAX_PRIVATE_BYTES", 1 << 20)
        with pytest.raises(CellError, match="decompresses to more than 1 MiB"):
            lcb_private_tests(base64.b64encode(bomb).decode(), "p")
    with pytest.raises(CellError, match="neither JSON nor"):
        lcb_private_tests("not base64 at all!", "p")

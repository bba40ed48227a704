"""The shared cell readers of the published-layout schemas."""

from __future__ import annotations

import pytest

from coderl.data.schemas import CellError
from coderl.data.schemas.cells import fenced_code, literal, maybe_literal


def test_literal_reads_json_and_python_spellings():
    assert literal('{"a": [1, null, true]}', "f") == {"a": [1, None, True]}
    assert literal("{'a': [1, None, True]}", "f") == {"a": [1, None, True]}
    assert literal([1, 2], "f") == [1, 2]  # already nested (a struct or list column)
    with pytest.raises(CellError) as e:
        literal("{'a': ", "verification_info")
    assert e.value.field == "verification_info"


def test_maybe_literal_keeps_plain_text():
    assert maybe_literal("[3]") == [3] and maybe_literal("'x'") == "x"
    assert maybe_literal("hello world") == "hello world" and maybe_literal(7) == 7


def test_fenced_code():
    assert fenced_code("Here:\n```python\nprint(1)\n```\nDone.") == "print(1)\n"
    assert fenced_code("print(2)\n").strip() == "print(2)"  # a bare program is its own code
    assert fenced_code("") is None and fenced_code(None) is None

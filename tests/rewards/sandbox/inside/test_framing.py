"""rewards/sandbox/inside/framing.py: length-prefixed JSON frames, over real pipes, without a sandbox."""

from __future__ import annotations

import ast
import json
import os
import threading

import pytest

from coderl.rewards.sandbox.inside import framing
from coderl.rewards.sandbox.results import STATUSES
from tests.support import REPO_ROOT

VALUES = [None, True, 0, -1, 2**80, 1.5, -0.0, "", "héllo \u2603 \U0001f600", "\x00", [], {}, [1, [2, [3]]],
          {"a": [1, {"b": None}], "": "empty key"}, ["x" * 100_000]]


@pytest.mark.parametrize("value", VALUES, ids=range(len(VALUES)))
def test_pack_then_recv_round_trips(value):
    r, w = os.pipe()
    try:
        writer = threading.Thread(target=framing.send, args=(w, value))  # a frame over a pipe buffer blocks
        writer.start()
        assert framing.recv(r, 1 << 20) == value
        writer.join(10)
    finally:
        os.close(r)
        os.close(w)
    frame = framing.pack(value)
    (n,) = framing.HEADER.unpack_from(frame)
    assert n == len(frame) - framing.HEADER.size
    assert frame[framing.HEADER.size:] == json.dumps(value, separators=(",", ":")).encode()  # one encoding


def test_reader_reassembles_frames_split_and_joined_anyhow():
    frames = b"".join(framing.pack(v) for v in VALUES)
    for step in (1, 3, 7, 4096, len(frames)):
        reader, got = framing.Reader(1 << 20), []
        for i in range(0, len(frames), step):
            got += reader.feed(frames[i:i + step])
        assert got == VALUES and not reader.buf, step


def test_size_limits_and_malformed_frames_raise_frame_error():
    big = framing.pack("x" * 1000)
    with pytest.raises(framing.FrameError, match="exceeds the limit of 100"):
        framing.Reader(100).feed(big[:framing.HEADER.size])  # refused on the header, before the body arrives
    r, w = os.pipe()
    try:
        os.write(w, big)
        with pytest.raises(framing.FrameError, match="exceeds the limit"):
            framing.recv(r, 100)
    finally:
        os.close(r)
        os.close(w)
    for body in (b"{", b"\xff\xfe", b"[1] [2]", b"[" * 100_000 + b"]" * 100_000):
        with pytest.raises(framing.FrameError, match="malformed frame"):
            framing.Reader(1 << 20).feed(framing.HEADER.pack(len(body)) + body)
    assert framing.loads(b' {"a" : [1, 2] } ') == {"a": [1, 2]}  # JSON that dumps() never writes still reads


def test_end_of_file_is_none_whole_or_mid_frame():
    for data in (b"", framing.pack([1, 2])[:5], framing.pack([1, 2])[:-1]):
        r, w = os.pipe()
        os.write(w, data)
        os.close(w)
        try:
            assert framing.recv(r, 1 << 20) is None
            assert framing.Reader(1 << 20).recv(r) is None
        finally:
            os.close(r)


def test_reader_recv_keeps_the_frames_a_read_brought_together():
    r, w = os.pipe()
    try:
        os.write(w, framing.pack(1) + framing.pack({"two": 2}) + framing.pack([3]))
        os.close(w)
        reader = framing.Reader(1 << 10)
        assert [reader.recv(r) for _ in range(4)] == [1, {"two": 2}, [3], None]
    finally:
        os.close(r)


def test_every_nan_a_frame_holds_is_a_float_of_its_own():
    # json's NaN constant is one object for every frame: containers compare items by identity first, so two
    # values of the program holding NaNs compared equal where plain Python's distinct NaNs do not (red team r28)
    for data in (b"[NaN,NaN]", b" [NaN,NaN]"):  # the C scanner's way, and json.loads's
        a, b = framing.loads(data)
        assert a != a and a is not b and [a] != [b]
    assert framing.loads(b"[Infinity,-Infinity]") == [float("inf"), float("-inf")]


def test_the_ledger_can_mark_every_status():
    # a test's status is its index in LEDGER_STATUSES plus one: every status a result can hold needs a code
    assert set(STATUSES) <= set(framing.LEDGER_STATUSES) and len(framing.LEDGER_STATUSES) < 255


def test_a_status_is_its_string_on_the_wire_and_in_text():
    assert [s.value for s in STATUSES] == ["passed", "failed", "error", "timeout", "memory", "killed", "syntax",
                                           "unsupported"]
    for s in framing.Status:
        assert s == s.value and hash(s) == hash(s.value) and f"{s}" == str(s) == s.value
        assert framing.pack({s: [s]}) == framing.pack({s.value: [s.value]})
        assert json.dumps(s) == json.dumps(s.value)
    assert framing.LEDGER_STATUSES[-1] == framing.OK and framing.OK not in STATUSES


def _bare_statuses(path, strict):
    """(line, value) of each str literal spelling a status in `path`. strict: any one but a docstring or a dict
    key (inside/, where a status is the only such word); else only an operand of a comparison whose other side
    reads a `.status` / `["status"]` (the server and the data side, where "syntax" or "memory" name other things)."""
    values = {s.value for s in framing.Status}
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = {id(n.body[0].value) for n in ast.walk(tree) if isinstance(
        n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and ast.get_docstring(n) is not None}
    skip |= {id(k) for n in ast.walk(tree) if isinstance(n, ast.Dict) for k in n.keys if k is not None}
    for n in ast.walk(tree):  # pytest's own report outcome (formats/pytests.py): its vocabulary, not a status
        if isinstance(n, ast.Assign) and isinstance(n.value, ast.Tuple):
            skip |= {id(v) for t in n.targets if isinstance(t, ast.Tuple) and len(t.elts) == len(n.value.elts)
                     for e, v in zip(t.elts, n.value.elts, strict=True) if isinstance(e, ast.Name) and e.id == "outcome"}
    if path.name == "framing.py":  # the enum's own definition
        skip |= {id(n.value) for c in ast.walk(tree) if isinstance(c, ast.ClassDef) and c.name == "Status"
                 for n in c.body if isinstance(n, ast.Assign)}
    if strict:
        candidates = [n for n in ast.walk(tree) if isinstance(n, ast.Constant)]
    else:
        candidates = []
        for cmp in (n for n in ast.walk(tree) if isinstance(n, ast.Compare)):
            sides = [cmp.left, *cmp.comparators]
            if any(isinstance(x, ast.Attribute) and x.attr == "status" or isinstance(x, ast.Subscript) and isinstance(
                    x.slice, ast.Constant) and x.slice.value == "status" for x in sides):
                candidates += [c for x in sides for c in ([x] if isinstance(x, ast.Constant) else getattr(x, "elts", []))]
    return [(n.lineno, n.value) for n in candidates if isinstance(n, ast.Constant) and n.value in values
            and id(n) not in skip]


def test_every_status_is_spelled_through_the_enum():
    # one closed type from the worker to the metrics: a bare "killed" would hide a case from readers and checkers
    inside = REPO_ROOT / "rewards" / "sandbox" / "inside"
    found = {str(p.relative_to(REPO_ROOT)): bad for p in sorted(inside.rglob("*.py")) if (bad := _bare_statuses(p, True))}
    for top in ("rewards", "data"):
        found |= {str(p.relative_to(REPO_ROOT)): bad for p in sorted((REPO_ROOT / top).rglob("*.py"))
                  if inside not in p.parents and (bad := _bare_statuses(p, False))}
    assert found == {}, f"spell these through framing.Status: {found}"
    # and the scan sees one when there is one
    assert _bare_statuses(_Source('def f(r):\n    return "killed", 1\n'), True) == [(2, "killed")]
    assert _bare_statuses(_Source('ok = o.status in ("passed", x)\n'), False) == [(1, "passed")]
    assert _bare_statuses(_Source('d = {"error": 1}\nc = {"memory"} == m\n'), False) == []
    assert _bare_statuses(_Source('outcome, longrepr = "failed", None\nstatus, d = "failed", None\n'), True) == [
        (2, "failed")]


class _Source:
    """A source text where _bare_statuses wants a path."""

    name = "probe.py"

    def __init__(self, text):
        self.text = text

    def read_text(self, encoding):
        return self.text

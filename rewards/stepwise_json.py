"""json.loads for large request bodies, in steps that each hold the GIL for a bounded time.

json.loads is one C call: on a 64 MB body it holds the GIL for ~130 ms on a CI core, and meanwhile the
reward server's event loop (and /health) cannot run, even when the parse is on another thread. Here the
stdlib decoder still does all the decoding, one value at a time, and a string longer than STEP_CHARS in
slices cut between escape sequences; between steps other threads get the GIL. The result equals
json.loads(raw); invalid input raises json.JSONDecodeError (or UnicodeDecodeError, RecursionError).
"""

from __future__ import annotations

import codecs
import json
import re
from typing import Any

STEP_CHARS = 1 << 20  # ≈ 2-5 ms of decoding on a CI core
_DECODER = json.JSONDecoder()
_WS_RE = re.compile(r"[ \t\n\r]*")
# Complete string units only: plain characters and whole escape sequences. A match ends at a unit boundary.
_UNITS_RE = re.compile(r'[^"\\]*(?:\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})[^"\\]*)*')
_HIGH_SURROGATE_ESCAPE_RE = re.compile(r"\\u[dD][89abAB][0-9a-fA-F]{2}")


def loads(raw: bytes | str) -> Any:
    """json.loads(raw), never spending more than about STEP_CHARS of work in one C call."""
    text = raw if isinstance(raw, str) else _decode(raw)
    if len(text) <= STEP_CHARS:
        return json.loads(text)
    if isinstance(raw, str) and text.startswith("\ufeff"):
        return json.loads(text)  # the same error json.loads gives
    value, end = _value(text, _skip_ws(text, 0))
    end = _skip_ws(text, end)
    if end != len(text):
        raise json.JSONDecodeError("Extra data", text, end)
    return value


def _decode(raw: bytes) -> str:
    """raw as text, the way json.loads decodes bytes (encoding detected, surrogates passed), in slices."""
    decoder = codecs.getincrementaldecoder(json.detect_encoding(raw))("surrogatepass")
    parts = [decoder.decode(raw[i:i + STEP_CHARS]) for i in range(0, len(raw), STEP_CHARS)]
    parts.append(decoder.decode(b"", final=True))
    return "".join(parts)


def _skip_ws(text: str, i: int) -> int:
    while True:
        end = min(i + STEP_CHARS, len(text))
        j = _WS_RE.match(text, i, end).end()
        if j < end or end == len(text):
            return j
        i = j


def _expect(text: str, i: int, char: str, what: str) -> int:
    if not text.startswith(char, i):
        raise json.JSONDecodeError(f"Expecting {what}", text, i)
    return _skip_ws(text, i + 1)


def _value(text: str, i: int) -> tuple[Any, int]:
    c = text[i:i + 1]
    if c == "{":
        return _object(text, i)
    if c == "[":
        return _array(text, i)
    if c == '"':
        return _string(text, i)
    return _DECODER.raw_decode(text, i)  # a number, true/false/null (or an error at i)


def _object(text: str, i: int) -> tuple[dict, int]:
    out: dict = {}
    i = _skip_ws(text, i + 1)
    if text.startswith("}", i):
        return out, i + 1
    while True:
        if not text.startswith('"', i):
            raise json.JSONDecodeError("Expecting property name enclosed in double quotes", text, i)
        key, i = _string(text, i)
        i = _expect(text, _skip_ws(text, i), ":", "':' delimiter")
        out[key], i = _value(text, i)
        i = _skip_ws(text, i)
        if text.startswith("}", i):
            return out, i + 1
        i = _expect(text, i, ",", "',' delimiter")


def _array(text: str, i: int) -> tuple[list, int]:
    out: list = []
    i = _skip_ws(text, i + 1)
    if text.startswith("]", i):
        return out, i + 1
    while True:
        value, i = _value(text, i)
        out.append(value)
        i = _skip_ws(text, i)
        if text.startswith("]", i):
            return out, i + 1
        i = _expect(text, i, ",", "',' delimiter")


def _piece(text: str, start: int, end: int) -> str:
    """Decode the string content text[start:end] (whole units), with json's errors at absolute positions."""
    try:
        return json.decoder.scanstring(text[start:end] + '"', 0, True)[0]
    except json.JSONDecodeError as e:
        raise json.JSONDecodeError(e.msg, text, start + e.pos) from None


def _string(text: str, i: int) -> tuple[str, int]:
    """The string whose opening quote is at i, decoded in slices of at most ~STEP_CHARS."""
    n = len(text)
    q = text.find('"', i + 1, i + 1 + STEP_CHARS)
    if q >= 0 and text[q - 1] != "\\":  # the common case: short, and its first quote is its end
        return json.decoder.scanstring(text, i + 1, True)
    parts = []
    pos = i + 1
    while True:
        end = min(pos + STEP_CHARS, n)
        e = _UNITS_RE.match(text, pos, end).end()
        if e < n and text[e] == '"':
            parts.append(_piece(text, pos, e))
            return "".join(parts), e + 1
        if e == n:
            raise json.JSONDecodeError("Unterminated string starting at", text, i)
        if end == n or e < end - 12:  # stopped at a backslash that starts no valid escape
            _piece(text, e, min(e + 12, n))
            raise json.JSONDecodeError("Invalid \\escape", text, e)
        # The slice ends within 12 characters of its limit, at a unit boundary. It must not end between
        # the two escapes of a surrogate pair: together they decode to one character.
        if _HIGH_SURROGATE_ESCAPE_RE.fullmatch(text, e - 6, e):
            before = text[pos:e - 5]
            if (len(before) - len(before.rstrip("\\"))) % 2 == 1:  # that backslash starts an escape
                e -= 6
        parts.append(_piece(text, pos, e))
        pos = e

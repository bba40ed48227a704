"""The regex implementation rewards/extract.py had before its scanners: the reference they must agree with.

These regexes backtrack (quadratic or worse on unclosed fences, many <answer> tags or long whitespace
runs), so they are only applied to small inputs: by tests/rewards/test_extract.py's property tests and, at
sizes where they still finish, as the baseline of scripts/bench/extract.py.
"""

from __future__ import annotations

import re

from coderl.rewards.extract import _PY_LANGS, Extracted
from coderl.rewards.query import _END_TOKENS, _PIPE_TOKEN_RE
from coderl.rewards.syntax import parses

EDGE_TOKEN_RE = re.compile(r"^(?:\s|<s>|</s>|<pad>|<unk>|<eos>|<bos>|<end_of_turn>|\[PAD\])+|"
                           r"(?:\s|<s>|</s>|<pad>|<unk>|<eos>|<bos>|<end_of_turn>|\[PAD\])+$")
LEAD_PAD_RE = re.compile(r"^(?:\s|<\|[A-Za-z0-9_.:\-]{1,48}\|>|<｜[^｜<>\n]{1,48}｜>|<s>|</s>|<pad>|<unk>|<bos>|\[PAD\])+")
WS_RE = re.compile(r"\s+")
FENCE_RE = re.compile(r"(?ms)^[ \t]*(`{3,}|~{3,})[ \t]*([\w+#.\-]*)[^\n]*\n(.*?)^[ \t]*\1[ \t]*$")
FENCE_LOOSE_RE = re.compile(r"(`{3,})[ \t]*([\w+#.\-]*)[^\n]*\n(.*?)\1", re.S)
ANSWER_RE = re.compile(r"<answer>(.*?)</answer>", re.S)
THINK_ANSWER_RE = re.compile(r"\A\s*<think>(.*?)</think>\s*<answer>(.*?)</answer>\s*\Z", re.S)


def normalize(text: str) -> str:
    return WS_RE.sub("", text)


def strip_leading_pads(text: str) -> str:
    m = LEAD_PAD_RE.match(text)
    return text[m.end():] if m else text


def clean_response(text: str, special_tokens: tuple[str, ...] = ()) -> str:
    cut = len(text)
    for tok in _END_TOKENS:
        i = text.find(tok)
        if 0 <= i < cut:
            cut = i
    text = text[:cut]
    for tok in special_tokens:
        if tok:
            text = text.replace(tok, "")
    return EDGE_TOKEN_RE.sub("", _PIPE_TOKEN_RE.sub("", text))


def fenced_blocks(text: str) -> list[tuple[str, str]]:
    blocks = [(m.group(2).lower(), m.group(3)) for m in FENCE_RE.finditer(text)]
    return blocks or [(m.group(2).lower(), m.group(3)) for m in FENCE_LOOSE_RE.finditer(text)]


def _last_python_or_last(blocks: list[tuple[str, str]]) -> tuple[str, str] | None:
    for lang, body in reversed(blocks):
        if lang in _PY_LANGS:
            return "python_block", body
    return ("block", blocks[-1][1]) if blocks else None


def extract_code(response: str) -> Extracted:
    answers = ANSWER_RE.findall(response)
    if answers:
        inner = answers[-1]
        found = _last_python_or_last(fenced_blocks(inner))
        if found is not None:
            return Extracted(found[1], "answer_block")
        if inner.strip():
            return Extracted(inner.strip("\n"), "answer")
    found = _last_python_or_last(fenced_blocks(response))
    if found is not None:
        return Extracted(found[1], found[0])
    if parses(response):
        return Extracted(response.strip("\n"), "raw")
    return Extracted(None, "none")


def format_ok(response: str, answer_format: str, extracted: Extracted) -> bool:
    if answer_format == "think_answer":
        m = THINK_ANSWER_RE.match(response)
        if not m or "<think>" in m.group(1) or "<answer>" in m.group(2):
            return False
        return extracted.source in ("answer", "answer_block")
    if answer_format == "code_block":
        return bool(fenced_blocks(response))
    return extracted.code is not None

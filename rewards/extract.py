"""Turn a decoded OpenRLHF query into (prompt, response) and a response into runnable code.

Everything here is text-only: no tokenizer is needed. OpenRLHF decodes with
``skip_special_tokens=False``, so a query is ``left pads + templated prompt + response + EOS + right
pads``; the chat templates we know are recognised by their role markers (see TEMPLATES).

A response is model-generated and may be anything up to server.max_query_chars (2 MB), so every scan
here takes time linear in its input whatever the input: str.find / strip / replace loops and regexes
that never retry from many start positions. The results equal those of the plain regexes these
scanners replaced (tests/rewards/extract_v1.py keeps them; tests/rewards/test_extract.py compares the two).
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right, insort
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal, get_args

from coderl.rewards.syntax import parses

# Tokens that end a response. Cutting at the first one drops EOS + right pads in one go; they are
# special tokens, so a model cannot produce them as plain text through the tokenizer.
_END_TOKENS = ("<|im_end|>", "<|endoftext|>", "<|eot_id|>", "<|end_of_text|>", "<|end|>",
               "<｜end▁of▁sentence｜>", "<|finetune_right_pad_id|>")
# `<|...|>` / `<｜...｜>` style special tokens (Qwen, Llama-3, Phi, DeepSeek); removed anywhere in a response.
# Both alternatives are bounded ({1,48}), so the substitution is linear.
_PIPE_TOKEN = r"<\|[A-Za-z0-9_.:\-]{1,48}\|>|<｜[^｜<>\n]{1,48}｜>"
_PIPE_TOKEN_RE = re.compile(_PIPE_TOKEN)
# Left pads / BOS. `\s+` rather than `\s` inside the loop: one tight scan per whitespace run.
_LEAD_PADS = r"\s+|" + _PIPE_TOKEN + r"|<s>|</s>|<pad>|<unk>|<bos>|\[PAD\]"
_LEAD_PAD_RE = re.compile(f"(?:{_LEAD_PADS})+")
# SentencePiece-style specials look like ordinary markup, so they are only stripped at the edges.
# No token is a prefix, suffix or substring of another, so a run of them splits into tokens one way only.
_EDGE_TOKENS = ("<end_of_turn>", "</s>", "<s>", "<pad>", "<unk>", "<eos>", "<bos>", "[PAD]")
_EDGE_CHARS = "".join(sorted(set("".join(_EDGE_TOKENS))))
_EDGE_SPAN_RE = re.compile("[" + re.escape(_EDGE_CHARS) + r"\s]*")  # where an edge run can possibly reach
_EDGE_MARKS = "".join(chr(1 + i) for i in range(len(_EDGE_TOKENS)))  # \x01.. never occur in such a span
_EDGE_MARKED_RE = re.compile("[" + _EDGE_MARKS + r"\s]*")
_WS_RUN_RE = re.compile(r"\s*")
_NONWS_RE = re.compile(r"\S+")
_ASCII_WS = bytes(c for c in range(128) if chr(c).isspace())


@dataclass(frozen=True)
class Template:
    """Role markers of one chat template family, as they appear in decoded text."""

    name: str
    user_start: str
    user_end: str
    assistant_start: str
    system_start: str | None = None
    system_end: str | None = None


# A template without system markers (deepseek, gemma, mistral) puts a system prompt, if any, as bare text
# before the first user turn (or inside it); that text is only trusted once it equals the matched row's.
TEMPLATES = (
    Template("chatml", "<|im_start|>user\n", "<|im_end|>", "<|im_start|>assistant\n",
             "<|im_start|>system\n", "<|im_end|>"),
    Template("llama3", "<|start_header_id|>user<|end_header_id|>\n\n", "<|eot_id|>",
             "<|start_header_id|>assistant<|end_header_id|>\n\n",
             "<|start_header_id|>system<|end_header_id|>\n\n", "<|eot_id|>"),
    Template("deepseek", "<｜User｜>", "<｜Assistant｜>", "<｜Assistant｜>"),
    Template("phi3", "<|user|>\n", "<|end|>", "<|assistant|>\n", "<|system|>\n", "<|end|>"),
    Template("gemma", "<start_of_turn>user\n", "<end_of_turn>", "<start_of_turn>model\n"),
    Template("mistral", "[INST]", "[/INST]", "[/INST]"),
)


@dataclass(frozen=True)
class SplitQuery:
    """One user turn of a templated query, counted from the start, and the text after its assistant marker."""

    template: str
    user: str  # content of this user turn
    system: str  # content of the system message, "" when absent
    prompt: str  # the query up to this turn's assistant marker (for disambiguation)
    response: str  # raw text after the assistant marker (special tokens not yet stripped)
    turn: int = 0  # 0 = the first user turn of the query
    system_marked: bool = True  # False: bare text before the first turn, to be checked against the row
    prior: tuple[str, ...] = ()  # the user messages of the earlier turns


def normalize(text: str) -> str:
    """Whitespace-free form of a prompt: robust to template trimming and tokenizer clean-up of spaces."""
    if text.isascii():  # bytes.translate deletes in one C pass; re.sub would build a match per gap
        return text.encode("ascii").translate(None, _ASCII_WS).decode("ascii")
    return "".join(text.split())  # str.split() splits exactly on the characters regex \s matches


def normalized_prefix(text: str, n: int) -> str:
    """normalize(text)[:n], reading only as much of text as that needs."""
    k = max(2 * n, 256)
    while True:
        out = normalize(text[:k])
        if len(out) >= n or k >= len(text):
            return out[:n]
        k *= 2


def raw_end(text: str, n_chars: int) -> int:
    """Index in text just past its n-th non-whitespace character (len(text) if it has fewer)."""
    seen = 0
    for m in _NONWS_RE.finditer(text):
        w = m.end() - m.start()
        if seen + w >= n_chars:
            return m.start() + (n_chars - seen)
        seen += w
    return len(text)


def pad_pattern(extra_tokens: tuple[str, ...] = ()) -> re.Pattern:
    """Regex for a run of left pads: the built-in ones, then extra_tokens in the order given."""
    if not extra_tokens:
        return _LEAD_PAD_RE
    extra = "|".join(re.escape(t) for t in extra_tokens if t)
    return re.compile(f"(?:{_LEAD_PADS}|{extra})+")


def pads_end(text: str, start: int = 0, end: int | None = None, pattern: re.Pattern = _LEAD_PAD_RE) -> int:
    """Index just past the left pads / BOS tokens / whitespace that begin text[start:end]."""
    m = pattern.match(text, start, len(text) if end is None else end)
    return m.end() if m else start


def strip_leading_pads(text: str) -> str:
    """Drop left pad / BOS tokens and leading whitespace."""
    return text[pads_end(text):]


# ------------------------------------------------------------------------------------ templates

def _anchor(query: str, t: Template) -> tuple[int, str, bool] | None:
    """(first user marker, system text, system_marked) when t's prompt starts the query (after pads)."""
    u = query.find(t.user_start)
    if u < 0:
        return None
    if pads_end(query, 0, u) == u:
        return u, "", True
    if t.system_start is None:
        return u, query[pads_end(query, 0, u):u], False
    s = query.find(t.system_start, 0, u)
    if s < 0 or pads_end(query, 0, s) != s:
        return None
    body = s + len(t.system_start)
    e = query.find(t.system_end or "", body, u)
    if e < 0 or pads_end(query, e + len(t.system_end or ""), u) != u:
        return None
    return u, query[body:e], True


def templated_turns(query: str, max_turns: int = 1) -> Iterator[SplitQuery]:
    """The first max_turns user turns of each chat template the query starts with.

    The prompt is read from the start of the query, never from its end: the response begins right after
    the assistant marker that follows a user turn, so chat markers a response imitates stay response
    text. Templates whose prompt starts the query come first (in TEMPLATES order), then those with bare
    text before the first turn, earliest first (that text must then equal the row's system prompt).
    """
    anchors = [(t, a) for t in TEMPLATES if (a := _anchor(query, t)) is not None]
    anchors.sort(key=lambda ta: (not ta[1][2], ta[1][0] if not ta[1][2] else 0))
    for t, (u, system, marked) in anchors:
        prior: list[str] = []
        pos = u
        for turn in range(max_turns):
            c = pos + len(t.user_start)
            e = query.find(t.user_end, c)
            if e < 0:
                break
            if t.user_end == t.assistant_start:
                a = e
            else:
                a = _WS_RUN_RE.match(query, e + len(t.user_end)).end()
                if not query.startswith(t.assistant_start, a):
                    break
            r = a + len(t.assistant_start)
            user = query[c:e]
            yield SplitQuery(t.name, user, system, query[:a], query[r:], turn, marked, tuple(prior))
            prior.append(user)
            pos = query.find(t.user_start, r) if turn + 1 < max_turns else -1
            if pos < 0:
                break


def split_templated(query: str) -> SplitQuery | None:
    """The first user turn of the chat template the query starts with; None if no template is recognised."""
    return next(templated_turns(query), None)


def after_prompt(query: str, prompt: str) -> str | None:
    """The text after prompt when the query starts with it (after pads); whitespace may differ; else None."""
    i = query.find(prompt)
    if i >= 0 and pads_end(query, 0, i) == i:
        return query[i + len(prompt):]
    body = strip_leading_pads(query)
    nprompt = normalize(strip_leading_pads(prompt))
    if not nprompt or normalized_prefix(body, len(nprompt)) != nprompt:
        return None
    return body[raw_end(body, len(nprompt)):]


# --------------------------------------------------------------------------------- response text

def _edge_run(span: str, leading: bool) -> int:
    """Length of the edge-token/whitespace run at the start (or end) of span, whose chars can all be in one."""
    marked = span
    for tok, mark in zip(_EDGE_TOKENS, _EDGE_MARKS, strict=True):
        if tok in marked:
            marked = marked.replace(tok, mark)
    if leading:
        run = marked[:_EDGE_MARKED_RE.match(marked).end()]
    else:
        run = marked[len(marked) - _EDGE_MARKED_RE.match(marked[::-1]).end():]
    return len(run) + sum(run.count(m) * (len(t) - 1) for t, m in zip(_EDGE_TOKENS, _EDGE_MARKS, strict=True))


def _strip_edges(text: str) -> str:
    """text without the whitespace and edge tokens (<s>, <pad>, ...) at its start and end."""
    n = len(text)
    lead = _edge_run(text[:_EDGE_SPAN_RE.match(text).end()], True)
    if lead == n:
        return ""
    tail_start = n - _EDGE_SPAN_RE.match(text[::-1]).end()
    trail = _edge_run(text[tail_start:], False)
    return text[lead:max(lead, n - trail)]


def clean_response(text: str, special_tokens: tuple[str, ...] = ()) -> str:
    """The response without EOS, pads and other special tokens."""
    cut = len(text)
    for tok in _END_TOKENS:
        i = text.find(tok, 0, cut + len(tok) - 1)
        if 0 <= i < cut:
            cut = i
    text = text[:cut]
    for tok in special_tokens:
        if tok:
            text = text.replace(tok, "")
    if "<|" in text or "<｜" in text:
        text = _PIPE_TOKEN_RE.sub("", text)
    return _strip_edges(text)


# ---------------------------------------------------------------------------------------------- code

# Responses with more lines holding ``` or ~~~ than this are degenerate (a real answer has a handful):
# only the text before the first line past the limit is searched for fenced blocks.
MAX_FENCE_LINES = 1000
_RUN_RE = {c: re.compile(re.escape(c) + "+") for c in "`~"}
_INDENT_RE = re.compile(r"[ \t]*")
_LANG_RE = re.compile(r"[ \t]*([\w+#.\-]*)")
_THINK_GAP_RE = re.compile(r"</think>\s*<answer>")
_PY_LANGS = {"python", "py", "python3", "py3"}


def _fence_lines(text: str) -> tuple[list[tuple[int, int]], int]:
    """(start, end) of the lines holding ``` or ~~~, at most MAX_FENCE_LINES, and where the search stopped."""
    lines: list[tuple[int, int]] = []
    n, pos = len(text), 0
    nb, nt = text.find("```"), text.find("~~~")
    while nb >= 0 or nt >= 0:
        hit = nb if nt < 0 or 0 <= nb < nt else nt
        r = text.rfind("\n", pos, hit)
        start = r + 1 if r >= 0 else pos
        if len(lines) == MAX_FENCE_LINES:
            return lines, start
        end = text.find("\n", hit)
        end = n if end < 0 else end
        lines.append((start, end))
        pos = end + 1
        if 0 <= nb < pos:
            nb = text.find("```", pos)
        if 0 <= nt < pos:
            nt = text.find("~~~", pos)
    return lines, n


def _strict_blocks(text: str, lines: list[tuple[int, int]], limit: int) -> list[tuple[str, int, int]]:
    """(language, body start, body end) of each block whose fences are on their own lines.

    Same blocks as ``^[ \\t]*(`{3,}|~{3,})[ \\t]*([\\w+#.\\-]*)[^\\n]*\\n(.*?)^[ \\t]*\\1[ \\t]*$`` (multiline,
    dotall) over text[:limit], without its retries: an opening run of k fence chars closes at the first
    later line that is exactly j of them (plus blanks) for the largest j <= k that has such a line.
    """
    m = len(lines)
    opener: list[tuple[str, int, int] | None] = [None] * m
    closer: list[tuple[str, int] | None] = [None] * m
    for i, (ls, le) in enumerate(lines):
        ind = _INDENT_RE.match(text, ls, le).end()
        c = text[ind] if ind < le else ""
        if c not in ("`", "~"):
            continue
        run_end = _RUN_RE[c].match(text, ind, le).end()
        k = run_end - ind
        if k < 3:
            continue
        if _INDENT_RE.match(text, run_end, le).end() == le:
            closer[i] = (c, k)
        if le < limit:  # an opening line needs its newline
            opener[i] = (c, k, run_end)
    lengths: dict[str, list[int]] = {"`": [], "~": []}  # distinct closing lengths on the lines after i
    nearest: dict[tuple[str, int], int] = {}
    target: list[tuple[int, int] | None] = [None] * m
    for i in range(m - 1, -1, -1):
        o = opener[i]
        if o is not None:
            found = lengths[o[0]]
            x = bisect_right(found, o[1])
            if x:
                target[i] = (nearest[(o[0], found[x - 1])], found[x - 1])
        cl = closer[i]
        if cl is not None:
            if cl not in nearest:
                insort(lengths[cl[0]], cl[1])
            nearest[cl] = i
    blocks = []
    i = 0
    while i < m:
        tg = target[i]
        if tg is None:
            i += 1
            continue
        close, j = tg
        _, k, run_end = opener[i]  # type: ignore[misc]
        le = lines[i][1]
        lang = _LANG_RE.match(text, run_end, le).group(1) if j == k else ""
        blocks.append((lang.lower(), le + 1, lines[close][0]))
        i = close + 1
    return blocks


def _longest_backtick_run(text: str, start: int, end: int) -> int:
    """Length of the longest run of backticks in text[start:end] (0 when it is shorter than 3)."""
    if text.find("```", start, end) < 0:
        return 0
    lo = 3
    while text.find("`" * (2 * lo), start, end) >= 0:
        lo *= 2
    hi = 2 * lo  # the longest run is in [lo, hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if text.find("`" * mid, start, end) >= 0:
            lo = mid
        else:
            hi = mid
    return lo


def _loose_blocks(text: str, lines: list[tuple[int, int]], limit: int) -> list[tuple[str, int, int]]:
    """Blocks of ``(`{3,})[ \\t]*([\\w+#.\\-]*)[^\\n]*\\n(.*?)\\1`` (dotall) over text[:limit], without retries.

    An opening run of k backticks closes at the first later occurrence of j backticks for the largest
    j <= k that occurs after its line at all; once none does, no later run can open a block either.
    """
    starts = [ls for ls, _ in lines]
    longest: list[int] = []  # longest backtick run on lines base.. (from the first block body on: none before)
    base = 0
    blocks = []
    pos = 0
    while True:
        q = text.find("```", pos, limit)
        if q < 0:
            break
        run_end = _RUN_RE["`"].match(text, q, limit).end()
        nl = text.find("\n", run_end, limit)
        if nl < 0:
            break
        idx = bisect_left(starts, nl + 1)
        if not longest:
            base, longest = idx, [0] * (len(lines) - idx + 1)
            for i in range(len(lines) - 1, idx - 1, -1):
                longest[i - base] = max(longest[i - base + 1], _longest_backtick_run(text, *lines[i]))
        j = min(run_end - q, longest[idx - base])
        if j < 3:
            break
        close = text.find("`" * j, nl + 1, limit)
        lang = _LANG_RE.match(text, run_end, nl).group(1) if j == run_end - q else ""
        blocks.append((lang.lower(), nl + 1, close))
        pos = close + j
    return blocks


def _block_spans(text: str) -> list[tuple[str, int, int]]:
    """(language, body start, body end) of every fenced block; fences not on their own line as a fallback."""
    lines, limit = _fence_lines(text)
    if not lines:
        return []
    return _strict_blocks(text, lines, limit) or _loose_blocks(text, lines, limit)


def fenced_blocks(text: str) -> list[tuple[str, str]]:
    """(language, body) of every fenced code block, in order; tolerant of fences not on their own line."""
    return [(lang, text[a:b]) for lang, a, b in _block_spans(text)]


def _from_blocks(text: str) -> str | None:
    spans = _block_spans(text)
    for lang, a, b in reversed(spans):
        if lang in _PY_LANGS:
            return text[a:b]
    return text[spans[-1][1]:spans[-1][2]] if spans else None


def _last_answer(text: str) -> str | None:
    """Content of the last ``<answer>(.*?)</answer>`` match (dotall, scanning forward); None if there is none.

    Matches pair the first <answer> after the previous match with the first </answer> after it, so the
    last one opens at the first <answer> after the </answer> that precedes the last <answer> that
    still has a </answer> after it.
    """
    last_close = text.rfind("</answer>")
    if last_close < 0:
        return None
    last_open = text.rfind("<answer>", 0, last_close)
    if last_open < 0:
        return None
    prev_close = text.rfind("</answer>", 0, last_open)
    first_open = text.find("<answer>", prev_close + len("</answer>") if prev_close >= 0 else 0)
    return text[first_open + len("<answer>"):text.find("</answer>", last_open + len("<answer>"))]


def _think_answer_spans(text: str) -> tuple[int, int, int, int] | None:
    """Spans of the two groups of ``\\A\\s*<think>(.*?)</think>\\s*<answer>(.*?)</answer>\\s*\\Z``, or None."""
    body = text.lstrip()
    start = len(text) - len(body)
    if not body.startswith("<think>"):
        return None
    close = start + len(body.rstrip()) - len("</answer>")
    if close < start or not text.startswith("</answer>", close):
        return None
    gap = _THINK_GAP_RE.search(text, start + len("<think>"))
    if gap is None or gap.end() > close:
        return None
    return start + len("<think>"), gap.start(), gap.end(), close


@dataclass(frozen=True)
class Extracted:
    """The code found in a response and where it came from."""

    code: str | None  # None = nothing usable (a format failure, never an exception)
    source: str  # "answer", "answer_block", "python_block", "block", "raw", "none"


def extract_code(response: str) -> Extracted:
    """Code from a response: <answer> (block inside or raw), last ```python block, last block, raw if it parses."""
    inner = _last_answer(response)
    if inner is not None:
        code = _from_blocks(inner)
        if code is not None:
            return Extracted(code, "answer_block")
        if inner.strip():
            return Extracted(inner.strip("\n"), "answer")
    spans = _block_spans(response)
    for lang, a, b in reversed(spans):
        if lang in _PY_LANGS:
            return Extracted(response[a:b], "python_block")
    if spans:
        return Extracted(response[spans[-1][1]:spans[-1][2]], "block")
    if parses(response):
        return Extracted(response.strip("\n"), "raw")
    return Extracted(None, "none")


# What format_ok can check; a label's extra.answer_format or the server's answer_format picks one.
AnswerFormat = Literal["think_answer", "code_block", "any"]
ANSWER_FORMATS: tuple[str, ...] = get_args(AnswerFormat)


def format_ok(response: str, answer_format: str, extracted: Extracted) -> bool:
    """Does the response follow the answer format the prompt asked for?

    think_answer: exactly ``<think>…</think>`` then ``<answer>…</answer>`` (nothing else around them),
    with code inside the answer. code_block: at least one fenced block. any: some code was found.
    """
    if answer_format == "think_answer":
        spans = _think_answer_spans(response)
        if spans is None:
            return False
        think_start, think_end, answer_start, answer_end = spans
        if response.find("<think>", think_start, think_end) >= 0 or \
                response.find("<answer>", answer_start, answer_end) >= 0:
            return False
        return extracted.source in ("answer", "answer_block")
    if answer_format == "code_block":
        return bool(_block_spans(response))
    return extracted.code is not None

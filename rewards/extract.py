"""Find the code in a response, and check its format.

A response is model-generated and may be anything up to server.max_query_chars (2 MB), so every scan
here takes time linear in its input whatever the input: str.find / strip / replace loops and regexes
that never retry from many start positions. The results equal those of the plain regexes these
scanners replaced (scripts/bench/extract_v1.py keeps them; tests/rewards/test_extract.py compares the two).
The query around a response (chat templates, pads, end tokens) is rewards/query.py's.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from typing import Literal, get_args

from .syntax import INLINE_CHARS, MAX_CHARS, Budget, binds, parses

# ---------------------------------------------------------------------------------------------- code

# Responses with more lines holding ``` or ~~~ than this are degenerate (a real answer has a handful):
# only the text before the first line past the limit is searched for fenced blocks.
MAX_FENCE_LINES = 1000
_RUN_RE = {c: re.compile(re.escape(c) + "+") for c in "`~"}
_INDENT_RE = re.compile(r"[ \t]*")
# What may follow a closing fence run on its line: blanks, and the \r of a \r\n line ending (CommonMark's line
# endings are \n, \r\n and \r; a response written with \r\n had no block that closed, so no code at all).
_CLOSE_TAIL_RE = re.compile(r"[ \t\r]*")
_LANG_RE = re.compile(r"[ \t]*([\w+#.\-]*)")
# Blanks and reasoning/answer tags before an opening fence on its line ("<answer>```python").
_LINE_TAGS_RE = re.compile(r"(?:[ \t]*+</?(?:think|answer)>)*+[ \t]*+")
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


@dataclass(frozen=True)
class Block:
    """One fenced code block: the text from its opening fence run to the end of its closing run is opaque."""

    lang: str  # the info string's first word, lower-cased
    start: int  # the opening fence run
    body: int  # body start (after the opening line)
    body_end: int  # body end: the closing fence line's start, or the end of the text when it never closes
    end: int  # just past the closing fence run (the end of the text when it never closes)
    closed: bool


def _scan_blocks(text: str) -> list[Block]:
    """The fenced blocks of text, in one pass from its start over the lines holding ``` or ~~~.

    Markdown's rule, line-based: outside a block, a line that starts (after blanks, and after <think> /
    <answer> tags written before the fence on the same line) with 3+ backticks or tildes opens one (a
    backtick fence's info string holds no backtick); inside, everything is opaque until a line that starts
    (after blanks) with a run of the same character at least as long, followed by nothing, blanks (a \r\n
    line ending's \r among them) or markup ("```</answer>"); what follows the run on that line is text again.
    A block still open at the end (a response cut off before its closing fence) ends with the text, marked
    closed=False."""
    lines, _ = _fence_lines(text)  # past MAX_FENCE_LINES nothing opens or closes: a block open there runs on
    blocks: list[Block] = []
    opened: tuple[str, int, int, str, int] | None = None  # fence char, run length, run start, lang, body start
    for ls, le in lines:
        if opened is None:
            p = _LINE_TAGS_RE.match(text, ls, le).end()
            c = text[p] if p < le else ""
            if c not in ("`", "~") or le >= len(text):  # an opening line needs its newline
                continue
            run_end = _RUN_RE[c].match(text, p, le).end()
            if run_end - p < 3 or (c == "`" and text.find("`", run_end, le) >= 0):
                continue
            opened = (c, run_end - p, p, _LANG_RE.match(text, run_end, le).group(1).lower(), le + 1)
            continue
        c, k, start, lang, body = opened
        p = _INDENT_RE.match(text, ls, le).end()
        if not text.startswith(c * 3, p, le):
            continue
        run_end = _RUN_RE[c].match(text, p, le).end()
        rest = _CLOSE_TAIL_RE.match(text, run_end, le).end()
        if run_end - p >= k and (rest == le or text[rest] == "<"):
            blocks.append(Block(lang, start, body, ls, run_end, True))
            opened = None
    if opened is not None:
        c, k, start, lang, body = opened
        blocks.append(Block(lang, start, body, len(text), len(text), False))
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


def _loose_spans(text: str) -> list[tuple[str, int, int]]:
    """(language, body start, body end) of blocks whose fences are not on their own lines (a fallback)."""
    lines, limit = _fence_lines(text)
    return _loose_blocks(text, lines, limit) if lines else []


def fenced_blocks(text: str) -> list[tuple[str, str]]:
    """(language, body) of every closed fenced code block, in order; fences not on their own line as a fallback."""
    blocks = [(b.lang, text[b.body:b.body_end]) for b in _scan_blocks(text) if b.closed]
    return blocks or [(lang, text[a:b]) for lang, a, b in _loose_spans(text)]


class _Prose:
    """Finds tags in the text outside fenced blocks (inside one, text is code: a tag there never counts)."""

    def __init__(self, text: str, blocks: list[Block]) -> None:
        self.text = text
        self.spans = [(b.start, b.end) for b in blocks]
        self.starts = [b.start for b in blocks]

    def _block_at(self, i: int) -> int:
        """Index of the block whose opaque span holds position i, or -1."""
        j = bisect_right(self.starts, i) - 1
        return j if j >= 0 and i < self.spans[j][1] else -1

    def find(self, tag: str, lo: int, hi: int) -> int:
        i = self.text.find(tag, lo, hi)
        while i >= 0:
            j = self._block_at(i)
            if j < 0:
                return i
            i = self.text.find(tag, self.spans[j][1], hi)  # each block is skipped once: linear
        return -1

    def rfind(self, tag: str, lo: int, hi: int) -> int:
        i = self.text.rfind(tag, lo, hi)
        while i >= 0:
            j = self._block_at(i)
            if j < 0:
                return i
            i = self.text.rfind(tag, lo, self.spans[j][0])
        return -1

    def answer(self, lo: int = 0) -> tuple[int, int] | None:
        """Content span of the last ``<answer>…</answer>`` pair in text[lo:], pairing forward from lo: an
        <answer> opens at the first one after the previous pair, and closes at the first </answer> after it."""
        n = len(self.text)
        last_close = self.rfind("</answer>", lo, n)
        last_open = self.rfind("<answer>", lo, last_close) if last_close > lo else -1
        if last_open < 0:
            return None
        prev_close = self.rfind("</answer>", lo, last_open)
        first_open = self.find("<answer>", prev_close + len("</answer>") if prev_close >= 0 else lo, n)
        return first_open + len("<answer>"), self.find("</answer>", last_open + len("<answer>"), n)


def _may_name(text: str, lo: int, hi: int, pattern: re.Pattern) -> bool:
    """Can text[lo:hi] spell the name at all (NFKC-normalised, as Python reads identifiers)? Cheap and linear."""
    if pattern.search(text, lo, hi):
        return True
    part = text[lo:hi]
    return not part.isascii() and pattern.search(unicodedata.normalize("NFKC", part)) is not None


def _choose(text: str, blocks: list[Block], entry_point: str | None, max_chars: int,
            until: float | None = None, budget: Budget | None = None) -> Block | None:
    """The block to grade: of the Python blocks (else of all), the last one; but when the label names an entry
    point and that block does not define it (an "example usage" or test block after the solution), the last
    earlier one that does. Without an entry point (stdio: the program is a script) the last one.

    "Defines" is what the code binds once compiled (syntax.binds_name: a def, class, assignment, import,
    walrus... in the module, or a method of class Solution), never how it is spelled; a block that does not
    compile but names the entry point counts as defining it (it is the program's final attempt, graded as such,
    never swapped for a draft that compiles). Compiling is bounded per response: blocks that cannot spell the
    name are never compiled, past INLINE_CHARS the rest compile in syntax's helper (the server's GIL stays
    free), and once max_chars of blocks have been compiled the last block is graded.

    A block cut off before its closing fence (the last one, when the response was truncated) is graded only
    as a complete program: when it compiles. The text of a later block can only move the choice to an
    earlier block that defines the program itself, never to prose or to a block that does not."""
    cands = [b for b in blocks if b.lang in _PY_LANGS] or blocks
    if cands and not cands[-1].closed and not parses(text[cands[-1].body:cands[-1].body_end], max_chars, until,
                                                        budget):
        cands = cands[:-1]
    if not cands or not entry_point:
        return cands[-1] if cands else None
    pattern = re.compile(rf"(?<![\w]){re.escape(entry_point)}(?![\w])")
    chars, inline = max_chars, INLINE_CHARS  # what one response may have compiled: in all, and in-process
    for b in reversed(cands):
        size = b.body_end - b.body
        if size > chars:
            break
        if _may_name(text, b.body, b.body_end, pattern):
            chars -= size
            inline -= size
            if binds(text[b.body:b.body_end], entry_point, max_chars, inline=inline >= 0, until=until,
                     budget=budget) is not False:
                return b
    return cands[-1]


def _loose_choice(text: str, lo: int, hi: int) -> str | None:
    """The last Python (else last) block of text[lo:hi] with fences not on their own lines, or None."""
    part = text[lo:hi]
    spans = _loose_spans(part)
    for lang, a, b in reversed(spans):
        if lang in _PY_LANGS:
            return part[a:b]
    return part[spans[-1][1]:spans[-1][2]] if spans else None


@dataclass(frozen=True)
class Extracted:
    """The code found in a response and where it came from."""

    code: str | None  # None = nothing usable (a format failure, never an exception)
    # "answer", "answer_block", "python_block", "block", "truncated_block", "raw", "none"
    source: str


def extract_code(response: str, entry_point: str | None = None, max_chars: int = MAX_CHARS,
                 until: float | None = None, budget: Budget | None = None) -> Extracted:
    """The code to grade: one contiguous span of the response, exactly as written (docs/extraction.md).

    The structure is read once from the start (fenced blocks are opaque, so tags inside code never count).
    Only what follows the reasoning is an answer (the last </think>; nothing while a <think> that opens the
    response is unclosed): an <answer> inside the reasoning is a draft. There, the content of the last <answer>
    pair (its block, see _choose, or its raw text); else, after an <answer> left open (a response cut off),
    the block _choose picks, a block with fences not on their own lines, or the text itself when it compiles.
    entry_point (the label's) tells a solution block from a block that only uses it; code compiles only within
    max_chars (RewardConfig.syntax_max_chars), and before until (a time.monotonic() instant, the request's deadline):
    syntax.OutOfTime when it passes before the choice is made; syntax.OverBudget when the response's own compiling
    exceeds budget (its preparation budget) first."""
    blocks = _scan_blocks(response)
    prose = _Prose(response, blocks)
    think_end = prose.rfind("</think>", 0, len(response))
    if think_end >= 0:
        lo = think_end + len("</think>")
    elif response.lstrip().startswith("<think>"):
        return Extracted(None, "none")  # cut off while reasoning: no final answer was written
    else:
        lo = 0
    ans = prose.answer(lo)  # an answer written inside the reasoning is a draft
    if ans is not None:
        lo, hi = ans
        inside = [b for b in blocks if lo <= b.start and b.end <= hi]
        chosen = _choose(response, inside, entry_point, max_chars, until, budget) if inside else None
        if chosen is not None:
            return Extracted(response[chosen.body:chosen.body_end], "answer_block")
        code = None if inside else _loose_choice(response, lo, hi)
        if code is not None:
            return Extracted(code, "answer_block")
        inner = response[lo:hi]
        if inner.strip():
            return Extracted(inner.strip("\n"), "answer")
    opened = prose.rfind("<answer>", lo, len(response))  # an answer cut off before its closing tag
    if opened >= 0:
        lo = opened + len("<answer>")
    scope = [b for b in blocks if b.start >= lo]
    chosen = _choose(response, scope, entry_point, max_chars, until, budget)
    if chosen is not None:
        source = ("truncated_block" if not chosen.closed else
                  "python_block" if chosen.lang in _PY_LANGS else "block")
        return Extracted(response[chosen.body:chosen.body_end], source)
    if not scope:
        code = _loose_choice(response, lo, len(response))
        if code is not None:
            return Extracted(code, "python_block")
    rest = response[lo:]
    if not scope and parses(rest, max_chars, until, budget):
        return Extracted(rest.strip("\n"), "raw")
    return Extracted(None, "none")


# What format_ok can check; a label's extra.answer_format or the server's answer_format picks one.
AnswerFormat = Literal["think_answer", "code_block", "any"]
ANSWER_FORMATS: tuple[str, ...] = get_args(AnswerFormat)
_TAGS = ("<think>", "</think>", "<answer>", "</answer>")


def _think_answer_ok(response: str, prose: _Prose) -> bool:
    """``<think>…</think>`` then ``<answer>…</answer>`` and nothing else around them: exactly these four tags
    outside code, in this order, with only whitespace before, between the two parts and after."""
    start = len(response) - len(response.lstrip())
    close = len(response.rstrip()) - len("</answer>")
    if not response.startswith("<think>", start) or close < start or not response.startswith("</answer>", close):
        return False
    if prose.find("</answer>", close, close + len("</answer>")) != close:  # inside a block it is code, no tag
        return False
    think_end = prose.find("</think>", start + len("<think>"), close)
    answer = prose.find("<answer>", think_end + len("</think>"), close) if think_end >= 0 else -1
    if answer < 0 or response[think_end + len("</think>"):answer].strip():
        return False
    regions = ((start + len("<think>"), think_end), (answer + len("<answer>"), close))
    return all(prose.find(tag, lo, hi) < 0 for lo, hi in regions for tag in _TAGS)


def format_ok(response: str, answer_format: str, extracted: Extracted) -> bool:
    """Does the response follow the answer format the prompt asked for?

    think_answer: exactly ``<think>…</think>`` then ``<answer>…</answer>`` (nothing else around them; tags
    inside code blocks are code), with code inside the answer. code_block: at least one closed fenced block.
    any: some code was found."""
    if answer_format == "think_answer":
        prose = _Prose(response, _scan_blocks(response))
        return _think_answer_ok(response, prose) and extracted.source in ("answer", "answer_block")
    if answer_format == "code_block":
        return bool(fenced_blocks(response))
    return extracted.code is not None

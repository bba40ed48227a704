"""Load the training JSONL and find a query's problem in O(len(query)), independent of dataset size.

Two hash indexes over whitespace-free ("normalised") text:
  * by the last user message's content, for queries in a recognised chat template (query.TEMPLATES);
  * by a fixed-length prefix of the prompt text, for un-templated (raw) prompts and, with
    ``--tokenizer``, the exactly templated prompt; a prefix hit is confirmed against the full prompt.
Seed servers scan every prompt for every query (O(N)); this is one or a few dict look-ups, which
query.lookup makes (the walk from a query's text to its problem is rewards/query.py's).

Both read the prompt from the start of the query: a templated prompt's user turns are taken in order
from the first one (a row with k user messages matches at turn k, its earlier turns checked too), and
the response starts after the assistant marker that follows them. A response that imitates chat
markers and another problem's prompt is therefore still graded against its own prompt. A raw prompt has
no such marker: one that starts with another prompt of a different label is never matched (_nested_texts).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from .errors import DataError
from .extract import ANSWER_FORMATS
from .labels import TRL_LABEL_COLUMN, Label, LabelError, parse_label
from .query import PREFIX_CHARS, Match, digest, lookup, normalize, pad_pattern, pads_end

log = logging.getLogger("coderl.reward_server")

@dataclass(frozen=True)
class IndexedProblem:
    """One row of the JSONL."""

    line: int  # 1-based line number in the data file
    user: str  # the last user message
    system: str
    label: Label
    label_json: str
    prior_users: tuple[str, ...] = ()  # earlier user messages of a multi-turn prompt
    messages: list | str = field(default="", compare=False)  # the row's "input", as given

    @property
    def answer_format(self) -> str | None:
        fmt = self.label.extra.get("answer_format")
        return fmt if fmt in ANSWER_FORMATS else None


@dataclass
class IndexStats:
    rows: int = 0
    unique_prompts: int = 0
    duplicate_rows: int = 0  # same prompt and same label as an earlier row (harmless)
    ambiguous_prompts: int = 0  # same prompt, different labels
    examples: list[str] = field(default_factory=list)
    nested_prompts: int = 0  # raw prompts that extend another one with a different label (never matched)

    def as_dict(self) -> dict:
        return {"rows": self.rows, "unique_prompts": self.unique_prompts, "duplicate_rows": self.duplicate_rows,
                "ambiguous_prompts": self.ambiguous_prompts, "examples": self.examples,
                "nested_prompts": self.nested_prompts}


def _messages(row: dict, where: str) -> tuple[str, list[str]]:
    """(system prompt, user messages in order) of a row."""
    msgs = row.get("input")
    if msgs is None and "prompt" in row and TRL_LABEL_COLUMN in row:
        raise DataError(f"{where}: a row of the TRL layout (prompt, {TRL_LABEL_COLUMN}: preprocess --output_format "
                        "trl); this reads the openrlhf layout (input, label): preprocess without --output_format")
    if isinstance(msgs, str):  # a raw prompt string is accepted too
        return "", [msgs]
    if not isinstance(msgs, list) or not msgs:
        raise DataError(f"{where}: field 'input' must be a non-empty list of chat messages")
    system, users = "", []
    for j, m in enumerate(msgs):
        if not isinstance(m, dict) or not isinstance(m.get("content"), str) or not isinstance(m.get("role"), str):
            raise DataError(f"{where}: input[{j}] must be an object with string 'role' and 'content'")
        if m["role"] == "system" and not users:
            system = m["content"]
        elif m["role"] == "user":
            users.append(m["content"])
    if not users or not normalize(users[-1]):
        raise DataError(f"{where}: field 'input' has no non-empty user message")
    return system, users


def load_problems(path: str | Path) -> tuple[list[IndexedProblem], str]:
    """Parse and validate every row; returns (problems, sha256 of the file's bytes). Raises DataError."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise DataError(f"data file not found: {p} (data/preprocess.py writes it: python data/preprocess.py "
                        f"--input_dir PARQUET_DIR --output_dir {p.parent})") from None
    except IsADirectoryError:
        hint = f": did you mean {p / 'train.jsonl'}?" if (p / "train.jsonl").is_file() else ""
        raise DataError(f"data file {p} is a directory; pass the JSONL file data/preprocess.py wrote{hint}") from None
    except PermissionError as e:
        raise DataError(f"cannot read data file {p}: {e.strerror}") from None
    if data.startswith(b"PAR1"):
        raise DataError(f"data file {p} is parquet; this reads the JSONL data/preprocess.py writes from it: "
                        f"python data/preprocess.py --input_dir {p} --output_dir data_out, then data_out/train.jsonl")
    sha = hashlib.sha256(data).hexdigest()
    problems: list[IndexedProblem] = []
    labels_seen: dict[str, Label] = {}
    for n, raw in enumerate(data.split(b"\n"), 1):
        if not raw.strip():
            continue
        where = f"{p}: line {n}"
        try:
            row = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise DataError(f"{where}: not valid JSON ({e})") from None
        if not isinstance(row, dict):
            raise DataError(f"{where}: expected a JSON object, got {type(row).__name__}")
        system, users = _messages(row, where)
        lab = row.get("label")
        if isinstance(lab, dict):
            lab = json.dumps(lab, sort_keys=True)
        if not isinstance(lab, str):
            raise DataError(f"{where}: field 'label' must be a JSON string (see docs/label_format.md)")
        label = labels_seen.get(lab)
        if label is None:
            try:
                label = parse_label(lab)
            except LabelError as e:
                raise DataError(f"{where}: {e}") from None
            labels_seen[lab] = label
        problems.append(IndexedProblem(n, users[-1], system, label, lab, tuple(users[:-1]), row["input"]))
    if not problems:
        raise DataError(f"{p}: no rows")
    return problems, sha


class PromptIndex:
    """Hash index from prompt text to IndexedProblem; lookups cost O(len(query)), not O(rows)."""

    def __init__(self, problems: list[IndexedProblem], path: str = "", sha256: str = "",
                 templated_prompts: list[str] | None = None, special_tokens: tuple[str, ...] = ()) -> None:
        self.problems = problems
        self.path, self.sha256 = path, sha256
        self.special_tokens = special_tokens
        self.pads = pad_pattern(special_tokens)
        self.stats = IndexStats(rows=len(problems))
        self.by_user: dict[bytes, list[IndexedProblem]] = {}
        self.by_prefix: dict[bytes, list[tuple[str, IndexedProblem]]] = defaultdict(list)
        self._prefix_lengths: set[int] = set()
        for i, pr in enumerate(problems):
            self._add_user(pr)
            self._add_prefix(self.strip_pads(pr.user), pr)
            if templated_prompts is not None:
                self._add_prefix(self.strip_pads(templated_prompts[i]), pr)
        self.prefix_lengths_desc = sorted(self._prefix_lengths, reverse=True)
        self.nested = self._nested_texts()
        self.stats.nested_prompts = len(self.nested)
        self.stats.unique_prompts = len(self.by_user)
        self.by_prefix = dict(self.by_prefix)
        self.max_turns = 1 + max((len(pr.prior_users) for pr in problems), default=0)

    @classmethod
    def from_jsonl(cls, path: str | Path, tokenizer=None) -> PromptIndex:
        """Load and index a JSONL; with a HF tokenizer, also index its exact chat-templated prompts."""
        problems, sha = load_problems(path)
        templated, specials = None, ()
        if tokenizer is not None:
            templated = [tokenizer.apply_chat_template(
                ([{"role": "system", "content": pr.system}] if pr.system else [])
                + [{"role": "user", "content": pr.user}], tokenize=False, add_generation_prompt=True)
                for pr in problems]
            specials = tuple(sorted(set(tokenizer.all_special_tokens), key=lambda t: (-len(t), t)))
        return cls(problems, str(path), sha, templated, specials)

    def _add_user(self, pr: IndexedProblem) -> None:
        key = digest(normalize(pr.user))
        bucket = self.by_user.get(key)
        if bucket is None:
            self.by_user[key] = [pr]
            return
        if any(b.label_json == pr.label_json and b.prior_users == pr.prior_users for b in bucket):
            self.stats.duplicate_rows += 1
            return
        if len({b.label_json for b in bucket}) == 1:
            self.stats.ambiguous_prompts += 1
            if len(self.stats.examples) < 3:
                excerpt = " ".join(pr.user.split())[:60]
                self.stats.examples.append(f"lines {bucket[0].line} and {pr.line}: {excerpt!r}")
        bucket.append(pr)

    def _add_prefix(self, text: str, pr: IndexedProblem) -> None:
        norm = normalize(text)
        if not norm:
            return
        n = min(len(norm), PREFIX_CHARS)
        bucket = self.by_prefix[digest(norm[:n])]
        if not any(b is pr for _, b in bucket):
            bucket.append((text, pr))
        self._prefix_lengths.add(n)

    def _nested_texts(self) -> set[bytes]:
        """Digests of the prompt texts that start with another indexed text of a different label. A raw query
        has no mark where its prompt ends: such a prompt is indistinguishable from the shorter one followed by
        a response that imitates the rest, so matching it would let a response choose its own problem."""
        entries = sorted((normalize(text), pr.label_json) for bucket in self.by_prefix.values() for text, pr in bucket)
        nested, stack = set(), []  # stack: the texts that are prefixes of the current one (sorted order)
        for text, label in entries:
            while stack and not text.startswith(stack[-1][0]):
                stack.pop()
            if any(t != text and lab != label for t, lab in stack):
                nested.add(digest(text))
            stack.append((text, label))
        return nested

    def __len__(self) -> int:
        return len(self.problems)

    def strip_pads(self, text: str) -> str:
        """Drop leading pads/BOS: the built-in patterns, and every special token of --tokenizer."""
        return text[pads_end(text, pattern=self.pads):]

    def lookup(self, query: str) -> Match | None:
        """The problem a decoded query belongs to and its response; None when not in the dataset."""
        return lookup(self, query)


def describe(index: PromptIndex) -> str:
    """One start-up line about the index, with duplicate/ambiguous prompt counts and examples."""
    s = index.stats
    msg = f"indexed {s.rows} rows ({s.unique_prompts} distinct prompts) from {index.path}"
    if s.duplicate_rows:
        msg += f"; {s.duplicate_rows} duplicate rows (same prompt and label)"
    if s.ambiguous_prompts:
        msg += (f"; WARNING {s.ambiguous_prompts} prompts appear with different labels — the row whose "
                f"system prompt matches the query wins, else the first (e.g. {'; '.join(s.examples)})")
    if s.nested_prompts:
        msg += (f"; WARNING {s.nested_prompts} raw prompts start with another prompt that has a different label: "
                f"a query for one cannot be told from the shorter prompt plus a response, so they are never matched")
    return msg

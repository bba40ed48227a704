"""Prompt building: system prompts from configs/prompts.yaml, user prompts with exact signatures (via ast)."""

from __future__ import annotations

import ast
import functools
import io
import re
import tokenize
from dataclasses import dataclass
from pathlib import Path

import yaml

from coderl.configs import CONFIG_DIR
from coderl.rewards.extract import ANSWER_FORMATS as EXTRACT_FORMATS

PROMPTS_PATH = CONFIG_DIR / "prompts.yaml"
# "any" asks for nothing, so no system prompt asks for it.
ANSWER_FORMATS = tuple(f for f in EXTRACT_FORMATS if f != "any")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class SystemPrompt:
    text: str
    answer_format: str  # label.extra["answer_format"]: what the reward server's format check expects


def load_system_prompt(name: str | None = None, file: str | None = None,
                       answer_format: str = "think_answer", prompts_path: Path = PROMPTS_PATH) -> SystemPrompt:
    """The system prompt named `name` in configs/prompts.yaml, or the text of `file`."""
    if answer_format not in ANSWER_FORMATS:
        raise ValueError(f"--answer_format must be one of {ANSWER_FORMATS}, got {answer_format!r}")
    if file:
        text = Path(file).read_text(encoding="utf-8").strip()
        if not text:
            raise ValueError(f"--system_prompt_file {file} is empty")
        return SystemPrompt(text, answer_format)
    prompts = yaml.safe_load(prompts_path.read_text(encoding="utf-8")) or {}
    name = name or "think_answer"
    if name not in prompts or not isinstance(prompts[name], str):
        raise ValueError(f"--system_prompt {name!r} is not a prompt in {prompts_path}; "
                         f"known: {', '.join(sorted(prompts))}")
    return SystemPrompt(prompts[name].strip(), name if name in ANSWER_FORMATS else answer_format)


def normalize_question(text: str) -> str:
    """Text used for dedup and the split hash: case-folded, whitespace runs collapsed."""
    return " ".join(text.split()).casefold()


def referenced(names: list[str], tests: list[str]) -> list[str]:
    """The `names` (in their order) that occur as whole identifiers in any of `tests`.

    A word-boundary regex rather than ast.parse of the tests: the tests are the bulk of the data
    (CodeRM cells reach 400 KB) and parsing them was 80% of the CLI's run time; a name merely
    mentioned in a test is still a name the answer should define.
    """
    if not names:
        return []
    pat = re.compile(r"(?<!\w)(" + "|".join(map(re.escape, names)) + r")\b")
    found: set[str] = set()
    for t in tests:
        found.update(pat.findall(t))
        if len(found) == len(names):
            break
    return [n for n in names if n in found]


def _header(lines: list[str], node: ast.AST) -> str:
    """The exact `def ...:` / `class ...:` header of node, from the source, without the body."""
    body0 = node.body[0]
    if body0.lineno == node.lineno:  # one-liner: cut before the body
        text = lines[node.lineno - 1][node.col_offset:body0.col_offset]
    else:
        chunk = lines[node.lineno - 1:body0.lineno - 1]
        chunk[0] = chunk[0][node.col_offset:]
        while chunk and (not chunk[-1].strip() or chunk[-1].strip().startswith("#")):
            chunk.pop()
        text = _strip_comments("\n".join(c.rstrip() for c in chunk))
    return text.rstrip()


def _strip_comments(src: str) -> str:
    """`src` without `#` comments (found with tokenize, so a '#' inside a default string survives)."""
    lines = src.split("\n")
    try:
        for tok in tokenize.generate_tokens(io.StringIO(src).readline):
            if tok.type == tokenize.COMMENT:
                row, col = tok.start
                lines[row - 1] = lines[row - 1][:col].rstrip()
    except (tokenize.TokenError, SyntaxError):
        return src
    return "\n".join(lines)


@functools.lru_cache(maxsize=8)  # a converter asks twice for the same reference: parse it once
def top_level_defs(code: str) -> dict[str, ast.AST] | None:
    """Top-level functions and classes of `code` by name (None when it does not parse); do not mutate."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return None
    return {n.name: n for n in tree.body
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}


def signatures(code: str, wanted: set[str] | None = None) -> str | None:
    """Exact header lines of the top-level defs in `code` named in `wanted` (all when None), in source order.

    Classes give their `class` line plus the headers of their public methods and __init__.
    None when the code does not parse or nothing matches.
    """
    defs = top_level_defs(code)
    if not defs:
        return None
    lines = code.splitlines()
    parts = []
    for name, node in defs.items():
        if wanted is not None and name not in wanted:
            continue
        if isinstance(node, ast.ClassDef):
            block = [_header(lines, node)]
            for m in node.body:
                if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
                        not m.name.startswith("_") or m.name == "__init__"):
                    block.append("    " + _header(lines, m) + "\n        ...")
            parts.append("\n".join(block) if len(block) > 1 else block[0] + "\n    ...")
        else:
            parts.append(_header(lines, node) + "\n    ...")
    return "\n\n".join(parts) or None


def function_signature(code: str, name: str) -> str | None:
    """Header of function `name`, top-level or as a method of a top-level class (e.g. LeetCode's Solution)."""
    defs = top_level_defs(code)
    if not defs:
        return None
    if name in defs and not isinstance(defs[name], ast.ClassDef):
        return signatures(code, {name})
    lines = code.splitlines()
    for node in defs.values():
        if isinstance(node, ast.ClassDef):
            for m in node.body:
                if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and m.name == name:
                    return f"{_header(lines, node)}\n    {_header(lines, m)}\n        ..."
    return None


def task_prompt(question: str, fmt: str, entry_point: str | None, reference: str | None = None,
                starter_code: str | None = None) -> str:
    """The user prompt of a call-or-stdio problem: a function (its signature from the starter code, else the
    reference's header) for `call`, a stdin/stdout program otherwise."""
    if fmt == "call":
        sig = None if starter_code else function_signature(reference or "", entry_point)
        return user_prompt(question, mode="function", signature=sig, starter_code=starter_code,
                           entry_point=entry_point)
    return user_prompt(question, mode="stdio", starter_code=starter_code)


def user_prompt(question: str, *, mode: str, signature: str | None = None, starter_code: str | None = None,
                entry_point: str | None = None) -> str:
    """The user message: the problem statement plus what the tests need from the answer.

    mode: "function" (tests call named functions/classes: give their exact signatures),
          "stdio" (program reads stdin, writes stdout), "complete" (HumanEval-style: complete the code).
    """
    q = question.strip()
    if mode == "complete":
        return ("Complete the following Python function. Give the complete function, including its "
                f"signature and any imports it needs.\n\n```python\n{q}\n```")
    if mode == "stdio":
        extra = f"\n\nStarter code:\n```python\n{starter_code.rstrip()}\n```" if starter_code else ""
        return (f"{q}{extra}\n\nWrite a complete Python program that reads the input from standard input "
                "and prints the answer to standard output.")
    if mode != "function":
        raise ValueError(f"unknown prompt mode {mode!r}")
    if starter_code and starter_code.strip():
        code, what = starter_code.rstrip(), "Use this starter code (keep the names and signatures)"
    elif signature:
        code, what = signature, "Your solution must define"
    elif entry_point:
        return f"{q}\n\nYour solution must define a function named `{entry_point}`; the tests call it directly."
    else:
        return q
    return f"{q}\n\n{what}:\n```python\n{code}\n```\nThe tests call these by name."

"""README.md and docs/*.md as a new user reads them: every fenced example is extracted from the Markdown at
test time and either run here, on CPU, against tiny data and a tiny local model made by the test, or carries
a mark saying why not; the commands of every example, run or not, are checked against the code (the script
or module exists, each --flag is in its --help, each VAR= knob is read by the script it is given to).

A mark is an HTML comment on the line before the fence (invisible in the rendered page):

    <!-- docs-test: KIND: why -->

KIND is one of MARK_KINDS; the reason is required. Unmarked bash and python fences run in a workspace (a
temporary directory holding links to the checkout's folders) in document order, so one example can use the
files an earlier one wrote, with the documented placeholders replaced by PLACEHOLDERS' stand-ins; a reward
server an example starts runs in the background until the document's examples are done.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest
import tomllib

from tests.support import (
    REPO_ROOT,
    coderm_rows,
    humaneval_rows,
    out,
    think,
    tiny_checkpoint,
    write_jsonl,
    write_parquet,
)

pytestmark = pytest.mark.timeout(900)

DOCS = [REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").glob("*.md"))]

# Why an example is not run here. Its commands are still checked (paths, flags, knobs, python imports).
MARK_KINDS = {
    "gpu": "needs a GPU (or the GPU stack scripts/setup_env.sh builds)",
    "network": "downloads packages (PyPI) or talks to another machine",
    "hub": "downloads a model or dataset from the Hugging Face hub",
    "slow": "runs for minutes; the test named in the reason runs it (or its dry run)",
    "fragment": "an excerpt with placeholders (`...`), not a program",
}
MARK = re.compile(r"^\s*<!--\s*docs-test:\s*(?P<kind>[\w-]+)\s*(?::\s*(?P<reason>.*?))?\s*-->\s*$")
FENCE = re.compile(r"^(?P<indent>\s*)```(?P<lang>[\w+-]*)\s*$")

# Documented placeholders -> what stands in for them here (run examples only).
PLACEHOLDERS = {
    "/path/to/CodeRM-UnitTest": "raw",          # CodeRM-style and HumanEval parquet: the schema is detected per file
    "--input_dir …": "--input_dir raw",
    "/models/Qwen2.5-7B-Instruct": "models/tiny",  # a random ~100k-parameter Qwen2 with a ChatML tokenizer
    "/ckpt/global_step200_hf": "models/tiny",
}
PORT = "5000"  # the documented port; a free one here
SERVER_CMD = re.compile(r"^\s*(python3? rewards/reward_server\.py|coderl-reward-server)\b")
# Environment variables a documented command may set that are read by a tool, not by the script it runs.
FOREIGN_ENV = {"WANDB_API_KEY", "CODERL_AUTH_TOKEN", "CODERL_REWARD_URL", "PYTHONPATH"}


@dataclass
class Block:
    doc: Path
    line: int  # 1-based line of the opening fence
    lang: str
    text: str
    kind: str | None = None  # the mark's kind; None = unmarked
    reason: str = ""

    @property
    def where(self) -> str:
        return f"{self.doc.relative_to(REPO_ROOT)}:{self.line}"

    @property
    def runs(self) -> bool:
        return self.kind is None and self.lang in ("bash", "python")


def extract(doc: Path) -> tuple[list[Block], list[str]]:
    """The fenced blocks of a Markdown file with their marks, and the problems found reading it (a mark with
    no fence after it, an unclosed fence)."""
    blocks, problems = [], []
    lines = doc.read_text(encoding="utf-8").splitlines()
    pending: tuple[int, re.Match] | None = None
    i = 0
    while i < len(lines):
        m = MARK.match(lines[i])
        if m:
            if pending:
                problems.append(f"{doc.name}:{pending[0] + 1}: a docs-test mark with no fence after it")
            pending = (i, m)
            i += 1
            continue
        f = FENCE.match(lines[i])
        if not f:
            if lines[i].strip() and pending:
                problems.append(f"{doc.name}:{pending[0] + 1}: a docs-test mark with no fence after it")
                pending = None
            i += 1
            continue
        start, body = i, []
        i += 1
        while i < len(lines) and lines[i].strip() != "```":
            body.append(lines[i])
            i += 1
        if i == len(lines):
            problems.append(f"{doc.name}:{start + 1}: a fence that is never closed")
        b = Block(doc, start + 1, f["lang"], textwrap.dedent("\n".join(body)) + "\n")
        if pending:
            b.kind, b.reason = pending[1]["kind"], (pending[1]["reason"] or "").strip()
            pending = None
        blocks.append(b)
        i += 1
    if pending:
        problems.append(f"{doc.name}:{pending[0] + 1}: a docs-test mark with no fence after it")
    return blocks, problems


ALL = [b for d in DOCS for b in extract(d)[0]]


# ----------------------------------------------------------------------------------- marks

def test_every_mark_is_known_has_a_reason_and_marks_a_fence():
    problems = [p for d in DOCS for p in extract(d)[1]]
    for b in ALL:
        if b.kind is None:
            continue
        if b.kind not in MARK_KINDS:
            problems.append(f"{b.where}: unknown docs-test kind {b.kind!r} (known: {', '.join(MARK_KINDS)})")
        if len(b.reason.split()) < 3:
            problems.append(f"{b.where}: the docs-test mark {b.kind!r} states no reason (a few words: what it "
                            "needs that a CPU machine lacks, or which test runs it)")
    assert not problems, "\n".join(problems)


def test_examples_are_found():
    """The extractor sees the examples (guards against a parser that silently finds nothing)."""
    runs = [b for b in ALL if b.runs]
    assert len(ALL) >= 30 and len(runs) >= 8, [b.where for b in runs]
    assert {b.doc.name for b in runs} >= {"evaluation.md", "integrations.md", "setup_guide.md", "sandbox.md"}


# ------------------------------------------------------------------------- static checks

def logical_lines(text: str) -> list[str]:
    """Shell lines with backslash continuations joined and heredoc bodies left out."""
    lines, cur, heredoc = [], "", None
    for raw in text.splitlines():
        if heredoc:
            if raw.strip() == heredoc:
                heredoc = None
            continue
        if raw.rstrip().endswith("\\"):
            cur += raw.rstrip()[:-1] + " "
            continue
        cur += raw
        m = re.search(r"<<-?\s*'?\"?(\w+)'?\"?", cur)
        if m:
            heredoc = m.group(1)
        lines.append(cur)
        cur = ""
    if cur:
        lines.append(cur)
    return lines


def commands(line: str) -> list[tuple[dict[str, str], list[str]]]:
    """The simple commands of a shell line: (VAR=value assignments before it, words)."""
    try:
        lex = shlex.shlex(line, posix=True, punctuation_chars=";&|")
        lex.whitespace_split = True
        lex.commenters = "#"
        words = list(lex)
    except ValueError:
        return []
    out_, cur = [], []
    for w in [*words, ";"]:
        if w and set(w) <= set(";&|"):
            if cur:
                env = {}
                while cur and re.match(r"^[A-Z_][A-Z0-9_]*=", cur[0]):
                    k, v = cur.pop(0).split("=", 1)
                    env[k] = v
                while cur and cur[0] in ("timeout", "env", "nice", "exec"):
                    cur.pop(0)
                    while cur and (re.match(r"^-|^\d+$", cur[0])):
                        cur.pop(0)
                if cur:
                    out_.append((env, cur))
            cur = []
        else:
            cur.append(w)
    return out_


SCRIPTS = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]["scripts"]


def _repo_path(word: str) -> Path | None:
    if word.startswith(("/", "../", "$", "~")) or not (REPO_ROOT / word.split("/")[0]).exists():
        return None  # a path of the user's machine (or one a command before it makes), not of this checkout
    return REPO_ROOT / word


@cache
def help_text(*cmd: str) -> str:
    proc = subprocess.run([*cmd, "--help"], capture_output=True, text=True, timeout=300, cwd=REPO_ROOT,
                          env={**os.environ, "PYTHONPATH": str(REPO_ROOT)})
    assert proc.returncode == 0, f"{' '.join(cmd)} --help: {out(proc)}"
    return proc.stdout + proc.stderr


def _script_text(path: Path) -> str:
    """A shell script's text and that of the scripts it sources (its knobs may be read there)."""
    text = path.read_text(encoding="utf-8")
    for name in re.findall(r"(?:^|\n)\s*(?:source|\.)\s+[^\n]*?([\w.-]+\.sh)", text):
        text += "".join(p.read_text(encoding="utf-8") for p in REPO_ROOT.glob(f"scripts/**/{name}"))
    return text


def check_command(env: dict[str, str], words: list[str]) -> list[str]:
    """What a documented command names that the code does not have; [] when it is a command this test does not
    know (pip, curl, conda, ...)."""
    prog, args = words[0], words[1:]
    helper: tuple[str, ...] | None = None
    script: Path | None = None
    if prog in ("python", "python3") and args:
        if args[0] == "-m" and len(args) > 1 and args[1].startswith(("coderl.", "scripts.")):
            mod, args = args[1], args[2:]
            rel = mod.removeprefix("coderl.").replace(".", "/")
            if not any((REPO_ROOT / f"{rel}{ext}").exists() for ext in (".py", "/__init__.py")):
                return [f"no module {mod}"]
            helper = (sys.executable, "-m", mod)
        elif args[0].endswith(".py"):
            path = _repo_path(args[0])
            if path is None:
                return []
            if not path.is_file():
                return [f"no file {args[0]}"]
            helper, args = (sys.executable, str(path)), args[1:]
        else:
            return []
    elif prog == "bash" and args and args[0].endswith(".sh"):
        script = _repo_path(args[0])
        if script is None:
            return []
        if not script.is_file():
            return [f"no file {args[0]}"]
        helper, args = ("bash", str(script)), args[1:]
    elif prog.startswith("coderl-"):
        if prog not in SCRIPTS:
            return [f"{prog} is not a console script of pyproject.toml"]
        mod, func = SCRIPTS[prog].split(":")
        helper = (sys.executable, "-c", f"import sys; from {mod} import {func}; sys.argv[0] = {prog!r}; "
                                        f"sys.exit({func}())")
    else:
        return []
    problems = []
    if script is not None:
        text = _script_text(script)
        problems += [f"{script.name} reads no {k}" for k in env
                     if k not in FOREIGN_ENV and not re.search(rf"\b{k}\b", text)]
    if args and re.match(r"^[a-z][\w-]*$", args[0]) and helper[1] == "-m" and re.search(
            rf"{{[\w,-]*\b{re.escape(args[0])}\b[\w,-]*}}", help_text(*helper)):
        helper = (*helper, args[0])  # a subcommand: its own flags
    flags = []
    for a in args:
        if a == "--":
            break
        if re.match(r"^--[a-z][\w-]*", a):
            flags.append(a.split("=", 1)[0])
    if flags:
        text = help_text(*helper)
        problems += [f"{' '.join(words[:2])}: {f} is not in its --help" for f in flags
                     if not re.search(rf"(?<![\w-]){re.escape(f)}(?![\w-])", text)]
    return problems


def static_problems(b: Block) -> list[str]:
    if b.lang == "bash":
        return [f"{b.where}: {p}" for line in logical_lines(b.text) for env, words in commands(line)
                for p in check_command(env, words)]
    if b.lang == "python" and not b.runs:  # a run example imports when it runs
        imports = "\n".join(ln for ln in b.text.splitlines() if re.match(r"^(from \S+ import .+|import \S+)", ln))
        proc = subprocess.run([sys.executable, "-c", imports], capture_output=True, text=True, timeout=300,
                              cwd=REPO_ROOT, env={**os.environ, "PYTHONPATH": str(REPO_ROOT)})
        return [] if proc.returncode == 0 else [f"{b.where}: its imports fail: {proc.stderr.strip()[-400:]}"]
    if b.lang == "json":
        try:
            json.loads(b.text)
        except json.JSONDecodeError as e:
            return [f"{b.where}: not JSON: {e}"]
    return []


@pytest.mark.parametrize("doc", DOCS, ids=lambda d: d.name)
def test_documented_commands_name_what_exists(doc):
    """Every fenced command, run here or not: its script or module exists, its flags are in its --help, its
    VAR= knobs are read by the script; every python example's imports import; every JSON example parses."""
    problems = [p for b in ALL if b.doc == doc for p in static_problems(b)]
    assert not problems, "\n".join(problems)


def test_the_checker_catches_a_flag_a_path_and_a_knob_that_do_not_exist():
    bad = Block(REPO_ROOT / "README.md", 0, "bash", "python data/preprocess.py --input_dir x --no_such_flag\n"
                "bash scripts/no_such.sh\nNO_SUCH_KNOB=1 bash scripts/learning_check.sh\n"
                "coderl-no-such --help\npython -m coderl.no_such\n")
    found = "\n".join(static_problems(bad))
    for what in ("--no_such_flag is not in its --help", "no file scripts/no_such.sh", "reads no NO_SUCH_KNOB",
                 "coderl-no-such is not a console script", "no module coderl.no_such"):
        assert what in found, found
    assert static_problems(Block(REPO_ROOT / "README.md", 0, "python", "from coderl.rewards import no_such\n",
                                 kind="fragment", reason="a piece of a longer program"))  # not run: imports checked


# ------------------------------------------------------------------------------- running

HE_TASKS = 4  # HumanEval problems in the workspace's raw/ parquet


def answering_at_once(path: Path) -> Path:
    """tests/support.py's tiny checkpoint, made to end every answer at once: one residual dimension carries a
    large constant, and only the end token reads it, so generating with the docs' --max_new_tokens 1024
    costs one step per sample (a random model would write all 1024 tokens)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tiny_checkpoint(path)
    eos = AutoTokenizer.from_pretrained(path).eos_token_id
    model = AutoModelForCausalLM.from_pretrained(path, tie_word_embeddings=False)
    with torch.no_grad():
        model.model.embed_tokens.weight[:, 0] = 10.0
        model.model.norm.weight.zero_()
        model.model.norm.weight[0] = 1.0
        model.lm_head.weight.zero_()
        model.lm_head.weight[eos, 0] = 50.0
    model.save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    """What every document's workspace starts from: links to the checkout's folders, raw/ (a HumanEval
    parquet), samples.jsonl (a right and a wrong answer per problem), the tiny model where the docs put
    models, and bin/ (python, the console scripts)."""
    root = tmp_path_factory.mktemp("docs_base")
    for name in ("coderl", "configs", "data", "docs", "launch", "learning_check", "patches", "rewards", "scripts",
                 "pyproject.toml"):
        (root / name).symlink_to(REPO_ROOT / name)
    he = humaneval_rows()[:HE_TASKS]
    cols = ("task_id", "prompt", "canonical_solution", "test", "entry_point")
    (root / "raw").mkdir()
    write_parquet(root / "raw" / "humaneval.parquet", [{c: r[c] for c in cols} for r in he])
    # HumanEval is a benchmark (all of it goes to test.jsonl): training examples need a training set beside it
    write_parquet(root / "raw" / "coderm.parquet", coderm_rows(8))
    write_jsonl(root / "samples.jsonl", [
        {"task_id": r["task_id"], "completion": think(r["prompt"] + body)}
        for r in he for body in (r["canonical_solution"], "    return None\n")])
    answering_at_once(root / "models" / "tiny")
    # the model the learning check's dry run leaves (docs/integrations.md's TRL example trains it)
    shutil.copytree(root / "models" / "tiny", root / "runs" / "learning_check" / "seed1" / "sft")
    bin_ = root / "bin"
    bin_.mkdir()
    for name in ("python", "python3"):  # a wrapper, not a link: a link to a venv's python is outside the venv
        (bin_ / name).write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
        (bin_ / name).chmod(0o755)
    for name, target in SCRIPTS.items():
        mod, func = target.split(":")
        (bin_ / name).write_text(f"#!{sys.executable}\nimport sys\nfrom {mod} import {func}\nsys.exit({func}())\n")
        (bin_ / name).chmod(0o755)
    return root


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


PRELUDE = r"""
set -euo pipefail
# serve CMD...: a reward server in the background (stopping the one before: the docs reuse the port),
# returned once it listens
serve() {
  stop_servers
  N=$(( ${N:-0} + 1 ))
  "$@" > "server.$N.log" 2>&1 &
  echo $! >> .docs_test_pids
  for _ in $(seq 240); do
    grep -q "listening on" "server.$N.log" && return 0
    kill -0 "$(tail -1 .docs_test_pids)" 2>/dev/null || { cat "server.$N.log"; return 1; }
    sleep 0.5
  done
  cat "server.$N.log"; return 1
}
stop_servers() {
  [[ -f .docs_test_pids ]] || return 0
  while read -r pid; do
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
  done < .docs_test_pids
  : > .docs_test_pids
}
"""


def runnable(b: Block, port: int) -> str:
    """The example as this test runs it: placeholders replaced, a reward server started in the background."""
    text = b.text
    for k, v in PLACEHOLDERS.items():
        text = text.replace(k, v)
    text = re.sub(rf"(--port |localhost:|127\.0\.0\.1:){PORT}\b", rf"\g<1>{port}", text)
    if b.lang == "python":
        return text
    raw, lines, heredoc, i = text.splitlines(), [], None, 0
    while i < len(raw):
        if heredoc:  # a heredoc's body as written
            lines.append(raw[i])
            heredoc = None if raw[i].strip() == heredoc else heredoc
            i += 1
            continue
        j, line = i, raw[i]
        while line.rstrip().endswith("\\") and j + 1 < len(raw):
            j += 1
            line = line.rstrip()[:-1] + " " + raw[j]
        if SERVER_CMD.match(line):
            lines.append("serve " + re.sub(r"\s*&\s*$", "", line.strip()))
        else:
            lines.extend(raw[i:j + 1])
        if m := re.search(r"<<-?\s*'?\"?(\w+)'?\"?", line):
            heredoc = m.group(1)
        i = j + 1
    return PRELUDE + "\n".join(lines) + "\n"


# results_log.md is the history of measured runs: its commands are records of what ran then, not instructions.
RUN_DOCS = sorted({b.doc for b in ALL if b.runs and b.doc.name != "results_log.md"}, key=lambda d: d.name)


@pytest.mark.slow
@pytest.mark.parametrize("doc", RUN_DOCS, ids=lambda d: d.name)
def test_examples_run_as_written(doc, base, tmp_path):
    """The document's unmarked examples, in order, in one workspace: each exits 0."""
    ws = tmp_path / "ws"
    shutil.copytree(base, ws, symlinks=True)
    port = _free_port()
    env = {**os.environ, "PATH": f"{ws / 'bin'}{os.pathsep}{os.environ['PATH']}", "PYTHONPATH": str(REPO_ROOT),
           "HF_HOME": str(ws / ".hf"), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "TRANSFORMERS_OFFLINE": "1", "WANDB_MODE": "disabled", "PYTHONUNBUFFERED": "1"}
    try:
        for b in [b for b in ALL if b.doc == doc and b.runs]:
            src = runnable(b, port)
            if b.lang == "python":
                (ws / "example.py").write_text(src)
                cmd = [sys.executable, "example.py"]
            else:
                cmd = ["bash", "-c", src]
            proc = subprocess.run(cmd, cwd=ws, env=env, capture_output=True, text=True, timeout=600)
            logs = "".join(f"\n--- {p.name}\n{p.read_text()[-3000:]}" for p in sorted(ws.glob("server.*.log")))
            assert proc.returncode == 0, f"{b.where} failed as written:\n{b.text}\n{out(proc)}{logs}"
    finally:
        subprocess.run(["bash", "-c", PRELUDE + "stop_servers"], cwd=ws, timeout=60)

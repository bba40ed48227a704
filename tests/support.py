"""Helpers shared by the test modules: paths, the queries OpenRLHF sends, the real server as a subprocess,
data files, the OpenRLHF wheels and patches, the launch scripts, and tiny real checkpoints/tokenizers."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import subprocess
import sys
import zipfile
from pathlib import Path

from coderl.rewards.labels import Label

REPO_ROOT = Path(__file__).resolve().parents[1]

# Shared with the benchmarks (a benchmark never imports the test suite): defined in scripts/bench/workloads.py.
from scripts.bench import workloads as _workloads  # noqa: E402

PARTIAL_RATE, PROBLEMS, SERVER = _workloads.PARTIAL_RATE, _workloads.PROBLEMS, _workloads.SERVER
SYSTEM_BLOCK, SYSTEM_THINK, ServerProc = _workloads.SYSTEM_BLOCK, _workloads.SYSTEM_THINK, _workloads.ServerProc
chatml, chatml_prompt, label_json = _workloads.chatml, _workloads.chatml_prompt, _workloads.label_json
humaneval_rows, rows, write_jsonl = _workloads.humaneval_rows, _workloads.rows, _workloads.write_jsonl


def out(proc: subprocess.CompletedProcess) -> str:
    """A finished process's exit code and output, for assertion messages and substring checks."""
    return f"rc={proc.returncode}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"


def python_json(script: str, *args, timeout: float = 60.0):
    """Run `script` in a fresh interpreter (for what must not happen to the test process: a seccomp filter,
    Landlock, dropped capabilities, an audit hook are all for good) and return the JSON its last stdout line
    holds."""
    proc = subprocess.run([sys.executable, "-c", script, *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, cwd=str(REPO_ROOT))
    assert proc.returncode == 0 and proc.stdout.strip(), out(proc)
    return json.loads(proc.stdout.strip().splitlines()[-1])


# ------------------------------------------------------------------------ queries as OpenRLHF sends them
# Queries are built the way OpenRLHF 0.5.7 builds them: tokenizer.batch_decode(sequences,
# skip_special_tokens=False) of left-padded prompt + response + EOS + right pads, rendered here as text for
# the Qwen2.5 (ChatML) and Llama-3 chat templates, and for a raw un-templated prompt (ChatML: workloads.py).

def llama3(system: str, user: str, response: str, left_pads: int = 2, right_pads: int = 2) -> str:
    """Llama-3 instruct template (the template trims message content)."""
    sys_part = f"<|start_header_id|>system<|end_header_id|>\n\n{system.strip()}<|eot_id|>" if system else ""
    return ("<|end_of_text|>" * left_pads + "<|begin_of_text|>" + sys_part
            + f"<|start_header_id|>user<|end_header_id|>\n\n{user.strip()}<|eot_id|>"
            + f"<|start_header_id|>assistant<|end_header_id|>\n\n{response}<|eot_id|>"
            + "<|end_of_text|>" * right_pads)


def raw(user: str, response: str, left_pads: int = 2, right_pads: int = 1) -> str:
    """An un-templated prompt: pads + user content + response + EOS + pads."""
    return "<|endoftext|>" * left_pads + user + response + "<|endoftext|>" * (right_pads + 1)


def think(code: str) -> str:
    """A response in the think/answer format SYSTEM_THINK asks for."""
    return f"<think>\nLet me write it.\n</think>\n<answer>\n```python\n{code}\n```\n</answer>"


def block(code: str) -> str:
    return f"Here is the solution:\n```python\n{code}\n```"


def filler_rows(n: int, start: int = 0) -> list[dict]:
    """Distinct extra problems (all 'assert' format) to make the dataset bigger."""
    out = []
    for i in range(start, start + n):
        lab = Label(format="assert", entry_point=f"f{i}", tests=(f"assert f{i}() == {i}",), source="test",
                    source_id=f"filler-{i}", extra={"answer_format": "think_answer"}).to_json()
        out.append({"input": [{"role": "system", "content": SYSTEM_THINK},
                              {"role": "user", "content": f"Problem {i}: write f{i}() returning {i}. "
                                                          f"Details: {'lorem ipsum ' * (i % 7)}"}],
                    "label": lab})
    return out


def graded_batch() -> tuple[list[str], list[str]]:
    """Responses (no prompt, as TRL and verl pass them) and their labels: per format full, partial,
    unformatted and no code."""
    texts, labels = [], []
    for fmt, (_, _, good, partial) in PROBLEMS.items():
        texts += [think(good), think(partial), block(good), "I cannot solve this."]
        labels += [label_json(fmt)] * 4
    return texts, labels


# ------------------------------------------------------------------------------------ the reward server
def run_server_expecting_exit(args: list[str], timeout_s: float = 60.0) -> subprocess.CompletedProcess:
    """Run the server CLI where it must refuse to start; returns the finished process."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.run([sys.executable, str(SERVER), *args], capture_output=True, text=True,
                          timeout=timeout_s, cwd=str(REPO_ROOT), env=env)


# ----------------------------------------------------------------------------------------- data files
PREPROCESS = REPO_ROOT / "data" / "preprocess.py"


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def write_parquet(path: Path, rows: list[dict], schema=None, row_group_size=None) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path, row_group_size=row_group_size)
    return path


def run_cli(*args, check: bool = True) -> subprocess.CompletedProcess:
    """data/preprocess.py as a user runs it (cwd=/: it must work from anywhere)."""
    p = subprocess.run([sys.executable, str(PREPROCESS), "--no_progress", *map(str, args)],
                       capture_output=True, text=True, timeout=300, cwd="/")
    if check:
        assert p.returncode == 0, p.stderr
    return p


# CodeRM-UnitTest rows built in code (the preprocessing and --verify tests).
ADD_REF = "def add(a, b):\n    return a + b\n\n\ndef _helper(x):\n    return x\n"
ADD_UT = ("import unittest\n\nclass TestAdd(unittest.TestCase):\n"
          "    def test_small(self):\n        self.assertEqual(add(1, 2), 3)\n"
          "    def test_neg(self):\n        self.assertEqual(add(-1, 1), 0)\n")
STACK_REF = ("class MinStack:\n    def __init__(self):\n        self.s = []\n\n"
             "    def push(self, x: int) -> None:\n        self.s.append(x)\n\n"
             "    def get_min(self) -> int:\n        return min(self.s)\n\n"
             "    def _private(self):\n        pass\n")
STACK_UT = ("import unittest\nclass T(unittest.TestCase):\n    def test_min(self):\n"
            "        s = MinStack()\n        s.push(3)\n        s.push(1)\n        self.assertEqual(s.get_min(), 1)\n")


def coderm_rows(n_extra: int = 0) -> list[dict]:
    rows = [
        {"task_id": 1, "question": "Add two numbers.", "code_ground_truth": ADD_REF,
         "code_generate": json.dumps([{"sol_id": 0, "code": "x"}]),
         "unit_tests": json.dumps([{"ut_id": 0, "code": ADD_UT}, {"ut_id": 1, "code": ADD_UT.replace("3)", "3) ")}])},
        {"task_id": 2, "question": "Implement a min stack.", "code_ground_truth": STACK_REF, "code_generate": None,
         "unit_tests": json.dumps([{"ut_id": 0, "code": STACK_UT}])},
        # duplicate of row 0 after normalisation (case, whitespace)
        {"task_id": 3, "question": "  add TWO\n numbers. ", "code_ground_truth": ADD_REF, "code_generate": None,
         "unit_tests": json.dumps([{"ut_id": 0, "code": ADD_UT}])},
    ]
    for i in range(n_extra):
        rows.append({"task_id": 100 + i, "question": f"Problem number {i}: add numbers.",
                     "code_ground_truth": ADD_REF, "code_generate": None,
                     "unit_tests": json.dumps([{"ut_id": 0, "code": ADD_UT}])})
    return rows


def read_out(out: Path) -> tuple[list[dict], dict]:
    rows = read_jsonl(out / "train.jsonl") + read_jsonl(out / "test.jsonl")
    return rows, json.loads((out / "stats.json").read_text())


def humaneval_data(tmp: Path) -> Path:
    """HumanEval parquet -> data/preprocess.py (in-process, every row to test.jsonl) -> test.jsonl."""
    from coderl.data.preprocess import main

    cols = ("task_id", "prompt", "canonical_solution", "test", "entry_point")
    write_parquet(tmp / "he.parquet", [{c: r[c] for c in cols} for r in humaneval_rows()])
    assert main(["--input_dir", str(tmp / "he.parquet"), "--output_dir", str(tmp / "data"), "--test_ratio", "1",
                 "--no_progress"]) == 0
    return tmp / "data" / "test.jsonl"


TOY = {  # task_id: (user prompt, assert tests, a correct solution)
    "add": ("Write add(a, b) returning the sum.", ["assert add(1, 2) == 3", "assert add(-1, 1) == 0"],
            "def add(a, b):\n    return a + b\n"),
    "neg": ("Write neg(x) returning -x.", ["assert neg(2) == -2", "assert neg(0) == 0", "assert neg(-5) == 5"],
            "def neg(x):\n    return -x\n"),
    "first": ("Write first(xs) returning the first item.", ["assert first([3, 4]) == 3"],
              "def first(xs):\n    return xs[0]\n"),
}


def toy_data(path: Path, task_ids=tuple(TOY)) -> Path:
    """A data JSONL in data/preprocess.py's row format with assert-format labels."""
    with path.open("w") as f:
        for tid in task_ids:
            user, tests, _ = TOY[tid]
            label = Label(format="assert", tests=tuple(tests), entry_point=tid, source="toy", source_id=tid,
                          extra={"answer_format": "think_answer"})
            f.write(json.dumps({"input": [{"role": "system", "content": SYSTEM_THINK},
                                          {"role": "user", "content": user}], "label": label.to_json()}) + "\n")
    return path


def write_samples(path: Path, rows: list[tuple[str, str]]) -> Path:
    """An evaluation samples file: one {"task_id", "completion"} per row."""
    return write_jsonl(path, [{"task_id": tid, "completion": comp} for tid, comp in rows])


# ------------------------------------------------------------------------------- OpenRLHF and patches
APPLY_PATCHES = REPO_ROOT / "patches" / "apply_patches.sh"
_PURELIB = re.compile(r"^openrlhf-[^/]+\.data/purelib/")  # where a wheel keeps the package


def unpack_wheel(wheel: Path, dest: Path) -> Path:
    """Unpack the wheel into a site-packages-like dir: dest/openrlhf/ and dest/openrlhf-<version>.dist-info/."""
    with zipfile.ZipFile(wheel) as zf:
        for info in zf.infolist():
            name = _PURELIB.sub("", info.filename)
            if info.is_dir() or not name:
                continue
            target = dest / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(zf.read(info))
    assert (dest / "openrlhf" / "__init__.py").is_file(), f"{wheel} has no openrlhf/"
    return dest


def run_script(target: Path, *args: str, verify_help: str = "0", **env: str) -> subprocess.CompletedProcess:
    """patches/apply_patches.sh TARGET ARGS..."""
    full_env = {**os.environ, "PYTHON": sys.executable, "VERIFY_HELP": verify_help, **env}
    return subprocess.run(["bash", str(APPLY_PATCHES), str(target), *args], capture_output=True, text=True,
                          env=full_env, timeout=240)


def patch_tree(root: Path, only: str | None = None) -> None:
    """Apply all our patches with patches/apply_patches.sh, or just one patch file with GNU patch."""
    if only is None:
        proc = run_script(root)
    else:
        proc = subprocess.run(["patch", "-p1", "-d", str(root), "-i", str(REPO_ROOT / "patches" / only)],
                              capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, out(proc)


def snapshot(root: Path) -> dict[str, str]:
    """sha256 of every file under root/openrlhf (pycache excluded)."""
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted((root / "openrlhf").rglob("*")) if p.is_file() and "__pycache__" not in p.parts}


def import_patched_openrlhf(root: Path) -> None:
    """Make `import openrlhf` resolve to root/openrlhf for this process (dropping any other copy)."""
    forget_openrlhf(root)
    sys.path.insert(0, str(root))
    import openrlhf

    assert Path(openrlhf.__file__).resolve().parent == (root / "openrlhf").resolve()


def forget_openrlhf(root: Path) -> None:
    for name in [m for m in sys.modules if m == "openrlhf" or m.startswith("openrlhf.")]:
        del sys.modules[name]
    while str(root) in sys.path:
        sys.path.remove(str(root))


# ------------------------------------------------------------------------------------ launch scripts
RAY_SCRIPT = REPO_ROOT / "scripts" / "train_grpo_7b_zero2.sh"
SINGLE_SCRIPT = REPO_ROOT / "scripts" / "train_grpo_7b_zero2_single_node.sh"
FAIL_RE = re.compile(r"\[preflight\] FAIL (\w+): (.*)")


def data_row(user: str = "Write add(a, b).", label: dict | str | None = None, input_=None) -> str:
    label = label if label is not None else {"format": "assert", "entry_point": "add",
                                             "tests": ["assert add(1, 2) == 3"], "source": "t", "source_id": "1",
                                             "extra": {"answer_format": "code_block"}}
    msgs = input_ if input_ is not None else [{"role": "system", "content": "Answer in one python block."},
                                              {"role": "user", "content": user}]
    return json.dumps({"input": msgs, "label": label if isinstance(label, str) else json.dumps(label)})


def write_data(path: Path, rows: list[str]) -> Path:
    path.write_text("".join(r + "\n" for r in rows))
    return path


def fake_nvidia_smi(bin_dir: Path, gpus: list[tuple[str, int]], driver: str = "535.104.05") -> Path:
    """A FAKE nvidia-smi (this machine has no GPU): answers the queries preflight.py and setup_env.sh make."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    drivers = "".join(f"{driver}\n" for _ in gpus)
    mems = "".join(f"{i}, GPU-{i:08d}, {name}, {mib}\n" for i, (name, mib) in enumerate(gpus))
    names = "".join(f"GPU {i}: {name} (UUID: GPU-{i:08d})\n" for i, (name, _) in enumerate(gpus))
    script = bin_dir / "nvidia-smi"
    script.write_text(
        "#!/bin/sh\n# FAKE nvidia-smi for tests: this machine has no GPU.\n"
        'case "$*" in\n'
        f"  *driver_version*) printf '%s' '{drivers}' ;;\n"
        f"  *memory.total*) printf '%s' '{mems}' ;;\n"
        f"  -L) printf '%s' '{names}' ;;\n"
        "esac\n")
    script.chmod(0o755)
    return script


def run_train(script: Path, env: dict, timeout: int = 240) -> subprocess.CompletedProcess:
    """Run a launch script with the test's env on top of a clean one (PYTHONPATH only if given)."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHONPATH", "CUDA_VISIBLE"))}
    base.update({"TRAIN_PYTHON": sys.executable, "PYTHONUNBUFFERED": "1"})
    base.update(env)
    return subprocess.run(["bash", str(script)], capture_output=True, text=True, env=base, timeout=timeout,
                          cwd=str(REPO_ROOT))


def command_words(stdout: str, module: str) -> list[str]:
    """The OpenRLHF flags of the command a DRY_RUN printed (after `-m/--module <module>`)."""
    words = shlex.split(stdout.replace("\\\n", " "))
    i = words.index(module)
    return words[i + 1:]


def flag_value(words: list[str], flag: str) -> str | None:
    """Value of --flag (the last one wins, as argparse does); None if absent."""
    val = None
    for i, w in enumerate(words):
        if w == flag:
            val = words[i + 1] if i + 1 < len(words) and not words[i + 1].startswith("--") else ""
    return val


# ------------------------------------------------------------------- tiny real tokenizers and models
CHATML_TEMPLATE = ("{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\n' + message['content'] "
                   "+ '<|im_end|>' + '\n' }}{% endfor %}{% if add_generation_prompt %}"
                   "{{ '<|im_start|>assistant\n' }}{% endif %}")


def tiny_checkpoint(out_dir: Path) -> Path:
    """A byte-level BPE tokenizer with ChatML specials and template, and a random ~100k-parameter Qwen2."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    corpus = [SYSTEM_THINK, *(u + s for u, _, s in TOY.values())] * 4
    tok.train_from_iterator(corpus, trainers.BpeTrainer(
        vocab_size=400, special_tokens=["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                   chat_template=CHATML_TEMPLATE, padding_side="left")
    fast.save_pretrained(out_dir)
    torch.manual_seed(0)
    cfg = Qwen2Config(vocab_size=len(fast), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=2048,
                      tie_word_embeddings=True, eos_token_id=fast.eos_token_id, pad_token_id=fast.pad_token_id)
    Qwen2ForCausalLM(cfg).save_pretrained(out_dir)
    return out_dir


def openrlhf_preprocess_data(wheel: Path):
    """OpenRLHF 0.5.7's prompt builder (datasets/prompts_dataset.py preprocess_data), loaded from the release
    wheel: the reference for the prompt text training sees."""
    import types
    import zipfile

    with zipfile.ZipFile(wheel) as z:
        name = next(n for n in z.namelist() if n.endswith("openrlhf/datasets/prompts_dataset.py"))
        src = z.read(name).decode()
    mod = types.ModuleType("openrlhf_prompts_dataset")
    exec(compile(src, name, "exec"), mod.__dict__)
    return mod.preprocess_data


INTEGRATION_TASKS = ("HumanEval/0", "HumanEval/2")  # the HumanEval rows the trainer-integration tests use


def answer_chunks(he: dict[str, dict]) -> list[str]:
    """Answers to INTEGRATION_TASKS that coderl scores differently: all tests, some tests, format off, no code."""
    h0, h2 = he["HumanEval/0"], he["HumanEval/2"]
    return [think(h0["prompt"] + h0["canonical_solution"]),                      # all tests of /0
            think("def has_close_elements(numbers, threshold):\n    return True"),  # some tests of /0
            think(h2["prompt"] + h2["canonical_solution"]),                      # all tests of /2
            f"```python\n{h2['prompt'] + h2['canonical_solution']}\n```",          # /2, format off
            "I am not sure how to solve this."]                                   # no code


def tiny_tokenizer(path: Path, chunks: list[str]):
    """A real HF fast tokenizer whose tokens are whole answers: the specials plus one token per chunk, a
    ChatML template; saved to path (drives TRL and verl on CPU with a random model)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    specials = ["<unk>", "<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    vocab = {t: i for i, t in enumerate(specials + chunks)}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Split("\x00", "isolated")  # never splits: any other text is one <unk>
    tok.decoder = decoders.Fuse()  # chunks concatenate back verbatim
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", pad_token="<|endoftext|>",
                                   eos_token="<|im_end|>", additional_special_tokens=["<|im_start|>"],
                                   chat_template=CHATML_TEMPLATE, padding_side="left")
    fast.save_pretrained(path)
    return fast


def trl_rows(tmp: Path) -> tuple[Path, dict[str, dict]]:
    """The preprocessor's TRL rows for INTEGRATION_TASKS (tmp/out/train.jsonl), and the HumanEval records
    they come from."""
    from coderl.rewards.labels import TRL_LABEL_COLUMN, parse_label

    he = {r["task_id"]: r for r in humaneval_rows()}
    write_parquet(tmp / "in" / "he.parquet", [he[t] for t in INTEGRATION_TASKS])
    run_cli("--input_dir", tmp / "in", "--output_dir", tmp / "out", "--output_format", "trl", "--test_ratio", "0",
            "--splits", "hash")  # HumanEval, a benchmark, as training rows
    rows = read_jsonl(tmp / "out" / "train.jsonl")
    assert [parse_label(r[TRL_LABEL_COLUMN]).source_id for r in rows] == list(INTEGRATION_TASKS)
    assert all(set(r) == {"prompt", TRL_LABEL_COLUMN} for r in rows)
    assert all([m["role"] for m in r["prompt"]] == ["system", "user"] for r in rows)
    return tmp / "out" / "train.jsonl", he


def coderl_breakdowns(config: Path, batches: list[tuple[list[str], list[str]]]) -> list[list]:
    """coderl's own scoring (RewardBreakdowns) of each (texts, labels) batch, in a pool of the adapter's config."""
    from coderl.rewards.config import load_config
    from coderl.rewards.executors import LocalExecutor
    from coderl.rewards.pipeline import Scorer, score

    cfg = load_config(config)
    scorer = Scorer(cfg.reward)
    with LocalExecutor(cfg.sandbox) as executor:
        return [score(scorer, executor, list(texts), None, list(labels)) for texts, labels in batches]

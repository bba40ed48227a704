"""scripts/gpu_smoke.sh on CPU: DRY_RUN=1 builds the small model's config from a real local model dir (with
a real tokenizer), starts the real reward server on real data and runs the real launch script's preflight
and memory plan against it. Training itself needs a GPU and is not run here (DRY rows say so)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import REPO_ROOT, data_row, out, write_data

SMOKE = REPO_ROOT / "scripts" / "gpu_smoke.sh"
pytestmark = pytest.mark.timeout(300)


def tiny_model_dir(path: Path) -> Path:
    """A Qwen2 config.json and a word-level tokenizer with a ChatML template: a local MODEL, no download."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast, Qwen2Config

    Qwen2Config(hidden_size=64, intermediate_size=128, num_hidden_layers=6, num_attention_heads=4,
                num_key_value_heads=2, vocab_size=256, max_position_embeddings=4096).save_pretrained(path)
    words = ["<unk>", "<|im_start|>", "<|im_end|>", "user", "assistant", "system"] + [f"w{i}" for i in range(50)]
    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", eos_token="<|im_end|>",
                                   pad_token="<unk>")
    fast.chat_template = ("{% for m in messages %}<|im_start|> {{ m['role'] }} {{ m['content'] }} <|im_end|> "
                          "{% endfor %}{% if add_generation_prompt %}<|im_start|> assistant {% endif %}")
    fast.save_pretrained(path)
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def smoke(tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    base = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "TRAIN_PYTHON": sys.executable,
            "SMOKE_DIR": str(tmp_path / "smoke"), "PORT": str(free_port()), "HOME": str(tmp_path)}
    return subprocess.run(["bash", str(SMOKE)], env={**base, **env}, capture_output=True, text=True, timeout=280)


def test_dry_run_on_cpu(tmp_path):
    model = tiny_model_dir(tmp_path / "target")
    data = write_data(tmp_path / "train.jsonl", [data_row("Write add(a, b) returning a + b."),
                                                 data_row("Write sub(a, b) returning a - b.")])
    proc = smoke(tmp_path, DRY_RUN="1", MODEL=str(model), DATA=str(data), PREFLIGHT_SKIP="openrlhf")
    assert proc.returncode == 0, out(proc)
    table = proc.stdout
    for row in ("model", "reward_server", "plan"):
        assert f"\n{row:<26} PASS" in table, (row, table)
    assert f"\n{'train_ray':<26} DRY" in table and "SMOKE PASS (ray path" in table and "nothing trained" in table
    d = tmp_path / "smoke"
    assert json.loads((d / "model_small" / "config.json").read_text())["num_hidden_layers"] == 2
    plan = json.loads((d / "plan_ray.json").read_text())
    assert plan["gpu_peak_gib"] > 0 and plan["host_peak_gib"] > 0
    assert plan["inputs"]["shape"]["layers"] == 2 and plan["inputs"]["generate_tokens"] == 128
    assert plan["inputs"]["prompt_tokens_source"].startswith("longest of 2 prompts in DATA")
    train_log = (d / "train_ray.log").read_text()
    assert "[preflight] ok   server" in train_log, "preflight talked to the smoke's own reward server"
    summary = json.loads((d / "summary_ray.json").read_text())
    assert summary["verdict"] == "PASS" and {c["check"] for c in summary["checks"]} >= {"model", "plan"}


def test_bad_model_fails_the_table(tmp_path):
    data = write_data(tmp_path / "train.jsonl", [data_row()])
    proc = smoke(tmp_path, DRY_RUN="1", MODEL=str(tmp_path / "no_such_model"), DATA=str(data), SINGLE_NODE="1")
    assert proc.returncode == 1, out(proc)
    assert f"\n{'model':<26} FAIL" in proc.stdout and "SMOKE FAIL (single path" in proc.stdout
    model_row = next(line for line in proc.stdout.splitlines() if line.startswith("model "))
    assert "no_such_model" in model_row and "Traceback" not in model_row, "the row holds the exception line"
    missing = smoke(tmp_path, DATA=str(tmp_path / "nope.jsonl"))
    assert missing.returncode == 2 and "nope.jsonl not found" in missing.stderr, out(missing)


def test_train_python_without_torch_is_named(tmp_path):
    """The quickstart venv has no torch: the smoke says which interpreter lacks what, before any step."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "bare")], check=True, timeout=120)
    data = write_data(tmp_path / "train.jsonl", [data_row()])
    proc = smoke(tmp_path, DRY_RUN="1", DATA=str(data), TRAIN_PYTHON=str(tmp_path / "bare" / "bin" / "python"))
    assert proc.returncode == 2, out(proc)
    assert "cannot import torch, transformers" in proc.stderr and "bash scripts/test.sh" in proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout

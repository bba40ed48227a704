"""The learning check's CPU parts: tokenizer, model, SFT, report from real tensorboard files, and
scripts/learning_check.sh TRAINER=openrlhf DRY_RUN=1 end to end (real task, preprocess --verify, reward server
over HTTP, SFT, HF evaluation in the sandbox, the launch script's own DRY_RUN, report). No GPU: OpenRLHF's
GRPO itself is not run (TRL's is: tests/learning_check/test_trl_grpo.py)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from coderl.learning_check import report
from coderl.learning_check.model import build_model, save_model
from coderl.learning_check.sft import SFTConfig, encode_examples, response_for, train
from coderl.learning_check.tokenizer import build_tokenizer
from coderl.rewards.extract import extract_code, format_ok
from tests.support import REPO_ROOT

SCRIPT = REPO_ROOT / "scripts" / "learning_check.sh"
pytestmark = pytest.mark.timeout(300)

MSG = [{"role": "system", "content": "Answer with one code block."},
       {"role": "user", "content": "Write a function f(x) where x is an integer. Apply these steps: add 3."}]
CODE = "def f(x):\n    x = x + 3\n    return x\n"


@pytest.fixture(scope="module")
def tok():
    return build_tokenizer([json.dumps(MSG), response_for(CODE, "code_block")] * 20, vocab_size=300)


def test_tokenizer_round_trips_and_renders_chatml(tok):
    s = "f([12, -3]) returns 'zzab'\n    x = x * 7"
    assert tok.decode(tok(s)["input_ids"]) == s
    p = tok.apply_chat_template(MSG, tokenize=False, add_generation_prompt=True)
    assert p.startswith("<|im_start|>system\n") and p.endswith("<|im_start|>assistant\n")
    assert tok.eos_token == "<|im_end|>" and tok.pad_token_id != tok.eos_token_id


@pytest.mark.parametrize("fmt", ["code_block", "think_answer"])
def test_response_is_in_format_and_extracts_to_the_reference(fmt):
    resp = response_for(CODE, fmt)
    got = extract_code(resp)
    assert got.code.strip() == CODE.strip() and format_ok(resp, fmt, got)


def test_sft_lowers_the_loss_and_saves_a_loadable_model(tok, tmp_path):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = build_model(tok, "nano", seed=0)
    examples = [(MSG, response_for(CODE, "code_block"))] * 8
    recs = train(model, tok, examples, SFTConfig(steps=30, batch_size=4, lr=3e-3, warmup_steps=3, log_every=10))
    assert recs[-1]["loss"] < recs[0]["loss"] * 0.8
    save_model(model, tok, tmp_path / "m")
    again = AutoModelForCausalLM.from_pretrained(tmp_path / "m")
    assert again.config.eos_token_id == tok.eos_token_id
    assert AutoTokenizer.from_pretrained(tmp_path / "m").chat_template == tok.chat_template


def test_encode_rejects_an_example_over_max_len(tok):
    with pytest.raises(ValueError, match="example 0 has .* more than max_len=10"):
        encode_examples(tok, [(MSG, "x" * 50)], max_len=10)


def test_bad_model_shape_is_named(tok):
    with pytest.raises(ValueError, match="unknown model shape 'huge'"):
        build_model(tok, "huge")


def _fake_run(run: Path, before: float, after: float, rewards: list[float], extra: tuple[str, ...] = ()) -> None:
    from torch.utils.tensorboard import SummaryWriter

    for d, p1 in (("eval_before", before), ("eval_after", after)):
        (run / d).mkdir(parents=True)
        (run / d / "summary.json").write_text(json.dumps({"pass@1": p1, "pass@8": min(1.0, 2 * p1)}))
    w = SummaryWriter(log_dir=str(run / "grpo" / "tensorboard" / "x"))
    for i, r in enumerate(rewards, 1):
        w.add_scalar("train/reward", r, i)
        w.add_scalar("train/kl", 0.01 * i, i)
        for tag in extra:
            w.add_scalar(tag, 0.5, i)
    w.close()


def test_report_pass_fail_and_files(tmp_path):
    _fake_run(tmp_path / "a", 0.20, 0.40, [0.1, 0.2, 0.3, 0.4, 0.5, 0.6])
    _fake_run(tmp_path / "b", 0.20, 0.30, [0.1, 0.2, 0.3, 0.4, 0.5, 0.6])
    out = tmp_path / "rep"
    assert report.main(["--run", f"a={tmp_path / 'a'}", "--out", str(out)]) == 0
    j = json.loads((out / "report.json").read_text())
    assert j["pass"] and j["runs"]["a"]["gain_pass@1_points"] == 20.0 and j["runs"]["a"]["steps"] == 6
    assert j["runs"]["a"]["missing_metrics"] == ["train/response_length", "train/group_norm_fallback_frac"]
    assert j["runs"]["a"]["kl_max"] == pytest.approx(0.06) and j["machine"]["cores"] == os.cpu_count()
    assert (out / "curves.png").read_bytes()[:4] == b"\x89PNG"
    assert "| a | 20.0 | 40.0 | 40.0 | 80.0 |" in (out / "report.md").read_text()
    simd = torch.backends.cpu.get_cpu_capability()  # the same figures differ between AVX2 and AVX512 hosts
    assert j["machine"]["cpu_capability"] == simd and f"torch dispatching to {simd}" in (out / "report.md").read_text()
    assert report.main(["--run", f"a={tmp_path / 'a'}", "--run", f"b={tmp_path / 'b'}", "--out", str(out)]) == 1
    assert "b: pass@1 +10.0 < +15" in json.loads((out / "report.json").read_text())["verdict"]
    assert "GRPO_MAX_SECONDS" not in (out / "report.md").read_text()
    # a run GRPO_MAX_SECONDS cut short: the FAIL says so, as trl_grpo.py logged it
    cut = f"{report.TIME_LIMIT_PREFIX} stopping after step 6 of 130, where the schedule ended"
    (tmp_path / "b" / report.GRPO_LOG).write_text(f"step 6\n{cut}\n")
    assert report.main(["--run", f"a={tmp_path / 'a'}", "--run", f"b={tmp_path / 'b'}", "--out", str(out)]) == 1
    j = json.loads((out / "report.json").read_text())
    assert j["runs"]["b"]["time_limit_lines"] == [cut] and j["runs"]["a"]["time_limit_lines"] == []
    assert "(b stopped after 6 steps: GRPO_MAX_SECONDS cut GRPO short" in j["verdict"]
    assert f"- b: {cut}" in (out / "report.md").read_text()


def test_report_fails_a_gain_that_costs_pass_at_k(tmp_path):
    _fake_run(tmp_path / "a", 0.20, 0.40, [0.1, 0.2, 0.3, 0.4])
    after = tmp_path / "a" / "eval_after" / "summary.json"
    after.write_text(json.dumps({"pass@1": 0.40, "pass@8": 0.35}))  # before: pass@8 0.40
    ok, line = report.verdict({"a": report.summarize_run(tmp_path / "a")}, 15)
    assert not ok and "a: pass@8 falls (40.0 -> 35.0)" in line


def test_report_flat_reward_fails_and_missing_run_is_named(tmp_path, capsys):
    _fake_run(tmp_path / "a", 0.1, 0.5, [0.5, 0.5, 0.5])
    ok, line = report.verdict({"a": report.summarize_run(tmp_path / "a")}, 15)
    assert not ok and "a: training reward does not rise" in line
    assert report.main(["--run", f"z={tmp_path / 'nope'}", "--out", str(tmp_path / "r")]) == 2
    assert "run z" in capsys.readouterr().err and not (tmp_path / "r").exists()


def test_report_reads_trl_tags_and_says_what_trl_cannot_log(tmp_path):
    _fake_run(tmp_path / "a", 0.20, 0.35, [0.1, 0.2, 0.3, 0.4], extra=(
        "train/completions/mean_length", "train/rewards/coderl/all_passed/mean"))
    (tmp_path / "a" / "timings.jsonl").write_text('{"stage": "grpo", "seconds": 300, "cpu_seconds": 410.5, "load1": 2.5}\n')
    (tmp_path / "shared.jsonl").write_text('{"stage": "task", "seconds": 4, "load1": 1.0}\n')
    out = tmp_path / "rep"
    assert report.main(["--run", f"a={tmp_path / 'a'}", "--out", str(out), "--trainer", "trl", "--target_points", "10",
                        "--shared_timings", str(tmp_path / "shared.jsonl")]) == 0
    j = json.loads((out / "report.json").read_text())
    assert j["runs"]["a"]["missing_metrics"] == [] and j["trainer"] == "trl"
    assert [v for _, v in j["runs"]["a"]["curves"]["train/all_passed"]] == [0.5] * 4
    md = (out / "report.md").read_text()
    assert "no low-std fallback" in md and "| grpo | 300 s (load 2.5, 410 s CPU) |" in md
    assert "| task (shared) | 4 s (load 1.0) |" in md  # a stage timed before CPU time was recorded
    assert "**total, end to end** | **304 s (5.1 min)**" in md and "| 410 s (6.8 min) |" in md


def test_reward_summary_counts_every_sample_the_trainer_got(tmp_path):
    rows = [{"rewards": [0.0, 0.5, 1.0, 0.0], "correctness": [0.0, 0.25, 1.0, 0.0], "all_passed": [0, 0, 1, 0]},
            {"rewards": [0.0, 0.0, 0.0, 0.0], "correctness": [0.0] * 4, "all_passed": [0] * 4}]
    (tmp_path / "rewards.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    s = report.reward_summary(tmp_path / "rewards.jsonl")
    assert s == {"samples": 8, "batches": 2, "mean": 0.1875, "max": 1.0, "nonzero": 2, "correctness_max": 1.0,
                 "all_passed": 1}
    assert report.reward_line(s) == ("GRPO reward reaching the trainer: mean 0.188, max 1.000 over 8 samples of 2 "
                                     "batches (2 non-zero; test pass rate max 1.00, 1 passing every test); non-zero: yes")
    none = report.reward_summary(tmp_path / "absent.jsonl")  # a trainer that scored nothing
    assert none["samples"] == 0 and report.reward_line(none).endswith("non-zero: NO")


def test_report_without_verdict_is_neither_pass_nor_fail(tmp_path):
    """DRY_RUN's report: the gains of a stand-in are shown, but no PASS/FAIL line and exit 0."""
    _fake_run(tmp_path / "a", 0.20, 0.20, [0.5, 0.5, 0.5])
    out = tmp_path / "rep"
    assert report.main(["--run", f"a={tmp_path / 'a'}", "--out", str(out), "--no_verdict", "a stand-in log"]) == 0
    j = json.loads((out / "report.json").read_text())
    assert j["pass"] is None and j["verdict"].startswith("NO VERDICT: a stand-in log")
    assert "FAIL" not in (out / "report.md").read_text() and "PASS" not in j["verdict"]


def test_help_documents_every_knob():
    out = subprocess.run(["bash", str(SCRIPT), "--help"], capture_output=True, text=True, check=True).stdout
    knobs = {line.split("=")[0].split("${")[-1] for line in SCRIPT.read_text().splitlines()
             if line.startswith(tuple("ABCDEFGHIJKLMNOPQRSTUVWXYZ")) and '="${' in line}
    assert len(knobs) > 25
    assert [k for k in knobs if k not in out] == []


@pytest.mark.slow
def test_dry_run_runs_every_cpu_stage(tmp_path):
    env = {**os.environ, "OUT": str(tmp_path / "lc"), "DRY_RUN": "1", "PYTHON": sys.executable,
           "TRAINER": "openrlhf", "SEEDS": "3"}
    env.pop("PORT", None)
    p = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, env=env, timeout=280, cwd=tmp_path)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    lc = tmp_path / "lc"
    # the launch script printed the GRPO command for our model, data and server (on a free port it picked)
    assert f"--pretrain {lc}/seed3/sft" in p.stdout and "--advantage_estimator group_norm" in p.stdout
    # the warm start, the server and the command all use the first 4 train problems (TRAIN_ROWS)
    assert f"--prompt_data {lc}/data/train_first4/train.jsonl" in p.stdout
    assert json.loads((lc / "seed3" / "sft" / "warm_start.json").read_text())["rows"] == 4
    port = int(p.stdout.split("reward server on port ")[1].split()[0])
    assert f"server: http://127.0.0.1:{port}/health: ready" in p.stdout + p.stderr
    # a stand-in's verdict is no verdict
    assert "NO VERDICT: DRY_RUN=1: the GRPO curves are a stand-in" in p.stdout and "FAIL" not in p.stdout
    for d in ("eval_before", "eval_after"):
        assert json.loads((lc / "seed3" / d / "summary.json").read_text())["samples_scored"] == 12
    assert json.loads((lc / "data" / "train" / "stats.json").read_text())["verify"]["problems_kept"] == 60
    j = json.loads((lc / "report" / "report.json").read_text())
    assert j["runs"]["seed3"]["steps"] == 6 and not j["runs"]["seed3"]["missing_metrics"]
    assert (lc / "report" / "curves.png").stat().st_size > 10_000
    assert j["pass"] is None


def test_a_given_port_in_use_fails_at_once(tmp_path):
    """The server must be the script's own: a busy PORT stops the check before any stage, naming the port."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        env = {**os.environ, "OUT": str(tmp_path / "lc"), "DRY_RUN": "1", "PYTHON": sys.executable,
               "TRAINER": "openrlhf", "PORT": str(port)}
        p = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, env=env, timeout=60, cwd=tmp_path)
    assert p.returncode == 2, p.stdout + p.stderr
    assert f"PORT={port} is in use" in p.stderr and "leave PORT empty" in p.stderr
    assert not (tmp_path / "lc" / "task").exists()


def test_python_without_torch_is_named(tmp_path):
    """The quickstart venv has no torch: the check names the missing modules before any stage runs."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "bare")], check=True, timeout=120)
    env = {**os.environ, "OUT": str(tmp_path / "lc"), "DRY_RUN": "1", "PYTHON": str(tmp_path / "bare" / "bin" / "python")}
    p = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, env=env, timeout=60, cwd=tmp_path)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "cannot import torch, transformers, tokenizers, matplotlib" in p.stderr and "scripts/test.sh" in p.stderr
    assert "Traceback" not in p.stderr and not (tmp_path / "lc" / "task").exists()


def test_mode_pass_at_1_scores_each_problems_most_frequent_completion(tmp_path):
    ok, bad = "```python\ndef f(x):\n    return x\n```", "```python\ndef f(x):\n    return 0\n```"
    rows = [("a", ok), ("a", bad), ("a", ok.replace("\n    ", "\n  ")),  # a: ok twice (whitespace aside), bad once
            ("b", bad), ("b", ok), ("c", bad), ("c", bad), ("c", ok)]  # b: a tie (1/2); c: bad is the mode
    (tmp_path / "samples.jsonl").write_text("".join(json.dumps({"task_id": t, "completion": c}) + "\n" for t, c in rows))
    seen: dict[str, int] = {}
    with open(tmp_path / "results.jsonl", "w") as fh:
        for t, c in rows:
            seen[t] = seen.get(t, -1) + 1
            fh.write(json.dumps({"task_id": t, "sample": seen[t], "passed": c != bad}) + "\n")
    assert report.mode_pass_at_1(tmp_path) == pytest.approx((1 + 0.5 + 0) / 3)
    assert report.mode_pass_at_1(tmp_path / "absent") is None
    # a: 2 of 3 pass, b: 1 of 2, c: 1 of 3; the histogram runs to the most samples any problem has
    assert report.passes_histogram(tmp_path) == [0, 2, 1, 0]
    assert report.passes_histogram(tmp_path / "absent") is None
    # a run whose evaluations kept no samples (OpenRLHF's stand-in, older runs) reports no ceiling
    _fake_run(tmp_path / "run", 0.2, 0.3, [0.1, 0.2, 0.3])
    r = report.summarize_run(tmp_path / "run")
    assert r["mode_pass@1"] == {"before": None, "after": None} and r["passes_histogram"]["after"] is None
    report.plot({"run": r}, tmp_path / "c.png")  # the histogram panel says there is nothing to draw
    assert (tmp_path / "c.png").read_bytes()[:4] == b"\x89PNG"

"""rewards/evaluation/generate.py on CPU: a real tiny checkpoint (random Qwen2, real BPE tokenizer) through HF
generate, OpenRLHF 0.5.7's own prompt builder as the reference, and a fake vLLM (vLLM cannot run here)."""

from __future__ import annotations

import importlib.util
import json
import types

import pytest

from coderl.rewards.evaluation import prefill
from coderl.rewards.evaluation.cli import main
from coderl.rewards.evaluation.generate import (
    SamplingConfig,
    choose_backend,
    encode_prompts,
    generate,
    generate_hf,
    render_prompts,
)
from coderl.rewards.evaluation.tasks import load_tasks
from tests.support import openrlhf_preprocess_data, tiny_checkpoint, toy_data

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def ckpt(tmp_path_factory):
    return tiny_checkpoint(tmp_path_factory.mktemp("tiny"))


@pytest.fixture(scope="module")
def model_and_tokenizer(ckpt):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    return AutoModelForCausalLM.from_pretrained(ckpt), AutoTokenizer.from_pretrained(ckpt)


def test_auto_backend_is_vllm_only_when_it_imports():
    expected = "vllm" if importlib.util.find_spec("vllm") is not None else "hf"
    assert choose_backend("auto") == expected
    assert choose_backend("hf") == "hf" and choose_backend("vllm") == "vllm"
    with pytest.raises(ValueError, match="--backend"):
        choose_backend("tgi")


def test_hf_prompts_are_what_openrlhf_builds(tmp_path, model_and_tokenizer, openrlhf_wheel, monkeypatch):
    model, tok = model_and_tokenizer
    data = toy_data(tmp_path / "d.jsonl")
    rows = [json.loads(line) for line in data.read_text().splitlines()]
    tasks = load_tasks(data)
    prompts = render_prompts(tok, [tasks.by_id[t].messages for t in tasks.ids()])
    preprocess_data = openrlhf_preprocess_data(openrlhf_wheel)
    assert prompts == [preprocess_data(r, input_key="input", apply_chat_template=tok.apply_chat_template)
                       for r in rows]
    assert prompts[0].startswith("<|im_start|>system\n") and prompts[0].endswith("<|im_start|>assistant\n")
    ids = encode_prompts(tok, prompts)
    seen = []  # every generate call's rows, left padding removed (prefill.generate is generate: test_prefill.py)

    def record(model, input_ids, attention_mask, **kwargs):
        seen.extend(row[m.bool()].tolist() for row, m in zip(input_ids, attention_mask, strict=True))
        return plain(model, input_ids, attention_mask, **kwargs)

    plain = prefill.generate
    monkeypatch.setattr(prefill, "generate", record)
    out = generate_hf(model, tok, ids, SamplingConfig(n=2, max_new_tokens=6, batch_size=4))
    assert seen == [ids[0], ids[0], ids[1], ids[1], ids[2], ids[2]]  # left padding removed, order kept
    assert [tok.decode(s) for s in seen[::2]] == prompts
    assert [len(o) for o in out] == [2, 2, 2] and all(isinstance(t, str) for o in out for t in o)
    assert all("<|im_end|>" not in t for o in out for t in o)  # cut at EOS, as OpenRLHF's reward sees it


class FakeVLLM(types.ModuleType):
    """A fake `vllm` module with vLLM 0.6.0's LLM / SamplingParams call shapes (vLLM needs a GPU)."""

    def __init__(self):
        super().__init__("vllm")
        self.calls = {}
        fake = self

        class LLM:
            def __init__(self, **kwargs):
                fake.calls["LLM"] = kwargs

            def generate(self, prompts, params):
                fake.calls["generate"] = prompts
                return [types.SimpleNamespace(outputs=[types.SimpleNamespace(text=f"r{i}.{j}")
                                                       for j in range(params.kwargs["n"])])
                        for i, _ in enumerate(prompts)]

        class SamplingParams:
            def __init__(self, **kwargs):
                self.kwargs = kwargs
                fake.calls["SamplingParams"] = kwargs

        self.LLM, self.SamplingParams = LLM, SamplingParams


def test_vllm_branch_with_a_fake_vllm(monkeypatch, ckpt, model_and_tokenizer, tmp_path):
    _, tok = model_and_tokenizer
    fake = FakeVLLM()
    monkeypatch.setitem(__import__("sys").modules, "vllm", fake)
    assert choose_backend("auto") == "vllm"
    tasks = load_tasks(toy_data(tmp_path / "d.jsonl"))
    messages = [tasks.by_id[t].messages for t in tasks.ids()]
    cfg = SamplingConfig(n=3, temperature=0.7, top_p=0.9, max_new_tokens=64, seed=7)
    out, backend = generate(str(ckpt), messages, cfg, "auto")
    assert backend == "vllm" and out == [[f"r{i}.{j}" for j in range(3)] for i in range(3)]
    assert fake.calls["LLM"] == {"model": str(ckpt), "seed": 7, "tensor_parallel_size": 1}
    assert fake.calls["SamplingParams"] == {"n": 3, "temperature": 0.7, "top_p": 0.9, "max_tokens": 64,
                                            "skip_special_tokens": False}
    want = encode_prompts(tok, render_prompts(tok, messages))
    assert fake.calls["generate"] == [{"prompt_token_ids": ids} for ids in want]


def test_generate_then_score_cli(tmp_path, ckpt, capsys):
    data = toy_data(tmp_path / "heldout.jsonl")
    out = tmp_path / "eval"
    rc = main(["--data", str(data), "--model", str(ckpt), "--n", "2", "--temperature", "1.0",
               "--max_new_tokens", "8", "--k", "1,2", "--out", str(out), "--backend", "auto", "--workers", "2",
               "--no_progress"])
    assert rc == 0
    samples = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    assert [s["task_id"] for s in samples] == ["add", "add", "neg", "neg", "first", "first"]
    assert all(set(s) == {"task_id", "completion"} for s in samples)
    summary = json.loads((out / "summary.json").read_text())
    assert isinstance(summary["pass@1"], float) and isinstance(summary["pass@2"], float)
    assert summary["generation"]["backend"] == choose_backend("auto") and summary["generation"]["n"] == 2
    assert summary["samples_file"] == str(out / "samples.jsonl") and summary["samples_scored"] == 6
    assert len((out / "results.jsonl").read_text().splitlines()) == 6
    assert "pass@1" in capsys.readouterr().out


def test_greedy_with_several_samples_is_refused_before_loading(tmp_path, capsys):
    data = toy_data(tmp_path / "d.jsonl")
    rc = main(["--data", str(data), "--model", str(tmp_path / "no-such-model"), "--n", "4", "--temperature", "0",
               "--out", str(tmp_path / "o")])
    assert rc == 2 and "--temperature 0 is greedy" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()

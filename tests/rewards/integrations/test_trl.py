"""rewards/integrations/trl.py inside a real TRL GRPOTrainer: 2 training steps on CPU, HumanEval rows written by
the real preprocessor (--output_format trl), a tiny random Llama and a tokenizer built here.

The tokenizer's vocabulary is a handful of whole answers (correct, partly correct, unformatted, no code), so
the random policy samples completions whose coderl rewards differ, and the trainer's logged reward can be
checked against coderl's own scoring of exactly those completions.
"""

from __future__ import annotations

import json

import pytest

from coderl.rewards.labels import TRL_LABEL_COLUMN, parse_label
from tests.support import INTEGRATION_TASKS, answer_chunks, coderl_breakdowns, tiny_tokenizer
from tests.support import trl_rows as write_trl_rows

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def trl_rows(tmp_path_factory):
    """The preprocessor's TRL rows for INTEGRATION_TASKS, and the HumanEval records they come from."""
    return write_trl_rows(tmp_path_factory.mktemp("trl"))


def test_grpo_trainer_two_steps_with_code_reward(trl_rows, tmp_path):
    import torch
    from datasets import load_dataset
    from transformers import LlamaConfig, LlamaForCausalLM
    from trl import GRPOConfig, GRPOTrainer

    from coderl.rewards.integrations.trl import make_code_reward

    data, he = trl_rows
    tokenizer = tiny_tokenizer(tmp_path / "tok", answer_chunks(he))
    torch.manual_seed(0)
    model = LlamaForCausalLM(LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
        num_key_value_heads=2, max_position_embeddings=64, pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id, bos_token_id=None))

    cfg_path = tmp_path / "reward.yaml"
    cfg_path.write_text("sandbox:\n  workers: 2\n")
    adapter = make_code_reward(config=str(cfg_path))
    calls = []

    def code_reward(prompts, completions, **kwargs):  # records what TRL passed and what coderl answered
        out = adapter(prompts=prompts, completions=completions, **kwargs)
        calls.append((completions, list(kwargs[TRL_LABEL_COLUMN]), out))
        return out

    dataset = load_dataset("json", data_files=str(data), split="train")
    args = GRPOConfig(output_dir=str(tmp_path / "run"), per_device_train_batch_size=4, num_generations=2,
                      max_completion_length=3, max_prompt_length=32, max_steps=2, logging_steps=1,
                      learning_rate=1e-3, report_to=[], save_strategy="no", use_cpu=True, bf16=False, seed=0)
    trainer = GRPOTrainer(model=model, reward_funcs=[code_reward], args=args, train_dataset=dataset,
                          processing_class=tokenizer)
    trainer.train()

    assert len(calls) == 2  # one reward call per step
    seen = set()
    logs = [h for h in trainer.state.log_history if "reward" in h]
    assert len(logs) == 2
    batches = [([c[0]["content"] for c in completions], labels) for completions, labels, _ in calls]
    for (completions, labels, out), log, items in zip(calls, logs, coderl_breakdowns(cfg_path, batches), strict=True):
        assert len(completions) == len(labels) == len(out) == 4
        assert all(isinstance(c, list) and c[0]["role"] == "assistant" for c in completions)  # conversational
        assert {parse_label(lab).source_id for lab in labels} == set(INTEGRATION_TASKS)
        assert all(type(r) is float for r in out)
        want = [b.reward for b in items]
        assert out == pytest.approx(want, abs=1e-9)
        # what the trainer logged is the mean of what coderl computed for its completions
        assert log["reward"] == pytest.approx(sum(want) / 4, abs=1e-6)
        assert log["rewards/code_reward/mean"] == pytest.approx(sum(want) / 4, abs=1e-6)
        seen.update(round(r, 6) for r in want)
    assert len(seen) >= 2, f"every sampled completion got the same reward {seen}: the check above is vacuous"


def test_completion_shapes_missing_column_and_log_metric(trl_rows, tmp_path):
    from coderl.rewards.integrations.trl import completion_text, make_code_reward

    assert completion_text("plain") == "plain"
    assert completion_text([{"role": "assistant", "content": "a"}]) == "a"
    assert completion_text([{"role": "assistant", "content": [{"type": "text", "text": "x"}, {"type": "image"}]},
                            {"role": "tool", "content": "ignored"}]) == "x"
    with pytest.raises(TypeError, match="string or a list of messages"):
        completion_text(3)

    data, he = trl_rows
    rows = [json.loads(line) for line in data.read_text().splitlines()]
    cfg = tmp_path / "reward.yaml"
    cfg.write_text("sandbox:\n  workers: 1\n")
    reward = make_code_reward(config=str(cfg))
    with pytest.raises(KeyError, match="needs the dataset column 'coderl_label'.*columns passed: \\['label'\\]"):
        reward(prompts=[rows[0]["prompt"]], completions=["x"], label=[rows[0][TRL_LABEL_COLUMN]])
    logged = {}
    good = answer_chunks(he)[0]
    out = reward(prompts=[rows[0]["prompt"]] * 2, completions=[good, "no code"],
                 coderl_label=[rows[0][TRL_LABEL_COLUMN]] * 2, log_metric=logged.__setitem__)
    assert out[0] == pytest.approx(1.0) and out[1] == 0.0
    assert logged["coderl/correctness"] == 0.5 and logged["coderl/all_passed"] == 0.5


def test_component_logs_are_the_last_batch_and_weigh_nothing(trl_rows, tmp_path):
    """with_component_logs: TRL 0.x logs each component as a zero-weight reward function of the same batch."""
    import pickle

    from coderl.rewards.integrations.trl import make_code_reward, with_component_logs

    data, he = trl_rows
    rows = [json.loads(line) for line in data.read_text().splitlines()]
    cfg = tmp_path / "reward.yaml"
    cfg.write_text("sandbox:\n  workers: 1\n")
    funcs, weights = with_component_logs(make_code_reward(config=str(cfg)))
    assert weights[0] == 1.0 and set(weights[1:]) == {0.0} and len(funcs) == len(weights)
    names = [f.__name__ for f in funcs]
    assert names[0] == "code_reward" and {"coderl/correctness", "coderl/format", "coderl/all_passed"} <= set(names)
    comps = dict(zip(names[1:], funcs[1:], strict=True))
    label = rows[0][TRL_LABEL_COLUMN]
    batch = {"prompts": [rows[0]["prompt"]] * 2, "completions": [answer_chunks(he)[0], "no code"],
             "coderl_label": [label] * 2}
    with pytest.raises(RuntimeError, match="not the batch code_reward scored last"):
        comps["coderl/correctness"](**batch)  # before its reward ran
    rewards = funcs[0](**batch)
    assert rewards[0] == pytest.approx(1.0) and rewards[1] == 0.0
    assert comps["coderl/all_passed"](**batch) == [1.0, 0.0]
    assert comps["coderl/no_code"](**batch) == [0.0, 1.0]
    assert comps["coderl/correctness"](**batch)[0] == pytest.approx(1.0)
    with pytest.raises(RuntimeError, match="put it after code_reward"):
        comps["coderl/format"](**{**batch, "completions": ["other", "batch"]})
    assert "last" not in pickle.loads(pickle.dumps(funcs[0])).__dict__  # a batch does not travel with the function


@pytest.mark.parametrize("threshold", [0.1, 0.02])
def test_group_norm_trainer_matches_the_reference(trl_rows, tmp_path, threshold):
    """GroupNormGRPOTrainer in TRL 0.17 (the learning check's): the advantages its loss got and the fallback share
    logged per step are the reference's for the rewards given, at the default threshold and another."""
    from datasets import load_dataset

    from tests.rewards.integrations.group_norm_reference import reference_flat
    from tests.rewards.integrations.trl_latest_run import group_norm_run

    data, he = trl_rows
    dataset = load_dataset("json", data_files=str(data), split="train")
    got = group_norm_run(tiny_tokenizer(tmp_path / "tok", answer_chunks(he)), dataset, tmp_path / "run", threshold)
    assert got["scale_rewards"] is False
    assert len(got["rewards"]) == len(got["advantages"]) == len(got["fallback"]) == 3
    for rewards, adv, fallback in zip(got["rewards"], got["advantages"], got["fallback"], strict=True):
        want, share = reference_flat(rewards, 4, threshold)
        assert adv == pytest.approx(want, abs=1e-5)
        assert fallback == pytest.approx(share)
    assert got["fallback"] == ([0.5, 0.5, 0.5] if threshold == 0.1 else [0.5, 0.0, 0.0])
    assert got["all_equal"] == [0.5, 0.0, 0.0]


def test_group_norm_trainer_refuses_bad_knobs():
    from coderl.rewards.integrations.trl import GroupNormGRPOTrainer

    with pytest.raises(ValueError, match="must be >= 0"):
        GroupNormGRPOTrainer(model=None, reward_funcs=[], group_norm_std_threshold=-0.1)

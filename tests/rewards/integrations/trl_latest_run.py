"""Runs inside TRL 1.x (tests/rewards/integrations/test_trl_latest.py starts it with scripts/test.sh's TRL directory first on
PYTHONPATH, so its newer transformers shadows the venv's): real GRPOTrainer runs with coderl's reward functions.

    python -m tests.rewards.integrations.trl_latest_run DATA.jsonl HE.json REWARD.yaml WORKDIR   # writes WORKDIR/result.json

Only TRL is driven here; the caller scores the same texts with coderl itself and compares.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

STEPS = 2


def tiny_model(tokenizer):
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    return LlamaForCausalLM(LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
        num_key_value_heads=2, max_position_embeddings=64, pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id, bos_token_id=None))


def train(tokenizer, reward_funcs, dataset, out: Path, **config):
    from trl import GRPOConfig, GRPOTrainer

    args = GRPOConfig(output_dir=str(out), per_device_train_batch_size=4, num_generations=2,
                      max_completion_length=3, max_steps=STEPS, logging_steps=1, learning_rate=1e-3, report_to=[],
                      save_strategy="no", use_cpu=True, bf16=False, seed=0, **config)
    trainer = GRPOTrainer(model=tiny_model(tokenizer), reward_funcs=reward_funcs, args=args, train_dataset=dataset,
                          processing_class=tokenizer)
    trainer.train()
    return [h for h in trainer.state.log_history if "reward" in h]


# GroupNormGRPOTrainer's run: per step 2 groups of 4 with these rewards (spread, all equal, low std, one success ...)
GROUP_NORM_REWARDS = [
    [0.0, 1.0, 0.5, 0.25, 0.3, 0.3, 0.3, 0.3],
    [0.0, 0.05, 0.0, 0.05, 1.0, 0.0, 0.0, 0.0],
    [0.2, 0.2, 0.2, 0.25, 0.9, 0.1, 0.5, 0.5],
]


def group_norm_run(tokenizer, dataset, out: Path, threshold: float) -> dict:
    """GroupNormGRPOTrainer (this TRL's) for len(GROUP_NORM_REWARDS) steps: the rewards given, the advantages its
    _generate_and_score_completions returned to the loss, the per-step metrics it logged."""
    from trl import GRPOConfig

    from coderl.rewards.integrations.trl import GroupNormGRPOTrainer

    rewards, advantages = [], []

    def designed_reward(prompts, completions, **kwargs):
        rewards.append(GROUP_NORM_REWARDS[len(rewards)])
        return rewards[-1]

    class Recording(GroupNormGRPOTrainer):
        def _generate_and_score_completions(self, inputs):
            result = super()._generate_and_score_completions(inputs)
            advantages.append(result["advantages"].tolist())
            return result

    args = GRPOConfig(output_dir=str(out), per_device_train_batch_size=8, num_generations=4, max_completion_length=3,
                      max_steps=len(GROUP_NORM_REWARDS), logging_steps=1, learning_rate=1e-3, report_to=[],
                      save_strategy="no", use_cpu=True, bf16=False, seed=0)
    trainer = Recording(model=tiny_model(tokenizer), reward_funcs=[designed_reward], args=args, train_dataset=dataset,
                        processing_class=tokenizer, group_norm_std_threshold=threshold)
    trainer.train()
    logs = [h for h in trainer.state.log_history if "reward" in h]
    return {"rewards": rewards, "advantages": advantages, "scale_rewards": trainer.scale_rewards,
            "fallback": [h["group_norm_fallback_frac"] for h in logs],
            "all_equal": [h["group_norm_all_equal_frac"] for h in logs]}


def main(data: str, he_json: str, config: str, workdir: str) -> None:
    import transformers
    import trl
    from datasets import load_dataset
    from trl.chat_template_utils import parse_response, qwen3_template

    from coderl.rewards.integrations.trl import make_code_reward
    from tests.support import answer_chunks, tiny_tokenizer

    work = Path(workdir)
    chunks = answer_chunks(json.loads(Path(he_json).read_text()))
    dataset = load_dataset("json", data_files=data, split="train")
    result = {"versions": {"trl": trl.__version__, "transformers": transformers.__version__},
              "transformers_file": transformers.__file__}

    # 1. The default decoding (completions are [{"role": "assistant", "content": text}]), both reward forms
    # as TRL gets them; TRL itself writes the completions table (log_completions) the caller reads back.
    sync = make_code_reward(config=config)
    asynchronous = make_code_reward(config=config, asynchronous=True)
    result["plain"] = train(tiny_tokenizer(work / "tok", chunks), [sync, asynchronous], dataset, work / "plain",
                            log_completions=True)

    # 2. A response parser (what tools= or a tokenizer shipping a response template turns on): TRL's completions are
    # parsed messages, with the <think> block in reasoning_content. The tokenizer's own "assistant\n" token gives
    # the parser its anchor. The recorded ids are what the model generated.
    tokenizer = tiny_tokenizer(work / "tok_parsed", chunks + ["assistant\n"])
    tokenizer.response_template = qwen3_template
    exact = make_code_reward(config=config, tokenizer=tokenizer)
    calls = []

    def code_reward(prompts, completions, completion_ids, **kwargs):  # records what TRL passed and coderl answered
        out = exact(prompts=prompts, completions=completions, completion_ids=completion_ids, **kwargs)
        calls.append({"completions": completions, "labels": kwargs["coderl_label"], "rewards": out,
                      "generated": tokenizer.batch_decode(completion_ids, skip_special_tokens=True)})
        return out

    result["parsed"] = {"logs": train(tokenizer, [code_reward], dataset, work / "parsed"), "calls": calls}

    # 3. Each whole answer through TRL's parser, as GRPOTrainer calls it (prefix = the prompt's ids), scored
    # from the parsed message alone (no tokenizer): the <think> block must come back.
    prefix = tokenizer.apply_chat_template([{"role": "user", "content": "x"}], add_generation_prompt=True,
                                           tokenize=True, return_dict=False)
    result["parsed_messages"] = [parse_response(tokenizer, tokenizer.convert_tokens_to_ids([c]) +
                                                [tokenizer.eos_token_id], prefix=prefix) for c in chunks]

    # 4. The adaptive group norm (GroupNormGRPOTrainer) on this TRL; the caller compares with the reference.
    result["group_norm"] = group_norm_run(tiny_tokenizer(work / "tok_gn", chunks), dataset, work / "group_norm", 0.1)
    (work / "result.json").write_text(json.dumps(result))


if __name__ == "__main__":
    main(*sys.argv[1:])

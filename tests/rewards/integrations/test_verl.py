"""rewards/integrations/verl.py driven by verl's own code (verl 0.9.1 from PyPI, CPU): its RLHFDataset reads the
preprocessor's --output_format verl parquet, its RewardLoopWorker (the reward path of verl's PPO/GRPO trainer)
loads the custom reward function by path from verl's generated trainer config and scores DataProtos built
the way verl's agent loop builds them, and its legacy BatchRewardManager runs compute_score_batch.

Nothing of verl is faked; rollouts are replaced by fixed responses (token ids of whole answers from a tiny
tokenizer), because generating them needs vLLM/SGLang on a GPU.
"""

from __future__ import annotations

import asyncio
import os

import pytest

from coderl.rewards.config import load_config
from coderl.rewards.executors import LocalExecutor
from coderl.rewards.integrations.backend import local_backend
from coderl.rewards.labels import parse_label
from coderl.rewards.pipeline import Scorer, score
from tests.conftest import REPO_ROOT
from tests.support import (
    INTEGRATION_TASKS,
    answer_chunks,
    humaneval_rows,
    run_cli,
    tiny_tokenizer,
    write_parquet,
)

pytestmark = pytest.mark.timeout(300)
ADAPTER = REPO_ROOT / "rewards" / "integrations" / "verl.py"
PICKS = {"HumanEval/0": (0, 1, 4), "HumanEval/2": (2, 3, 0)}  # answer_chunks indices sampled per problem


@pytest.fixture(scope="module")
def env(tmp_path_factory, verl_path):
    tmp = tmp_path_factory.mktemp("verl")
    he = {r["task_id"]: r for r in humaneval_rows()}
    write_parquet(tmp / "in" / "he.parquet", [he[t] for t in INTEGRATION_TASKS])
    run_cli("--input_dir", tmp / "in", "--output_dir", tmp / "out", "--output_format", "verl", "--test_ratio", "0",
            "--splits", "hash")  # HumanEval, a benchmark, as training rows
    chunks = answer_chunks(he)
    tokenizer = tiny_tokenizer(tmp / "tok", chunks)
    cfg = tmp / "reward.yaml"
    cfg.write_text("sandbox:\n  workers: 2\n")
    return {"parquet": tmp / "out" / "train.parquet", "tok_dir": tmp / "tok", "tokenizer": tokenizer,
            "chunks": chunks, "config": str(cfg), "cache": tmp / "cache", "verl": verl_path}


def trainer_config(env, name: str):
    """verl's own generated PPO trainer config, with the settings a user passes on the command line."""
    from omegaconf import OmegaConf, open_dict

    config = OmegaConf.load(env["verl"] / "verl" / "trainer" / "config" / "_generated_ppo_trainer.yaml")
    with open_dict(config):
        config.actor_rollout_ref.model.path = str(env["tok_dir"])
        config.data.train_files = [str(env["parquet"])]
        config.reward.custom_reward_function.path = str(ADAPTER)
        config.reward.custom_reward_function.name = name
        config.reward.custom_reward_function.reward_kwargs = {"config": env["config"]}
    return config


def dataset_rows(env):
    """The parquet through verl's RLHFDataset and collate_fn, as its trainer's dataloader yields it."""
    from omegaconf import OmegaConf
    from verl import DataProto
    from verl.utils.dataset.rl_dataset import RLHFDataset, collate_fn

    data_cfg = OmegaConf.create({"prompt_key": "prompt", "max_prompt_length": 64, "cache_dir": str(env["cache"]),
                                 "filter_overlong_prompts": True, "filter_overlong_prompts_workers": 1})
    ds = RLHFDataset([str(env["parquet"])], env["tokenizer"], data_cfg)
    return DataProto.from_single_dict(collate_fn([ds[i] for i in range(len(ds))]))


def test_rlhf_dataset_reads_the_parquet(env):
    batch = dataset_rows(env)
    assert len(batch) == len(INTEGRATION_TASKS)
    nt = batch.non_tensor_batch
    assert list(nt["data_source"]) == ["humaneval"] * len(INTEGRATION_TASKS)
    assert [parse_label(rm["ground_truth"]).source_id for rm in nt["reward_model"]] == list(INTEGRATION_TASKS)
    assert all(rm["style"] == "rule" for rm in nt["reward_model"])
    assert [(e["split"], e["index"], e["source_id"]) for e in nt["extra_info"]] == [
        ("train", i, t) for i, t in enumerate(INTEGRATION_TASKS)]
    assert list(nt["index"]) == list(range(len(INTEGRATION_TASKS)))
    assert all([m["role"] for m in p] == ["system", "user"] for p in nt["raw_prompt"])


def agent_loop_samples(env):
    """One DataProto per sampled response, built as verl's AgentLoopWorker builds it before compute_score."""
    import numpy as np
    import torch
    from tensordict import TensorDict
    from verl import DataProto

    tok = env["tokenizer"]
    batch = dataset_rows(env)
    datas, texts, labels = [], [], []
    for i in range(len(batch)):
        kwargs = {k: v[i] for k, v in batch.non_tensor_batch.items()}
        prompt_ids = tok.apply_chat_template(list(kwargs["raw_prompt"]), add_generation_prompt=True, tokenize=True)
        source_id = parse_label(kwargs["reward_model"]["ground_truth"]).source_id
        for pick in PICKS[source_id]:
            response_ids = tok.convert_tokens_to_ids([env["chunks"][pick]]) + [tok.eos_token_id]
            prompts = torch.tensor(prompt_ids, dtype=torch.int64)
            responses = torch.tensor(response_ids, dtype=torch.int64)
            input_ids = torch.cat([prompts, responses])
            td = TensorDict({"prompts": prompts[None], "responses": responses[None],
                             "attention_mask": torch.ones_like(input_ids)[None], "input_ids": input_ids[None],
                             "position_ids": torch.arange(len(input_ids))[None]}, batch_size=1)
            non_tensor = {**{k: np.array([v]) for k, v in kwargs.items()},
                          "__num_turns__": np.array([2]), "tool_extra_fields": np.array([{}], dtype=object)}
            datas.append(DataProto(batch=td, non_tensor_batch=non_tensor))
            texts.append(env["chunks"][pick])
            labels.append(kwargs["reward_model"]["ground_truth"])
    return datas, texts, labels


def coderl_rewards(env, texts, labels) -> list[float]:
    cfg = load_config(env["config"])
    with LocalExecutor(cfg.sandbox) as executor:
        return [b.reward for b in score(Scorer(cfg.reward), executor, texts, None, labels)]


@pytest.mark.parametrize("name", ["compute_score", "compute_score_async"])
def test_reward_loop_worker_scores_like_coderl(env, name):
    from verl.experimental.reward_loop.reward_loop import RewardLoopWorker
    from verl.utils.ray_utils import get_event_loop

    worker = RewardLoopWorker(trainer_config(env, name))
    datas, texts, labels = agent_loop_samples(env)
    backend = local_backend(env["config"])
    before = backend.batches
    loop = get_event_loop()  # the loop verl's reward managers captured
    outputs = loop.run_until_complete(asyncio.gather(*(worker.compute_score(d) for d in datas)))

    want = coderl_rewards(env, texts, labels)
    assert len(set(want)) >= 3, want  # full, partial, unformatted and no-code answers differ
    assert [o["reward_score"] for o in outputs] == pytest.approx(want, abs=1e-9)
    for o in outputs:
        info = o["reward_extra_info"]
        assert info["score"] == o["reward_score"] and info["acc"] == info["all_passed"]
        assert {"correctness", "format", "syntax", "length", "timeout"} <= set(info)
        assert all(isinstance(v, float) for v in info.values())  # verl averages them into metrics
    # one pool batch for all concurrent samples with the coroutine, one per sample with the plain function
    assert backend.batches - before == (1 if name == "compute_score_async" else len(datas))

    # verl's own assembly puts each reward on the sample's last response token
    rm = type(worker.reward_manager).assemble_rm_scores(datas[0], [outputs[0]["reward_score"]])
    assert rm[0, -1].item() == pytest.approx(outputs[0]["reward_score"]) and rm[0, :-1].abs().sum() == 0


def test_legacy_batch_reward_manager(env):
    """verl's BatchRewardManager (reward_manager=batch in earlier releases) with compute_score_batch."""
    import numpy as np
    import torch
    from verl import DataProto
    from verl.trainer.ppo.reward import get_custom_reward_fn
    from verl.workers.reward_manager.batch import BatchRewardManager

    datas, texts, labels = agent_loop_samples(env)
    tok = env["tokenizer"]
    # the trainer's padded batch: prompts left-padded, responses right-padded, one attention mask over both
    plen = max(d.batch["prompts"].shape[1] for d in datas)
    rlen = max(d.batch["responses"].shape[1] for d in datas) + 1
    prompts = torch.full((len(datas), plen), tok.pad_token_id)
    responses = torch.full((len(datas), rlen), tok.pad_token_id)
    mask = torch.zeros((len(datas), plen + rlen), dtype=torch.int64)
    for i, d in enumerate(datas):
        p, r = d.batch["prompts"][0], d.batch["responses"][0]
        prompts[i, plen - len(p):], responses[i, :len(r)] = p, r
        mask[i, plen - len(p):plen + len(r)] = 1
    non_tensors = {k: np.array([d.non_tensor_batch[k][0] for d in datas], dtype=object)
                   for k in ("data_source", "reward_model", "extra_info")}
    batch = DataProto.from_dict(tensors={"prompts": prompts, "responses": responses, "attention_mask": mask},
                                non_tensors=non_tensors)

    manager = BatchRewardManager(tok, num_examine=0,
                                 compute_score=get_custom_reward_fn(trainer_config(env, "compute_score_batch")))
    out = manager(batch, return_dict=True)
    want = coderl_rewards(env, texts, labels)
    lengths = [len(d.batch["responses"][0]) for d in datas]
    got = [out["reward_tensor"][i, n - 1].item() for i, n in enumerate(lengths)]
    assert got == pytest.approx(want, abs=1e-6)
    assert out["reward_tensor"].sum().item() == pytest.approx(sum(want), abs=1e-5)
    assert out["reward_extra_info"]["score"] == pytest.approx(want, abs=1e-9)


def test_group_norm_estimator_in_verls_registry(env):
    """The estimator verl's compute_advantage looks up by name, called as it calls registered estimators, with the
    trainer config's algorithm section (+group_norm_std_threshold): the reference per uid group, verl's own GRPO
    (std) where the group is spread, its Dr. GRPO form (norm_adv_by_std_in_grpo=False) where it falls back."""
    import numpy as np
    import torch
    from omegaconf import open_dict
    from verl.trainer.ppo import core_algos

    from coderl.rewards.integrations import verl as adapter
    from tests.rewards.integrations.group_norm_reference import reference

    adapter.register_group_norm()
    adapter.register_group_norm()  # idempotent: the same function under the same name
    fn = core_algos.get_adv_estimator_fn(adapter.GROUP_NORM_ESTIMATOR)
    assert fn is adapter.compute_group_norm_advantage
    groups = {"a": [0.0, 1.0, 0.5, 0.25], "b": [0.3, 0.3, 0.3, 0.3], "c": [0.0, 0.05, 0.0, 0.05], "d": [0.7]}
    order = ["a", "c", "b", "a", "d", "c", "b", "a", "c", "b", "a", "c", "b"]  # verl's uids need not be contiguous
    taken = {k: iter(v) for k, v in groups.items()}
    scores = [next(taken[k]) for k in order]
    lengths = [3 + i % 4 for i in range(len(order))]
    mask = torch.zeros(len(order), 8)
    rewards = torch.zeros(len(order), 8)
    for i, n in enumerate(lengths):
        mask[i, :n] = 1
        rewards[i, n - 1] = scores[i]
    index = np.array(order, dtype=object)
    algorithm = trainer_config(env, "compute_score").algorithm
    with open_dict(algorithm):
        algorithm.adv_estimator = adapter.GROUP_NORM_ESTIMATOR
    adv, returns = fn(token_level_rewards=rewards, response_mask=mask, config=algorithm, index=index)
    assert torch.equal(adv, returns)
    assert torch.equal(adv * (1 - mask), torch.zeros_like(adv))  # nothing outside the response
    want = {k: iter(reference(v)[0]) if len(v) > 1 else iter(v) for k, v in groups.items()}
    assert adv[:, 0].tolist() == pytest.approx([next(want[k]) for k in order], abs=1e-6)
    assert adapter.last_group_norm_stats == (2 / 3, 1 / 3)  # b and c of the 3 groups (d has one sample)

    grpo, _ = core_algos.compute_grpo_outcome_advantage(rewards, mask, index, norm_adv_by_std_in_grpo=True)
    centred, _ = core_algos.compute_grpo_outcome_advantage(rewards, mask, index, norm_adv_by_std_in_grpo=False)
    for i, k in enumerate(order):
        ref = centred if k in ("b", "c") else grpo
        assert adv[i].tolist() == pytest.approx(ref[i].tolist(), abs=1e-5)

    with open_dict(algorithm):  # the knob: the c group is normalised too
        algorithm.group_norm_std_threshold = 0.02
    adv, _ = fn(token_level_rewards=rewards, response_mask=mask, config=algorithm, index=index)
    assert adapter.last_group_norm_stats.fallback_frac == pytest.approx(1 / 3)
    c_rows = [i for i, k in enumerate(order) if k == "c"]
    assert adv[c_rows, 0].tolist() == pytest.approx(reference(groups["c"], 0.02)[0], abs=1e-5)


RAY_HOOK_RUN = """
import os, sys
import ray
from omegaconf import OmegaConf, open_dict
from verl.trainer.constants_ppo import get_ppo_ray_runtime_env

config = OmegaConf.load(sys.argv[1])
# the documented override, +ray_kwargs.ray_init.runtime_env.worker_process_setup_hook=...
with open_dict(config):
    config.ray_kwargs.ray_init.runtime_env.worker_process_setup_hook = sys.argv[2]
    config.ray_kwargs.ray_init.num_cpus = 1
# the ray.init arguments as verl's run_ppo builds them (PYTHONPATH: coderl and verl are not installed here)
ray_init = config.ray_kwargs.get("ray_init", {})
runtime_env = OmegaConf.merge(get_ppo_ray_runtime_env(config), ray_init.get("runtime_env", {}),
                              {"env_vars": {"PYTHONPATH": os.environ["PYTHONPATH"]}})
kwargs = OmegaConf.to_container(OmegaConf.create({**ray_init, "runtime_env": runtime_env}))
ray.init(address="local", include_dashboard=False, **kwargs)  # a cluster of its own, never another's

@ray.remote
def estimators():  # a process of the cluster, as verl's TaskRunner (the driver computing advantages) is
    from verl.trainer.ppo import core_algos
    return sorted(core_algos.ADV_ESTIMATOR_REGISTRY)

print("registered:", "coderl_group_norm" in ray.get(estimators.remote()))
ray.shutdown()
"""


@pytest.mark.slow
def test_the_documented_ray_hook_registers_the_estimator_in_rays_workers(env, tmp_path):
    """The verl line of docs/integrations.md: Ray's worker_process_setup_hook, passed through verl's ray_kwargs as
    run_ppo passes it, registers coderl_group_norm in a fresh Ray worker process (not in this one)."""
    import subprocess
    import sys

    script = tmp_path / "ray_hook.py"
    script.write_text(RAY_HOOK_RUN)
    config = env["verl"] / "verl" / "trainer" / "config" / "_generated_ppo_trainer.yaml"
    pythonpath = os.pathsep.join([str(REPO_ROOT), str(env["verl"])])
    proc = subprocess.run([sys.executable, str(script), str(config),
                           "coderl.rewards.integrations.verl.register_group_norm"], capture_output=True, text=True,
                          timeout=280, cwd=tmp_path, env={**os.environ, "PYTHONPATH": pythonpath,
                                                          "RAY_ADDRESS": "", "RAY_agent_register_timeout_ms": "240000"})
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    assert "registered: True" in proc.stdout

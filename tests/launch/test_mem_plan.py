"""launch/mem_plan.py: the memory plan against the points measured on an H100 (issue 11), and its parts
against DeepSpeed's own estimator and transformers' own parameter count."""

from __future__ import annotations

import pytest

from coderl.launch import mem_plan
from coderl.launch.ds_plan import GIB, Shape, shape_from_config

# The 3B-shape model of the H100 run: hidden 2048, 36 layers, vocab 8192, tied embeddings (2.79B params).
SHAPE_3B = Shape(hidden=2048, layers=36, heads=16, kv_heads=2, intermediate=11008, vocab=8192, tied=True)
GB = 1e9


def launch_3b(**kw) -> mem_plan.Launch:
    """train_ppo_ray, 1 GPU, ZeRO-2 + Adam offload + checkpointing, reference colocated, HF generate."""
    base = dict(params=SHAPE_3B.num_params, shape=SHAPE_3B, actor_gpus=1, colocate_ref=True, ray=True, engines=0,
                tp=1, zero_stage=2, adam_offload=True, overlap_comm=False, micro_train=2, train_batch=32,
                rollout_batch=4, micro_rollout=16, n_samples=8, prompt_tokens=250, generate_tokens=256,
                gradient_checkpointing=True, gpu_gib=80)
    base.update(kw)
    return mem_plan.Launch(**base)


def test_plan_within_20_percent_of_the_measured_3b_point():
    """Measured: peak GPU 16.1 GB (nvidia-smi, 0.5 s samples), host RAM peak 75.6 GB (`free` used)."""
    p = mem_plan.plan(launch_3b())
    assert SHAPE_3B.num_params == 2_791_550_976
    for measured in (16.1 * GB / GIB, 16.1):  # nvidia-smi's "GB" read either way
        assert abs(p["gpu_peak_gib"] - measured) <= 0.2 * measured, p["actor_gpu"]
    for measured in (75.6 * GB / GIB, 75.6):
        assert abs(p["host_peak_gib"] - measured) <= 0.2 * measured, p["host"]


def test_plan_follows_the_knobs():
    """Longer sequences and bigger micro batches cost GPU memory; vLLM engines move generation off the actor."""
    base = mem_plan.plan(launch_3b())
    longer = mem_plan.plan(launch_3b(generate_tokens=1024))
    assert longer["actor_gpu"]["peak_gib"] > base["actor_gpu"]["peak_gib"] + 1
    vllm = mem_plan.plan(launch_3b(actor_gpus=1, engines=1))
    assert not vllm["actor_gpu"]["generate"] and vllm["engine_gpu"]["kv_capacity_tokens"] > 100_000
    assert vllm["host"]["components"]["vllm_swap_pinned"] == mem_plan.CALIBRATION["vllm_swap_space_gib"]


def test_model_states_are_deepspeeds_estimate():
    from deepspeed.runtime.zero.stage_1_and_2 import estimate_zero2_model_states_mem_needs

    p = mem_plan.plan(launch_3b(actor_gpus=4, train_batch=32, rollout_batch=4))
    _, gpu = estimate_zero2_model_states_mem_needs(SHAPE_3B.num_params, num_gpus_per_node=4, cpu_offload=True,
                                                   additional_buffer_factor=1.0)
    assert p["actor_gpu"]["resident"]["actor_model_states_deepspeed"] == pytest.approx(gpu / GIB, abs=1e-3)


def test_shape_from_config_counts_like_transformers():
    import torch
    from transformers import AutoModelForCausalLM, Qwen2Config

    cfg = Qwen2Config(hidden_size=256, intermediate_size=704, num_hidden_layers=3, num_attention_heads=8,
                      num_key_value_heads=2, vocab_size=1000, tie_word_embeddings=False)
    with torch.device("meta"):
        n = sum(p.numel() for p in AutoModelForCausalLM.from_config(cfg).parameters())
    assert shape_from_config(cfg.to_dict()).num_params == n
    assert shape_from_config({"hidden_size": 8}) is None

"""The DeepSpeed side of a launch: configs/ds_config_zero2.json <-> OpenRLHF 0.5.7's flags, model sizes,
and DeepSpeed's own ZeRO-2 memory estimator. Used by launch/preflight.py."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

GIB = 2**30

# Parameter counts of the Qwen2.5 family (also the -Instruct and -Coder variants, same shapes). Values are
# what transformers' Qwen2ForCausalLM builds from each model's config.json; tests/test_launch.py recounts
# them on the meta device. A local model directory is always counted from its own config.json instead.
PARAM_TABLE = {
    "0.5": 494_032_768,
    "1.5": 1_543_714_304,
    "3": 3_085_938_688,
    "7": 7_615_616_512,
    "14": 14_770_033_664,
    "32": 32_763_876_352,
    "72": 72_706_203_648,
}



class DsConfigError(ValueError):
    """A DeepSpeed JSON that OpenRLHF's flags cannot express; the message names the key."""


def load_openrlhf_ds_utils():
    """OpenRLHF's own deepspeed_utils module, loaded by file so its package __init__ (models, flash-attn,
    ...) is not imported; None when OpenRLHF is not installed in this interpreter."""
    spec = importlib.util.find_spec("openrlhf")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / "utils" / "deepspeed" / "deepspeed_utils.py"
    mspec = importlib.util.spec_from_file_location("_coderl_openrlhf_ds_utils", path)
    mod = importlib.util.module_from_spec(mspec)
    mspec.loader.exec_module(mod)
    return mod


def ds_config_to_flags(cfg: dict, micro: int | None = None, train: int | None = None) -> tuple[list[str], dict]:
    """Map a DeepSpeed JSON onto OpenRLHF 0.5.7's flags; returns (flags, get_train_ds_config kwargs)."""
    def get(path: str, default=KeyError):
        node = cfg
        for part in path.split("."):
            if not isinstance(node, dict) or part not in node:
                if default is KeyError:
                    raise DsConfigError(f"missing key {path}")
                return default
            node = node[part]
        return node

    stage = get("zero_optimization.stage")
    if stage not in (0, 1, 2, 3):
        raise DsConfigError(f"zero_optimization.stage must be 0-3, got {stage!r}")
    opt_dev = get("zero_optimization.offload_optimizer.device", "none")
    if opt_dev not in ("cpu", "none"):
        raise DsConfigError(f"zero_optimization.offload_optimizer.device={opt_dev!r}: OpenRLHF "
                            "--adam_offload only offloads to 'cpu' (or 'none')")
    overlap = bool(get("zero_optimization.overlap_comm", False))
    kwargs = {
        "offload": False,  # OpenRLHF always builds the *training* config with offload=False
        "adam_offload": opt_dev == "cpu",
        "stage": stage,
        "bf16": bool(get("bf16.enabled", False)),
        "max_norm": float(get("gradient_clipping")),
        "zpg": int(get("zero_optimization.zero_hpz_partition_size", 1)),
        "grad_accum_dtype": get("data_types.grad_accum_dtype", None),
        "overlap_comm": overlap,
    }
    micro = micro or int(get("train_micro_batch_size_per_gpu"))
    train = train or int(get("train_batch_size"))
    flags = ["--zero_stage", str(stage)]
    if kwargs["adam_offload"]:
        flags.append("--adam_offload")
    if kwargs["bf16"]:
        flags.append("--bf16")
    flags += ["--max_norm", repr(kwargs["max_norm"]), "--zpg", str(kwargs["zpg"])]
    if overlap:
        flags.append("--overlap_comm")
    if kwargs["grad_accum_dtype"] is not None:
        flags += ["--grad_accum_dtype", str(kwargs["grad_accum_dtype"])]
    flags += ["--micro_train_batch_size", str(micro), "--train_batch_size", str(train)]
    return flags, {**kwargs, "micro": micro, "train": train}


def config_diff(a, b, prefix=""):
    """Lines naming every key where the file (a) and what OpenRLHF builds (b) differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            yield from config_diff(a.get(k, "<absent>"), b.get(k, "<absent>"), f"{prefix}{k}.")
    elif a != b:
        yield f"{prefix.rstrip('.')}: file has {a!r}, OpenRLHF builds {b!r}"


def rebuild_with_openrlhf(ds_utils, kw: dict) -> dict:
    """What OpenRLHF's DeepspeedStrategy.get_ds_train_config builds for these flags (ring_attn_size 1)."""
    built = ds_utils.get_train_ds_config(**{k: v for k, v in kw.items() if k not in ("micro", "train")})
    built["train_micro_batch_size_per_gpu"] = kw["micro"]
    built["train_batch_size"] = kw["train"]
    return built


def model_params(model: str, override: float | None) -> tuple[int | None, str]:
    if override:
        return int(override), "MODEL_PARAMS"
    cfg = Path(model) / "config.json"
    if cfg.is_file():
        import torch
        from transformers import AutoConfig, AutoModelForCausalLM

        with torch.device("meta"):
            m = AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(model))
        return sum(p.numel() for p in m.parameters()), f"{cfg} (counted on the meta device)"
    hit = re.search(r"qwen2\.5-(?:coder-|math-)?(\d+(?:\.\d+)?)b", model.lower())
    if hit and hit.group(1) in PARAM_TABLE:
        return PARAM_TABLE[hit.group(1)], f"Qwen2.5 size table ({hit.group(1)}B)"
    return None, "unknown model size"


def memory_estimate(params: int, actor_gpus: int, adam_offload: bool, colocate_ref: bool) -> dict:
    """Per-GPU / per-node memory from DeepSpeed's own ZeRO-2 estimator (+ the colocated bf16 reference)."""
    from deepspeed.runtime.zero.stage_1_and_2 import estimate_zero2_model_states_mem_needs

    est = {}
    for off in (True, False):
        cpu, gpu = estimate_zero2_model_states_mem_needs(params, num_gpus_per_node=actor_gpus, num_nodes=1,
                                                         cpu_offload=off, additional_buffer_factor=1.5)
        est[off] = (cpu / GIB, gpu / GIB)
    ref = 2 * params / GIB if colocate_ref else 0.0
    return {"actor_gpu": est[adam_offload][1], "ref_gpu": ref, "cpu": est[adam_offload][0],
            "total_gpu": est[adam_offload][1] + ref, "alt_total_gpu": est[not adam_offload][1] + ref}

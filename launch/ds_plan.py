"""The DeepSpeed side of a launch: configs/ds_config_zero2.json <-> OpenRLHF 0.5.7's flags, model shapes and
sizes, and DeepSpeed's own ZeRO memory estimators. Used by launch/preflight.py and launch/mem_plan.py."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

GIB = 2**30


@dataclass(frozen=True)
class Shape:
    """The sizes of a decoder-only (Llama/Qwen2-style) model that memory depends on."""

    hidden: int
    layers: int
    heads: int
    kv_heads: int
    intermediate: int
    vocab: int
    tied: bool
    max_positions: int = 32768
    head_dim: int = 0  # 0 = hidden // heads
    qkv_bias: bool = True  # Qwen2 has q/k/v biases, Llama has none

    @property
    def kv_dim(self) -> int:
        return self.kv_heads * (self.head_dim or self.hidden // self.heads)

    @property
    def q_dim(self) -> int:
        return self.heads * (self.head_dim or self.hidden // self.heads)

    def parameters(self) -> list[tuple[str, int]]:
        """(kind, numel) of every parameter tensor; kinds: embed, lm_head, matrix, bias, norm."""
        h, q, kv, inter = self.hidden, self.q_dim, self.kv_dim, self.intermediate
        layer = [("matrix", h * q), ("matrix", h * kv), ("matrix", h * kv), ("matrix", q * h),
                 ("matrix", h * inter), ("matrix", h * inter), ("matrix", inter * h), ("norm", h), ("norm", h)]
        if self.qkv_bias:
            layer += [("bias", q), ("bias", kv), ("bias", kv)]
        out = [("embed", self.vocab * h)] + layer * self.layers + [("norm", h)]
        if not self.tied:
            out.append(("lm_head", self.vocab * h))
        return out

    @property
    def num_params(self) -> int:
        return sum(n for _, n in self.parameters())


# The Qwen2.5 family (also the -Instruct and -Coder variants: same shapes), from each model's config.json;
# tests/launch/test_preflight.py checks Shape.num_params against what transformers' Qwen2ForCausalLM builds.
QWEN25_SHAPES = {
    "0.5": Shape(896, 24, 14, 2, 4864, 151936, True),
    "1.5": Shape(1536, 28, 12, 2, 8960, 151936, True),
    "3": Shape(2048, 36, 16, 2, 11008, 151936, True),
    "7": Shape(3584, 28, 28, 4, 18944, 152064, False),
    "14": Shape(5120, 48, 40, 8, 13824, 152064, False),
    "32": Shape(5120, 64, 40, 8, 27648, 152064, False),
    "72": Shape(8192, 80, 64, 8, 29568, 152064, False),
}
PARAM_TABLE = {size: shape.num_params for size, shape in QWEN25_SHAPES.items()}


class DeepSpeedMissing(RuntimeError):
    """DeepSpeed's memory estimators were needed and DeepSpeed is not importable."""


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


def _qwen25_size(model: str) -> str | None:
    hit = re.search(r"qwen2\.5-(?:coder-|math-)?(\d+(?:\.\d+)?)b", model.lower())
    return hit.group(1) if hit and hit.group(1) in QWEN25_SHAPES else None


def resolve_local(model: str) -> str:
    """A local directory for MODEL: itself, or its snapshot in the Hugging Face cache; else MODEL unchanged."""
    if Path(model).is_dir() or "/" not in model or model.startswith(("/", ".")):
        return model
    try:
        from huggingface_hub import try_to_load_from_cache

        hit = try_to_load_from_cache(model, "config.json")
    except Exception:  # no huggingface_hub, or not a repo id: nothing cached
        return model
    return str(Path(hit).parent) if isinstance(hit, str) else model


def model_params(model: str, override: float | None) -> tuple[int | None, str]:
    if override:
        return int(override), "MODEL_PARAMS"
    cfg = Path(resolve_local(model)) / "config.json"
    if cfg.is_file():
        import torch
        from transformers import AutoConfig, AutoModelForCausalLM

        with torch.device("meta"):
            m = AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(cfg.parent))
        return sum(p.numel() for p in m.parameters()), f"{cfg} (counted on the meta device)"
    size = _qwen25_size(model)
    if size:
        return PARAM_TABLE[size], f"Qwen2.5 size table ({size}B)"
    return None, "unknown model size"


def shape_from_config(cfg: dict) -> Shape | None:
    """A Shape from a HF config.json dict (Llama/Qwen2/Mistral field names); None if a size is missing."""
    try:
        heads = int(cfg["num_attention_heads"])
        return Shape(hidden=int(cfg["hidden_size"]), layers=int(cfg["num_hidden_layers"]), heads=heads,
                     kv_heads=int(cfg.get("num_key_value_heads") or heads),
                     intermediate=int(cfg["intermediate_size"]), vocab=int(cfg["vocab_size"]),
                     tied=bool(cfg.get("tie_word_embeddings", False)),
                     max_positions=int(cfg.get("max_position_embeddings") or 32768),
                     head_dim=int(cfg.get("head_dim") or 0),
                     qkv_bias=bool(cfg.get("attention_bias", cfg.get("model_type") == "qwen2")))
    except (KeyError, TypeError, ValueError):
        return None


def model_shape(model: str) -> tuple[Shape | None, str]:
    """The model's Shape: its own config.json (local dir or HF cache), else the Qwen2.5 table by name."""
    cfg = Path(resolve_local(model)) / "config.json"
    if cfg.is_file():
        shape = shape_from_config(json.loads(cfg.read_text()))
        return shape, str(cfg) if shape else f"{cfg} lacks a size field"
    size = _qwen25_size(model)
    if size:
        return QWEN25_SHAPES[size], f"Qwen2.5 size table ({size}B)"
    return None, "unknown model shape"


def zero_model_states(params: int, actor_gpus: int, stage: int, adam_offload: bool,
                      largest_layer: int) -> tuple[float, float]:
    """(host, per-GPU) bytes of the actor's model states from DeepSpeed's own estimators, without their
    x1.5 host buffer (mem_plan accounts for the host side itself)."""
    try:
        if stage == 3:
            from deepspeed.runtime.zero.stage3 import estimate_zero3_model_states_mem_needs

            cpu, gpu = estimate_zero3_model_states_mem_needs(params, largest_layer, num_gpus_per_node=actor_gpus,
                                                             cpu_offload=adam_offload, cpu_offload_params=False,
                                                             additional_buffer_factor=1.0)
        else:
            from deepspeed.runtime.zero.stage_1_and_2 import estimate_zero2_model_states_mem_needs

            cpu, gpu = estimate_zero2_model_states_mem_needs(params, num_gpus_per_node=actor_gpus, num_nodes=1,
                                                             cpu_offload=adam_offload, additional_buffer_factor=1.0)
    except ImportError as e:  # the light venv (quickstart) has no DeepSpeed
        raise DeepSpeedMissing(f"DeepSpeed is not importable by {sys.executable} ({e}): the memory plan uses its "
                               "ZeRO estimators; use the training env (bash scripts/setup_env.sh installs "
                               "deepspeed==0.16.4)") from None
    return float(cpu), float(gpu)

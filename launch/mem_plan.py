"""Memory plan of a GRPO launch on OpenRLHF 0.5.7: peak GiB per actor GPU, per vLLM-engine GPU and on the
host, phase by phase, with a breakdown. docs/setup_guide.md §6 explains every term.

Model states come from DeepSpeed's own estimators (launch/ds_plan.py); the rest is derived from what
OpenRLHF 0.5.7, DeepSpeed 0.16.4, transformers 4.46 and torch hold at each phase of a step. The few
constants that cannot be derived are in CALIBRATION, fitted to the 3B point measured on an H100
(docs/performance.md, "Launch memory plan") and re-checked by scripts/gpu_smoke.sh on every GPU machine it runs on.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from .ds_plan import GIB, Shape, zero_model_states

BF16 = 2
FP32 = 4

# Constants not derivable from the code, in one place (GiB unless named otherwise):
CALIBRATION = {
    # Per process holding a CUDA context on a GPU: context, cuBLAS/NCCL workspaces, caching-allocator slack.
    # Fitted to the 3B point (16.1 GiB sampled peak, actor + reference processes on one H100).
    "gpu_process_overhead_gib": 1.85,
    # HF generate grows its DynamicCache with torch.cat every token: old and new copies and the allocator's
    # segments for growing sizes keep about twice the final KV cache reserved.
    "hf_kv_fragmentation": 2.0,
    # Host RSS of one GPU worker process (torch + CUDA + NCCL + DeepSpeed + transformers, heap left over
    # from loading the model). Fitted to the 3B point (75.6 GiB host peak), with the node base below.
    "host_gpu_process_gib": 4.5,
    # Host RSS besides the GPU workers: OS, reward server and its sandbox workers, launcher; Ray head,
    # dashboard and the train_ppo_ray driver when Ray is used.
    "host_node_base_gib": 2.5,
    "host_ray_gib": 3.5,
    # vLLM 0.6 defaults that OpenRLHF 0.5.7 does not override (it has no --vllm_gpu_memory_utilization).
    "vllm_gpu_memory_utilization": 0.9,
    "vllm_swap_space_gib": 4.0,  # pinned CPU KV blocks per engine
    "vllm_cuda_graphs_gib": 0.75,  # captured after the KV cache is sized, so outside the 0.9
}
# DeepSpeed's default reduce bucket (elements): OpenRLHF passes "auto", which DeepSpeed's config drops.
REDUCE_BUCKET = 500_000_000
VLLM_MAX_NUM_SEQS = 256  # vLLM 0.6 default: the profile run's sequence count


@dataclass(frozen=True)
class Launch:
    """What memory depends on, as the launch command sets it."""

    params: int
    shape: Shape
    actor_gpus: int                 # actor world size
    colocate_ref: bool              # reference model on the actor's GPUs
    ray: bool                       # train_ppo_ray (actor and reference are separate processes)
    engines: int                    # vLLM engines (0 = HF generate in the actor)
    tp: int
    zero_stage: int
    adam_offload: bool
    overlap_comm: bool
    micro_train: int
    train_batch: int
    rollout_batch: int              # prompts per rollout
    micro_rollout: int
    n_samples: int
    prompt_tokens: int              # longest prompt a micro batch is padded to
    generate_tokens: int
    gradient_checkpointing: bool
    gpu_gib: float                  # memory of the smallest GPU
    enforce_eager: bool = False

    @property
    def seq(self) -> int:
        return self.prompt_tokens + self.generate_tokens

    @property
    def grad_accum(self) -> int:
        return max(1, self.train_batch // (self.micro_train * self.actor_gpus))


def pow2(nbytes: float) -> int:
    """Size torch's pinned-memory allocator really takes: it rounds every block up to a power of two."""
    n = int(nbytes)
    return 1 << (n - 1).bit_length() if n > 1 else n


def kv_bytes_per_token(shape: Shape, tp: int = 1) -> int:
    return 2 * shape.layers * max(1, shape.kv_dim // tp) * BF16


def layer_temporaries(shape: Shape, tokens: int) -> int:
    """Largest set of tensors one decoder layer holds at once in a no-grad forward (MLP: act, up, product)."""
    return tokens * (3 * shape.intermediate + 4 * shape.hidden) * BF16


def saved_per_layer(shape: Shape, tokens: int) -> int:
    """Activations one layer keeps for backward (norm inputs/outputs, q/k/v, attention out, MLP inputs)."""
    return tokens * (8 * shape.hidden + 2 * shape.kv_dim + 4 * shape.intermediate) * BF16


def largest_param(shape: Shape) -> int:
    return max(n for _, n in shape.parameters())


def _gib(d: dict) -> dict:
    return {k: round(v / GIB, 3) for k, v in d.items()}


def actor_gpu(lc: Launch) -> dict:
    """Per actor GPU: resident bytes, each phase's extra bytes, and the peaks."""
    s, cal = lc.shape, CALIBRATION
    procs = 2 if (lc.ray and lc.colocate_ref) else 1
    _, states = zero_model_states(lc.params, lc.actor_gpus, lc.zero_stage, lc.adam_offload, largest_param(s))
    ref = (BF16 * lc.params / (lc.actor_gpus if lc.zero_stage == 3 else 1)) if lc.colocate_ref else 0
    resident = {
        "cuda_runtime": procs * cal["gpu_process_overhead_gib"] * GIB,
        "actor_model_states_deepspeed": states,
        "reference_model_bf16": ref,
    }
    if lc.adam_offload and lc.zero_stage in (1, 2):
        resident["offload_grad_staging"] = BF16 * largest_param(s)
    r, m, seq = lc.micro_rollout, lc.micro_train, lc.seq
    gen = {}
    if lc.engines == 0:
        gen = {"hf_kv_cache": cal["hf_kv_fragmentation"] * r * seq * kv_bytes_per_token(s),
               "prefill_temporaries": layer_temporaries(s, r * lc.prompt_tokens),
               "sampling_logits": 3 * r * s.vocab * FP32}
    # Actor.forward: bf16 logits -> fp32 copy -> log_softmax, plus the KV cache the forward returns.
    fwd = {"logits_fp32_and_log_softmax": r * seq * s.vocab * 2 * FP32,
           "returned_kv_cache": r * seq * kv_bytes_per_token(s),
           "layer_temporaries": layer_temporaries(s, r * seq)}
    saved = (m * seq * s.hidden * BF16 * s.layers + saved_per_layer(s, m * seq)) if lc.gradient_checkpointing \
        else saved_per_layer(s, m * seq) * s.layers
    train = {"activations": saved,
             # log_softmax output kept for backward + its gradient + the gather's zero-filled gradient
             "logits_fp32_fwd_bwd": m * seq * s.vocab * 3 * FP32,
             "param_grad_in_flight": BF16 * largest_param(s)}
    if lc.zero_stage in (1, 2):
        train["zero_reduce_bucket"] = REDUCE_BUCKET * BF16 * (2 if lc.overlap_comm else 1)
    # DeepSpeed 0.16.4 stage_1_and_2.step() with CPU offload: fp32_partition.to(cuda) before the bf16 copy.
    spike = FP32 * lc.params / lc.actor_gpus if (lc.adam_offload and lc.zero_stage in (1, 2)) else 0
    if lc.adam_offload and lc.zero_stage == 3:
        spike = FP32 * min(lc.params / lc.actor_gpus, 1e9)  # sub_group_size chunks
    res = sum(resident.values())
    g, f, t = sum(gen.values()), sum(fwd.values()), sum(train.values())
    # Colocated under Ray, the reference forward runs in its own process while the actor's allocator still
    # holds its generation cache; in one process the forward reuses those blocks.
    exp = g + f if procs == 2 else max(g, f)
    phases = {"generate": res + g, "experience": res + exp, "train": res + t, "optimizer_step": res + spike}
    sustained = max(phases["generate"], phases["experience"], phases["train"])
    return {"processes": procs, "resident": _gib(resident), "generate": _gib(gen), "experience_forward": _gib(fwd),
            "train_micro_batch": _gib(train), "optimizer_step_upload": round(spike / GIB, 3),
            "phases": _gib(phases), "peak_gib": round(sustained / GIB, 2),
            "peak_with_step_spike_gib": round(max(sustained, phases["optimizer_step"]) / GIB, 2)}


def engine_gpu(lc: Launch) -> dict | None:
    """Per vLLM engine GPU (TP shard): vLLM takes its utilization share, then captures CUDA graphs."""
    if lc.engines == 0:
        return None
    s, cal = lc.shape, CALIBRATION
    util = cal["vllm_gpu_memory_utilization"]
    weights = BF16 * lc.params / lc.tp
    max_model_len = lc.seq
    batched = max(max_model_len, 2048)
    profile = layer_temporaries(s, batched) + VLLM_MAX_NUM_SEQS * s.vocab * 2 * FP32
    budget = util * lc.gpu_gib * GIB
    kv = budget - cal["gpu_process_overhead_gib"] * GIB - weights - profile
    per_tok = kv_bytes_per_token(s, lc.tp)
    capacity = int(max(kv, 0) // per_tok)
    samples = lc.rollout_batch * lc.n_samples // lc.engines
    graphs = 0 if lc.enforce_eager else cal["vllm_cuda_graphs_gib"] * GIB
    return {"gpu_memory_utilization": util, "weights_gib": round(weights / GIB, 2),
            "profile_activations_gib": round(profile / GIB, 2), "kv_cache_gib": round(max(kv, 0) / GIB, 2),
            "kv_capacity_tokens": capacity, "max_model_len": max_model_len,
            "samples_per_engine_per_rollout": samples,
            "concurrent_sequences": capacity // max_model_len,
            "peak_gib": round((budget + graphs) / GIB, 2)}


def host(lc: Launch) -> dict:
    """Host RAM of the node: offloaded optimizer (as torch's pinned allocator rounds it), processes."""
    s, cal = lc.shape, CALIBRATION
    a = lc.actor_gpus
    params = s.parameters()
    procs = a + (a if (lc.ray and lc.colocate_ref) else 0) + lc.engines * lc.tp
    comp = {}
    if lc.adam_offload:
        no_decay = sum(n for kind, n in params if kind in ("bias", "norm"))
        decay = lc.params - no_decay
        part = pow2(FP32 * decay / a) + pow2(FP32 * no_decay / a)  # the two optimizer param groups
        comp["fp32_master_pinned"] = a * part
        comp["fp32_grads_pinned"] = a * part
        comp["adam_moments"] = 2 * FP32 * lc.params
        if lc.grad_accum > 1 and lc.zero_stage in (1, 2):
            # accumulated_grads_in_cpu: one pinned bf16 buffer per parameter of a rank's partition
            comp["grad_accum_buffers_pinned"] = sum(pow2(BF16 * n) for _, n in params)
        comp["offload_staging_pinned"] = a * pow2(BF16 * largest_param(s))
    comp["gpu_worker_processes"] = procs * cal["host_gpu_process_gib"] * GIB
    if lc.engines:
        comp["vllm_swap_pinned"] = lc.engines * cal["vllm_swap_space_gib"] * GIB
    comp["os_server_launcher"] = cal["host_node_base_gib"] * GIB
    if lc.ray:
        comp["ray_head_and_driver"] = cal["host_ray_gib"] * GIB
    train_peak = sum(comp.values())
    # Start-up: each actor rank loads the bf16 model on CPU, then ZeRO flattens it there (copies + flat
    # buffer); a separate reference process loads another bf16 copy; train_ppo holds both in one rank.
    per_rank = (2 if lc.ray else 3) * BF16 * lc.params
    load = a * per_rank + (a * BF16 * lc.params if (lc.ray and lc.colocate_ref) else 0)
    base = sum(v for k, v in comp.items() if k in ("gpu_worker_processes", "os_server_launcher", "ray_head_and_driver"))
    phases = {"load": base + load, "train": train_peak}
    return {"gpu_processes": procs, "components": _gib(comp), "phases": _gib(phases),
            "peak_gib": round(max(phases.values()) / GIB, 2)}


def plan(lc: Launch) -> dict:
    """The whole plan, JSON-ready: gpu_peak_gib / gpu_peak_with_step_spike_gib / host_peak_gib + breakdown."""
    act, eng, hst = actor_gpu(lc), engine_gpu(lc), host(lc)
    gpu = max(act["peak_gib"], eng["peak_gib"] if eng else 0)
    spike = max(act["peak_with_step_spike_gib"], eng["peak_gib"] if eng else 0)
    inputs = {k: v for k, v in asdict(lc).items() if k != "shape"}
    inputs.update(shape=asdict(lc.shape), seq=lc.seq, grad_accum=lc.grad_accum)
    return {"gpu_peak_gib": gpu, "gpu_peak_with_step_spike_gib": spike, "host_peak_gib": hst["peak_gib"],
            "actor_gpu": act, "engine_gpu": eng, "host": hst, "inputs": inputs,
            "calibration": dict(CALIBRATION)}


def describe(p: dict) -> list[str]:
    """The plan as printable lines (the launch scripts' DRY_RUN shows them)."""
    i, a, h = p["inputs"], p["actor_gpu"], p["host"]
    out = [f"{i['params'] / 1e9:.2f}B params, {i['actor_gpus']} actor GPU(s)"
           f"{' + ' + str(i['engines']) + ' vLLM engine(s) x TP' + str(i['tp']) if i['engines'] else ', HF generate'}, "
           f"ZeRO-{i['zero_stage']}{' + Adam offload' if i['adam_offload'] else ''}; sequences "
           f"{i['prompt_tokens']}+{i['generate_tokens']} tokens, micro rollout {i['micro_rollout']}, "
           f"micro train {i['micro_train']}, grad accumulation {i['grad_accum']}",
           f"actor GPU resident ({a['processes']} process(es)): "
           + ", ".join(f"{k} {v:.1f}" for k, v in a["resident"].items() if v)]
    for name, key in (("generate", "generate"), ("experience fwd", "experience_forward"),
                      ("train micro batch", "train_micro_batch")):
        if a[key]:
            out.append(f"  + {name}: " + ", ".join(f"{k} {v:.2f}" for k, v in a[key].items()))
    ph = a["phases"]
    out.append(f"actor GPU by phase (GiB): generate {ph['generate']:.1f}, experience {ph['experience']:.1f}, "
               f"train {ph['train']:.1f}, optimizer step {ph['optimizer_step']:.1f} "
               f"(fp32 partition upload {a['optimizer_step_upload']:.1f}, < 1 s)")
    if p["engine_gpu"]:
        e = p["engine_gpu"]
        out.append(f"vLLM engine GPU: {e['gpu_memory_utilization']:.0%} of {i['gpu_gib']:.0f} GiB + CUDA graphs "
                   f"= {e['peak_gib']:.1f} GiB; weights {e['weights_gib']:.1f}, KV cache {e['kv_cache_gib']:.1f} GiB "
                   f"= {e['kv_capacity_tokens']:,} tokens = {e['concurrent_sequences']} sequences of "
                   f"{e['max_model_len']} (rollout sends {e['samples_per_engine_per_rollout']} per engine)")
    out.append(f"host ({h['gpu_processes']} GPU processes): " + ", ".join(f"{k} {v:.1f}" for k, v in h["components"].items()) +
               f"; start-up (model loading) {h['phases']['load']:.1f}")
    out.append(f"PEAK per GPU {p['gpu_peak_gib']:.1f} GiB sustained, {p['gpu_peak_with_step_spike_gib']:.1f} GiB "
               f"with the optimizer-step upload; host {p['host_peak_gib']:.1f} GiB")
    return out

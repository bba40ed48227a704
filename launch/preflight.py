#!/usr/bin/env python3
"""Checks the training launch scripts run before they spend GPU time (see docs/setup_guide.md).

    python -m coderl.launch.preflight ds-flags --ds_config configs/ds_config_zero2.json   # -> OpenRLHF flags
    python -m coderl.launch.preflight check --data D --reward_url U --gpus 4 --model M -- <OpenRLHF flags>
    python -m coderl.launch.preflight estimate --model Qwen/Qwen2.5-7B-Instruct --gpus 4  # model states only

`check` runs every check, then reports: each failure prints one `[preflight] FAIL <check>: <what is wrong
and what to do>` line, and the exit code is the first failing check's own (EXIT_CODES below), so scripts
and tests can tell them apart while a new set-up sees all its problems in one run.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from coderl.rewards.version import add_version_flag

from . import mem_plan
from .ds_plan import (
    GIB,
    DeepSpeedMissing,
    DsConfigError,
    config_diff,
    ds_config_to_flags,
    load_openrlhf_ds_utils,
    model_params,
    model_shape,
    rebuild_with_openrlhf,
    resolve_local,
    zero_model_states,
)

EXIT_CODES = {
    "usage": 2,
    "data_missing": 10,
    "data_invalid": 11,
    "openrlhf_missing": 12,
    "openrlhf_unpatched": 13,
    "openrlhf_flags": 14,
    "server_unreachable": 15,
    "server_mismatch": 16,
    "gpus": 17,
    "memory": 18,
    "ds_config": 19,
    "knobs": 20,
    "vllm": 21,
    "prompts": 22,
}
CHECKS = ("knobs", "data", "prompts", "openrlhf", "vllm", "server", "gpus", "memory")
# vLLM releases OpenRLHF 0.5.7's engine code runs with (patches/0003 header: it targets 0.6.x-0.7.x;
# setup_env.sh pins 0.6.0); the branches inside that range are read from the patched source itself.
SUPPORTED_VLLM = ">=0.6.0,<0.8"
# train_ppo_ray's argparse defaults, for flags a hand-written command leaves out.
OPENRLHF_DEFAULTS = {"micro_train_batch_size": 8, "train_batch_size": 128, "rollout_batch_size": 512,
                     "micro_rollout_batch_size": 8, "n_samples_per_prompt": 1, "prompt_max_len": 1024,
                     "generate_max_len": 1024, "zero_stage": 2, "vllm_num_engines": 0,
                     "vllm_tensor_parallel_size": 1, "actor_num_nodes": 1}


class PreflightError(Exception):
    def __init__(self, check: str, message: str, code: str | None = None):
        super().__init__(message)
        self.check, self.code = check, code or check


def say(msg: str) -> None:
    print(f"[preflight] {msg}", flush=True)


def cmd_ds_flags(args, stdout) -> int:
    path = Path(args.ds_config)
    try:
        cfg = json.loads(path.read_text())
    except FileNotFoundError:
        raise PreflightError("ds_config", f"{path}: file not found (DS_CONFIG)") from None
    except json.JSONDecodeError as e:
        raise PreflightError("ds_config", f"{path}: not valid JSON: {e}") from None
    cfg = {k: v for k, v in cfg.items() if not k.startswith("_")}
    try:
        flags, kw = ds_config_to_flags(cfg, args.micro_train_batch_size, args.train_batch_size)
    except DsConfigError as e:
        raise PreflightError("ds_config", f"{path}: {e}") from None
    ds_utils = load_openrlhf_ds_utils()
    if ds_utils is None:
        print(f"[preflight] note: OpenRLHF not importable here; {path} mapped to flags without the "
              "round-trip check", file=sys.stderr)
    else:
        expected = dict(cfg)
        expected["train_micro_batch_size_per_gpu"] = kw["micro"]
        expected["train_batch_size"] = kw["train"]
        diffs = list(config_diff(expected, rebuild_with_openrlhf(ds_utils, kw)))
        if diffs:
            raise PreflightError("ds_config", f"{path} cannot be expressed with OpenRLHF's flags: "
                                 + "; ".join(diffs))
    print("\n".join(flags), file=stdout, flush=True)
    return 0


# ------------------------------------------------------------------------------------------------ checks
def parse_flags(words: list[str]) -> dict[str, str | bool]:
    """['--a', '1', '--b', '--c', 'x'] -> {'a': '1', 'b': True, 'c': 'x'} (last value wins)."""
    out: dict[str, str | bool] = {}
    for i, w in enumerate(words):
        if w.startswith("--"):
            nxt = words[i + 1] if i + 1 < len(words) else None
            out[w[2:]] = nxt if nxt is not None and not nxt.startswith("--") else True
    return out


def flag_int(flags: dict, name: str, default: int | None = None) -> int:
    return int(flags.get(name, OPENRLHF_DEFAULTS.get(name) if default is None else default))


def check_knobs(a, flags: dict) -> str:
    ray = a.cli.endswith("_ray")
    nodes = flag_int(flags, "actor_num_nodes")
    per_node = flag_int(flags, "actor_num_gpus_per_node", a.gpus)
    actor_gpus = per_node * nodes
    engines, tp = flag_int(flags, "vllm_num_engines"), flag_int(flags, "vllm_tensor_parallel_size")
    n, rollout = flag_int(flags, "n_samples_per_prompt"), flag_int(flags, "rollout_batch_size")
    micro, train = flag_int(flags, "micro_train_batch_size"), flag_int(flags, "train_batch_size")
    stage = flag_int(flags, "zero_stage")
    problems, notes = [], []
    if n < 2:
        problems.append(f"N_SAMPLES={n}: group_norm needs at least 2 samples per prompt")
    if actor_gpus < 1:
        problems.append(f"no GPUs left for the actor (GPUS={a.gpus}, vLLM takes {engines * tp})")
    else:
        if rollout % actor_gpus:
            problems.append(f"ROLLOUT_BATCH_SIZE={rollout} must be divisible by the actor's {actor_gpus} GPUs")
        if train % (micro * actor_gpus):
            problems.append(f"TRAIN_BATCH_SIZE={train} must be divisible by MICRO_TRAIN_BATCH_SIZE x actor "
                            f"GPUs = {micro} x {actor_gpus}")
        if engines and actor_gpus % engines:
            problems.append(f"actor GPUs ({actor_gpus}) must be divisible by VLLM_ENGINES={engines} "
                            "(train_ppo_ray: actor_world_size % vllm_num_engines == 0)")
    if ray and nodes == 1 and per_node + engines * tp != a.gpus:
        problems.append(f"GPUS={a.gpus} but the command places actor {per_node} + vLLM {engines} engine(s) x "
                        f"TP {tp} = {per_node + engines * tp} GPUs")
    if ray and "colocate_actor_ref" in flags and (
            flag_int(flags, "ref_num_gpus_per_node", 8) != per_node or flag_int(flags, "ref_num_nodes", 1) != nodes):
        problems.append("--colocate_actor_ref needs the reference on as many nodes/GPUs as the actor")
    if stage == 3 and not (ray and engines):
        problems.append("ZeRO-3 (DS_CONFIG) needs vLLM engines in OpenRLHF 0.5.7 (its _validate_args asserts it)")
    if "adam_offload" in flags and stage == 0:
        problems.append("Adam offload needs ZeRO stage 1-3: stage 0 runs DeepSpeedCPUAdam on GPU tensors")
    if (rollout * n) % train:
        problems.append(f"ROLLOUT_BATCH_SIZE x N_SAMPLES = {rollout * n} samples per rollout is not a multiple "
                        f"of TRAIN_BATCH_SIZE={train} (the remainder is dropped)")
    if "ref_reward_offload" in flags and stage != 3:
        notes.append("REF_OFFLOAD=1 has no effect below ZeRO-3 (the reference runs ZeRO-0, where DeepSpeed "
                     "ignores offload_param)")
    if problems:
        raise PreflightError("knobs", "; ".join(problems))
    for note in notes:
        say(f"note: {note}")
    gen = f"{engines} vLLM engine(s) x TP {tp}" if engines else "HF generate (no vLLM)"
    return f"{actor_gpus} actor GPU(s), {gen}, ZeRO-{stage}, {rollout} prompts x {n} samples"


def check_data(a, _flags) -> str:
    from coderl.rewards.labels import LabelError, parse_label

    path = Path(a.data)
    if not path.is_file():
        raise PreflightError("data", f"data file not found: {path} (set DATA=…/train.jsonl written by "
                             "python data/preprocess.py)", "data_missing")
    rows = 0
    with path.open(encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if rows >= a.check_rows:
                break
            if not line.strip():
                continue
            where = f"{path}:{lineno}"
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                raise PreflightError("data", f"{where}: not valid JSON: {e}", "data_invalid") from None
            msgs = row.get("input") if isinstance(row, dict) else None
            if not (isinstance(msgs, list) and msgs and all(
                    isinstance(m, dict) and isinstance(m.get("role"), str) and isinstance(m.get("content"), str)
                    for m in msgs)):
                raise PreflightError("data", f"{where}: field 'input' must be a list of chat messages "
                                     "{role, content} (OpenRLHF applies the chat template to it)", "data_invalid")
            if not any(m["role"] == "user" for m in msgs):
                raise PreflightError("data", f"{where}: field 'input' has no user message", "data_invalid")
            if not isinstance(row.get("label"), str):
                raise PreflightError("data", f"{where}: field 'label' must be a JSON string", "data_invalid")
            try:
                parse_label(row["label"])
            except LabelError as e:
                raise PreflightError("data", f"{where}: field 'label': {e}", "data_invalid") from None
            rows += 1
    if rows == 0:
        raise PreflightError("data", f"{path} has no rows", "data_missing")
    return f"{path} ({rows} first rows parse)"


def check_openrlhf(a, flags: dict) -> str:
    spec = importlib.util.find_spec("openrlhf")
    if spec is None:
        raise PreflightError("openrlhf", f"OpenRLHF is not importable by {sys.executable}: run "
                             "bash scripts/setup_env.sh (or pip install openrlhf==0.5.7 --no-deps)", "openrlhf_missing")
    where = list(spec.submodule_search_locations or [spec.origin])[0]
    try:
        proc = subprocess.run([sys.executable, "-m", a.cli, "--help"], capture_output=True, text=True,
                              timeout=a.openrlhf_timeout_s)
    except subprocess.TimeoutExpired:
        raise PreflightError("openrlhf", f"`python -m {a.cli} --help` took over {a.openrlhf_timeout_s}s",
                             "openrlhf_missing") from None
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise PreflightError("openrlhf", f"`python -m {a.cli} --help` failed ({where}): {last}",
                             "openrlhf_missing")
    if "group_norm" not in proc.stdout:
        raise PreflightError("openrlhf", f"OpenRLHF at {where} is not patched (no group_norm estimator): run "
                             f"bash patches/apply_patches.sh {Path(where).parent}", "openrlhf_unpatched")
    known = set(re.findall(r"--([A-Za-z0-9_]+)", proc.stdout))
    unknown = sorted(f"--{k}" for k in flags if k not in known)
    if unknown:
        raise PreflightError("openrlhf", f"{a.cli} at {where} does not accept {', '.join(unknown)}",
                             "openrlhf_flags")
    return f"{where} (patched: group_norm; all {len(flags)} flags accepted)"


def _openrlhf_dir() -> Path | None:
    spec = importlib.util.find_spec("openrlhf")
    return Path(list(spec.submodule_search_locations)[0]) if spec and spec.submodule_search_locations else None


def check_vllm(a, flags: dict) -> str:
    """vLLM's version against the range we support and against the comparisons in the patched
    trainer/ray/vllm_engine.py (patch 0003), read from that file, not restated here."""
    from importlib.metadata import PackageNotFoundError, version

    from packaging.specifiers import SpecifierSet
    from packaging.version import InvalidVersion, Version

    engines, tp = flag_int(flags, "vllm_num_engines"), flag_int(flags, "vllm_tensor_parallel_size")
    if not engines:
        return "not used (HF generate)"
    try:
        raw = version("vllm")
        have = Version(raw.split("+")[0])
    except PackageNotFoundError:
        raise PreflightError("vllm", f"VLLM_ENGINES={engines} but vLLM is not installed for {sys.executable}: "
                             "bash scripts/setup_env.sh installs vllm==0.6.0 (or USE_VLLM=0)") from None
    except InvalidVersion:
        raise PreflightError("vllm", f"vLLM reports an unparseable version {raw!r}") from None
    if have not in SpecifierSet(SUPPORTED_VLLM):
        raise PreflightError("vllm", f"vLLM {raw} is outside {SUPPORTED_VLLM}, the releases OpenRLHF 0.5.7's "
                             "engine code runs with: install vllm==0.6.0 (scripts/setup_env.sh)")
    root = _openrlhf_dir()
    engine_py = root / "trainer" / "ray" / "vllm_engine.py" if root else None
    text = engine_py.read_text() if engine_py and engine_py.is_file() else ""
    if "def vllm_version" not in text:
        raise PreflightError("vllm", f"{engine_py or 'OpenRLHF'} compares vLLM versions as strings (patch 0003 "
                             f"not applied): bash patches/apply_patches.sh {root.parent if root else '<OpenRLHF>'}")
    taken = []
    for op, ref in re.findall(r'vllm_version\([^)]*\) ([<>=!]=?) Version\("([^"]+)"\)', text):
        if SpecifierSet(f"{op}{ref}").contains(have, prereleases=True):
            taken.append(f"{op}{ref}")
    prefix = "; prefix caching off (< 0.7.0)" if "enable_prefix_caching" in flags and have < Version("0.7.0") else ""
    executor = "GPU executor + WorkerWrap" if tp == 1 else "Ray executor"
    return f"vLLM {raw} in {SUPPORTED_VLLM}; patched comparisons true: {', '.join(taken) or 'none'}; " \
           f"{engines} engine(s), TP {tp}: {executor}{prefix}"


def _health_url(reward_url: str) -> str:
    u = urllib.parse.urlsplit(reward_url)
    return urllib.parse.urlunsplit((u.scheme, u.netloc, "/health", u.query, ""))


def _http(url: str, body: dict | None, timeout: float) -> dict:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read())


def check_server(a, flags: dict) -> str:
    health = _health_url(a.reward_url)
    try:
        port = urllib.parse.urlsplit(a.reward_url).port or 80
    except ValueError:
        raise PreflightError("server", f"REWARD_URL={a.reward_url} has no valid port", "server_unreachable") from None
    hint = f"start it in another terminal: python rewards/reward_server.py --data_path {a.data} --port {port}"
    if isinstance(flags.get("save_path"), str):  # the run's per-batch reward components, beside its logs
        hint += f" --reward_log {Path(flags['save_path']).parent / 'logs' / 'rewards.jsonl'}"
    try:
        h = _http(health, None, a.server_timeout_s)
    except urllib.error.HTTPError as e:
        code = "server_mismatch" if e.code in (401, 403) else "server_unreachable"
        raise PreflightError("server", f"GET {health} -> HTTP {e.code}"
                             + (" (wrong or missing ?token= in REWARD_URL)" if e.code in (401, 403) else ""),
                             code) from None
    except (urllib.error.URLError, OSError, ValueError) as e:
        reason = getattr(e, "reason", e)
        raise PreflightError("server", f"reward server not reachable at {health} ({reason}); {hint}",
                             "server_unreachable") from None
    if not h.get("ready"):
        raise PreflightError("server", f"{health} answers but is not ready: {h}", "server_mismatch")
    ds = h.get("dataset") or {}
    if not Path(a.data).is_file():  # the data check has failed already; the server itself is up
        return f"{health}: ready, {ds.get('rows')} rows of {ds.get('path')} (DATA missing here: not compared)"
    local = hashlib.sha256(Path(a.data).read_bytes()).hexdigest()
    if ds.get("sha256") != local:
        raise PreflightError("server", f"the reward server serves another data file: {ds.get('path')} "
                             f"(sha256 {str(ds.get('sha256'))[:12]}…, {ds.get('rows')} rows) but DATA={a.data} "
                             f"has sha256 {local[:12]}…; restart the server with --data_path {a.data}",
                             "server_mismatch")
    probe = "preflight probe"  # a known prompt with an empty response: exercises the lookup, runs no code
    try:
        first = json.loads(Path(a.data).open(encoding="utf-8").readline())
        probe = [m["content"] for m in first["input"] if m.get("role") == "user"][-1]
    except (OSError, ValueError, KeyError, IndexError, TypeError):
        pass
    try:
        r = _http(a.reward_url, {"query": [probe]}, a.server_timeout_s)
    except urllib.error.HTTPError as e:
        raise PreflightError("server", f"POST {a.reward_url} -> HTTP {e.code}"
                             + (" (wrong or missing ?token= in REWARD_URL)" if e.code in (401, 403) else ""),
                             "server_mismatch") from None
    except (urllib.error.URLError, OSError, ValueError) as e:
        raise PreflightError("server", f"POST {a.reward_url} failed: {getattr(e, 'reason', e)}",
                             "server_unreachable") from None
    if not (isinstance(r.get("rewards"), list) and len(r["rewards"]) == 1):
        raise PreflightError("server", f"POST {a.reward_url} did not answer {{'rewards': [x]}}: {r}",
                             "server_mismatch")
    return f"{health}: ready, {ds.get('rows')} rows, same file (sha256 {local[:12]}…), isolation " \
           f"{(h.get('isolation') or {}).get('mode', '?')}"


def visible_gpus() -> list[tuple[str, float]]:
    """(name, total memory GiB) per GPU this process may use (honours CUDA_VISIBLE_DEVICES)."""
    smi = shutil.which("nvidia-smi")
    if smi:
        proc = subprocess.run([smi, "--query-gpu=index,uuid,name,memory.total", "--format=csv,noheader,nounits"],
                              capture_output=True, text=True, timeout=60)
        if proc.returncode == 0:
            gpus = [[x.strip() for x in line.split(",")] for line in proc.stdout.strip().splitlines() if line]
            vis = os.environ.get("CUDA_VISIBLE_DEVICES")
            if vis is not None:
                want = [v.strip() for v in vis.split(",") if v.strip()]
                gpus = [g for w in want for g in gpus if w in (g[0], g[1])]
            return [(g[2], float(g[3]) / 1024) for g in gpus]
    try:
        import torch

        return [(torch.cuda.get_device_name(i), torch.cuda.get_device_properties(i).total_memory / GIB)
                for i in range(torch.cuda.device_count())]
    except Exception:  # no torch / no driver: no GPUs
        return []


def check_gpus(a, _flags) -> str:
    gpus = visible_gpus()
    a._gpus_seen = gpus
    if not gpus and a.dry_run:
        return "WARN no GPU visible (DRY_RUN: GPU count and memory fit not checked)"
    if len(gpus) < a.gpus:
        raise PreflightError("gpus", f"GPUS={a.gpus} but {len(gpus)} GPU(s) visible "
                             f"(nvidia-smi / CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES', 'unset')})")
    return f"{len(gpus)} visible: " + ", ".join(sorted({f'{n} {m:.0f} GiB' for n, m in gpus}))


def data_prompt_lengths(a) -> tuple[list[int], str] | None:
    """Tokens of each DATA prompt as OpenRLHF sees it (MODEL's chat template, data/prompt_budget.py), and the
    tokenizer's path; None without a local tokenizer or data. Measured once, shared by `prompts` and `memory`."""
    if hasattr(a, "_prompt_lengths"):
        return a._prompt_lengths
    a._prompt_lengths = None
    local = Path(resolve_local(a.model))
    if (local / "tokenizer_config.json").is_file() and Path(a.data).is_file():
        from coderl.data.prompt_budget import load_tokenizer, prompt_lengths

        convs = []
        with open(a.data, encoding="utf-8") as f:
            for line in f:
                if a.plan_rows and len(convs) >= a.plan_rows:
                    break
                try:
                    msgs = json.loads(line)["input"]
                except (ValueError, KeyError, TypeError):
                    continue  # blank or malformed: the data check names it
                if isinstance(msgs, list):
                    convs.append(msgs)
        try:
            a._prompt_lengths = prompt_lengths(load_tokenizer(str(local)), convs), str(local)
        except Exception as e:  # a template that cannot render these rows: say so, plan without it
            raise PreflightError("prompts", f"cannot render DATA's prompts with {local}'s chat template: {e}") \
                from None
    return a._prompt_lengths


def check_prompts(a, flags: dict) -> str:
    """Prompts longer than PROMPT_MAX_LEN are truncated by OpenRLHF, then match nothing at the reward server
    and score the unmatched reward (0): a step without learning signal, so this fails the launch."""
    cap = flag_int(flags, "prompt_max_len")
    if not Path(a.data).is_file():
        return "WARN not measured: no DATA file (the data check names it)"
    measured = data_prompt_lengths(a)
    if measured is None:
        return (f"WARN not measured (no local tokenizer for MODEL={a.model}): a prompt longer than "
                f"PROMPT_MAX_LEN={cap} tokens gets reward 0; python data/preprocess.py --max_prompt_tokens {cap} "
                "--tokenizer MODEL_DIR drops such rows")
    lengths, tok = measured
    over = sum(n > cap for n in lengths)
    longest = max(lengths, default=0)
    if over:
        raise PreflightError("prompts", (
            f"{over} of {len(lengths)} prompts in {a.data} are longer than PROMPT_MAX_LEN={cap} tokens "
            f"under {tok}'s chat template (longest {longest}): OpenRLHF truncates them, the reward server "
            f"cannot match a truncated prompt, and every response to it gets reward 0. Raise PROMPT_MAX_LEN to "
            f"{longest}, or drop them: python data/preprocess.py ... --max_prompt_tokens {cap} "
            f"--tokenizer {tok}"))
    return f"all {len(lengths)} prompts fit PROMPT_MAX_LEN={cap} (longest {longest} tokens)"


def prompt_tokens(a, flags: dict) -> tuple[int, str]:
    """Longest prompt of DATA under MODEL's chat template, capped by PROMPT_MAX_LEN: the length micro
    batches are padded to. PROMPT_MAX_LEN itself when no tokenizer is at hand."""
    cap = flag_int(flags, "prompt_max_len")
    if a.plan_prompt_tokens:
        return min(cap, a.plan_prompt_tokens), "PLAN_PROMPT_TOKENS"
    measured = data_prompt_lengths(a)
    if measured is None:
        return cap, f"PROMPT_MAX_LEN (no local tokenizer for {a.model}; PLAN_PROMPT_TOKENS=N sets it)"
    lengths = measured[0]
    longest = max(lengths, default=0)
    return min(cap, longest), f"longest of {len(lengths)} prompts in DATA ({longest} tokens), capped at {cap}"


def build_launch(a, flags: dict, shape, params: int, gpu_gib: float) -> mem_plan.Launch:
    ray = a.cli.endswith("_ray")
    actor = flag_int(flags, "actor_num_gpus_per_node", a.gpus) * flag_int(flags, "actor_num_nodes") if ray \
        else a.gpus
    tokens, source = prompt_tokens(a, flags)
    a._prompt_source = source
    return mem_plan.Launch(
        params=params, shape=shape, actor_gpus=actor, colocate_ref=(not ray) or "colocate_actor_ref" in flags,
        ray=ray, engines=flag_int(flags, "vllm_num_engines") if ray else 0,
        tp=flag_int(flags, "vllm_tensor_parallel_size"), zero_stage=flag_int(flags, "zero_stage"),
        adam_offload="adam_offload" in flags, overlap_comm="overlap_comm" in flags,
        micro_train=flag_int(flags, "micro_train_batch_size"), train_batch=flag_int(flags, "train_batch_size"),
        rollout_batch=flag_int(flags, "rollout_batch_size"), micro_rollout=flag_int(flags, "micro_rollout_batch_size"),
        n_samples=flag_int(flags, "n_samples_per_prompt"), prompt_tokens=tokens,
        generate_tokens=flag_int(flags, "generate_max_len"),
        gradient_checkpointing="gradient_checkpointing" in flags, gpu_gib=gpu_gib,
        enforce_eager="enforce_eager" in flags)


def write_json(path: str, obj: dict) -> None:
    """Atomic: a temp file in the same directory, then rename."""
    dest = Path(path)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(obj, indent=2) + "\n")
    os.replace(tmp, dest)


def host_ram_gib(override: float | None = None) -> float | None:
    """The node's RAM: PLAN_HOST_GIB when set (planning for another machine), else this machine's."""
    if override:
        return override
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / GIB
    except (ValueError, OSError):
        return None


def check_memory(a, flags: dict) -> str:
    params, psource = model_params(a.model, a.model_params)
    shape, ssource = model_shape(a.model)
    if params is None and shape is not None:
        params, psource = shape.num_params, ssource
    if params is None:
        return f"WARN {psource} for MODEL={a.model}; set MODEL_PARAMS=7.6e9 for an estimate"
    gpus = getattr(a, "_gpus_seen", None) or []
    smallest = min(m for _, m in gpus) if gpus else None
    if shape is None:  # only the model states can be planned
        return _check_model_states(a, flags, params, psource, ssource, smallest)
    lc = build_launch(a, flags, shape, params, smallest or a.plan_gpu_gib)
    plan = _memory_plan(a, lc, psource, ssource, smallest)
    # This machine's RAM only counts where it is the training node (GPUs visible) or PLAN_HOST_GIB says.
    ram = host_ram_gib(a.plan_host_gib) if gpus or a.plan_host_gib else None
    problems = [*_engine_problems(plan["engine_gpu"], shape), *_actor_problems(a, lc, plan["actor_gpu"], smallest),
                *_host_problems(a, plan, ram)]
    if problems:
        raise PreflightError("memory", "; ".join(problems))
    if ram and plan["host_peak_gib"] > 0.9 * ram:
        say(f"WARN host RAM {ram:.0f} GiB leaves < 10% above the planned {plan['host_peak_gib']:.0f} GiB")
    act, eng = plan["actor_gpu"], plan["engine_gpu"]
    where = f"of {smallest:.0f} GiB" if smallest else f"(assumed {a.plan_gpu_gib:.0f} GiB GPUs, none visible)"
    return f"actor GPU {act['peak_gib']:.1f} GiB sustained / {act['peak_with_step_spike_gib']:.1f} GiB with the " \
           f"step upload {where}" + (f", vLLM engine GPU {eng['peak_gib']:.1f} GiB" if eng else "") + \
           f"; host {plan['host_peak_gib']:.0f} GiB" + (f" of {ram:.0f}" if ram else " (not checked: no GPU "
                                                         "visible, PLAN_HOST_GIB unset)")


def _gpu_what(smallest: float | None) -> str:
    return "the smallest GPU has" if smallest else "PLAN_GPU_GIB (no GPU visible) is"


def _check_model_states(a, flags: dict, params: float, psource: str, ssource: str, smallest: float | None) -> str:
    """Without the model's shape: DeepSpeed's model states plus the bf16 reference against the GPU."""
    actor = flag_int(flags, "actor_num_gpus_per_node", a.gpus)
    _, states = zero_model_states(params, actor, flag_int(flags, "zero_stage"), "adam_offload" in flags, 0)
    total = (states + 2 * params) / GIB
    say(f"memory: {params / 1e9:.2f}B params ({psource}); {ssource}: DeepSpeed model states "
        f"{states / GIB:.1f} + reference {2 * params / GIB:.1f} = {total:.1f} GiB/GPU, activations not planned")
    gpu_gib = smallest or a.plan_gpu_gib
    if total > a.max_gpu_fraction * gpu_gib:
        raise PreflightError("memory", f"model states need {total:.1f} GiB/GPU but {_gpu_what(smallest)} "
                             f"{gpu_gib:.0f} GiB: use more GPUs, Adam offload or a smaller model")
    return f"WARN plan incomplete: MODEL={a.model} has no config.json here (model states {total:.1f} GiB/GPU)"


def _memory_plan(a, lc, psource: str, ssource: str, smallest: float | None) -> dict:
    """mem_plan's plan of this launch, printed (and written to PLAN_JSON)."""
    plan = mem_plan.plan(lc)
    plan["inputs"].update(model=a.model, params_source=psource, shape_source=ssource,
                          prompt_tokens_source=a._prompt_source,
                          gpu_gib_source="smallest visible GPU" if smallest else "PLAN_GPU_GIB (no GPU visible)")
    say(f"memory plan: MODEL={a.model}; params {psource}; shape {ssource}; prompts: {a._prompt_source}")
    for line in mem_plan.describe(plan):
        say("  " + line)
    if a.plan_json:
        write_json(a.plan_json, plan)
        say(f"  plan written to {a.plan_json}")
    return plan


def _engine_problems(eng: dict | None, shape) -> list[str]:
    """What stops a vLLM engine of this plan from starting."""
    if not eng:
        return []
    problems = []
    if eng["kv_capacity_tokens"] < eng["max_model_len"]:
        problems.append(f"a vLLM engine's KV cache holds {eng['kv_capacity_tokens']} tokens, fewer than "
                        f"max_model_len {eng['max_model_len']} (vLLM refuses to start): raise VLLM_TP_SIZE or "
                        "shorten PROMPT_MAX_LEN/GENERATE_MAX_LEN")
    if eng["max_model_len"] > shape.max_positions:
        problems.append(f"PROMPT_MAX_LEN + GENERATE_MAX_LEN = {eng['max_model_len']} exceeds the model's "
                        f"max_position_embeddings {shape.max_positions} (vLLM refuses it)")
    return problems


def _actor_problems(a, lc, act: dict, smallest: float | None) -> list[str]:
    """An actor GPU's planned peak against the GPU (on a login node, DRY_RUN: the GPUs PLAN_GPU_GIB describes)."""
    gpu_need, gpu_gib = act["peak_with_step_spike_gib"], smallest or a.plan_gpu_gib
    if gpu_need <= a.max_gpu_fraction * gpu_gib:
        return []
    worst = max(act["phases"], key=act["phases"].get)
    hint = {"experience": "lower MICRO_ROLLOUT_BATCH_SIZE (the fp32 logits of a micro rollout dominate)",
            "train": "lower MICRO_TRAIN_BATCH_SIZE", "generate": "lower MICRO_ROLLOUT_BATCH_SIZE or use vLLM",
            "optimizer_step": "use more actor GPUs"}[worst]
    if not lc.adam_offload:
        hint = "enable Adam offload (offload_optimizer.device=cpu in DS_CONFIG), or " + hint
    return [f"an actor GPU needs {gpu_need:.1f} GiB (peak phase: {worst}) but {_gpu_what(smallest)} "
            f"{gpu_gib:.0f} GiB (limit {a.max_gpu_fraction:.0%}): {hint}"]


def _host_problems(a, plan: dict, ram: float | None) -> list[str]:
    if not ram or plan["host_peak_gib"] <= ram:
        return []
    ram_what = "PLAN_HOST_GIB is" if a.plan_host_gib else "the node has"
    return [f"the node needs {plan['host_peak_gib']:.0f} GiB of host RAM but {ram_what} {ram:.0f} GiB: "
            "use more nodes, fewer GPU processes, or a smaller model"]


def cmd_check(args, flag_words: list[str]) -> int:
    flags = parse_flags(flag_words)
    skip = {s.strip() for s in (args.skip or "").split(",") if s.strip()}
    bad = skip - set(CHECKS)
    if bad:
        raise PreflightError("usage", f"unknown check(s) in --skip: {', '.join(sorted(bad))} (known: {', '.join(CHECKS)})")
    funcs = {"knobs": check_knobs, "data": check_data, "prompts": check_prompts, "openrlhf": check_openrlhf,
             "vllm": check_vllm, "server": check_server, "gpus": check_gpus, "memory": check_memory}
    failed: list[PreflightError] = []
    for name in CHECKS:
        if name in skip:
            say(f"skip {name}")
            continue
        try:
            result = funcs[name](args, flags)
        except PreflightError as err:
            failed.append(err)
            report_failure(err)
            continue
        except DeepSpeedMissing as err:
            failed.append(PreflightError("memory", f"{err}; or skip this check: PREFLIGHT_SKIP=memory"))
            report_failure(failed[-1])
            continue
        if result.startswith("WARN "):
            say(f"warn {name}: {result[5:]}")
        else:
            say(f"ok   {name}: {result}")
    if failed:
        print(f"[preflight] {len(failed)} check(s) failed: {', '.join(e.check for e in failed)} (each FAIL line "
              "above says what to do)", file=sys.stderr, flush=True)
        return EXIT_CODES[failed[0].code]
    say("all checks passed" if not skip else f"checks passed (skipped: {', '.join(sorted(skip))})")
    return 0


def report_failure(err: PreflightError) -> None:
    print(f"[preflight] FAIL {err.check}: {err}", file=sys.stderr, flush=True)


def cmd_estimate(args) -> int:
    params, source = model_params(args.model, args.model_params)
    if params is None:
        raise PreflightError("memory", f"{source} for MODEL={args.model}; pass --model_params")
    print(f"{params / 1e9:.2f}B params ({source}), {args.gpus} GPU(s), ZeRO-2 (+ colocated bf16 reference), "
          "model states only (the launch's DRY_RUN prints the full plan):")
    ref = 2 * params / GIB
    for off in (False, True):
        cpu, gpu = zero_model_states(params, args.gpus, 2, off, 0)
        print(f"  Adam offload {'on ' if off else 'off'}: actor {gpu / GIB:5.1f} + ref {ref:4.1f} "
              f"= {gpu / GIB + ref:5.1f} GiB/GPU; host RAM {cpu / GIB:.0f} GiB/node for the optimizer")
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    flag_words: list[str] = []
    if "--" in argv:
        i = argv.index("--")
        argv, flag_words = argv[:i], argv[i + 1:]
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="exit codes: " + ", ".join(f"{v}={k}" for k, v in EXIT_CODES.items()))
    add_version_flag(p)
    sub = p.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("ds-flags", help="print the OpenRLHF flags a DeepSpeed JSON stands for")
    d.add_argument("--ds_config", required=True)
    d.add_argument("--micro_train_batch_size", type=int, default=None, help="override the JSON's value")
    d.add_argument("--train_batch_size", type=int, default=None, help="override the JSON's value")
    c = sub.add_parser("check", help="run the checks; OpenRLHF flags of the command follow `--`")
    c.add_argument("--data_path", "--data", dest="data", required=True,
                   help="the training JSONL (the reward server's --data_path; launch scripts: DATA)")
    c.add_argument("--reward_url", required=True)
    c.add_argument("--gpus", type=int, required=True, help="GPUs the job uses on this node")
    c.add_argument("--model", required=True)
    c.add_argument("--model_params", type=float, default=None)
    c.add_argument("--cli", default="openrlhf.cli.train_ppo_ray", help="OpenRLHF module the script runs")
    c.add_argument("--skip", default="", help=f"comma-separated checks to skip: {', '.join(CHECKS)}")
    c.add_argument("--dry_run", action="store_true", help="no visible GPU is a warning, not a failure")
    c.add_argument("--check_rows", type=int, default=20)
    c.add_argument("--server_timeout_s", type=float, default=10.0)
    c.add_argument("--openrlhf_timeout_s", type=float, default=180.0)
    c.add_argument("--max_gpu_fraction", type=float, default=0.9)
    c.add_argument("--plan_json", default=None, help="also write the memory plan here (JSON, atomic)")
    c.add_argument("--plan_prompt_tokens", type=int, default=None,
                   help="prompt length to plan for (default: longest prompt in DATA, or PROMPT_MAX_LEN)")
    c.add_argument("--plan_rows", type=int, default=0,
                   help="DATA rows whose prompts are measured (0 = all: `prompts` counts every one over)")
    c.add_argument("--plan_gpu_gib", type=float, default=80.0, help="GPU size to plan for when none is visible")
    c.add_argument("--plan_host_gib", type=float, default=None, help="host RAM to check against (default: this one's)")
    e = sub.add_parser("estimate", help="print DeepSpeed's model-state table for a model and GPU count")
    e.add_argument("--model", required=True)
    e.add_argument("--model_params", type=float, default=None)
    e.add_argument("--gpus", type=int, default=4)
    args = p.parse_args(argv)
    try:
        if args.cmd == "ds-flags":
            # stdout carries only the flags (the launch scripts read it); DeepSpeed logs to stdout on import.
            real_stdout = sys.stdout
            with contextlib.redirect_stdout(sys.stderr):
                return cmd_ds_flags(args, real_stdout)
        if args.cmd == "check":
            return cmd_check(args, flag_words)
        return cmd_estimate(args)
    except PreflightError as err:
        report_failure(err)
        return EXIT_CODES[err.code]
    except DeepSpeedMissing as err:
        skip = "; or skip this check: PREFLIGHT_SKIP=memory" if args.cmd == "check" else ""
        print(f"[preflight] FAIL memory: {err}{skip}", file=sys.stderr, flush=True)
        return EXIT_CODES["memory"]


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Checks the training launch scripts run before they spend GPU time (see docs/setup_guide.md).

    python -m coderl.launch.preflight ds-flags --ds_config configs/ds_config_zero2.json   # -> OpenRLHF flags
    python -m coderl.launch.preflight check --data D --reward_url U --gpus 4 --model M -- <OpenRLHF flags>
    python -m coderl.launch.preflight estimate --model Qwen/Qwen2.5-7B-Instruct --gpus 4  # memory table only

Every failure prints one `[preflight] FAIL <check>: <what is wrong and what to do>` line and exits with
the check's own code (EXIT_CODES below), so scripts and tests can tell them apart.
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

from coderl.launch.ds_plan import (
    GIB,
    DsConfigError,
    config_diff,
    ds_config_to_flags,
    load_openrlhf_ds_utils,
    memory_estimate,
    model_params,
    rebuild_with_openrlhf,
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
}
CHECKS = ("knobs", "data", "openrlhf", "server", "gpus", "memory")
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


def check_knobs(a, flags: dict) -> str:
    def num(name, default):
        return int(flags.get(name, default))

    actor_gpus = num("actor_num_gpus_per_node", a.gpus) * num("actor_num_nodes", 1)
    engines = num("vllm_num_engines", 0)
    tp = num("vllm_tensor_parallel_size", 1)
    n, rollout = num("n_samples_per_prompt", 1), num("rollout_batch_size", 1)
    micro, train = num("micro_train_batch_size", 1), num("train_batch_size", 1)
    problems = []
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
            problems.append(f"actor GPUs ({actor_gpus}) must be divisible by VLLM_ENGINES={engines}")
    if (rollout * n) % train:
        problems.append(f"ROLLOUT_BATCH_SIZE x N_SAMPLES = {rollout * n} samples per rollout is not a multiple "
                        f"of TRAIN_BATCH_SIZE={train} (the remainder is dropped)")
    if problems:
        raise PreflightError("knobs", "; ".join(problems))
    return f"{actor_gpus} actor GPU(s), {engines} vLLM engine(s) x TP {tp}, {rollout} prompts x {n} samples"


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


def _health_url(reward_url: str) -> str:
    u = urllib.parse.urlsplit(reward_url)
    return urllib.parse.urlunsplit((u.scheme, u.netloc, "/health", u.query, ""))


def _http(url: str, body: dict | None, timeout: float) -> dict:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read())


def check_server(a, _flags) -> str:
    health = _health_url(a.reward_url)
    hint = f"start it in another terminal: python rewards/reward_server.py --data_path {a.data} --port 5000"
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


def check_memory(a, flags: dict) -> str:
    params, source = model_params(a.model, a.model_params)
    if params is None:
        return f"WARN {source} for MODEL={a.model}; set MODEL_PARAMS=7.6e9 for an estimate"
    actor_gpus = int(flags.get("actor_num_gpus_per_node", a.gpus))
    offload = bool(flags.get("adam_offload"))
    e = memory_estimate(params, actor_gpus, offload, colocate_ref=True)
    say(f"memory: {params / 1e9:.2f}B params ({source}); DeepSpeed ZeRO-2 estimator over {actor_gpus} actor GPU(s):")
    say(f"  actor params+grads+optimizer states {e['actor_gpu']:6.1f} GiB/GPU (Adam offload "
        f"{'on' if offload else 'off'}) + reference model bf16 {e['ref_gpu']:5.1f} GiB/GPU "
        f"= {e['total_gpu']:5.1f} GiB/GPU before activations/generation "
        f"({e['alt_total_gpu']:.1f} GiB with offload {'off' if offload else 'on'})")
    say(f"  host RAM for the offloaded optimizer: {e['cpu']:.0f} GiB per node (estimator, x1.5 buffer)")
    gpus = getattr(a, "_gpus_seen", None) or []
    if not gpus:
        return f"estimate {e['total_gpu']:.1f} GiB/GPU (no GPU visible to compare with)"
    smallest = min(m for _, m in gpus)
    if e["total_gpu"] > a.max_gpu_fraction * smallest:
        raise PreflightError("memory", f"model states need {e['total_gpu']:.1f} GiB/GPU but the smallest GPU "
                             f"has {smallest:.0f} GiB (limit {a.max_gpu_fraction:.0%}): "
                             + ("use more GPUs or a smaller model" if offload else
                                "enable Adam offload (offload_optimizer.device=cpu in DS_CONFIG)"))
    try:
        ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / GIB
        if offload and e["cpu"] > ram:
            say(f"WARN host RAM {ram:.0f} GiB < estimator's {e['cpu']:.0f} GiB for the offloaded optimizer")
    except (ValueError, OSError):
        pass
    return f"{e['total_gpu']:.1f} GiB/GPU of {smallest:.0f} GiB ({smallest - e['total_gpu']:.0f} GiB left " \
           "for activations, generation and the CUDA context)"


def cmd_check(args, flag_words: list[str]) -> int:
    flags = parse_flags(flag_words)
    skip = {s.strip() for s in (args.skip or "").split(",") if s.strip()}
    bad = skip - set(CHECKS)
    if bad:
        raise PreflightError("usage", f"unknown check(s) in --skip: {', '.join(sorted(bad))} (known: {', '.join(CHECKS)})")
    funcs = {"knobs": check_knobs, "data": check_data, "openrlhf": check_openrlhf, "server": check_server,
             "gpus": check_gpus, "memory": check_memory}
    for name in CHECKS:
        if name in skip:
            say(f"skip {name}")
            continue
        result = funcs[name](args, flags)
        if result.startswith("WARN "):
            say(f"warn {name}: {result[5:]}")
        else:
            say(f"ok   {name}: {result}")
    say("all checks passed" if not skip else f"checks passed (skipped: {', '.join(sorted(skip))})")
    return 0


def cmd_estimate(args) -> int:
    params, source = model_params(args.model, args.model_params)
    if params is None:
        raise PreflightError("memory", f"{source} for MODEL={args.model}; pass --model_params")
    print(f"{params / 1e9:.2f}B params ({source}), {args.gpus} GPU(s), ZeRO-2 (+ colocated bf16 reference):")
    for off in (False, True):
        e = memory_estimate(params, args.gpus, off, colocate_ref=True)
        print(f"  Adam offload {'on ' if off else 'off'}: actor {e['actor_gpu']:5.1f} + ref {e['ref_gpu']:4.1f} "
              f"= {e['total_gpu']:5.1f} GiB/GPU; host RAM {e['cpu']:.0f} GiB/node")
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    flag_words: list[str] = []
    if "--" in argv:
        i = argv.index("--")
        argv, flag_words = argv[:i], argv[i + 1:]
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="exit codes: " + ", ".join(f"{v}={k}" for k, v in EXIT_CODES.items()))
    sub = p.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("ds-flags", help="print the OpenRLHF flags a DeepSpeed JSON stands for")
    d.add_argument("--ds_config", required=True)
    d.add_argument("--micro_train_batch_size", type=int, default=None, help="override the JSON's value")
    d.add_argument("--train_batch_size", type=int, default=None, help="override the JSON's value")
    c = sub.add_parser("check", help="run the checks; OpenRLHF flags of the command follow `--`")
    c.add_argument("--data", required=True)
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
    e = sub.add_parser("estimate", help="print the memory table for a model and GPU count")
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
        print(f"[preflight] FAIL {err.check}: {err}", file=sys.stderr, flush=True)
        return EXIT_CODES[err.code]


if __name__ == "__main__":
    sys.exit(main())

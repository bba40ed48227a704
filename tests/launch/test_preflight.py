"""scripts/train_grpo_7b_zero2*.sh and launch/preflight.py: the command they build, and every preflight
failure, against the real OpenRLHF 0.5.7 release (patched and not), a real reward server and real data.
Only the GPUs (nvidia-smi) and the Ray cluster (`ray job submit`) are faked, and named so.

A launch calls `python -m coderl.launch.preflight` twice (ds-flags, check), and each fresh interpreter imports
DeepSpeed and torch (~10 s on two loaded cores). Most tests here run those two calls in this process instead
(DeepSpeed imported once): `train` launches the script with a TRAIN_PYTHON shim that hands
`-m coderl.launch.preflight ARGS`, with its environment and working directory, to preflight.main in this process
and answers with its output and exit code; every other TRAIN_PYTHON call (vLLM probe, the job itself) runs the
real interpreter, and the script (knobs, command, exit codes, log file) runs as it is. The tests that call
`run_train` launch with the real interpreter end to end."""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import os
import re
import shlex
import socket
import socketserver
import subprocess
import sys
import threading
import traceback
from pathlib import Path

import pytest

from tests.support import (
    RAY_SCRIPT,
    REPO_ROOT,
    SINGLE_SCRIPT,
    ServerProc,
    command_words,
    data_row,
    fake_nvidia_smi,
    flag_value,
    out,
    patch_tree,
    run_train,
    tiny_checkpoint,
    unpack_wheel,
    write_data,
)

pytestmark = pytest.mark.timeout(300)
A800 = ("NVIDIA A800-SXM4-80GB", 81920)


# ------------------------------------------------------------------------------------------ fixtures
@pytest.fixture(scope="module")
def trees(openrlhf_wheel, tmp_path_factory) -> dict[str, Path]:
    """The release unpacked twice: with only the flash-attn patch (imports, but no group_norm), fully patched."""
    base = tmp_path_factory.mktemp("orl")
    flash_only = unpack_wheel(openrlhf_wheel, base / "flash_only")
    patch_tree(flash_only, only="0002-flash-attn-optional.patch")
    patched = unpack_wheel(openrlhf_wheel, base / "patched")
    patch_tree(patched)
    return {"flash_only": flash_only, "patched": patched}


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("data")
    return write_data(d / "train.jsonl", [data_row("Write add(a, b) returning a + b."),
                                          data_row("Write sub(a, b) returning a - b.")])


@pytest.fixture(scope="module")
def server(data):
    s = ServerProc(["--data_path", str(data), "--port", "0", "--workers", "1"])
    yield s
    s.stop()


# The shim's client: stdlib only, no site-packages (-I -S), so it starts in milliseconds.
RELAY_CLIENT = """import json, os, socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(json.dumps({"argv": sys.argv[2:], "env": dict(os.environ), "cwd": os.getcwd()}).encode())
s.shutdown(socket.SHUT_WR)
buf = b""
while chunk := s.recv(1 << 16):
    buf += chunk
r = json.loads(buf)
sys.stdout.write(r["stdout"])
sys.stdout.flush()
sys.stderr.write(r["stderr"])
sys.exit(r["rc"])
"""


def preflight_here(argv: list[str], env: dict[str, str], cwd: str) -> tuple[int, str, str]:
    """`python -m coderl.launch.preflight ARGV` as a fresh interpreter with ENV in CWD would run it, in this
    process: the environment (PATH for nvidia-smi, CUDA_VISIBLE_DEVICES, PYTHONPATH for the OpenRLHF
    subprocess), sys.path from PYTHONPATH, no OpenRLHF module imported; all restored after."""
    from coderl.launch import preflight

    saved_env, saved_path, saved_cwd = dict(os.environ), list(sys.path), os.getcwd()
    hidden = {m: sys.modules.pop(m) for m in list(sys.modules) if m == "openrlhf" or m.startswith("openrlhf.")}
    stdout, stderr = io.StringIO(), io.StringIO()
    try:
        os.environ.clear()
        os.environ.update(env)
        sys.path[:0] = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
        importlib.invalidate_caches()
        os.chdir(cwd)
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            try:
                rc = preflight.main(argv)
            except SystemExit as e:  # argparse
                rc = e.code if isinstance(e.code, int) else 0 if e.code is None else 1
            except Exception:
                traceback.print_exc()
                rc = 1
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        sys.path[:] = saved_path
        for m in [m for m in sys.modules if m == "openrlhf" or m.startswith("openrlhf.")]:
            del sys.modules[m]
        sys.modules.update(hidden)
        importlib.invalidate_caches()
    return rc, stdout.getvalue(), stderr.getvalue()


class _Relay(socketserver.StreamRequestHandler):
    def handle(self):
        req = json.loads(self.rfile.read())
        rc, stdout, stderr = preflight_here(req["argv"], req["env"], req["cwd"])
        self.wfile.write(json.dumps({"rc": rc, "stdout": stdout, "stderr": stderr}).encode())


@pytest.fixture(scope="module")
def train(tmp_path_factory):
    """train(script, env): run_train with the preflight in this process (module docstring)."""
    d = tmp_path_factory.mktemp("relay")
    py, sock = shlex.quote(sys.executable), str(d / "preflight.sock")
    server = socketserver.UnixStreamServer(sock, _Relay)  # one call at a time
    threading.Thread(target=server.serve_forever, daemon=True).start()
    (d / "client.py").write_text(RELAY_CLIENT)
    shim = d / "python"
    shim.write_text(
        "#!/bin/sh\n# TRAIN_PYTHON for the launch tests: the preflight CLI in the test process, the rest for real.\n"
        f'if [ "$1" = -m ] && [ "$2" = coderl.launch.preflight ]; then\n'
        f'  shift 2; exec {py} -I -S {shlex.quote(str(d / "client.py"))} {shlex.quote(sock)} "$@"\nfi\n'
        f'exec {py} "$@"\n')
    shim.chmod(0o755)
    yield lambda script, env: run_train(script, {**env, "TRAIN_PYTHON": str(shim)})
    server.shutdown()
    server.server_close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def base_env(tmp_path: Path, data: Path, **extra: str) -> dict[str, str]:
    return {"DATA": str(data), "SAVE_DIR": str(tmp_path / "run"), "DRY_RUN": "1",
            "REWARD_URL": f"http://127.0.0.1:{free_port()}/get_reward", **extra}


def fail_of(proc: subprocess.CompletedProcess) -> tuple[str, str]:
    m = re.search(r"\[preflight\] FAIL (\w+): (.*)", proc.stderr)
    assert m, out(proc)
    return m.group(1), m.group(2)


# ------------------------------------------------------------------------------------- help, command
@pytest.mark.parametrize("script", [RAY_SCRIPT, SINGLE_SCRIPT], ids=["ray", "single_node"])
def test_help_documents_every_knob(script):
    proc = subprocess.run(["bash", str(script), "--help"], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, out(proc)
    sources = script.read_text() + (REPO_ROOT / "scripts" / "train_common.sh").read_text()
    knobs = set(re.findall(r'^([A-Z][A-Z0-9_]+)="(?:\$\(abspath "|)\$\{\1:-', sources, re.M))
    assert {"MODEL", "DATA", "REWARD_URL", "GPUS", "SAVE_DIR", "N_SAMPLES", "EXTRA_ARGS", "DRY_RUN"} <= knobs
    missing = sorted(k for k in knobs if not re.search(rf"\b{k}=", proc.stdout))
    assert not missing, f"knobs not documented in --help: {missing}"
    assert "A800" in proc.stdout and "exit codes" in proc.stdout.lower()
    bad = subprocess.run(["bash", str(script), "--bogus"], capture_output=True, text=True, timeout=30)
    assert bad.returncode == 2 and "env var" in bad.stderr


def test_dry_run_prints_the_reference_command(tmp_path, data):
    proc = run_train(RAY_SCRIPT, base_env(tmp_path, data, SKIP_PREFLIGHT="1"))
    assert proc.returncode == 0, out(proc)
    assert "job submit" in proc.stdout
    w = command_words(proc.stdout, "openrlhf.cli.train_ppo_ray")
    expect = {"--advantage_estimator": "group_norm", "--group_norm_std_threshold": "0.1",
              "--n_samples_per_prompt": "8", "--init_kl_coef": "0.01", "--input_key": "input",
              "--actor_num_gpus_per_node": "4", "--ref_num_gpus_per_node": "4", "--zero_stage": "2",
              "--vllm_num_engines": "0", "--pretrain": "Qwen/Qwen2.5-7B-Instruct", "--prompt_data": str(data),
              "--micro_train_batch_size": "2", "--train_batch_size": "128", "--max_norm": "1.0"}
    for flag, value in expect.items():
        assert flag_value(w, flag) == value, (flag, w)
    for flag in ("--colocate_actor_ref", "--adam_offload", "--gradient_checkpointing", "--bf16",
                 "--apply_chat_template", "--remote_rm_url", "--use_tensorboard"):
        assert flag in w, flag
    for flag in ("--flash_attn", "--packing_samples", "--use_wandb"):
        assert flag not in w, flag
    assert flag_value(w, "--save_path") == str(tmp_path / "run" / "model")
    assert not (tmp_path / "run").exists(), "DRY_RUN must not create files"


def test_dry_run_env_overrides(tmp_path, data):
    env = base_env(tmp_path, data, SKIP_PREFLIGHT="1", GPUS="8", USE_VLLM="1", VLLM_ENGINES="2",
                   N_SAMPLES="4", INIT_KL_COEF="0.02", TRAIN_BATCH_SIZE="256", WANDB="1",
                   WANDB_API_KEY="sk-test-not-a-real-key", EXTRA_ARGS="--save_hf_ckpt --seed 7",
                   MODEL="/models/qwen 7b")
    proc = run_train(RAY_SCRIPT, env)
    assert proc.returncode == 0, out(proc)
    w = command_words(proc.stdout, "openrlhf.cli.train_ppo_ray")
    assert flag_value(w, "--actor_num_gpus_per_node") == "6" and flag_value(w, "--vllm_num_engines") == "2"
    assert flag_value(w, "--n_samples_per_prompt") == "4" and flag_value(w, "--init_kl_coef") == "0.02"
    assert flag_value(w, "--train_batch_size") == "256" and flag_value(w, "--seed") == "7"
    assert flag_value(w, "--pretrain") == "/models/qwen 7b", "paths with spaces survive quoting"
    assert "--save_hf_ckpt" in w and flag_value(w, "--use_wandb") == "True"
    assert "sk-test" not in proc.stdout + proc.stderr, "the wandb key must never be printed"


def test_single_node_dry_run(tmp_path, data):
    proc = run_train(SINGLE_SCRIPT, base_env(tmp_path, data, SKIP_PREFLIGHT="1"))
    assert proc.returncode == 0, out(proc)
    assert re.search(r"^deepspeed \\\n +--num_gpus 4", proc.stdout, re.M), proc.stdout
    w = command_words(proc.stdout, "openrlhf.cli.train_ppo")
    assert flag_value(w, "--advantage_estimator") == "group_norm" and "--adam_offload" in w
    assert "--colocate_actor_ref" not in w and "--vllm_num_engines" not in w


# ------------------------------------------------------------------ the whole preflight, for real
@pytest.mark.slow
def test_dry_run_full_preflight_passes(tmp_path, data, server, trees):
    env = base_env(tmp_path, data, PYTHONPATH=str(trees["patched"]), REWARD_URL=f"{server.url}/get_reward",
                   PLAN_JSON=str(tmp_path / "plan.json"), PLAN_PROMPT_TOKENS="64")
    proc = run_train(RAY_SCRIPT, env)
    assert proc.returncode == 0, out(proc)
    log = proc.stdout + proc.stderr
    for line in ("ok   knobs", "ok   data", "ok   openrlhf", "ok   server", "warn gpus", "ok   memory"):
        assert f"[preflight] {line}" in log, line
    assert "patched: group_norm; all" in log and "flags accepted" in log
    assert "same file (sha256" in log
    assert "ok   vllm: not used (HF generate)" in log and "rollouts use HF generate, not vLLM" in log
    # 7B on 4 actor GPUs, Adam offload: DeepSpeed's estimator gives 14.2 GiB of actor states per GPU
    assert "actor_model_states_deepspeed 14.2, reference_model_bf16 14.2" in log
    plan = json.loads((tmp_path / "plan.json").read_text())
    assert 40 < plan["gpu_peak_gib"] < 80 and 150 < plan["host_peak_gib"] < 256, plan
    assert plan["inputs"]["prompt_tokens"] == 64 and plan["inputs"]["prompt_tokens_source"] == "PLAN_PROMPT_TOKENS"


@pytest.mark.slow
def test_single_node_flags_checked_against_train_ppo(tmp_path, data, server, trees, train):
    """train_ppo (no Ray) accepts every flag the single-node script builds; a Ray-only flag is named."""
    env = base_env(tmp_path, data, PYTHONPATH=str(trees["patched"]), REWARD_URL=f"{server.url}/get_reward",
                   EXTRA_ARGS="--colocate_actor_ref")
    proc = train(SINGLE_SCRIPT, env)
    assert proc.returncode == 14, out(proc)
    assert re.search(r"openrlhf\.cli\.train_ppo at \S+ does not accept --colocate_actor_ref$", proc.stderr, re.M), \
        proc.stderr


def test_exit_code_and_log_of_the_real_job(tmp_path, data, trees, train):
    """The real (patched) train_ppo_ray parses every flag of the command, then fails its own batch-size
    assertion; that exit code must be the script's, and the output must be in the log file."""
    calls = tmp_path / "ray_calls.txt"
    fake_ray = tmp_path / "ray"
    fake_ray.write_text(
        "#!/bin/sh\n# FAKE `ray` CLI: no Ray cluster with GPUs here; runs the job entrypoint in place.\n"
        f'echo "$*" >> {calls}\n'
        'if [ "$1 $2" = "job submit" ]; then while [ "$1" != "--" ]; do shift; done; shift; exec "$@"; fi\n'
        "exit 0\n")
    fake_ray.chmod(0o755)
    env = base_env(tmp_path, data, DRY_RUN="0", SKIP_PREFLIGHT="1", PYTHONPATH=str(trees["patched"]),
                   RAY_BIN=str(fake_ray), RAY_ADDRESS="http://127.0.0.1:9", RUN_NAME="exitcode",
                   EXTRA_ARGS="--rollout_batch_size 30")
    proc = train(RAY_SCRIPT, env)
    assert proc.returncode == 1, out(proc)
    log = (tmp_path / "run" / "logs" / "exitcode.log").read_text()
    assert "rollout_bach_size must be divisible by actor_world_size, got 30 and 4" in log
    assert "job stop" in calls.read_text(), "a failed/interrupted job is stopped"


# ------------------------------------------------------------------------------- each failure
def test_missing_data(tmp_path, data, train):
    proc = train(RAY_SCRIPT, base_env(tmp_path, data, DATA=str(tmp_path / "nope.jsonl")))
    assert proc.returncode == 10, out(proc)
    assert fail_of(proc)[0] == "data" and "data file not found" in proc.stderr and "nope.jsonl" in proc.stderr


@pytest.mark.parametrize("row,needle", [
    (data_row(input_=json.dumps([{"role": "user", "content": "x"}])), "field 'input' must be a list"),
    (data_row(input_=[{"role": "system", "content": "s"}]), "no user message"),
    (data_row(label={"format": "assert", "tests": []}), "field 'label': label.tests is empty"),
    ("{not json", "not valid JSON"),
], ids=["input_as_string", "no_user", "empty_tests", "not_json"])
def test_bad_data_row(tmp_path, data, row, needle, train):
    bad = write_data(tmp_path / "train.jsonl", [data_row(), row])
    proc = train(RAY_SCRIPT, base_env(tmp_path, bad))
    assert proc.returncode == 11, out(proc)
    check, msg = fail_of(proc)
    assert check == "data" and f"{bad}:2" in msg and needle in msg, msg


def test_openrlhf_not_importable(tmp_path, data, train):
    proc = train(RAY_SCRIPT, base_env(tmp_path, data))
    assert proc.returncode == 12, out(proc)
    assert "OpenRLHF is not importable" in proc.stderr and "setup_env.sh" in proc.stderr


@pytest.mark.slow
def test_openrlhf_not_patched(tmp_path, data, trees, train):
    proc = train(RAY_SCRIPT, base_env(tmp_path, data, PYTHONPATH=str(trees["flash_only"])))
    assert proc.returncode == 13, out(proc)
    assert "is not patched" in proc.stderr and f"apply_patches.sh {trees['flash_only']}" in proc.stderr


def test_reward_server_down(tmp_path, data, train):
    env = base_env(tmp_path, data, PREFLIGHT_SKIP="openrlhf")
    proc = train(RAY_SCRIPT, env)
    assert proc.returncode == 15, out(proc)
    assert "reward server not reachable" in proc.stderr and "rewards/reward_server.py --data_path" in proc.stderr
    port = env["REWARD_URL"].rsplit(":", 1)[1].split("/")[0]
    assert f"--port {port}" in proc.stderr, "the hint starts the server where REWARD_URL points"
    assert f"--reward_log {tmp_path / 'run' / 'logs' / 'rewards.jsonl'}" in proc.stderr, "its log beside the run"
    bad = train(RAY_SCRIPT, base_env(tmp_path, data, PREFLIGHT_SKIP="openrlhf", REWARD_URL="http://h:x/get_reward"))
    assert bad.returncode == 15 and "REWARD_URL=http://h:x/get_reward has no valid port" in bad.stderr, out(bad)


def test_reward_server_serves_another_file(tmp_path, data, server, train):
    other = write_data(tmp_path / "train.jsonl", [data_row("Write mul(a, b).")])
    env = base_env(tmp_path, other, PREFLIGHT_SKIP="openrlhf", REWARD_URL=f"{server.url}/get_reward")
    proc = train(RAY_SCRIPT, env)
    assert proc.returncode == 16, out(proc)
    assert "serves another data file" in proc.stderr and str(data) in proc.stderr


def test_not_enough_gpus(tmp_path, data, train):
    env = base_env(tmp_path, data, DRY_RUN="0", PREFLIGHT_SKIP="openrlhf,server")
    proc = train(RAY_SCRIPT, env)
    assert proc.returncode == 17, out(proc)
    assert "[preflight] FAIL gpus: GPUS=4 but 0 GPU(s) visible" in proc.stdout + proc.stderr
    assert "GPUS=4 but 0 GPU(s) visible" in next((tmp_path / "run" / "logs").glob("*.log")).read_text()
    fake = fake_nvidia_smi(tmp_path / "bin", [A800] * 4)
    env = base_env(tmp_path, data, PREFLIGHT_SKIP="openrlhf,server", CUDA_VISIBLE_DEVICES="0,2",
                   PATH=f"{fake.parent}:/usr/bin:/bin")
    proc = train(RAY_SCRIPT, env)
    assert proc.returncode == 17 and "but 2 GPU(s) visible" in proc.stderr, out(proc)


@pytest.mark.parametrize("gpu,offload,code,needle", [
    (A800, True, 0, "GiB with the step upload of 80 GiB"),
    (("NVIDIA GeForce RTX 4090", 24564), False, 18, "enable Adam offload"),
    (("NVIDIA A10", 23028), True, 18, "lower MICRO_ROLLOUT_BATCH_SIZE"),
], ids=["a800_offload_fits", "24g_no_offload", "24g_offload"])
def test_memory_plan_against_gpus(tmp_path, data, gpu, offload, code, needle, train):
    ds = json.loads((REPO_ROOT / "configs" / "ds_config_zero2.json").read_text())
    if not offload:
        ds["zero_optimization"]["offload_optimizer"]["device"] = "none"
    (tmp_path / "ds.json").write_text(json.dumps(ds))
    fake = fake_nvidia_smi(tmp_path / "bin", [gpu] * 4)
    env = base_env(tmp_path, data, PREFLIGHT_SKIP="openrlhf,server", DS_CONFIG=str(tmp_path / "ds.json"),
                   PATH=f"{fake.parent}:/usr/bin:/bin", PLAN_HOST_GIB="256", USE_VLLM="0")
    proc = train(RAY_SCRIPT, env)
    assert proc.returncode == code, out(proc)
    assert needle in proc.stdout + proc.stderr
    if not offload:
        assert "actor_model_states_deepspeed 46.1" in proc.stdout + proc.stderr


def test_memory_plan_host_ram_too_small(tmp_path, data, train):
    fake = fake_nvidia_smi(tmp_path / "bin", [A800] * 4)
    env = base_env(tmp_path, data, PREFLIGHT_SKIP="openrlhf,server", PATH=f"{fake.parent}:/usr/bin:/bin",
                   PLAN_HOST_GIB="128", USE_VLLM="0")
    proc = train(RAY_SCRIPT, env)
    assert proc.returncode == 18, out(proc)
    assert re.search(r"the node needs \d+ GiB of host RAM but PLAN_HOST_GIB is 128 GiB", proc.stderr), proc.stderr


def test_dry_run_memory_fit_against_plan_sizes(tmp_path, data, train):
    """A login node (no GPU visible): the plan is compared with PLAN_GPU_GIB / PLAN_HOST_GIB, not waved through."""
    env = base_env(tmp_path, data, PREFLIGHT_SKIP="openrlhf,server", USE_VLLM="0", PLAN_GPU_GIB="24",
                   PLAN_HOST_GIB="16")
    proc = train(RAY_SCRIPT, env)
    assert proc.returncode == 18, out(proc)
    check, msg = fail_of(proc)
    assert check == "memory" and "PLAN_GPU_GIB (no GPU visible) is 24 GiB" in msg, msg
    assert re.search(r"the node needs \d+ GiB of host RAM but PLAN_HOST_GIB is 16 GiB", msg), msg
    assert "[preflight] warn gpus" in proc.stdout, "no GPU in a dry run stays a warning"


def test_every_failure_is_reported_in_one_run(tmp_path, data):
    """Four problems at once: each gets its FAIL line, a summary names them, the exit code is the first's."""
    env = base_env(tmp_path, data, DATA=str(tmp_path / "nope.jsonl"), ROLLOUT_BATCH_SIZE="30")
    proc = run_train(RAY_SCRIPT, env)
    assert proc.returncode == 20, out(proc)
    fails = [m.group(1) for m in re.finditer(r"\[preflight\] FAIL (\w+): ", proc.stderr)]
    assert fails == ["knobs", "data", "openrlhf", "server"], out(proc)
    assert "4 check(s) failed: knobs, data, openrlhf, server" in proc.stderr
    assert "[preflight] ok   memory" in proc.stdout and "all checks passed" not in proc.stdout + proc.stderr
    assert "[preflight] warn prompts: not measured: no DATA file" in proc.stdout


@pytest.fixture(scope="module")
def local_model(tmp_path_factory) -> Path:
    return tiny_checkpoint(tmp_path_factory.mktemp("model") / "tiny")


def test_prompts_longer_than_prompt_max_len_fail(tmp_path, local_model, train):
    """A prompt over PROMPT_MAX_LEN (under the model's own chat template) would be truncated by OpenRLHF,
    match nothing at the server and score 0: preflight counts them and names both fixes."""
    long = "Write add(a, b). " + "Mind the edge cases of the inputs. " * 40
    rows = write_data(tmp_path / "train.jsonl", [data_row(), data_row(long), data_row("Write sub(a, b).")])
    from transformers import AutoTokenizer

    from coderl.data.prompt_budget import prompt_lengths

    lengths = prompt_lengths(AutoTokenizer.from_pretrained(local_model), [json.loads(r)["input"] for r in
                                                                          rows.read_text().splitlines()])
    cap = sorted(lengths)[1]  # the two short prompts fit exactly, the long one does not
    env = base_env(tmp_path, rows, MODEL=str(local_model), PROMPT_MAX_LEN=str(cap),
                   PREFLIGHT_SKIP="openrlhf,server,memory")
    proc = train(RAY_SCRIPT, env)
    assert proc.returncode == 22, out(proc)
    check, msg = fail_of(proc)
    assert check == "prompts" and f"1 of 3 prompts in {rows} are longer than PROMPT_MAX_LEN={cap}" in msg, msg
    assert f"longest {max(lengths)}" in msg and f"Raise PROMPT_MAX_LEN to {max(lengths)}" in msg, msg
    assert f"--max_prompt_tokens {cap} --tokenizer {local_model}" in msg, msg
    env["PROMPT_MAX_LEN"] = str(max(lengths))
    proc = train(RAY_SCRIPT, env)
    assert proc.returncode == 0, out(proc)
    assert f"ok   prompts: all 3 prompts fit PROMPT_MAX_LEN={max(lengths)}" in proc.stdout


# ------------------------------------------------------------------------------ vLLM and layout
def test_vllm_requested_but_missing(tmp_path, data, train):
    """USE_VLLM=1 where `import vllm` fails: preflight names vLLM (exit 21) instead of Ray failing later."""
    proc = train(RAY_SCRIPT, base_env(tmp_path, data, USE_VLLM="1", PREFLIGHT_SKIP="openrlhf,server"))
    assert proc.returncode == 21, out(proc)
    check, msg = fail_of(proc)
    assert check == "vllm" and "vLLM is not installed" in msg and "vllm==0.6.0" in msg, msg


def test_vllm_layout_and_engine_plan(tmp_path, data, train):
    """GPUS=4 with vLLM: actor + reference on 2 GPUs, 2 engines on the other 2, and the engines' memory plan."""
    env = base_env(tmp_path, data, USE_VLLM="1", PREFLIGHT_SKIP="openrlhf,server,vllm",
                   PLAN_JSON=str(tmp_path / "plan.json"))
    proc = train(RAY_SCRIPT, env)
    assert proc.returncode == 0, out(proc)
    w = command_words(proc.stdout, "openrlhf.cli.train_ppo_ray")
    assert flag_value(w, "--actor_num_gpus_per_node") == "2" and flag_value(w, "--vllm_num_engines") == "2"
    assert flag_value(w, "--ref_num_gpus_per_node") == "2" and "--colocate_actor_ref" in w
    assert "layout: 2 GPU(s) actor + reference (colocated), 2 vLLM engine(s) x TP 1" in proc.stderr
    assert "rollouts use HF generate" not in proc.stderr
    eng = json.loads((tmp_path / "plan.json").read_text())["engine_gpu"]
    assert eng["max_model_len"] == 2048 and eng["kv_capacity_tokens"] > 32 * 8 // 2 * 2048 // 4, eng


@pytest.mark.parametrize("extra,needle", [
    ("--vllm_num_engines 3", "actor GPUs (2) must be divisible by VLLM_ENGINES=3"),
    ("--vllm_num_engines 1", "GPUS=4 but the command places actor 2 + vLLM 1 engine(s) x TP 1 = 3 GPUs"),
], ids=["world_size_not_divisible", "gpus_not_all_placed"])
def test_vllm_knob_checks(tmp_path, data, extra, needle, train):
    env = base_env(tmp_path, data, USE_VLLM="1", PREFLIGHT_SKIP="openrlhf,server,vllm", EXTRA_ARGS=extra)
    proc = train(RAY_SCRIPT, env)
    assert proc.returncode == 20, out(proc)
    assert needle in proc.stderr, proc.stderr


def fake_vllm(site: Path, version: str) -> Path:
    """A FAKE vllm (no GPU wheel here): an importable package and its dist-info, so that `import vllm` and
    importlib.metadata see VERSION; nothing of vLLM runs in these tests."""
    (site / "vllm").mkdir(parents=True)
    (site / "vllm" / "__init__.py").write_text(f'__version__ = "{version}"  # FAKE vllm for launch tests\n')
    meta = site / f"vllm-{version}.dist-info"
    meta.mkdir()
    (meta / "METADATA").write_text(f"Metadata-Version: 2.1\nName: vllm\nVersion: {version}\n")
    return site


@pytest.mark.parametrize("version,tree,code,needle", [
    ("0.6.0", "patched", 0, "ok   vllm: vLLM 0.6.0 in >=0.6.0,<0.8; patched comparisons true: >=0.4.3, <0.7.0, "
                            ">0.4.2; 2 engine(s), TP 1"),
    ("0.8.1", "patched", 21, "vLLM 0.8.1 is outside >=0.6.0,<0.8"),
    ("0.6.0", "flash_only", 21, "compares vLLM versions as strings (patch 0003 not applied)"),
], ids=["supported", "too_new", "unpatched"])
def test_vllm_auto_and_version_check(tmp_path, data, trees, version, tree, code, needle, train):
    """USE_VLLM=auto picks vLLM when it imports; preflight reads patch 0003's comparisons from the real tree."""
    site = fake_vllm(tmp_path / "site", version)
    env = base_env(tmp_path, data, PYTHONPATH=f"{trees[tree]}:{site}", PREFLIGHT_SKIP="openrlhf,server")
    proc = train(RAY_SCRIPT, env)
    assert proc.returncode == code, out(proc)
    assert needle in proc.stdout + proc.stderr, proc.stderr
    assert "2 vLLM engine(s) x TP 1 on the other 2" in proc.stderr, "auto chose vLLM"


def test_launch_slot_moves_ports(tmp_path, data):
    """Two launches side by side: LAUNCH_SLOT=N shifts the Ray dashboard and the single-node master port."""
    proc = run_train(RAY_SCRIPT, base_env(tmp_path, data, SKIP_PREFLIGHT="1", LAUNCH_SLOT="2"))
    assert proc.returncode == 0 and "--address http://127.0.0.1:8267" in proc.stdout, out(proc)
    proc = run_train(SINGLE_SCRIPT, base_env(tmp_path, data, SKIP_PREFLIGHT="1", LAUNCH_SLOT="2"))
    assert proc.returncode == 0 and "--master_port 29502" in proc.stdout, out(proc)
    bad = run_train(RAY_SCRIPT, base_env(tmp_path, data, SKIP_PREFLIGHT="1", LAUNCH_SLOT="12"))
    assert bad.returncode == 2 and "LAUNCH_SLOT must be 0-9" in bad.stderr, out(bad)


@pytest.mark.parametrize("script,knob,value,needle", [
    (RAY_SCRIPT, "GPUS", "four", "GPUS must be a whole number (got 'four')"),
    (RAY_SCRIPT, "N_SAMPLES", "8 ", "N_SAMPLES must be a whole number (got '8 ')"),
    (RAY_SCRIPT, "VLLM_TP_SIZE", "1.5", "VLLM_TP_SIZE must be a whole number"),
    (SINGLE_SCRIPT, "SAVE_STEPS", "-2", "SAVE_STEPS must be a whole number, or -1 for never (got '-2')"),
    (REPO_ROOT / "scripts" / "train_grpo_openrlhf_0.11.2.sh", "VLLM_ENGINES", "auto", "VLLM_ENGINES must be a whole"),
], ids=["gpus", "n_samples", "tp", "save_steps", "engines_0.11.2"])
def test_knob_typos_are_named(tmp_path, data, script, knob, value, needle):
    proc = run_train(script, base_env(tmp_path, data, SKIP_PREFLIGHT="1", **{knob: value}))
    assert proc.returncode == 2 and needle in proc.stderr, out(proc)
    assert "integer expression expected" not in proc.stderr and "unbound variable" not in proc.stderr


def test_wandb_without_a_key_is_named(tmp_path, data, monkeypatch):
    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    monkeypatch.delenv("NETRC", raising=False)
    proc = run_train(RAY_SCRIPT, base_env(tmp_path, data, SKIP_PREFLIGHT="1", WANDB="1", HOME=str(tmp_path)))
    assert proc.returncode == 2 and "WANDB=1 needs WANDB_API_KEY" in proc.stderr, out(proc)
    (tmp_path / ".netrc").write_text("machine api.wandb.ai\n  login user\n  password not-a-real-key\n")
    proc = run_train(RAY_SCRIPT, base_env(tmp_path, data, SKIP_PREFLIGHT="1", WANDB="1", HOME=str(tmp_path)))
    assert proc.returncode == 0 and "not-a-real-key" not in proc.stdout + proc.stderr, out(proc)


def test_inconsistent_knobs(tmp_path, data, train):
    proc = train(RAY_SCRIPT, base_env(tmp_path, data, ROLLOUT_BATCH_SIZE="30"))
    assert proc.returncode == 20, out(proc)
    assert "ROLLOUT_BATCH_SIZE=30 must be divisible by the actor's 4 GPUs" in proc.stderr


def test_bad_ds_config_and_bad_skip(tmp_path, data, train):
    (tmp_path / "ds.json").write_text("{broken")
    proc = train(RAY_SCRIPT, base_env(tmp_path, data, DS_CONFIG=str(tmp_path / "ds.json")))
    assert proc.returncode == 19 and "not valid JSON" in proc.stderr, out(proc)
    proc = train(RAY_SCRIPT, base_env(tmp_path, data, PREFLIGHT_SKIP="gpu"))
    assert proc.returncode == 2 and "unknown check(s) in --skip: gpu" in proc.stderr, out(proc)


# ----------------------------------------------------------------------------- memory estimate
def test_param_table_matches_transformers_count():
    """The size table preflight uses equals what transformers builds from the Qwen2.5 configs."""
    import torch
    from transformers import AutoModelForCausalLM, Qwen2Config

    from coderl.launch.ds_plan import PARAM_TABLE, model_params

    shapes = {"0.5": (896, 4864, 24, 14, 2, 151936, True), "1.5": (1536, 8960, 28, 12, 2, 151936, True),
              "3": (2048, 11008, 36, 16, 2, 151936, True), "7": (3584, 18944, 28, 28, 4, 152064, False),
              "14": (5120, 13824, 48, 40, 8, 152064, False), "32": (5120, 27648, 64, 40, 8, 152064, False),
              "72": (8192, 29568, 80, 64, 8, 152064, False)}
    for size, (h, inter, layers, heads, kv, vocab, tie) in shapes.items():
        cfg = Qwen2Config(hidden_size=h, intermediate_size=inter, num_hidden_layers=layers,
                          num_attention_heads=heads, num_key_value_heads=kv, vocab_size=vocab,
                          tie_word_embeddings=tie)
        with torch.device("meta"):
            n = sum(p.numel() for p in AutoModelForCausalLM.from_config(cfg).parameters())
        assert PARAM_TABLE[size] == n, size
    assert model_params("Qwen/Qwen2.5-7B-Instruct", None)[0] == 7_615_616_512
    assert model_params("Qwen/Qwen2.5-Coder-1.5B", None)[0] == 1_543_714_304
    assert model_params("meta-llama/Llama-3-8B", None)[0] is None
    assert model_params("anything", 8e9)[0] == 8_000_000_000


def test_estimate_cli_numbers():
    rc, stdout, stderr = preflight_here(["estimate", "--model", "Qwen/Qwen2.5-7B", "--gpus", "4"], dict(os.environ),
                                        str(REPO_ROOT))
    assert rc == 0, stdout + stderr
    assert "Adam offload off: actor  46.1 + ref 14.2 =  60.3 GiB/GPU" in stdout
    assert "Adam offload on : actor  14.2 + ref 14.2 =  28.4 GiB/GPU" in stdout


NO_DEEPSPEED = "import sys; sys.modules['deepspeed'] = None; from coderl.launch.preflight import main; sys.exit(main())"


def test_deepspeed_not_importable_is_one_failure_line(tmp_path, data):
    """The light venv (quickstart) has no DeepSpeed: the memory plan says so, no traceback."""
    est = subprocess.run([sys.executable, "-c", NO_DEEPSPEED, "estimate", "--model", "Qwen/Qwen2.5-7B"],
                         capture_output=True, text=True, timeout=120)
    assert est.returncode == 18 and "Traceback" not in est.stderr, out(est)
    assert "[preflight] FAIL memory: DeepSpeed is not importable" in est.stderr and "setup_env.sh" in est.stderr
    check = subprocess.run([sys.executable, "-c", NO_DEEPSPEED, "check", "--data", str(data), "--reward_url",
                            "http://127.0.0.1:1/get_reward", "--gpus", "4", "--model", "Qwen/Qwen2.5-7B",
                            "--dry_run", "--skip", "openrlhf,server,gpus", "--", "--zero_stage", "2",
                            "--adam_offload", "--actor_num_gpus_per_node", "4", "--n_samples_per_prompt", "8",
                            "--rollout_batch_size", "32", "--train_batch_size", "128",
                            "--micro_train_batch_size", "2"],
                           capture_output=True, text=True, timeout=120)
    assert check.returncode == 18 and "Traceback" not in check.stderr, out(check)
    check_name, msg = fail_of(check)
    assert check_name == "memory" and "DeepSpeed is not importable" in msg and "PREFLIGHT_SKIP=memory" in msg

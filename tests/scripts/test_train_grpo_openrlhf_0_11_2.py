"""scripts/train_grpo_openrlhf_0.11.2.sh: the DRY_RUN command parsed by OpenRLHF 0.11.2's real CLI.

The real, patched openrlhf/cli/train_ppo_ray.py runs as __main__ in a subprocess: its argparse, hierarchize
and every validation assert before train(). What it imports at the top needs vLLM/GPUs, so those modules
are named fakes there (FAKE_*), and a fake `ray` whose is_initialized() - train()'s first call - reports the
parsed args and stops, so nothing is launched.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys

import pytest

from tests.conftest import REPO_ROOT
from tests.support import out, run_script, unpack_wheel

pytestmark = pytest.mark.timeout(300)
SCRIPT = REPO_ROOT / "scripts" / "train_grpo_openrlhf_0.11.2.sh"

PARSE = r'''
import json, runpy, sys, types
root = sys.argv[1]

def fake(name, **attrs):
    mod = types.ModuleType(name)
    mod.__dict__.update(attrs)
    sys.modules[name] = mod
    return mod

class Parsed(Exception):
    pass

def is_initialized():  # train(args) calls this first: report its args, launch nothing
    args = sys._getframe(1).f_locals["args"]
    print("PARSED " + json.dumps(args, default=lambda o: getattr(o, "__dict__", str(o))))
    raise Parsed

fake("ray", is_initialized=is_initialized, init=None)                        # FAKE_ray
fake("ray.util", __path__=[])
fake("ray.util.placement_group", placement_group=None)
for pkg in ("openrlhf", "openrlhf.trainer", "openrlhf.utils"):                # real submodules, no __init__
    fake(pkg, __path__=[root + "/" + pkg.replace(".", "/")])
sys.modules["openrlhf.utils"].get_strategy = None                              # FAKE_get_strategy
fake("openrlhf.trainer.ray", __path__=[], create_vllm_engines=None)            # FAKE (needs vllm)
fake("openrlhf.trainer.ray.launcher", RayActorGroup=None, ReferenceModelActor=None, RewardModelActor=None)
fake("openrlhf.trainer.ray.ppo_actor", PolicyModelActor=None)
fake("openrlhf.trainer.ray.ppo_critic", CriticModelActor=None)
sys.argv = ["train_ppo_ray"] + sys.argv[2:]
try:
    runpy.run_path(root + "/openrlhf/cli/train_ppo_ray.py", run_name="__main__")
except Parsed:
    sys.exit(0)
sys.exit("train() was never reached")
'''


@pytest.fixture(scope="module")
def patched_root(openrlhf_latest_wheel, tmp_path_factory):
    root = unpack_wheel(openrlhf_latest_wheel, tmp_path_factory.mktemp("orl0112_cli"))
    proc = run_script(root)
    assert proc.returncode == 0, out(proc)
    return root


def dry_run(tmp_path, **env):
    proc = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, timeout=120, cwd=tmp_path,
                          env={**os.environ, "DRY_RUN": "1", "TRAIN_PYTHON": sys.executable,
                               "MODEL": "Qwen/Qwen2.5-7B", "DATA": "data_out/train.jsonl", **env})
    assert proc.returncode == 0, out(proc)
    words = shlex.split(proc.stdout.replace("\\\n", " "))
    assert words[:3] == [sys.executable, "-m", "openrlhf.cli.train_ppo_ray"], proc.stdout
    return words[3:]


def parse(root, flags):
    proc = subprocess.run([sys.executable, "-c", PARSE, str(root), *flags], capture_output=True, text=True,
                          timeout=120, cwd=root)
    line = next((x for x in proc.stdout.splitlines() if x.startswith("PARSED ")), None)
    return proc, (json.loads(line[len("PARSED "):]) if line else None)


def test_dry_run_command_parses_with_the_real_cli(patched_root, tmp_path):
    proc, args = parse(patched_root, dry_run(tmp_path))
    assert proc.returncode == 0 and args, out(proc)
    adv, kl = args["algo"]["advantage"], args["algo"]["kl"]
    assert adv["estimator"] == "group_norm" and adv["group_norm_std_threshold"] == 0.1
    assert kl["use_loss"] is True and kl["estimator"] == "k3"
    assert args["reward"]["remote_url"] == ["http://127.0.0.1:5000/get_reward"]  # 0.11.2 splits on ","
    assert args["data"]["label_key"] == "label" and args["data"]["input_key"] == "input"
    assert args["data"]["prompt_dataset"] == str(tmp_path / "data_out/train.jsonl")
    assert args["ds"]["zero_stage"] == 2 and args["ds"]["adam_offload"] is True
    assert args["ds"]["param_dtype"] == "bf16" and args["actor"]["gradient_checkpointing_enable"] is True
    assert args["train"]["micro_batch_size"] == 2 and args["train"]["batch_size"] == 128
    assert args["rollout"]["n_samples_per_prompt"] == 8


def test_reward_func_mode_and_knobs(patched_root, tmp_path):
    flags = dry_run(tmp_path, REWARD="func", GROUP_NORM_STD_THRESHOLD="0.05", KL_K3="0", N_SAMPLES="4")
    proc, args = parse(patched_root, flags)
    assert proc.returncode == 0 and args, out(proc)
    assert args["reward"]["remote_url"] == [str(REPO_ROOT / "rewards" / "reward_func.py")]
    assert args["algo"]["advantage"]["group_norm_std_threshold"] == 0.05
    assert args["algo"]["kl"]["estimator"] == "k1" and args["rollout"]["n_samples_per_prompt"] == 4


def test_patched_cli_rejects_a_negative_threshold(patched_root, tmp_path):
    proc, args = parse(patched_root, dry_run(tmp_path, GROUP_NORM_STD_THRESHOLD="-1"))
    assert proc.returncode != 0 and args is None
    assert "group_norm_std_threshold must be >= 0" in proc.stderr


def test_bad_knobs_fail_clearly(tmp_path):
    for env, msg in (({"REWARD": "grpc"}, "REWARD must be server or func"),
                     ({"WANDB": "1"}, "WANDB=1 is not supported")):
        proc = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, timeout=60,
                              env={**os.environ, "DRY_RUN": "1", "TRAIN_PYTHON": sys.executable, **env})
        assert proc.returncode == 2 and msg in proc.stderr, out(proc)
    proc = subprocess.run(["bash", str(SCRIPT), "--help"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "REWARD=server" in proc.stdout and "DRY_RUN" in proc.stdout


def test_missing_data_stops_before_launching(tmp_path):
    """No preflight in this release's launch: a missing DATA fails before Ray/vLLM start, a dry run warns."""
    env = {**os.environ, "TRAIN_PYTHON": sys.executable, "DATA": str(tmp_path / "nope.jsonl")}
    proc = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, timeout=60, cwd=tmp_path, env=env)
    assert proc.returncode == 10 and f"DATA={tmp_path / 'nope.jsonl'} is missing or empty" in proc.stderr, out(proc)
    assert "openrlhf.cli.train_ppo_ray" not in proc.stdout + proc.stderr
    dry = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, timeout=60, cwd=tmp_path,
                         env={**env, "DRY_RUN": "1"})
    assert dry.returncode == 0 and "WARNING: DATA=" in dry.stderr and "DRY_RUN=1: not launching" in dry.stderr, out(dry)

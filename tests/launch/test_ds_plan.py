"""configs/ds_config_zero2.json is what OpenRLHF 0.5.7 really builds from the launch script's flags, and
DeepSpeed's CPU Adam op (what --adam_offload runs on) builds and steps with the pinned deepspeed."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from coderl.launch import ds_plan, preflight
from tests.support import (
    RAY_SCRIPT,
    REPO_ROOT,
    SINGLE_SCRIPT,
    command_words,
    out,
    patch_tree,
    run_train,
    unpack_wheel,
)

DS_JSON = REPO_ROOT / "configs" / "ds_config_zero2.json"
DS_FLAG_NAMES = ("--zero_stage", "--adam_offload", "--bf16", "--max_norm", "--zpg", "--overlap_comm",
                 "--grad_accum_dtype", "--micro_train_batch_size", "--train_batch_size")
pytestmark = pytest.mark.timeout(300)


def the_json() -> dict:
    return {k: v for k, v in json.loads(DS_JSON.read_text()).items() if not k.startswith("_")}


@pytest.fixture(scope="module")
def pristine(openrlhf_wheel, tmp_path_factory) -> Path:
    return unpack_wheel(openrlhf_wheel, tmp_path_factory.mktemp("pristine"))


@pytest.fixture(scope="module")
def patched(openrlhf_wheel, tmp_path_factory) -> Path:
    root = unpack_wheel(openrlhf_wheel, tmp_path_factory.mktemp("patched"))
    patch_tree(root)
    return root


@pytest.fixture(scope="module")
def ds_utils(pristine):
    """OpenRLHF's own deepspeed_utils from the release (loaded by file, as preflight.py does)."""
    sys.path.insert(0, str(pristine))
    try:
        mod = ds_plan.load_openrlhf_ds_utils()
    finally:
        sys.path.remove(str(pristine))
    assert mod is not None and str(pristine) in mod.__file__
    return mod


def test_the_json_describes_the_reference_setup():
    cfg = the_json()
    zo = cfg["zero_optimization"]
    assert zo["stage"] == 2
    assert zo["offload_optimizer"] == {"device": "cpu", "pin_memory": True}
    assert zo["offload_param"] == {"device": "none"}
    assert cfg["bf16"] == {"enabled": True} and cfg["gradient_clipping"] == 1.0
    assert cfg["train_micro_batch_size_per_gpu"] == 2 and cfg["train_batch_size"] == 128


@pytest.mark.slow
def test_openrlhf_builds_exactly_the_json_from_the_script_flags(tmp_path, pristine, patched):
    """The script's DRY_RUN command, parsed by the real train_ppo_ray argparse and turned into a DeepSpeed
    config by the real DeepspeedStrategy.get_ds_train_config, equals configs/ds_config_zero2.json."""
    env = {"DRY_RUN": "1", "SKIP_PREFLIGHT": "1", "SAVE_DIR": str(tmp_path), "PYTHONPATH": str(pristine)}
    ray = run_train(RAY_SCRIPT, env)
    assert ray.returncode == 0, out(ray)
    assert "without the round-trip check" not in ray.stderr, "ds-flags must have compared with OpenRLHF"
    flags = command_words(ray.stdout, "openrlhf.cli.train_ppo_ray")
    single = run_train(SINGLE_SCRIPT, env)
    assert single.returncode == 0, out(single)

    def ds_part(words):
        return [w for i, w in enumerate(words) if w in DS_FLAG_NAMES or (i and words[i - 1] in DS_FLAG_NAMES
                                                                       and not w.startswith("--"))]

    assert ds_part(flags) == ds_part(command_words(single.stdout, "openrlhf.cli.train_ppo"))
    probe = textwrap.dedent("""
        import argparse, json, runpy, sys
        class Parsed(Exception):
            pass
        real_parse = argparse.ArgumentParser.parse_args
        def grab(self, *a, **k):
            Parsed.args = real_parse(self, *a, **k)
            raise Parsed  # stop before train(): only the parsed flags are wanted
        argparse.ArgumentParser.parse_args = grab
        sys.argv = ["train_ppo_ray", *json.loads(sys.argv[1])]
        try:
            runpy.run_module("openrlhf.cli.train_ppo_ray", run_name="__main__")
        except Parsed:
            pass
        argparse.ArgumentParser.parse_args = real_parse
        from openrlhf.utils import get_strategy
        strategy = get_strategy(Parsed.args)
        strategy.setup_ring_attn()  # ring_attn_size 1: no process group needed
        strategy.is_rlhf = True     # as PPOTrainer sets it
        print("DSCONFIG=" + json.dumps(strategy.get_ds_train_config(is_actor=True)))
    """)
    proc = subprocess.run([sys.executable, "-c", probe, json.dumps(flags)], capture_output=True, text=True,
                          timeout=240, env={**os.environ, "PYTHONPATH": str(patched)})
    assert proc.returncode == 0, out(proc)
    built = json.loads(proc.stdout.split("DSCONFIG=", 1)[1])
    assert built == the_json(), list(ds_plan.config_diff(the_json(), built))


def test_ds_flags_follow_the_json(ds_utils):
    base = the_json()
    flags, kw = ds_plan.ds_config_to_flags(base)
    assert flags == ["--zero_stage", "2", "--adam_offload", "--bf16", "--max_norm", "1.0", "--zpg", "1",
                     "--micro_train_batch_size", "2", "--train_batch_size", "128"]
    assert ds_plan.rebuild_with_openrlhf(ds_utils, kw) == base

    variant = copy.deepcopy(base)
    variant["zero_optimization"]["offload_optimizer"]["device"] = "none"
    variant["gradient_clipping"] = 0.5
    variant["zero_optimization"].update(overlap_comm=True, contiguous_gradients=True)
    variant["data_types"]["grad_accum_dtype"] = "fp32"
    flags, kw = ds_plan.ds_config_to_flags(variant, micro=4, train=256)
    assert "--adam_offload" not in flags and "--overlap_comm" in flags
    assert flags[flags.index("--max_norm") + 1] == "0.5" and flags[flags.index("--grad_accum_dtype") + 1] == "fp32"
    assert flags[-4:] == ["--micro_train_batch_size", "4", "--train_batch_size", "256"]
    built = ds_plan.rebuild_with_openrlhf(ds_utils, kw)
    assert built == {**variant, "train_micro_batch_size_per_gpu": 4, "train_batch_size": 256}


@pytest.mark.parametrize("edit,needle", [
    (lambda c: c["zero_optimization"]["offload_param"].update(device="cpu"),
     "zero_optimization.offload_param.device: file has 'cpu', OpenRLHF builds 'none'"),
    (lambda c: c["zero_optimization"]["offload_optimizer"].update(pin_memory=False),
     "zero_optimization.offload_optimizer.pin_memory: file has False, OpenRLHF builds True"),
    (lambda c: c.update(fp16={"enabled": True}), "fp16: file has {'enabled': True}, OpenRLHF builds '<absent>'"),
    (lambda c: c["zero_optimization"].update(offload_optimizer={"device": "nvme"}), "only offloads to 'cpu'"),
    (lambda c: c.pop("gradient_clipping"), "missing key gradient_clipping"),
], ids=["offload_param", "pin_memory", "fp16", "nvme", "no_clipping"])
def test_inexpressible_json_is_rejected(tmp_path, pristine, capsys, edit, needle):
    cfg = the_json()
    edit(cfg)
    path = tmp_path / "ds.json"
    path.write_text(json.dumps(cfg))
    sys.path.insert(0, str(pristine))
    try:
        rc = preflight.main(["ds-flags", "--ds_config", str(path)])
    finally:
        sys.path.remove(str(pristine))
    err = capsys.readouterr().err
    assert rc == preflight.EXIT_CODES["ds_config"] == 19
    assert "[preflight] FAIL ds_config" in err and str(path) in err and needle in err, err


CPU_ADAM_PROBE = textwrap.dedent("""
    import time, torch
    t0 = time.time()
    from deepspeed.ops.adam import DeepSpeedCPUAdam
    torch.manual_seed(0)
    a = torch.nn.Parameter(torch.randn(1000))
    b = torch.nn.Parameter(a.detach().clone())
    kw = dict(lr=1e-2, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.1)
    ds, ref = DeepSpeedCPUAdam([a], adamw_mode=True, **kw), torch.optim.AdamW([b], **kw)
    print(f"BUILD_S={time.time() - t0:.1f}")
    for step in range(5):
        g = torch.randn(1000)
        a.grad, b.grad = g.clone(), g.clone()
        ds.step(); ref.step()
    print(f"MAXDIFF={(a - b).abs().max().item():.3e} MOVED={(a - 0).abs().sum().item() > 0}")
""")
_cpu_adam: dict = {}


def start_cpu_adam_build() -> None:
    """Start the CPU-Adam probe (a ~2-minute JIT build on a fresh machine) in the background when the session
    collects its test, so the build overlaps the tests before it; the test waits for it."""
    if _cpu_adam:
        return
    # torch's JIT build holds a `lock` file while it runs and waits, forever, while one exists: a build killed
    # mid-way (this test's own timeout on a loaded machine) left one that made every later run hang.
    from torch.utils.cpp_extension import _get_build_directory
    lock = Path(_get_build_directory("cpu_adam", verbose=False)) / "lock"
    if lock.exists() and time.time() - lock.stat().st_mtime > 880:  # older than any build this test allows
        lock.unlink(missing_ok=True)
    _cpu_adam.update(lock=lock, t=time.time(), proc=subprocess.Popen(
        [sys.executable, "-c", CPU_ADAM_PROBE], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))


def stop_cpu_adam_build() -> None:
    """End a build the session started and never waited for (its test deselected by -x, or interrupted)."""
    proc = _cpu_adam.get("proc")
    if proc is not None and proc.poll() is None:
        proc.kill()
        proc.wait()
        _cpu_adam["lock"].unlink(missing_ok=True)


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_cpu_adam_op_builds_and_matches_torch_adamw():
    """DeepSpeedCPUAdam (JIT-built with ninja + g++, cached under TORCH_EXTENSIONS_DIR or
    ~/.cache/torch_extensions) takes the same steps as torch.optim.AdamW."""
    start_cpu_adam_build()
    proc, lock = _cpu_adam["proc"], _cpu_adam["lock"]
    try:
        stdout, stderr = proc.communicate(timeout=max(60.0, 880 - (time.time() - _cpu_adam["t"])))
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        lock.unlink(missing_ok=True)
        raise
    proc = subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)
    assert proc.returncode == 0, out(proc)
    assert "Time to load cpu_adam op" in proc.stdout + proc.stderr
    maxdiff = float(proc.stdout.split("MAXDIFF=", 1)[1].split()[0])
    assert maxdiff < 1e-5, proc.stdout
    print(f"CPU Adam op: {proc.stdout.split('BUILD_S=', 1)[1].split()[0]}s to build/load, "
          f"{time.time() - _cpu_adam['t']:.1f}s since it started")

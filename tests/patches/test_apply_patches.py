"""patches/apply_patches.sh and the patched OpenRLHF 0.5.7 (the real PyPI wheel, unpacked), on CPU.

The group-norm numerics are in tests/patches/test_group_norm.py; this file covers the apply script, the
CLIs, flash-attn being optional (SDPA) and the vLLM version helper.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import (
    APPLY_PATCHES,
    REPO_ROOT,
    forget_openrlhf,
    import_patched_openrlhf,
    out,
    run_script,
    snapshot,
    unpack_wheel,
)

SCRIPT = APPLY_PATCHES
PATCHES = sorted((REPO_ROOT / "patches").glob("0*.patch"))

pytestmark = pytest.mark.timeout(300)


# ---------------------------------------------------------------------------------------- fixtures
@pytest.fixture
def pristine(openrlhf_wheel, tmp_path) -> Path:
    return unpack_wheel(openrlhf_wheel, tmp_path / "site-packages")


@pytest.fixture(scope="module")
def patched(openrlhf_wheel, tmp_path_factory) -> Path:
    """One patched tree for the module, imported in-process."""
    root = unpack_wheel(openrlhf_wheel, tmp_path_factory.mktemp("patched"))
    proc = run_script(root)
    assert proc.returncode == 0, out(proc)
    import_patched_openrlhf(root)
    yield root
    forget_openrlhf(root)


@pytest.fixture(scope="module")
def cli_runs(patched) -> dict[str, subprocess.CompletedProcess]:
    """The patched CLIs, run as users run them (python -m ...), in parallel to save wall time."""
    cmds = {
        "ray_help": ["openrlhf.cli.train_ppo_ray", "--help"],
        "ppo_help": ["openrlhf.cli.train_ppo", "--help"],
        "ray_n1": ["openrlhf.cli.train_ppo_ray", "--advantage_estimator", "group_norm", "--n_samples_per_prompt", "1"],
        "ppo_n1": ["openrlhf.cli.train_ppo", "--advantage_estimator", "group_norm", "--n_samples_per_prompt", "1"],
    }
    env = {**os.environ, "PYTHONPATH": str(patched)}
    procs = {k: subprocess.Popen([sys.executable, "-m", *v], cwd=patched, env=env, text=True,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE) for k, v in cmds.items()}
    results = {}
    for k, p in procs.items():
        try:
            out, err = p.communicate(timeout=240)
        finally:
            if p.poll() is None:
                p.kill()
                p.communicate()
        results[k] = subprocess.CompletedProcess(p.args, p.returncode, out, err)
    return results


# ------------------------------------------------------------------------------------ apply script
def test_script_help():
    # shellcheck of every script, this one included: tests/scripts/test_shell_scripts.py
    proc = subprocess.run(["bash", str(SCRIPT), "--help"], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0 and "--revert" in proc.stdout and "PYTHON=" in proc.stdout


def test_apply_check_reapply_revert_byte_identical(pristine):
    before = snapshot(pristine)

    check = run_script(pristine, "--check")
    assert check.returncode == 0, out(check)
    assert "apply cleanly" in check.stdout and "0.5.7" in check.stdout
    assert snapshot(pristine) == before, "--check wrote something"

    applied = run_script(pristine, verify_help="1")  # the real --help verification, deps required
    assert applied.returncode == 0, out(applied)
    assert "verified: python -m openrlhf.cli.train_ppo_ray --help lists group_norm" in applied.stdout
    after = snapshot(pristine)
    changed = {k for k in before if before[k] != after[k]}
    patched_files = {line[6:].strip() for p in PATCHES for line in p.read_text().splitlines()
                     if line.startswith("+++ b/")}
    assert changed == patched_files

    again = run_script(pristine)
    assert again.returncode == 0 and "already applied" in again.stdout, out(again)
    assert snapshot(pristine) == after
    assert "already applied" in run_script(pristine, "--check").stdout

    reverted = run_script(pristine, "--revert")
    assert reverted.returncode == 0 and "byte-identical to OpenRLHF 0.5.7" in reverted.stdout, out(reverted)
    assert snapshot(pristine) == before
    assert "nothing to revert" in run_script(pristine, "--revert").stdout


def test_patches_are_plain_git_diffs(pristine):
    # Users may apply them by hand: git apply -p1 (and patch -p1, which the script uses) from the root.
    for p in PATCHES:
        head = p.read_text().split("\ndiff --git ", 1)[0]
        assert head.startswith("# ") and "Why" in head, f"{p.name} needs a header comment saying why"
        proc = subprocess.run(["git", "apply", "-p1", str(p)], cwd=pristine, capture_output=True, text=True,
                              timeout=30)
        assert proc.returncode == 0, f"{p.name}: {proc.stderr}"
    assert "already applied" in run_script(pristine).stdout


def test_partially_applied_tree_is_reported_not_touched(pristine):
    before = snapshot(pristine)
    vllm_patch = next(p for p in PATCHES if "vllm" in p.name)
    subprocess.run(["patch", "-p1", "-s", "--no-backup-if-mismatch", "-i", str(vllm_patch)], cwd=pristine, check=True, timeout=30)
    partial = snapshot(pristine)

    proc = run_script(pristine)
    assert proc.returncode == 3, out(proc)
    assert re.search(r"0003-vllm-version-checks\.patch: applied", proc.stdout)
    assert re.search(r"0001-group-norm-advantage-estimator\.patch: not applied", proc.stdout)
    assert "partially applied" in proc.stderr
    assert snapshot(pristine) == partial

    # a patch applied to only some of its files is named as such
    ppo_trainer = pristine / "openrlhf/trainer/ppo_trainer.py"
    original = ppo_trainer.read_bytes()
    ppo_trainer.write_text(ppo_trainer.read_text().replace(
        '                self.replay_buffer.normalize("advantages", self.strategy)\n',
        '                if whiten_advantages_in_buffer(self.args):\n'
        '                    self.replay_buffer.normalize("advantages", self.strategy)\n'))
    proc = run_script(pristine, "--check")
    assert proc.returncode == 1 and "0001-group-norm-advantage-estimator.patch" in proc.stderr, out(proc)
    assert "openrlhf/trainer/ppo_trainer.py: hunk #" in proc.stderr
    ppo_trainer.write_bytes(original)

    reverted = run_script(pristine, "--revert")
    assert reverted.returncode == 0, out(reverted)
    assert snapshot(pristine) == before

    # --force completes a partial tree instead
    subprocess.run(["patch", "-p1", "-s", "--no-backup-if-mismatch", "-i", str(vllm_patch)], cwd=pristine, check=True, timeout=30)
    forced = run_script(pristine, "--force")
    assert forced.returncode == 0, out(forced)
    assert "already applied" in run_script(pristine).stdout


def test_corrupted_target_fails_clearly_and_untouched(pristine, tmp_path):
    maker = pristine / "openrlhf/trainer/ppo_utils/experience_maker.py"
    maker.write_text(maker.read_text().replace('in ["reinforce", "rloo"]:', 'in ("reinforce", "rloo"):'))
    before = snapshot(pristine)
    proc = run_script(pristine)
    assert proc.returncode == 1, out(proc)
    assert re.search(r"0001-group-norm-advantage-estimator\.patch: openrlhf/trainer/ppo_utils/experience_maker"
                     r"\.py: hunk #1 \(@@ -\d+,\d+ \+\d+,\d+ @@\) does not apply", proc.stderr), proc.stderr
    assert "left untouched" in proc.stderr
    assert snapshot(pristine) == before
    assert run_script(pristine, "--force").returncode == 1  # --force never applies a hunk that fails
    assert snapshot(pristine) == before

    # an edit outside every hunk: the patches would apply, but the tree is not a known OpenRLHF
    maker.write_bytes(maker.read_bytes().replace(b'("reinforce", "rloo")', b'["reinforce", "rloo"]'))
    trainer = pristine / "openrlhf/trainer/ppo_trainer.py"
    trainer.write_bytes(trainer.read_bytes() + b"# local edit\n")
    modified = snapshot(pristine)
    proc = run_script(pristine)
    assert proc.returncode == 2 and "is not a known OpenRLHF (0.5.7 2db547e 0.11.2" in proc.stderr, out(proc)
    assert "openrlhf/trainer/ppo_trainer.py differs" in proc.stdout
    assert snapshot(pristine) == modified
    assert run_script(pristine, "--force").returncode == 0
    assert run_script(pristine, "--revert", "--force").returncode == 0
    assert snapshot(pristine) == modified

    # not an OpenRLHF tree at all / the package dir itself / a missing file
    empty = tmp_path / "empty"
    empty.mkdir()
    proc = run_script(empty)
    assert proc.returncode == 2 and "no openrlhf/ package" in proc.stderr
    purelib = empty / "openrlhf-0.5.7.data" / "purelib"  # an unzipped wheel
    shutil.copytree(pristine / "openrlhf", purelib / "openrlhf")
    proc = run_script(empty)
    assert proc.returncode == 2 and f"this is an unpacked wheel: pass '{purelib}'" in proc.stderr, out(proc)
    proc = run_script(pristine / "openrlhf")
    assert proc.returncode == 2 and "pass its parent directory" in proc.stderr
    (pristine / "openrlhf/models/utils.py").unlink()
    proc = run_script(pristine)
    assert proc.returncode == 2 and "missing openrlhf/models/utils.py" in proc.stderr


def test_help_check_skips_when_deps_missing(pristine, tmp_path):
    # A python without torch/deepspeed (a bare venv): compile still runs, the --help check is skipped.
    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True, timeout=120)
    proc = run_script(pristine, verify_help="auto", PYTHON=str(bare / "bin" / "python"))
    assert proc.returncode == 0, out(proc)
    assert "--help check skipped: OpenRLHF's dependency" in proc.stdout
    proc = run_script(pristine, "--revert")
    assert proc.returncode == 0


# ------------------------------------------------------------------------------------------- CLIs
@pytest.mark.parametrize("cli", ["ray", "ppo"])
def test_cli_help_lists_group_norm_and_flags(cli_runs, cli):
    proc = cli_runs[f"{cli}_help"]
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "{gae,reinforce,rloo,group_norm}" in proc.stdout
    for flag in ("--group_norm_std_threshold", "--group_norm_eps", "--group_norm_whiten_advantages"):
        assert flag in proc.stdout


@pytest.mark.parametrize("cli", ["ray", "ppo"])
def test_cli_rejects_group_norm_with_one_sample(cli_runs, cli):
    proc = cli_runs[f"{cli}_n1"]
    assert proc.returncode != 0
    assert "AssertionError: group_norm requires n_samples_per_prompt > 1" in proc.stderr, proc.stderr[-3000:]


def test_whitening_gate(patched):
    from argparse import Namespace

    from openrlhf.trainer import ppo_trainer

    gate = ppo_trainer.whiten_advantages_in_buffer
    assert gate(Namespace(advantage_estimator="group_norm")) is False
    assert gate(Namespace(advantage_estimator="group_norm", group_norm_whiten_advantages=True)) is True
    for est in ("gae", "reinforce", "rloo"):
        assert gate(Namespace(advantage_estimator=est)) is True
    # PPOTrainer.fit (used by train_ppo and, through ActorPPOTrainer, by train_ppo_ray) goes through it
    src = (patched / "openrlhf/trainer/ppo_trainer.py").read_text()
    assert re.search(r"if whiten_advantages_in_buffer\(self\.args\):\n\s+self\.replay_buffer\.normalize", src)


# ------------------------------------------------------------------------- flash-attn optional / SDPA
def _tiny_llama(path: Path) -> Path:
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
                      pad_token_id=0, eos_token_id=1, bos_token_id=2)
    LlamaForCausalLM(cfg).save_pretrained(path)
    return path


def test_models_import_without_flash_attn_and_pick_sdpa(patched, tmp_path, caplog):
    import torch
    from transformers import AutoModelForCausalLM

    assert importlib.util.find_spec("flash_attn") is None, "this test is about machines without flash-attn"
    import openrlhf.models
    from openrlhf.models import Actor, get_llm_for_sequence_regression
    from openrlhf.models import model as model_module
    from openrlhf.models.utils import log_probs_from_logits
    from openrlhf.trainer import DPOTrainer  # noqa: F401  (imported flash_attn at module top before)

    assert openrlhf.models.Actor is Actor
    model_dir = _tiny_llama(tmp_path / "tiny-llama")

    actor = Actor(str(model_dir), use_flash_attention_2=False, bf16=False)
    assert actor.model.config._attn_implementation == "sdpa"
    # --flash_attn without flash-attn: SDPA with a warning, not an ImportError
    with caplog.at_level("WARNING"):
        assert Actor(str(model_dir), use_flash_attention_2=True, bf16=False).model.config._attn_implementation == "sdpa"
    assert "flash-attn is not usable" in caplog.text
    # packing truly needs flash-attn's varlen kernels: a clear error
    with pytest.raises(ImportError, match="--packing_samples needs flash-attn"):
        Actor(str(model_dir), use_flash_attention_2=True, bf16=False, packing_samples=True)

    # SDPA gives the eager numbers (left-padded batch, as OpenRLHF builds it)
    eager = AutoModelForCausalLM.from_pretrained(model_dir, attn_implementation="eager").eval()
    seqs = torch.randint(3, 64, (2, 12))
    mask = torch.ones_like(seqs)
    mask[0, :4] = 0
    seqs[0, :4] = 0
    num_actions = 5
    with torch.no_grad():
        got = actor.eval()(seqs, num_actions, mask)
        pos = (mask.cumsum(-1) - 1).masked_fill(mask == 0, 1)
        logits = eager(seqs, attention_mask=mask, position_ids=pos).logits
        want = log_probs_from_logits(logits[:, :-1, :], seqs[:, 1:])[:, -num_actions:]
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)

    reward = get_llm_for_sequence_regression(str(model_dir), "reward", bf16=False)
    assert reward.config._attn_implementation == "sdpa"
    with torch.no_grad():
        assert reward(seqs, attention_mask=mask).shape == (2,)

    # ring attention is the one feature that needs flash-attn: a clear error when used
    with pytest.raises(ImportError, match="ring attention"):
        model_module.all_gather(torch.zeros(1), None)
    from argparse import Namespace

    from openrlhf.utils.deepspeed import DeepspeedStrategy

    with pytest.raises(ImportError, match="--ring_attn_size 2 needs flash-attn"):
        DeepspeedStrategy(args=Namespace(ring_attn_size=2)).setup_ring_attn()


# ----------------------------------------------------------------------------------- vLLM versions
def test_vllm_version_helper(patched):
    from openrlhf.trainer.ray.vllm_engine import vllm_version
    from packaging.version import Version

    ordered = ["0.4.2", "0.6.0", "0.6.4", "0.6.4.post1", "0.6.5", "0.7.0", "0.7.3", "0.10.1"]
    assert sorted(ordered, key=vllm_version) == ordered
    assert vllm_version("0.6.0") < vllm_version("0.6.4.post1") < vllm_version("0.7.0") < vllm_version("0.10.1")
    assert vllm_version("0.10.0") >= Version("0.4.3")  # the string comparison got this wrong
    assert vllm_version("0.6.4.post1+cu118") == Version("0.6.4.post1")

    # every 0.6.x release takes the same branches as with 0.5.7's string comparisons
    releases = ["0.6.0", "0.6.1", "0.6.1.post2", "0.6.2", "0.6.3", "0.6.3.post1", "0.6.4", "0.6.4.post1",
                "0.6.5", "0.6.6", "0.6.6.post1"]
    for v in releases:
        assert (vllm_version(v) >= Version("0.4.3")) == (v >= "0.4.3")
        assert (vllm_version(v) > Version("0.6.4.post1")) == (v > "0.6.4.post1"), v
        assert (vllm_version(v) < Version("0.7.0")) == (v < "0.7.0")
        assert (vllm_version(v) > Version("0.4.2")) == (v > "0.4.2")

    # no string comparison of vLLM versions is left in the patched files
    for rel in ("openrlhf/trainer/ray/vllm_engine.py", "openrlhf/cli/train_ppo_ray.py"):
        src = (patched / rel).read_text()
        assert not re.search(r"__version__\s*[<>]=?\s*[\"']", src), rel
        assert "OpenRLHF only supports vLLM" not in src

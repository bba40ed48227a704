"""patches/0.11.2/ through patches/apply_patches.sh on the real OpenRLHF 0.11.2 wheel from PyPI, on CPU.

0.11.2's package imports flash_attn and vllm (openrlhf.models -> ring_attn_utils, trainer.ray -> vllm), so
the patched experience_maker is loaded from the patched tree with its package __init__ files skipped: its
real submodules (models.utils, ppo_utils.experience, length_penalty, kl_controller, utils.logging_utils,
seqlen_balancing) import as they are; only trainer.ray.launcher, used for a type hint, is a named fake.
"""

from __future__ import annotations

import importlib
import statistics
import sys
import types
from argparse import Namespace
from pathlib import Path

import pytest
import torch

from tests.support import out, run_script, snapshot, unpack_wheel

pytestmark = pytest.mark.timeout(300)

MAKER = "openrlhf/trainer/ppo_utils/experience_maker.py"
CLI = "openrlhf/cli/train_ppo_ray.py"


@pytest.fixture
def pristine(openrlhf_latest_wheel, tmp_path) -> Path:
    return unpack_wheel(openrlhf_latest_wheel, tmp_path / "site-packages")


def test_detected_by_fingerprint_apply_check_reapply_revert(pristine):
    before = snapshot(pristine)
    proc = run_script(pristine, "--check")
    assert proc.returncode == 0 and "0.11.2 (installed 0.11.2)" in proc.stdout, out(proc)
    assert "patches/0.11.2 (1 patch(es))" in proc.stdout and snapshot(pristine) == before

    proc = run_script(pristine)
    assert proc.returncode == 0, out(proc)
    after = snapshot(pristine)
    assert {k for k in before if before[k] != after[k]} == {MAKER, CLI}
    assert "group_norm_std_threshold" in (pristine / CLI).read_text()

    proc = run_script(pristine)  # idempotent, and a patched tree is still recognised as 0.11.2
    assert proc.returncode == 0 and "already applied" in proc.stdout and "0.11.2" in proc.stdout, out(proc)
    assert snapshot(pristine) == after

    proc = run_script(pristine, "--revert")
    assert proc.returncode == 0 and "byte-identical to OpenRLHF 0.11.2" in proc.stdout, out(proc)
    assert snapshot(pristine) == before


def test_help_check_skips_without_vllm(pristine):
    proc = run_script(pristine, verify_help="auto")
    assert proc.returncode == 0, out(proc)
    assert "--help check skipped" in proc.stdout


def test_partial_and_modified_trees(pristine):
    maker = pristine / MAKER
    original = maker.read_bytes()
    assert run_script(pristine).returncode == 0
    patched_maker = maker.read_bytes()
    maker.write_bytes(original)  # only the CLI half patched: reported, nothing touched
    half = snapshot(pristine)
    proc = run_script(pristine)
    assert proc.returncode == 3 and "PARTIALLY applied" in proc.stdout, out(proc)
    assert snapshot(pristine) == half
    assert run_script(pristine, "--force").returncode == 0  # completes it
    assert maker.read_bytes() == patched_maker
    assert run_script(pristine, "--revert").returncode == 0
    assert maker.read_bytes() == original

    # the group_norm line edited locally: the hunk is named, the tree untouched (with --force too)
    maker.write_text(maker.read_text().replace("(rewards.std(-1, keepdim=True) + 1e-9)",
                                               "(rewards.std(-1, keepdim=True) + 1e-6)"))
    edited = snapshot(pristine)
    for args in ((), ("--force",)):
        proc = run_script(pristine, *args)
        assert proc.returncode == 1, out(proc)
        assert "0001-adaptive-group-norm.patch: openrlhf/trainer/ppo_utils/experience_maker.py: hunk #1" in proc.stderr
        assert snapshot(pristine) == edited


# ------------------------------------------------------------------------- the patched numerics
@pytest.fixture(scope="module")
def em(openrlhf_latest_wheel, tmp_path_factory):
    root = unpack_wheel(openrlhf_latest_wheel, tmp_path_factory.mktemp("orl0112"))
    proc = run_script(root)
    assert proc.returncode == 0, out(proc)
    saved = {k: v for k, v in sys.modules.items() if k == "openrlhf" or k.startswith("openrlhf.")}
    for k in saved:
        del sys.modules[k]
    # packages without their __init__ (which would import flash_attn / vllm): submodules load from root
    for pkg in ("openrlhf", "openrlhf.models", "openrlhf.trainer", "openrlhf.trainer.ppo_utils",
                "openrlhf.trainer.ray", "openrlhf.utils"):
        mod = types.ModuleType(pkg)
        mod.__path__ = [str(root / pkg.replace(".", "/"))]
        sys.modules[pkg] = mod
    fake_launcher = types.ModuleType("openrlhf.trainer.ray.launcher")  # FAKE: only a type hint is imported
    fake_launcher.RayActorGroup = type("FakeRayActorGroup", (), {})
    sys.modules[fake_launcher.__name__] = fake_launcher
    maker = importlib.import_module("openrlhf.trainer.ppo_utils.experience_maker")
    assert Path(maker.__file__).resolve() == (root / MAKER).resolve()
    kl = importlib.import_module("openrlhf.trainer.ppo_utils.kl_controller")
    yield Namespace(maker=maker, Experience=maker.Experience, FixedKLController=kl.FixedKLController)
    for k in [k for k in sys.modules if k == "openrlhf" or k.startswith("openrlhf.")]:
        del sys.modules[k]
    sys.modules.update(saved)


def advantages(em, rewards, n, threshold, order):
    """Run the patched compute_advantages_and_returns; samples arrive in `order`, in experiences of 3."""
    args = Namespace(
        algo=Namespace(advantage=Namespace(estimator="group_norm", gamma=1.0, lambd=1.0, no_std_norm=False,
                                           group_norm_std_threshold=threshold)),
        rollout=Namespace(n_samples_per_prompt=n),
        reward=Namespace(clip_range=(-10.0, 10.0), overlong_buffer_len=None, stop_properly_penalty_coef=None))
    strategy = Namespace(args=args)  # stand-in: compute_advantages_and_returns reads only strategy.args
    maker = em.maker.RemoteExperienceMaker(None, None, None, None, em.FixedKLController(0.0), strategy, None)
    exps = []
    for k in range(0, len(order), 3):
        idx = order[k:k + 3]
        mask = torch.ones(len(idx), 5, dtype=torch.bool)
        mask[:, 3 + (k // 3) % 2:] = False  # ragged responses
        exps.append(em.Experience(action_mask=mask, kl=torch.zeros(len(idx), 5), index=list(idx),
                                  rewards=torch.tensor([rewards[i] for i in idx], dtype=torch.bfloat16)))
    exps = maker.compute_advantages_and_returns(exps)
    adv, flags = {}, {}
    for e in exps:
        for row, i in enumerate(e.index):
            values = e.advantages[row][e.action_mask[row]]
            assert torch.allclose(values, values[0].expand_as(values))  # one scalar per sample, gamma 1
            adv[i] = float(values[0])
            flags[i] = float(e.info["group_norm_fallback_frac"][row])
    return [adv[i] for i in range(len(rewards))], [flags[i] for i in range(len(rewards))]


def reference(rewards, n, threshold):
    out, flags = [], []
    for g in range(0, len(rewards), n):
        group = [float(torch.tensor(r, dtype=torch.bfloat16)) for r in rewards[g:g + n]]
        mean, std = statistics.fmean(group), statistics.stdev(group)
        fallback = std < threshold
        out += [(r - mean) if fallback else (r - mean) / (std + 1e-9) for r in group]
        flags += [float(fallback)] * n
    return out, flags


# groups of 4: partial credit that barely differs, a spread group, all equal, one pass among fails
REWARDS = [0.5, 0.55, 0.5, 0.5,  0.0, 1.0, 0.25, 0.75,  0.8, 0.8, 0.8, 0.8,  0.0, 0.0, 1.0, 0.0]
ORDER = [5, 0, 14, 9, 3, 12, 7, 1, 10, 15, 2, 8, 4, 13, 6, 11]


@pytest.mark.parametrize("threshold", [0.1, 0.0, 0.6])
def test_adaptive_group_norm_matches_reference(em, threshold):
    got, flags = advantages(em, REWARDS, 4, threshold, ORDER)
    want, want_flags = reference(REWARDS, 4, threshold)
    assert got == pytest.approx(want, abs=1e-5)
    assert flags == want_flags
    if threshold == 0.1:  # the near-equal group is centred, not blown up to +-1.5
        assert flags == [1.0] * 4 + [0.0] * 4 + [1.0] * 4 + [0.0] * 4
        assert max(abs(a) for a in got[:4]) < 0.05
    if threshold == 0.0:  # upstream group_norm exactly
        assert flags == [0.0] * 16 and max(abs(a) for a in got[:4]) > 1.4

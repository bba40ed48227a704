"""The patched group_norm estimator: the REAL NaiveExperienceMaker.process_experiences and returns path of
OpenRLHF 0.5.7 (PyPI wheel + patches/), on CPU, against a reference written here with Python floats.

No fakes: process_experiences only needs the strategy's args, so the experience maker is built with a
real DeepspeedStrategy and FixedKLController and no models (None) - the models are only used by
generate_samples/make_experience, which need GPUs and are not exercised here.
"""

from __future__ import annotations

import math
import statistics
from argparse import Namespace
from pathlib import Path

import pytest
import torch

from tests.support import forget_openrlhf, import_patched_openrlhf, out, run_script, unpack_wheel

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def orl(openrlhf_wheel, tmp_path_factory):
    """The patched openrlhf modules this file needs, imported from a freshly patched wheel tree."""
    root = unpack_wheel(openrlhf_wheel, tmp_path_factory.mktemp("group_norm"))
    proc = run_script(root)
    assert proc.returncode == 0, out(proc)
    import_patched_openrlhf(root)
    from openrlhf.models.utils import compute_reward
    from openrlhf.trainer.ppo_utils import experience_maker, replay_buffer
    from openrlhf.trainer.ppo_utils.kl_controller import FixedKLController
    from openrlhf.utils import get_strategy

    yield Namespace(em=experience_maker, rb=replay_buffer, compute_reward=compute_reward,
                    FixedKLController=FixedKLController, get_strategy=get_strategy)
    forget_openrlhf(root)


def make_args(n, **over):
    args = dict(advantage_estimator="group_norm", n_samples_per_prompt=n, group_norm_std_threshold=0.1,
                group_norm_eps=1e-8, zero_stage=2, reward_clip_range=(-10.0, 10.0), use_kl_estimator_k3=False)
    args.update(over)
    return Namespace(**args)


def maker(orl, args, cls="NaiveExperienceMaker"):
    strategy = orl.get_strategy(args)
    kwargs = {"vllm_engines": None, "packing_samples": False} if cls == "RemoteExperienceMaker" else {}
    return getattr(orl.em, cls)(None, None, None, None, None, 1024, orl.FixedKLController(0.05), strategy,
                                **kwargs)


def experiences(orl, rewards, sizes, dtype=torch.float32, seed=0):
    """Synthetic left/right-padded experiences, shaped as make_experience returns them."""
    assert sum(sizes) == len(rewards)
    gen = torch.Generator().manual_seed(seed)
    out, k = [], 0
    for b in sizes:
        num_actions = 6
        action_mask = torch.ones(b, num_actions, dtype=torch.bool)
        for i in range(b):  # ragged responses, each at least one token
            action_mask[i, 1 + int(torch.randint(0, num_actions, (1,), generator=gen)) % num_actions:] = False
        kl = torch.rand(b, num_actions, generator=gen) * 0.1 * action_mask
        info = {
            "kl": kl.sum(-1) / action_mask.sum(-1),
            "reward": torch.tensor(rewards[k:k + b], dtype=dtype),
            "response_length": action_mask.float().sum(-1),
            "total_length": action_mask.float().sum(-1) + 4,
            "num_actions": num_actions,
        }
        seqs = torch.randint(3, 100, (b, 4 + num_actions), generator=gen)
        out.append(orl.em.Experience(seqs, torch.zeros(b, num_actions), None, None, None,
                                     torch.ones_like(seqs), action_mask, info, kl))
        k += b
    return out


def reference(rewards, n, threshold=0.1, eps=1e-8):
    """Group norm with Python floats: (r - mean)/(stdev + eps) if stdev >= threshold else r - mean."""
    shaped, fallback, equal = [], 0, 0
    for g in range(0, len(rewards), n):
        grp = [float(r) for r in rewards[g:g + n]]
        m, sd = statistics.fmean(grp), statistics.stdev(grp)  # stdev: unbiased, like torch.std
        if sd >= threshold:
            shaped += [(r - m) / (sd + eps) for r in grp]
        else:
            shaped += [r - m for r in grp]
            fallback += 1
        equal += len(set(grp)) == 1
    groups = len(rewards) // n
    return shaped, fallback / groups, equal / groups


def check(orl, rewards, sizes, n, dtype=torch.float32, cls="NaiveExperienceMaker", **over):
    args = make_args(n, **over)
    exps = experiences(orl, rewards, sizes, dtype)
    exps_out, shaped = maker(orl, args, cls).process_experiences(exps)
    assert exps_out is exps
    assert [s.numel() for s in shaped] == sizes  # split by each experience's size
    assert all(s.device == e.info["reward"].device for s, e in zip(shaped, exps, strict=True))
    got = torch.cat(shaped)
    assert got.dtype == torch.float32  # fp32 statistics, also for bf16 rewards
    # the reference sees exactly the rewards the experiences hold (bf16-rounded where bf16)
    held = torch.cat([e.info["reward"] for e in exps]).float().tolist()
    want, fallback, equal = reference(held, n, args.group_norm_std_threshold, args.group_norm_eps)
    torch.testing.assert_close(got, torch.tensor(want), rtol=1e-5, atol=1e-6)
    for e, b in zip(exps, sizes, strict=True):
        for key, value in (("group_norm_fallback_frac", fallback), ("group_norm_all_equal_frac", equal)):
            assert e.info[key].shape == (b,)
            torch.testing.assert_close(e.info[key], torch.full((b,), value))
    return got, exps, args


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("cls", ["NaiveExperienceMaker", "RemoteExperienceMaker"])
def test_mixed_groups_across_unequal_experiences(orl, dtype, cls):
    groups = [[1.0, 1.0, 1.0, 1.0],      # all equal (passing): fallback, zero advantage
              [0.0, 0.0, 0.0, 0.0],      # all zero (failing): fallback, zero advantage
              [0.0, 1.0, 1.0, 0.0],      # mixed: normalised
              [0.5, 0.55, 0.5, 0.5],     # near-uniform (std 0.025 < 0.1): only centred, non-zero
              [0.25, 0.75, 1.0, 0.0]]    # partial credit: normalised
    rewards = [r for g in groups for r in g]
    got, exps, _ = check(orl, rewards, [3, 8, 2, 7], n=4, dtype=dtype, cls=cls)  # groups straddle experiences
    assert torch.equal(got[:8], torch.zeros(8))
    assert got[12:16].abs().max() < 0.1 and got[12:16].abs().max() > 0
    assert exps[0].info["group_norm_fallback_frac"][0].item() == pytest.approx(3 / 5)
    assert exps[0].info["group_norm_all_equal_frac"][0].item() == pytest.approx(2 / 5)


def test_group_exactly_at_threshold(orl):
    # n=5 with deviations (-k, -k, 0, k, k): unbiased std is exactly k, in fp32 too
    k = 0.5
    at = [0.0, 0.0, 0.5, 1.0, 1.0]
    below = [x * (1 - 2 ** -10) for x in at]
    above = [x * (1 + 2 ** -10) for x in at]
    assert torch.tensor(at).std().item() == k
    got, _, _ = check(orl, at + below + above, [5, 5, 5], n=5, group_norm_std_threshold=k)
    torch.testing.assert_close(got[:5], (torch.tensor(at) - 0.5) / (k + 1e-8))  # at: normalised
    torch.testing.assert_close(got[5:10], torch.tensor(below) - statistics.fmean(below))  # below: centred


def test_n2_and_chunk_trap(orl):
    rewards = [0.0, 1.0, 1.0, 1.0, 0.3, 0.35, -1.0, 2.0]
    # [2, 3, 3]: .chunk(3) would give [3, 3, 2] (RLOO's bug when the rollout is not a multiple of the
    # micro batch); the patch splits by each experience's size
    got, _, _ = check(orl, rewards, [2, 3, 3], n=2)
    assert got[0].item() == pytest.approx(-1 / math.sqrt(2), rel=1e-6)


def test_integer_rewards_and_bad_group_count(orl):
    # a reward server answering ints gives an int64 tensor; statistics are still fp32
    args = make_args(2)
    exps = experiences(orl, [0, 1, 1, 1], [4])
    exps[0].info["reward"] = exps[0].info["reward"].long()
    _, shaped = maker(orl, args).process_experiences(exps)
    torch.testing.assert_close(shaped[0], torch.tensor([-1 / math.sqrt(2), 1 / math.sqrt(2), 0.0, 0.0]))
    with pytest.raises(AssertionError, match="whole groups of n_samples_per_prompt=4"):
        maker(orl, make_args(4)).process_experiences(experiences(orl, [0.0] * 6, [3, 3]))


def test_other_estimators_unchanged(orl):
    rewards = [0.0, 1.0, 1.0, 1.0]
    for est in ("reinforce", "gae"):
        exps = experiences(orl, rewards, [2, 2])
        _, shaped = maker(orl, make_args(2, advantage_estimator=est)).process_experiences(exps)
        assert [s.tolist() for s in shaped] == [[0.0, 1.0], [1.0, 1.0]]
        assert "group_norm_fallback_frac" not in exps[0].info


def test_returns_path_with_kl(orl):
    """Shaped rewards -> compute_reward (KL, clip) -> get_cumulative_returns, as make_experience_list does
    for reinforce/rloo/group_norm (that loop itself moves tensors to "cuda", so it is replayed here)."""
    rewards = [0.0, 1.0, 1.0, 0.0, 3.0, 3.0, 3.0, 3.0]
    _, exps, args = check(orl, rewards, [3, 5], n=4)
    m = maker(orl, args)
    _, shaped = m.process_experiences(exps)
    gamma, kl_coef = 0.9, m.kl_ctl.value
    for e, r in zip(exps, shaped, strict=True):
        token_reward = orl.compute_reward(r, kl_coef, e.kl, action_mask=e.action_mask,
                                          num_actions=e.info["num_actions"], reward_clip_range=args.reward_clip_range)
        returns = m.get_cumulative_returns(token_reward, e.action_mask, gamma)
        for i in range(len(r)):
            mask = e.action_mask[i].tolist()
            last = max(t for t, on in enumerate(mask) if on)
            per_tok = [(-kl_coef * e.kl[i, t].item() + (r[i].item() if t == last else 0.0)) * on
                       for t, on in enumerate(mask)]
            want, acc = [0.0] * len(mask), 0.0
            for t in reversed(range(len(mask))):
                acc = per_tok[t] + gamma * acc
                want[t] = acc
            torch.testing.assert_close(returns[i], torch.tensor(want), rtol=1e-5, atol=1e-6)
    src = Path(orl.em.__file__).read_text()
    assert 'elif self.advantage_estimator in ["reinforce", "rloo", "group_norm"]:' in src


def test_fractions_survive_replay_buffer(orl):
    """The new info keys are per-sample, so the real replay-buffer split/merge carries them to the
    trainer, whose training_step_actor logs the mean of every info key (train/group_norm_*)."""
    groups = [[1.0, 1.0], [0.0, 1.0], [0.2, 0.25]]
    _, exps, _ = check(orl, [r for g in groups for r in g], [4, 2], n=2)
    for e in exps:
        del e.info["num_actions"]  # make_experience_list drops it before the buffer
    items = [item for e in exps for item in orl.rb.split_experience_batch(e)]
    batch = orl.rb.make_experience_batch(items)
    assert batch.info["group_norm_fallback_frac"].mean().item() == pytest.approx(2 / 3)
    assert batch.info["group_norm_all_equal_frac"].mean().item() == pytest.approx(1 / 3)

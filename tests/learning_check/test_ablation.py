"""scripts/advantage_ablation.sh on a copy of the TRL dry run (conftest.trl_dry_run), and its report,
learning_check/ablation.py, over run dirs shaped as the script leaves them."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from coderl.learning_check import ablation, report
from tests.learning_check.test_learning_check import _fake_run
from tests.learning_check.test_trl_grpo import _log_history
from tests.support import REPO_ROOT

SCRIPT = REPO_ROOT / "scripts" / "advantage_ablation.sh"


@pytest.mark.slow
@pytest.mark.timeout(400)
def test_variants_added_later_share_the_seeds_warm_start_and_redo_only_grpo(trl_dry_run, tmp_path):
    """The dry run (std advantage) stands for an earlier ablation run; the adaptive group norm at threshold 0.2
    and the mean-only advantage are added to its OUT: the first takes the seed's task, warm start and
    before-evaluation from std, the second from the first. Each reuses one generated batch for both steps (TRL's
    num_iterations) and rewards the test pass rate alone (GRPO_REWARD): only GRPO and the after-evaluation run."""
    out = tmp_path / "abl"
    shutil.copytree(trl_dry_run.out, out / "std")
    sft = out / "std" / "seed4" / "sft" / "model.safetensors"
    sft_mtime = sft.stat().st_mtime_ns
    env = {**trl_dry_run.env, "OUT": str(out), "SEEDS": "4", "VARIANTS": "group_norm@0.2 mean",
           "GRPO_ITERATIONS": "2", "GRPO_REWARD": "format_weight=0 syntax_weight=0 length_weight=0"}
    p = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, env=env, timeout=380, cwd=tmp_path)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    assert "seed 4: every variant done" in p.stdout
    for variant in ("group_norm@0.2", "mean"):
        log = (out / variant / "seed4.log").read_text()
        for what in ("task and data: cached", "warm start: cached", "held-out pass@k before GRPO: cached"):
            assert what in log, (variant, log[-2000:])
        assert (out / variant / "seed4/sft/model.safetensors").read_bytes() == sft.read_bytes()
        logs = _log_history(out / variant / "seed4")
        assert len([r for r in logs if "loss" in r]) == 2 and len([r for r in logs if "reward" in r]) == 1
        step = next(r for r in logs if "reward" in r)
        assert step["reward"] == pytest.approx(step["rewards/coderl/correctness/mean"], abs=1e-6)
        assert ("group_norm_fallback_frac" in step) == (variant != "mean")
    assert sft.stat().st_mtime_ns == sft_mtime
    assert "advantage group_norm (std threshold 0.2)" in (out / "group_norm@0.2/seed4/grpo.log").read_text()
    assert "advantage mean" in (out / "mean/seed4/grpo.log").read_text()
    res = json.loads((out / "ablation.json").read_text())["variants"]
    assert list(res) == ["std", "mean", "group_norm@0.2"] and all(v["seeds"] == ["seed4"] for v in res.values())
    assert res["mean"]["per_seed"]["seed4"]["group_std"]["groups"] == 2  # 2 prompts x 4 completions, 1 batch
    md = (out / "ablation.md").read_text()
    assert "| adaptive group norm, std threshold 0.2 | 1 |" in md
    assert "**not the steps of every run**" in md  # std's 2 generated batches against 1


def test_bad_knobs_fail_before_anything_runs(tmp_path):
    for env, named in (({"VARIANTS": "group_norm bogus"}, "VARIANTS: 'bogus'"),
                       ({"VARIANTS": "std@0.2"}, "VARIANTS: 'std@0.2'"),
                       ({"VARIANTS": "group_norm@x"}, "VARIANTS: 'group_norm@x'"),
                       ({"GRPO_ADVANTAGE": "std"}, "set VARIANTS instead"),
                       ({"GRPO_STD_THRESHOLD": "0.2"}, "set VARIANTS instead")):
        p = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, timeout=30, cwd=tmp_path,
                           env={"PATH": "/usr/bin:/bin", "OUT": str(tmp_path / "abl"), **env})
        assert p.returncode == 2 and named in p.stderr, p.stderr
    assert not (tmp_path / "abl").exists()


def _timings(run, grpo_s, cpu):
    (run / "timings.jsonl").write_text(json.dumps({"stage": "grpo", "seconds": grpo_s, "cpu_seconds": cpu,
                                                   "load1": 3.0}) + "\n")


def test_gains_mean_sd_fallback_and_files(tmp_path):
    for variant, seed, before, after in (("group_norm", 1, 0.10, 0.30), ("group_norm", 2, 0.20, 0.30),
                                         ("std", 1, 0.10, 0.20), ("mean", 1, 0.10, 0.10)):
        run = tmp_path / variant / f"seed{seed}"
        extra = ("train/group_norm_fallback_frac",) if variant == "group_norm" else ()
        _fake_run(run, before, after, [0.1, 0.2, 0.3, 0.4], extra=extra)
        _timings(run, 100 * seed, 150.0)
        (run / "grpo.log").write_text("TRL GRPO: 4 steps\n")
    (tmp_path / "std" / "seed2").mkdir()  # unfinished: no after-evaluation, not counted
    assert ablation.main(["--out", str(tmp_path)]) == 0
    res = json.loads((tmp_path / "ablation.json").read_text())["variants"]
    assert res["group_norm"]["seeds"] == ["seed1", "seed2"] and res["std"]["seeds"] == ["seed1"]
    gn = res["group_norm"]["per_seed"]
    assert gn["seed1"]["gain_points"] == {"pass@1": 20.0, "pass@8": 40.0}
    assert gn["seed1"]["fallback_mean"] == 0.5 and res["std"]["per_seed"]["seed1"]["fallback_mean"] is None
    md = (tmp_path / "ablation.md").read_text()
    assert "| adaptive group norm | 2 | +15.0 ± 7.1 | +30.0 ± 14.1 |" in md  # mean ± sd over the two seeds
    assert "| mean only (Dr. GRPO) | 1 | +0.0 | +0.0 |" in md and "n/a (no fallback)" in md
    assert "100 / 150.0; 200 / 150.0" in md and "No run was re-planned or cut" in md
    assert report.machine_line(report.machine()) in md  # the host, SIMD level included: figures depend on it
    # against std on the seeds both ran (seed 1 only): 20 - 10 and 0 - 10 pass@1 points
    assert "| adaptive group norm | 1 | +10.0 |" in md and "| mean only (Dr. GRPO) | 1 | -10.0 |" in md
    assert (tmp_path / "ablation.png").stat().st_size > 0


def test_a_replanned_run_is_flagged_and_no_run_is_an_error(tmp_path, capsys):
    assert ablation.main(["--out", str(tmp_path)]) == 2
    assert "no finished run" in capsys.readouterr().err
    run = tmp_path / "std" / "seed1"
    _fake_run(run, 0.1, 0.2, [0.1, 0.2, 0.3])
    (run / "grpo.log").write_text("time limit: 900 s fits 80 of 130 steps at 11.0 s/step; the lr schedule now ends "
                                  "there\n")
    assert ablation.main(["--out", str(tmp_path)]) == 0
    md = (tmp_path / "ablation.md").read_text()
    assert "**load-dependent: time limit: 900 s fits 80 of 130" in md and "Some runs were re-planned" in md


def test_threshold_variants_are_labelled_and_follow_the_three(tmp_path):
    for variant in ("group_norm@0.2", "std", "group_norm@.05", "group_norm"):
        _fake_run(tmp_path / variant / "seed1", 0.1, 0.2, [0.1, 0.2])
    (tmp_path / "group_norm@bogus" / "seed1").mkdir(parents=True)  # not a variant: not read
    assert ablation.variants_in(tmp_path) == ["group_norm", "std", "group_norm@.05", "group_norm@0.2"]
    assert ablation.main(["--out", str(tmp_path)]) == 0
    md = (tmp_path / "ablation.md").read_text()
    assert "| adaptive group norm, std threshold 0.05 | 1 |" in md and "| adaptive group norm | 1 |" in md


@pytest.mark.parametrize("values,want", [([1.0], "+100.0"), ([0.1, 0.3], "+20.0 ± 14.1")])
def test_fmt(values, want):
    assert ablation.fmt(values) == want


def test_groups_by_reward_std_read_as_the_trainer_grouped_them(tmp_path):
    run = tmp_path / "std" / "seed1"
    _fake_run(run, 0.1, 0.2, [0.1, 0.2])
    (run / "grpo.log").write_text("TRL GRPO: 2 steps, 2 prompts x 4 completions per generation, num_iterations 1\n")
    # groups of 4 (stdev): all equal 0; 0.04 and 0.083, below 0.1, of which the first only in other components
    # than the tests' pass rate; 0.58
    batches = [{"rewards": [0.5, 0.5, 0.5, 0.5, 0.0, 0.0, 0.0, 0.08], "correctness": [1, 1, 1, 1, 0, 0, 0, 0]},
               {"rewards": [0.0, 0.0, 0.0, 1 / 6, 0.0, 0.0, 1.0, 1.0], "correctness": [0, 0, 0, 0.25, 0, 0, 1, 1]}]
    (run / "grpo" / "rewards.jsonl").write_text("".join(json.dumps(b) + "\n" for b in batches))
    assert ablation.main(["--out", str(tmp_path)]) == 0
    prof = json.loads((tmp_path / "ablation.json").read_text())["variants"]["std"]["per_seed"]["seed1"]["group_std"]
    assert prof == {"groups": 4, "all_equal": 0.25, "below": {"0.05": 0.5, "0.1": 0.75, "0.2": 0.75},
                    "low_tests_differ": 0.5}
    assert "| std (TRL default, GRPO) | 4 | 25.0 | 50.0 | 75.0 | 75.0 | 50 |" in (tmp_path / "ablation.md").read_text()
    # a run whose log does not name the group size (or that recorded no rewards) has no such row
    (run / "grpo.log").write_text("")
    assert ablation.main(["--out", str(tmp_path)]) == 0
    assert "Groups by reward std" not in (tmp_path / "ablation.md").read_text()

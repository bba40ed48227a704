"""The CPU learning check's loop in CI: scripts/learning_check.sh TRAINER=trl DRY_RUN=1 end to end (real task,
preprocess --verify in both layouts, a nano warm start on the 4 problems GRPO draws from, held-out evaluation in
the sandbox, a few GRPO steps of TRL's GRPOTrainer scored by coderl's in-process pool through
learning_check/trl_grpo.py, report), run once (conftest.trl_dry_run); then, on a copy, a rerun whose rewards are all 0, which fails (a rerun
that reuses the cache: test_ablation.py, through scripts/advantage_ablation.sh). It checks that the
loop runs, logs coderl's components per step and that non-zero rewards graded in the sandbox reach the trainer,
not that it learns (that is scripts/learning_check.sh's full run, docs/learning_check.md)."""

from __future__ import annotations

import itertools
import json
import shutil
import subprocess

import pytest

from coderl.learning_check.report import read_scalars
from coderl.learning_check.trl_grpo import main, reward_yaml, time_limit
from tests.support import REPO_ROOT

SCRIPT = REPO_ROOT / "scripts" / "learning_check.sh"
pytestmark = pytest.mark.timeout(400)


@pytest.mark.slow
def test_trl_grpo_loop_runs_and_logs_coderl_components(trl_dry_run):
    lc = trl_dry_run.out
    run = lc / "seed4"
    # TRL ran 2 optimizer steps, each on a batch it generated, and logged coderl's components beside its metrics
    steps = [r for r in _log_history(run) if "reward" in r]
    assert len(steps) == 2
    for r in steps:
        assert r["rewards/code_reward/mean"] == pytest.approx(r["reward"], abs=1e-6)
        for comp in ("correctness", "format", "all_passed", "no_code", "timeout"):
            assert 0.0 <= r[f"rewards/coderl/{comp}/mean"] <= 1.0
        assert "kl" in r and "completions/mean_length" in r
    tb = read_scalars(run / "grpo" / "tensorboard")
    assert {"train/reward", "train/kl", "train/rewards/coderl/all_passed/mean"} <= set(tb)
    # each distinct prompt ran once in generation and the log-prob forwards (learning_check/prefix.py, the default)
    assert ", SharedPromptGRPOTrainer\n" in (run / "grpo.log").read_text()
    assert (run / "grpo" / "model" / "config.json").is_file() and (run / "grpo" / "model" / "tokenizer.json").is_file()
    j = json.loads((lc / "report" / "report.json").read_text())
    assert j["trainer"] == "trl" and j["pass"] is None and j["runs"]["seed4"]["steps"] == 2
    assert j["runs"]["seed4"]["missing_metrics"] == []
    assert [t["stage"] for t in j["runs"]["seed4"]["timings"]] == ["warm_start", "eval_before", "grpo", "eval_after"]
    assert all(t["cpu_seconds"] > 0 for t in j["runs"]["seed4"]["timings"])  # the stage's own processes' CPU
    # the warm start imitated an imperfect demonstrator on the 4 problems GRPO draws from, and the report says so
    ws = j["runs"]["seed4"]["warm_start"]
    assert ws["noise"] == 0.5 and ws["rows"] == 4 and j["runs"]["seed4"]["statuses"]["before"]
    assert "50 % of the drawn targets a near miss" in (lc / "report" / "report.md").read_text()
    assert len((lc / "data" / "train_trl_first4" / "train.jsonl").read_text().splitlines()) == 4
    assert "NO VERDICT: DRY_RUN=1" in trl_dry_run.stdout and "FAIL" not in trl_dry_run.stdout
    assert json.loads((run / "eval_after" / "summary.json").read_text())["samples_scored"] == 12


@pytest.mark.slow
def test_a_non_zero_reward_graded_in_the_sandbox_reaches_the_trainer(trl_dry_run):
    """The dry run's point: the rewards TRL got, sample by sample, are not all 0, and some came from tests run."""
    grpo = trl_dry_run.out / "seed4" / "grpo"
    batches = [json.loads(line) for line in (grpo / "rewards.jsonl").read_text().splitlines()]
    assert [len(b["rewards"]) for b in batches] == [8, 8]  # 2 generated batches of 2 prompts x 4 samples
    # what was recorded is what TRL logged as each step's mean reward
    steps = [r for r in _log_history(grpo.parent) if "reward" in r]
    assert [sum(b["rewards"]) / 8 for b in batches] == pytest.approx([r["reward"] for r in steps], abs=1e-6)
    s = json.loads((grpo / "reward_summary.json").read_text())
    assert s["nonzero"] > 0 and s["max"] > 0 and s["samples"] == 16
    assert s["correctness_max"] > 0  # a test passed: the sandbox ran the model's own code
    line = next(ln for ln in trl_dry_run.stdout.splitlines() if ln.startswith("GRPO reward reaching the trainer:"))
    assert line.endswith("non-zero: yes") and f"over 16 samples of 2 batches ({s['nonzero']} non-zero" in line
    assert line in (trl_dry_run.out / "report" / "report.md").read_text()


@pytest.mark.slow
def test_the_dry_run_fails_when_every_reward_reaching_the_trainer_is_0(trl_dry_run, tmp_path):
    """A reward whose every weight is 0 gives each sample 0: the dry run then fails, saying so. (The same rerun
    has a SEED_SECONDS: GRPO gets what the cached stages' recorded times leave of it.)"""
    lc = tmp_path / "lc"
    shutil.copytree(trl_dry_run.out, lc)
    zero = "correctness_weight=0 format_weight=0 syntax_weight=0 length_weight=0"
    p = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, timeout=300, cwd=tmp_path,
                       env={**trl_dry_run.env, "OUT": str(lc), "GRPO_REWARD": zero, "SEED_SECONDS": "290"})
    shared, seed = ([json.loads(ln) for ln in (f / "timings.jsonl").read_text().splitlines()] for f in (lc, lc / "seed4"))
    before = [r["seconds"] for r in seed if r["stage"] == "eval_before"]
    spent = round(sum(r["seconds"] for r in shared + seed if r["stage"] not in {"grpo", "eval_after"}) + before[0])
    assert {r["stage"] for r in shared} == {"task", "preprocess", "preprocess_trl", "preprocess_heldout"}
    assert len(before) == 1 and {r["stage"] for r in seed} >= {"warm_start", "eval_before"}
    assert f"seed 4: GRPO gets {290 - spent - 60} s: SEED_SECONDS=290 less {spent} s for the other stages and 60 s" \
        in p.stdout
    assert p.returncode == 1, p.stdout[-3000:] + p.stderr[-3000:]
    assert "non-zero: NO" in p.stdout and "over 16 samples" in p.stdout
    assert "DRY_RUN=1: every reward reaching the trainer for seed 4 was 0" in p.stderr
    assert json.loads((lc / "seed4" / "grpo" / "reward_summary.json").read_text())["nonzero"] == 0
    assert "held-out pass@k after GRPO" not in p.stdout  # it stopped there: no after-evaluation, no report


def _log_history(run) -> list[dict]:
    return [json.loads(line) for line in (run / "grpo" / "log_history.jsonl").read_text().splitlines()]


def test_reward_overrides_become_the_pools_reward_section():
    assert reward_yaml(3, ["format_weight=0", " all_pass_bonus = 0.5 "]) == (
        "sandbox:\n  workers: 3\nreward:\n  format_weight: 0\n  all_pass_bonus: 0.5\n")
    assert reward_yaml(2, []) == "sandbox:\n  workers: 2\n"


@pytest.mark.parametrize("bad, named", [("format_weight", "expected FIELD=VALUE"), ("x y=1", "expected FIELD=VALUE"),
                                        ("no_such_field=1", "reward.no_such_field"),
                                        ("format_weight=-1", "reward.format_weight")])
def test_a_bad_reward_override_fails_before_the_model_loads(tmp_path, capsys, bad, named):
    rc = main(["--model", str(tmp_path / "absent"), "--train", str(tmp_path / "absent.jsonl"),
               "--out_dir", str(tmp_path / "grpo"), "--reward", bad])
    assert rc == 2 and named in capsys.readouterr().err


def test_time_limit_stops_after_the_step_that_passes_it():
    from transformers import TrainerControl, TrainerState

    state, control = TrainerState(global_step=3, max_steps=10), TrainerControl()
    cb = time_limit(3600)
    cb.on_train_begin(None, state, control)
    assert not cb.on_step_end(None, state, control).should_training_stop
    cb = time_limit(1e-9)
    cb.on_train_begin(None, state, control)
    assert cb.on_step_end(None, state, control).should_training_stop
    last = TrainerState(global_step=10, max_steps=10)  # the last step ends training anyway: no message, no flag
    assert not cb.on_step_end(None, last, TrainerControl()).should_training_stop


def _train(tmp_path, step_seconds, max_seconds: float, steps: int = 40) -> list[float]:
    """The lr of each step of a real cosine schedule (5 % warmup) under time_limit, steps timed by a fake clock
    (step_seconds: seconds per step, or a function of the step's index)."""
    import torch
    from transformers import TrainerControl, TrainerState, get_scheduler
    from trl import GRPOConfig

    # the config trl_grpo.py gives the callback (importing TRL 0.17's adds a field plain TrainingArguments lack)
    args = GRPOConfig(output_dir=str(tmp_path), lr_scheduler_type="cosine", warmup_ratio=0.05,
                      learning_rate=1e-3, max_steps=steps, report_to=[], use_cpu=True)
    opt = torch.optim.AdamW([torch.zeros(2, requires_grad=True)], lr=1e-3)
    sched = get_scheduler("cosine", opt, num_warmup_steps=args.get_warmup_steps(steps), num_training_steps=steps)
    now = [0.0]
    cb = time_limit(max_seconds, clock=lambda: now[0])
    state, control = TrainerState(max_steps=steps), TrainerControl()
    cb.on_train_begin(args, state, control)
    lrs = []
    while state.global_step < steps and not control.should_training_stop:
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
        now[0] += step_seconds(state.global_step) if callable(step_seconds) else step_seconds
        state.global_step += 1
        cb.on_step_end(args, state, control, lr_scheduler=sched)
    return lrs


def test_time_limit_ends_the_lr_schedule_at_the_last_step_that_fits(tmp_path):
    fits = _train(tmp_path, step_seconds=1.0, max_seconds=100)
    assert len(fits) == 40  # every step fits: the schedule is the planned one
    slow = _train(tmp_path, step_seconds=5.0, max_seconds=100)
    assert len(slow) == 20  # 100 s fit 20 steps of 5 s
    assert slow[:5] == fits[:5]  # re-planned only after the steps timed
    assert slow[-1] < 0.01 * max(slow) < fits[19]  # the cosine annealed by the 20th step instead of being cut mid-way
    assert all(a >= b for a, b in itertools.pairwise(slow[5:]))  # and the lr never rose again


def test_time_limit_gives_back_steps_when_the_pace_picks_up(tmp_path):
    """10 slow steps (5 s) re-plan the schedule to 20 steps; at 1 s a step after them, all 40 fit in 100 s."""
    lrs = _train(tmp_path, step_seconds=lambda i: 5.0 if i < 10 else 1.0, max_seconds=100)
    assert len(lrs) == 40 and 10 * 5.0 + 30 * 1.0 <= 100
    assert lrs[-1] < 0.1 * max(lrs)  # and the schedule annealed by its end

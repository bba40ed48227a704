"""CLI: the learning check's GRPO stage on CPU, run by TRL's GRPOTrainer with coderl's reward in-process.

    python -m coderl.learning_check.trl_grpo --model OUT/seed1/sft --train OUT/data/train_trl/train.jsonl \\
        --out_dir OUT/seed1/grpo --steps 40 --prompts 8 --generations 8

The loop is TRL's: sample reuse (--num_iterations: each generated
batch gives that many optimizer steps), the clipped surrogate, the KL penalty (--beta) and its logging
(report_to tensorboard under OUT_DIR/tensorboard, train/<metric> per step, read by learning_check/report.py).
The reward is rewards/integrations/trl.py's CodeReward over an in-process sandbox pool; its components
(correctness, format, all_passed, ...) are logged through TRL's own per-reward-function logging
(integrations.trl.with_component_logs). --advantage picks the group normalisation: group_norm, the project's
adaptive group norm (integrations.trl.GroupNormGRPOTrainer: a group with std < --group_norm_std_threshold is only
centred; logs train/group_norm_fallback_frac), std (TRL's default: every group divided by std + 1e-4) or mean
(TRL's scale_rewards=False, Dr. GRPO).

Writes OUT_DIR/model (HF dir: weights, tokenizer, generation config), OUT_DIR/log_history.jsonl,
OUT_DIR/tensorboard/, OUT_DIR/rewards.jsonl (every sample's reward as the trainer got it, one line per generated
batch) and OUT_DIR/reward_summary.json (their mean, max and non-zero count, also printed), the model into a temp
dir renamed into place at the end. --require_reward exits 3 when no sample's reward was non-zero.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

from coderl.rewards.config import ConfigError, load_config
from coderl.rewards.integrations.group_norm import DEFAULT_STD_THRESHOLD
from coderl.rewards.integrations.trl import make_code_reward, with_component_logs

from .model import save_model
from .prefix import SharedPrompt
from .report import REWARD_SUMMARY_FILE, TIME_LIMIT_PREFIX, reward_line, reward_summary

ADVANTAGES = ("group_norm", "std", "mean")
REWARDS_FILE = "rewards.jsonl"
# the log's first line names the group size, which rewards.jsonl's flat batches need to be read as groups
SHAPE_RE = re.compile(r"TRL GRPO: \d+ steps, (?P<prompts>\d+) prompts x (?P<generations>\d+) completions per "
                      r"generation")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", required=True, help="The warm start (HF dir from learning_check/warm_start.py).")
    p.add_argument("--train", required=True, help="JSONL from data/preprocess.py --output_format trl.")
    p.add_argument("--out_dir", required=True, help="Gets model/, tensorboard/, log_history.jsonl.")
    p.add_argument("--steps", type=int, default=40, help="Optimizer steps (generations = steps / num_iterations).")
    p.add_argument("--prompts", type=int, default=8, help="Prompts per generated batch.")
    p.add_argument("--generations", type=int, default=8, help="Completions per prompt (the GRPO group).")
    p.add_argument("--num_iterations", type=int, default=1, help="Optimizer steps per generated batch (TRL's mu).")
    p.add_argument("--max_new_tokens", type=int, default=96, help="Longest completion.")
    p.add_argument("--max_prompt_len", type=int, default=320, help="Longest prompt in tokens (TRL keeps the tail).")
    p.add_argument("--lr", type=float, default=5e-5, help="Peak learning rate.")
    p.add_argument("--lr_scheduler", default="constant", help="transformers scheduler name (constant, cosine, ...).")
    p.add_argument("--warmup_ratio", type=float, default=0.0, help="Share of steps warming the lr up.")
    p.add_argument("--beta", type=float, default=0.001, help="KL coefficient (0: no reference model).")
    p.add_argument("--epsilon", type=float, default=0.2, help="PPO clip range.")
    p.add_argument("--loss_type", default="bnpo", choices=["grpo", "bnpo", "dr_grpo"], help="TRL's loss type.")
    p.add_argument("--advantage", default="std", choices=ADVANTAGES,
                   help="group_norm: (r - group mean) / group std, only r - group mean where the std < "
                   "--group_norm_std_threshold; std: (r - group mean) / (group std + 1e-4) (TRL's default); "
                   "mean: r - group mean (Dr. GRPO).")
    p.add_argument("--group_norm_std_threshold", type=float, default=DEFAULT_STD_THRESHOLD,
                   help="--advantage group_norm: groups whose reward std is below this are only centred.")
    p.add_argument("--temperature", type=float, default=1.0, help="Sampling temperature (no top-k, as evaluation).")
    p.add_argument("--shared_prompt", type=int, default=1, choices=[0, 1],
                   help="1: generation and the log-prob forwards run each distinct prompt once for its group "
                        "(prefix.py; the same samples, log-probs and gradients); 0: TRL's own, every row in full.")
    p.add_argument("--max_grad_norm", type=float, default=1.0, help="Gradient clipping.")
    p.add_argument("--seed", type=int, default=0, help="Prompt order, sampling.")
    p.add_argument("--threads", type=int, default=2, help="torch threads (fixed, for reproducible numbers).")
    p.add_argument("--reward_workers", type=int, default=2, help="Sandbox workers of the in-process pool.")
    p.add_argument("--max_seconds", type=float, default=0.0,
                   help="Fit training into this many seconds: once the steps timed show fewer steps fit than "
                   "planned, the lr schedule ends at the last that fits and training stops there (or after the "
                   "step that passes the limit); the model is saved (0: run every step). The steps done are in "
                   "log_history.jsonl.")
    p.add_argument("--reward", action="append", default=[], metavar="FIELD=VALUE",
                   help="A reward: field of the reward config (configs/reward.yaml), e.g. format_weight=0; repeatable.")
    p.add_argument("--require_reward", action="store_true",
                   help="Exit 3 (after saving) when every sample's reward reaching the trainer was 0.")
    return p


class RecordedReward:
    """A TRL reward function that returns the CodeReward's rewards and appends them, sample by sample, with the
    test pass rates behind them, to a JSONL: TRL itself logs only each batch's mean."""

    def __init__(self, reward, path: Path) -> None:
        self.reward, self.path = reward, path
        self.__name__ = reward.__name__  # TRL logs rewards/<__name__>/mean

    def __call__(self, *args, **kwargs) -> list[float]:
        rewards = self.reward(*args, **kwargs)
        logs = self.reward.last[2].extra_logs
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"rewards": rewards, "correctness": logs["reward/correctness"],
                                 "all_passed": logs["reward/all_passed"]}) + "\n")
        return rewards


def reward_yaml(workers: int, overrides: list[str]) -> str:
    """The in-process pool's config: its workers and the reward fields FIELD=VALUE (validated when loaded)."""
    lines = [f"sandbox:\n  workers: {workers}\n"]
    if overrides:
        lines.append("reward:\n")
    for item in overrides:
        field, sep, value = item.partition("=")
        if not sep or not field.strip().isidentifier() or not value.strip():
            raise ValueError(f"--reward {item!r}: expected FIELD=VALUE, e.g. format_weight=0")
        lines.append(f"  {field.strip()}: {value.strip()}\n")
    return "".join(lines)


MIN_STEPS_TIMED = 5  # steps timed before the mean step time re-plans the schedule
GROW_STEPS = 3  # the least a re-plan moves the schedule's end later by


def time_limit(max_seconds: float, clock=time.monotonic):
    """A TrainerCallback fitting training into max_seconds: the lr schedule ends at the last step that fits.

    Once the mean step time shows that fewer steps than planned fit, the schedule's horizon shrinks to the
    steps that do (a cosine still anneals to 0 instead of being cut near its peak), training stops there, and
    in any case after the first step that ends past max_seconds; where the pace picks up later, the horizon
    moves back out (never past the planned steps). A run whose steps all fit is untouched, so its numbers do
    not depend on the load.
    """
    from transformers import TrainerCallback, get_scheduler

    class TimeLimit(TrainerCallback):
        def on_train_begin(self, args, state, control, **kwargs):
            self.t0 = clock()
            self.horizon = state.max_steps

        def on_step_end(self, args, state, control, lr_scheduler=None, **kwargs):
            elapsed, step = clock() - self.t0, state.global_step
            fit = min(step + int((max_seconds - elapsed) / (elapsed / step)), state.max_steps) if step else self.horizon
            # a pace that picked up gives back steps given up before (by GROW_STEPS at least, so as not to dither)
            moved = fit < self.horizon or fit >= self.horizon + GROW_STEPS
            if lr_scheduler is not None and step >= max(MIN_STEPS_TIMED, args.get_warmup_steps(state.max_steps)) \
                    and step < fit and moved:
                self.horizon = fit
                replan(lr_scheduler, args, state.max_steps, fit)
                print(f"{TIME_LIMIT_PREFIX} {max_seconds:g} s fits {fit} of {state.max_steps} steps at "
                      f"{elapsed / step:.1f} s/step; the lr schedule now ends there", flush=True)
            if step >= self.horizon and step < state.max_steps:
                print(f"{TIME_LIMIT_PREFIX} stopping after step {step} of {state.max_steps}, where the schedule ended",
                      flush=True)
                control.should_training_stop = True
            elif elapsed > max_seconds and step < state.max_steps:
                print(f"{TIME_LIMIT_PREFIX} {max_seconds:g} s passed after step {step} of {state.max_steps}; "
                      "stopping there", flush=True)
                control.should_training_stop = True
            return control

    def replan(scheduler, args, max_steps: int, horizon: int) -> None:
        """The scheduler's lr factors as transformers builds them for a run of horizon steps; the next step's lr."""
        import torch

        dummy = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
        planned = get_scheduler(args.lr_scheduler_type, dummy, num_warmup_steps=args.get_warmup_steps(max_steps),
                                num_training_steps=horizon, scheduler_specific_kwargs=args.lr_scheduler_kwargs)
        scheduler.lr_lambdas = planned.lr_lambdas * (len(scheduler.base_lrs) // len(planned.lr_lambdas))
        groups = scheduler.optimizer.param_groups
        for group, base, fn in zip(groups, scheduler.base_lrs, scheduler.lr_lambdas, strict=True):
            group["lr"] = base * fn(scheduler.last_epoch)

    return TimeLimit()


def trainer_for(a: argparse.Namespace, out: Path):
    """The GRPOTrainer of these arguments: model, tokenizer, data, coderl reward and its component logs."""
    from datasets import load_dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    from coderl.rewards.integrations.trl import GroupNormGRPOTrainer

    tokenizer = AutoTokenizer.from_pretrained(a.model, padding_side="left")
    model = AutoModelForCausalLM.from_pretrained(a.model, torch_dtype="float32")
    funcs, weights = with_component_logs(make_code_reward(config=str(out / "reward.yaml")))
    funcs[0] = RecordedReward(funcs[0], out / REWARDS_FILE)
    ds = load_dataset("json", data_files=str(a.train), split="train")
    batch = a.prompts * a.generations
    args = GRPOConfig(
        output_dir=str(out / "trainer"), logging_dir=str(out / "tensorboard"), report_to=["tensorboard"],
        per_device_train_batch_size=batch, gradient_accumulation_steps=1, num_generations=a.generations,
        num_iterations=a.num_iterations, max_steps=a.steps, max_completion_length=a.max_new_tokens,
        max_prompt_length=a.max_prompt_len, learning_rate=a.lr, lr_scheduler_type=a.lr_scheduler,
        warmup_ratio=a.warmup_ratio, beta=a.beta, epsilon=a.epsilon, loss_type=a.loss_type,
        scale_rewards=a.advantage == "std", temperature=a.temperature, top_k=None, top_p=1.0,
        max_grad_norm=a.max_grad_norm, reward_weights=weights, logging_steps=1, save_strategy="no",
        use_cpu=True, bf16=False, seed=a.seed, data_seed=a.seed, dataloader_num_workers=0,
        disable_tqdm=True)
    callbacks = [time_limit(a.max_seconds)] if a.max_seconds > 0 else None
    kw = dict(model=model, reward_funcs=funcs, args=args, train_dataset=ds, processing_class=tokenizer,
              callbacks=callbacks)
    base = GRPOTrainer
    if a.advantage == "group_norm":
        base, kw["group_norm_std_threshold"] = GroupNormGRPOTrainer, a.group_norm_std_threshold
    if a.shared_prompt:
        base = type(f"SharedPrompt{base.__name__}", (SharedPrompt, base), {})
    return base(**kw)


def main(argv: list[str] | None = None) -> int:
    a = build_parser().parse_args(argv)
    if a.steps % a.num_iterations:
        print(f"error: --steps {a.steps} is not a multiple of --num_iterations {a.num_iterations}", file=sys.stderr)
        return 2
    out = Path(a.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    try:  # a bad --reward fails here, before the model loads
        (out / "reward.yaml").write_text(reward_yaml(a.reward_workers, a.reward))
        load_config(out / "reward.yaml")
    except (ValueError, ConfigError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    import torch

    torch.set_num_threads(a.threads)
    t0 = time.monotonic()
    (out / REWARDS_FILE).unlink(missing_ok=True)
    trainer = trainer_for(a, out)
    print(f"TRL GRPO: {a.steps} steps, {a.prompts} prompts x {a.generations} completions per generation, "
          f"num_iterations {a.num_iterations}, lr {a.lr} ({a.lr_scheduler}), beta {a.beta}, advantage {a.advantage}"
          f"{f' (std threshold {a.group_norm_std_threshold:g})' if a.advantage == 'group_norm' else ''}, "
          f"{a.threads} threads, {type(trainer).__name__}",
          flush=True)
    trainer.train()
    with open(out / "log_history.jsonl", "w") as fh:
        for rec in trainer.state.log_history:
            fh.write(json.dumps(rec) + "\n")
    tmp = Path(tempfile.mkdtemp(prefix=".model.", dir=out))
    try:
        save_model(trainer.model, trainer.processing_class, tmp)
        if (out / "model").exists():
            shutil.rmtree(out / "model")
        os.replace(tmp, out / "model")
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    shutil.rmtree(out / "trainer", ignore_errors=True)
    print(f"saved {out / 'model'} after {time.monotonic() - t0:.1f} s")
    summary = reward_summary(out / REWARDS_FILE)
    (out / REWARD_SUMMARY_FILE).write_text(json.dumps(summary, indent=1) + "\n")
    print(reward_line(summary), flush=True)
    if a.require_reward and not summary["nonzero"]:
        print(f"error: all {summary['samples']} rewards reaching the trainer were 0 (--require_reward): no sample "
              f"held code the reward could credit; per sample: {out / REWARDS_FILE}", file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The advantage ablation's report (scripts/advantage_ablation.sh): per variant, held-out pass@k gains (mean ± sd
over seeds, and minus std's on the same seeds), training reward / KL / fallback-share curves, GRPO wall and CPU
time; one figure.

    python -m coderl.learning_check.ablation --out runs/ablation   # reads OUT/<variant>/seed<S>/, writes OUT/ablation.*

A seed counts for a variant once its after-evaluation exists; group_norm@T is the adaptive group norm at std
threshold T. A run whose GRPO log says the time limit re-planned or cut it (learning_check/trl_grpo.py's "time
limit:" lines) or that ran other steps than another is flagged: it is not compared like for like. Which groups a
std threshold would only centre is read from each run's rewards as its trainer got them (grpo/rewards.jsonl) for
THRESHOLDS side by side: the share between two thresholds is what choosing one over the other changes on them.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from pathlib import Path
from typing import NamedTuple

from coderl.rewards.integrations.group_norm import DEFAULT_STD_THRESHOLD

from .report import SUMMARY_FILE, _write_atomic, machine, machine_line, read_grpo_log, summarize_run
from .trl_grpo import REWARDS_FILE, SHAPE_RE

VARIANTS = {"group_norm": "adaptive group norm", "std": "std (TRL default, GRPO)", "mean": "mean only (Dr. GRPO)"}
# group_norm@0.2: the adaptive group norm with another std threshold (scripts/advantage_ablation.sh's VARIANTS)
THRESHOLD_VARIANT = re.compile(r"group_norm@(?P<threshold>\d+(\.\d+)?|\.\d+)")
CURVES = {"train/reward": "training reward", "train/kl": "KL to the reference",
          "train/all_passed": "samples passing every test (share)",
          "train/group_norm_fallback_frac": "groups falling back (std < threshold)"}
THRESHOLDS = (0.05, 0.1, 0.2)


def mean_sd(values: list[float]) -> tuple[float, float | None]:
    return statistics.fmean(values), (statistics.stdev(values) if len(values) > 1 else None)


def fmt(values: list[float], scale: float = 100.0, digits: int = 1) -> str:
    m, sd = mean_sd([scale * v for v in values])
    return f"{m:+.{digits}f}" + (f" ± {sd:.{digits}f}" if sd is not None else "")


def stage(run: dict, name: str) -> dict | None:
    return next((t for t in run["timings"] if t["stage"] == name), None)


def label(variant: str) -> str:
    m = THRESHOLD_VARIANT.fullmatch(variant)
    return f"adaptive group norm, std threshold {float(m['threshold']):g}" if m else VARIANTS[variant]


def variants_in(out: Path) -> list[str]:
    """The variant dirs under out: the three advantages in their order, then thresholds ascending."""
    if not out.is_dir():
        return []
    swept = [d.name for d in out.iterdir() if d.is_dir() and THRESHOLD_VARIANT.fullmatch(d.name)]
    return [v for v in VARIANTS if (out / v).is_dir()] + sorted(
        swept, key=lambda v: float(THRESHOLD_VARIANT.fullmatch(v)["threshold"]))


def collect(out: Path) -> dict[str, dict[str, dict]]:
    """{variant: {seed: run summary + the std profile of its groups}} of every finished run under out."""
    found: dict[str, dict[str, dict]] = {}
    for variant in variants_in(out):
        for seed_dir in sorted((out / variant).glob("seed*")):
            if not seed_dir.is_dir() or not (seed_dir / "eval_after" / SUMMARY_FILE).is_file():
                continue
            log_text = read_grpo_log(seed_dir)
            run = summarize_run(seed_dir, "trl", log_text)
            run["group_std"] = std_profile(groups_of(log_text, seed_dir / "grpo" / REWARDS_FILE))
            found.setdefault(variant, {})[seed_dir.name] = run
    return found


class Group(NamedTuple):
    std: float  # of its rewards (unbiased, as group_norm's)
    tests_differ: bool  # its completions' test pass rates are not all equal


def groups_of(grpo_log: str, path: Path) -> list[Group]:
    """Each GRPO group as the trainer got its rewards (path: grpo/rewards.jsonl), grouped as TRL grouped them (the
    group size from the GRPO log's first line); [] if unrecorded."""
    shape = SHAPE_RE.search(grpo_log)
    if shape is None or not path.is_file():
        return []
    size = int(shape["generations"])
    groups = []
    for line in path.read_text().splitlines():
        batch = json.loads(line)
        rewards, rates = batch["rewards"], batch["correctness"]
        groups += [Group(statistics.stdev(rewards[i:i + size]), len(set(rates[i:i + size])) > 1)
                   for i in range(0, len(rewards), size)]
    return groups


def std_profile(groups: list[Group]) -> dict | None:
    """Shares of groups whose rewards are all equal and below each of THRESHOLDS (centred only there), and of
    those with unequal rewards below the default threshold, the share whose test pass rates differ."""
    if not groups:
        return None
    low = [g for g in groups if 0 < g.std < DEFAULT_STD_THRESHOLD]
    return {"groups": len(groups), "all_equal": sum(g.std == 0 for g in groups) / len(groups),
            "below": {str(t): sum(g.std < t for g in groups) / len(groups) for t in THRESHOLDS},
            "low_tests_differ": sum(g.tests_differ for g in low) / len(low) if low else None}


def binned(points: list[tuple[int, float]], width: int) -> list[tuple[float, float]]:
    """(mean step, mean value) of consecutive windows of `width` steps."""
    out = []
    for i in range(0, len(points), width):
        chunk = points[i:i + width]
        out.append((statistics.fmean(s for s, _ in chunk), statistics.fmean(v for _, v in chunk)))
    return out


def summary(found: dict[str, dict[str, dict]]) -> dict:
    """Per variant: seeds, gains (points) per seed and mean ± sd, curve means, times, flags."""
    res = {}
    steps_seen = {r["steps"] for runs in found.values() for r in runs.values()}
    for variant, runs in found.items():
        per_seed = {}
        for seed, r in runs.items():
            ks = [k for k in r["before"] if k.startswith("pass@")]
            curve = {t: [v for _, v in r["curves"].get(t, [])] for t in CURVES}
            grpo, after = stage(r, "grpo"), stage(r, "eval_after")
            per_seed[seed] = {
                "before": r["before"], "after": r["after"],
                "gain_points": {k: round(100 * (r["after"][k] - r["before"][k]), 2) for k in ks},
                "steps": r["steps"],
                "reward_mean_first_10": statistics.fmean(curve["train/reward"][:10]) if curve["train/reward"] else None,
                "reward_mean_last_10": statistics.fmean(curve["train/reward"][-10:]) if curve["train/reward"] else None,
                "kl_max": r["kl_max"],
                "fallback_mean": (statistics.fmean(curve["train/group_norm_fallback_frac"])
                                  if curve["train/group_norm_fallback_frac"] else None),
                "grpo_seconds": grpo and grpo["seconds"], "grpo_cpu_seconds": grpo and grpo.get("cpu_seconds"),
                "grpo_load1": grpo and grpo.get("load1"),
                "eval_after_seconds": after and after["seconds"],
                "eval_after_cpu_seconds": after and after.get("cpu_seconds"),
                "group_std": r["group_std"],
                "time_limit_lines": r["time_limit_lines"],
                "load_dependent": bool(r["time_limit_lines"]) or len(steps_seen) > 1,
            }
        res[variant] = {"seeds": sorted(per_seed), "per_seed": per_seed}
    return res


def markdown(res: dict, env: dict) -> str:
    keys = sorted({k for v in res.values() for s in v["per_seed"].values() for k in s["gain_points"]},
                  key=lambda k: int(k.split("@")[1]))
    rows = ["| variant | seeds | " + " | ".join(f"{k} gain (points)" for k in keys)
            + " | training reward, first → last 10 steps | KL max | fallback share (mean over steps) "
            "| GRPO wall / CPU (s) | after-eval wall / CPU (s) |", "|---|---:|" + "---:|" * (len(keys) + 5)]
    for variant, v in res.items():
        s = list(v["per_seed"].values())
        gains = " | ".join(fmt([x["gain_points"][k] / 100 for x in s]) for k in keys)
        rf = [x["reward_mean_first_10"] for x in s if x["reward_mean_first_10"] is not None]
        rl = [x["reward_mean_last_10"] for x in s if x["reward_mean_last_10"] is not None]
        rw = f"{statistics.fmean(rf):.3f} → {statistics.fmean(rl):.3f}" if rf and rl else "n/a"
        kl = max((x["kl_max"] for x in s if x["kl_max"] is not None), default=None)
        fb = [x["fallback_mean"] for x in s if x["fallback_mean"] is not None]
        wall = "; ".join(f"{x['grpo_seconds']} / {x['grpo_cpu_seconds']}" for x in s)
        ev = "; ".join(f"{x['eval_after_seconds']} / {x['eval_after_cpu_seconds']}" for x in s)
        rows.append(f"| {label(variant)} | {len(s)} | {gains} | {rw} | {kl:.3f} | "
                    f"{f'{statistics.fmean(fb):.3f}' if fb else 'n/a (no fallback)'} | {wall} | {ev} |")
    rows += paired_rows(res, keys)
    rows += ["", "Per seed (pass@k before → after, %; steps; GRPO wall s at 1-min load):", ""]
    for variant, v in res.items():
        for seed, x in v["per_seed"].items():
            pk = ", ".join(f"{k} {100 * x['before'][k]:.1f} → {100 * x['after'][k]:.1f}" for k in keys)
            flag = ""
            if x["time_limit_lines"]:
                flag = " **load-dependent: " + "; ".join(x["time_limit_lines"]) + "**"
            elif x["load_dependent"]:
                flag = " **not the steps of every run**"
            rows.append(f"- {label(variant)}, {seed}: {pk}; {x['steps']} steps; GRPO {x['grpo_seconds']} s "
                        f"(load {x['grpo_load1']}){flag}")
    rows += threshold_rows(res)
    clean = all(not x["load_dependent"] for v in res.values() for x in v["per_seed"].values())
    rows += ["", "No run was re-planned or cut by GRPO_MAX_SECONDS; every run did the same steps." if clean else
             "Some runs were re-planned or cut, or ran other steps than the rest (flagged above): they are not "
             "compared like for like."]
    rows += ["", machine_line(env)]
    return ("# Advantage ablation (learning check, TRL on CPU)\n\nGain = held-out after − before, mean ± sd over "
            "seeds (sd only with ≥ 2 seeds).\n\n" + "\n".join(rows) + "\n\n![ablation](ablation.png)\n")


def paired_rows(res: dict, keys: list[str], base: str = "std") -> list[str]:
    """Each variant's gain minus the base variant's on the seeds both ran (one warm start per seed, so the
    seeds' spread in warm starts cancels), mean ± sd over those seeds."""
    if base not in res:
        return []
    rows = []
    for variant, v in res.items():
        common = [s for s in v["per_seed"] if s in res[base]["per_seed"]]
        if variant == base or not common:
            continue
        diffs = {k: [(v["per_seed"][s]["gain_points"][k] - res[base]["per_seed"][s]["gain_points"][k]) / 100
                     for s in common] for k in keys}
        rows.append(f"| {label(variant)} | {len(common)} | " + " | ".join(fmt(diffs[k]) for k in keys) + " |")
    if not rows:
        return []
    return ["", f"Against {label(base)} on the same seeds (gain minus its gain, points; mean ± sd over the seeds "
            "both ran):", "", "| variant | seeds | " + " | ".join(f"{k} vs {base}" for k in keys) + " |",
            "|---|---:|" + "---:|" * len(keys)] + rows


def threshold_rows(res: dict) -> list[str]:
    """The offline threshold table: per variant, shares of groups all equal and below each threshold."""
    rows = []
    for variant, v in res.items():
        prof = [x["group_std"] for x in v["per_seed"].values() if x["group_std"]]
        if prof:
            shares = [statistics.fmean(p["all_equal"] for p in prof)]
            shares += [statistics.fmean(p["below"][str(t)] for p in prof) for t in THRESHOLDS]
            differ = [p["low_tests_differ"] for p in prof if p["low_tests_differ"] is not None]
            rows.append(f"| {label(variant)} | {sum(p['groups'] for p in prof)} | "
                        + " | ".join(f"{100 * x:.1f}" for x in shares)
                        + f" | {f'{100 * statistics.fmean(differ):.0f}' if differ else 'n/a'} |")
    if not rows:
        return []
    t0 = f"{DEFAULT_STD_THRESHOLD:g}"
    head = ["", "Groups by reward std, from the rewards each run's trainer got (% of groups, mean over seeds): a group "
            "below the threshold is only centred, above it divided by its std, so the share between two thresholds "
            "is what choosing one changes on these groups (not trained with each threshold). The last column: of "
            f"the groups whose rewards differ but by a std below {t0}, the share whose test pass rates differ (the "
            "rest differ only in the reward's other components):", "",
            "| variant | groups | all equal | " + " | ".join(f"std < {t:g}" for t in THRESHOLDS)
            + f" | 0 < std < {t0}: tests differ |", "|---|---:|" + "---:|" * (len(THRESHOLDS) + 2)]
    return head + rows


def plot(found: dict[str, dict[str, dict]], res: dict, path: Path, width: int = 10) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, grid = plt.subplots(2, 3, figsize=(16, 8))
    axes = list(grid.flat)
    axes[-1].axis("off")
    colors = {v: f"C{i}" for i, v in enumerate([*VARIANTS, *(v for v in found if v not in VARIANTS)])}
    for ax, (tag, title) in zip(axes, CURVES.items(), strict=False):
        for variant, runs in found.items():
            for i, r in enumerate(runs.values()):
                pts = binned(r["curves"].get(tag, []), width)
                if pts:
                    ax.plot([s for s, _ in pts], [v for _, v in pts], color=colors[variant], alpha=0.8,
                            label=label(variant) if i == 0 else None, marker=".")
        ax.set_title(f"{title} ({width}-step means)", fontsize=10)
        ax.set_xlabel("GRPO step")
        ax.grid(alpha=0.3)
        if ax.lines:
            ax.legend(fontsize=7)
    ax = axes[4]
    keys = sorted({k for v in res.values() for s in v["per_seed"].values() for k in s["gain_points"]},
                  key=lambda k: int(k.split("@")[1]))
    for j, variant in enumerate(res):
        s = list(res[variant]["per_seed"].values())
        for i, k in enumerate(keys):
            vals = [x["gain_points"][k] for x in s]
            m, sd = mean_sd(vals)
            x0 = i * (len(res) + 1) + j
            ax.bar(x0, m, color=colors[variant], yerr=sd or 0, capsize=3,
                   label=f"{label(variant)} (n={len(s)})" if i == 0 else None)
            ax.scatter([x0] * len(vals), vals, color="k", s=8, zorder=3)
    ax.set_xticks([i * (len(res) + 1) + (len(res) - 1) / 2 for i in range(len(keys))], keys)
    ax.set_title("held-out gain (points; bars mean ± sd, dots seeds)", fontsize=10)
    ax.axhline(0, color="k", lw=0.5)
    ax.grid(alpha=0.3, axis="y")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True, help="scripts/advantage_ablation.sh's OUT (holds <variant>/seed<S>/).")
    a = p.parse_args(argv)
    out = Path(a.out)
    found = collect(out)
    if not found:
        print(f"error: {out}: no finished run (<variant>/seed<S>/eval_after/{SUMMARY_FILE})", file=sys.stderr)
        return 2
    res = summary(found)
    env = machine()
    text = markdown(res, env)
    _write_atomic(out / "ablation.png", draw=lambda t: plot(found, res, t))
    _write_atomic(out / "ablation.md", text.encode())
    _write_atomic(out / "ablation.json", (json.dumps({"machine": env, "variants": res}, indent=1) + "\n").encode())
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The learning check's report: per-step curves from the GRPO runs' tensorboard logs, a before/after pass@k
table and a PASS/FAIL verdict against the target gain in held-out pass@1.

    python learning_check/report.py --run seed1=OUT/seed1 --run seed2=OUT/seed2 --out OUT/report

A run dir holds eval_before/summary.json and eval_after/summary.json (coderl.rewards.evaluation) and
grpo/tensorboard/ (OpenRLHF's --use_tensorboard, where it writes train/<metric> per global step). Writes
curves.png (one panel per metric, one line per run), report.md and report.json, atomically.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

from coderl.rewards.evaluation.report import SUMMARY_FILE, pass_keys

# tensorboard tag -> panel title. reward/kl/response_length are OpenRLHF's PPO status keys; the fallback
# fraction is logged by our group-norm patch (docs/patches.md).
METRICS = {
    "train/reward": "training reward (mean per rollout)",
    "train/kl": "KL to the reference policy",
    "train/response_length": "response length (tokens)",
    "train/group_norm_fallback_frac": "group-norm fallback fraction",
}


def read_scalars(tb_dir: str | Path) -> dict[str, list[tuple[int, float]]]:
    """{tag: [(step, value), ...]} of every event file under `tb_dir` (sorted by step, last write wins)."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    files = sorted(Path(tb_dir).rglob("events.out.tfevents.*"))
    if not files:
        raise FileNotFoundError(f"{tb_dir}: no tensorboard event files (was the run started with TENSORBOARD=1?)")
    out: dict[str, dict[int, float]] = {}
    for f in files:
        acc = EventAccumulator(str(f), size_guidance={"scalars": 0})
        acc.Reload()
        for tag in acc.Tags().get("scalars", []):
            for ev in acc.Scalars(tag):
                out.setdefault(tag, {})[int(ev.step)] = float(ev.value)
    return {tag: sorted(v.items()) for tag, v in out.items()}


def rises(values: list[float]) -> bool:
    """The mean of the last third is above the mean of the first third (needs >= 3 points)."""
    if len(values) < 3:
        return False
    t = len(values) // 3
    return sum(values[-t:]) / t > sum(values[:t]) / t


def summarize_run(run_dir: str | Path) -> dict:
    """pass@k before/after, the curves, and the run's own checks."""
    run = Path(run_dir)
    before = json.loads((run / "eval_before" / SUMMARY_FILE).read_text())
    after = json.loads((run / "eval_after" / SUMMARY_FILE).read_text())
    curves = read_scalars(run / "grpo" / "tensorboard")
    missing = [t for t in METRICS if t not in curves]
    reward = [v for _, v in curves.get("train/reward", [])]
    keys = [k for k in pass_keys(before) if k in after]
    return {
        "before": {k: before[k] for k in keys}, "after": {k: after[k] for k in keys},
        "gain_pass@1_points": round(100 * (after["pass@1"] - before["pass@1"]), 2),
        "reward_first": reward[0] if reward else None, "reward_last": reward[-1] if reward else None,
        "reward_rises": rises(reward), "steps": len(reward), "missing_metrics": missing,
        "curves": {t: curves[t] for t in METRICS if t in curves},
    }


def verdict(runs: dict[str, dict], target_points: float) -> tuple[bool, str]:
    """PASS iff every run gains >= target_points of held-out pass@1 and its training reward rises."""
    bad = [f"{n}: pass@1 +{r['gain_pass@1_points']} < {target_points}" for n, r in runs.items()
           if r["gain_pass@1_points"] < target_points]
    bad += [f"{n}: training reward does not rise" for n, r in runs.items() if not r["reward_rises"]]
    gains = ", ".join(f"{n} {r['gain_pass@1_points']:+.1f}" for n, r in runs.items())
    if bad:
        return False, f"FAIL: held-out pass@1 gain (points) {gains}; " + "; ".join(bad)
    return True, f"PASS: held-out pass@1 gain (points) {gains} >= {target_points}, training reward rises in every run"


def markdown(runs: dict[str, dict], line: str) -> str:
    keys = list(next(iter(runs.values()))["before"])
    head = "| run | " + " | ".join(f"{k} before | {k} after" for k in keys) + " | reward first -> last | steps |"
    rows = [head, "|" + "---|" * (2 * len(keys) + 3)]
    for n, r in runs.items():
        cells = " | ".join(f"{100 * r['before'][k]:.1f} | {100 * r['after'][k]:.1f}" for k in keys)
        rw = (f"{r['reward_first']:.3f} -> {r['reward_last']:.3f}" if r["reward_first"] is not None else "n/a")
        rows.append(f"| {n} | {cells} | {rw} | {r['steps']} |")
    missing = sorted({t for r in runs.values() for t in r["missing_metrics"]})
    note = f"\nNot logged by the run: {', '.join(missing)}\n" if missing else ""
    return ("# Learning check\n\nHeld-out pass@k in % (sampled, unbiased estimator), before and after GRPO.\n\n"
            + "\n".join(rows) + f"\n{note}\n![curves](curves.png)\n\n**{line}**\n")


def plot(runs: dict[str, dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(10, 7))
    for ax, (tag, title) in zip(axes.flat, METRICS.items(), strict=True):
        for name, r in runs.items():
            pts = r["curves"].get(tag)
            if pts:
                ax.plot([s for s, _ in pts], [v for _, v in pts], marker=".", label=name)
        ax.set_title(title)
        ax.set_xlabel("GRPO step")
        ax.grid(alpha=0.3)
        if ax.lines:
            ax.legend(fontsize=8)
        else:
            ax.text(0.5, 0.5, "not logged", ha="center", va="center", transform=ax.transAxes)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _write_atomic(path: Path, data: bytes | None = None, draw=None) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=path.suffix, dir=path.parent)
    os.close(fd)
    try:
        if draw is not None:
            draw(Path(tmp))
        else:
            Path(tmp).write_bytes(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--run", action="append", required=True, metavar="NAME=DIR", help="A run dir (repeatable).")
    p.add_argument("--out", required=True, help="Report dir: curves.png, report.md, report.json.")
    p.add_argument("--target_points", type=float, default=15.0, help="Held-out pass@1 gain needed, in points.")
    a = p.parse_args(argv)
    runs: dict[str, dict] = {}
    for spec in a.run:
        name, sep, d = spec.partition("=")
        if not sep or not name or not d:
            print(f"error: --run {spec!r}: expected NAME=DIR", file=sys.stderr)
            return 2
        try:
            runs[name] = summarize_run(d)
        except (OSError, ValueError, KeyError) as e:
            print(f"error: run {name} ({d}): {type(e).__name__}: {e}", file=sys.stderr)
            return 2
    ok, line = verdict(runs, a.target_points)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    _write_atomic(out / "curves.png", draw=lambda t: plot(runs, t))
    _write_atomic(out / "report.md", markdown(runs, line).encode())
    _write_atomic(out / "report.json", (json.dumps({"verdict": line, "pass": ok, "target_points": a.target_points,
                                                    "runs": runs}, indent=1) + "\n").encode())
    print(markdown(runs, line))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

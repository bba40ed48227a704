"""The learning check's report: per-step curves from the GRPO runs' tensorboard logs, a before/after pass@k
table, wall-clock per stage, the machine and versions, and a PASS/FAIL verdict against the target gain in
held-out pass@1.

    python learning_check/report.py --run seed1=OUT/seed1 --run seed2=OUT/seed2 --out OUT/report

A run dir holds eval_before/summary.json and eval_after/summary.json (coderl.rewards.evaluation),
grpo/tensorboard/ (train/<metric> per step, written by OpenRLHF's --use_tensorboard or by TRL's
report_to=tensorboard) and, when scripts/learning_check.sh made it, timings.jsonl. Writes curves.png (one
panel per metric, one line per run), report.md and report.json, atomically.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
from pathlib import Path

from coderl.rewards.evaluation.report import RESULTS_FILE, SUMMARY_FILE, pass_keys
from coderl.rewards.evaluation.samples import SAMPLES_FILE

WARM_START_FILE = "warm_start.json"  # written by learning_check/warm_start.py next to the model
REWARD_SUMMARY_FILE = "reward_summary.json"  # written by learning_check/trl_grpo.py into the GRPO dir
GRPO_LOG = "grpo.log"  # a run's GRPO output, as scripts/learning_check.sh captures it
TIME_LIMIT_PREFIX = "time limit:"  # starts each line trl_grpo.py prints when GRPO_MAX_SECONDS re-plans or cuts

# panel -> (title, the tensorboard tags that hold it: OpenRLHF's PPO status keys, then TRL's GRPO log keys).
# The fallback fraction is logged by our group-norm patch (docs/patches.md) and by TRL's GroupNormGRPOTrainer
# (GRPO_ADVANTAGE=group_norm); TRL's own std and mean advantages have no such fallback. The
# all-passed share is coderl's own component (OpenRLHF extra_logs / TRL integrations.trl.with_component_logs).
METRICS = {
    "train/reward": ("training reward (mean per rollout)", ("train/reward",)),
    "train/kl": ("KL to the reference policy", ("train/kl",)),
    "train/response_length": ("response length (tokens)",
                              ("train/response_length", "train/completions/mean_length")),
    "train/all_passed": ("samples passing every test (share)",
                         ("train/all_passed", "train/rewards/coderl/all_passed/mean")),
    "train/group_norm_fallback_frac": ("group-norm fallback fraction", ("train/group_norm_fallback_frac",)),
}
# what a trainer cannot log, and why (the report says so instead of listing it as missing)
NOT_LOGGED = {"trl": {"train/group_norm_fallback_frac": "this run's advantage (GRPO_ADVANTAGE std or mean, TRL's "
                      "own) has no low-std fallback; GRPO_ADVANTAGE=group_norm logs it"},
              "openrlhf": {"train/all_passed": "OpenRLHF 0.5.7 drops the reward's extra_logs (the reward server's "
                           "/metrics holds the last batch's components)"}}


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


def panel_curves(scalars: dict[str, list[tuple[int, float]]]) -> dict[str, list[tuple[int, float]]]:
    """{panel: points} from the first of each panel's tags that the run logged."""
    out = {}
    for panel, (_, tags) in METRICS.items():
        tag = next((t for t in tags if t in scalars), None)
        if tag is not None:
            out[panel] = scalars[tag]
    return out


def read_timings(path: Path) -> list[dict]:
    """The JSON lines scripts/learning_check.sh appends per stage ({stage, seconds, load1}); [] if absent."""
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def mode_pass_at_1(eval_dir: str | Path) -> float | None:
    """The mean over problems of whether its most frequent completion passes (ties: their mean), or None
    without samples. What a policy sharpened onto its own modes (GRPO that only lowers entropy) would score:
    the sharpening ceiling of a warm start, against which its sampled pass@1 is compared."""
    d = Path(eval_dir)
    if not (d / SAMPLES_FILE).is_file() or not (d / RESULTS_FILE).is_file():
        return None
    texts: dict[str, list[str]] = {}
    for line in (d / SAMPLES_FILE).read_text().splitlines():
        if line.strip():
            row = json.loads(line)
            texts.setdefault(row["task_id"], []).append(" ".join(row["completion"].split()))
    passed: dict[tuple[str, int], bool] = {}
    for line in (d / RESULTS_FILE).read_text().splitlines():
        if line.strip():
            row = json.loads(line)
            passed[(row["task_id"], row["sample"])] = bool(row["passed"])
    if not texts:
        return None
    total = 0.0
    for task, samples in texts.items():
        counts: dict[str, int] = {}
        for t in samples:
            counts[t] = counts.get(t, 0) + 1
        top = max(counts.values())
        hits = [passed.get((task, i), False) for i, t in enumerate(samples) if counts[t] == top]
        total += sum(hits) / len(hits)
    return total / len(texts)


def passes_histogram(eval_dir: str | Path) -> list[int] | None:
    """Problems by how many of their samples pass: [problems passing 0, 1, ..., n], or None without results.
    Sharpening shows as mass moving to both ends; learning, as mass leaving 0."""
    path = Path(eval_dir) / RESULTS_FILE
    if not path.is_file():
        return None
    passes: dict[str, int] = {}
    samples: dict[str, int] = {}
    for line in path.read_text().splitlines():
        if line.strip():
            row = json.loads(line)
            passes[row["task_id"]] = passes.get(row["task_id"], 0) + bool(row["passed"])
            samples[row["task_id"]] = samples.get(row["task_id"], 0) + 1
    if not passes:
        return None
    hist = [0] * (max(samples.values()) + 1)
    for v in passes.values():
        hist[v] += 1
    return hist


def read_grpo_log(run_dir: str | Path) -> str:
    """A run's GRPO output as scripts/learning_check.sh captured it; "" if absent."""
    log = Path(run_dir) / GRPO_LOG
    return log.read_text(errors="replace") if log.is_file() else ""


def summarize_run(run_dir: str | Path, trainer: str = "openrlhf", grpo_log: str | None = None) -> dict:
    """pass@k before/after, the curves, wall-clock per stage and the run's own checks (grpo_log: its
    read_grpo_log text, where the caller already read it)."""
    run = Path(run_dir)
    before = json.loads((run / "eval_before" / SUMMARY_FILE).read_text())
    after = json.loads((run / "eval_after" / SUMMARY_FILE).read_text())
    statuses = {when: s.get("statuses", {}) for when, s in (("before", before), ("after", after))}
    curves = panel_curves(read_scalars(run / "grpo" / "tensorboard"))
    missing = [t for t in METRICS if t not in curves and t not in NOT_LOGGED.get(trainer, {})]
    reward = [v for _, v in curves.get("train/reward", [])]
    kl = [v for _, v in curves.get("train/kl", [])]
    keys = [k for k in pass_keys(before) if k in after]
    # trl_grpo.py's GRPO_MAX_SECONDS re-plans and cuts: a run it cut did fewer steps than asked, on a slow host
    time_limit = [ln for ln in (read_grpo_log(run) if grpo_log is None else grpo_log).splitlines()
                  if ln.startswith(TIME_LIMIT_PREFIX)]
    return {
        "before": {k: before[k] for k in keys}, "after": {k: after[k] for k in keys},
        "gain_pass@1_points": round(100 * (after["pass@1"] - before["pass@1"]), 2),
        "reward_first": reward[0] if reward else None, "reward_last": reward[-1] if reward else None,
        "reward_rises": rises(reward), "steps": len(reward), "missing_metrics": missing,
        "kl_max": max(kl) if kl else None, "timings": read_timings(run / "timings.jsonl"),
        "time_limit_lines": time_limit,
        "mode_pass@1": {"before": mode_pass_at_1(run / "eval_before"), "after": mode_pass_at_1(run / "eval_after")},
        "statuses": statuses,
        "passes_histogram": {"before": passes_histogram(run / "eval_before"),
                             "after": passes_histogram(run / "eval_after")},
        "warm_start": (json.loads((run / "sft" / WARM_START_FILE).read_text())
                       if (run / "sft" / WARM_START_FILE).is_file() else None),
        "grpo_reward": (json.loads((run / "grpo" / REWARD_SUMMARY_FILE).read_text())
                        if (run / "grpo" / REWARD_SUMMARY_FILE).is_file() else None),
        "curves": curves,
    }


def reward_summary(rewards_jsonl: str | Path) -> dict:
    """Mean, max and non-zero count of the per-sample rewards in trl_grpo.py's rewards.jsonl, with their pass rates."""
    path = Path(rewards_jsonl)
    batches = [json.loads(line) for line in path.read_text().splitlines()] if path.is_file() else []
    rewards = [r for b in batches for r in b["rewards"]]
    correctness = [c for b in batches for c in b["correctness"]]
    n = len(rewards)
    return {"samples": n, "batches": len(batches), "mean": sum(rewards) / n if n else 0.0,
            "max": max(rewards, default=0.0), "nonzero": sum(r != 0 for r in rewards),
            "correctness_max": max(correctness, default=0.0),
            "all_passed": int(sum(a for b in batches for a in b["all_passed"]))}


def reward_line(s: dict) -> str:
    """One line on the rewards the GRPO trainer got, sample by sample."""
    return (f"GRPO reward reaching the trainer: mean {s['mean']:.3f}, max {s['max']:.3f} over {s['samples']} samples "
            f"of {s['batches']} batches ({s['nonzero']} non-zero; test pass rate max {s['correctness_max']:.2f}, "
            f"{s['all_passed']} passing every test); non-zero: {'yes' if s['nonzero'] else 'NO'}")


def warm_start_line(name: str, ws: dict) -> str:
    """What the warm start was, above all how imperfect its demonstrator (learning_check/near_miss.py)."""
    text = (f"- {name}: `{ws['shape']}` ({ws['params'] / 1e6:.2f} M parameters), {ws['steps']} SFT steps × "
            f"{ws['batch_size']}, lr {ws['lr']:g}; ")
    if not ws.get("noise"):
        return text + "every target the reference solution (a perfect demonstrator)"
    return text + (f"{100 * ws['noise']:.0f} % of the drawn targets a near miss of the reference (one of "
                   f"{ws['near_misses']} drawn per row, {ws['rows_with_near_misses']} of {ws['rows']} rows have one): an "
                   "imperfect demonstrator, as a pretrained model is; only the tests tell its near misses from "
                   "the reference, so this much of GRPO's gain is the reward's to teach")


def verdict(runs: dict[str, dict], target_points: float) -> tuple[bool, str]:
    """PASS iff every run gains >= target_points of held-out pass@1, its largest-k pass@k does not fall (GRPO
    sharpening at the cost of coverage is not learning) and its training reward rises."""
    bad = [f"{n}: pass@1 {r['gain_pass@1_points']:+.1f} < +{target_points:g}" for n, r in runs.items()
           if r["gain_pass@1_points"] < target_points]
    for n, r in runs.items():
        k = max(r["before"], key=lambda key: int(key.split("@")[1]))
        if k != "pass@1" and r["after"][k] < r["before"][k]:
            bad.append(f"{n}: {k} falls ({100 * r['before'][k]:.1f} -> {100 * r['after'][k]:.1f})")
    bad += [f"{n}: training reward does not rise" for n, r in runs.items() if not r["reward_rises"]]
    gains = ", ".join(f"{n} {r['gain_pass@1_points']:+.1f}" for n, r in runs.items())
    if bad:
        cut = [f"{n} stopped after {r['steps']} steps" for n, r in runs.items() if r.get("time_limit_lines")]
        why = (f" ({', '.join(cut)}: GRPO_MAX_SECONDS cut GRPO short on this machine; GRPO_MAX_SECONDS=0 runs every "
               "step)") if cut else ""
        return False, f"FAIL: held-out pass@1 gain (points) {gains}; " + "; ".join(bad) + why
    return True, f"PASS: held-out pass@1 gain (points) {gains} >= {target_points}, training reward rises in every run"


def machine() -> dict:
    """Where the figures were measured: CPU, cores, load, library versions."""
    import importlib.metadata as md

    info = {}
    if Path("/proc/cpuinfo").is_file():
        for ln in Path("/proc/cpuinfo").read_text().splitlines():
            k, _, v = ln.partition(":")
            info.setdefault(k.strip(), v.strip())
    cpu = info.get("model name") or platform.processor()
    # A VM's "model name" (e.g. "AMD EPYC") hides the generation, and the SIMD level torch dispatches to
    # (AVX2 vs AVX512) changes both the speed and the low bits of every figure: the same commit and knobs
    # give other numbers on another host.
    if "cpu family" in info:
        cpu += f" (family {info['cpu family']}, model {info.get('model', '?')})"
    try:
        import torch

        capability = torch.backends.cpu.get_cpu_capability()
    except (ImportError, AttributeError):
        capability = None
    versions = {}
    for pkg in ("torch", "transformers", "trl", "accelerate", "tokenizers"):
        try:
            versions[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            pass
    return {"cpu": cpu, "cpu_capability": capability, "cores": os.cpu_count(), "python": platform.python_version(), "versions": versions,
            "load_at_report": os.getloadavg()[0] if hasattr(os, "getloadavg") else None}


def machine_line(env: dict) -> str:
    """The report's "Machine: …" sentence for machine()'s dict."""
    simd = f", torch dispatching to {env['cpu_capability']}" if env.get("cpu_capability") else ""
    return (f"Machine: {env['cpu']}, {env['cores']} cores{simd}; Python {env['python']}, "
            + ", ".join(f"{k} {v}" for k, v in env["versions"].items()) + ".")


def timing_table(runs: dict[str, dict], shared: list[dict]) -> list[str]:
    """Wall-clock per stage (seconds, 1-min load at its end, CPU seconds of its processes where recorded);
    shared stages run once for every seed."""
    stages = list(dict.fromkeys([t["stage"] for t in shared] + [t["stage"] for r in runs.values()
                                                                for t in r["timings"]]))
    if not stages:
        return []
    rows = ["| stage | " + " | ".join(runs) + " |", "|---|" + "---:|" * len(runs)]
    for st in stages:
        cells = []
        for r in runs.values():
            t = next((t for t in shared + r["timings"] if t["stage"] == st), None)
            cpu = f", {t['cpu_seconds']:.0f} s CPU" if t and t.get("cpu_seconds") is not None else ""
            cells.append(f"{t['seconds']} s (load {t['load1']}{cpu})" if t else "cached")
        rows.append(f"| {st}{' (shared)' if any(t['stage'] == st for t in shared) else ''} | " + " | ".join(cells)
                    + " |")
    totals = [sum(t["seconds"] for t in shared) + sum(t["seconds"] for t in r["timings"]) for r in runs.values()]
    rows.append("| **total, end to end** | " + " | ".join(f"**{s} s ({s / 60:.1f} min)**" for s in totals) + " |")
    cpu = [sum(t.get("cpu_seconds") or 0 for t in shared + r["timings"]) for r in runs.values()]
    if any(cpu):
        rows.append("| CPU time of all stages (another load does not inflate it) | "
                    + " | ".join(f"{c:.0f} s ({c / 60:.1f} min)" for c in cpu) + " |")
    return ["", "Wall-clock per stage (this run; a stage reused from the cache is not timed again):", "", *rows]


def _pass_table(runs: dict[str, dict]) -> list[str]:
    """Held-out pass@k before and after GRPO, with the reward, KL and steps of each run."""
    keys = list(next(iter(runs.values()))["before"])
    head = ("| run | " + " | ".join(f"{k} before | {k} after" for k in keys)
            + " | reward first -> last | KL max | steps |")
    rows = [head, "|" + "---|" * (2 * len(keys) + 4)]
    for n, r in runs.items():
        cells = " | ".join(f"{100 * r['before'][k]:.1f} | {100 * r['after'][k]:.1f}" for k in keys)
        rw = (f"{r['reward_first']:.3f} -> {r['reward_last']:.3f}" if r["reward_first"] is not None else "n/a")
        kl = f"{r['kl_max']:.4f}" if r.get("kl_max") is not None else "n/a"
        rows.append(f"| {n} | {cells} | {rw} | {kl} | {r['steps']} |")
    return rows


def _not_logged(runs: dict[str, dict], trainer: str) -> str:
    """The metrics no run logged: missing ones, and those the trainer never logs (with why)."""
    missing = sorted({t for r in runs.values() for t in r["missing_metrics"]})
    note = f"\nNot logged by the run: {', '.join(missing)}\n" if missing else ""
    return note + "".join(f"\n{METRICS[t][0]}: not logged: {why}.\n" for t, why in NOT_LOGGED.get(trainer, {}).items()
                          if not any(t in r["curves"] for r in runs.values()))


def _sharpening(runs: dict[str, dict]) -> list[str]:
    """Mode pass@1 (the sharpening ceiling) of the runs that measured it."""
    modes = {n: r["mode_pass@1"] for n, r in runs.items() if r.get("mode_pass@1", {}).get("before") is not None}
    if not modes:
        return []
    rows = ["", "Sharpening ceiling: mode pass@1 = share of problems whose most frequent completion passes (what "
            "a policy sharpened onto its own modes would score; GRPO that only lowers entropy gains at most "
            "about mode − sampled pass@1):", ""]
    return rows + [f"- {n}: before {100 * m['before']:.1f} % (sampled pass@1 {100 * runs[n]['before']['pass@1']:.1f} %)"
                   + (f", after {100 * m['after']:.1f} %" if m["after"] is not None else "")
                   + "; problems by samples passing (0, 1, …, n): "
                   + "; ".join(f"{when} {' '.join(map(str, h))}" for when, h in runs[n]["passes_histogram"].items() if h)
                   for n, m in modes.items()]


def _statuses(runs: dict[str, dict]) -> list[str]:
    """Held-out samples by status, before → after, of the runs that recorded them."""
    with_status = {n: r["statuses"] for n, r in runs.items() if r.get("statuses", {}).get("before")}
    if not with_status:
        return []
    noisy = any((r.get("warm_start") or {}).get("noise") for r in runs.values())
    why = (" (after a warm start from near misses: `error` holds a function under another name, `wrong_answer` "
           "a printed result or a near miss)") if noisy else ""
    return ["", f"Held-out samples by status, before → after{why}:", "",
            *(f"- {n}: " + ", ".join(f"{k} {st['before'].get(k, 0)} → {st['after'].get(k, 0)}"
                                     for k in dict.fromkeys([*st["before"], *st["after"]])
                                     if st["before"].get(k) or st["after"].get(k))
              for n, st in with_status.items())]


def markdown(runs: dict[str, dict], line: str, trainer: str = "openrlhf", shared: list[dict] | None = None,
             env: dict | None = None) -> str:
    rows = _pass_table(runs) + _sharpening(runs) + _statuses(runs)
    starts = {n: r["warm_start"] for n, r in runs.items() if r.get("warm_start")}
    if starts:
        rows += ["", "Warm start:", "", *(warm_start_line(n, ws) for n, ws in starts.items())]
    cut = {n: r["time_limit_lines"] for n, r in runs.items() if r.get("time_limit_lines")}
    if cut:
        rows += ["", "GRPO's time limit (GRPO_MAX_SECONDS; by default what SEED_SECONDS leaves) re-planned or cut "
                 "these runs:", "",
                 *(f"- {n}: " + "; ".join(lines) for n, lines in cut.items())]
    got = {n: r["grpo_reward"] for n, r in runs.items() if r.get("grpo_reward")}
    if got:
        rows += ["", "Every sample's reward as the GRPO trainer got it:", "",
                 *(f"- {n}: {reward_line(s)}" for n, s in got.items())]
    rows += timing_table(runs, shared or [])
    if env:
        rows += ["", machine_line(env)]
    return (f"# Learning check ({trainer})\n\nHeld-out pass@k in % (sampled, unbiased estimator), before and after "
            "GRPO.\n\n" + "\n".join(rows) + f"\n{_not_logged(runs, trainer)}\n![curves](curves.png)\n\n**{line}**\n")


def plot(runs: dict[str, dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 3, figsize=(14, 7))
    for ax, (tag, (title, _)) in zip(axes.flat, METRICS.items(), strict=False):  # 6 axes, 5 panels + histogram
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
    ax = axes.flat[-1]
    ax.set_title("held-out problems by samples passing")
    ax.set_xlabel("samples passing (of n per problem)")
    ax.grid(alpha=0.3)
    drawn_before: set[tuple] = set()
    for name, r in runs.items():
        h = r.get("passes_histogram", {})
        if h.get("before") and tuple(h["before"]) not in drawn_before:  # runs sharing a warm start: drawn once
            drawn_before.add(tuple(h["before"]))
            ax.plot(range(len(h["before"])), h["before"], ls="--", marker=".", color="grey", label=f"{name} before")
        if h.get("after"):
            ax.plot(range(len(h["after"])), h["after"], marker="o", label=f"{name} after")
    if ax.lines:
        ax.legend(fontsize=8)
    else:
        ax.text(0.5, 0.5, "no per-sample results", ha="center", va="center", transform=ax.transAxes)
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
    p.add_argument("--trainer", default="openrlhf", choices=["openrlhf", "trl"], help="Which trainer ran GRPO.")
    p.add_argument("--shared_timings", default=None, help="timings.jsonl of the stages every run shares.")
    p.add_argument("--no_verdict", default=None, metavar="WHY",
                   help="Write the report but give no PASS/FAIL (exit 0): the runs are not a measurement (DRY_RUN).")
    a = p.parse_args(argv)
    runs: dict[str, dict] = {}
    for spec in a.run:
        name, sep, d = spec.partition("=")
        if not sep or not name or not d:
            print(f"error: --run {spec!r}: expected NAME=DIR", file=sys.stderr)
            return 2
        try:
            runs[name] = summarize_run(d, a.trainer)
        except (OSError, ValueError, KeyError) as e:
            print(f"error: run {name} ({d}): {type(e).__name__}: {e}", file=sys.stderr)
            return 2
    ok, line = verdict(runs, a.target_points)
    if a.no_verdict:
        gains = ", ".join(f"{n} {r['gain_pass@1_points']:+.1f}" for n, r in runs.items())
        ok, line = None, f"NO VERDICT: {a.no_verdict}; held-out pass@1 change (points, not a result): {gains}"
    shared = read_timings(Path(a.shared_timings)) if a.shared_timings else []
    env = machine()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    md_text = markdown(runs, line, a.trainer, shared, env)
    _write_atomic(out / "curves.png", draw=lambda t: plot(runs, t))
    _write_atomic(out / "report.md", md_text.encode())
    _write_atomic(out / "report.json", (json.dumps({"verdict": line, "pass": ok, "target_points": a.target_points,
                                                    "trainer": a.trainer, "machine": env, "shared_timings": shared,
                                                    "runs": runs}, indent=1) + "\n").encode())
    print(md_text)
    return 1 if ok is False else 0


if __name__ == "__main__":
    sys.exit(main())

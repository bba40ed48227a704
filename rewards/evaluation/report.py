"""An evaluation's outputs: DIR/results.jsonl (one row per sample), DIR/summary.json and the stdout table."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from ..atomic_outputs import AtomicOutputs
from .passk import mean_pass_at_k
from .score import UNKNOWN_TASK, SampleResult, buckets, per_task_counts
from .tasks import Tasks

RESULTS_FILE, SUMMARY_FILE = "results.jsonl", "summary.json"
_SHOW_IDS = 5  # task ids named in the table per list (summary.json has them all)


def summarize(tasks: Tasks, results: Sequence[SampleResult], ks: Sequence[int], meta: dict | None = None) -> dict:
    """summary.json: "pass@K" floats for every reportable k, then counts, then `meta` (run settings)."""
    counts = per_task_counts(results)
    pk = mean_pass_at_k(counts, ks)
    known = [r for r in results if r.status != UNKNOWN_TASK]
    statuses = dict.fromkeys(buckets(), 0)
    statuses.update(Counter(r.status for r in known))
    ns = [n for n, _ in counts.values()]
    rewards = [r.reward for r in known if r.reward is not None]
    return {
        **pk.values,
        "k_requested": list(ks),
        "k_skipped": {str(k): why for k, why in pk.skipped.items()},
        "problems_short_of_k": {str(k): ids for k, ids in pk.short.items()},
        "problems": len(counts),
        "problems_solved": sum(c > 0 for _, c in counts.values()),
        "problems_in_data": len(tasks),
        "problems_without_samples": [t for t in tasks.ids() if t not in counts],
        "samples": len(results),
        "samples_scored": len(known),
        "samples_passed": sum(r.passed for r in known),
        "samples_per_problem": {"min": min(ns), "max": max(ns)} if ns else {"min": 0, "max": 0},
        "statuses": statuses,
        "unknown_task_ids": dict(Counter(r.task_id for r in results if r.status == UNKNOWN_TASK)),
        "mean_pass_rate": sum(r.pass_rate for r in known) / len(known) if known else 0.0,
        "mean_reward": sum(rewards) / len(rewards) if rewards else None,
        **(meta or {}),
    }


def write_outputs(out_dir: str | Path, results: Sequence[SampleResult], summary: dict) -> None:
    """results.jsonl and summary.json, atomically; summary.json is renamed last, so it always describes
    the results.jsonl beside it."""
    with AtomicOutputs(out_dir, [RESULTS_FILE]) as out:
        for r in results:
            out[RESULTS_FILE].write(json.dumps(r.as_dict(), ensure_ascii=False) + "\n")
        out.commit({SUMMARY_FILE: json.dumps(summary, indent=2, ensure_ascii=False) + "\n"})


def _ids(ids: Sequence[str]) -> str:
    shown = ", ".join(ids[:_SHOW_IDS])
    return shown + (f", ... ({len(ids) - _SHOW_IDS} more)" if len(ids) > _SHOW_IDS else "")


def pass_keys(summary: dict) -> list[str]:
    """The "pass@K" keys of a summary, by K."""
    return sorted((k for k in summary if k.startswith("pass@")), key=lambda k: int(k[5:]))


def table(summary: dict) -> str:
    """The human-readable summary printed to stdout."""
    spp = summary["samples_per_problem"]
    per = f"{spp['min']}" if spp["min"] == spp["max"] else f"{spp['min']}-{spp['max']}"
    lines = [f"{k:<10} {summary[k]:.4f}" for k in pass_keys(summary)]
    lines.append(f"problems   {summary['problems']} ({per} samples each), {summary['problems_solved']} solved "
                 "by at least one sample")
    for k, why in summary["k_skipped"].items():
        short = summary["problems_short_of_k"].get(k, [])
        lines.append(f"pass@{k} not reported: {why}" + (f": {_ids(short)}" if short else ""))
    n = max(summary["samples_scored"], 1)
    parts = [f"{b} {c} ({100 * c / n:.1f}%)" for b, c in summary["statuses"].items() if c or b == "passed"]
    lines.append(f"samples    {summary['samples_scored']}: " + ", ".join(parts))
    line = f"mean test-case pass rate {summary['mean_pass_rate']:.4f}"
    if summary.get("mean_reward") is not None:
        line += f", mean training reward {summary['mean_reward']:.4f}"
    lines.append(line)
    unknown = summary["unknown_task_ids"]
    if unknown:
        lines.append(f"NOT SCORED: {sum(unknown.values())} sample(s) whose task_id is not in the data: "
                     f"{_ids(sorted(unknown))}")
    missing = summary["problems_without_samples"]
    if missing:
        lines.append(f"not in pass@k: {len(missing)} problem(s) of the data have no samples: {_ids(missing)}")
    return "\n".join(lines)

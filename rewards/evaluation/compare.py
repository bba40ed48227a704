"""Two evaluation runs (e.g. before / after training) side by side, with the problems that flipped."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ..errors import DataError
from .report import RESULTS_FILE, SUMMARY_FILE, pass_keys
from .score import UNKNOWN_TASK

_MAX_FLIPS = 50  # per direction; the rest are counted


@dataclass(frozen=True)
class Run:
    name: str
    summary: dict
    counts: dict[str, tuple[int, int]]  # task_id -> (samples, passed)


def load_run(path: str | Path) -> Run:
    """An evaluation's output directory (or its summary.json); DataError naming the file that is wrong."""
    p = Path(path)
    d = p.parent if p.name == SUMMARY_FILE else p
    try:
        summary = json.loads((d / SUMMARY_FILE).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError(f"{d / SUMMARY_FILE} not found: --compare takes two --out directories of earlier "
                        "evaluations") from None
    except (OSError, ValueError) as e:
        raise DataError(f"{d / SUMMARY_FILE}: cannot read it ({e})") from None
    counts: dict[str, list[int]] = {}
    try:
        with open(d / RESULTS_FILE, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                    if row["status"] == UNKNOWN_TASK:
                        continue
                    nc = counts.setdefault(str(row["task_id"]), [0, 0])
                    nc[0] += 1
                    nc[1] += bool(row["passed"])
                except (ValueError, KeyError, TypeError) as e:
                    raise DataError(f"{d / RESULTS_FILE}: line {n}: not a results row ({e!r})") from None
    except FileNotFoundError:
        raise DataError(f"{d / RESULTS_FILE} not found next to {d / SUMMARY_FILE}") from None
    return Run(str(d), summary, {t: (nc[0], nc[1]) for t, nc in counts.items()})


def _fmt(v) -> str:
    if v is None:
        return "-"
    return f"{v:.4f}" if isinstance(v, float) else str(v)


def _delta(a, b) -> str:
    if not isinstance(a, (int, float)) or not isinstance(b, (int, float)):
        return ""
    return f"{b - a:+.4f}" if isinstance(a, float) or isinstance(b, float) else f"{b - a:+d}"


def compare(a: Run, b: Run) -> str:
    """The side-by-side table and the per-problem flips (solved = at least one sample passes)."""
    w = max(14, len(a.name), len(b.name)) + 2
    rows = [f"{'':<22}{a.name:>{w}}{b.name:>{w}}{'delta':>12}"]
    keys = sorted(set(pass_keys(a.summary)) | set(pass_keys(b.summary)), key=lambda k: int(k[5:]))
    for key, label in [*((k, k) for k in keys), ("problems_solved", "problems solved"),
                       ("problems", "problems"), ("samples_scored", "samples"),
                       ("mean_pass_rate", "mean pass rate"), ("mean_reward", "mean reward")]:
        va, vb = a.summary.get(key), b.summary.get(key)
        rows.append(f"{label:<22}{_fmt(va):>{w}}{_fmt(vb):>{w}}{_delta(va, vb):>12}")
    if a.summary.get("data_sha256") != b.summary.get("data_sha256"):
        rows.append("WARNING: the two runs scored different data files (data_sha256 differs)")
    common = [t for t in a.counts if t in b.counts]
    gained = [t for t in common if a.counts[t][1] == 0 < b.counts[t][1]]
    lost = [t for t in common if b.counts[t][1] == 0 < a.counts[t][1]]
    only_a = len(a.counts) - len(common)
    only_b = sum(t not in a.counts for t in b.counts)
    rows.append(f"flips: {len(gained)} newly solved, {len(lost)} no longer solved, "
                f"{len(common) - len(gained) - len(lost)} unchanged"
                + (f"; {only_a} problems only in {a.name}, {only_b} only in {b.name}" if only_a or only_b else ""))
    for sign, ids in (("+", gained), ("-", lost)):
        for t in ids[:_MAX_FLIPS]:
            (na, ca), (nb, cb) = a.counts[t], b.counts[t]
            rows.append(f"  {sign} {t:<30} {ca}/{na} -> {cb}/{nb}")
        if len(ids) > _MAX_FLIPS:
            rows.append(f"  {sign} ... {len(ids) - _MAX_FLIPS} more")
    return "\n".join(rows)

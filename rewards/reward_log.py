"""The per-batch reward log: one JSON line per scored batch (means of the reward and its components, pass
rate, unmatched rate, seconds) — per-step curves where the trainer drops extra_logs (OpenRLHF 0.5.7) —
and its plot. A server restarted on the same log (a resumed run) appends a new run: its lines carry the next
run id, and their batch numbers continue where the last run's stopped (run_batch counts from 1 per run).

    python rewards/reward_server.py --data_path D --reward_log runs/grpo_7b_zero2/logs/rewards.jsonl
    coderl-reward-log runs/grpo_7b_zero2/logs/rewards.jsonl   # -> rewards.png beside it
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from pathlib import Path

from .version import add_version_flag

# What the plot draws, one panel each, in this order (keys of a log line).
PLOTTED = ("reward", "score", "correctness", "format", "syntax", "length", "unmatched", "no_code", "timeout",
           "seconds")


class RewardLog:
    """Appends one line per batch; each line is one write of a complete JSON object, flushed at once, so a
    reader (or a crash) never sees half a record except possibly the last. Opened on an existing log, it
    continues it: the next run id, batch numbers after the last one logged."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        last = _last_record(self.path)
        self.run = int(last.get("run", 1)) + 1 if last else 1
        self.batch_offset = int(last.get("batch", 0)) if last else 0
        self._f = self.path.open("a", encoding="utf-8")
        if self._f.tell() and not self.path.read_bytes().endswith(b"\n"):
            self._f.write("\n")  # end a torn last line: the first record of this run gets a line of its own
        self._lock = threading.Lock()

    def describe(self) -> str:
        """The log line a server starts with: the file, the run, where its batches start, the plot command."""
        where = (f"run {self.run}, batches from {self.batch_offset + 1} (continuing the {self.batch_offset} "
                 "logged before)" if self.run > 1 else "run 1")
        return f"{self.path} ({where}; plot: coderl-reward-log {self.path})"

    def write(self, batch: int, queries: int, seconds: float, means: dict[str, float]) -> None:
        """batch: this run's batch number (from 1); the line's `batch` continues the log's earlier runs."""
        record = {"run": self.run, "batch": self.batch_offset + batch, "run_batch": batch,
                  "time": round(time.time(), 3), "queries": queries, "seconds": round(seconds, 3),
                  **{k: round(v, 5) for k, v in means.items()}}
        line = json.dumps(record) + "\n"
        with self._lock:
            self._f.write(line)
            self._f.flush()

    def close(self) -> None:
        with self._lock:
            self._f.close()


def _last_record(path: Path) -> dict | None:
    """The last whole record of an existing log (a torn last line is passed over), or None."""
    try:
        with path.open("rb") as f:
            f.seek(0, 2)
            size = f.tell()
            f.seek(max(0, size - (1 << 16)))
            tail = f.read().decode("utf-8", "replace").splitlines()
    except FileNotFoundError:
        return None
    for line in reversed(tail):
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(record, dict) and "batch" in record:
            return record
    return None


def read(path: str | Path) -> list[dict]:
    """The log's records; a torn last line (the server killed mid-write) is skipped."""
    out = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return out


def plot(path: str | Path, out: str | Path) -> Path:
    """One panel per PLOTTED key against the batch number, written to out (PNG); titled with the log's path
    and runs, a dashed line where each restart's run begins."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    records = read(path)
    if not records:
        raise ValueError(f"{path}: no batches logged yet")
    keys = [k for k in PLOTTED if any(k in r for r in records)]
    starts: list[tuple[int, int]] = []  # (run id, its first batch); a log older than run ids is run 1
    for r in records:
        if not starts or r.get("run", 1) != starts[-1][0]:
            starts.append((r.get("run", 1), r["batch"]))
    cols = 2
    fig, axes = plt.subplots((len(keys) + cols - 1) // cols, cols, figsize=(11, 2.4 * ((len(keys) + 1) // cols)),
                             sharex=True, squeeze=False)
    for ax, key in zip(axes.flat, keys, strict=False):
        pts = [(r["batch"], r[key]) for r in records if key in r]
        ax.plot([p[0] for p in pts], [p[1] for p in pts], lw=1)
        ax.set_title(key, fontsize=9)
        for _run, first in starts[1:]:
            ax.axvline(first, color="grey", ls="--", lw=0.8)
    for ax in list(axes.flat)[len(keys):]:
        ax.axis("off")
    runs = f"run {starts[0][0]}" if len(starts) == 1 else f"runs {starts[0][0]}-{starts[-1][0]} (dashed: a restart)"
    fig.suptitle(f"{path}: {runs}, {len(records)} batches", fontsize=10)
    fig.supxlabel("reward-server batch (≈ one rollout micro batch), continued across restarts")
    fig.tight_layout()
    dest = Path(out)
    fig.savefig(dest, dpi=90)
    plt.close(fig)
    return dest


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="coderl-reward-log", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    add_version_flag(p)
    p.add_argument("log", help="the JSONL the server's --reward_log wrote")
    p.add_argument("--out", default=None, help="PNG to write (default: the log's path with .png)")
    args = p.parse_args(argv)
    try:
        dest = plot(args.log, args.out or Path(args.log).with_suffix(".png"))
    except ModuleNotFoundError:
        print(f"error: plotting needs matplotlib: {sys.executable} -m pip install matplotlib", file=sys.stderr)
        return 2
    except (OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(dest)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The per-batch reward log: one JSON line per scored batch (means of the reward and its components, pass
rate, unmatched rate, seconds) — per-step curves where the trainer drops extra_logs (OpenRLHF 0.5.7) —
and its plot.

    python rewards/reward_server.py --data_path D --reward_log runs/grpo_7b_zero2/logs/rewards.jsonl
    python -m coderl.rewards.reward_log runs/grpo_7b_zero2/logs/rewards.jsonl   # -> rewards.png beside it
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from pathlib import Path

# What the plot draws, one panel each, in this order (keys of a log line).
PLOTTED = ("reward", "score", "correctness", "format", "syntax", "length", "unmatched", "no_code", "timeout",
           "seconds")


class RewardLog:
    """Appends one line per batch; each line is one write of a complete JSON object, flushed at once, so a
    reader (or a crash) never sees half a record except possibly the last."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._f = self.path.open("a", encoding="utf-8")
        self._lock = threading.Lock()

    def write(self, batch: int, queries: int, seconds: float, means: dict[str, float]) -> None:
        record = {"batch": batch, "time": round(time.time(), 3), "queries": queries, "seconds": round(seconds, 3),
                  **{k: round(v, 5) for k, v in means.items()}}
        line = json.dumps(record) + "\n"
        with self._lock:
            self._f.write(line)
            self._f.flush()

    def close(self) -> None:
        with self._lock:
            self._f.close()


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
    """One panel per PLOTTED key against the batch number, written to out (PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    records = read(path)
    if not records:
        raise ValueError(f"{path}: no batches logged yet")
    keys = [k for k in PLOTTED if any(k in r for r in records)]
    cols = 2
    fig, axes = plt.subplots((len(keys) + cols - 1) // cols, cols, figsize=(11, 2.4 * ((len(keys) + 1) // cols)),
                             sharex=True, squeeze=False)
    for ax, key in zip(axes.flat, keys, strict=False):
        pts = [(r["batch"], r[key]) for r in records if key in r]
        ax.plot([p[0] for p in pts], [p[1] for p in pts], lw=1)
        ax.set_title(key, fontsize=9)
    for ax in list(axes.flat)[len(keys):]:
        ax.axis("off")
    fig.supxlabel("reward-server batch (≈ one rollout micro batch)")
    fig.tight_layout()
    dest = Path(out)
    fig.savefig(dest, dpi=90)
    plt.close(fig)
    return dest


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m coderl.rewards.reward_log", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("log", help="the JSONL the server's --reward_log wrote")
    p.add_argument("--out", default=None, help="PNG to write (default: the log's path with .png)")
    args = p.parse_args(argv)
    try:
        dest = plot(args.log, args.out or Path(args.log).with_suffix(".png"))
    except ModuleNotFoundError:
        print("error: plotting needs matplotlib: pip install -e '.[learning-check]'", file=sys.stderr)
        return 2
    except (OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(dest)
    return 0


if __name__ == "__main__":
    sys.exit(main())

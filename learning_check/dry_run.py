"""A stand-in GRPO tensorboard log for learning_check.sh DRY_RUN=1 (no GPU run exists to read), named so."""

from __future__ import annotations

import sys
from pathlib import Path


def write_standin_events(tb_dir: str | Path, steps: int = 6) -> None:
    """OpenRLHF's tags (train/reward, train/kl, ...) with made-up rising values, under tb_dir/standin."""
    from torch.utils.tensorboard import SummaryWriter

    w = SummaryWriter(log_dir=str(Path(tb_dir) / "standin"))
    for s in range(1, steps + 1):
        w.add_scalar("train/reward", 0.2 + 0.05 * s, s)
        w.add_scalar("train/kl", 0.001 * s, s)
        w.add_scalar("train/response_length", 60.0 - s, s)
        w.add_scalar("train/group_norm_fallback_frac", max(0.0, 0.5 - 0.05 * s), s)
    w.close()


if __name__ == "__main__":
    write_standin_events(sys.argv[1])

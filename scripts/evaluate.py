#!/usr/bin/env python
"""pass@k of samples or of a checkpoint, graded as training grades: see rewards/evaluation/cli.py (--help)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rewards.evaluation.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())

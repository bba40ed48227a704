#!/usr/bin/env python
"""pass@k of samples or of a checkpoint, graded as training grades: see rewards/evaluation/cli.py (--help)."""

import sys

from coderl.rewards.evaluation.cli import main

if __name__ == "__main__":
    sys.exit(main())

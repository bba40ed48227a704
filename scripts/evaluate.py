#!/usr/bin/env python
"""pass@k of samples or of a checkpoint, graded as training grades: see rewards/evaluation/cli.py (--help)."""

import importlib.util
import os
import sys

if __package__ in (None, "") and importlib.util.find_spec("coderl") is None:
    # Run by path from a checkout where coderl is not installed (a bare GPU box): the checkout's coderl/
    # links its folders as the package.
    sys.path.append(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from coderl.rewards.evaluation.cli import main

if __name__ == "__main__":
    sys.exit(main())

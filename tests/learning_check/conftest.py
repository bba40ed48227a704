"""The TRL dry run of scripts/learning_check.sh, run once per session: the tests that read its outputs share it."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support import REPO_ROOT

SCRIPT = REPO_ROOT / "scripts" / "learning_check.sh"


@dataclass(frozen=True)
class DryRun:
    out: Path  # OUT: task/, data/, seed4/, report/
    env: dict  # the environment it ran with (a rerun on a copy of OUT changes a few knobs)
    stdout: str


@pytest.fixture(scope="session")
def trl_dry_run(tmp_path_factory) -> DryRun:
    """DRY_RUN=1 TRAINER=trl, seed 4, half the warm start's targets near misses; read it, or copy OUT to change it."""
    tmp = tmp_path_factory.mktemp("trl_dry_run")
    env = {**os.environ, "OUT": str(tmp / "lc"), "DRY_RUN": "1", "TRAINER": "trl", "PYTHON": sys.executable,
           "SEEDS": "4", "GRPO_STEPS": "2", "GRPO_ITERATIONS": "1", "SFT_NOISE": "0.5"}
    p = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, env=env, timeout=300, cwd=tmp)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    return DryRun(tmp / "lc", env, p.stdout)

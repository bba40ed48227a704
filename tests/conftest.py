"""Shared fixtures. Everything is built in code; nothing is mocked that can run here."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.support import REPO_ROOT


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


def _wheel(var: str, release: str) -> Path:
    """The wheel scripts/test.sh downloaded and exported in `var` (fails, never skips, when missing)."""
    p = os.environ.get(var)
    assert p and Path(p).is_file(), (
        f"{var} is not set or missing: run the suite through `bash scripts/test.sh`, which downloads "
        f"openrlhf=={release} from PyPI")
    return Path(p)


@pytest.fixture(scope="session")
def openrlhf_wheel() -> Path:
    """The openrlhf==0.5.7 wheel (the pinned release, patches/0*.patch)."""
    return _wheel("CODERL_OPENRLHF_WHEEL", "0.5.7")


@pytest.fixture(scope="session")
def openrlhf_latest_wheel() -> Path:
    """The newest OpenRLHF release coderl has a patch set for (patches/0.11.2/)."""
    return _wheel("CODERL_OPENRLHF_LATEST_WHEEL", "0.11.2")


@pytest.fixture(scope="session")
def verl_path() -> Path:
    """verl (and the few packages its reward path imports) unpacked by scripts/test.sh; fails, never skips."""
    p = os.environ.get("CODERL_VERL_PATH")
    assert p and (Path(p) / "verl" / "__init__.py").is_file(), (
        "CODERL_VERL_PATH is not set or holds no verl/: run the suite through `bash scripts/test.sh`, which "
        "installs verl from PyPI (--no-deps) into .cache/")
    if p not in sys.path:
        sys.path.append(p)
    return Path(p)


@pytest.fixture(scope="session")
def trl_latest_path() -> Path:
    """The current TRL and the newer transformers stack it needs, installed --no-deps by scripts/test.sh; only for
    a subprocess's PYTHONPATH (it would shadow the venv's pinned transformers). Fails, never skips."""
    p = os.environ.get("CODERL_TRL_LATEST_PATH")
    assert p and (Path(p) / "trl" / "__init__.py").is_file(), (
        "CODERL_TRL_LATEST_PATH is not set or holds no trl/: run the suite through `bash scripts/test.sh`, which "
        "installs the current TRL from PyPI (--no-deps) into .cache/")
    return Path(p)


@pytest.fixture(scope="module")
def adversarial_sandbox():
    """A bwrap pool with tight limits for hostile programs (one per test module: no state shared)."""
    from coderl.rewards.config import SandboxConfig
    from coderl.rewards.sandbox import Sandbox

    cfg = SandboxConfig(isolation="bwrap", workers=2, test_timeout_s=1.0, job_timeout_s=8.0, memory_mb=512,
                        max_processes=16)
    with Sandbox(cfg) as s:
        yield s


@pytest.fixture(scope="module", autouse=True)
def _close_cached_backends():
    """The integrations' backends are process-wide (one warm pool per trainer process): a test module that
    made one must not leave its sandbox processes to the modules after it (some count processes)."""
    yield
    from coderl.rewards.integrations import backend

    backend.close_all()


CPU_ADAM_TEST = "test_ds_plan.py::test_cpu_adam_op_builds_and_matches_torch_adamw"


def pytest_collection_finish(session):
    """Start the slowest build of the suite (DeepSpeed's CPU Adam) in the background when its test is selected."""
    if any(item.nodeid.endswith(CPU_ADAM_TEST) for item in session.items):
        from tests.launch.test_ds_plan import start_cpu_adam_build
        start_cpu_adam_build()


def pytest_sessionfinish(session):
    """A CPU-Adam build the session started ends with it."""
    mod = sys.modules.get("tests.launch.test_ds_plan")
    if mod is not None:
        mod.stop_cpu_adam_build()

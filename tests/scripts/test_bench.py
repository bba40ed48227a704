"""scripts/bench/: every benchmark module imports (a moved helper otherwise breaks a benchmark no test runs)."""

from __future__ import annotations

import importlib

import pytest

from tests.support import REPO_ROOT

MODULES = sorted(".".join(p.relative_to(REPO_ROOT).with_suffix("").parts)
                 for p in (REPO_ROOT / "scripts" / "bench").rglob("*.py") if p.name != "__main__.py")


def test_every_benchmark_is_found():
    assert "scripts.bench.sandbox" in MODULES and "scripts.bench.fidelity.measure" in MODULES


@pytest.mark.parametrize("name", MODULES)
def test_benchmark_module_imports(name):
    importlib.import_module(name)


def test_the_fidelity_reference_runs_every_label_format():
    from coderl.rewards.sandbox.inside.formats import NAMES
    from scripts.bench.fidelity import reference

    assert set(reference.REFERENCE) == set(NAMES)

"""The fidelity families' tasks, kept as data: scripts/bench/fidelity/data/<family>.yaml, one list of task
mappings per family (programs as YAML block scalars, byte for byte; the fields each family reads are described
in its *_style.py module).

    from scripts.bench.fidelity.tasks import load
    TASKS = load("mbpp")
"""

from __future__ import annotations

import functools
from pathlib import Path

import yaml

DATA = Path(__file__).resolve().parent / "data"
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml: ~10x faster on the ~1.6 MB of tasks


@functools.cache
def _read(family: str) -> list[dict]:
    with open(DATA / f"{family}.yaml", encoding="utf-8") as f:
        return yaml.load(f, Loader=_LOADER)


def load(family: str) -> list[dict]:
    """The family's tasks (a fresh list of the same task objects: a caller may extend it, not alter a task)."""
    return list(_read(family))


class _Dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):
    """Multi-line strings (programs, test modules) as block scalars, so the files read like the code."""


_Dumper.add_representer(str, lambda d, s: d.represent_scalar("tag:yaml.org,2002:str", s,
                                                              style="|" if "\n" in s else None))


def dump(family: str, tasks: list[dict]) -> None:
    """Write a family's tasks; load(family) must give them back equal, key order and types included."""
    text = yaml.dump(tasks, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=1 << 20)
    if yaml.load(text, Loader=_LOADER) != tasks:
        raise ValueError(f"{family}: the tasks do not survive YAML")
    (DATA / f"{family}.yaml").write_text(text, encoding="utf-8")

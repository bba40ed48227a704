"""One converter per dataset schema, plus a tiny dispatcher (like verl's reward_score per-format modules).

A schema is the layout a dataset is published in; the label formats its tests become are
rewards/sandbox/inside/formats/.

Each schema module defines NAME, SOURCE (default label.source), REQUIRED (columns that identify it),
OPTIONAL (columns read when present), HAS_REFERENCE, and ``convert(row, ctx) -> Problem``; BENCHMARK = True
marks a benchmark, whose rows always go to test. Converters raise CellError for a malformed cell (the CLI adds
file and row) and Skip for a row that is well-formed but unusable (counted in stats.json under its reason).
Adding a schema is its module plus one line in _modules() (docs/datasets.md, "Adding a dataset schema").
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


class CellError(ValueError):
    """A malformed cell; `field` names the column (dotted for nested fields)."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        super().__init__(message)


class Skip(Exception):  # noqa: N818 - a control-flow signal, not an error
    """A row that cannot become a problem; `reason` is the stats.json key it is counted under."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


@dataclass
class Problem:
    """A converted row: prompt text and the fields of its label."""

    source_id: str
    question: str  # normalised for dedup and the split hash
    user: str  # the user message
    format: str
    tests: list
    entry_point: str | None = None
    setup_code: str = ""
    reference: str | None = None
    source: str | None = None  # per-row source (verl's data_source); else --source or the schema's
    extra: dict = field(default_factory=dict)
    ref_time_s: float | None = None  # the reference's slowest kept test in the sandbox (--verify)
    time_limit_s: float | None = None  # the per-test limit the dataset's own judge applies (label.time_limit_s)
    split: str | None = None  # the row's own split ('train'/'test') where the dataset says (MBPP's task ids)


@dataclass(frozen=True)
class RowContext:
    file: str
    row: int

    @property
    def fallback_id(self) -> str:
        """source_id for rows without an id column: FILE_NAME:ROW (the name, not the machine's path)."""
        return f"{self.file.rsplit('/', 1)[-1]}:{self.row}"

    def source_id(self, *candidates) -> str:
        """The first candidate id that is neither None nor empty, as a string; else fallback_id."""
        return next((str(c) for c in candidates if c not in (None, "")), self.fallback_id)


# --- cell helpers shared by the converters -------------------------------------------------------------

def text(row: dict, name: str, *, required: bool = True) -> str | None:
    """A string cell; None/empty is an error when required."""
    v = row.get(name)
    if v is None or (isinstance(v, str) and not v.strip()):
        if required:
            raise CellError(name, "is null or empty")
        return None
    if not isinstance(v, str):
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return str(v)
        raise CellError(name, f"expected a string, got {type(v).__name__}")
    return v


def json_cell(row: dict, name: str, *, required: bool = True) -> Any:
    """A cell holding JSON text, or already-nested data (parquet list/struct columns) passed through."""
    v = row.get(name)
    if v is None or (isinstance(v, str) and not v.strip()):
        if required:
            raise CellError(name, "is null or empty")
        return None
    if isinstance(v, str):
        try:
            return json.loads(v)
        except json.JSONDecodeError as e:
            raise CellError(name, f"is not valid JSON: {e}") from None
    return v


def str_list(value: Any, name: str) -> list[str]:
    """A list of non-empty strings (nulls inside are dropped); error naming `name` otherwise."""
    if value is None:
        return []
    if not isinstance(value, (list, tuple)):
        raise CellError(name, f"expected a list of strings, got {type(value).__name__}")
    out = []
    for i, v in enumerate(value):
        if v is None:
            continue
        if not isinstance(v, str):
            raise CellError(f"{name}[{i}]", f"expected a string, got {type(v).__name__}")
        if v.strip():
            out.append(v)
    return out


# --- dispatcher --------------------------------------------------------------------------------------

def _modules():
    import importlib

    # Order matters: the first whose REQUIRED columns are all present wins (most specific first).
    return [importlib.import_module(f"coderl.data.schemas.{name}") for name in (
        "coderm",
        "humaneval",
        "mbpp",
        "apps_taco",
        "kodcode",
        "codeforces",
        "livecodebench",
        "deepcoder",
        "prime_verifiable",
        "code_contests",
        "rstar_coder",
        "acecode",
        "verl",
    )]


def sidecar_of(path, root) -> str | None:
    """The schema whose converter reads this file with its problems (its SIDECARS patterns, matched against the
    path below root: open-r1/codeforces' generated_tests/*.parquet), else None."""
    from pathlib import PurePosixPath

    p = Path(path)
    rel = PurePosixPath(*(p.relative_to(root).parts if p.is_relative_to(root) else p.parts[-2:]))
    for m in _modules():
        if any(rel.match(pattern) for pattern in getattr(m, "SIDECARS", ())):
            return m.NAME
    return None


def is_benchmark(mod) -> bool:
    """True for a benchmark's schema: its rows are test rows, never train (docs/datasets.md, "Split")."""
    return bool(getattr(mod, "BENCHMARK", False))


def known() -> dict:
    return {m.NAME: m for m in _modules()}


def detect(columns: list[str]):
    """The format module whose REQUIRED columns are all in `columns`; ValueError listing both otherwise."""
    cols = set(columns)
    for m in _modules():
        if set(m.REQUIRED) <= cols:
            return m
    raise ValueError(unknown_schema_message(columns))


def nearest(columns: list[str]):
    """(module, missing REQUIRED columns) of the known schema the columns come closest to."""
    cols = set(columns)
    best = max(_modules(), key=lambda m: (len(set(m.REQUIRED) & cols) / len(m.REQUIRED), -len(m.REQUIRED)))
    return best, [c for c in best.REQUIRED if c not in cols]


def unknown_schema_message(columns: list[str]) -> str:
    mod, missing = nearest(columns)
    lines = [f"unknown dataset schema; columns found: {', '.join(columns) or '(none)'}",
             f"nearest known schema: {mod.NAME}, which also needs {', '.join(missing)}", "known schemas:"]
    for m in _modules():
        lines.append(f"  {m.NAME}: {', '.join(m.REQUIRED)}")
    lines.append(f"a renamed copy of a known dataset: --columns {missing[0]}=YOUR_COLUMN (docs/datasets.md, "
                 "\"Reading\"); a dataset whose layout is none of these is not supported yet (\"Adding a dataset "
                 "schema\")")
    return "\n".join(lines)


def parse_columns(specs: list[str]) -> dict[str, str]:
    """--columns SCHEMA_COLUMN=FILE_COLUMN ... -> {file column: schema column}; ValueError naming a bad one."""
    out: dict[str, str] = {}
    for spec in specs:
        want, sep, have = spec.partition("=")
        if not sep or not want.strip() or not have.strip():
            raise ValueError(f"--columns {spec!r}: expected SCHEMA_COLUMN=FILE_COLUMN, e.g. question=problem")
        if have.strip() in out:
            raise ValueError(f"--columns: file column {have.strip()!r} is mapped twice")
        out[have.strip()] = want.strip()
    return out


def get(name: str):
    """The format module called `name`; ValueError listing the known ones."""
    mods = known()
    if name not in mods:
        raise ValueError(f"unknown --format {name!r}; known: {', '.join(mods)}")
    return mods[name]

"""DataError: bad input data (a parquet file, a training JSONL, a samples file); the hint for a missing
dependency of the command-line tools. Standard library only: the tools import this before anything else."""

from __future__ import annotations

import os
import sys
from pathlib import Path


class DataError(ValueError):
    """Bad input; the message names the file and, where known, the row and field."""

    def __init__(self, message: str, *, file: str | None = None, row: int | None = None,
                 field: str | None = None) -> None:
        self.file, self.row, self.field = file, row, field
        where = ", ".join(p for p in (
            f"file {file}" if file else "",
            f"row {row}" if row is not None else "",
            f"field {field!r}" if field else "") if p)
        super().__init__(f"{where}: {message}" if where else message)


def missing_dependency(e: ModuleNotFoundError) -> str:
    """`error: …` for a tool run by an interpreter without coderl's dependencies: most often the quickstart's
    .venv is not active; say what to activate (or install)."""
    root = Path(__file__).resolve().parents[1]
    venv = root / ".venv"
    here = Path.cwd()
    rel = os.path.relpath(venv, here) if venv.is_relative_to(here) and here != Path("/") else str(venv)
    fix = (f"activate the virtualenv the quickstart made: source {rel}/bin/activate (or run {rel}/bin/python)"
           if (venv / "bin" / "python").exists() else
           f"install them: bash {root}/scripts/quickstart.sh, or {sys.executable} -m pip install -e {root}")
    return f"error: No module named {e.name!r}: {sys.executable} lacks coderl's dependencies; {fix}"

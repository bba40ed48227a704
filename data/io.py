"""Streaming parquet input and atomic output (rewards/atomic_outputs.py) for the preprocessing CLI."""

from __future__ import annotations

import fnmatch
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from coderl.rewards.atomic_outputs import AtomicOutputs  # noqa: F401  (the preprocessor writes through io)
from coderl.rewards.errors import DataError  # callers catch io.DataError


def list_input_files(path: str | os.PathLike, pattern: str = "*.parquet") -> list[Path]:
    """The parquet files to read: `path` itself, or the files under it matching `pattern`, sorted."""
    p = Path(path)
    if p.is_file():
        return [p]
    if not p.is_dir():
        raise DataError(f"input path does not exist: {p}")
    # rglob so HF-style layouts (data/train-0000-of-0002.parquet) work when pointed at the dataset root.
    files = sorted(f for f in p.rglob("*") if f.is_file() and fnmatch.fnmatch(f.name, pattern))
    if not files:
        raise DataError(f"no files matching {pattern!r} under {p} (use --input_glob to choose others)")
    return files


# A file's own split, from the names the hub and the RL recipes give split files: `train-00000-of-00011.parquet`,
# `test.parquet`, `validation-*`, `refs/convert/parquet`'s `default/train/0000.parquet`, rllm's
# `train_primeintellect.parquet`. Validation is held out like test (the output has train and test only); MBPP's
# `prompt` split (its few-shot examples) is training data.
_SPLIT_WORDS = {"train": "train", "training": "train", "prompt": "train",
                "test": "test", "validation": "test", "valid": "test", "val": "test", "dev": "test"}


def file_split(path: Path, root: Path) -> str | None:
    """'train' or 'test' when the file's name (else a folder between `root` and it) names a split, else None."""
    p, r = Path(path), Path(root)
    folders = p.parent.relative_to(r).parts if p.parent.is_relative_to(r) else ()
    parts = [p.name.split(".")[0], *reversed(folders)]
    for part in parts:
        for word in re.split(r"[-_.]", part.lower()):
            if word in _SPLIT_WORDS:
                return _SPLIT_WORDS[word]
    return None


def open_parquet(path: Path) -> pq.ParquetFile:
    """Open a parquet file (reads only the footer), turning pyarrow's errors into a DataError."""
    try:
        # pre_buffer=False: with it on, pyarrow keeps every row group's pre-buffered column chunks until
        # the reader is done, so memory grew with the file (≈ +1.7 MB per 1000 CodeRM rows).
        return pq.ParquetFile(path, pre_buffer=False)
    except (pa.ArrowException, OSError) as e:
        raise DataError(f"not a readable parquet file: {e}", file=str(path)) from None


class JsonlFile:
    """A JSON Lines file (one object per line: LiveCodeBench publishes its problems so), read as a table whose
    columns are the first object's keys; like a ParquetFile, it is opened cheaply and streamed row by row."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        try:
            with open(self.path, "rb") as fh:
                first = next((line for line in fh if line.strip()), b"")
                self.num_rows = (1 if first else 0) + sum(1 for line in fh if line.strip())
            obj = json.loads(first) if first else {}
        except (OSError, ValueError) as e:
            raise DataError(f"not a readable JSON Lines file: {e}", file=str(path)) from None
        if not isinstance(obj, dict):
            raise DataError(f"not a JSON Lines file of objects (line 1 is a {type(obj).__name__})", file=str(path))
        self.columns = list(obj)

    def rows(self, columns: list[str]) -> Iterator[tuple[int, dict | DataError]]:
        row = 0
        with open(self.path, "rb") as fh:
            for line in fh:
                if not line.strip():
                    continue
                try:
                    obj = json.loads(line)
                    if not isinstance(obj, dict):
                        raise ValueError(f"a {type(obj).__name__}, not an object")
                    yield row, {c: obj.get(c) for c in columns}
                except ValueError as e:  # JSONDecodeError and invalid UTF-8 included
                    yield row, DataError(f"is not a JSON object: {e}", file=str(self.path), row=row)
                row += 1


def open_input(path: Path):
    """A ParquetFile or JsonlFile (by the name's ending) with `columns` and `num_rows`, only its footer or its
    lines counted read; a DataError names the file otherwise."""
    if Path(path).suffix in (".jsonl", ".ndjson"):
        return JsonlFile(path)
    pf = open_parquet(path)
    pf.columns, pf.num_rows = pf.schema_arrow.names, pf.metadata.num_rows
    return pf


def iter_rows(pf, path: Path, columns: list[str], batch_size: int = 64) -> Iterator[tuple[int, dict]]:
    """Yield (row_index, row_dict) with only `columns`, one record batch in memory at a time; a row with a cell
    that cannot be read (invalid UTF-8) comes as (row_index, DataError) and the rows after it still come."""
    if isinstance(pf, JsonlFile):
        yield from pf.rows(columns)
        return
    row = 0
    batches = pf.iter_batches(batch_size=batch_size, columns=columns)
    while True:
        try:
            batch = next(batches)
        except StopIteration:
            return
        except (pa.ArrowException, OSError) as e:
            raise DataError(f"corrupt data near this row: {e}", file=str(path), row=row) from None
        try:
            rows = batch.to_pylist()
        except UnicodeDecodeError:
            rows = _rows_naming_bad_text(batch, path, row)
        for r in rows:
            yield row, r
            row += 1


def _rows_naming_bad_text(batch: pa.RecordBatch, path: Path, first_row: int) -> list:
    """The batch's rows, cell by cell, where a string cell is not valid UTF-8 (parquet does not check it): such
    a row becomes a DataError naming file, row and column, for the caller to stop on or skip."""
    names = batch.schema.names
    rows: list = [{} for _ in range(batch.num_rows)]
    for name, col in zip(names, batch.columns, strict=True):
        try:
            values = col.to_pylist()
        except UnicodeDecodeError:
            values = []
            for i in range(len(col)):
                try:
                    values.append(col[i].as_py())
                except UnicodeDecodeError as e:
                    bad = e.object[max(0, e.start - 20):e.end + 20]
                    values.append(DataError(f"is not valid UTF-8 text ({e.reason} at byte {e.start}: "
                                            f"{bad!r})", file=str(path), row=first_row + i, field=name))
        for r, v in zip(rows, values, strict=True):
            r[name] = v
    return [next((v for v in r.values() if isinstance(v, DataError)), r) for r in rows]

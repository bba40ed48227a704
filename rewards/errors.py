"""DataError: bad input data (a parquet file, a training JSONL, a samples file)."""

from __future__ import annotations


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

"""Several output files written at once and published together, or not at all (the preprocessor's JSONL and
stats, an evaluation's results)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Collection
from pathlib import Path


def _mkstemp(name: str, out_dir: Path) -> tuple[int, str]:
    """A temp file next to its destination, with the mode a plain open() would give (mkstemp uses 0600)."""
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=out_dir)
    umask = os.umask(0)
    os.umask(umask)
    os.fchmod(fd, 0o666 & ~umask)
    return fd, tmp


class AtomicOutputs:
    """Write several files into `out_dir` through temp files; publish them only on `commit()`.

    Temp files live in `out_dir` itself (same filesystem, so os.replace is atomic). If the block exits
    with an exception, or `commit()` is never reached, the temps are removed and any previous outputs
    stay untouched.
    """

    def __init__(self, out_dir: str | os.PathLike, names: list[str], binary: Collection[str] = ()) -> None:
        self.out_dir = Path(out_dir)
        self.names = names
        self.binary = set(binary)  # names opened "wb" (parquet), the others as UTF-8 text
        self.handles: dict = {}
        self.tmp_paths: dict[str, str] = {}
        self.committed = False

    def __enter__(self) -> AtomicOutputs:
        self.out_dir.mkdir(parents=True, exist_ok=True)
        for name in self.names:
            fd, tmp = _mkstemp(name, self.out_dir)
            self.tmp_paths[name] = tmp
            self.handles[name] = (os.fdopen(fd, "wb") if name in self.binary
                                  else os.fdopen(fd, "w", encoding="utf-8"))
        return self

    def __getitem__(self, name: str):
        return self.handles[name]

    def commit(self, texts: dict[str, str] | None = None) -> None:
        """Write `texts` (small files, e.g. stats.json) to temps too, fsync all, then rename them into place.

        Every temp is complete before the first rename; the `texts` files are renamed last, so a
        stats.json next to the JSONL files always describes them.
        """
        for name, text in (texts or {}).items():
            fd, tmp = _mkstemp(name, self.out_dir)
            self.tmp_paths[name] = tmp
            self.handles[name] = os.fdopen(fd, "w", encoding="utf-8")
            self.handles[name].write(text)
        for fh in self.handles.values():
            fh.flush()
            os.fsync(fh.fileno())
            fh.close()
        for name, tmp in self.tmp_paths.items():
            os.replace(tmp, self.out_dir / name)
        self.committed = True

    def __exit__(self, *exc) -> None:
        if self.committed:
            return
        for fh in self.handles.values():
            fh.close()
        for tmp in self.tmp_paths.values():
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass

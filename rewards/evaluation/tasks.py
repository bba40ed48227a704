"""The problems of a data JSONL (as data/preprocess.py writes it), keyed by task_id = label.source_id."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ..errors import DataError
from ..prompt_index import IndexedProblem, load_problems


@dataclass(frozen=True)
class Tasks:
    """Problems in file order, by task id, and the sha256 of the file they came from."""

    path: str
    sha256: str
    by_id: dict[str, IndexedProblem]

    def __len__(self) -> int:
        return len(self.by_id)

    def ids(self) -> list[str]:
        return list(self.by_id)


def load_tasks(path: str | Path) -> Tasks:
    """Parse and validate every row; DataError naming the file and line for a bad row or an ambiguous task id."""
    problems, sha = load_problems(path)
    by_id: dict[str, IndexedProblem] = {}
    for pr in problems:
        tid = pr.label.source_id
        if not tid:
            raise DataError(f"{path}: line {pr.line}: the label has no source_id, which is the task_id samples "
                            "refer to (data/preprocess.py always writes one)")
        first = by_id.get(tid)
        if first is None:
            by_id[tid] = pr
        elif first.label_json != pr.label_json:
            raise DataError(f"{path}: lines {first.line} and {pr.line} are different problems with the same "
                            f"source_id {tid!r} (sources {first.label.source!r}, {pr.label.source!r}); "
                            "evaluate one source per file")
        # else: the same problem twice (a duplicated row) -- one task
    return Tasks(str(path), sha, by_id)


def split_note(path: str | Path) -> str | None:
    """What a split file leaves out of its benchmark, from the stats.json data/preprocess.py wrote beside it:
    the test split holds --test_ratio of the problems (the rest are in train.jsonl); None for a whole benchmark."""
    p = Path(path)
    try:
        stats = json.loads((p.parent / "stats.json").read_text(encoding="utf-8"))
        ratio, splits = float(stats["args"]["test_ratio"]), stats["splits"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    split = {"test.jsonl": "test", "train.jsonl": "train"}.get(p.name)
    if split is None or split not in splits:
        return None
    total, here = sum(splits.values()), splits[split]
    if here >= total:
        return None
    return (f"{p} is the {split} split of a data/preprocess.py run (--test_ratio {ratio:g}): {here} of the "
            f"{total} problems it wrote; the other {total - here} are in "
            f"{p.parent / ('train.jsonl' if split == 'test' else 'test.jsonl')}. To score a whole benchmark, "
            "preprocess it with --test_ratio 1.0 (every problem in test.jsonl)")

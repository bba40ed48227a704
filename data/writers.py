"""The row layout of each --output_format: OpenRLHF JSONL, TRL JSONL, verl parquet.

    openrlhf  train/test.jsonl    {"input": [system, user], "label": LABEL}       (--input_key input --label_key label)
    trl       train/test.jsonl    {"prompt": [system, user], "coderl_label": LABEL}  (rewards/integrations/trl.py)
    verl      train/test.parquet  data_source, prompt, ability, reward_model {style, ground_truth: LABEL},
                                  extra_info {split, index, source_id}          (rewards/integrations/verl.py)

LABEL is the label JSON string (docs/label_format.md) in every format.
"""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq

from coderl.rewards.labels import TRL_LABEL_COLUMN

from .io import AtomicOutputs

OUTPUT_FORMATS = ("openrlhf", "trl", "verl")
SPLITS = ("train", "test")

_MESSAGES = pa.list_(pa.struct([("role", pa.string()), ("content", pa.string())]))
VERL_SCHEMA = pa.schema([
    ("data_source", pa.string()),
    ("prompt", _MESSAGES),
    ("ability", pa.string()),
    ("reward_model", pa.struct([("style", pa.string()), ("ground_truth", pa.string())])),
    ("extra_info", pa.struct([("split", pa.string()), ("index", pa.int64()), ("source_id", pa.string())])),
])
_PARQUET_ROWS = 256  # rows buffered per record batch (row group); CodeRM labels reach 400 KB each
_PARQUET_BYTES = 64 * 2**20


def file_names(fmt: str) -> list[str]:
    """The two split files of an output format, train first."""
    ext = "parquet" if fmt == "verl" else "jsonl"
    return [f"{split}.{ext}" for split in SPLITS]


class RowWriter:
    """Writes problems as rows of one output format into the temp files of an AtomicOutputs."""

    def __init__(self, fmt: str, out: AtomicOutputs) -> None:
        if fmt not in OUTPUT_FORMATS:
            raise ValueError(f"--output_format must be one of {', '.join(OUTPUT_FORMATS)}, got {fmt!r}")
        self.fmt, self.out = fmt, out
        self.names = dict(zip(SPLITS, file_names(fmt), strict=True))
        self.count = dict.fromkeys(SPLITS, 0)
        self._rows: dict[str, list[dict]] = {s: [] for s in SPLITS}
        self._bytes = dict.fromkeys(SPLITS, 0)
        self._parquet: dict[str, pq.ParquetWriter] = {}

    def write(self, split: str, messages: list[dict], label_json: str, source: str, source_id: str) -> None:
        index = self.count[split]
        self.count[split] += 1
        if self.fmt == "openrlhf":
            row = {"input": messages, "label": label_json}
        elif self.fmt == "trl":
            row = {"prompt": messages, TRL_LABEL_COLUMN: label_json}
        else:
            self._add_parquet(split, {
                "data_source": source, "prompt": messages, "ability": "code",
                "reward_model": {"style": "rule", "ground_truth": label_json},
                "extra_info": {"split": split, "index": index, "source_id": source_id}}, len(label_json))
            return
        self.out[self.names[split]].write(json.dumps(row, ensure_ascii=False) + "\n")

    def _add_parquet(self, split: str, row: dict, size: int) -> None:
        self._rows[split].append(row)
        self._bytes[split] += size
        if len(self._rows[split]) >= _PARQUET_ROWS or self._bytes[split] >= _PARQUET_BYTES:
            self._flush(split)

    def _flush(self, split: str) -> None:
        writer = self._parquet.get(split)
        if writer is None:
            writer = self._parquet[split] = pq.ParquetWriter(self.out[self.names[split]], VERL_SCHEMA)
        if self._rows[split]:
            writer.write_batch(pa.RecordBatch.from_pylist(self._rows[split], schema=VERL_SCHEMA))
        self._rows[split], self._bytes[split] = [], 0

    def close(self) -> None:
        """Finish the files (parquet footers; an empty split is still a valid parquet file). Before commit."""
        if self.fmt != "verl":
            return
        for split in SPLITS:
            self._flush(split)
            self._parquet.pop(split).close()

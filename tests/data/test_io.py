"""Tests for data/io.py: atomic multi-file outputs and input discovery."""

from __future__ import annotations

import os

import pytest

from coderl.data import io

pytestmark = pytest.mark.timeout(30)


def test_atomic_outputs_commit_and_abort(tmp_path):
    out = tmp_path / "o"
    with io.AtomicOutputs(out, ["a.jsonl"]) as w:
        w["a.jsonl"].write("new\n")
        assert not (out / "a.jsonl").exists()  # nothing visible before commit
        w.commit({"stats.json": "{}\n"})
    assert (out / "a.jsonl").read_text() == "new\n" and (out / "stats.json").read_text() == "{}\n"
    assert oct((out / "a.jsonl").stat().st_mode & 0o777) != oct(0o600)  # not mkstemp's private mode
    with pytest.raises(RuntimeError):
        with io.AtomicOutputs(out, ["a.jsonl"]) as w:
            w["a.jsonl"].write("half")
            raise RuntimeError("boom")
    assert (out / "a.jsonl").read_text() == "new\n"
    assert sorted(os.listdir(out)) == ["a.jsonl", "stats.json"]


def test_list_input_files(tmp_path):
    with pytest.raises(io.DataError, match="does not exist"):
        io.list_input_files(tmp_path / "missing")
    (tmp_path / "x.txt").write_text("")
    with pytest.raises(io.DataError, match="--input_glob"):
        io.list_input_files(tmp_path)
    with pytest.raises(io.DataError, match="x.txt"):
        io.open_parquet(tmp_path / "x.txt")


def test_data_error_message_names_everything():
    e = io.DataError("is null", file="f.parquet", row=3, field="question")
    assert str(e) == "file f.parquet, row 3, field 'question': is null"


def test_iter_rows_turns_a_row_with_invalid_utf8_into_its_error_and_reads_on(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    raw = pa.array([b"ok", b"bad \xff", b"fine"], type=pa.binary())
    table = pa.table({"n": [0, 1, 2], "text": pa.Array.from_buffers(pa.string(), 3, raw.buffers())})
    pq.write_table(table, tmp_path / "t.parquet")
    rows = list(io.iter_rows(io.open_parquet(tmp_path / "t.parquet"), tmp_path / "t.parquet", ["n", "text"]))
    assert [i for i, _ in rows] == [0, 1, 2]
    assert rows[0][1] == {"n": 0, "text": "ok"} and rows[2][1] == {"n": 2, "text": "fine"}
    err = rows[1][1]
    assert isinstance(err, io.DataError) and (err.row, err.field) == (1, "text") and "\\xff" in str(err)


def test_file_split_from_the_names_the_hub_and_recipes_give(tmp_path):
    cases = {"data/train-00000-of-00011.parquet": "train", "data/test-00002-of-00008.parquet": "test",
             "validation.parquet": "test", "full/prompt-00000-of-00001.parquet": "train",
             "default/train/0000.parquet": "train", "rllm/test_livecodebench.parquet": "test",
             "deepcoder_train.parquet": "train", "humaneval.parquet": None, "contest/data.parquet": None}
    for rel, split in cases.items():
        assert io.file_split(tmp_path / rel, tmp_path) == split, rel
    # folders above the input root say nothing: a test-named tmp dir must not make its files test rows
    assert io.file_split(tmp_path / "test_run" / "in" / "x.parquet", tmp_path / "test_run" / "in") is None
    assert io.file_split(tmp_path / "x.parquet", tmp_path / "x.parquet") is None

"""rewards/reward_log.py: whole lines under concurrent batches, a torn last line skipped, the plot and its CLI."""

from __future__ import annotations

import json
import threading

import pytest

from coderl.rewards.reward_log import RewardLog, main, read

pytestmark = pytest.mark.timeout(120)


def test_concurrent_batches_write_whole_lines(tmp_path):
    log = RewardLog(tmp_path / "logs" / "rewards.jsonl")  # the directory is made

    def writer(t: int) -> None:
        for i in range(200):
            log.write(t * 1000 + i, 64, 0.5, {"reward": i / 200, "unmatched": 0.0, "note_" + "x" * 500: 1.0})

    threads = [threading.Thread(target=writer, args=(t,)) for t in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    log.close()
    lines = (tmp_path / "logs" / "rewards.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]  # every line a whole record
    assert len(records) == 1600 and len({r["batch"] for r in records}) == 1600
    assert all(r["queries"] == 64 and r["seconds"] == 0.5 for r in records)


def test_torn_last_line_is_skipped_and_the_plot_is_written(tmp_path):
    path = tmp_path / "rewards.jsonl"
    log = RewardLog(path)
    for b in range(1, 6):
        log.write(b, 8, 0.1 * b, {"reward": b / 10, "score": b / 20, "correctness": b / 20, "unmatched": 0.0})
    log.close()
    with path.open("a") as f:
        f.write('{"batch": 6, "rew')  # the server killed mid-line
    assert [r["batch"] for r in read(path)] == [1, 2, 3, 4, 5]
    assert main([str(path), "--out", str(tmp_path / "plot.png")]) == 0
    assert (tmp_path / "plot.png").read_bytes()[:4] == b"\x89PNG"


def test_cli_errors_are_one_line(tmp_path, capsys):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert main([str(empty)]) == 2 and "no batches logged yet" in capsys.readouterr().err
    assert main([str(tmp_path / "missing.jsonl")]) == 2 and "missing.jsonl" in capsys.readouterr().err

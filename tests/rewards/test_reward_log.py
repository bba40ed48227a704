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


def test_a_restarted_server_continues_the_log(tmp_path):
    """A resumed run reopens the same log: its lines get the next run id and batch numbers after the last
    logged one (a torn last line passed over); the plot draws both runs on one axis."""
    path = tmp_path / "rewards.jsonl"
    first = RewardLog(path)
    assert first.run == 1 and "run 1" in first.describe() and f"coderl-reward-log {path}" in first.describe()
    for b in range(1, 4):
        first.write(b, 8, 0.1, {"reward": 0.1 * b})
    first.close()
    with path.open("a") as f:
        f.write('{"run": 1, "batch": 4, "rew')  # killed mid-line
    second = RewardLog(path)
    assert second.run == 2 and "batches from 4" in second.describe()
    for b in range(1, 3):
        second.write(b, 8, 0.1, {"reward": 0.5})
    second.close()
    third = RewardLog(path)
    third.write(1, 8, 0.1, {"reward": 0.6})
    third.close()
    records = read(path)
    assert [(r["run"], r["batch"], r["run_batch"]) for r in records] == [
        (1, 1, 1), (1, 2, 2), (1, 3, 3), (2, 4, 1), (2, 5, 2), (3, 6, 1)]
    assert main([str(path)]) == 0 and path.with_suffix(".png").read_bytes()[:4] == b"\x89PNG"


def test_a_log_without_run_ids_is_run_1(tmp_path):
    """Logs written before run ids: their batches are run 1's, and a server appending to one starts run 2."""
    path = tmp_path / "old.jsonl"
    path.write_text("".join(json.dumps({"batch": b, "reward": 0.1}) + "\n" for b in (1, 2)))
    log = RewardLog(path)
    log.write(1, 4, 0.1, {"reward": 0.2})
    log.close()
    assert [(r.get("run", 1), r["batch"]) for r in read(path)] == [(1, 1), (1, 2), (2, 3)]


def test_version_and_the_matplotlib_hint_names_no_editable_install(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0 and capsys.readouterr().out.startswith("coderl-reward-log (coderl ")
    import inspect

    import coderl.rewards.reward_log as mod
    assert "pip install -e" not in inspect.getsource(mod)

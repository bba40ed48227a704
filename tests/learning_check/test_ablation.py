"""learning_check/ablation.py over run dirs shaped as scripts/advantage_ablation.sh leaves them."""

from __future__ import annotations

import json

import pytest

from coderl.learning_check import ablation
from tests.learning_check.test_learning_check import _fake_run


def _timings(run, grpo_s, cpu):
    (run / "timings.jsonl").write_text(json.dumps({"stage": "grpo", "seconds": grpo_s, "cpu_seconds": cpu,
                                                   "load1": 3.0}) + "\n")


def test_gains_mean_sd_fallback_and_files(tmp_path):
    for variant, seed, before, after in (("group_norm", 1, 0.10, 0.30), ("group_norm", 2, 0.20, 0.30),
                                         ("std", 1, 0.10, 0.20), ("mean", 1, 0.10, 0.10)):
        run = tmp_path / variant / f"seed{seed}"
        extra = ("train/group_norm_fallback_frac",) if variant == "group_norm" else ()
        _fake_run(run, before, after, [0.1, 0.2, 0.3, 0.4], extra=extra)
        _timings(run, 100 * seed, 150.0)
        (run / "grpo.log").write_text("TRL GRPO: 4 steps\n")
    (tmp_path / "std" / "seed2").mkdir()  # unfinished: no after-evaluation, not counted
    assert ablation.main(["--out", str(tmp_path)]) == 0
    res = json.loads((tmp_path / "ablation.json").read_text())["variants"]
    assert res["group_norm"]["seeds"] == ["seed1", "seed2"] and res["std"]["seeds"] == ["seed1"]
    gn = res["group_norm"]["per_seed"]
    assert gn["seed1"]["gain_points"] == {"pass@1": 20.0, "pass@8": 40.0}
    assert gn["seed1"]["fallback_mean"] == 0.5 and res["std"]["per_seed"]["seed1"]["fallback_mean"] is None
    md = (tmp_path / "ablation.md").read_text()
    assert "| adaptive group norm | 2 | +15.0 ± 7.1 | +30.0 ± 14.1 |" in md  # mean ± sd over the two seeds
    assert "| mean only (Dr. GRPO) | 1 | +0.0 | +0.0 |" in md and "n/a (no fallback)" in md
    assert "100 / 150.0; 200 / 150.0" in md and "No run was re-planned or cut" in md
    assert (tmp_path / "ablation.png").stat().st_size > 0


def test_a_replanned_run_is_flagged_and_no_run_is_an_error(tmp_path, capsys):
    assert ablation.main(["--out", str(tmp_path)]) == 2
    assert "no finished run" in capsys.readouterr().err
    run = tmp_path / "std" / "seed1"
    _fake_run(run, 0.1, 0.2, [0.1, 0.2, 0.3])
    (run / "grpo.log").write_text("time limit: 900 s fits 80 of 130 steps at 11.0 s/step; the lr schedule now ends "
                                  "there\n")
    assert ablation.main(["--out", str(tmp_path)]) == 0
    md = (tmp_path / "ablation.md").read_text()
    assert "**load-dependent: time limit: 900 s fits 80 of 130" in md and "Some runs were re-planned" in md


@pytest.mark.parametrize("values,want", [([1.0], "+100.0"), ([0.1, 0.3], "+20.0 ± 14.1")])
def test_fmt(values, want):
    assert ablation.fmt(values) == want

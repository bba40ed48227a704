"""The synthetic task family: the split, the generator's guarantees, the CLI's parquet through preprocess."""

from __future__ import annotations

import json
import subprocess
import sys

import pyarrow.parquet as pq
import pytest

from coderl.data.synthetic.primitives import BY_NAME, DOMAINS, PRIMITIVES
from coderl.data.synthetic.tasks import MAX_DIFFICULTY, generate, run_chain
from coderl.rewards.labels import parse_label
from tests.support import REPO_ROOT

pytestmark = pytest.mark.timeout(120)


def test_primitives_chain_in_every_domain():
    for d in DOMAINS:
        assert any(p.takes == d for p in PRIMITIVES), d
    assert {p.gives for p in PRIMITIVES} <= set(DOMAINS)


@pytest.mark.parametrize("difficulty, n", [(2, 200), (3, 300), (MAX_DIFFICULTY, 300)])
def test_split_shares_no_structure_and_heldout_uses_seen_steps(difficulty, n):
    train, held = generate(n, 10, difficulty=difficulty, seed=7)
    assert len(train) == n and len(held) == 10
    assert not {p.structure for p in train} & {p.structure for p in held}
    seen = {s.name for p in train for s in p.steps}
    assert all({s.name for s in p.steps} <= seen for p in held)
    assert max(len(p.steps) for p in train) <= difficulty
    keys = [(p.domain, p.steps) for p in train + held]
    assert len(set(keys)) == len(keys)


def test_tests_agree_with_the_step_functions_and_are_not_constant():
    train, held = generate(100, 20, difficulty=3, seed=1)
    for p in train + held:
        outs = set()
        for t in p.tests:
            lhs, rhs = t.removeprefix("assert f(").rsplit(") == ", 1)
            x, y = eval(lhs), eval(rhs)  # literals we wrote ourselves, not model output
            assert run_chain(p.steps, x) == y
            outs.add(repr(y))
        assert len(outs) > 1, p.text
        assert p.text.startswith("Write a function f(x)") and p.code.startswith("def f(x):\n")


def test_same_seed_same_problems_other_seed_other_split():
    a, b = generate(50, 10, seed=3), generate(50, 10, seed=3)
    assert [p.row() for p in a[0] + a[1]] == [p.row() for p in b[0] + b[1]]
    assert [p.text for p in generate(50, 10, seed=4)[0]] != [p.text for p in a[0]]


@pytest.mark.parametrize("kw, msg", [(dict(difficulty=0), "difficulty"), (dict(difficulty=1), "difficulty 1"), (dict(difficulty=99), "difficulty"),
                                     (dict(heldout_ratio=1.0), "heldout_ratio"),
                                     (dict(tests_per_problem=1), "tests_per_problem")])
def test_bad_knobs_are_named(kw, msg):
    with pytest.raises(ValueError, match=msg):
        generate(10, 2, **kw)


def test_too_small_space_is_a_clear_error():
    with pytest.raises(ValueError, match="too small"):
        generate(400, 0, difficulty=1, seed=0)


def test_cli_parquet_goes_through_preprocess_and_the_sandbox(tmp_path):
    out = tmp_path / "synth"
    r = subprocess.run([sys.executable, str(REPO_ROOT / "data/synthetic/make_task.py"), "--out_dir", str(out),
                        "--n_train", "60", "--n_heldout", "12", "--seed", "5"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert pq.read_table(out / "train" / "synthetic.parquet").num_rows == 60
    assert json.loads((out / "meta.json").read_text())["n_heldout"] == 12
    assert not list(out.rglob(".*.tmp"))
    r = subprocess.run([sys.executable, str(REPO_ROOT / "data/preprocess.py"), "--input_dir", str(out / "heldout"),
                        "--output_dir", str(tmp_path / "pp"), "--format", "mbpp", "--test_ratio", "1",
                        "--keep_reference", "--verify", "--workers", "2", "--no_progress", "--answer_format", "code_block",
                        "--system_prompt", "code_block", "--source", "synthetic"],
                       capture_output=True, text=True, timeout=100)
    assert r.returncode == 0, r.stderr
    stats = json.loads((tmp_path / "pp" / "stats.json").read_text())
    # --verify ran every reference solution in the sandbox against its asserts: none may fail.
    assert stats["verify"]["problems_kept"] == 12 and stats["verify"]["tests_dropped"] == 0
    rows = [json.loads(x) for x in (tmp_path / "pp" / "test.jsonl").read_text().splitlines()]
    labels = [parse_label(r["label"]) for r in rows]
    assert {lb.entry_point for lb in labels} == {"f"} and all(lb.reference_solution for lb in labels)
    assert {lb.source for lb in labels} == {"synthetic"}


def test_cli_bad_knob_exits_2_and_writes_nothing(tmp_path):
    r = subprocess.run([sys.executable, str(REPO_ROOT / "data/synthetic/make_task.py"), "--out_dir", str(tmp_path / "o"),
                        "--difficulty", "0"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "difficulty" in r.stderr
    assert not (tmp_path / "o").exists()


def test_every_primitive_is_reachable_by_name():
    assert all(BY_NAME[p.name] is p for p in PRIMITIVES)

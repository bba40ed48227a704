"""learning_check/near_miss.py: every kind rewrites one site into code that parses and differs; the warm
start's demonstrations carry them (real synthetic task, real preprocess, real SFT of a nano model)."""

from __future__ import annotations

import ast
import json
import random
import subprocess
import sys

import pytest

from coderl.data.synthetic.tasks import generate
from coderl.learning_check.near_miss import MUTATIONS, near_miss, normalized
from coderl.learning_check.sft import load_demonstrations
from tests.support import REPO_ROOT

CODE = ("def f(x):\n    x = [v + 3 for v in x if v > 2]\n    x = x[::-1]\n    x = x.replace('ab', 'c') * 2\n"
        "    return x\n")


@pytest.mark.parametrize("kind", sorted(MUTATIONS))
def test_each_kind_rewrites_one_site_into_other_code_that_parses(kind):
    tree = ast.parse(CODE)
    sites = MUTATIONS[kind][0](tree)
    assert sites, f"{kind} finds no site in {CODE!r}"
    seen = set()
    for i in range(len(sites)):
        t = ast.parse(CODE)
        MUTATIONS[kind][0](t)[i](random.Random(i))
        out = ast.unparse(ast.fix_missing_locations(t)) + "\n"
        ast.parse(out)
        seen.add(out)
    assert normalized(CODE) not in seen
    if kind == "drop_step":
        assert all(o.count("\n") == CODE.count("\n") - 1 for o in seen)
        assert len(seen) == 3


def test_near_miss_is_seeded_and_none_where_nothing_applies():
    assert [near_miss(CODE, random.Random(7)) for _ in range(2)] == [near_miss(CODE, random.Random(7))] * 2
    assert near_miss("x = sorted(y)\n", random.Random(0)) is None


def test_synthetic_references_are_normalized_and_most_near_misses_compute_something_else():
    train, _ = generate(200, 0, difficulty=3, seed=0)
    rng = random.Random(0)
    wrong = total = 0
    for p in train:
        assert normalized(p.code) == p.code
        miss = near_miss(p.code, rng)
        if miss is None:
            continue
        total += 1
        ns_ref: dict = {}
        ns_miss: dict = {}
        exec(p.code, ns_ref)  # our own generated reference and its mutant: trusted code
        exec(miss, ns_miss)
        for t in p.tests:
            x = ast.literal_eval(t[len("assert f("):t.rindex(") == ")])
            try:
                if ns_miss["f"](x) != ns_ref["f"](x):
                    wrong += 1
                    break
            except Exception:
                wrong += 1
                break
    assert total > 150 and wrong / total > 0.75, (wrong, total)


def test_warm_start_trains_on_near_misses_it_records(tmp_path):
    task, data = tmp_path / "task", tmp_path / "data"
    py = sys.executable
    subprocess.run([py, "-m", "coderl.data.synthetic.make_task", "--out_dir", str(task), "--n_train", "40",
                    "--n_heldout", "0", "--difficulty", "3", "--seed", "0"], check=True, capture_output=True)
    subprocess.run([py, str(REPO_ROOT / "data" / "preprocess.py"), "--input_dir", str(task / "train"), "--output_dir",
                    str(data), "--test_ratio", "0", "--format", "mbpp", "--keep_reference", "--source", "synthetic",
                    "--no_progress"], check=True, capture_output=True)
    examples, misses = load_demonstrations(data / "train.jsonl", near_misses=3, seed=0)
    assert len(examples) == len(misses) == 40
    assert sum(1 for m in misses if m) >= 35 and max(map(len, misses)) <= 3
    assert all(r not in m for (_, r), m in zip(examples, misses, strict=True))
    out = tmp_path / "sft"
    r = subprocess.run([py, "-m", "coderl.learning_check.warm_start", "--train", str(data / "train.jsonl"),
                        "--out_dir", str(out), "--shape", "nano", "--vocab_size", "400", "--steps", "4",
                        "--batch_size", "4", "--noise", "0.5", "--threads", "1"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    meta = json.loads((out / "warm_start.json").read_text())
    assert meta["noise"] == 0.5 and meta["rows_with_near_misses"] >= 35
    bad = subprocess.run([py, "-m", "coderl.learning_check.warm_start", "--train", str(data / "train.jsonl"),
                          "--out_dir", str(tmp_path / "x"), "--noise", "1.5"], capture_output=True, text=True)
    assert bad.returncode == 2 and "--noise must be in [0, 1)" in bad.stderr

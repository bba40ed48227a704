"""CLI: write the synthetic task as MBPP-schema parquet, train/ and heldout/ (see data/synthetic/tasks.py).

    python data/synthetic/make_task.py --out_dir /tmp/synth --difficulty 3 --seed 0
    python data/preprocess.py --input_dir /tmp/synth/train --output_dir ... --format mbpp --test_ratio 0

Both files are written to temp names and renamed only once both are complete.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from coderl.data.synthetic.tasks import MAX_DIFFICULTY, SynthProblem, generate

SPLITS = ("train", "heldout")


def write_parquet(problems: list[SynthProblem], path: Path) -> None:
    """One parquet file of the problems' MBPP rows, written atomically (temp file + rename)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    pq.write_table(pa.Table.from_pylist([p.row() for p in problems]), tmp)
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out_dir", required=True, help="Gets train/synthetic.parquet, heldout/synthetic.parquet, "
                   "meta.json.")
    p.add_argument("--n_train", type=int, default=4000, help="Train problems.")
    p.add_argument("--n_heldout", type=int, default=200, help="Held-out problems (structures never in train).")
    p.add_argument("--difficulty", type=int, default=3, help=f"Most steps per problem, 1..{MAX_DIFFICULTY}.")
    p.add_argument("--seed", type=int, default=0, help="Seed of the problems and of the split.")
    p.add_argument("--heldout_ratio", type=float, default=0.2, help="Share of structures reserved for held-out.")
    p.add_argument("--tests_per_problem", type=int, default=4, help="Asserts per problem (the first is shown).")
    a = p.parse_args(argv)
    try:
        train, heldout = generate(a.n_train, a.n_heldout, difficulty=a.difficulty, seed=a.seed,
                                  heldout_ratio=a.heldout_ratio, tests_per_problem=a.tests_per_problem)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    out = Path(a.out_dir)
    for split, probs in zip(SPLITS, (train, heldout), strict=True):
        write_parquet(probs, out / split / "synthetic.parquet")
    meta = {k: v for k, v in vars(a).items() if k != "out_dir"}
    meta["structures"] = {s: len({p.structure for p in probs}) for s, probs in zip(SPLITS, (train, heldout),
                                                                                      strict=True)}
    tmp = out / ".meta.json.tmp"
    tmp.write_text(json.dumps(meta, indent=2) + "\n")
    os.replace(tmp, out / "meta.json")
    print(f"wrote {len(train)} train and {len(heldout)} held-out problems to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

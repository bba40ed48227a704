#!/usr/bin/env python
"""Benchmark the value codec (rewards/sandbox/inside/wire.py) against another tree's, in one process.

Workload: the values tests hand to programs and programs return (lists of ints and strings, dicts, nested
lists, sets, tuples, Counters, namedtuples, datetimes, big ints), each encoded, dumped to JSON, loaded and
decoded, as the channel does. The two codecs run alternately, round after round, and the ratio of their
best rounds (CPU time of this process) is reported (>1: this tree is faster).

    python -m scripts.bench.wire --baseline /path/to/other/checkout
"""

from __future__ import annotations

import argparse
import collections
import datetime
import importlib.util
import json
import random
import sys
import time
import types
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def load_inside(root: Path, name: str) -> types.ModuleType:
    """Import <root>/rewards/sandbox/inside as package `name` and return its wire module."""
    inside = root / "rewards" / "sandbox" / "inside"
    spec = importlib.util.spec_from_file_location(name, inside / "__init__.py", submodule_search_locations=[str(inside)])
    package = importlib.util.module_from_spec(spec)
    sys.modules[name] = package
    spec.loader.exec_module(package)
    return importlib.import_module(f"{name}.wire")


def workload(n: int, seed: int = 0, sets: bool = True) -> list:
    rng = random.Random(seed)
    point = collections.namedtuple("Point", "x y")
    values = []
    for i in range(n):
        kind = i % 8
        if kind == 0:
            values.append([rng.randint(-1000, 1000) for _ in range(rng.randint(1, 200))])
        elif kind == 1:
            values.append({f"k{j}": rng.random() for j in range(rng.randint(1, 50))})
        elif kind == 2:
            values.append([[rng.randint(0, 9) for _ in range(10)] for _ in range(rng.randint(1, 30))])
        elif kind == 3 and sets:  # random ints up to 10**6: many collide, so many need their order rebuilt
            values.append({rng.randint(0, 10 ** 6) for _ in range(rng.randint(1, 60))})
        elif kind == 3:
            values.append([rng.randint(0, 10 ** 6) for _ in range(rng.randint(1, 60))])
        elif kind == 4:
            values.append(tuple(str(rng.random()) for _ in range(rng.randint(1, 40))))
        elif kind == 5:
            values.append(collections.Counter(rng.choice("abcdef") for _ in range(50)))
        elif kind == 6:
            values.append([point(rng.randint(0, 9), rng.randint(0, 9)) for _ in range(20)])
        else:
            values.append([datetime.date(2024, 1, 1 + rng.randint(0, 27)), 1 << 5000, frozenset("abc"), b"xy"])
    return values


def run_round(wire, values) -> float:
    def export(obj):
        return ["h", id(obj) & 0xFFFF, {}]

    def resolve(x):
        return None

    t0 = time.process_time()  # this process's CPU: the machine may be busy with others
    for v in values:
        wire.decode(json.loads(json.dumps(wire.encode(v, export))), resolve)
    return time.process_time() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", required=True, help="the other checkout (its rewards/sandbox/inside)")
    ap.add_argument("--values", type=int, default=4000, help="values per round")
    ap.add_argument("--rounds", type=int, default=7, help="rounds per codec, alternating")
    ap.add_argument("--no_sets", action="store_true", help="lists instead of the sets (the rest of the codec)")
    args = ap.parse_args()
    ours, theirs = load_inside(REPO, "inside_ours"), load_inside(Path(args.baseline), "inside_base")
    values = workload(args.values, sets=not args.no_sets)
    sys.setrecursionlimit(max(sys.getrecursionlimit(), ours.RECURSION_ROOM))
    best = {"ours": float("inf"), "baseline": float("inf")}
    for _ in range(args.rounds):
        best["baseline"] = min(best["baseline"], run_round(theirs, values))
        best["ours"] = min(best["ours"], run_round(ours, values))
    print(json.dumps({"values": args.values, "rounds": args.rounds, "sets": not args.no_sets,
                      "baseline_best_s": round(best["baseline"], 4), "ours_best_s": round(best["ours"], 4),
                      "speed_ratio_ours_vs_baseline": round(best["baseline"] / best["ours"], 3)}))


if __name__ == "__main__":
    main()

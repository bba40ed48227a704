"""python -m scripts.bench.cheaters [--only NAME,...] [--n 40] [--workers 2] [--json out.json]"""

from __future__ import annotations

import argparse
import json
import sys
import time

from scripts.bench.cheaters import advantage, families


def main(argv: list[str] | None = None) -> int:
    fams = families()
    ap = argparse.ArgumentParser(prog="python -m scripts.bench.cheaters", description=__doc__)
    ap.add_argument("--only", default="", help=f"comma-separated families (default: all of {', '.join(fams)})")
    ap.add_argument("--n", type=int, default=40, help="trials per side and family")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--json", default="", help="also write the figures here")
    a = ap.parse_args(argv)
    names = [x for x in a.only.split(",") if x] or list(fams)
    unknown = sorted(set(names) - set(fams))
    if unknown:
        ap.error(f"--only: unknown families {unknown}; known: {sorted(fams)}")
    out = {}
    for name in names:
        t0 = time.monotonic()
        res = advantage(fams[name].play(a.n, a.workers))
        res["wall_s"] = round(time.monotonic() - t0, 1)
        out[name] = res
        print(json.dumps({name: res}), flush=True)
    print(f"\n{'family':<24} {'n':>5} {'cheater':>8} {'honest':>8} {'advantage':>10} {'se':>7}  0 within noise")
    for name, r in out.items():
        print(f"{name:<24} {r['n_cheater']:>5} {r['cheater_mean']:>8.3f} {r['honest_mean']:>8.3f} "
              f"{r['advantage']:>+10.3f} {r['se']:>7.3f}  {'yes' if r['zero_within_noise'] else 'NO'}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0 if all(r["zero_within_noise"] for r in out.values()) else 1


if __name__ == "__main__":
    sys.exit(main())

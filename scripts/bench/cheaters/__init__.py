"""What a program gains by choosing when to stop (issue 35): per family, a cheater against its honest twin.

Each module of this package that defines `FAMILY` is one family of time attacks. A family plays `n` trials of a
cheater and of its honest twin (the same program without the trick) through the real sandbox or server and
returns the reward (or pass rate) of each trial; `python -m scripts.bench.cheaters` prints the advantage the
cheater gains over its twin with its standard error. The target is an advantage of 0 within noise.
"""

from __future__ import annotations

import importlib
import math
import pkgutil
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Trials:
    """Rewards of n cheater trials and n honest-twin trials, and what a fair cheater should get (if known)."""

    cheater: list[float]
    honest: list[float]
    notes: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Family:
    """A family of attacks: `play(n, workers)` runs n trials of each side."""

    name: str
    doc: str
    play: Callable[[int, int], Trials]


def families() -> dict[str, Family]:
    """Every family defined in this package, by name."""
    found = {}
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        fam = getattr(module, "FAMILY", None)
        if isinstance(fam, Family):
            found[fam.name] = fam
    return dict(sorted(found.items()))


def advantage(t: Trials) -> dict:
    """Cheater mean minus honest mean, its standard error (Welch) and whether 0 is within two of them."""
    def mean_var(xs: list[float]) -> tuple[float, float]:
        return statistics.fmean(xs), (statistics.variance(xs) if len(xs) > 1 else 0.0)

    (mc, vc), (mh, vh) = mean_var(t.cheater), mean_var(t.honest)
    se = math.sqrt(vc / len(t.cheater) + vh / len(t.honest))
    adv = mc - mh
    return {"n_cheater": len(t.cheater), "n_honest": len(t.honest), "cheater_mean": round(mc, 4),
            "honest_mean": round(mh, 4), "advantage": round(adv, 4), "se": round(se, 4),
            "zero_within_noise": adv <= 2 * se + 1e-9, **t.notes}

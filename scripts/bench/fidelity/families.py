"""The fidelity families beyond HumanEval: name -> module with `programs(seed, every)` and `TASKS`.

    from scripts.bench.fidelity.families import FAMILIES, family_programs
    programs = family_programs(["mbpp", "coderm", "apps"], every=2)   # each Program carries its Label
"""

from __future__ import annotations

from scripts.bench.fidelity import (
    apps_style,
    classeval_style,
    codeforces_style,
    coderm_style,
    heldout2_style,
    heldout_style,
    imports_style,
    kodcode_style,
    livecodebench_style,
    mbpp_style,
)
from scripts.bench.fidelity.corpus import Program

FAMILIES = {"mbpp": mbpp_style, "coderm": coderm_style, "apps": apps_style, "heldout": heldout_style,
            "heldout2": heldout2_style, "imports": imports_style,
            "classeval": classeval_style, "kodcode": kodcode_style,
            "codeforces": codeforces_style, "livecodebench": livecodebench_style}
# The label formats each family's programs run in. The held-out families span them all: it is measured on its own
# (test_fidelity_families.py, `--family heldout`), so that per-format figures stay per family.
FORMATS = {"mbpp": ("assert",), "coderm": ("unittest",), "apps": ("stdio", "call"),
           "heldout": ("unittest", "assert", "humaneval", "stdio", "call"),
           "heldout2": ("unittest", "assert", "humaneval", "stdio", "call"), "imports": ("unittest", "assert"),
           "classeval": ("unittest",), "kodcode": ("pytest",), "codeforces": ("checker",),
           "livecodebench": ("call", "stdio")}
# The families measured together, one family per format.
DISJOINT = ("mbpp", "coderm", "apps")


def family_programs(names=DISJOINT, seed: int = 0, every: int = 1) -> list[Program]:
    """The programs of the named families (every N-th task of each), in family order."""
    return [p for name in names for p in FAMILIES[name].programs(seed=seed, every=every)]


def family_of(fmt: str) -> str:
    return next(name for name, fmts in FORMATS.items() if fmt in fmts)

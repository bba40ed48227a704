"""The trusted side of a job, computed outside the sandbox: the spec a label's jobs carry into the sandbox
(its format's plan: which test cases the label declares, in which order they run), cached per label.

Each format's own rules live in its module (inside/formats/); this is the one dispatcher over them. The
sandbox never sees expected stdio outputs or call return values: it reports what the program printed or
returned, and the format's verdict decides outside (docs/label_format.md has the rules).
"""

from __future__ import annotations

from collections import OrderedDict

from .inside.formats import REGISTRY
from .inside.formats.humaneval import is_case  # noqa: F401  (what one check() case is)

_CACHE: OrderedDict = OrderedDict()
_CACHE_SIZE = 4096


def plan(label) -> dict:
    """What the sandbox runs for this label: {"digest": label.digest, "spec": {format, plan, order, ...}}, cached
    by the label's digest. The spec is a function of the label, so the label's digest names it in the workers'
    and judges' spec caches too."""
    hit = _CACHE.get(label.digest)
    if hit is not None:
        _CACHE.move_to_end(label.digest)
        return hit
    fmt = REGISTRY.get(label.format)
    if fmt is None:  # parse_label prevents this
        raise ValueError(f"unknown label format {label.format!r}")
    spec: dict = {"format": label.format, "entry_point": label.entry_point, "setup_code": label.setup_code,
                  **fmt.plan(label)}
    spec.setdefault("order", list(range(len(spec["plan"]))))
    out = {"digest": label.digest, "spec": spec}
    _CACHE[label.digest] = out
    if len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return out


def count_tests(label) -> int:
    """Number of test cases the label declares, counted statically (ast), outside the sandbox."""
    return len(plan(label)["spec"]["plan"])

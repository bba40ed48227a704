"""The label format: what `data/preprocess.py` writes into each JSONL row and the sandbox executes.

The schema is documented (and versioned) in docs/label_format.md; this module is its single
implementation. A label is a JSON object; in the JSONL it is stored as a JSON *string* under "label"
because OpenRLHF passes labels through as strings.
"""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import asdict, dataclass, field
from typing import Any

from .sandbox.inside.formats import NAMES as FORMATS
from .sandbox.inside.formats import REGISTRY

LABEL_VERSION = 1
# The label's column in TRL datasets. Not "label": TRL (0.14-0.17 at least) reads a prompt + label row as an
# unpaired-preference example and refuses to apply the chat template to it.
TRL_LABEL_COLUMN = "coderl_label"


class LabelError(ValueError):
    """A label that does not follow docs/label_format.md; the message names the field."""


@dataclass(frozen=True)
class Label:
    """One problem's tests, in one of FORMATS; what ``tests`` holds depends on ``format`` (its module in
    rewards/sandbox/inside/formats/, docs/label_format.md)."""

    format: str
    tests: tuple
    entry_point: str | None = None  # function under test (humaneval, call; informative for others)
    setup_code: str = ""  # runs in the solution's namespace before the tests (assert, unittest); call: before the program
    time_limit_s: float | None = None  # per-test wall-clock override; None = derived from ref_time_s or the default
    ref_time_s: float | None = None  # the reference solution's slowest test, seconds (preprocess --verify)
    source: str = ""  # dataset name, e.g. "CodeRM-UnitTest"
    source_id: str = ""  # id within the source dataset
    reference_solution: str | None = None  # kept only when the preprocessor is asked to
    version: int = LABEL_VERSION
    extra: dict = field(default_factory=dict)  # free-form metadata, never read by the executor

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["tests"] = list(self.tests)
        return {k: v for k, v in d.items() if v not in (None, "", {}) or k in ("format", "tests")}

    # The label's one serialisation and its digest, computed once per Label (a label is parsed once, where it
    # enters: the prompt index, a client's label string), then carried to the judge: the result cache's key,
    # the batch's dedup, the plan cache and the workers' spec caches all key on the digest.
    @functools.cached_property
    def json(self) -> str:
        """The canonical JSON (what data/preprocess.py writes)."""
        return json.dumps(self.to_dict(), ensure_ascii=False, sort_keys=True)

    @functools.cached_property
    def digest(self) -> str:
        """BLAKE2b-256 of the canonical JSON, hex."""
        return hashlib.blake2b(self.json.encode("utf-8", "surrogatepass"), digest_size=32).hexdigest()

    def to_json(self) -> str:
        return self.json

    def __getstate__(self) -> dict:
        """Pickled (to a Ray actor) without the JSON, which the far side never needs; the digest travels."""
        state = dict(self.__dict__)
        state.pop("json", None)
        return state


def _require(cond: bool, msg: str) -> None:
    if not cond:
        raise LabelError(msg)


def _check_tests(fmt: str, tests: Any) -> tuple:
    _require(isinstance(tests, list), f"label.tests must be a list, got {type(tests).__name__}")
    _require(len(tests) > 0, "label.tests is empty")
    problem = REGISTRY[fmt].validate_tests(tests)
    _require(problem is None, problem)
    return tuple(tests)


def parse_label(raw: str | dict) -> Label:
    """Parse and validate a label (JSON string or dict); raises LabelError naming the bad field."""
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError as e:
            raise LabelError(f"label is not valid JSON: {e}") from None
    _require(isinstance(raw, dict), f"label must be a JSON object, got {type(raw).__name__}")
    version = raw.get("version", LABEL_VERSION)
    _require(version == LABEL_VERSION, f"label.version {version!r} is not supported (expected {LABEL_VERSION})")
    fmt = raw.get("format")
    _require(fmt in FORMATS, f"label.format must be one of {', '.join(FORMATS)}; got {fmt!r}")
    tests = _check_tests(fmt, raw.get("tests"))
    entry_point = raw.get("entry_point")
    _require(entry_point is None or (isinstance(entry_point, str) and entry_point.isidentifier()),
             f"label.entry_point must be a Python identifier, got {entry_point!r}")
    if REGISTRY[fmt].needs_entry_point:
        _require(entry_point is not None, f"label.entry_point is required for format {fmt!r}")
    setup_code = raw.get("setup_code") or ""
    _require(isinstance(setup_code, str), "label.setup_code must be a string")
    tl = raw.get("time_limit_s")
    _require(tl is None or (isinstance(tl, (int, float)) and 0 < tl <= 60),
             f"label.time_limit_s must be a number in (0, 60], got {tl!r}")
    rt = raw.get("ref_time_s")
    _require(rt is None or (isinstance(rt, (int, float)) and not isinstance(rt, bool) and 0 <= rt <= 600),
             f"label.ref_time_s must be a number of seconds in [0, 600], got {rt!r}")
    ref = raw.get("reference_solution")
    _require(ref is None or isinstance(ref, str), "label.reference_solution must be a string")
    extra = raw.get("extra")
    extra = {} if extra is None else extra
    _require(isinstance(extra, dict), "label.extra must be an object")
    return Label(
        format=fmt,
        tests=tests,
        entry_point=entry_point,
        setup_code=setup_code,
        time_limit_s=float(tl) if tl is not None else None,
        ref_time_s=float(rt) if rt is not None else None,
        source=str(raw.get("source") or ""),
        source_id=str(raw.get("source_id") or ""),
        reference_solution=ref,
        extra=extra,
    )

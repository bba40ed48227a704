"""Results that survive across batches: a bounded LRU of deterministic JobResults.

GRPO resamples the same prompts every epoch and a converging policy repeats itself, so a program already
judged against the same tests under the same limits need not run again. A result is reused only for
byte-identical *normalised* code (see normalize_code), the same label (its tests, byte for byte) and the
same verdict-relevant sandbox limits; only results whose every test outcome is deterministic are kept.
"""

from __future__ import annotations

import hashlib
import json
import sys
import threading
from collections import OrderedDict
from dataclasses import dataclass, replace

from coderl.rewards.config import SandboxConfig
from coderl.rewards.sandbox import STATUSES, Job, JobResult

# Outcomes that are a function of (code, tests, limits) alone. Not cached: "timeout" and "memory" (a loaded
# machine or a neighbour's memory can flip them), "killed" (a signal, the OOM killer or a worker dying is
# as often the infrastructure as the program), and any status added to STATUSES later until someone
# decides it belongs here. "unsupported" is a property of the tests and the program's values: deterministic.
DETERMINISTIC = frozenset({"passed", "failed", "error", "syntax", "unsupported"}) & frozenset(STATUSES)

# SandboxConfig fields that cannot change a result: how many workers run jobs, whether identical jobs of a
# batch run once, and whether each worker keeps to one CPU. Every other field (time, memory, process, file
# and output limits, detail length, isolation, landlock, and any field added later) is part of the key.
_NOT_VERDICT_FIELDS = frozenset({"workers", "dedup", "pin_workers"})

# Estimated bytes of a cache entry besides its strings (measured with tracemalloc on CPython 3.11; the test
# keeps the estimate honest): the key, the OrderedDict node, the JobResult and its lists; per outcome: the
# TestOutcome, its __dict__ and its runtime float.
_ENTRY_BYTES = 450
_OUTCOME_BYTES = 120


def normalize_code(code: str) -> str:
    """The code with differences Python cannot see removed; see docs/sandbox.md "Result cache"."""
    # 1. CRLF and lone CR -> LF. CPython's tokenizer translates every newline form to LF in source text
    #    before lexing (string literals included) and the sandbox only ever hands the text to compile():
    #    the compiled program is identical.
    code = code.replace("\r\n", "\n").replace("\r", "\n")
    # 2. Trailing spaces/tabs on each line and trailing blank lines. Outside string literals and line
    #    continuations whitespace before a newline is no token; so this is done only when no line end can
    #    lie inside a string or continuation: no triple quote anywhere (only those strings span lines) and
    #    no backslash before a line end (continuation, or an escape in an unterminated string).
    if "'''" in code or '"""' in code:
        return code
    lines = [ln.rstrip(" \t") for ln in code.split("\n")]
    if any(ln.endswith("\\") for ln in lines):
        return code
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines) + "\n" if lines else ""


def limits_digest(cfg: SandboxConfig) -> bytes:
    """Digest of the sandbox settings that can change a result (every field but those in _NOT_VERDICT_FIELDS)."""
    fields = {k: v for k, v in cfg.model_dump().items() if k not in _NOT_VERDICT_FIELDS}
    return hashlib.blake2b(json.dumps(fields, sort_keys=True).encode(), digest_size=16).digest()


def result_key(job: Job, limits: bytes, label_json: str | None = None) -> bytes:
    """Cache key: (limits, label, normalised code), length-prefixed so no two triples share a key.

    label_json: job.label.to_json() when the caller already has it (a batch shares a few labels).
    """
    h = hashlib.blake2b(digest_size=32)
    label_json = job.label.to_json() if label_json is None else label_json
    for part in (limits, label_json.encode("utf-8", "surrogatepass"),
                 normalize_code(job.code).encode("utf-8", "surrogatepass")):
        h.update(len(part).to_bytes(8, "little"))
        h.update(part)
    return h.digest()


def cacheable(res: JobResult) -> bool:
    """True when every test ran and every outcome is deterministic."""
    return (bool(res.outcomes) and len(res.outcomes) == res.expected
            and all(o.status in DETERMINISTIC for o in res.outcomes))


def result_bytes(res: JobResult) -> int:
    """Estimated memory a cached result holds (its strings measured, object overheads estimated)."""
    n = _ENTRY_BYTES + sys.getsizeof(res.detail) + _OUTCOME_BYTES * len(res.outcomes)
    n += sum(sys.getsizeof(o.detail) for o in res.outcomes)
    n += sys.getsizeof(res.stats) + sum(sys.getsizeof(k) + sys.getsizeof(v) for k, v in res.stats.items())
    return n


@dataclass
class CacheStats:
    """Cumulative counters and current size of a ResultCache."""

    hits: int = 0
    misses: int = 0
    evictions: int = 0
    entries: int = 0
    bytes: int = 0


class ResultCache:
    """LRU of deterministic results bounded by entry count and estimated bytes. Thread-safe."""

    def __init__(self, max_entries: int, max_bytes: int) -> None:
        if max_entries < 1 or max_bytes < 1:
            raise ValueError(f"a result cache needs max_entries >= 1 and max_bytes >= 1, got {max_entries}, "
                             f"{max_bytes}")
        self.max_entries, self.max_bytes = max_entries, max_bytes
        self._items: OrderedDict[bytes, tuple[JobResult, int]] = OrderedDict()
        self._stats = CacheStats()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._items)

    def get(self, key: bytes) -> JobResult | None:
        """A copy of the cached result marked cached=True (counted as a hit), or None (a miss)."""
        with self._lock:
            item = self._items.get(key)
            if item is None:
                self._stats.misses += 1
                return None
            self._items.move_to_end(key)
            self._stats.hits += 1
        return replace(item[0], cached=True)

    def put(self, key: bytes, res: JobResult) -> bool:
        """Keep res if it is cacheable and fits; evicts least recently used entries. True if kept."""
        if not cacheable(res):
            return False
        size = result_bytes(res)
        if size > self.max_bytes:
            return False
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._stats.bytes -= old[1]
            self._items[key] = (res, size)
            self._stats.bytes += size
            while len(self._items) > self.max_entries or self._stats.bytes > self.max_bytes:
                _, (_, n) = self._items.popitem(last=False)
                self._stats.bytes -= n
                self._stats.evictions += 1
        return True

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._stats.bytes = 0

    def stats(self) -> CacheStats:
        with self._lock:
            return replace(self._stats, entries=len(self._items))

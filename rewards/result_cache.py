"""Results that survive across batches: a bounded LRU of the first verdict each program got.

GRPO resamples the same prompts every epoch and a converging policy repeats itself, so a program already
judged against the same tests under the same limits need not run again. A result is reused only for the
exact code the sandbox hands the program (byte for byte), the same label (its tests, byte for byte) and the
same verdict-relevant sandbox limits. The first complete run of a key decides what the cache holds for it,
whatever its verdict, for a bounded number of uses; a run the sandbox decided (JobResult.infra, a deadline
miss) marks the key as never cached instead. See docs/result_cache.md for why.
"""

from __future__ import annotations

import hashlib
import json
import sys
import threading
from collections import OrderedDict
from dataclasses import dataclass, replace

from .config import SandboxConfig
from .sandbox import STATUSES, Job, JobResult

# SandboxConfig fields that cannot change a result: how many workers run jobs, whether identical jobs of a
# batch run once, and whether each worker keeps to one CPU. Every other field (time, memory, process, file
# and output limits, detail length, isolation, landlock, and any field added later) is part of the key.
_NOT_VERDICT_FIELDS = frozenset({"workers", "dedup", "pin_workers"})

# Estimated bytes of a cache entry besides its strings (measured with tracemalloc on CPython 3.11; the test
# keeps the estimate honest): the key, the OrderedDict node, the JobResult and its lists; per outcome: the
# TestOutcome, its __dict__ and its runtime float.
_ENTRY_BYTES = 450
KEY_BYTES = 32  # a result key's length
_OUTCOME_BYTES = 120


def limits_digest(cfg: SandboxConfig) -> bytes:
    """Digest of the sandbox settings that can change a result (every field but those in _NOT_VERDICT_FIELDS)."""
    fields = {k: v for k, v in cfg.model_dump().items() if k not in _NOT_VERDICT_FIELDS}
    return hashlib.blake2b(json.dumps(fields, sort_keys=True).encode(), digest_size=16).digest()


def result_key(job: Job, limits: bytes) -> bytes:
    """Cache key: (limits, label, code exactly as the program receives it), length-prefixed so no two
    triples share a key. The label stands in by its digest (BLAKE2b-256 of its canonical JSON: its tests byte
    for byte). No spelling of the code is normalised: the program can read its own source text (it is a
    string in the process that runs it), so two spellings are two programs."""
    h = hashlib.blake2b(digest_size=KEY_BYTES)
    for part in (limits, job.label.digest.encode(), job.code.encode("utf-8", "surrogatepass")):
        h.update(len(part).to_bytes(8, "little"))
        h.update(part)
    return h.digest()


def program_decided(res: JobResult | None) -> bool:
    """True when res is a complete verdict of the program itself: every declared test has an outcome and the
    sandbox did not decide it (no infra reason, not a deadline miss: res None)."""
    return (res is not None and not res.infra and res.expected > 0 and len(res.outcomes) == res.expected
            and all(o.status in STATUSES for o in res.outcomes))


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
    """LRU of first verdicts (and of keys never to cache) bounded by entry count and estimated bytes. Thread-safe.

    A key's first put decides it for as long as it stays: a program-decided result is kept whatever its
    verdict, anything else (an infra result, a deadline miss, a result too big to keep) leaves a marker under
    which the key is never cached. Later puts of the key change nothing, so which run's verdict is kept never
    depends on the verdicts. An entry serves at most max_uses lookups, then goes: no single run of a
    nondeterministic program decides its reward for good (see docs/result_cache.md).
    """

    def __init__(self, max_entries: int, max_bytes: int, max_uses: int = 32) -> None:
        if max_entries < 1 or max_bytes < 1 or max_uses < 1:
            raise ValueError(f"a result cache needs max_entries, max_bytes and max_uses >= 1, got {max_entries}, "
                             f"{max_bytes}, {max_uses}")
        self.max_entries, self.max_bytes, self.max_uses = max_entries, max_bytes, max_uses
        # key -> [result (None: a never-cache marker), estimated bytes, lookups it may still serve]
        self._items: OrderedDict[bytes, list] = OrderedDict()
        self._stats = CacheStats()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._items)

    def get(self, key: bytes) -> JobResult | None:
        """A copy of the cached result marked cached=True (counted as a hit), or None (a miss)."""
        with self._lock:
            item = self._items.get(key)
            if item is not None:
                item[2] -= 1
                if item[2] <= 0:  # its last use: the key's next recurrence is a first run again
                    del self._items[key]
                    self._stats.bytes -= item[1]
                else:
                    self._items.move_to_end(key)  # a never-cache marker is kept alive by use, as a result is
            if item is None or item[0] is None:
                self._stats.misses += 1
                return None
            self._stats.hits += 1
        return replace(item[0], cached=True)

    def put(self, key: bytes, res: JobResult | None) -> bool:
        """Record the run of a key (res None: it missed the deadline). True if res is now the key's cached result.

        Only a key's first run counts: one the cache already holds a result or a marker for is left alone."""
        size = result_bytes(res) if program_decided(res) else 0
        keep = 0 < size <= self.max_bytes
        if not keep:
            res, size = None, _ENTRY_BYTES
        with self._lock:
            if key in self._items:
                return False
            self._items[key] = [res, size, self.max_uses]
            self._stats.bytes += size
            while len(self._items) > self.max_entries or self._stats.bytes > self.max_bytes:
                _, (_, n, _) = self._items.popitem(last=False)
                self._stats.bytes -= n
                self._stats.evictions += 1
        return keep

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._stats.bytes = 0

    def stats(self) -> CacheStats:
        with self._lock:
            return replace(self._stats, entries=len(self._items))

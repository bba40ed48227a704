"""rewards/result_cache.py: normalisation, keys, LRU bounds; through the real LocalExecutor and the real server."""

from __future__ import annotations

import asyncio
import tracemalloc

import httpx
import pytest

from coderl.rewards.config import SandboxConfig
from coderl.rewards.executors import LocalExecutor
from coderl.rewards.labels import parse_label
from coderl.rewards.result_cache import (
    DETERMINISTIC,
    ResultCache,
    cacheable,
    limits_digest,
    normalize_code,
    result_bytes,
    result_key,
)
from coderl.rewards.sandbox import STATUSES, Job, JobResult
from coderl.rewards.sandbox import TestOutcome as Outcome  # not collected as a test class
from tests.support import PROBLEMS, SYSTEM_THINK, ServerProc, chatml, rows, think, write_jsonl

LABEL = parse_label({"format": "assert", "entry_point": "f", "tests": ["assert f(1) == 2", "assert f(2) == 3"]})
CFG = SandboxConfig(workers=2, test_timeout_s=2.0, job_timeout_s=10.0)
LIMITS = limits_digest(CFG)


def _res(*statuses: str, detail: str = "") -> JobResult:
    return JobResult([Outcome(s, 0.01, detail) for s in statuses], expected=len(statuses))


def _key(code: str, label=LABEL, limits=LIMITS) -> bytes:
    return result_key(Job(code, label), limits)


# ------------------------------------------------------------------------------------- normalisation

SAME = [  # (a, b): must share a key, and Python compiles them to equal code objects
    ("def f(x):\n    return x + 1\n", "def f(x):\r\n    return x + 1\r\n"),
    ("def f(x):\n    return x + 1\n", "def f(x):\r    return x + 1\r"),
    ("def f(x):\n    return x + 1\n", "def f(x):   \n    return x + 1\t\n"),
    ("def f(x):\n    return x + 1\n", "def f(x):\n    return x + 1\n\n\n   \n"),
    ("def f(x):\n    return x + 1\n", "def f(x):\n    return x + 1"),
    ("def f(x):\n\n    return x + 1  # done\n", "def f(x):\n        \n    return x + 1  # done   \n"),
    ('def f(x):\n    """Doc."""\n    return x\n', 'def f(x):\r\n    """Doc."""\r\n    return x\r\n'),
    ('s = """a\r\nb"""\n', 's = """a\nb"""\n'),  # CRLF inside a triple-quoted string: the tokenizer's LF
]

DIFFERENT = [  # (a, b): must not share a key (they are, or may be, different programs)
    ("s = 'a b'\n", "s = 'a  b'\n"),  # inside a string literal
    ("s = 'ab '\n", "s = 'ab'\n"),
    ('s = """ab   \ncd"""\n', 's = """ab\ncd"""\n'),  # trailing blanks inside a multi-line string
    ('def f(x):\n    """Doc."""  \n    return x\n', 'def f(x):\n    """Doc."""\n    return x\n'),
    ("def f(x):\n    return x\n", "def f(x):\n  return x\n"),  # indentation
    ("if x:\n    a = 1\n    b = 2\n", "if x:\n    a = 1\nb = 2\n"),
    ("x = 1 + \\\n    2\n\n", "x = 1 + \\\n    2\n"),  # a continuation: left alone
    ("x = 1 \\  \n+ 2\n", "x = 1 \\\n+ 2\n"),  # backslash + spaces is a syntax error, without them it is not
    ("x = 1\n", "x = 2\n"),
    ("\fx = 1\n", "x = 1\n"),  # form feed is not stripped
]


@pytest.mark.parametrize(("a", "b"), SAME)
def test_equivalent_code_shares_a_key_and_compiles_identically(a, b):
    assert _key(a) == _key(b)
    # Our own test strings, compiled (never run): the normalised form is the same program.
    assert compile(normalize_code(a), "<solution>", "exec") == compile(a, "<solution>", "exec")
    assert compile(normalize_code(b), "<solution>", "exec") == compile(b, "<solution>", "exec")


@pytest.mark.parametrize(("a", "b"), DIFFERENT)
def test_different_code_misses(a, b):
    assert _key(a) != _key(b)


def test_label_and_limits_are_part_of_the_key():
    code = "def f(x):\n    return x + 1\n"
    other = parse_label({"format": "assert", "entry_point": "f", "tests": ["assert f(1) == 2"]})
    assert _key(code) != _key(code, label=other)
    for change in ({"test_timeout_s": 3.0}, {"memory_mb": 512}, {"max_output_bytes": 4096},
                   {"job_timeout_s": 11.0}, {"max_processes": 8}, {"landlock": False}, {"detail_chars": 10}):
        assert _key(code, limits=limits_digest(CFG.model_copy(update=change))) != _key(code), change
    # How many workers run jobs, whether a batch deduplicates or whether workers keep to a CPU cannot change a result.
    assert limits_digest(CFG.model_copy(update={"workers": 7, "dedup": False, "pin_workers": False})) == LIMITS


# ------------------------------------------------------------------------------------------ the LRU


def test_only_fully_deterministic_results_are_cacheable():
    assert DETERMINISTIC < set(STATUSES)
    assert cacheable(_res("passed", "failed", "error", "syntax", "unsupported"))
    for s in set(STATUSES) - DETERMINISTIC:  # timeout, memory, killed
        assert not cacheable(_res(s)) and not cacheable(_res("failed", s)), s
    assert not cacheable(JobResult([Outcome("passed")], expected=2))  # cut short
    assert not cacheable(JobResult([], expected=0, detail="executor error"))
    c = ResultCache(10, 1 << 20)
    assert not c.put(b"k", _res("passed", "timeout")) and c.get(b"k") is None


def test_lru_order_and_entry_bound_count_evictions():
    c = ResultCache(3, 1 << 30)
    for k in (b"a", b"b", b"c"):
        assert c.put(k, _res("passed"))
    assert c.get(b"a").cached  # a is now the most recently used
    c.put(b"d", _res("failed"))  # evicts b, the least recently used
    assert c.get(b"b") is None and c.get(b"a") and c.get(b"c") and c.get(b"d")
    st = c.stats()
    assert (st.entries, st.evictions, st.hits, st.misses) == (3, 1, 4, 1)


def test_memory_bound_evicts_and_refuses_what_cannot_fit():
    big = _res("failed", detail="x" * 10_000)
    c = ResultCache(1000, 3 * result_bytes(big))
    for i in range(5):
        c.put(bytes([i]), big)
    st = c.stats()
    assert st.entries == 3 and st.evictions == 2 and st.bytes <= c.max_bytes
    assert c.get(bytes([4])) is not None and c.get(bytes([0])) is None
    assert not c.put(b"huge", _res("failed", detail="y" * (4 * result_bytes(big))))
    c.put(bytes([4]), big)  # replacing an entry does not count it twice
    assert c.stats().bytes == 3 * result_bytes(big)


def test_byte_estimate_tracks_real_memory():
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    c = ResultCache(10_000, 1 << 30)
    for i in range(2000):
        outcomes = [Outcome("failed", 0.01, f"AssertionError: {i}.{t} " + "z" * 300) for t in range(5)]
        c.put(i.to_bytes(32, "little"), JobResult(outcomes, expected=5))
    for empty in range(2000, 4000):  # detail-free results: the overheads alone
        c.put(empty.to_bytes(32, "little"), _res("passed", "passed"))
    real = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    assert 0.8 * real < c.stats().bytes < 1.5 * real, (c.stats().bytes, real)


# ------------------------------------------------------------------ through the real LocalExecutor


@pytest.fixture(scope="module")
def executor():
    ex = LocalExecutor(CFG, result_cache=ResultCache(100, 1 << 26))
    ex.start()
    yield ex
    ex.close()


def test_executor_reuses_results_across_batches(executor):
    good, bad = "def f(x):\n    return x + 1\n", "def f(x):\n    return x\n"
    loop = "def f(x):\n    while True:\n        pass\n"
    jobs = [Job(good, LABEL), Job(bad, LABEL), Job(loop, LABEL), Job(good + "\n\n", LABEL)]
    first = asyncio.run(executor.run(jobs, 60))
    assert [r.passed for r in first] == [2, 0, 0, 2]
    assert first[2].status == "timeout"
    assert executor.last_stats["executed"] == 3 and executor.last_stats["result_cache_hits"] == 0
    assert first[3].cached  # shared within the batch: same normalised code
    again = asyncio.run(executor.run([Job(good.replace("\n", "\r\n"), LABEL), Job(bad, LABEL),
                                      Job(loop, LABEL)], 60))
    assert [r.passed for r in again] == [2, 0, 0]
    assert [r.cached for r in again] == [True, True, False]  # the timeout ran again
    st = executor.last_stats
    assert st["executed"] == 1 and st["result_cache_hits"] == 2 and st["result_cache_misses"] == 1
    # Other limits: nothing reused.
    strict = LocalExecutor(CFG.model_copy(update={"memory_mb": 512}), result_cache=executor.result_cache)
    strict.sandbox = executor.sandbox  # same pool, other key: the cache must not answer
    asyncio.run(strict.run([Job(good, LABEL)], 60))
    assert strict.last_stats["executed"] == 1 and strict.last_stats["result_cache_hits"] == 0


# --------------------------------------------------------------------- the real server over HTTP


def _metrics(url: str) -> dict[str, float]:
    out = {}
    for line in httpx.get(f"{url}/metrics", timeout=10).text.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            out[name] = float(value)
    return out


@pytest.mark.parametrize("flags", [[], ["--no_result_cache"]], ids=["cache", "no_result_cache"])
def test_server_metrics_count_hits_after_a_repeated_batch(tmp_path, flags):
    data = write_jsonl(tmp_path / "train.jsonl", rows())
    server = ServerProc(["--data_path", str(data), "--port", "0", "--workers", "2", "--test_timeout_s", "2",
                         "--log_every_n_batches", "1", *flags])
    try:
        queries = [chatml(SYSTEM_THINK, user, think(good)) for user, _, good, _ in PROBLEMS.values()]
        for _ in range(2):
            out = httpx.post(f"{server.url}/get_reward", json={"query": queries}, timeout=120).json()
            assert out["scores"] == [1.0] * len(queries)
        m = _metrics(server.url)
        if flags:
            assert m["coderl_result_cache_hits_total"] == 0 and m["coderl_result_cache_entries"] == 0
            assert m["coderl_cache_hits_total"] == 0
        else:
            assert m["coderl_result_cache_hits_total"] == len(queries)
            assert m["coderl_result_cache_misses_total"] == len(queries)
            assert m["coderl_result_cache_entries"] == len(queries) and m["coderl_result_cache_bytes"] > 0
            assert m["coderl_result_cache_evictions_total"] == 0
            assert f"cache_hits {len(queries)} (result_cache {len(queries)}" in server.output()
    finally:
        server.stop()

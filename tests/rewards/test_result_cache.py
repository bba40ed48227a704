"""rewards/result_cache.py: keys, the first-run rule, LRU bounds; through the real LocalExecutor and the real server."""

from __future__ import annotations

import asyncio
import tracemalloc
from dataclasses import replace

import httpx
import pytest

from coderl.rewards.config import SandboxConfig
from coderl.rewards.executors import LocalExecutor
from coderl.rewards.labels import parse_label
from coderl.rewards.result_cache import ResultCache, limits_digest, program_decided, result_bytes, result_key
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


# ------------------------------------------------------------------------------------------ the key

RESPELLINGS = [  # (a, b): one program spelled two ways. The running program can read its own source text,
    # so no spelling difference may be normalised away: each pair needs two keys.
    ("def f(x):\n    return x + 1\n", "def f(x):\r\n    return x + 1\r\n"),  # line endings
    ("def f(x):\n    return x + 1\n", "def f(x):\r    return x + 1\r"),
    ("def f(x):\n    return x + 1\n", "def f(x):   \n    return x + 1\t\n"),  # blanks before line ends
    ("def f(x):\n    return x + 1\n", "def f(x):\n    return x + 1\n\n\n   \n"),  # trailing blank lines
    ("def f(x):\n    return x + 1\n", "def f(x):\n    return x + 1"),  # the final newline
    ("def f(x):\n    return x + 1\n", "\ufeffdef f(x):\n    return x + 1\n"),  # a byte order mark
    ("def f(x):\n    return x + 1\n", "def f(x):\n    return x+1\n"),  # blanks between tokens
    ("def f(x):\n    return x + 1\n", "def f(x):\n    return x + 1  # done\n"),  # a comment
    ("def f(ﬁ):\n    return ﬁ + 1\n", "def f(fi):\n    return fi + 1\n"),  # NFKC-equal identifiers
    ("s = 'a b'\n", "s = 'a  b'\n"),  # inside a string literal
    ('s = """ab   \ncd"""\n', 's = """ab\ncd"""\n'),
    ("def f(x):\n    return x\n", "def f(x):\n  return x\n"),  # indentation
    ("x = 1 + \\\n    2\n\n", "x = 1 + \\\n    2\n"),
    ("\fx = 1\n", "x = 1\n"),
    ("x = 1\n", "x = 2\n"),
]


@pytest.mark.parametrize(("a", "b"), RESPELLINGS)
def test_every_spelling_is_its_own_key(a, b):
    assert _key(a) != _key(b)
    assert _key(a) == _key(str(a))  # and the same text is the same key


def test_lone_surrogates_key_without_colliding():
    assert _key("s = '\ud800'\n") != _key("s = '\ud801'\n") != _key("s = '?'\n")


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


def test_only_complete_program_decided_results_are_kept():
    for status in STATUSES:  # timeout, memory and killed too: whatever the program's first run got
        assert program_decided(_res(status)) and program_decided(_res("passed", status)), status
    assert not program_decided(None)  # a deadline miss
    assert not program_decided(JobResult([Outcome("passed")], expected=2))  # cut short
    assert not program_decided(JobResult([], expected=0, detail="executor error"))
    assert not program_decided(replace(_res("killed"), infra="sandbox worker died"))
    assert not program_decided(_res("passed", "ok"))  # not a status


def test_the_first_run_of_a_key_decides_it_for_good():
    c = ResultCache(10, 1 << 20)
    assert c.put(b"k", _res("timeout", "failed"))
    assert not c.put(b"k", _res("passed", "passed"))  # a later lucky pass changes nothing
    assert c.get(b"k").status == "timeout"
    # A run the sandbox decided leaves a marker: the key is never cached, whatever its later runs get.
    for first in (None, replace(_res("killed"), infra="sandbox worker died"), _res("failed", "ok")):
        c.clear()
        assert not c.put(b"k", first)
        assert not c.put(b"k", _res("passed", "passed")) and c.get(b"k") is None
        assert not c.put(b"k", _res("failed", "failed")) and c.get(b"k") is None
    # A result too big to keep is a marker too (its size is the program's output: no retry until it is small).
    small = ResultCache(10, 4 * result_bytes(_res("failed")))
    assert not small.put(b"big", _res("failed", detail="x" * 10_000))
    assert not small.put(b"big", _res("passed")) and small.get(b"big") is None


def test_an_entry_answers_at_most_max_uses_lookups_then_the_key_runs_afresh():
    """No single run decides a program's reward for good: a lucky pass (or an unlucky timeout) is reused a bounded
    number of times, whatever it is, and the key's next recurrence is a first run again."""
    c = ResultCache(10, 1 << 20, max_uses=3)
    assert c.put(b"k", _res("passed"))
    assert [c.get(b"k") is not None for _ in range(4)] == [True, True, True, False]
    assert c.stats().entries == 0 and c.stats().bytes == 0
    assert c.put(b"k", _res("failed")) and c.get(b"k").status == "failed"
    assert not c.put(b"m", None)  # a never-cache marker expires the same way
    assert [c.get(b"m") for _ in range(3)] == [None] * 3
    assert c.put(b"m", _res("passed")) and c.get(b"m").status == "passed"
    with pytest.raises(ValueError, match="max_uses"):
        ResultCache(10, 1 << 20, max_uses=0)


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
    assert not c.put(b"huge", _res("failed", detail="y" * (4 * result_bytes(big))))  # left a small marker
    c.put(bytes([4]), big)  # a second put of a key does not count it twice
    assert c.get(bytes([4])) is not None and c.get(b"huge") is None


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
    jobs = [Job(good, LABEL), Job(bad, LABEL), Job(loop, LABEL), Job(good, LABEL), Job(good + "\n", LABEL)]
    first = asyncio.run(executor.run(jobs, 60))
    assert [r.passed for r in first] == [2, 0, 0, 2, 2]
    assert first[2].status == "timeout"
    assert executor.last_stats["executed"] == 4 and executor.last_stats["result_cache_hits"] == 0
    assert first[3].cached and not first[4].cached  # shared within the batch only byte for byte
    again = asyncio.run(executor.run([Job(good, LABEL), Job(bad, LABEL), Job(loop, LABEL),
                                      Job(good.replace("\n", "\r\n"), LABEL)], 60))
    assert [r.passed for r in again] == [2, 0, 0, 2]
    assert [r.cached for r in again] == [True, True, True, False]  # the timeout too: its first verdict
    st = executor.last_stats
    assert st["executed"] == 1 and st["result_cache_hits"] == 3 and st["result_cache_misses"] == 1
    # Other limits: nothing reused.
    strict = LocalExecutor(CFG.model_copy(update={"memory_mb": 512}), result_cache=executor.result_cache)
    strict.sandbox = executor.sandbox  # same pool, other key: the cache must not answer
    asyncio.run(strict.run([Job(good, LABEL)], 60))
    assert strict.last_stats["executed"] == 1 and strict.last_stats["result_cache_hits"] == 0


# Right unless it sees a spelling in its own source text (the candidate process holds the text it compiled).
_SPELLING_AWARE = ("import sys\n_src = ''\n_fr = sys._getframe(0)\nfor _ in range(8):\n    _fr = _fr.f_back\n"
                   "    if _fr is None:\n        break\n    _setup = _fr.f_locals.get('setup')\n"
                   "    if isinstance(_setup, dict) and isinstance(_setup.get('code'), str):\n"
                   "        _src = _setup['code']\n        break\n"
                   "_SEEN = any(s in _src for s in ('\\r', ' \\n', '\\t\\n', '\\n\\n\\n')) or not _src\n"
                   "def f(x):\n    return x if _SEEN else x + 1\n")
RESPELL = {"crlf": lambda c: c.replace("\n", "\r\n"), "blanks_at_line_ends": lambda c: c.replace(":\n", ":  \n"),
           "tabs_at_line_ends": lambda c: c.replace(":\n", ":\t\n"), "trailing_blank_lines": lambda c: c + "\n\n"}


@pytest.mark.parametrize("how", sorted(RESPELL))
def test_a_respelling_never_gets_the_verdict_of_the_spelling_it_can_tell_apart(executor, how):
    """A program right in one spelling and wrong in another, both in one batch and across batches."""
    respelled = RESPELL[how](_SPELLING_AWARE)
    assert respelled != _SPELLING_AWARE
    first = asyncio.run(executor.run([Job(_SPELLING_AWARE, LABEL), Job(respelled, LABEL)], 60))
    assert [r.passed for r in first] == [2, 0], [r.outcomes for r in first]  # it can tell: the attack is real
    later = asyncio.run(executor.run([Job(respelled, LABEL), Job(_SPELLING_AWARE, LABEL)], 60))
    assert [r.passed for r in later] == [0, 2] and all(r.cached for r in later)


# Dies or passes by chance at each call: at most 2 tests, an exit, no loop.
_COIN = "import os\ndef f(x):\n    if os.urandom(1)[0] < 128:\n        os._exit(3)\n    return x + 1\n"


def test_a_nondeterministic_program_keeps_its_first_verdict_whatever_it_was(executor):
    """No ratchet: a program that dies when (by chance) it is wrong is never re-run until a lucky pass sticks."""
    codes = [f"{_COIN}# variant {i}\n" for i in range(6)]
    first = asyncio.run(executor.run([Job(c, LABEL) for c in codes], 60))
    assert {r.status for r in first} <= {"passed", "killed"}
    for _ in range(3):
        again = asyncio.run(executor.run([Job(c, LABEL) for c in codes], 60))
        assert all(r.cached for r in again) and executor.last_stats["executed"] == 0
        assert [(r.status, r.passed) for r in again] == [(r.status, r.passed) for r in first]
    # A program that always dies by its own doing: its death is its verdict, kept like a failure.
    dies = "import os\ndef f(x):\n    os._exit(3)\n"
    assert asyncio.run(executor.run([Job(dies, LABEL)], 60))[0].status == "killed"
    assert asyncio.run(executor.run([Job(dies, LABEL)], 60))[0].cached


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

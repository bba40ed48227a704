"""coderl.rewards.metrics: what one batch adds to each collector, read back through Prometheus' own text parser."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

from coderl.rewards.code_reward import COMPONENTS, RewardBreakdown
from coderl.rewards.metrics import Metrics
from coderl.rewards.result_cache import ResultCache
from coderl.rewards.sandbox import JobResult
from coderl.rewards.sandbox import TestOutcome as Outcome  # not collected as a test class


def _samples(m: Metrics) -> dict[tuple[str, tuple], float]:
    out = {}
    for fam in text_string_to_metric_families(m.render().decode()):
        for s in fam.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def _b(reward: float, status: str, **kw) -> RewardBreakdown:
    return RewardBreakdown(reward=reward, score=reward, correctness=reward, format=1.0, status=status, **kw)


def test_observe_batch_counts_each_status_once():
    m = Metrics()
    batch = [_b(1.0, "passed", all_passed=True), _b(0.0, "failed", timeouts=2), _b(0.0, "unmatched"),
             _b(0.0, "no_code"), _b(0.0, "deadline"), _b(0.5, "failed", unsupported=3, cached=True),
             _b(0.0, "syntax")]
    m.observe_batch(batch, 0.3)
    m.observe_batch(batch[:1], 2.0)
    s = _samples(m)
    assert s[("coderl_queries_total", ())] == 8
    assert s[("coderl_executions_total", (("status", "passed"),))] == 2
    assert s[("coderl_executions_total", (("status", "failed"),))] == 2
    assert ("coderl_executions_total", (("status", "syntax"),)) not in s  # not an execution
    assert s[("coderl_unmatched_prompts_total", ())] == 1 and s[("coderl_no_code_total", ())] == 1
    assert s[("coderl_deadline_misses_total", ())] == 1
    assert s[("coderl_test_timeouts_total", ())] == 2 and s[("coderl_test_unsupported_total", ())] == 3
    assert s[("coderl_cache_hits_total", ())] == 1
    assert s[("coderl_reward_sum", ())] == 1.5 + 1.0
    assert s[("coderl_reward_mean", ())] == 1.0  # the last batch only
    assert {c for (n, lab), _ in s.items() if n == "coderl_reward_component_mean" for _, c in lab} == set(COMPONENTS)
    assert s[("coderl_batch_latency_seconds_count", ())] == 2
    assert s[("coderl_batch_latency_seconds_bucket", (("le", "0.5"),))] == 1


def test_empty_batch_leaves_means_alone():
    m = Metrics()
    m.observe_batch([_b(1.0, "passed")], 0.1)
    m.observe_batch([], 0.1)
    assert _samples(m)[("coderl_reward_mean", ())] == 1.0


def test_result_cache_is_read_at_scrape_time():
    m, cache = Metrics(), ResultCache(max_entries=1, max_bytes=1 << 20)
    current = {"cache": None}
    m.watch_result_cache(lambda: current["cache"].stats() if current["cache"] else None)
    assert _samples(m)[("coderl_result_cache_hits_total", ())] == 0  # off: zeros, not missing
    current["cache"] = cache
    res = JobResult(outcomes=[Outcome(status="passed", runtime_s=0.0)], expected=1)
    assert cache.put(b"a" * 16, res) and cache.get(b"a" * 16) is not None and cache.get(b"b" * 16) is None
    cache.put(b"c" * 16, res)  # evicts "a": one entry at most
    s = _samples(m)
    assert s[("coderl_result_cache_hits_total", ())] == 1 and s[("coderl_result_cache_misses_total", ())] == 1
    assert s[("coderl_result_cache_evictions_total", ())] == 1 and s[("coderl_result_cache_entries", ())] == 1
    assert s[("coderl_result_cache_bytes", ())] > 0


def test_private_registries_do_not_collide():
    a, b = Metrics(), Metrics()
    a.observe_batch([_b(1.0, "passed")], 0.1)
    assert _samples(b)[("coderl_queries_total", ())] == 0

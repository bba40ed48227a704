"""Prometheus collectors of the reward server, on a private registry per app (tests run several)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from .code_reward import (
    COMPONENTS,
    DEADLINE,
    NO_CODE,
    NOT_RUN,
    SYNTAX,
    UNMATCHED,
    RewardBreakdown,
)
from .result_cache import CacheStats

_LATENCY_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 40, 60, 90, 120, 150, 180)


class Metrics:
    """Counters, histograms and gauges exposed at GET /metrics."""

    content_type = CONTENT_TYPE_LATEST

    def __init__(self) -> None:
        r = self.registry = CollectorRegistry(auto_describe=True)
        self.requests = Counter("coderl_requests", "HTTP reward requests by outcome.", ["code"], registry=r)
        self.queries = Counter("coderl_queries", "Queries scored.", registry=r)
        self.batch_latency = Histogram("coderl_batch_latency_seconds", "Wall-clock time to score one batch.",
                                       buckets=_LATENCY_BUCKETS, registry=r)
        self.batch_size = Histogram("coderl_batch_size", "Queries per batch.",
                                    buckets=(1, 8, 32, 64, 128, 256, 512, 1024, 4096), registry=r)
        self.executions = Counter("coderl_executions", "Executed responses by result status.", ["status"],
                                  registry=r)
        self.test_timeouts = Counter("coderl_test_timeouts", "Test cases that hit their time limit.", registry=r)
        self.test_unsupported = Counter("coderl_test_unsupported",
                                        "Test cases the judge could not decide on plain data (docs/sandbox.md).",
                                        registry=r)
        self.deadline_misses = Counter("coderl_deadline_misses",
                                       "Responses the batch deadline cut (no verdict: they get the cut reward, docs/sandbox.md).",
                                       registry=r)
        self.cache_hits = Counter("coderl_cache_hits",
                                  "Responses answered from the result cache or shared within a batch.",
                                  registry=r)
        self.unmatched = Counter("coderl_unmatched_prompts", "Queries whose problem was not found.", registry=r)
        self.unmatched_rate = Gauge("coderl_unmatched_rate",
                                    "Fraction of the last batch's queries whose problem was not found (reward: "
                                    "unmatched_reward; truncated prompts end here).", registry=r)
        self.bad_labels = Counter("coderl_bad_labels", "Labels sent by the client that did not parse.",
                                  registry=r)
        self.no_code = Counter("coderl_no_code", "Responses without extractable code.", registry=r)
        self.reward_sum = Gauge("coderl_reward_sum", "Sum of all rewards given (divide by coderl_queries_total).",
                                registry=r)
        self.reward_mean = Gauge("coderl_reward_mean", "Mean reward of the last batch.", registry=r)
        self.component_mean = Gauge("coderl_reward_component_mean", "Mean of each reward component, last batch.",
                                    ["component"], registry=r)
        self.in_flight = Gauge("coderl_batches_in_flight", "Batches being scored now.", registry=r)
        # What each reward status counts: those no sandbox verdict decided have a counter of their own (or none:
        # never run), every other is an execution's status (executions, by status).
        self._counts = {UNMATCHED: self.unmatched.inc, NO_CODE: self.no_code.inc, DEADLINE: self.deadline_misses.inc,
                        SYNTAX: _uncounted, NOT_RUN: _uncounted}

    def watch_result_cache(self, stats: Callable[[], CacheStats | None]) -> None:
        """Expose the result cache's counters, read at scrape time (zeros while the cache is off)."""
        self.registry.register(_ResultCacheCollector(stats))

    def watch_executor(self, executor) -> None:
        """Expose the executor's readiness and, for Ray, its live actors per node and its fault counters."""
        self.registry.register(_ExecutorCollector(executor))

    def observe_batch(self, items: Sequence[RewardBreakdown], seconds: float) -> None:
        """Record one finished batch."""
        n = len(items)
        self.queries.inc(n)
        self.batch_size.observe(n)
        self.batch_latency.observe(seconds)
        total, unmatched = 0.0, 0
        for b in items:
            total += b.reward
            unmatched += b.status == UNMATCHED
            count = self._counts.get(b.status)
            if count is None:
                self.executions.labels(b.status).inc()
            else:
                count()
            if b.timeouts:
                self.test_timeouts.inc(b.timeouts)
            if b.unsupported:
                self.test_unsupported.inc(b.unsupported)
            if b.cached:
                self.cache_hits.inc()
        self.reward_sum.inc(total)
        if n:
            self.unmatched_rate.set(unmatched / n)
            self.reward_mean.set(total / n)
            for c in COMPONENTS:
                self.component_mean.labels(c).set(sum(getattr(b, c) for b in items) / n)

    def render(self) -> bytes:
        return generate_latest(self.registry)


def _uncounted() -> None:
    """A status that counts nowhere (the code never ran)."""


class _ResultCacheCollector(Collector):
    """The ResultCache keeps its own counters (it is shared by every batch); this reads them per scrape."""

    def __init__(self, stats: Callable[[], CacheStats | None]) -> None:
        self._stats = stats

    def collect(self):
        st = self._stats() or CacheStats()
        for name, doc, value in (
                ("hits", "Responses answered from the cross-batch result cache.", st.hits),
                ("misses", "Result cache look-ups that found nothing (the job ran).", st.misses),
                ("evictions", "Results dropped by the cache's entry or memory bound.", st.evictions)):
            yield CounterMetricFamily(f"coderl_result_cache_{name}", doc, value=value)
        yield GaugeMetricFamily("coderl_result_cache_entries", "Results in the result cache.", value=st.entries)
        yield GaugeMetricFamily("coderl_result_cache_bytes", "Estimated memory of the result cache.",
                                value=st.bytes)


class _ExecutorCollector(Collector):
    """Read at scrape time from the executor (rewards/executors.py): whether it can score, and where."""

    _COUNTS = (("actor_failures", "Ray sandbox actors a call failed on (dropped and replaced)."),
               ("actors_replaced", "Ray sandbox actors started to replace lost ones."),
               ("chunks_rerun", "Chunks of jobs run again on another actor after theirs failed."),
               ("chunks_lost", "Chunks of jobs cut because no live actor could run them (the cut reward)."),
               ("reconnects", "Reconnections to a Ray cluster whose GCS was lost."))

    def __init__(self, executor) -> None:
        self._executor = executor

    def collect(self):
        ready, _ = self._executor.readiness()
        info = self._executor.info()
        yield GaugeMetricFamily("coderl_executor_ready", "1 while the executor can score (GET /health says why not).",
                                value=float(ready))
        if "workers_alive" in info:
            yield GaugeMetricFamily("coderl_sandbox_workers_alive", "Live sandbox workers of the local pool.",
                                    value=info["workers_alive"])
        if "actor_nodes" not in info:
            return
        yield GaugeMetricFamily("coderl_ray_actors_alive", "Live Ray sandbox actors.", value=info["actors"])
        yield GaugeMetricFamily("coderl_ray_actors_wanted", "Ray sandbox actors asked for (--ray_actors).",
                                value=info["actors_wanted"])
        per_node = GaugeMetricFamily("coderl_ray_node_actors", "Live Ray sandbox actors per node.", labels=["node"])
        nodes: dict[str, int] = {}
        for a in info["actor_nodes"]:
            nodes[a["node_id"]] = nodes.get(a["node_id"], 0) + 1
        for node, n in sorted(nodes.items()):
            per_node.add_metric([node], n)
        yield per_node
        for name, doc in self._COUNTS:
            yield CounterMetricFamily(f"coderl_ray_{name}", doc, value=info.get(name, 0))

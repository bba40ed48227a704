"""coderl's reward as a verl custom reward function (data written by data/preprocess.py --output_format verl).

    reward.custom_reward_function.path=/path/to/coderl/rewards/integrations/verl.py  # or pkg://coderl.rewards.integrations.verl
    reward.custom_reward_function.name=compute_score_async    # or compute_score / compute_score_batch
    +reward.custom_reward_function.reward_kwargs.server_url=http://HOST:5000           # optional: the server

- compute_score: verl's per-sample contract (data_source, solution_str, ground_truth, extra_info) -> a dict
  with "score" (the reward) and every component; verl logs the extra keys. Works with every reward manager.
- compute_score_async: the same, as a coroutine. verl's reward loop awaits it directly, and the calls one
  event loop makes within a few milliseconds go to the pool (or the server) as one batch.
- compute_score_batch: verl's BatchRewardManager contract (lists in, list of dicts out), one batch.

ground_truth is the label JSON; data_source and extra_info are not needed. Keyword options (verl's
reward_kwargs): server_url, auth_token (default CODERL_AUTH_TOKEN), config (the pool's YAML config);
other keywords verl adds (reward_router_address, ...) are ignored. "acc" (= all tests passed) is the
key verl's validation metrics look for.
"""

from __future__ import annotations

import asyncio
import json
import weakref

from coderl.rewards.api import RewardResponse
from coderl.rewards.integrations.backend import get_backend

BATCH_WINDOW_S = 0.01  # how long compute_score_async waits for more samples before scoring a batch
MAX_BATCH = 1024


def _label(ground_truth) -> str | None:
    return ground_truth if isinstance(ground_truth, str) or ground_truth is None else json.dumps(ground_truth)


def _rows(answer: RewardResponse) -> list[dict[str, float]]:
    """One verl result dict per sample: "score" = the reward, the components, "acc" = all tests passed."""
    rows = []
    for i, reward in enumerate(answer.rewards):
        row = {"score": float(reward)}
        row.update({key.split("/", 1)[-1]: float(values[i]) for key, values in answer.extra_logs.items()})
        row["acc"] = row["all_passed"]
        rows.append(row)
    return rows


def compute_score(data_source=None, solution_str: str = "", ground_truth=None, extra_info=None, *,
                  server_url: str | None = None, auth_token: str | None = None, config: str | None = None,
                  **kwargs) -> dict[str, float]:
    """verl's custom reward function: the reward of one response and its components."""
    answer = get_backend(server_url, auth_token, config).score([solution_str], labels=[_label(ground_truth)])
    return _rows(answer)[0]


def compute_score_batch(data_sources=None, solution_strs=(), ground_truths=(), extra_infos=None, *,
                        server_url: str | None = None, auth_token: str | None = None, config: str | None = None,
                        **kwargs) -> list[dict[str, float]]:
    """verl's BatchRewardManager contract: every response of the batch scored in one pool run."""
    texts, labels = list(solution_strs), [_label(g) for g in ground_truths]
    if len(texts) != len(labels):
        raise ValueError(f"{len(texts)} solution_strs but {len(labels)} ground_truths")
    if not texts:
        return []
    return _rows(get_backend(server_url, auth_token, config).score(texts, labels=labels))


class _Coalescer:
    """Collects the samples one event loop asks for within BATCH_WINDOW_S and scores them as one batch."""

    def __init__(self, backend) -> None:
        self.backend = backend
        self.items: list[tuple[str, str | None, asyncio.Future]] = []
        self.tasks: set[asyncio.Task] = set()

    async def score(self, text: str, label: str | None) -> dict[str, float]:
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        self.items.append((text, label, future))
        if len(self.items) == 1:
            loop.call_later(BATCH_WINDOW_S, self._flush)
        elif len(self.items) >= MAX_BATCH:
            self._flush()
        return await future

    def _flush(self) -> None:
        items, self.items = self.items, []
        if items:
            task = asyncio.get_running_loop().create_task(self._run(items))
            self.tasks.add(task)  # the loop keeps only weak references to tasks
            task.add_done_callback(self.tasks.discard)

    async def _run(self, items) -> None:
        try:  # the backend blocks (sandbox pool or HTTP): keep the event loop free meanwhile
            answer = await asyncio.to_thread(self.backend.score, [t for t, _, _ in items],
                                             labels=[lab for _, lab, _ in items])
            results = _rows(answer)
        except Exception as e:  # every waiting sample gets the error, none waits forever
            for _, _, future in items:
                if not future.done():
                    future.set_exception(e)
            return
        for (_, _, future), row in zip(items, results, strict=True):
            if not future.done():
                future.set_result(row)


_coalescers: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # event loop -> {backend: _Coalescer}


async def compute_score_async(data_source=None, solution_str: str = "", ground_truth=None, extra_info=None, *,
                              server_url: str | None = None, auth_token: str | None = None,
                              config: str | None = None, **kwargs) -> dict[str, float]:
    """compute_score as a coroutine; concurrent calls are scored together (one pool batch or HTTP request)."""
    backend = get_backend(server_url, auth_token, config)
    per_loop = _coalescers.setdefault(asyncio.get_running_loop(), {})
    coalescer = per_loop.get(id(backend)) or per_loop.setdefault(id(backend), _Coalescer(backend))
    return await coalescer.score(solution_str, _label(ground_truth))

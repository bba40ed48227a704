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

The adaptive group norm (integrations/group_norm.py) as a verl advantage estimator, registered by name in
verl's own registry (core_algos.register_adv_est) by register_group_norm, in the driver where verl computes
advantages, e.g. as Ray's per-process setup hook:

    algorithm.adv_estimator=coderl_group_norm +ray_kwargs.ray_init.runtime_env.worker_process_setup_hook=coderl.rewards.integrations.verl.register_group_norm
    +algorithm.group_norm_std_threshold=0.1      # optional (the default); +algorithm.group_norm_eps=1e-8
"""

from __future__ import annotations

import asyncio
import json
import logging
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


GROUP_NORM_ESTIMATOR = "coderl_group_norm"
group_norm_log = logging.getLogger("coderl.group_norm")
last_group_norm_stats = None  # GroupNormStats of the last batch (verl has no channel from an estimator to its metrics)


def compute_group_norm_advantage(token_level_rewards, response_mask, index=None, config=None, **kwargs):
    """verl's estimator contract: (advantages, returns), each (bs, response_length), the outcome reward per uid group.

    Groups are the rows sharing a uid (verl's `index`), in any order. A group of one keeps verl's GRPO convention
    (mean 0, std 1: its reward); it is no fallback. Knobs: algorithm.group_norm_std_threshold / group_norm_eps.
    """
    import torch

    from coderl.rewards.integrations.group_norm import (
        DEFAULT_EPS,
        DEFAULT_STD_THRESHOLD,
        GroupNormStats,
        check_knobs,
        group_norm,
    )

    global last_group_norm_stats
    get = config.get if config is not None else (lambda key, default: default)
    threshold = float(get("group_norm_std_threshold", DEFAULT_STD_THRESHOLD))
    eps = float(get("group_norm_eps", DEFAULT_EPS))
    check_knobs(threshold, eps)
    if index is None:
        raise ValueError(f"{GROUP_NORM_ESTIMATOR} needs verl's uid index (the prompt groups)")
    scores = token_level_rewards.sum(dim=-1).float()
    rows: dict = {}
    for i, uid in enumerate(index):
        rows.setdefault(uid, []).append(i)
    adv = scores.clone()
    fallback = all_equal = grouped = 0
    with torch.no_grad():
        for members in rows.values():
            if len(members) < 2:
                continue
            at = torch.tensor(members, device=scores.device)
            shaped, stats = group_norm(scores[at].unsqueeze(0), threshold, eps)
            adv[at] = shaped[0]
            fallback += stats.fallback_frac
            all_equal += stats.all_equal_frac
            grouped += 1
    last_group_norm_stats = GroupNormStats(fallback / max(grouped, 1), all_equal / max(grouped, 1))
    group_norm_log.info("%s: %d groups, fallback_frac %.4f, all_equal_frac %.4f", GROUP_NORM_ESTIMATOR, grouped,
                        *last_group_norm_stats)
    adv = (adv.unsqueeze(-1) * response_mask).to(token_level_rewards.dtype)
    return adv, adv


def register_group_norm() -> None:
    """Registers compute_group_norm_advantage as verl's advantage estimator "coderl_group_norm" (idempotent)."""
    from verl.trainer.ppo.core_algos import register_adv_est

    register_adv_est(GROUP_NORM_ESTIMATOR)(compute_group_norm_advantage)

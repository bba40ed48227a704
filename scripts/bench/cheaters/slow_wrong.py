"""Slow wrong programs against the batch deadline (issue 35, item 3): a cut must not be for sale.

A trial plays two batches through the real pipeline (Scorer, LocalExecutor with its result cache, real bwrap
Sandbox), alike but for one program: three right answers and, at the same random place, the cheater -- a wrong
program that sleeps 0.8 s in each of its 4 tests (3.2 s in its one run: the 1 s label limit gets no probe) -- or its
honest twin, the same wrong answer without the sleep. The batch deadline, the same for both, is drawn uniformly in
0.5-12.5 s, so it lands anywhere in the cheater's run and on both sides of the run bound (the 6 s job limit + the
pool's start margin: 8 s). In every other trial the program is met in flight: an owner batch (deadline 60 s) runs
it first and the trial's batch waits on that run. Before issue 35's rule, a job still in its first run at the
deadline, and a waiter whose owner's run was still going, got the neutral reward (the mean of the prompt's finished
samples: the right answers' 1.0 here) instead of the wrong answer's 0.167. Fair: the cheater's reward equals its
twin's.
"""

from __future__ import annotations

import asyncio
import json
import random

from scripts.bench.cheaters import Family, Trials

_SLEEP_S = 0.8
_DEADLINES = (0.5, 12.5)
_OWNER_DEADLINE_S = 60.0


def _texts(trial: int, rng: random.Random) -> tuple[list[str], int, str, str]:
    from scripts.bench.workloads import PROBLEMS
    good = PROBLEMS["assert"][2]
    wrong = f"def mul(a, b):\n    return a * b + 1\n# {trial}"
    slow = f"import time\ndef mul(a, b):\n    time.sleep({_SLEEP_S})\n    return a * b + 1\n# {trial}"
    rights = [good + f"\n# right {trial}.{j}" for j in range(3)]
    at = rng.randrange(4)
    return rights[:at] + [None] + rights[at:], at, slow, wrong


def _answer(code: str) -> str:
    return f"<think>\nok\n</think>\n<answer>\n```python\n{code}\n```\n</answer>"


def play(n: int, workers: int) -> Trials:
    from coderl.rewards.config import RewardConfig, SandboxConfig
    from coderl.rewards.executors import LocalExecutor
    from coderl.rewards.labels import parse_label
    from coderl.rewards.pipeline import Scorer, ascore
    from coderl.rewards.result_cache import ResultCache
    from coderl.rewards.sandbox import pool
    from scripts.bench.workloads import label_json

    label = json.dumps({**json.loads(label_json("assert")), "time_limit_s": 1.0})  # 1 s: no probe (0.5 s > 1/4)
    cfg = SandboxConfig(workers=workers, job_timeout_s=6.0)
    # the code before the rule (a "before" run) has no run bound: its job limit, with the same margin, for the notes
    bound = (pool.run_bound_s(parse_label(label), cfg) if hasattr(pool, "run_bound_s")
             else pool.time_limits(parse_label(label), cfg)[1] + 2.0)
    scorer = Scorer(RewardConfig())
    cheater, honest = [], []
    kinds = {"batch": 0, "waiter": 0}
    below = 0

    async def one(ex, codes: list[str], at: int, deadline: float, met: bool) -> float:
        texts = [_answer(x) for x in codes]
        owner = None
        if met:  # a concurrent batch owns the program's run: this batch meets it in flight
            owner = asyncio.ensure_future(ascore(scorer, ex, [texts[at]], None, [label], _OWNER_DEADLINE_S))
            while not ex._inflight and not owner.done():
                await asyncio.sleep(0.005)
        items = await ascore(scorer, ex, texts, None, [label] * len(texts), deadline)
        if owner is not None:
            await owner
        return items[at].reward

    async def trial(ex, i: int) -> None:
        nonlocal below
        rng = random.Random(i)
        codes, at, slow, wrong = _texts(i, rng)
        deadline = rng.uniform(*_DEADLINES)
        below += deadline < bound
        met = bool(i % 2)
        kinds["waiter" if met else "batch"] += 1
        cheater.append(await one(ex, codes[:at] + [slow] + codes[at + 1:], at, deadline, met))
        honest.append(await one(ex, [c + "\n# twin" if c is not None else wrong for c in codes], at, deadline, met))

    async def all_trials() -> dict:
        with LocalExecutor(cfg, result_cache=ResultCache(4096, 1 << 28)) as ex:
            for i in range(n):
                await trial(ex, i)
            return ex.info()["stats"]

    stats = asyncio.run(all_trials())
    return Trials(cheater=cheater, honest=honest,
                  notes={"run_bound_s": bound, "deadline_s": list(_DEADLINES), "deadlines_below_bound": below,
                         "trials": kinds, "not_started": stats.get("not_started"), "overrun": stats.get("overrun"),
                         "cut": stats.get("cut")})


FAMILY = Family("slow_wrong", __doc__.splitlines()[0], play)

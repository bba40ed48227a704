"""`reward_func(queries, prompts, labels)` for OpenRLHF versions that accept a Python file as --remote_rm_url.

    --remote_rm_url /path/to/coderl/rewards/reward_func.py --label_key label

Same rewards as the HTTP server, computed in-process: the first call starts a warm Sandbox pool (one per
process OpenRLHF loads this file in; size it with sandbox.workers in the config). Environment:
  CODERL_REWARD_CONFIG  YAML config (default configs/reward.yaml)
  CODERL_DATA_PATH      the training JSONL; only needed when labels are missing (prompt lookup)
torch is imported lazily, so the module itself imports without it.
"""

from __future__ import annotations

import atexit
import os
import threading

from coderl.rewards.code_reward import extra_logs
from coderl.rewards.config import load_config
from coderl.rewards.pipeline import Scorer
from coderl.rewards.prompt_index import PromptIndex
from coderl.rewards.sandbox import Sandbox

_lock = threading.Lock()
_state: dict = {}


def _get_state() -> tuple[Scorer, Sandbox]:
    with _lock:
        if not _state:
            cfg = load_config(os.environ.get("CODERL_REWARD_CONFIG") or None)
            data = os.environ.get("CODERL_DATA_PATH") or cfg.server.data_path
            index = PromptIndex.from_jsonl(data) if data else None
            sandbox = Sandbox(cfg.sandbox)
            sandbox.start()
            atexit.register(sandbox.close)
            _state.update(scorer=Scorer(cfg.reward, index), sandbox=sandbox)
        return _state["scorer"], _state["sandbox"]


def compute(queries, prompts=None, labels=None) -> dict:
    """The reward dict with plain lists (what the HTTP server returns)."""
    scorer, sandbox = _get_state()
    queries = list(queries)
    prompts = list(prompts) if prompts is not None else None
    labels = list(labels) if labels is not None else None
    prepared = scorer.prepare(queries, prompts, labels)
    positions, jobs = scorer.jobs(prepared)
    results = sandbox.run(jobs) if jobs else []
    items = scorer.finish(prepared, positions, results)
    return {"rewards": [b.reward for b in items], "scores": [b.score for b in items], "extra_logs": extra_logs(items)}


def reward_func(queries, prompts=None, labels=None, **kwargs) -> dict:
    """OpenRLHF's custom reward hook: {"rewards", "scores", "extra_logs"} as float tensors, one value per query."""
    import torch

    out = compute(queries, prompts, labels)
    return {"rewards": torch.tensor(out["rewards"], dtype=torch.float32),
            "scores": torch.tensor(out["scores"], dtype=torch.float32),
            "extra_logs": {k: torch.tensor(v, dtype=torch.float32) for k, v in out["extra_logs"].items()}}

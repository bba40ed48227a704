"""`reward_func(queries, prompts, labels)` for OpenRLHF versions that accept a Python file as --remote_rm_url.

    --remote_rm_url /path/to/coderl/rewards/reward_func.py --label_key label

Same rewards as the HTTP server, computed in-process: the first call starts a warm Sandbox pool (one per
process OpenRLHF loads this file in; size it with sandbox.workers in the config), or, with
CODERL_REWARD_URL set, asked from that reward server with CODERL_AUTH_TOKEN as its bearer token (the way to
reach a token-protected server from OpenRLHF releases whose HTTP client sends no token). Environment:
  CODERL_REWARD_URL     the reward server; unset = the in-process pool
  CODERL_AUTH_TOKEN     its token
  CODERL_REWARD_CONFIG  YAML config (default configs/reward.yaml)
  CODERL_DATA_PATH      the training JSONL; only needed when labels are missing (prompt lookup)
torch is imported lazily, so the module itself imports without it. The trainer loads this file by path, so
coderl must be installed in its environment (`pip install -e .`; scripts/setup_env.sh does).
"""

from __future__ import annotations

from coderl.rewards.integrations.backend import get_backend


def compute(queries, prompts=None, labels=None) -> dict:
    """The reward dict with plain lists (what the HTTP server returns)."""
    return get_backend().score(queries, prompts, labels).model_dump()


def reward_func(queries, prompts=None, labels=None, **kwargs) -> dict:
    """OpenRLHF's custom reward hook: {"rewards", "scores", "extra_logs"} as float tensors, one value per query."""
    import torch

    out = compute(queries, prompts, labels)
    return {"rewards": torch.tensor(out["rewards"], dtype=torch.float32),
            "scores": torch.tensor(out["scores"], dtype=torch.float32),
            "extra_logs": {k: torch.tensor(v, dtype=torch.float32) for k, v in out["extra_logs"].items()}}

"""The reward API's bodies: what a client posts to /get_reward and what it gets back (pydantic).

The HTTP server (reward_server.py) and every client of the same rewards (rewards/integrations/: the server's
client and the in-process backend) speak these; none of them imports another's module for them.
"""

from __future__ import annotations

from pydantic import BaseModel, Field


class RewardRequest(BaseModel):
    """What OpenRLHF posts. The pinned 0.5.7 sends only `query`; later versions add prompts and labels."""

    query: list[str] = Field(description="Decoded sequences: pads + templated prompt + response + EOS + pads.")
    prompts: list[str | None] | None = Field(None, description="Templated prompts, same order (optional).")
    labels: list[str | None] | None = Field(None, description="Label JSON strings (optional; skips the lookup).")


class RewardResponse(BaseModel):
    rewards: list[float] = Field(description="Reward per query, for the advantage.")
    scores: list[float] = Field(description="Unit-test pass rate per query, in [0, 1].")
    extra_logs: dict[str, list[float]] = Field(description="Per-query reward components (OpenRLHF logs their mean).")

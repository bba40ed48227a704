"""coderl's reward as a TRL reward function: `GRPOTrainer(reward_funcs=[code_reward], ...)`.

    from datasets import load_dataset
    from coderl.rewards.integrations.trl import code_reward, make_code_reward
    ds = load_dataset("json", data_files="data_trl/train.jsonl", split="train")  # preprocess --output_format trl
    trainer = GRPOTrainer(model=..., reward_funcs=[code_reward], train_dataset=ds, args=GRPOConfig(...))
    # or against a running reward server:  reward_funcs=[make_code_reward("http://HOST:5000", token)]

TRL calls `code_reward(prompts=..., completions=..., **columns)` with every other dataset column as a
keyword list; the label JSON comes in the `coderl_label` column (labels.TRL_LABEL_COLUMN: not `label`,
which TRL reads as a preference label). Completions are strings or conversational ([{"role": "assistant", ...}]);
only the completion is scored (the label names the problem, so no prompt lookup is needed).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

from coderl.rewards.integrations.backend import get_backend
from coderl.rewards.labels import TRL_LABEL_COLUMN


def completion_text(completion) -> str:
    """The text of one TRL completion: a string, or the last assistant message of a conversation."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, dict):
        completion = [completion]
    if isinstance(completion, Sequence):
        for message in reversed(completion):
            if isinstance(message, dict) and message.get("role", "assistant") == "assistant":
                content = message.get("content", "")
                if isinstance(content, list):  # multimodal parts: keep the text ones
                    content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
                return content if isinstance(content, str) else ""
        return ""
    raise TypeError(f"a TRL completion must be a string or a list of messages, got {type(completion).__name__}")


def make_code_reward(server_url: str | None = None, auth_token: str | None = None, config: str | None = None,
                     label_column: str = TRL_LABEL_COLUMN) -> Callable[..., list[float]]:
    """A TRL reward function scoring with the in-process pool, or with the reward server at server_url."""

    def code_reward(prompts=None, completions=None, **kwargs) -> list[float]:
        if completions is None:
            raise TypeError("code_reward needs completions= (TRL passes them as a keyword)")
        if label_column not in kwargs:
            columns = sorted(k for k in kwargs if k not in ("trainer_state", "log_extra", "log_metric"))
            raise KeyError(f"code_reward needs the dataset column {label_column!r} (the label JSON written by "
                           f"data/preprocess.py --output_format trl); columns passed: {columns}. A dataset "
                           f"that names it differently: make_code_reward(label_column=...)")
        labels = [lab if isinstance(lab, str) or lab is None else json.dumps(lab) for lab in kwargs[label_column]]
        texts = [completion_text(c) for c in completions]
        if len(labels) != len(texts):
            raise ValueError(f"{len(texts)} completions but {len(labels)} values in column {label_column!r}")
        answer = get_backend(server_url, auth_token, config).score(texts, labels=labels)
        log_metric = kwargs.get("log_metric")
        if callable(log_metric):  # newer TRL: per-component batch means next to the reward
            for key, values in answer.extra_logs.items():
                log_metric(f"coderl/{key.split('/', 1)[-1]}", sum(values) / max(len(values), 1))
        return [float(r) for r in answer.rewards]

    return code_reward


code_reward = make_code_reward()

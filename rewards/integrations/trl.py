"""coderl's reward as a TRL reward function: `GRPOTrainer(reward_funcs=[code_reward], ...)`.

    from datasets import load_dataset
    from coderl.rewards.integrations.trl import code_reward, make_code_reward
    ds = load_dataset("json", data_files="data_trl/train.jsonl", split="train")  # preprocess --output_format trl
    trainer = GRPOTrainer(model=..., reward_funcs=[code_reward], train_dataset=ds, args=GRPOConfig(...))
    # or against a running reward server:  reward_funcs=[make_code_reward("http://HOST:5000", token)]

TRL calls `code_reward(prompts=..., completions=..., **columns)` with every other dataset column as a
keyword list; the label JSON comes in the `coderl_label` column (labels.TRL_LABEL_COLUMN: not `label`,
which TRL reads as a preference label). TRL 1.x adds completion_ids, trainer_state, log_extra and log_metric
(and environments): the component means go to log_metric, the per-completion components to log_extra (the
completions table). Only the completion is scored (the label names the problem, so no prompt lookup is needed).

Completions are strings or conversational (the last assistant message is scored). A TRL 1.x response parser
(set with tools=, or shipped by the tokenizer) moves the <think> block into a reasoning field: it is put back
in front of the content. The parser keeps only the last <think> block and what follows it; give
make_code_reward the tokenizer to score the generated tokens themselves (single-message completions).

The reward functions are callable objects, not closures: TRL's async GRPO pickles them into a spawned process.
`code_reward_async` is the coroutine form (TRL 1.x runs async reward functions concurrently).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence

from ..api import RewardResponse
from ..labels import TRL_LABEL_COLUMN
from .backend import get_backend

TRL_CALL_KWARGS = ("completion_ids", "trainer_state", "log_extra", "log_metric", "environments")  # not columns
REASONING_FIELDS = ("reasoning_content", "thinking")  # where TRL's response parsers put the <think> block


def _message_text(message: dict) -> str:
    content = message.get("content", "")
    if isinstance(content, list):  # multimodal parts: keep the text ones
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    if not isinstance(content, str):
        content = ""
    reasoning = next((r for r in (message.get(f) for f in REASONING_FIELDS) if isinstance(r, str) and r.strip()), None)
    return content if reasoning is None else f"<think>{reasoning}</think>\n{content}"


def completion_text(completion) -> str:
    """The text of one TRL completion: a string, or the last assistant message of a conversation."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, dict):
        completion = [completion]
    if isinstance(completion, Sequence):
        for message in reversed(completion):
            if isinstance(message, dict) and message.get("role", "assistant") == "assistant":
                return _message_text(message)
        return ""
    raise TypeError(f"a TRL completion must be a string or a list of messages, got {type(completion).__name__}")


def _single_message(completion) -> bool:
    return isinstance(completion, str | dict) or (isinstance(completion, Sequence) and len(completion) == 1)


class CodeReward:
    """A TRL reward function scoring with the in-process pool, or with the reward server at server_url."""

    def __init__(self, server_url: str | None = None, auth_token: str | None = None, config: str | None = None,
                 label_column: str = TRL_LABEL_COLUMN, tokenizer=None, name: str = "code_reward") -> None:
        self.server_url, self.auth_token, self.config = server_url, auth_token, config
        self.label_column = label_column
        self.tokenizer = tokenizer
        self.__name__ = name  # TRL logs rewards/<__name__>/mean

    def _inputs(self, completions, completion_ids, kwargs) -> tuple[list[str], list[str | None]]:
        if completions is None:
            raise TypeError(f"{self.__name__} needs completions= (TRL passes them as a keyword)")
        if self.label_column not in kwargs:
            columns = sorted(k for k in kwargs if k not in TRL_CALL_KWARGS)
            raise KeyError(f"{self.__name__} needs the dataset column {self.label_column!r} (the label JSON written "
                           f"by data/preprocess.py --output_format trl); columns passed: {columns}. A dataset "
                           f"that names it differently: make_code_reward(label_column=...)")
        labels = [lab if isinstance(lab, str) or lab is None else json.dumps(lab) for lab in kwargs[self.label_column]]
        texts = [completion_text(c) for c in completions]
        if self.tokenizer is not None and completion_ids is not None:
            # a tool loop's ids hold the tool results too: those completions keep their last assistant message
            texts = [self.tokenizer.decode(ids, skip_special_tokens=True) if _single_message(c) else t
                     for c, ids, t in zip(completions, completion_ids, texts, strict=True)]
        if len(labels) != len(texts):
            raise ValueError(f"{len(texts)} completions but {len(labels)} values in column {self.label_column!r}")
        return texts, labels

    def _score(self, texts: list[str], labels: list[str | None]) -> RewardResponse:
        return get_backend(self.server_url, self.auth_token, self.config).score(texts, labels=labels)

    @staticmethod
    def _answer(answer: RewardResponse, kwargs) -> list[float]:
        log_metric, log_extra = kwargs.get("log_metric"), kwargs.get("log_extra")
        for key, values in answer.extra_logs.items():
            name = f"coderl/{key.split('/', 1)[-1]}"
            if callable(log_metric):
                log_metric(name, sum(values) / max(len(values), 1))
            if callable(log_extra):
                log_extra(name, list(values))
        return [float(r) for r in answer.rewards]

    def __call__(self, prompts=None, completions=None, completion_ids=None, **kwargs) -> list[float]:
        texts, labels = self._inputs(completions, completion_ids, kwargs)
        answer = self._score(texts, labels)
        self.last = (texts, labels, answer)
        return self._answer(answer, kwargs)

    def __getstate__(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != "last"}  # a batch is no part of the function


class ComponentLog:
    """One component of a CodeReward's last batch as a TRL reward function, to be given weight 0.

    TRL 0.x passes no log_metric; it logs every reward function's batch mean as rewards/<name>/mean, so
    with weight 0 a component is logged per step without changing the reward. It must come after its
    CodeReward in reward_funcs (TRL calls them in order on the same batch) and re-scores nothing."""

    def __init__(self, reward: CodeReward, key: str) -> None:
        self.reward, self.key = reward, key
        self.__name__ = f"coderl/{key.split('/', 1)[-1]}"

    def __call__(self, prompts=None, completions=None, completion_ids=None, **kwargs) -> list[float]:
        texts, labels = self.reward._inputs(completions, completion_ids, kwargs)
        last = getattr(self.reward, "last", None)
        if last is None or last[0] != texts or last[1] != labels:
            raise RuntimeError(f"{self.__name__}: not the batch {self.reward.__name__} scored last; put it after "
                               f"{self.reward.__name__} in reward_funcs (with_component_logs does)")
        return [float(v) for v in last[2].extra_logs[self.key]]


def with_component_logs(reward: CodeReward) -> tuple[list, list[float]]:
    """(reward_funcs, reward_weights) for TRL 0.x: the reward, then each component at weight 0.

        funcs, weights = with_component_logs(make_code_reward())
        GRPOTrainer(reward_funcs=funcs, args=GRPOConfig(reward_weights=weights, ...), ...)
    """
    from ..code_reward import extra_logs

    comps = [ComponentLog(reward, key) for key in extra_logs([])]
    return [reward, *comps], [1.0] + [0.0] * len(comps)


class AsyncCodeReward(CodeReward):
    """CodeReward as a coroutine: the pool (or the server) runs on a worker thread, off TRL's event loop."""

    async def __call__(self, prompts=None, completions=None, completion_ids=None, **kwargs) -> list[float]:
        texts, labels = self._inputs(completions, completion_ids, kwargs)
        return self._answer(await asyncio.to_thread(self._score, texts, labels), kwargs)


def make_code_reward(server_url: str | None = None, auth_token: str | None = None, config: str | None = None,
                     label_column: str = TRL_LABEL_COLUMN, *, tokenizer=None, asynchronous: bool = False,
                     name: str | None = None) -> CodeReward:
    """A TRL reward function (a coroutine function with asynchronous=True) for this server or pool config."""
    cls = AsyncCodeReward if asynchronous else CodeReward
    return cls(server_url, auth_token, config, label_column, tokenizer,
               name or ("code_reward_async" if asynchronous else "code_reward"))


code_reward = make_code_reward()
code_reward_async = make_code_reward(asynchronous=True)


def group_norm_trainer(base):
    """A subclass of a GRPOTrainer class whose advantages are the adaptive group norm (integrations/group_norm.py).

    TRL computes advantages inside _generate_and_score_completions with no hook: the subclass runs it unscaled
    (scale_rewards off: advantage = r - group mean), gathers those across processes (TRL's groups may span them),
    divides each group whose std >= group_norm_std_threshold by std + group_norm_eps, keeps its own slice, and
    logs group_norm_fallback_frac / group_norm_all_equal_frac per step (train/<name> in TRL's logs).
    """
    from .group_norm import (
        ALL_EQUAL_METRIC,
        DEFAULT_EPS,
        DEFAULT_STD_THRESHOLD,
        FALLBACK_METRIC,
        check_knobs,
        group_norm_flat,
    )

    class GroupNormGRPOTrainer(base):
        def __init__(self, *args, group_norm_std_threshold: float = DEFAULT_STD_THRESHOLD,
                     group_norm_eps: float = DEFAULT_EPS, **kwargs) -> None:
            check_knobs(group_norm_std_threshold, group_norm_eps)
            super().__init__(*args, **kwargs)
            aggregation = getattr(self, "multi_objective_aggregation", "sum_then_normalize")
            if aggregation != "sum_then_normalize":
                raise ValueError(f"GroupNormGRPOTrainer normalises the summed reward; multi_objective_aggregation="
                                 f"{aggregation!r} normalises each reward function (use 'sum_then_normalize')")
            self.group_norm_std_threshold, self.group_norm_eps = group_norm_std_threshold, group_norm_eps
            self.scale_rewards = "none" if isinstance(self.scale_rewards, str) else False  # TRL >= 0.20 / 0.x

        def _generate_and_score_completions(self, inputs):
            out = super()._generate_and_score_completions(inputs)
            mode = "train" if self.model.training else "eval"
            n = self.num_generations
            if mode == "eval":  # TRL 1.x may sample another group size for evaluation
                n = getattr(self, "num_generations_eval", None) or n
            local = out["advantages"]
            centred = self.accelerator.gather(local)  # every process's r - mean, in process order: whole groups
            adv, stats = group_norm_flat(centred, n, self.group_norm_std_threshold, self.group_norm_eps)
            logged = getattr(self, "_logs", {}).get("advantages")  # TRL 1.x's completions table
            if logged is not None and len(logged) >= adv.numel():
                for _ in range(adv.numel()):
                    logged.pop()
                logged.extend(adv.tolist())
            i = self.accelerator.process_index * local.numel()
            out["advantages"] = adv[i:i + local.numel()].to(local.dtype)
            self._metrics[mode][FALLBACK_METRIC].append(stats.fallback_frac)
            self._metrics[mode][ALL_EQUAL_METRIC].append(stats.all_equal_frac)
            return out

    GroupNormGRPOTrainer.__qualname__ = f"GroupNorm{base.__qualname__}"
    return GroupNormGRPOTrainer


_TRAINERS: dict = {}


def __getattr__(name: str):
    """GroupNormGRPOTrainer: trl.GRPOTrainer with the adaptive group norm (trl imported only when asked for)."""
    if name != "GroupNormGRPOTrainer":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if name not in _TRAINERS:
        from trl import GRPOTrainer

        _TRAINERS[name] = group_norm_trainer(GRPOTrainer)
    return _TRAINERS[name]

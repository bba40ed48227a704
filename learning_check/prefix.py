"""GRPO's forwards with each distinct prompt of a batch run once (coderl.rewards.evaluation.prefill): TRL 0.17's
log-probs and gradients, and its samples, at less cost; the group's num_generations rows share the whole prompt."""

from __future__ import annotations

import functools

from coderl.rewards.evaluation import prefill


def per_token_logps(model, input_ids, attention_mask, logits_to_keep: int, temperature: float = 1.0):
    """Log-probs of each row's last `logits_to_keep` tokens, as TRL 0.17's GRPOTrainer computes them, with the
    tokens before them run once per distinct (ids, mask) prefix."""
    from trl.trainer.utils import selective_log_softmax

    cut = input_ids.size(1) - logits_to_keep - 1  # the logit at `cut` predicts the first kept token
    found = prefill.distinct_rows(input_ids[:, :cut], attention_mask[:, :cut]) if cut > 0 else None
    past = None
    if found is None:
        cut = 0
    else:
        (ids, mask), rows = found
        past = prefill.prefix_cache(model, ids, mask, rows)
    logits = model(input_ids=input_ids[:, cut:], attention_mask=attention_mask, past_key_values=past,
                   use_cache=False).logits
    logits = logits[:, -logits_to_keep - 1:-1] / temperature
    return selective_log_softmax(logits, input_ids[:, -logits_to_keep:])


class SharedPrompt:
    """GRPOTrainer mixin (TRL 0.17): each distinct prompt of a batch run once, in generation and in the log-prob
    forwards (`_get_per_token_logps`)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        # TRL 0.17 samples with unwrapped_model.generate(prompt_ids, attention_mask=..., generation_config=...)
        model = self.accelerator.unwrap_model(self.model)
        model.generate = functools.partial(prefill.generate, model)

    def _get_per_token_logps(self, model, input_ids, attention_mask, logits_to_keep, batch_size=None):
        import torch

        step = batch_size or input_ids.size(0)
        return torch.cat([per_token_logps(model, input_ids[i:i + step], attention_mask[i:i + step], logits_to_keep,
                                          self.temperature) for i in range(0, input_ids.size(0), step)])

"""Prompt tokens that rows of a batch share, run once: their keys and values computed per distinct prefix.

GRPO scores num_generations completions of each prompt, and SFT's prompts share their opening tokens; running
those tokens once per distinct prefix and giving each row its prefix's keys and values leaves the logits, and
through the index's backward (a sum over the rows) the gradients, those of the full rows.
"""

from __future__ import annotations


def prefix_cache(model, ids, mask, rows):
    """A DynamicCache holding, for row i, the keys and values of prefix rows[i] of `ids` (distinct prefixes, run once)."""
    from transformers import DynamicCache

    cache = model.get_decoder()(input_ids=ids, attention_mask=mask, past_key_values=DynamicCache(),
                                use_cache=True).past_key_values
    return DynamicCache.from_legacy_cache(tuple(
        (k.index_select(0, rows), v.index_select(0, rows)) for k, v in cache.to_legacy_cache()))


def per_token_logps(model, input_ids, attention_mask, logits_to_keep: int, temperature: float = 1.0):
    """Log-probs of each row's last `logits_to_keep` tokens, as TRL 0.17's GRPOTrainer computes them, with the
    tokens before them run once per distinct (ids, mask) prefix."""
    import torch
    from trl.trainer.utils import selective_log_softmax

    cut = input_ids.size(1) - logits_to_keep - 1  # the logit at `cut` predicts the first kept token
    past = None
    if cut > 0:
        head = torch.cat([input_ids[:, :cut], attention_mask[:, :cut]], dim=1)
        distinct, rows = torch.unique(head, dim=0, return_inverse=True)
        if len(distinct) < len(head):
            past = prefix_cache(model, distinct[:, :cut], distinct[:, cut:], rows)
    if past is None:
        cut = 0
    logits = model(input_ids=input_ids[:, cut:], attention_mask=attention_mask, past_key_values=past,
                   use_cache=False).logits
    logits = logits[:, -logits_to_keep - 1:-1] / temperature
    return selective_log_softmax(logits, input_ids[:, -logits_to_keep:])


class SharedPromptLogps:
    """GRPOTrainer mixin (TRL 0.17's `_get_per_token_logps`): a batch's distinct prompts run once per forward."""

    def _get_per_token_logps(self, model, input_ids, attention_mask, logits_to_keep, batch_size=None):
        import torch

        step = batch_size or input_ids.size(0)
        return torch.cat([per_token_logps(model, input_ids[i:i + step], attention_mask[i:i + step], logits_to_keep,
                                          self.temperature) for i in range(0, input_ids.size(0), step)])

"""Prompt tokens that rows of a batch share, run once: keys and values computed per distinct prefix, given to each row.

The n samples of a prompt (pass@k, a GRPO group) share all of it. Running it once per distinct (ids, mask) row
and giving each row its prefix's keys and values leaves the logits those of the full rows and, through the
index's backward (a sum over the rows), the gradients too.
"""

from __future__ import annotations


def distinct_rows(ids, mask):
    """(distinct rows of (ids, mask), each row's index into them), or None where no two rows are alike."""
    import torch

    if ids.size(1) == 0:
        return None
    distinct, rows = torch.unique(torch.cat([ids, mask], dim=1), dim=0, return_inverse=True)
    if len(distinct) == len(ids):
        return None
    n = ids.size(1)
    return (distinct[:, :n], distinct[:, n:]), rows


def prefix_cache(model, ids, mask, rows, position_ids=None):
    """A DynamicCache holding, for row i, the keys and values of prefix rows[i] of `ids` (each distinct prefix run once)."""
    from transformers import DynamicCache

    cache = model.get_decoder()(input_ids=ids, attention_mask=mask, position_ids=position_ids,
                                past_key_values=DynamicCache(), use_cache=True).past_key_values
    return DynamicCache.from_legacy_cache(tuple(
        (k.index_select(0, rows), v.index_select(0, rows)) for k, v in cache.to_legacy_cache()))


def generate(model, input_ids, attention_mask, **kwargs):
    """model.generate(input_ids, attention_mask, **kwargs) with each distinct left-padded prompt's tokens but its
    last run once, at the positions generate gives them (the mask's running count, so padding shifts none)."""
    # the class's generate: an instance's own generate may be this function (learning_check.prefix.SharedPrompt)
    plain = type(model).generate.__get__(model)
    found = distinct_rows(input_ids[:, :-1], attention_mask[:, :-1])
    if found is None or not getattr(model, "_supports_cache_class", False):
        return plain(input_ids=input_ids, attention_mask=attention_mask, **kwargs)
    import torch

    (ids, mask), rows = found
    positions = (mask.long().cumsum(-1) - 1).masked_fill(mask == 0, 1)  # as generate's prepare_inputs_for_generation
    with torch.no_grad():
        past = prefix_cache(model, ids, mask, rows, positions)
    return plain(input_ids=input_ids, attention_mask=attention_mask, past_key_values=past, **kwargs)

"""Prompt length in tokens as the trainer sees it: the chat template applied with the generation prompt,
then tokenised without special tokens (OpenRLHF 0.5.7's PromptDataset + tokenize_fn). A prompt longer
than the trainer's --prompt_max_len is truncated there, no longer matches its problem at the reward
server, and scores the unmatched reward: preflight counts such prompts, the preprocessor can drop them."""

from __future__ import annotations

from collections.abc import Sequence

_BATCH = 256  # conversations tokenised per call: the fast tokenizer's batch speed, bounded memory


def load_tokenizer(path: str):
    """A local Hugging Face tokenizer (no download); ValueError naming the path when it does not load."""
    try:
        from transformers import AutoTokenizer
    except ImportError:
        raise ValueError(f"--tokenizer {path}: measuring prompts needs transformers (pip install transformers)") \
            from None
    try:
        return AutoTokenizer.from_pretrained(path, local_files_only=True)
    except Exception as e:
        raise ValueError(f"cannot load the tokenizer at {path}: {e}") from None


def prompt_lengths(tokenizer, conversations: Sequence[list[dict] | str]) -> list[int]:
    """Tokens of each conversation's training prompt (render_prompts: the chat template with the generation
    prompt), counted as encode_prompts encodes it, in batches."""
    from coderl.rewards.evaluation.generate import render_prompts

    out: list[int] = []
    for i in range(0, len(conversations), _BATCH):
        texts = render_prompts(tokenizer, conversations[i:i + _BATCH])
        out.extend(len(ids) for ids in tokenizer(texts, add_special_tokens=False)["input_ids"])
    return out

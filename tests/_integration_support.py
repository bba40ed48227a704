"""A tiny real tokenizer whose tokens are whole answers, for driving TRL and verl on CPU with a random model;
the TRL rows and coderl's own scoring the TRL tests compare the trainers' logs with."""

from __future__ import annotations

import json
from pathlib import Path

PROBLEMS = ("HumanEval/0", "HumanEval/2")  # the HumanEval rows the integration tests preprocess


def think_answer(code: str) -> str:
    return f"<think>I will write it.</think>\n<answer>\n```python\n{code}\n```\n</answer>"


def answer_chunks(he: dict[str, dict]) -> list[str]:
    """Answers to PROBLEMS that coderl scores differently: all tests, some tests, format off, no code."""
    h0, h2 = he["HumanEval/0"], he["HumanEval/2"]
    return [think_answer(h0["prompt"] + h0["canonical_solution"]),                      # all tests of /0
            think_answer("def has_close_elements(numbers, threshold):\n    return True"),  # some tests of /0
            think_answer(h2["prompt"] + h2["canonical_solution"]),                      # all tests of /2
            f"```python\n{h2['prompt'] + h2['canonical_solution']}\n```",                 # /2, format off
            "I am not sure how to solve this."]                                          # no code


def tiny_tokenizer(path: Path, chunks: list[str]):
    """A real HF fast tokenizer: the specials plus one token per chunk, a ChatML template; saved to path."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    specials = ["<unk>", "<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    vocab = {t: i for i, t in enumerate(specials + chunks)}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Split("\x00", "isolated")  # never splits: any other text is one <unk>
    tok.decoder = decoders.Fuse()  # chunks concatenate back verbatim
    template = ("{% for m in messages %}{{ '<|im_start|>' + m['role'] + '\n' + m['content'] + '<|im_end|>\n' }}"
                "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}")
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", pad_token="<|endoftext|>",
                                   eos_token="<|im_end|>", additional_special_tokens=["<|im_start|>"],
                                   chat_template=template, padding_side="left")
    fast.save_pretrained(path)
    return fast


def trl_rows(tmp: Path) -> tuple[Path, dict[str, dict]]:
    """The preprocessor's TRL rows for PROBLEMS (tmp/out/train.jsonl), and the HumanEval records they come from."""
    from coderl.rewards.labels import TRL_LABEL_COLUMN, parse_label
    from tests.test_preprocess import humaneval_rows, run_cli, write_parquet

    he = {r["task_id"]: r for r in humaneval_rows()}
    write_parquet(tmp / "in" / "he.parquet", [he[t] for t in PROBLEMS])
    run_cli("--input_dir", tmp / "in", "--output_dir", tmp / "out", "--output_format", "trl", "--test_ratio", "0")
    rows = [json.loads(line) for line in (tmp / "out" / "train.jsonl").read_text().splitlines()]
    assert [parse_label(r[TRL_LABEL_COLUMN]).source_id for r in rows] == list(PROBLEMS)
    assert all(set(r) == {"prompt", TRL_LABEL_COLUMN} for r in rows)
    assert all([m["role"] for m in r["prompt"]] == ["system", "user"] for r in rows)
    return tmp / "out" / "train.jsonl", he


def coderl_breakdowns(config: Path, batches: list[tuple[list[str], list[str]]]) -> list[list]:
    """coderl's own scoring (RewardBreakdowns) of each (texts, labels) batch, in a pool of the adapter's config."""
    from coderl.rewards.config import load_config
    from coderl.rewards.pipeline import Scorer, score
    from coderl.rewards.sandbox import Sandbox

    cfg = load_config(config)
    scorer = Scorer(cfg.reward)
    with Sandbox(cfg.sandbox) as sandbox:
        return [score(scorer, sandbox, list(texts), None, list(labels)) for texts, labels in batches]

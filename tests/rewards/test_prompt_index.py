"""rewards/prompt_index.py: loading the JSONL, lookups per template, duplicates, start-up errors."""

from __future__ import annotations

import json

import pytest

from coderl.rewards.errors import DataError
from coderl.rewards.prompt_index import PREFIX_CHARS, PromptIndex, describe, load_problems
from coderl.rewards.query import clean_response
from tests.support import (
    PROBLEMS,
    SYSTEM_BLOCK,
    SYSTEM_THINK,
    block,
    chatml,
    filler_rows,
    label_json,
    llama3,
    raw,
    rows,
    think,
    write_jsonl,
)


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    path = write_jsonl(tmp_path_factory.mktemp("idx") / "train.jsonl", rows() + filler_rows(50))
    return PromptIndex.from_jsonl(path)


@pytest.mark.parametrize("fmt", list(PROBLEMS))
@pytest.mark.parametrize("builder", ["chatml", "llama3", "raw"])
def test_lookup_each_template_finds_problem_and_response(index, fmt, builder):
    user, _, code, _ = PROBLEMS[fmt]
    response = think(code)
    q = {"chatml": lambda: chatml(SYSTEM_THINK, user, response),
         "llama3": lambda: llama3(SYSTEM_THINK, user, response),
         "raw": lambda: raw(user, response)}[builder]()
    m = index.lookup(q)
    assert m is not None, builder
    assert m.problem.label.source_id == fmt
    assert m.how == ("prefix" if builder == "raw" else builder)
    assert clean_response(m.response) == response


def test_lookup_survives_whitespace_changes_from_decoding(index):
    user = PROBLEMS["assert"][0]
    q = chatml(SYSTEM_THINK, "  " + user.replace(" ", "  ") + "\n", "x")
    assert index.lookup(q).problem.label.source_id == "assert"


def test_unknown_prompt_is_none(index):
    assert index.lookup(chatml(SYSTEM_THINK, "Something never seen.", "x")) is None
    assert index.lookup(raw("Something never seen at all, not a prefix of anything.", "x")) is None
    assert index.lookup("") is None
    assert index.lookup("<|endoftext|>" * 50) is None


def test_a_raw_response_cannot_extend_its_prompt_into_another(tmp_path):
    # Without chat markers a query does not show where its prompt ends: a response to `short` that goes on
    # with the rest of `long_` must not be graded as `long_`, so a prompt that extends another one with a
    # different label is never matched (and reported at start-up); the shorter one still is.
    short = "Write a function."
    long_ = "Write a function. It must also handle negative numbers carefully." + " pad" * 100
    other = "Write a function. " + "Another one, same label as the short one." + " pad" * 80
    data = [{"input": [{"role": "user", "content": short}], "label": label_json("assert")},
            {"input": [{"role": "user", "content": long_}], "label": label_json("call")},
            {"input": [{"role": "user", "content": other}], "label": label_json("assert")}]
    idx = PromptIndex.from_jsonl(write_jsonl(tmp_path / "d.jsonl", data))
    assert len(long_.replace(" ", "")) > PREFIX_CHARS
    assert idx.lookup(raw(long_, "RESPONSE")) is None
    assert idx.lookup(raw(short, long_[len(short):] + "RESPONSE")) is None  # not graded as long_
    m = idx.lookup(raw(short, " RESPONSE"))
    assert m.problem.label.source_id == "assert" and clean_response(m.response) == "RESPONSE"
    m = idx.lookup(raw(other, "RESPONSE"))  # extends `short` with the same label: unambiguous
    assert m.problem.line == 3 and clean_response(m.response) == "RESPONSE"
    assert idx.stats.nested_prompts == 1 and "1 raw prompts start with another prompt" in describe(idx)


def test_duplicates_and_ambiguous_prompts_are_reported_and_system_prompt_disambiguates(tmp_path):
    user = PROBLEMS["assert"][0]
    data = rows() + [rows()[1],  # exact duplicate row
                     {"input": [{"role": "system", "content": SYSTEM_BLOCK}, {"role": "user", "content": user}],
                      "label": label_json("assert", "code_block")}]  # same prompt, other label
    idx = PromptIndex.from_jsonl(write_jsonl(tmp_path / "d.jsonl", data))
    assert idx.stats.duplicate_rows == 1 and idx.stats.ambiguous_prompts == 1
    msg = describe(idx)
    assert "1 duplicate rows" in msg and "1 prompts appear with different labels" in msg
    assert "lines 2 and 7" in msg
    think_m = idx.lookup(chatml(SYSTEM_THINK, user, "x"))
    block_m = idx.lookup(chatml(SYSTEM_BLOCK, user, "x"))
    assert think_m.problem.answer_format == "think_answer"
    assert block_m.problem.answer_format == "code_block"


def test_tokenizer_templated_prompts_are_indexed(tmp_path):
    """--tokenizer: a template we do not know by heart is matched exactly via apply_chat_template."""
    from tests.support import filler_rows as _fr

    class TinyTokenizer:  # the two members PromptIndex uses; a real HF tokenizer is tested in the server tests
        all_special_tokens = ["<BOS>", "<PAD>", "<EOS>"]

        def apply_chat_template(self, msgs, tokenize, add_generation_prompt):
            return "<BOS>" + "".join(f"##{m['role'].upper()}## {m['content']} ##END##" for m in msgs) + "##BOT##"

    data = _fr(5)
    idx = PromptIndex.from_jsonl(write_jsonl(tmp_path / "d.jsonl", data), tokenizer=TinyTokenizer())
    msgs = data[3]["input"]
    prompt = TinyTokenizer().apply_chat_template(msgs, False, True)
    m = idx.lookup("<PAD><PAD>" + prompt + block("x = 1") + "<EOS><PAD>")
    assert m.problem.label.source_id == "filler-3"
    assert clean_response(m.response, idx.special_tokens) == block("x = 1")


def test_sha256_is_of_file_bytes(tmp_path):
    import hashlib

    p = write_jsonl(tmp_path / "d.jsonl", rows())
    _, sha = load_problems(p)
    assert sha == hashlib.sha256(p.read_bytes()).hexdigest()


@pytest.mark.parametrize("line, message", [
    ("{not json", r"line 3: not valid JSON"),
    ("[1, 2]", r"line 3: expected a JSON object"),
    (json.dumps({"input": [], "label": "{}"}), r"line 3: field 'input' must be a non-empty list"),
    (json.dumps({"input": [{"role": "system", "content": "s"}], "label": "{}"}), r"line 3: .*no non-empty user"),
    (json.dumps({"input": [{"role": "user", "content": "u"}], "label": 5}), r"line 3: field 'label' must be"),
    (json.dumps({"input": [{"role": "user", "content": "u"}], "label": json.dumps({"format": "x", "tests": []})}),
     r"line 3: label.format must be one of"),
])
def test_bad_lines_name_file_and_line(tmp_path, line, message):
    good = [json.dumps(r) for r in rows()[:2]]
    p = tmp_path / "bad.jsonl"
    p.write_text("\n".join(good + [line]) + "\n")
    with pytest.raises(DataError, match=message) as e:
        load_problems(p)
    assert str(p) in str(e.value)


def test_missing_and_empty_files(tmp_path):
    with pytest.raises(DataError, match="data file not found"):
        load_problems(tmp_path / "nope.jsonl")
    (tmp_path / "empty.jsonl").write_text("\n\n")
    with pytest.raises(DataError, match="no rows"):
        load_problems(tmp_path / "empty.jsonl")


def test_wrong_kind_of_file_says_what_to_pass(tmp_path):
    """A directory, a parquet file, a TRL-layout JSONL: each error says what was given and what to pass."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    out = tmp_path / "data_out"
    out.mkdir()
    write_jsonl(out / "train.jsonl", rows())
    with pytest.raises(DataError, match=rf"{out} is a directory; .*did you mean {out / 'train.jsonl'}\?"):
        load_problems(out)
    pq.write_table(pa.table({"prompt": ["x"]}), tmp_path / "he.parquet")
    with pytest.raises(DataError, match=r"he.parquet is parquet; .*python data/preprocess.py --input_dir"):
        load_problems(tmp_path / "he.parquet")
    trl = tmp_path / "trl.jsonl"
    trl.write_text(json.dumps({"prompt": [{"role": "user", "content": "u"}], "coderl_label": "{}"}) + "\n")
    with pytest.raises(DataError, match=r"trl.jsonl: line 1: a row of the TRL layout .*without --output_format"):
        load_problems(trl)

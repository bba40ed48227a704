"""rewards/labels.py: the label schema of docs/label_format.md -- parsing, validation messages, round trip."""

from __future__ import annotations

import hashlib
import json
import pickle

import pytest

from coderl.rewards.labels import FORMATS, LABEL_VERSION, Label, LabelError, parse_label

VALID = {
    "unittest": {"format": "unittest", "tests": ["import unittest\nclass T(unittest.TestCase):\n    def test_a(self):\n        pass\n"]},
    "assert": {"format": "assert", "tests": ["assert f(1) == 1"], "setup_code": "import math"},
    "humaneval": {"format": "humaneval", "entry_point": "f", "tests": ["def check(candidate):\n    assert candidate(1)\n"]},
    "stdio": {"format": "stdio", "tests": [{"input": "1\n", "output": "1\n"}], "time_limit_s": 2},
    "call": {"format": "call", "entry_point": "f", "tests": [{"input": [1, [2]], "output": {"a": 1}}]},
    "pytest": {"format": "pytest", "entry_point": "f", "tests": ["from solution import f\n\ndef test_f():\n    assert f(1) == 2\n"]},
    "checker": {"format": "checker", "tests": [{"input": "1\n", "output": "2\n", "checker": "print(1)\n"},
                                               {"input": "2\n", "output": "3\n"}]},
}


@pytest.mark.parametrize("fmt", FORMATS)
def test_round_trip(fmt):
    label = parse_label(VALID[fmt])
    assert isinstance(label, Label) and label.format == fmt and label.version == LABEL_VERSION
    again = parse_label(label.to_json())  # the JSON string form stored in the JSONL
    assert again == label
    assert json.loads(label.to_json())["tests"] == VALID[fmt]["tests"]


@pytest.mark.parametrize("raw, message", [
    ("{not json", "not valid JSON"),
    ([1, 2], "must be a JSON object"),
    ({"format": "nope", "tests": ["x"]}, "label.format must be one of"),
    ({"format": "assert"}, "label.tests must be a list"),
    ({"format": "assert", "tests": []}, "label.tests is empty"),
    ({"format": "assert", "tests": ["   "]}, "label.tests[0] must be a non-empty string"),
    ({"format": "stdio", "tests": [{"input": "1"}]}, "label.tests[0].output must be a string"),
    ({"format": "call", "entry_point": "f", "tests": [{"input": 1, "output": 1}]}, "label.tests[0].input must be a list"),
    ({"format": "call", "tests": [{"input": [], "output": 1}]}, "label.entry_point is required"),
    ({"format": "humaneval", "entry_point": "f", "tests": ["a", "b"]}, "exactly one check program"),
    ({"format": "assert", "tests": ["assert 1"], "entry_point": "not an id"}, "label.entry_point must be a Python identifier"),
    ({"format": "assert", "tests": ["assert 1"], "time_limit_s": 0}, "label.time_limit_s"),
    ({"format": "assert", "tests": ["assert 1"], "ref_time_s": -1}, "label.ref_time_s must be a number of seconds"),
    ({"format": "assert", "tests": ["assert 1"], "ref_time_s": "1.5"}, "label.ref_time_s must be a number of seconds"),
    ({"format": "assert", "tests": ["assert 1"], "ref_time_s": True}, "label.ref_time_s must be a number of seconds"),
    ({"format": "assert", "tests": ["assert 1"], "version": 99}, "label.version 99 is not supported"),
    ({"format": "assert", "tests": ["assert 1"], "extra": "x"}, "label.extra must be an object"),
])
def test_bad_labels_name_the_field(raw, message):
    with pytest.raises(LabelError) as e:
        parse_label(json.dumps(raw) if not isinstance(raw, str) else raw)
    assert message in str(e.value)


def test_ref_time_s_round_trips():
    label = parse_label({"format": "assert", "tests": ["assert 1"], "ref_time_s": 0.25})
    assert label.ref_time_s == 0.25 and parse_label(label.to_json()) == label
    assert parse_label({"format": "assert", "tests": ["assert 1"]}).ref_time_s is None


def test_a_label_carries_its_json_and_digest_computed_once():
    raw = {"format": "assert", "tests": ["assert f(1) == 2"], "extra": {"k": "é"}, "source": "s"}
    label = parse_label(json.dumps(raw))
    assert label.json is label.to_json() == json.dumps({**raw, "version": 1}, ensure_ascii=False, sort_keys=True)
    assert label.digest == hashlib.blake2b(label.json.encode(), digest_size=32).hexdigest()
    assert parse_label(label.json).digest == label.digest != parse_label({**raw, "source": "t"}).digest
    shipped = pickle.loads(pickle.dumps(label))  # to a Ray actor: the digest travels, the JSON is rebuilt if asked
    assert "json" not in shipped.__dict__ and shipped.__dict__["digest"] == label.digest and shipped == label

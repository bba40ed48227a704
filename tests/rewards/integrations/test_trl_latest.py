"""rewards/integrations/trl.py inside the current TRL (1.x, installed by scripts/test.sh into .cache/trl-<version>
with the newer transformers it needs): real GRPOTrainer runs on CPU in a subprocess whose PYTHONPATH puts that
directory first, HumanEval rows written by the real preprocessor, the tiny tokenizer of tests.support.

The subprocess (tests/rewards/integrations/trl_latest_run.py) only drives TRL; here coderl scores the same texts itself and the
rewards, metrics and completions table TRL logged must be exactly that.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from packaging.version import Version

from coderl.rewards.integrations.trl import (
    TRL_CALL_KWARGS,
    code_reward,
    code_reward_async,
    completion_text,
    make_code_reward,
)
from coderl.rewards.labels import TRL_LABEL_COLUMN, parse_label
from tests.support import REPO_ROOT, answer_chunks, coderl_breakdowns, trl_rows

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def trl_data(tmp_path_factory):
    """The preprocessor's TRL rows (train.jsonl) and the HumanEval records they come from."""
    return trl_rows(tmp_path_factory.mktemp("trl_rows"))


@pytest.fixture(scope="module")
def config(tmp_path_factory) -> Path:
    """The pool config every reward function of this module is made with (one process-wide pool per config)."""
    path = tmp_path_factory.mktemp("trl_config") / "reward.yaml"
    path.write_text("sandbox:\n  workers: 2\n")
    return path


@pytest.fixture(scope="module")
def run(tmp_path_factory, trl_latest_path, trl_data, config):
    """The TRL 1.x runs of tests/rewards/integrations/trl_latest_run.py: their result.json, the rows they trained on, the pool config."""
    tmp = tmp_path_factory.mktemp("trl_latest")
    data, he = trl_data
    (tmp / "he.json").write_text(json.dumps(he))
    work = tmp / "work"
    work.mkdir()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(trl_latest_path), str(REPO_ROOT)]),
               HF_HOME=str(tmp / "hf"), HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    proc = subprocess.run([sys.executable, "-m", "tests.rewards.integrations.trl_latest_run", str(data), str(tmp / "he.json"),
                           str(config), str(work)], cwd=REPO_ROOT, env=env, capture_output=True, text=True,
                          timeout=240)
    assert proc.returncode == 0, f"the TRL run failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}"
    result = json.loads((work / "result.json").read_text())
    rows = [json.loads(line) for line in data.read_text().splitlines()]
    return {"result": result, "rows": rows, "he": he, "config": config, "work": work, "trl": trl_latest_path}


def test_the_subprocess_ran_the_newer_stack(run):
    result = run["result"]
    assert Version(result["versions"]["trl"]) >= Version("1.0")
    assert Version(result["versions"]["transformers"]) >= Version("4.56.2")  # what TRL 1.x requires; venv: 4.46.3
    assert Path(result["transformers_file"]).is_relative_to(run["trl"])


def test_grpo_trainer_logs_coderls_rewards(run):
    """Default decoding, code_reward and code_reward_async side by side: the per-completion rewards and components
    in the completions table TRL wrote, and the step means in its logs, are what coderl computes."""
    logs = run["result"]["plain"]
    assert len(logs) == 2
    label_of = {json.dumps(r["prompt"]): r[TRL_LABEL_COLUMN] for r in run["rows"]}
    tables = [pq.read_table(run["work"] / "plain" / "completions" / f"completions_{s:05d}.parquet").to_pylist()
              for s in (1, 2)]
    batches = []
    for table in tables:
        assert len(table) == 4
        assert all(len(t["completion"]) == 1 and t["completion"][0]["role"] == "assistant" for t in table)
        batches.append(([t["completion"][0]["content"] for t in table],
                        [label_of[json.dumps(t["prompt"])] for t in table]))
    seen = set()
    for table, log, items in zip(tables, logs, coderl_breakdowns(run["config"], batches), strict=True):
        want = [b.reward for b in items]
        for t, b in zip(table, items, strict=True):
            assert t["code_reward"] == pytest.approx(b.reward, abs=1e-6)
            assert t["code_reward_async"] == pytest.approx(b.reward, abs=1e-6)
            # log_extra: the components of each completion
            assert t["coderl/correctness"] == b.correctness and t["coderl/format"] == b.format
            assert t["coderl/all_passed"] == float(b.all_passed)
        mean = sum(want) / 4
        assert log["rewards/code_reward/mean"] == pytest.approx(mean, abs=1e-6)
        assert log["rewards/code_reward_async/mean"] == pytest.approx(mean, abs=1e-6)
        assert log["reward"] == pytest.approx(2 * mean, abs=1e-6)  # both functions, weight 1 each
        # log_metric: the component means next to TRL's own metrics
        assert log["coderl/correctness"] == pytest.approx(sum(b.correctness for b in items) / 4, abs=1e-6)
        assert log["coderl/format"] == pytest.approx(sum(b.format for b in items) / 4, abs=1e-6)
        seen.update(round(r, 6) for r in want)
    assert len(seen) >= 2, f"every sampled completion got the same reward {seen}: the checks above are vacuous"


def test_response_parser_scored_from_the_generated_tokens(run):
    """With a response template TRL hands over parsed messages (the <think> block split off, sometimes text
    dropped); make_code_reward(tokenizer=...) scores the generated tokens, as OpenRLHF scores the response."""
    parsed = run["result"]["parsed"]
    assert len(parsed["calls"]) == len(parsed["logs"]) == 2
    batches = [(c["generated"], c["labels"]) for c in parsed["calls"]]
    split = 0
    for call, log, items in zip(parsed["calls"], parsed["logs"], coderl_breakdowns(run["config"], batches),
                                strict=True):
        want = [b.reward for b in items]
        assert call["rewards"] == pytest.approx(want, abs=1e-9)
        assert log["rewards/code_reward/mean"] == pytest.approx(sum(want) / 4, abs=1e-6)
        split += sum("reasoning_content" in c[0] for c in call["completions"])
    assert split, "no completion was parsed into reasoning_content: the parser path was not exercised"


def test_parsed_message_gets_its_think_block_back(run):
    """Each whole answer through TRL's own parser, scored from the message alone, scores as the raw answer."""
    messages = run["result"]["parsed_messages"]
    chunks = answer_chunks(run["he"])
    assert [("reasoning_content" in m) for m in messages] == [c.startswith("<think>") for c in chunks]
    label = {parse_label(r[TRL_LABEL_COLUMN]).source_id: r[TRL_LABEL_COLUMN] for r in run["rows"]}
    labels = [label[p] for p in ("HumanEval/0", "HumanEval/0", "HumanEval/2", "HumanEval/2", "HumanEval/0")]
    raw, got = coderl_breakdowns(run["config"], [(chunks, labels), ([completion_text([m]) for m in messages], labels)])
    assert [b.reward for b in got] == [b.reward for b in raw]
    assert [b.format for b in raw] == [1.0, 1.0, 1.0, 0.0, 0.0]  # the think/answer format was at stake
    assert raw[0].all_passed and raw[2].all_passed


def test_reward_objects_pickle_name_and_async(trl_data, config):
    """TRL's async GRPO pickles reward functions into a spawned process; TRL names and awaits them by attribute."""
    assert code_reward.__name__ == "code_reward" and code_reward_async.__name__ == "code_reward_async"
    assert not inspect.iscoroutinefunction(code_reward.__call__)
    assert inspect.iscoroutinefunction(code_reward_async.__call__)
    data, he = trl_data
    row = json.loads(data.read_text().splitlines()[0])
    good = answer_chunks(he)[0]
    reward = pickle.loads(pickle.dumps(make_code_reward(config=str(config), asynchronous=True)))
    metrics, extra = {}, {}
    out = asyncio.run(reward(prompts=[row["prompt"]] * 2, completions=[[{"role": "assistant", "content": good}], ""],
                             completion_ids=[[1], [2]], trainer_state=object(), environments=None,
                             log_metric=metrics.__setitem__, log_extra=extra.__setitem__,
                             **{TRL_LABEL_COLUMN: [row[TRL_LABEL_COLUMN]] * 2}))
    assert out == [pytest.approx(1.0), 0.0]
    assert metrics["coderl/all_passed"] == 0.5 and extra["coderl/all_passed"] == [1.0, 0.0]
    # the keywords TRL adds are not dataset columns
    with pytest.raises(KeyError, match=r"columns passed: \['label'\]"):
        make_code_reward(config=str(config))(prompts=[None], completions=["x"], label=["{}"],
                                          **{k: None for k in TRL_CALL_KWARGS})


def test_completion_text_reasoning_fields():
    assert completion_text([{"role": "assistant", "reasoning_content": "r", "content": "<answer>a</answer>"}]) == \
        "<think>r</think>\n<answer>a</answer>"
    assert completion_text({"role": "assistant", "thinking": "r", "content": "c"}) == "<think>r</think>\nc"
    assert completion_text([{"role": "assistant", "reasoning_content": " ", "content": "c"}]) == "c"


def test_tokenizer_scores_the_generated_tokens_except_tool_loops(trl_data, config, tmp_path):
    """make_code_reward(tokenizer=...): a one-message completion is scored from its ids (the parsed message may have
    lost text); a tool loop's ids hold the tool results, so its last assistant message is scored."""
    from tests.support import tiny_tokenizer

    data, he = trl_data
    row = json.loads(data.read_text().splitlines()[0])
    chunks = answer_chunks(he)
    tok = tiny_tokenizer(tmp_path / "tok", chunks)
    ids = tok.convert_tokens_to_ids(chunks)
    reward = make_code_reward(config=str(config), tokenizer=tok)
    lost = [{"role": "assistant", "content": "I am not sure."}]  # what a lossy parse might leave
    loop = [{"role": "assistant", "content": "", "tool_calls": []}, {"role": "tool", "content": "ok"},
            {"role": "assistant", "content": chunks[0]}]
    out = reward(prompts=[None] * 3, completions=[lost, loop, chunks[4]],
                 completion_ids=[[ids[0], tok.eos_token_id], [ids[4], ids[4]], [ids[0]]],
                 **{TRL_LABEL_COLUMN: [row[TRL_LABEL_COLUMN]] * 3})
    assert out == [pytest.approx(1.0), pytest.approx(1.0), pytest.approx(1.0)]
    assert make_code_reward(config=str(config))(prompts=[None], completions=[lost],
                                             **{TRL_LABEL_COLUMN: [row[TRL_LABEL_COLUMN]]}) == [0.0]


def test_group_norm_trainer_matches_the_reference(run):
    """GroupNormGRPOTrainer in TRL 1.x: the advantages the loss got and the fallback share logged per step are the
    reference's (integrations/group_norm.py's definition) for the rewards given; TRL's own scaling is off."""
    from tests.rewards.integrations.group_norm_reference import reference_flat

    got = run["result"]["group_norm"]
    assert got["scale_rewards"] == "none"
    assert len(got["rewards"]) == len(got["advantages"]) == len(got["fallback"]) == 3
    for rewards, adv, fallback in zip(got["rewards"], got["advantages"], got["fallback"], strict=True):
        want, share = reference_flat(rewards, 4)
        assert adv == pytest.approx(want, abs=1e-5)
        assert fallback == pytest.approx(share)
    assert got["fallback"] == [0.5, 0.5, 0.5] and got["all_equal"] == [0.5, 0.0, 0.0]

"""rewards/code_reward.py (reward math) and rewards/pipeline.py (query -> job -> reward), no execution."""

from __future__ import annotations

import logging
import os

import httpx
import pytest

from coderl.rewards.code_reward import (
    TermError,
    batch_means,
    compute_reward,
    correctness_of,
    extra_logs,
    length_component,
    terms,
    unmatched_reward,
)
from coderl.rewards.config import RewardConfig
from coderl.rewards.pipeline import Scorer
from coderl.rewards.prompt_index import PromptIndex
from coderl.rewards.sandbox import JobResult
from coderl.rewards.sandbox import TestOutcome as Outcome
from tests.support import (
    PROBLEMS,
    SYSTEM_THINK,
    ServerProc,
    block,
    chatml,
    chatml_prompt,
    label_json,
    rows,
    run_server_expecting_exit,
    think,
    write_jsonl,
)

CFG = RewardConfig()


def result(passed: int, total: int, bad: str = "failed", n_outcomes: int | None = None) -> JobResult:
    n = total if n_outcomes is None else n_outcomes
    outs = [Outcome("passed") if i < passed else Outcome(bad) for i in range(n)]
    return JobResult(outcomes=outs, expected=total)


def reward(res, fmt=True, syntax=True, response="x" * 100, code="pass", **kw):
    return compute_reward(CFG if not kw else RewardConfig(**kw), response=response, code=code, format_ok=fmt,
                          syntax_ok=syntax, result=res)


def test_correctness_is_the_exact_pass_fraction():
    assert correctness_of(result(3, 4)) == 0.75
    assert correctness_of(result(4, 4)) == 1.0
    assert correctness_of(result(0, 4)) == 0.0
    assert correctness_of(None) == 0.0
    assert correctness_of(result(0, 0)) == 0.0
    # a run that reports more test outcomes than the label declares is forged: zero
    assert correctness_of(result(5, 4, n_outcomes=5)) == 0.0
    # missing outcomes count as failures
    assert correctness_of(result(2, 4, n_outcomes=2)) == 0.5


def test_partial_pass_is_never_rounded_up_and_reward_is_monotonic():
    rewards = [reward(result(k, 10)).reward for k in range(11)]
    assert all(a < b for a, b in zip(rewards, rewards[1:], strict=False))
    assert reward(result(9, 10)).reward < reward(result(10, 10)).reward - 0.05
    assert reward(result(8, 10)).score == 0.8
    assert reward(result(10, 10)).reward == pytest.approx(1.0)


def test_correctness_dominates_format_syntax_and_length():
    wrong_but_pretty = reward(result(0, 4), fmt=True, syntax=True)
    right_but_ugly = reward(result(4, 4), fmt=False, syntax=True, response="x" * 20000)
    assert right_but_ugly.reward > 3 * wrong_but_pretty.reward
    assert wrong_but_pretty.reward == pytest.approx((0.1 + 0.05 + 0.05) / 1.2)


def test_length_component_is_gentle():
    assert length_component(10, CFG) == 1.0
    assert length_component(CFG.length_soft_limit_chars, CFG) == 1.0
    mid = (CFG.length_soft_limit_chars + CFG.length_hard_limit_chars) // 2
    assert length_component(mid, CFG) == pytest.approx(0.5)
    assert length_component(CFG.length_hard_limit_chars + 1, CFG) == 0.0
    long_ = reward(result(4, 4), response="x" * CFG.length_hard_limit_chars)
    assert long_.length == 0.0 and long_.reward == pytest.approx(1.15 / 1.2)


def test_no_code_scores_zero_on_everything():
    b = compute_reward(CFG, response="", code=None, format_ok=False, syntax_ok=False, result=None)
    assert (b.reward, b.score, b.length, b.status) == (0.0, 0.0, 0.0, "no_code")


def test_syntax_error_and_deadline():
    b = reward(None, syntax=False)
    assert b.status == "syntax" and b.syntax == 0.0 and b.correctness == 0.0
    b = compute_reward(CFG, response="x", code="pass", format_ok=True, syntax_ok=True, result=None,
                       deadline_missed=True)
    assert b.status == "deadline" and b.correctness == 0.0


def test_bonus_and_unnormalized():
    assert reward(result(4, 4), all_pass_bonus=0.5).reward == pytest.approx(1.5)
    assert reward(result(4, 4), all_pass_bonus=0.5).bonus == pytest.approx(0.5)
    # With the bonus off (the default) an all-pass logs all_passed, but no bonus it did not get.
    off = reward(result(4, 4))
    assert off.all_passed and off.bonus == 0.0
    assert reward(result(3, 4), all_pass_bonus=0.5).bonus == 0.0
    raw_sum = reward(result(4, 4), normalize=False)
    assert raw_sum.reward == pytest.approx(1.2)


def test_timeouts_are_counted():
    b = reward(result(1, 3, bad="timeout"))
    assert b.timeouts == 2 and b.status == "timeout"


def test_unmatched_reward_is_configurable():
    assert unmatched_reward(CFG).reward == 0.0
    assert unmatched_reward(RewardConfig(unmatched_reward=-0.5)).reward == -0.5


def test_extra_logs_are_per_query_lists_and_means():
    items = [reward(result(4, 4)), reward(result(0, 4), fmt=False), unmatched_reward(CFG)]
    logs = extra_logs(items)
    assert all(isinstance(v, list) and len(v) == 3 for v in logs.values())
    assert logs["reward/correctness"] == [1.0, 0.0, 0.0]
    assert logs["reward/unmatched"] == [0.0, 0.0, 1.0]
    assert logs["reward/unsupported"] == [0.0, 0.0, 0.0]
    means = batch_means(items)
    assert means["format"] == pytest.approx(1 / 3) and means["unmatched"] == pytest.approx(1 / 3)


def test_unsupported_cases_never_score_and_are_counted():
    b = reward(result(2, 4, bad="unsupported"))
    assert b.correctness == 0.5 and b.unsupported == 2 and not b.all_passed
    assert extra_logs([b])["reward/unsupported"] == [1.0]


def test_config_rejects_inverted_length_limits():
    with pytest.raises(ValueError, match="length_hard_limit_chars"):
        RewardConfig(length_soft_limit_chars=100, length_hard_limit_chars=50)


# ------------------------------------------------------------------------------------- pipeline


@pytest.fixture(scope="module")
def scorer(tmp_path_factory):
    path = write_jsonl(tmp_path_factory.mktemp("sc") / "train.jsonl", rows())
    return Scorer(CFG, PromptIndex.from_jsonl(path))


def test_prepare_query_only_protocol(scorer):
    user, _, code, _ = PROBLEMS["call"]
    p = scorer.prepare_one(chatml(SYSTEM_THINK, user, think(code)))
    assert p.how == "chatml" and p.label.format == "call"
    assert p.extracted.code.strip() == code and p.format_ok and p.syntax_ok and p.runnable


def test_prepare_labels_protocol_uses_the_label_not_the_lookup(scorer):
    user, _, code, _ = PROBLEMS["call"]
    prompt = chatml_prompt(SYSTEM_THINK, "A prompt that is not in the dataset")
    q = "<|endoftext|>" * 2 + prompt + block(code) + "<|im_end|><|endoftext|>"
    p = scorer.prepare_one(q, prompt, label_json("stdio", "code_block"))
    assert p.how == "label" and p.label.format == "stdio"
    assert p.response == block(code) and p.format_ok  # code_block format from the label's extra


def test_prepare_bad_or_empty_label_falls_back_to_lookup(scorer, caplog):
    user, _, code, _ = PROBLEMS["assert"]
    q = chatml(SYSTEM_THINK, user, think(code))
    with caplog.at_level(logging.WARNING, "coderl.reward_server"):
        p = scorer.prepare_one(q, None, "not a label")
        p2 = scorer.prepare_one(q, None, "also not a label")
    assert p.how == "chatml" and p.label.format == "assert" and p2.label.format == "assert"
    assert scorer.bad_labels >= 2
    assert sum("not a coderl label" in r.message for r in caplog.records) == 1  # logged once
    assert scorer.prepare_one(q, None, "").how == "chatml"


def test_unmatched_is_logged_once_with_an_excerpt(scorer, caplog):
    q = chatml(SYSTEM_THINK, "An unknown problem about llamas.", think("x = 1"))
    with caplog.at_level(logging.WARNING, "coderl.reward_server"):
        ps = scorer.prepare([q, q, q])
    assert [p.how for p in ps] == ["unmatched"] * 3
    msgs = [r.message for r in caplog.records if "not found" in r.message]
    assert len(msgs) == 1 and "llamas" in msgs[0]
    items = scorer.finish(ps, [], [])
    assert [b.status for b in items] == ["unmatched"] * 3


def test_finish_maps_results_back_and_marks_deadline_misses(scorer):
    qs = [chatml(SYSTEM_THINK, PROBLEMS[f][0], think(PROBLEMS[f][2])) for f in ("assert", "call")]
    qs.append(chatml(SYSTEM_THINK, PROBLEMS["assert"][0], "no code at all"))
    ps = scorer.prepare(qs)
    pos, jobs = scorer.jobs(ps)
    assert pos == [0, 1] and [j.label.format for j in jobs] == ["assert", "call"]
    items = scorer.finish(ps, pos, [result(4, 4), None])
    assert items[0].reward == pytest.approx(1.0)
    assert items[1].status == "deadline" and items[1].correctness == 0.0
    assert items[2].status == "no_code" and items[2].reward == 0.0


def _reward_before_terms(cfg: RewardConfig, response, code, fmt, syntax_ok, res, cut) -> tuple:
    """The reward as code_reward computed it before terms were entries (the fixed four components)."""
    f = 1.0 if fmt else 0.0
    weights = (cfg.correctness_weight, cfg.format_weight, cfg.syntax_weight, cfg.length_weight)

    def combine(*values):
        total = sum(w * v for w, v in zip(weights, values, strict=True))
        return total / sum(weights) if cfg.normalize and sum(weights) > 0 else total
    if code is None:
        return combine(0.0, f, 0.0, 0.0), 0.0, "no_code"
    c = correctness_of(res) if not cut else 0.0
    all_passed = res is not None and not cut and res.expected > 0 and c == 1.0
    reward = combine(c, f, 1.0 if syntax_ok else 0.0, length_component(len(response), cfg))
    status = "deadline" if cut else (("syntax" if not syntax_ok else "not_run") if res is None else res.status)
    return reward + (cfg.all_pass_bonus if all_passed else 0.0), c, status


def test_the_default_terms_give_exactly_the_rewards_of_the_fixed_components():
    configs = [CFG, RewardConfig(normalize=False), RewardConfig(all_pass_bonus=0.5, format_weight=0.0),
               RewardConfig(correctness_weight=0, format_weight=0, syntax_weight=0, length_weight=0, all_pass_bonus=1)]
    results = [None, result(0, 4), result(3, 4), result(4, 4), result(2, 4, bad="timeout"), result(0, 0),
               result(5, 4, n_outcomes=5), result(1, 3, bad="unsupported")]
    n = 0
    for cfg in configs:
        for response in ("x" * 10, "x" * 5000, "x" * 20000):
            for code in (None, "pass"):
                for fmt in (True, False):
                    for syntax_ok in (True, False):
                        for res in results:
                            for cut in (False, True):
                                b = compute_reward(cfg, response=response, code=code, format_ok=fmt,
                                                   syntax_ok=syntax_ok, result=res, deadline_missed=cut)
                                assert (b.reward, b.score, b.status) == _reward_before_terms(
                                    cfg, response, code, fmt, syntax_ok, res, cut), (cfg, response, code, fmt, res)
                                assert b.terms == {}
                                n += 1
    assert n == 4 * 3 * 2 * 2 * 2 * 8 * 2


TERMS_MODULE = '''
from coderl.rewards.code_reward import Sample


def no_print(s: Sample) -> float:
    """1 when the graded code prints nothing (a training run's own style rule)."""
    return 0.0 if s.code is None or "print(" in s.code else 1.0


def broken(s: Sample) -> float:
    raise RuntimeError("a bug in a user's term")
'''


def test_a_reward_term_is_one_function_and_one_config_line(tmp_path, monkeypatch, caplog):
    (tmp_path / "my_terms.py").write_text(TERMS_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    cfg = RewardConfig(terms={"my_terms:no_print": 0.2})
    quiet = compute_reward(cfg, response="x" * 10, code="def f(): return 1", format_ok=True, syntax_ok=True,
                           result=result(1, 1))
    loud = compute_reward(cfg, response="x" * 10, code="print(1)", format_ok=True, syntax_ok=True,
                          result=result(1, 1))
    assert quiet.terms == {"my_terms:no_print": 1.0} and loud.terms == {"my_terms:no_print": 0.0}
    assert quiet.reward == pytest.approx(1.0) and loud.reward == pytest.approx(1.2 / 1.4)
    assert extra_logs([quiet, loud])["reward/my_terms:no_print"] == [1.0, 0.0]
    # a term that raises costs its own value, logged once, never the batch
    cfg = RewardConfig(terms={"my_terms:broken": 1.0})
    with caplog.at_level(logging.ERROR, logger="coderl.reward_server"):
        bs = [compute_reward(cfg, response="x", code="pass", format_ok=True, syntax_ok=True, result=result(1, 1))
              for _ in range(3)]
    assert [b.terms for b in bs] == [{"my_terms:broken": 0.0}] * 3 and bs[0].reward == pytest.approx(1.2 / 2.2)
    assert sum("my_terms:broken" in r.getMessage() for r in caplog.records) == 1


def test_a_term_that_cannot_load_or_is_misspelled_is_a_clear_error():
    with pytest.raises(ValueError, match="not 'module:function'"):
        RewardConfig(terms={"no_colon": 1.0})
    with pytest.raises(ValueError, match="weights are >= 0"):
        RewardConfig(terms={"m:f": -1.0})
    with pytest.raises(TermError, match="'no_such_module_xyz:f': cannot load it"):
        terms(RewardConfig(terms={"no_such_module_xyz:f": 1.0}))


def test_the_server_grades_with_a_configured_term(tmp_path):
    """--terms module:function=WEIGHT on the real server: the term's values reach the rewards and extra_logs;
    a term that cannot load stops the start with its name."""
    (tmp_path / "my_terms.py").write_text(TERMS_MODULE)
    data = write_jsonl(tmp_path / "train.jsonl", rows())
    env = {"PYTHONPATH": os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")]))}
    s = ServerProc(["--data_path", str(data), "--port", "0", "--workers", "1", "--terms", "my_terms:no_print=0.2"],
                   env=env)
    try:
        user, _, good, _ = PROBLEMS["call"]
        queries = [chatml(SYSTEM_THINK, user, think(good)), chatml(SYSTEM_THINK, user, think(good + "\nprint(1)\n"))]
        got = httpx.post(f"{s.url}/get_reward", json={"query": queries}, timeout=120).json()
    finally:
        s.stop()
    assert got["extra_logs"]["reward/my_terms:no_print"] == [1.0, 0.0], got
    assert got["rewards"][0] == pytest.approx(1.0) and got["rewards"][0] > got["rewards"][1], got
    bad = run_server_expecting_exit(["--data_path", str(data), "--terms", "no_such_module_xyz:f=1"])
    assert bad.returncode == 2 and "reward term 'no_such_module_xyz:f': cannot load it" in bad.stderr, bad.stderr

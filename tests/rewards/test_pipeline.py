"""rewards.pipeline: ascore() is the one scoring path (score() its blocking form), through an executor."""

from __future__ import annotations

import asyncio

import pytest

from coderl.rewards.config import RewardConfig, SandboxConfig
from coderl.rewards.executors import LocalExecutor
from coderl.rewards.labels import parse_label
from coderl.rewards.pipeline import Scorer, ascore, score
from coderl.rewards.sandbox.pool import run_bound_s
from tests.support import PARTIAL_RATE, PROBLEMS, graded_batch, label_json, think

pytestmark = pytest.mark.timeout(300)
CFG = SandboxConfig(workers=2)
# A run starts only while its bound (job limit + pool.START_MARGIN_S) is left before the deadline: 4 s with these, so
# batches of a few seconds' deadline get runs (the defaults' bound is 22 s).
SHORT = SandboxConfig(workers=2, test_timeout_s=1.0, job_timeout_s=2.0)


def test_score_and_ascore_agree_and_grade_partial_credit():
    texts, labels = graded_batch()
    scorer = Scorer(RewardConfig())
    with LocalExecutor(CFG) as ex:
        sync = score(scorer, ex, texts, None, labels)
        items = asyncio.run(ascore(scorer, ex, texts, None, labels, deadline_s=120))
    assert [b.reward for b in items] == [b.reward for b in sync]
    for k, fmt in enumerate(PROBLEMS):
        full, partial, unformatted, none = items[4 * k: 4 * k + 4]
        assert full.score == 1.0 and partial.score == pytest.approx(PARTIAL_RATE[fmt]), fmt
        assert unformatted.score == 1.0 and unformatted.reward < full.reward  # the format component
        assert none.status == "no_code" and none.reward == 0.0


def test_ascore_past_its_deadline_scores_missed_jobs_as_failed():
    texts, labels = graded_batch()
    ex = LocalExecutor(CFG)
    ex.start()
    try:
        items = asyncio.run(ascore(Scorer(RewardConfig()), ex, texts, None, labels, deadline_s=0.0))
    finally:
        ex.close()
    ran = [b for b in items if b.status != "no_code"]
    assert ran and all(b.status == "deadline" and b.score == 0.0 for b in ran)


def test_compile_checks_after_the_deadline_are_bounded_per_request(caplog):
    """Responses no run showed compiled (here: all cut, none started) are compile-checked after the executor
    returns: bounded per request (pipeline.SYNTAX_AFTER_DEADLINE_S), not per response; the rest keep their cut."""
    import time

    from coderl.rewards.pipeline import SYNTAX_AFTER_DEADLINE_S
    # 43 K characters of nested lambdas: the slowest code to compile per character (syntax.py), ~2 s each
    # (not naming the entry point: extraction compiles only blocks that may define it, a cost of its own)
    slow = "".join(f"x{j} = " + "lambda: " * 2_700 + "0\n" for j in range(2))
    texts = [think(slow + f"# {i}") for i in range(10)]
    with LocalExecutor(CFG) as ex:
        t0 = time.monotonic()
        items = score(Scorer(RewardConfig()), ex, texts, None, [label_json("assert")] * len(texts), deadline_s=0.5)
        took = time.monotonic() - t0
    statuses = [b.status for b in items]  # checked: too deeply nested to compile; past the budget: still the cut
    assert "deadline" in statuses and set(statuses) <= {"deadline", "syntax"}, statuses
    assert took < 0.5 + SYNTAX_AFTER_DEADLINE_S + 3.5, took  # one check may start before the budget ends
    assert "compile checks skipped" in caplog.text


def test_a_hostile_batch_answers_within_its_deadline_plus_a_bounded_margin(tmp_path):
    """Extraction compiles the blocks that may define the entry point: responses of slow-to-compile ones (and
    pathological nesting, large ones) took a 0.5 s-deadline request to 21.5 s. Past the deadline nothing more is
    compiled, what was not prepared is cut (the cut rule's reward), and the checks after it have their bound.
    Generous margin here; the tight figure is python -m scripts.bench.deadline's."""
    import time

    from coderl.rewards.prompt_index import PromptIndex
    from scripts.bench.deadline import batch
    from tests.support import rows, write_jsonl

    index = PromptIndex.from_jsonl(write_jsonl(tmp_path / "train.jsonl", rows()))
    queries = (batch("normal", 2, "a") + batch("blocks", 8, "b") + batch("deep_nesting", 2, "c")
               + batch("slow_compile", 2, "d") + batch("large", 2, "e"))
    with LocalExecutor(CFG) as ex:
        t0 = time.monotonic()
        # 1 s of own compiling per response (8 x 1 s > 1.5 s): the deadline, not the preparation budget, stops these
        items = asyncio.run(ascore(Scorer(RewardConfig(prepare_min_s=1.0), index), ex, queries, deadline_s=1.5))
        took = time.monotonic() - t0
    assert took < 1.5 + 8, took  # was ~30 s: 8 responses of ~4 s of compiling each
    # 8 blocks responses outlast the deadline even on a fast idle machine: what follows them is cut, prompt known
    assert [b.status for b in items[10:]] == ["deadline"] * 6, [b.status for b in items]
    assert all(b.status != "unmatched" for b in items)


def test_a_response_slow_to_extract_delays_only_the_queries_after_it(tmp_path):
    """Each query's job starts as soon as it is prepared: the right programs before 8 responses that take seconds
    each to extract (in the same slice) get their verdicts, not the cut their slice's end at the deadline gave."""
    from coderl.rewards.prompt_index import PromptIndex
    from scripts.bench.deadline import batch
    from tests.support import rows, write_jsonl

    index = PromptIndex.from_jsonl(write_jsonl(tmp_path / "train.jsonl", rows()))
    queries = batch("normal", 4, "a") + batch("blocks", 8, "b")
    with LocalExecutor(SHORT) as ex:
        items = asyncio.run(ascore(Scorer(RewardConfig(), index), ex, queries, deadline_s=8.0))
    assert [(b.status, b.score) for b in items[:4]] == [("passed", 1.0)] * 4, [b.status for b in items]


def test_a_response_whose_own_preparation_exceeds_its_budget_has_no_code_never_the_cut(tmp_path):
    """Each response's compiling has its preparation budget (prepare_budget): responses of slow-to-compile blocks,
    alone or after a partly right program, are graded as having no extractable code (scored, never the neutral
    cut), and the honest responses in the same batch keep the verdicts they get in a batch of their own."""
    import time

    from coderl.rewards.code_reward import NO_CODE, compute_reward
    from coderl.rewards.pipeline import prepare_budget
    from coderl.rewards.prompt_index import PromptIndex
    from scripts.bench.deadline import batch
    from scripts.bench.deadline import blocks as slow_blocks
    from tests.support import SYSTEM_THINK, chatml, rows, write_jsonl

    index = PromptIndex.from_jsonl(write_jsonl(tmp_path / "train.jsonl", rows()))
    named = ("assert", "call", "humaneval", "unittest")  # entry points: extraction compiles what may define one
    honest = batch("normal", 2, "a") + [chatml(SYSTEM_THINK, PROBLEMS[f][0], think(PROBLEMS[f][3] + "\n# twin"))
                                        for f in named[:2]]
    slow = [chatml(SYSTEM_THINK, PROBLEMS[f][0], slow_blocks(f, "b")) for f in named]  # blocks that never bind it
    for f in named:  # a partly right program followed by them
        pad = slow_blocks(f, "pad").split("<answer>\n", 1)[1].rsplit("</answer>", 1)[0]
        slow.append(chatml(SYSTEM_THINK, PROBLEMS[f][0], think(PROBLEMS[f][3]).replace("</answer>", pad + "</answer>")))
    deadline_s, cfg = 12.0, RewardConfig()
    assert len(slow) * prepare_budget(cfg, deadline_s, len(honest + slow)) <= cfg.prepare_share * deadline_s
    with LocalExecutor(SHORT) as ex:
        alone = asyncio.run(ascore(Scorer(cfg, index), ex, honest, deadline_s=deadline_s))
        t0 = time.monotonic()
        items = asyncio.run(ascore(Scorer(cfg, index), ex, honest + slow, deadline_s=deadline_s))
        took = time.monotonic() - t0
    assert [(b.status, b.reward) for b in items[:4]] == [(b.status, b.reward) for b in alone]
    assert [b.status for b in alone] == ["passed", "passed", "failed", "failed"], alone
    assert [b.status for b in items[4:]] == [NO_CODE] * 8, [(b.status, b.reward) for b in items]
    for b, q in zip(items[4:], slow, strict=True):  # the no-code reward: format may count, nothing else
        assert b.reward == compute_reward(cfg, response=q, code=None, format_ok=b.format > 0, syntax_ok=False,
                                          result=None).reward < alone[2].reward
    assert took < deadline_s, took  # nothing reached the deadline: each slow response stopped at its budget


def test_queries_the_deadline_reaches_before_they_are_prepared_are_cut_unextracted():
    """Past the deadline a query is only looked up (its prompt: the cut rule's group), then not even that."""
    import time

    from coderl.rewards.pipeline import LOOKUP_AFTER_DEADLINE_S
    _, _, good, _ = PROBLEMS["assert"]
    texts, labels = [think(good + f"\n# {i}") for i in range(3)], [label_json("assert")] * 3
    scorer = Scorer(RewardConfig(cut_reward=0.25))
    now = time.monotonic()
    looked_up = scorer.prepare(texts, None, labels, until=now - 0.01)
    assert all(p.cut and p.label is not None and p.extracted.code is None for p in looked_up)
    assert not any(p.runnable for p in looked_up) and Scorer.jobs(looked_up) == ([], [])
    late = scorer.prepare(texts, None, labels, until=now - LOOKUP_AFTER_DEADLINE_S - 0.01)
    assert all(p.cut and p.label is None for p in late)
    for prepared in (looked_up, late):  # no finished sample in the group: the cut rule's cut_reward
        assert [(b.status, b.reward) for b in scorer.finish(prepared, [], [])] == [("deadline", 0.25)] * 3


def test_code_that_parses_but_does_not_compile_earns_no_syntax_component():
    """`return` at module level parses; the sandbox cannot compile it, and neither can the syntax check."""
    _, _, good, _ = PROBLEMS["assert"]
    texts = [think(good), think(good + "return None\n"), think("def f(:\n")]
    labels = [label_json("assert")] * 3
    with LocalExecutor(CFG) as ex:
        ok, parses_only, broken = score(Scorer(RewardConfig()), ex, texts, None, labels)
    assert ok.syntax == 1.0 and ok.score == 1.0
    for b in (parses_only, broken):
        assert b.status == "syntax" and b.syntax == 0.0 and b.score == 0.0


def test_code_past_syntax_max_chars_is_a_syntax_failure_never_run():
    """The syntax helper is one process: code past the bound is not compiled (nor run), whatever it is."""
    _, _, good, _ = PROBLEMS["assert"]
    long = good + "# pad\n" * 2000
    texts, labels = [think(good), think(long)], [label_json("assert")] * 2
    cfg = RewardConfig(syntax_max_chars=len(long) - 1)
    with LocalExecutor(CFG) as ex:
        ok, over = score(Scorer(cfg), ex, texts, None, labels)
        assert ex.last_stats["executed"] == 1
    assert ok.score == 1.0 and ok.syntax == 1.0
    assert over.status == "syntax" and over.syntax == 0.0 and over.score == 0.0


def test_the_reward_grades_the_final_answer_as_written():
    """End to end (real sandbox): a correct draft in the reasoning or before the final block never earns the
    final answer's credit, whatever token-like text the final answer holds; the final answer is graded whole."""
    _, _, good, _ = PROBLEMS["assert"]
    wrong = good.replace("return", "return -1 +", 1)
    assert wrong != good
    texts, want = [], []
    for tok in ("<|im_end|>", "<|endoftext|>", "</answer>", "<answer>", "<|im_start|>"):
        final = f"{wrong}# {tok}\n"
        texts += [f"<think>\n```python\n{good}\n```\n</think>\n<answer>\n```python\n{final}```\n</answer><|im_end|>",
                  f"Draft:\n```python\n{good}\n```\nFinal:\n```python\n{final}```<|im_end|>",
                  f"<think>\nok\n</think>\n<answer>\n```python\n{good}\nS = {tok!r}\n```\n</answer><|im_end|>"]
        want += [0.0, 0.0, 1.0]
    with LocalExecutor(CFG) as ex:
        out = score(Scorer(RewardConfig()), ex, texts, None, [label_json("assert")] * len(texts))
    assert [b.score for b in out] == want, [(b.score, b.status) for b in out]


def test_a_response_cut_off_before_its_closing_fence_is_scored_when_complete():
    """Generation stopped at generate_max_len after the code but before its fence: graded, not `no_code`."""
    _, _, good, _ = PROBLEMS["assert"]
    texts = [f"<think>\nok\n</think>\n<answer>\n```python\n{good}\n", f"Here:\n```python\n{good}\n",
             f"Here:\n```python\n{good[:len(good) // 2]}"]
    with LocalExecutor(CFG) as ex:
        thinking, block_, cut = score(Scorer(RewardConfig()), ex, texts, None, [label_json("assert")] * 3)
    assert thinking.score == 1.0 and block_.score == 1.0
    assert cut.status == "no_code" and cut.score == 0.0


def test_score_in_process_gets_the_lanes_and_the_deadline(caplog):
    """pipeline.score (TRL, verl) shares the pool: right and CPU-heavy honest programs keep their verdicts
    among more hangs than workers, and a deadline cuts what is left, reported as such."""
    good = PROBLEMS["assert"][2]
    busy = ("import time\n_t = time.monotonic()\nwhile time.monotonic() - _t < 0.3:\n    pass\n" + good)
    hang = "def mul(a, b):\n    while True:\n        pass"
    texts = [think(f"{hang}\n# {i}") for i in range(5)] + [think(good), think(busy)]
    labels = [label_json("assert")] * len(texts)
    scorer = Scorer(RewardConfig())
    with LocalExecutor(SandboxConfig(workers=2, test_timeout_s=1.0, probe_s=0.1)) as ex:
        items = score(scorer, ex, texts, None, labels)
        assert [b.score for b in items] == [0.0] * 5 + [1.0, 1.0]
        assert [b.status for b in items[:5]] == ["timeout"] * 5
        assert ex.info()["stats"]["slow_lane"] >= 6  # the hangs and the busy one exceeded the probe
    # A run starts only with its bound (the 8 s job limit + margin) left before the deadline: 0.9 s past it, the
    # first runs start at once and no rerun can (each waits for its first run's 1 s probe to run out).
    cut_cfg = SandboxConfig(workers=2, test_timeout_s=4.0, job_timeout_s=8.0, probe_s=1.0)
    with LocalExecutor(cut_cfg) as ex:
        bound = run_bound_s(parse_label(labels[0]), cut_cfg)
        cut = score(scorer, ex, [think(good + "\n# again")] + [think(f"{hang}\n# again {i}") for i in range(2)],
                    None, labels[:3], deadline_s=bound + 0.9)
    # Cut in the slow lane, after their first run exceeded the probe: that run's verdict, what finishing gave
    # them, never the neutral reward (the right program's here: hanging would beat answering wrong).
    assert [b.status for b in cut] == ["passed"] + ["timeout"] * 2
    assert "2 of 3 jobs cut" in caplog.text and "for 2 that had exceeded their probe" in caplog.text
    assert [b.reward for b in cut[1:]] == pytest.approx([items[0].reward] * 2) and items[0].reward < cut[0].reward


def test_a_job_the_sandbox_lost_gets_the_cut_reward_never_a_failures():
    # infra "lost" (the pool ran it twice and lost both runs: its worker or judge killed from outside): no verdict
    # of the program, so it is scored as a deadline cut: status "deadline", the mean reward of its prompt's
    # finished samples, counted in extra_logs' reward/cut.
    from dataclasses import replace

    from coderl.rewards.code_reward import extra_logs
    from coderl.rewards.sandbox.results import INFRA_LOST

    good, partial = PROBLEMS["assert"][2], PROBLEMS["assert"][3]
    texts, labels = [think(good), think(partial), think(good + "\n# lost")], [label_json("assert")] * 3
    scorer = Scorer(RewardConfig())
    prepared = scorer.prepare(texts, None, labels)
    positions, jobs = scorer.jobs(prepared)
    with LocalExecutor(CFG) as ex:
        results = asyncio.run(ex.run(jobs, 120))
    lost = replace(results[2], infra=INFRA_LOST, outcomes=[replace(o, status="killed") for o in results[2].outcomes])
    items = scorer.finish(prepared, positions, [results[0], results[1], lost])
    assert [b.status for b in items] == ["passed", "failed", "deadline"]
    assert items[2].reward == pytest.approx((items[0].reward + items[1].reward) / 2)
    assert extra_logs(items)["reward/cut"] == [0.0, 0.0, 1.0]


def test_a_slow_wrong_program_cut_in_its_run_scores_as_a_wrong_answer_never_the_neutral_cut():
    # A wrong program still running at the deadline (the pool starts a run only with its job limit left, so such a
    # run overran it: infra "overrun", its undecided tests timeouts) is scored by what its run shows, as if it had
    # finished at its job limit: never more than its fast twin's wrong answer, never the prompt's mean (0.72 of
    # the group's right answers once, issue 35), and not counted as cut in reward/cut.
    from dataclasses import replace

    from coderl.rewards.code_reward import extra_logs
    from coderl.rewards.sandbox import Status, TestOutcome
    from coderl.rewards.sandbox.results import INFRA_OVERRUN

    good = PROBLEMS["assert"][2]
    wrong = good.replace("return", "return -1 +")
    texts = [think(good + f"\n# {i}") for i in range(3)] + [think(wrong), think(wrong + "\n# slow")]
    labels = [label_json("assert")] * len(texts)
    scorer = Scorer(RewardConfig())
    prepared = scorer.prepare(texts, None, labels)
    positions, jobs = scorer.jobs(prepared)
    with LocalExecutor(CFG) as ex:
        results = asyncio.run(ex.run(jobs, 120))
    overrun = replace(results[4], infra=INFRA_OVERRUN,
                      outcomes=[TestOutcome(Status.TIMEOUT, 0.0, "still running") for _ in results[4].outcomes])
    items = scorer.finish(prepared, positions, results[:4] + [overrun])
    assert [b.status for b in items] == ["passed"] * 3 + ["failed", "timeout"]
    assert items[4].reward <= items[3].reward < items[0].reward
    assert extra_logs(items)["reward/cut"] == [0.0] * 5


def test_unmatched_prompts_are_told_apart_in_the_log(caplog, tmp_path):
    """Prompts of one dataset share their opening sentence: the warning names each unmatched prompt by the
    functions it defines, its length and its last words, so two HumanEval-style prompts read differently."""
    from coderl.rewards.prompt_index import PromptIndex
    from tests.support import SYSTEM_THINK, chatml, toy_data

    index = PromptIndex.from_jsonl(toy_data(tmp_path / "data.jsonl"))
    scorer = Scorer(RewardConfig(), index)
    opening = "Complete the following Python function so that it passes its tests. " * 2
    for name in ("has_close_elements", "separate_paren_groups"):
        user = f"{opening}\n```python\ndef {name}(numbers, threshold):\n    ...\n```\nCut off here at {name}"
        scorer.prepare_one(chatml(SYSTEM_THINK, user, think("x = 1")))
    lines = [r.getMessage() for r in caplog.records if "prompt not found" in r.getMessage()]
    assert len(lines) == 2 and lines[0] != lines[1], lines
    assert "defines has_close_elements()" in lines[0] and "ends '" in lines[0] and "at has_close_elements'" in lines[0]
    assert "defines separate_paren_groups()" in lines[1]

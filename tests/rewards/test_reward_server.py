"""rewards/reward_server.py end to end: the real server over HTTP on loopback, real sandboxed execution.

Queries are what OpenRLHF sends: tokenizer.batch_decode(..., skip_special_tokens=False) of a left-padded
Qwen2.5 chat-templated prompt + response + <|im_end|> + right pads (see tests/support.py).
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import json
import os
import re
import socket
import subprocess
import sys
import time
import zipfile

import httpx
import pytest

from coderl.rewards.sandbox.pool import START_MARGIN_S
from tests.support import (
    PARTIAL_RATE,
    PROBLEMS,
    REPO_ROOT,
    SYSTEM_BLOCK,
    SYSTEM_THINK,
    ServerProc,
    block,
    chatml,
    chatml_prompt,
    filler_rows,
    label_json,
    llama3,
    raw,
    rows,
    run_server_expecting_exit,
    think,
    write_jsonl,
)

pytestmark = pytest.mark.timeout(300)
TOKEN = "s3cret-token"
CLEAN_EXIT = (0, -15)  # uvicorn shuts down cleanly on SIGTERM, then re-raises it (exit by signal 15)
WRONG = {"unittest": "def add(a, b):\n    raise ValueError('no')", "assert": "def mul(a, b):\n    return None",
         "humaneval": "def inc(x):\n    return x", "stdio": "print(0)", "call": "def rev(s):\n    return 0"}


def block_rows() -> list[dict]:
    """The same problems asking for a plain ```python block (answer_format code_block)."""
    return [{"input": [{"role": "system", "content": SYSTEM_BLOCK},
                       {"role": "user", "content": "[block] " + PROBLEMS[f][0]}],
             "label": label_json(f, "code_block")} for f in PROBLEMS]


@pytest.fixture(scope="module")
def data_path(tmp_path_factory):
    return write_jsonl(tmp_path_factory.mktemp("server") / "train.jsonl", rows() + block_rows() + filler_rows(200))


@pytest.fixture(scope="module")
def server(data_path):
    s = ServerProc(["--data_path", str(data_path), "--port", "0", "--workers", "2", "--test_timeout_s", "2",
                    "--max_body_mb", "16", "--max_query_chars", "1000000", "--log_every_n_batches", "1"],
                   env={"CODERL_AUTH_TOKEN": TOKEN})
    yield s
    assert s.stop() in CLEAN_EXIT, s.output()


def post(server, body, token=TOKEN, timeout=120, **kw) -> httpx.Response:
    params = {"token": token} if token else None
    kwargs = {"json": body} if not isinstance(body, (bytes, str)) else {"content": body}
    return httpx.post(f"{server.url}/get_reward", params=params, timeout=timeout, **kwargs, **kw)


def q(fmt: str, kind: str = "good", template: str = "chatml", answer: str = "think", pads: int = 3) -> str:
    user, _, good, partial = PROBLEMS[fmt]
    code = {"good": good, "partial": partial, "wrong": WRONG[fmt]}[kind]
    response = think(code) if answer == "think" else block(code)
    if template == "chatml":
        return chatml(SYSTEM_THINK, user, response, left_pads=pads)
    if template == "llama3":
        return llama3(SYSTEM_THINK, user, response)
    return raw(user, response)


# --------------------------------------------------------------------------------- protocol


def test_health_reports_dataset_fingerprint_isolation_and_workers(server, data_path):
    h = httpx.get(f"{server.url}/health", timeout=10).json()  # open without a token: the launch preflight
    assert h["ready"] is True and h["not_ready"] is None and h["executor"] == "local" and h["workers"] == 2
    assert h["dataset"] == {"path": str(data_path), "rows": 210,
                            "sha256": hashlib.sha256(data_path.read_bytes()).hexdigest()}
    assert isinstance(h["isolation"], dict) and h["isolation"]
    assert isinstance(h["version"], str) and h["version"]


def test_query_only_protocol_every_label_format(server):
    """Pinned OpenRLHF 0.5.7: only "query"; correct, partial and wrong answers for each label format."""
    fmts = list(PROBLEMS)
    queries = [q(f, kind) for f in fmts for kind in ("good", "partial", "wrong")]
    r = post(server, {"query": queries})
    assert r.status_code == 200, r.text
    out = r.json()
    assert set(out) == {"rewards", "scores", "extra_logs"}
    assert len(out["rewards"]) == len(out["scores"]) == len(queries)
    for i, f in enumerate(fmts):
        good, partial, wrong = (out["scores"][3 * i + k] for k in range(3))
        rg, rp, rw = (out["rewards"][3 * i + k] for k in range(3))
        assert good == 1.0 and rg == pytest.approx(1.0), (f, out)
        assert partial == pytest.approx(PARTIAL_RATE[f]), (f, out)
        assert wrong == 0.0, (f, out)
        assert rg > rp > rw > 0.0, f  # wrong code still earns the small format/syntax/length share
        assert rp < rg - 0.2  # partial pass is never rounded up to full credit
    for values in out["extra_logs"].values():
        assert isinstance(values, list) and len(values) == len(queries)
    assert out["extra_logs"]["reward/correctness"] == out["scores"]


def test_llama3_raw_prompt_and_pad_variants(server):
    queries = [q("assert", template="llama3"), q("call", template="raw"), q("stdio", pads=0), q("unittest", pads=40)]
    out = post(server, {"query": queries}).json()
    assert out["scores"] == [1.0, 1.0, 1.0, 1.0]


def test_labels_protocol_uses_labels_without_lookup(server):
    """Later OpenRLHF: query + prompts + labels. Prompts not in the dataset still score via their labels."""
    prompt = chatml_prompt(SYSTEM_THINK, "A prompt the server has never seen; the label carries the tests.")
    queries, prompts, labels = [], [], []
    for f in PROBLEMS:
        queries.append("<|endoftext|>" * 2 + prompt + think(PROBLEMS[f][2]) + "<|im_end|><|endoftext|>")
        prompts.append(prompt)
        labels.append(label_json(f))
    # a None label falls back to the dataset lookup
    queries.append(q("assert"))
    prompts.append(chatml_prompt(SYSTEM_THINK, PROBLEMS["assert"][0]))
    labels.append(None)
    out = post(server, {"query": queries, "prompts": prompts, "labels": labels}).json()
    assert out["scores"] == [1.0] * len(queries)
    assert out["extra_logs"]["reward/unmatched"] == [0.0] * len(queries)


def test_format_check_follows_each_rows_answer_format(server):
    think_row_block_answer = q("assert", answer="block")
    block_user = "[block] " + PROBLEMS["assert"][0]
    block_row_block_answer = chatml(SYSTEM_BLOCK, block_user, block(PROBLEMS["assert"][2]))
    block_row_think_answer = chatml(SYSTEM_BLOCK, block_user, think(PROBLEMS["assert"][2]))
    out = post(server, {"query": [q("assert"), think_row_block_answer, block_row_block_answer,
                                  block_row_think_answer]}).json()
    assert out["extra_logs"]["reward/format"] == [1.0, 0.0, 1.0, 1.0]
    assert out["scores"] == [1.0, 1.0, 1.0, 1.0]
    assert out["rewards"][1] < out["rewards"][0]


def test_missing_or_broken_code_is_a_format_failure_not_an_error(server):
    user = PROBLEMS["assert"][0]
    queries = [chatml(SYSTEM_THINK, user, "I don't know."), chatml(SYSTEM_THINK, user, think("def mul(a, b:")),
               chatml(SYSTEM_THINK, user, ""), chatml(SYSTEM_THINK, user, "<think>" * 1000),
               chatml(SYSTEM_THINK, user, think("def mul(a, b):\n    return '\ud800'"))]  # lone surrogate
    out = post(server, json.dumps({"query": queries}).encode()).json()  # ASCII-escaped, as requests sends it
    assert out["scores"] == [0.0] * 5
    assert out["rewards"][0] == 0.0 and out["extra_logs"]["reward/syntax"] == [0.0] * 5  # not encodable: not run


def test_unmatched_prompts_get_the_configured_reward_and_are_counted(server):
    unknown = chatml(SYSTEM_THINK, "A problem about zebras that is not in the dataset.", think("x = 1"))
    out = post(server, {"query": [unknown, unknown, q("call")]}).json()
    assert out["rewards"][:2] == [0.0, 0.0] and out["scores"][2] == 1.0
    assert out["extra_logs"]["reward/unmatched"] == [1.0, 1.0, 0.0]
    time.sleep(0.2)
    log = server.output()
    assert log.count("zebras") == 1, log[-3000:]  # logged once, with an excerpt
    assert "batch " in log and "unmatched" in log  # the per-N-batches stats line


def test_concurrent_batches(server):
    batch = [q(f, kind) for f in PROBLEMS for kind in ("good", "wrong")] * 4
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        outs = list(pool.map(lambda _: post(server, {"query": batch}).json(), range(4)))
    expected = [1.0, 0.0] * len(PROBLEMS) * 4
    for out in outs:
        assert out["scores"] == expected


def test_256_query_batch_with_mixed_timeouts(server):
    """A full OpenRLHF-sized batch: distinct samples of every format, some looping forever."""
    fmts, kinds = list(PROBLEMS), ("good", "partial", "wrong")
    queries, expected = [], []
    for i in range(256):
        f, kind = fmts[i % 5], kinds[(i // 5) % 3]
        user, _, good, partial = PROBLEMS[f]
        code = {"good": good, "partial": partial, "wrong": WRONG[f]}[kind]
        if i % 64 == 7:  # 4 of 256 never terminate
            code, kind = "import sys\nwhile True:\n    pass", "loop"
        queries.append(chatml(SYSTEM_THINK, user, think(f"{code}\n# sample {i}"), left_pads=i % 17))
        expected.append({"good": 1.0, "partial": PARTIAL_RATE[f], "wrong": 0.0, "loop": 0.0}[kind])
    t0 = time.monotonic()
    out = post(server, {"query": queries})
    elapsed = time.monotonic() - t0
    assert out.status_code == 200, out.text
    assert elapsed < 90, elapsed  # OpenRLHF gives up after 180 s
    assert out.json()["scores"] == pytest.approx(expected)
    timeouts = out.json()["extra_logs"]["reward/timeout"]
    assert [i for i, t in enumerate(timeouts) if t] == [7, 71, 135, 199]


# -------------------------------------------------------------------------------- bad input


BAD_INPUTS = [
    (b"{not json", 400, "not valid JSON"),
    (b"\xff\xfe\x00", 400, "not valid JSON"),
    (b"[1, 2]", 422, "JSON object"),
    (b'{"prompts": ["p"]}', 422, "missing field 'query'"),
    (b'{"query": "just a string"}', 422, "'query' must be a list"),
    (b'{"query": ["a", 3]}', 422, "query[1] must be a string"),
    (b'{"query": []}', 422, "'query' is empty"),
    (b'{"query": ["a", "b"], "prompts": ["p"]}', 422, "'prompts' has 1 items but 'query' has 2"),
    (b'{"query": ["a"], "labels": "x"}', 422, "'labels' must be a list"),
    (b'{"query": ["a"], "labels": [7]}', 422, "labels[0] must be a string"),
]


@pytest.mark.parametrize("body, status, message", BAD_INPUTS)
def test_bad_input_gets_a_clear_4xx(server, body, status, message):
    r = post(server, body)
    assert r.status_code == status, r.text
    assert message in r.json()["detail"]


def test_oversized_query_and_body_are_rejected_and_server_stays_up(server):
    r = post(server, {"query": ["x" * (10 * 2**20)]})  # a 10 MB query (body under the 16 MB limit)
    assert r.status_code == 413 and "query[0] has 10485760 characters" in r.json()["detail"]
    r = post(server, {"query": ["x" * (9 * 2**20), "y" * (9 * 2**20)]})  # an 18 MB body
    assert r.status_code == 413 and "--max_body_mb" in r.json()["detail"]
    assert post(server, {"query": [q("call")]}).json()["scores"] == [1.0]


def test_auth_token(server):
    good = {"query": [q("call")]}
    assert post(server, good, token=None).status_code == 401
    assert post(server, good, token="wrong").status_code == 401
    r = httpx.post(f"{server.url}/get_reward", json=good, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60)
    assert r.status_code == 200 and r.json()["scores"] == [1.0]
    assert httpx.get(f"{server.url}/metrics", timeout=10).status_code == 401
    assert post(server, good).status_code == 200  # ?token= as OpenRLHF's URL would carry it


def test_metrics_and_docs(server):
    post(server, {"query": [q("assert"), q("assert"), q("stdio", "wrong")]})
    text = httpx.get(f"{server.url}/metrics", params={"token": TOKEN}, timeout=10).text
    values = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            values[name] = float(value)
    assert values['coderl_requests_total{code="200"}'] >= 5
    assert values['coderl_requests_total{code="422"}'] >= 1
    assert values["coderl_unmatched_prompts_total"] >= 2
    assert values['coderl_executions_total{status="passed"}'] >= 5
    assert values['coderl_executions_total{status="failed"}'] >= 1
    assert values["coderl_cache_hits_total"] >= 1  # the repeated answers
    assert values["coderl_batch_latency_seconds_count"] >= 5
    assert "coderl_test_timeouts_total" in values and "coderl_reward_mean" in values
    assert values["coderl_executor_ready"] == 1.0 and values["coderl_sandbox_workers_alive"] == 2.0
    assert httpx.get(f"{server.url}/docs", timeout=10).status_code == 200
    spec = httpx.get(f"{server.url}/openapi.json", timeout=10).json()
    assert "query" in json.dumps(spec["paths"]["/get_reward"])


def metric_values(url: str, token: str | None = None) -> dict[str, float]:
    text = httpx.get(f"{url}/metrics", params={"token": token} if token else None, timeout=10).text
    return {line.rpartition(" ")[0]: float(line.rpartition(" ")[2])
            for line in text.splitlines() if line and not line.startswith("#")}


def test_unmatched_rate_reward_log_and_quiet_startup(tmp_path, data_path):
    """A batch mostly unmatched (e.g. prompts the trainer truncated) is a loud warning with its rate, a gauge
    in /metrics and a line of the per-batch reward log; the start-up names its config file, warns once about
    the missing token, and generated code's SyntaxWarnings stay off stderr."""
    reward_log = tmp_path / "run" / "logs" / "rewards.jsonl"
    s = ServerProc(["--data_path", str(data_path), "--port", "0", "--workers", "1", "--host", "0.0.0.0",
                    "--reward_log", str(reward_log), "--unmatched_warn_rate", "0.5"],
                   env={"PYTHONWARNINGS": "always"})
    try:
        url = s.url.replace("0.0.0.0", "127.0.0.1")
        unknown = chatml(SYSTEM_THINK, "A problem about zebras that is not in the dataset.", think("x = 1"))
        first = httpx.post(f"{url}/get_reward", json={"query": [unknown, unknown, q("call")]}, timeout=60).json()
        assert first["rewards"][:2] == [0.0, 0.0], first
        assert metric_values(url)["coderl_unmatched_rate"] == pytest.approx(2 / 3)
        user, _, good, _ = PROBLEMS["call"]
        # a bare program (no fence): extraction parses the whole response to know it is code
        escaped = chatml(SYSTEM_THINK, user, good + "\n_pattern = '\\d+'\n_same = 1 is 1\n")
        second = httpx.post(f"{url}/get_reward", json={"query": [escaped, q("assert")]}, timeout=60).json()
        assert second["scores"] == [1.0, 1.0], second
        assert metric_values(url)["coderl_unmatched_rate"] == 0.0
    finally:
        assert s.stop() in CLEAN_EXIT, s.output()
    log = s.output()
    assert re.search(r"WARNING !!! batch 1: 2 of 3 queries \(67%\) matched no problem of \S+train\.jsonl and got "
                     r"reward 0: prompts longer than the trainer's --prompt_max_len", log), log
    assert "batch 2: 2 of 2" not in log and log.count("matched no problem") == 1
    assert log.count("WITHOUT an auth token") == 1, log
    assert f"config: {REPO_ROOT / 'configs' / 'reward.yaml'}" in log, log
    assert f"per-batch reward log: {reward_log}" in log
    assert "Warning" not in log and "invalid escape sequence" not in log, log
    lines = [json.loads(x) for x in reward_log.read_text().splitlines()]
    assert [r["batch"] for r in lines] == [1, 2] and [r["queries"] for r in lines] == [3, 2]
    assert lines[0]["unmatched"] == pytest.approx(2 / 3, abs=1e-4) and lines[1]["unmatched"] == 0.0
    assert lines[1]["score"] == 1.0 and lines[1]["correctness"] == 1.0 and lines[0]["seconds"] > 0
    assert {"reward", "format", "syntax", "length", "no_code", "timeout", "time"} <= set(lines[0])
    plot = subprocess.run([sys.executable, "-m", "coderl.rewards.reward_log", str(reward_log)],
                          capture_output=True, text=True, timeout=120)
    png = reward_log.with_suffix(".png")
    assert plot.returncode == 0 and plot.stdout.strip() == str(png), plot.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_help_names_the_command_it_was_run_as(tmp_path):
    """`python rewards/reward_server.py --help` shows that command; the installed coderl-reward-server its own."""
    by_path = subprocess.run([sys.executable, "rewards/reward_server.py", "--help"], capture_output=True,
                             text=True, timeout=60, cwd=str(REPO_ROOT))
    assert by_path.returncode == 0 and by_path.stdout.startswith("usage: python rewards/reward_server.py "), \
        by_path.stdout[:200]
    script = tmp_path / "coderl-reward-server"  # what pip writes for [project.scripts]
    script.write_text(f"#!{sys.executable}\nimport sys\nfrom coderl.rewards.reward_server import main\n"
                      "sys.exit(main())\n")
    script.chmod(0o755)
    installed = subprocess.run([str(script), "--help"], capture_output=True, text=True, timeout=60)
    assert installed.returncode == 0 and installed.stdout.startswith("usage: coderl-reward-server "), \
        installed.stdout[:200]


def test_without_the_venv_a_missing_dependency_says_what_to_activate():
    """`python rewards/reward_server.py` by an interpreter without fastapi (the quickstart's .venv not active)."""
    hide = "import runpy, sys; sys.modules['fastapi'] = None; sys.argv[0] = 'rewards/reward_server.py'; " \
           "runpy.run_path('rewards/reward_server.py', run_name='__main__')"
    proc = subprocess.run([sys.executable, "-c", hide, "--help"], capture_output=True, text=True, timeout=60,
                          cwd=str(REPO_ROOT))
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "error: No module named 'fastapi'" in proc.stderr and "lacks coderl's dependencies" in proc.stderr
    fix = "source .venv/bin/activate" if (REPO_ROOT / ".venv" / "bin" / "python").exists() else "quickstart.sh"
    assert fix in proc.stderr, proc.stderr


# ------------------------------------------------------------------ real OpenRLHF client


@pytest.fixture(scope="module")
def openrlhf_path(openrlhf_wheel, tmp_path_factory):
    d = tmp_path_factory.mktemp("openrlhf_wheel")
    with zipfile.ZipFile(openrlhf_wheel) as z:
        z.extractall(d)
    purelib = next(d.glob("openrlhf-*.data/purelib"), None)
    return purelib if purelib is not None and (purelib / "openrlhf").is_dir() else d


def test_real_openrlhf_remote_rm_fn(server, openrlhf_path):
    """openrlhf 0.5.7's own client (utils/remote_rm_utils.remote_rm_fn) against the server: the URL carries
    the token, the body is {"query": [...]}, the answer is read from "rewards"."""
    queries = [q("assert"), q("call", "wrong"), q("humaneval", "partial")]
    script = ("import json, sys\nfrom openrlhf.utils.remote_rm_utils import remote_rm_fn\n"
              "url, queries = sys.argv[1], json.loads(sys.stdin.read())\n"
              "r = remote_rm_fn(url, queries=queries)\nprint(json.dumps([r.dtype.__repr__(), r.tolist()]))\n")
    env = {**os.environ, "PYTHONPATH": str(openrlhf_path)}
    proc = subprocess.run([sys.executable, "-c", script, f"{server.url}/get_reward?token={TOKEN}"],
                          input=json.dumps(queries), capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    dtype, values = json.loads(proc.stdout.strip().splitlines()[-1])
    assert values[0] == pytest.approx(1.0) and values[1] < 0.25 and 0.25 < values[2] < 1.0


def test_reward_func_python_file(tmp_path, data_path):
    """rewards/reward_func.py loaded by path, as later OpenRLHF does with --remote_rm_url file.py."""
    cfg = tmp_path / "c.yaml"
    cfg.write_text("sandbox:\n  workers: 1\n")
    script = ("import importlib.util, json, sys\n"
              f"spec = importlib.util.spec_from_file_location('reward_func', {str(REPO_ROOT / 'rewards' / 'reward_func.py')!r})\n"
              "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
              "qs, ps, ls = json.loads(sys.stdin.read())\n"
              "out = m.reward_func(qs, ps, ls)\n"
              "print(json.dumps({k: (v.tolist() if k != 'extra_logs' else {a: b.tolist() for a, b in v.items()})"
              " for k, v in out.items()}))\n")
    prompt = chatml_prompt(SYSTEM_THINK, PROBLEMS["call"][0])
    qs = [q("call"), q("call", "partial"), q("assert")]
    ps = [prompt, prompt, None]
    ls = [label_json("call"), label_json("call"), None]
    env = {**os.environ, "CODERL_REWARD_CONFIG": str(cfg), "CODERL_DATA_PATH": str(data_path)}
    proc = subprocess.run([sys.executable, "-c", script], input=json.dumps([qs, ps, ls]), capture_output=True,
                          text=True, timeout=120, env=env, cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["scores"] == [1.0, 0.5, 1.0]
    assert len(out["extra_logs"]["reward/format"]) == 3


# ------------------------------------------------------- deadline, tokenizer, start-up errors


def test_a_hostile_batch_answers_within_the_deadline_plus_a_bounded_margin(data_path):
    """Whatever the responses hold (slow-to-compile candidate blocks, pathological nesting, 1.9 MB each), the
    request answers within --batch_deadline_s plus a bounded margin, counted from the request: a 2 s-deadline
    batch of 8 such responses took 43 s. Generous margin here; the tight figure: python -m scripts.bench.deadline."""
    from scripts.bench.deadline import batch

    # Each response's own compiling has at least 1 s here (--prepare_min_s): 8 x 1 s exceed the 2 s deadline, so the
    # deadline, not the preparation budget, is what stops these (the budget's residual: far more queries than
    # prepare_share x deadline / prepare_min_s).
    s = ServerProc(["--data_path", str(data_path), "--port", "0", "--workers", "2", "--batch_deadline_s", "2",
                    "--prepare_min_s", "1"])
    try:
        post(s, {"query": batch("normal", 2, "warm")}, token=None)
        queries = (batch("normal", 2, "a") + batch("blocks", 8, "b") + batch("deep_nesting", 2, "c")
                   + batch("large", 4, "d"))
        body = json.dumps({"query": queries})
        t0 = time.monotonic()
        out = post(s, body, token=None, headers={"content-type": "application/json"}).json()
        took = time.monotonic() - t0
        assert took < 2 + 8, took
        # 8 blocks responses outlast the deadline even on a fast idle machine: what follows them is cut, not late
        assert out["extra_logs"]["reward/cut"][10:] == [1.0] * 6, out["extra_logs"]["reward/cut"]
        assert httpx.get(f"{s.url}/health", timeout=10).json()["ready"] is True
    finally:
        assert s.stop() in CLEAN_EXIT, s.output()


def test_responses_slow_to_extract_get_no_code_never_the_cut_and_honest_ones_keep_their_verdicts(data_path):
    """What a response writes cannot buy the neutral cut: blocks that take extraction seconds to compile, after a
    partly right program, exceed the response's own preparation budget (0.5 x 20 s over 16 queries: 0.625 s) and
    get the no-code reward, scored; the right and partly right programs in the same request keep their verdicts."""
    from scripts.bench.cheaters.deadline_bytes import _response
    from scripts.bench.deadline import blocks as slow_blocks

    named = ("assert", "call", "humaneval", "unittest")
    s = ServerProc(["--data_path", str(data_path), "--port", "0", "--workers", "2", "--batch_deadline_s", "20",
                    "--test_timeout_s", "1", "--job_timeout_s", "2"])
    try:
        honest = [chatml(SYSTEM_THINK, PROBLEMS[f][0], _response(PROBLEMS[f][k] + f"\n# {f}", ""))
                  for k in (2, 3) for f in named]
        cheats = [chatml(SYSTEM_THINK, PROBLEMS[f][0], _response(
            PROBLEMS[f][3] + f"\n# {f} {i}", slow_blocks(f, str(i)).split("<answer>\n", 1)[1].rsplit("</answer>")[0]))
            for i in range(2) for f in named]
        alone = post(s, {"query": honest}, token=None).json()
        out = post(s, {"query": honest + cheats}, token=None).json()
        logs = out["extra_logs"]
        assert out["rewards"][:8] == alone["rewards"] and alone["rewards"][:4] == [1.0] * 4, alone["rewards"]
        assert logs["reward/no_code"] == [0.0] * 8 + [1.0] * 8 and logs["reward/cut"] == [0.0] * 16, logs
        assert max(out["rewards"][8:]) < min(alone["rewards"]), out["rewards"]
    finally:
        assert s.stop() in CLEAN_EXIT, s.output()


def _tiny_tokenizer(path):
    """A real HF tokenizer with a chat template none of the built-in matchers know ("### role:")."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.WordLevel({"[UNK]": 0, "<s>": 1, "</s>": 2, "<pad>": 3}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", bos_token="<s>", eos_token="</s>",
                                   pad_token="<pad>")
    fast.chat_template = ("{{ bos_token }}{% for m in messages %}### {{ m['role'] }}:\n{{ m['content'] }}\n"
                          "{% endfor %}{% if add_generation_prompt %}### Response:\n{% endif %}")
    fast.save_pretrained(path)
    return fast


def test_deadline_and_tokenizer_templates(tmp_path, data_path, server):
    """A batch whose jobs cannot all finish by --batch_deadline_s is answered on time; the jobs it cut are
    reported as cut, keep the verdict of the run that exceeded their probe (never the neutral reward), and
    stop at once. --tokenizer adds exact matching for an unknown chat template."""
    tok = _tiny_tokenizer(tmp_path / "tok")
    # A run starts only with its bound (the 8 s job limit + pool.START_MARGIN_S) left before the deadline: 0.9 s
    # past it, the first runs start at once and no rerun can (each waits for its first run's 1 s probe to run out).
    deadline = 8.0 + START_MARGIN_S + 0.9
    s = ServerProc(["--data_path", str(data_path), "--port", "0", "--workers", "2", "--test_timeout_s", "4",
                    "--job_timeout_s", "8", "--probe_s", "1", "--batch_deadline_s", str(deadline), "--chunk_size", "1",
                    "--tokenizer", str(tmp_path / "tok")])
    try:
        msgs = [{"role": "system", "content": SYSTEM_THINK}, {"role": "user", "content": PROBLEMS["call"][0]}]
        custom = ("<pad><pad>" + tok.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True)
                  + think(PROBLEMS["call"][2]) + "</s><pad>")
        out = post(s, {"query": [custom]}, token=None).json()
        assert out["scores"] == [1.0], out
        # without --tokenizer the same query is not found
        assert post(server, {"query": [custom]}).json()["extra_logs"]["reward/unmatched"] == [1.0]

        # 2 programs that never end, 2 workers: each exceeds its 1 s probe, and its rerun (up to the 8 s job limit)
        # could not end before the deadline: it does not start. The right programs finish first, in the fast lane.
        loop = "def mul(a, b):\n    while True:\n        pass"
        queries = [q("call"), q("assert")] + [chatml(SYSTEM_THINK, PROBLEMS["assert"][0], think(loop + f"\n# {i}"))
                                              for i in range(2)]
        t0 = time.monotonic()
        out = post(s, {"query": queries}, token=None).json()
        elapsed = time.monotonic() - t0
        assert elapsed < 5, elapsed  # answered once nothing more could start, well before the deadline
        assert out["scores"] == [1.0, 1.0] + [0.0] * 2
        # Their probe runs timed out: that verdict, not the neutral reward (the mean of the prompt's finished
        # samples, here the right one's: a hang cut in the slow lane once scored as a right answer).
        assert out["extra_logs"]["reward/timeout"] == [0.0, 0.0] + [1.0] * 2
        assert out["extra_logs"]["reward/cut"] == [0.0] * 4
        assert out["rewards"][2:] == pytest.approx([out["rewards"][2]] * 2) and out["rewards"][2] < out["rewards"][1]
        assert "2 of 4 jobs cut" in s.output() and "for 2 that had exceeded their probe" in s.output()
        metrics = httpx.get(f"{s.url}/metrics", timeout=10).text
        assert "coderl_deadline_misses_total 0.0" in metrics  # no cut reward: each kept its probe run's verdict
        # the cut work stopped at once: the next batch finishes at its own pace, with its own verdicts
        t0 = time.monotonic()
        after = post(s, {"query": [chatml(SYSTEM_THINK, PROBLEMS["assert"][0], think(PROBLEMS["assert"][2] + f"\n# {i}"))
                                   for i in range(6)]}, token=None).json()
        assert after["scores"] == [1.0] * 6 and time.monotonic() - t0 < 2.5
        assert httpx.get(f"{s.url}/health", timeout=10).json()["ready"] is True  # still serving
    finally:
        assert s.stop() in CLEAN_EXIT, s.output()


def test_loopback_detection_for_the_no_token_warning():
    from coderl.rewards.reward_server import _is_loopback

    assert all(_is_loopback(h) for h in ("127.0.0.1", "localhost", "::1", "127.0.0.2"))
    assert not any(_is_loopback(h) for h in ("0.0.0.0", "::", "10.0.0.5", "example.org"))


def test_startup_errors_are_clear_and_nonzero(tmp_path, data_path):
    p = run_server_expecting_exit(["--data_path", str(tmp_path / "missing.jsonl"), "--port", "0"])
    assert p.returncode != 0 and "data file not found" in p.stderr and "missing.jsonl" in p.stderr
    assert "Traceback" not in p.stderr

    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(json.dumps(r) for r in rows()[:2]) + "\n{\"input\": oops}\n")
    p = run_server_expecting_exit(["--data_path", str(bad), "--port", "0"])
    assert p.returncode != 0 and f"{bad}: line 3" in p.stderr and "Traceback" not in p.stderr

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        p = run_server_expecting_exit(["--data_path", str(data_path), "--port", str(port)])
    assert p.returncode != 0 and f"cannot listen on 127.0.0.1:{port}" in p.stderr
    assert "Traceback" not in p.stderr

    p = run_server_expecting_exit(["--data_path", str(data_path), "--port", "0", "--format_weight", "-1"])
    assert p.returncode != 0 and "format_weight" in p.stderr and "Traceback" not in p.stderr

    blocker = tmp_path / "a_file"
    blocker.write_text("")
    p = run_server_expecting_exit(["--data_path", str(data_path), "--port", "0", "--reward_log",
                                   str(blocker / "rewards.jsonl")])
    assert p.returncode == 2 and f"cannot write --reward_log {blocker / 'rewards.jsonl'}" in p.stderr, p.stderr
    assert "Traceback" not in p.stderr

    p = run_server_expecting_exit(["--data_path", str(data_path), "--wrokers", "2"])
    assert p.returncode == 2 and "unrecognized arguments: --wrokers" in p.stderr
    assert len(p.stderr.splitlines()) == 2, "a short usage line, then the error: not the list of every flag"


# ----------------------------------------------------------------------------- secrets and shutdown

def _descendants(pid: int) -> set[int]:
    """Every live process under pid (from /proc)."""
    children: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    ppid = int(f.read().rpartition(")")[2].split()[1])
            except OSError:
                continue
            children.setdefault(ppid, []).append(int(d))
    out, todo = set(), [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            out.add(c)
            todo.append(c)
    return out


def _alive(pid: int) -> bool:
    """pid runs (a zombie has ended: only its exit status is left to reap)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return False


def test_the_token_comes_from_a_file_or_the_environment_and_never_shows(tmp_path, data_path):
    secret = "file-s3cret-9f2c"
    token_file = tmp_path / "token"
    token_file.write_text(secret + "\n")
    token_file.chmod(0o600)
    s = ServerProc(["--data_path", str(data_path), "--port", "0", "--workers", "1",
                    "--auth_token_file", str(token_file)])
    try:
        good = {"query": [q("call")]}
        assert post(s, good, token=None).status_code == 401 and post(s, good, token=TOKEN).status_code == 401
        assert post(s, good, token=secret).json()["scores"] == [1.0]
        health = httpx.get(f"{s.url}/health", timeout=10).text
        with open(f"/proc/{s.proc.pid}/cmdline", "rb") as f:
            cmdline = f.read()
        assert secret not in health and secret.encode() not in cmdline
        assert f"auth token: from --auth_token_file {token_file}" in s.output()
    finally:
        assert s.stop() in CLEAN_EXIT, s.output()
    assert secret not in s.output()

    # Kept for old launch lines, with a warning; the value still never reaches the log.
    s = ServerProc(["--data_path", str(data_path), "--port", "0", "--workers", "1", "--auth_token", secret])
    try:
        assert post(s, {"query": [q("call")]}, token=secret).status_code == 200
        assert "--auth_token puts the secret on the command line" in s.output()
    finally:
        assert s.stop() in CLEAN_EXIT, s.output()
    assert secret not in s.output()

    env = {**os.environ, "PYTHONUNBUFFERED": "1", "CODERL_AUTH_TOKEN": TOKEN}
    base = [sys.executable, str(REPO_ROOT / "rewards" / "reward_server.py"), "--data_path", str(data_path), "--port", "0"]
    p = subprocess.run([*base, "--auth_token_file", str(token_file)], capture_output=True, text=True, env=env, timeout=60)
    assert p.returncode == 2 and "given --auth_token_file" in p.stderr and "CODERL_AUTH_TOKEN" in p.stderr, p.stderr
    assert secret not in p.stderr + p.stdout and TOKEN not in p.stderr + p.stdout
    empty = tmp_path / "empty"
    empty.write_text("\n")
    for path, why in ((empty, "empty"), (tmp_path / "nope", "cannot read it")):
        p = run_server_expecting_exit([*base[2:], "--auth_token_file", str(path)])
        assert p.returncode == 2 and f"--auth_token_file {path}: {why}" in p.stderr, p.stderr


def test_sigterm_lets_batches_in_flight_finish_then_answers_503(tmp_path, data_path):
    """SIGTERM mid-batch: no new batches; one that finishes within --shutdown_grace_s gets its rewards, one that
    cannot gets a 503 naming the shutdown (never a 500 or a traceback), and no process of the server is left."""
    s = ServerProc(["--data_path", str(data_path), "--port", "0", "--workers", "3", "--probe_s", "0",
                    "--test_timeout_s", "30", "--job_timeout_s", "60", "--shutdown_grace_s", "5"])
    slow = [chatml(SYSTEM_THINK, PROBLEMS["assert"][0],
                   think(f"import time\ndef mul(a, b):\n    time.sleep(10)\n    return a * b\n# {i}")) for i in range(2)]
    quick = [chatml(SYSTEM_THINK, PROBLEMS["assert"][0],
                    think("import time\ndef mul(a, b):\n    time.sleep(0.4)\n    return a * b"))]
    try:
        post(s, {"query": [q("call")]}, token=None)  # the pool is warm
        procs = _descendants(s.proc.pid)
        assert procs, "the sandbox workers run under the server"
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            long_batch = pool.submit(post, s, {"query": slow}, None)
            time.sleep(0.5)
            short_batch = pool.submit(post, s, {"query": quick}, None)
            time.sleep(0.5)
            t0 = time.monotonic()
            s.proc.terminate()
            r_short, r_long = short_batch.result(), long_batch.result()
            took = time.monotonic() - t0
        assert r_short.status_code == 200 and r_short.json()["scores"] == [1.0]
        assert r_long.status_code == 503, r_long.text
        assert "shut down before this batch finished" in r_long.json()["detail"]
        assert 4 < took < 9, took  # the grace, not the 40 s the slow batch needed
        with pytest.raises(httpx.TransportError):  # no new requests: the port is closed
            httpx.post(f"{s.url}/get_reward", json={"query": quick}, timeout=10)
        assert s.proc.wait(timeout=30) in CLEAN_EXIT
        deadline = time.monotonic() + 10  # what died with the server is reaped by init a moment later
        while (left := [p for p in procs if _alive(p)]) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not left, f"processes of the server outlived it: {left}"
        out = s.output()
        assert "Traceback" not in out and "CancelledError" not in out, out
    finally:
        s.stop()

"""rewards/integrations/backend.py: the in-process pool and the reward-server client give the same answers.

The server is the real one (python rewards/reward_server.py, loopback HTTP, auth token, real sandboxes);
the TRL and verl adapters are called with its URL the way their trainers call them.
"""

from __future__ import annotations

import asyncio
import socket
import time

import pytest

from coderl.rewards import reward_func
from coderl.rewards.config import CoderlConfig, RewardConfig
from coderl.rewards.integrations import backend as be
from coderl.rewards.integrations.trl import make_code_reward
from coderl.rewards.integrations.verl import compute_score, compute_score_batch
from coderl.rewards.labels import TRL_LABEL_COLUMN
from tests.support import (
    PARTIAL_RATE,
    PROBLEMS,
    ServerProc,
    graded_batch,
    label_json,
    rows,
    think,
    write_jsonl,
)

pytestmark = pytest.mark.timeout(300)
TOKEN = "integration-token"


@pytest.fixture(scope="module")
def config_path(tmp_path_factory):
    p = tmp_path_factory.mktemp("cfg") / "reward.yaml"
    p.write_text("sandbox:\n  workers: 2\n")
    return str(p)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    data = write_jsonl(tmp_path_factory.mktemp("srv") / "train.jsonl", rows())
    s = ServerProc(["--data_path", str(data), "--port", "0", "--workers", "2"], env={"CODERL_AUTH_TOKEN": TOKEN})
    yield s
    s.stop()


@pytest.fixture(scope="module")
def local_answer(config_path):
    texts, labels = graded_batch()
    return be.local_backend(config=config_path).score(texts, labels=labels)


def test_local_scores_responses_with_labels(local_answer):
    n = len(PROBLEMS)
    assert len(local_answer.rewards) == 4 * n
    for i, fmt in enumerate(PROBLEMS):
        full, partial, unformatted, no_code = local_answer.scores[4 * i:4 * i + 4]
        assert (full, partial, unformatted, no_code) == (1.0, PARTIAL_RATE[fmt], 1.0, 0.0), fmt
        r = local_answer.rewards[4 * i:4 * i + 4]
        assert r[0] == pytest.approx(1.0) and r[3] == 0.0 and r[1] < r[2] < r[0]  # format counts
    assert set(local_answer.extra_logs) >= {"reward/correctness", "reward/format", "reward/all_passed"}


def test_the_local_backend_takes_the_servers_path(config_path, local_answer):
    """In-process scoring goes through the server's executor: its result cache answers a repeated batch, and
    its batch deadline (server.batch_deadline_s) cuts what is left, from an event loop of the caller's own."""
    texts, labels = graded_batch()
    backend = be.local_backend(config=config_path)
    assert asyncio.run(asyncio.to_thread(backend.score, texts, labels=labels)) == local_answer
    st = backend.executor.last_stats
    assert st["executed"] == 0 and st["result_cache_hits"] == st["jobs"] > 0
    cfg = CoderlConfig(sandbox={"workers": 2, "test_timeout_s": 5.0, "probe_s": 0},
                       server={"batch_deadline_s": 1.0})
    hang = "def mul(a, b):\n    while True:\n        pass\n"
    cutting = be.LocalRewards(cfg)
    try:
        t0 = time.monotonic()
        answer = cutting.score([think(f"{hang}# {i}") for i in range(4)], labels=[label_json("assert")] * 4)
        assert time.monotonic() - t0 < 4.0 and cutting.executor.last_stats["deadline_cut"] == 4
        assert answer.rewards == [RewardConfig().cut_reward] * 4
    finally:
        cutting.close()
    assert cutting.executor is None


def test_remote_equals_local_with_bearer_token(server, local_answer):
    texts, labels = graded_batch()
    client = be.RemoteRewards(server.url, TOKEN)  # the token travels only as Authorization: Bearer
    assert client.url == f"{server.url}/get_reward"
    assert client.score(texts, labels=labels) == local_answer


def test_remote_errors_are_clear(server):
    texts, labels = graded_batch()
    for token in ("wrong", None):
        with pytest.raises(be.RewardServerError, match="HTTP 401: missing or wrong token"):
            be.RemoteRewards(server.url, token).score(texts[:1], labels=labels[:1])
    with pytest.raises(be.RewardServerError, match=r"HTTP 422: 'query' is empty"):
        be.RemoteRewards(server.url, TOKEN).score([], labels=[])
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(be.RewardServerError, match=f"cannot reach the reward server at http://127.0.0.1:{port}"):
        be.RemoteRewards(f"http://127.0.0.1:{port}?token=abc", retries=1).score(["x"])
    with pytest.raises(ValueError, match="must look like http://HOST:PORT"):
        be.RemoteRewards("localhost:5000")


def test_backend_choice_and_reuse(server, config_path, monkeypatch):
    monkeypatch.setenv("CODERL_REWARD_URL", server.url + "/get_reward/")
    monkeypatch.setenv("CODERL_AUTH_TOKEN", TOKEN)
    remote = be.get_backend()
    assert isinstance(remote, be.RemoteRewards) and remote is be.get_backend()
    assert remote.url == f"{server.url}/get_reward"
    monkeypatch.delenv("CODERL_REWARD_URL")
    local = be.get_backend(config=config_path)
    assert isinstance(local, be.LocalRewards) and local is be.local_backend(config_path)


def test_adapters_through_the_server(server, local_answer, monkeypatch):
    """The TRL, verl and OpenRLHF-file adapters with the server option return what the in-process pool computes."""
    texts, labels = graded_batch()
    monkeypatch.setenv("CODERL_REWARD_URL", server.url)
    monkeypatch.setenv("CODERL_AUTH_TOKEN", TOKEN)
    assert reward_func.compute(texts, None, labels)["rewards"] == pytest.approx(local_answer.rewards)
    monkeypatch.setenv("CODERL_AUTH_TOKEN", "wrong")
    with pytest.raises(be.RewardServerError, match="HTTP 401"):
        reward_func.compute(texts[:1], None, labels[:1])
    monkeypatch.delenv("CODERL_REWARD_URL")

    trl_reward = make_code_reward(server.url, TOKEN)
    got = trl_reward(prompts=[None] * len(texts), completions=[[{"role": "assistant", "content": t}] for t in texts],
                     **{TRL_LABEL_COLUMN: labels})
    assert got == pytest.approx(local_answer.rewards)

    rows_ = compute_score_batch(["test"] * len(texts), texts, labels, [{}] * len(texts), server_url=server.url,
                                auth_token=TOKEN)
    assert [r["score"] for r in rows_] == pytest.approx(local_answer.rewards)
    assert [r["correctness"] for r in rows_] == local_answer.scores
    one = compute_score("test", texts[1], labels[1], {}, server_url=server.url, auth_token=TOKEN,
                        reward_router_address=None)  # keywords verl adds are ignored
    assert one == rows_[1] and one["acc"] == 0.0 and rows_[0]["acc"] == 1.0

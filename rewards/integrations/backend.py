"""Where the trainer adapters get rewards: a warm Sandbox pool in this process, or a running reward server.

    backend = get_backend()                                  # CODERL_REWARD_URL unset: the in-process pool
    backend = get_backend("http://HOST:5000", "SECRET")      # the server; sends Authorization: Bearer SECRET
    answer = backend.score(responses, labels=labels)         # a reward_server.RewardResponse, one entry each

Both give the same rewards: the local pool runs rewards/pipeline.py's `score` (the path the server's
Scorer takes), the remote one asks the server. One backend per process and setting, created on first use
and reused, so the pool's workers start once. Environment defaults:
  CODERL_REWARD_URL     the reward server (base URL or .../get_reward); unset = in-process pool
  CODERL_AUTH_TOKEN     its token (the server reads the same variable)
  CODERL_REWARD_CONFIG  YAML config for the in-process pool (default configs/reward.yaml)
  CODERL_DATA_PATH      the training JSONL; only needed to look prompts up when labels are missing
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
import time
from collections.abc import Sequence
from urllib.parse import urlsplit, urlunsplit

import httpx
from pydantic import ValidationError

from coderl.rewards.api import RewardRequest, RewardResponse
from coderl.rewards.code_reward import openrlhf_answer
from coderl.rewards.config import CoderlConfig, load_config
from coderl.rewards.pipeline import Scorer, score
from coderl.rewards.prompt_index import PromptIndex
from coderl.rewards.sandbox import Sandbox

log = logging.getLogger("coderl.integrations")


class RewardServerError(RuntimeError):
    """The reward server could not be reached or gave an answer that is not a reward response."""


class LocalRewards:
    """Scores in this process with one warm Sandbox pool, started on first use and closed at exit."""

    def __init__(self, cfg: CoderlConfig, index: PromptIndex | None = None) -> None:
        self.cfg = cfg
        self.scorer = Scorer(cfg.reward, index)
        self._sandbox: Sandbox | None = None
        self._lock = threading.Lock()
        self.batches = 0  # score() calls, for the logs and the tests

    def _pool(self) -> Sandbox:
        with self._lock:
            if self._sandbox is None:
                sandbox = Sandbox(self.cfg.sandbox)
                sandbox.start()
                atexit.register(sandbox.close)
                self._sandbox = sandbox
            return self._sandbox

    def score(self, queries: Sequence[str], prompts: Sequence[str | None] | None = None,
              labels: Sequence[str | None] | None = None) -> RewardResponse:
        items = score(self.scorer, self._pool(), list(queries), None if prompts is None else list(prompts),
                      None if labels is None else list(labels))
        self.batches += 1
        return RewardResponse(**openrlhf_answer(items))

    def close(self) -> None:
        with self._lock:
            if self._sandbox is not None:
                self._sandbox.close()
                self._sandbox = None


class RemoteRewards:
    """POSTs to a running reward server: the body is a RewardRequest, the answer a RewardResponse."""

    def __init__(self, url: str, token: str | None = None, timeout_s: float = 180.0, retries: int = 3) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"reward server URL must look like http://HOST:PORT[/get_reward], got {url!r}")
        path = parts.path.rstrip("/")
        if not path.endswith("/get_reward"):
            path += "/get_reward"
        self.url = urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))
        self.shown = urlunsplit((parts.scheme, parts.netloc, path, "", ""))  # never log a ?token=
        self.retries = retries
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._client = httpx.Client(timeout=timeout_s, headers=headers)
        self.batches = 0

    def score(self, queries: Sequence[str], prompts: Sequence[str | None] | None = None,
              labels: Sequence[str | None] | None = None) -> RewardResponse:
        body = RewardRequest(query=list(queries), prompts=None if prompts is None else list(prompts),
                             labels=None if labels is None else list(labels)).model_dump(exclude_none=True)
        why = ""
        for attempt in range(self.retries + 1):
            try:
                r = self._client.post(self.url, json=body)
            except httpx.TransportError as e:  # refused, reset, timed out: the server may be restarting
                why = f"cannot reach the reward server at {self.shown}: {type(e).__name__}: {e}"
            else:
                if r.status_code < 500:
                    break
                why = f"the reward server at {self.shown} answered HTTP {r.status_code}: {r.text[:300]}"
            if attempt < self.retries:
                log.warning("%s; retrying in %d s (%d/%d)", why, 2 ** attempt, attempt + 1, self.retries)
                time.sleep(2 ** attempt)
        else:
            raise RewardServerError(why)
        if r.status_code != 200:  # 4xx: retrying cannot help; the server's detail names the problem
            try:
                detail = r.json().get("detail", r.text)
            except ValueError:
                detail = r.text
            raise RewardServerError(f"the reward server at {self.shown} answered HTTP {r.status_code}: "
                                    f"{str(detail)[:500]}")
        try:
            answer = RewardResponse.model_validate_json(r.content)
        except ValidationError as e:
            raise RewardServerError(f"{self.shown} did not answer a reward response: {e}") from None
        if len(answer.rewards) != len(body["query"]):
            raise RewardServerError(f"{self.shown} answered {len(answer.rewards)} rewards for "
                                    f"{len(body['query'])} queries")
        self.batches += 1
        return answer

    def close(self) -> None:
        self._client.close()


_backends: dict[tuple, LocalRewards | RemoteRewards] = {}
_lock = threading.Lock()


def _cached(key: tuple, make) -> LocalRewards | RemoteRewards:
    with _lock:
        backend = _backends.get(key)
        if backend is None:
            backend = _backends[key] = make()
        return backend


def close_all() -> None:
    """Close every cached backend (their sandbox pools and HTTP clients); the next get_backend() starts afresh."""
    with _lock:
        backends = list(_backends.values())
        _backends.clear()
    for backend in backends:
        backend.close()


def local_backend(config: str | None = None, data_path: str | None = None) -> LocalRewards:
    """The in-process pool for this config (default CODERL_REWARD_CONFIG, else configs/reward.yaml)."""
    config = config or os.environ.get("CODERL_REWARD_CONFIG") or None
    data_path = data_path or os.environ.get("CODERL_DATA_PATH") or None

    def make() -> LocalRewards:
        cfg = load_config(config)
        data = data_path or cfg.server.data_path
        return LocalRewards(cfg, PromptIndex.from_jsonl(data) if data else None)

    return _cached(("local", config, data_path), make)


def remote_backend(url: str, token: str | None = None) -> RemoteRewards:
    """A client of the reward server at url (token default: CODERL_AUTH_TOKEN)."""
    token = token or os.environ.get("CODERL_AUTH_TOKEN") or None
    return _cached(("remote", url, token), lambda: RemoteRewards(url, token))


def get_backend(server_url: str | None = None, auth_token: str | None = None,
                config: str | None = None) -> LocalRewards | RemoteRewards:
    """The server's client when a URL is given (or CODERL_REWARD_URL is set), else the in-process pool."""
    url = server_url or os.environ.get("CODERL_REWARD_URL") or None
    return remote_backend(url, auth_token) if url else local_backend(config)

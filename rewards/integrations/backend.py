"""Where the trainer adapters get rewards: a warm Sandbox pool in this process, or a running reward server.

    backend = get_backend()                                  # CODERL_REWARD_URL unset: the in-process pool
    backend = get_backend("http://HOST:5000", "SECRET")      # the server; sends Authorization: Bearer SECRET
    answer = backend.score(responses, labels=labels)         # a reward_server.RewardResponse, one entry each

Both give the same rewards by the same path: the local backend runs rewards/pipeline.py's `ascore` on the
executor the config asks for, as the server does (its result cache, in-batch dedup and batch deadline), the
remote one asks the server. One backend per process and setting, created on first use
and reused, so the pool's workers start once. Environment defaults:
  CODERL_REWARD_URL     the reward server (base URL or .../get_reward); unset = in-process pool
  CODERL_AUTH_TOKEN     its token (the server reads the same variable)
  CODERL_REWARD_CONFIG  YAML config for the in-process pool (default configs/reward.yaml)
  CODERL_DATA_PATH      the training JSONL; only needed to look prompts up when labels are missing
"""

from __future__ import annotations

import asyncio
import atexit
import logging
import os
import threading
import time
from collections.abc import Sequence
from urllib.parse import urlsplit, urlunsplit

import httpx
from pydantic import ValidationError

from ..api import RewardRequest, RewardResponse
from ..code_reward import openrlhf_answer
from ..config import CoderlConfig, load_config
from ..executors import BaseExecutor, make_executor
from ..pipeline import Scorer, ascore
from ..prompt_index import PromptIndex

log = logging.getLogger("coderl.integrations")


class RewardServerError(RuntimeError):
    """The reward server could not be reached or gave an answer that is not a reward response."""


class LocalRewards:
    """Scores in this process through the reward server's own path (pipeline.ascore on the executor the config
    asks for: its result cache, in-batch dedup, chunks and batch deadline), on an event loop of its own; the
    executor starts on first use and closes at exit."""

    def __init__(self, cfg: CoderlConfig, index: PromptIndex | None = None) -> None:
        self.cfg = cfg
        self.scorer = Scorer(cfg.reward, index)
        self.executor: BaseExecutor | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self.batches = 0  # score() calls, for the logs and the tests

    def _started(self) -> tuple[BaseExecutor, asyncio.AbstractEventLoop]:
        with self._lock:
            if self.executor is None:
                executor = make_executor(self.cfg)
                executor.start()
                # The trainer may call from a thread that runs an event loop of its own (or from several
                # threads): the batches run on this loop, as the server's run on its one.
                loop = asyncio.new_event_loop()
                self._thread = threading.Thread(target=loop.run_forever, name="coderl-rewards", daemon=True)
                self._thread.start()
                self.executor, self._loop = executor, loop
                atexit.register(self.close)
            return self.executor, self._loop

    def score(self, queries: Sequence[str], prompts: Sequence[str | None] | None = None,
              labels: Sequence[str | None] | None = None) -> RewardResponse:
        executor, loop = self._started()
        batch = ascore(self.scorer, executor, list(queries), None if prompts is None else list(prompts),
                       None if labels is None else list(labels), self.cfg.server.batch_deadline_s)
        items = asyncio.run_coroutine_threadsafe(batch, loop).result()
        self.batches += 1
        return RewardResponse(**openrlhf_answer(items))

    def close(self) -> None:
        with self._lock:
            executor, loop, thread = self.executor, self._loop, self._thread
            self.executor = self._loop = self._thread = None
        if executor is not None:
            executor.close()
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout=10)
            loop.close()


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

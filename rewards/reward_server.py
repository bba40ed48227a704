"""The reward server OpenRLHF talks to: HTTP only (FastAPI app factory + `main()` CLI).

    python rewards/reward_server.py --data_path /data/train.jsonl --port 5000
    # OpenRLHF: --remote_rm_url http://HOST:5000/get_reward   (with a token: .../get_reward?token=SECRET)

POST /get_reward {"query": [...], "prompts"?: [...], "labels"?: [...]} -> {"rewards", "scores", "extra_logs"}.
The query text (template split, lookup) lives in rewards/query.py over the index of rewards/prompt_index.py,
extraction in rewards/extract.py, the reward in rewards/code_reward.py, execution in rewards/executors.py
(rewards/sandbox/ underneath). Faults, shutdown, the token and how concurrent clients share the sandboxes:
docs/reward_server.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hmac
import importlib.util
import ipaddress
import json
import logging
import os
import socket
import sys
import threading
import time

if __package__ in (None, "") and importlib.util.find_spec("coderl") is None:
    # Run by path from a checkout where coderl is not installed (a bare GPU box): the checkout's coderl/
    # links its folders as the package.
    sys.path.append(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from coderl.rewards.errors import DataError, missing_dependency

try:
    from fastapi import FastAPI, HTTPException, Request
    from fastapi.responses import JSONResponse, Response

    from coderl.rewards.api import RewardRequest, RewardResponse
    from coderl.rewards.code_reward import TermError, batch_means, openrlhf_answer, terms
    from coderl.rewards.config import (
        AUTH_TOKEN_ENV,
        DEFAULT_CONFIG_PATH,
        CoderlConfig,
        ConfigError,
        add_cli_flags,
        apply_cli_overrides,
        load_config,
        resolve_auth_token,
    )
    from coderl.rewards.metrics import Metrics
    from coderl.rewards.pipeline import Scorer, ascore
    from coderl.rewards.prompt_index import PromptIndex, describe
    from coderl.rewards.reward_log import RewardLog
    from coderl.rewards.stepwise_json import loads as json_loads
    from coderl.rewards.version import add_version_flag
    from coderl.rewards.version import version as _version
except ModuleNotFoundError as _e:
    if (_e.name or "coderl").startswith("coderl"):
        raise
    sys.exit(missing_dependency(_e))

log = logging.getLogger("coderl.reward_server")


def _bad(status: int, msg: str) -> HTTPException:
    return HTTPException(status_code=status, detail=msg)


def _parse_request(raw: bytes, cfg: CoderlConfig) -> tuple[list[str], list | None, list | None]:
    """Decode and check a request body; raises a 4xx naming the problem. Runs off the event loop."""
    try:
        data = json_loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise _bad(400, f"request body is not valid JSON: {e}") from None
    except RecursionError:
        raise _bad(400, "request body is not valid JSON: nested too deeply") from None
    return _validate(data, cfg)


def _validate(data, cfg: CoderlConfig) -> tuple[list[str], list | None, list | None]:
    """Check the request shape; raises a 4xx naming the field."""
    s = cfg.server
    if not isinstance(data, dict):
        raise _bad(422, f"request body must be a JSON object with a 'query' list, got {type(data).__name__}")
    if "query" not in data:
        raise _bad(422, "missing field 'query' (a list of decoded prompt+response strings)")
    q = data["query"]
    if not isinstance(q, list):
        raise _bad(422, f"'query' must be a list of strings, got {type(q).__name__}")
    if not q:
        raise _bad(422, "'query' is empty: send at least one query")
    if len(q) > s.max_batch_queries:
        raise _bad(413, f"'query' has {len(q)} items; the limit is {s.max_batch_queries} (--max_batch_queries)")
    for i, item in enumerate(q):
        if not isinstance(item, str):
            raise _bad(422, f"query[{i}] must be a string, got {type(item).__name__}")
        if len(item) > s.max_query_chars:
            raise _bad(413, f"query[{i}] has {len(item)} characters; the limit is {s.max_query_chars} "
                            f"(--max_query_chars)")
    extra = []
    for name in ("prompts", "labels"):
        v = data.get(name)
        if v is None:
            extra.append(None)
            continue
        if not isinstance(v, list):
            raise _bad(422, f"'{name}' must be a list of strings, got {type(v).__name__}")
        if len(v) != len(q):
            raise _bad(422, f"'{name}' has {len(v)} items but 'query' has {len(q)}: they must match one to one")
        for i, item in enumerate(v):
            if item is not None and not isinstance(item, str):
                raise _bad(422, f"{name}[{i}] must be a string or null, got {type(item).__name__}")
        extra.append(v)
    return q, extra[0], extra[1]


def create_app(cfg: CoderlConfig, index: PromptIndex, executor, scorer: Scorer | None = None,
               reward_log: RewardLog | None = None) -> FastAPI:
    """The FastAPI app around a loaded index and a started executor (both closed on shutdown, with the
    reward log: the one given, else cfg.server.reward_log's)."""
    scorer = scorer or Scorer(cfg.reward, index)
    if reward_log is None and cfg.server.reward_log:
        reward_log = RewardLog(cfg.server.reward_log)
    metrics = Metrics()
    token = cfg.server.auth_token.get_secret_value() if cfg.server.auth_token is not None else ""
    max_body = int(cfg.server.max_body_mb * 2**20)
    state = {"batches": 0, "bad_labels": 0, "started": time.time(), "in_flight": 0}
    lock = threading.Lock()
    grace = cfg.server.shutdown_grace_s
    shutdown = {"since": None}  # monotonic time of SIGTERM (uvicorn's shutdown): no new batches from then on
    grace_over = asyncio.Event()

    def begin_shutdown() -> None:
        """Stop taking batches; those in flight get `grace` seconds, then a 503 (on the event loop)."""
        if shutdown["since"] is None:
            shutdown["since"] = time.monotonic()
            log.info("shutting down: new batches get 503; %d in flight have %gs to finish", state["in_flight"], grace)
            asyncio.get_running_loop().call_later(grace, grace_over.set)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI):
        yield
        await asyncio.to_thread(executor.close)
        if reward_log is not None:
            reward_log.close()

    app = FastAPI(title="coderl reward server", version=_version(), lifespan=lifespan,
                  description="Unit-test rewards for OpenRLHF: POST /get_reward with {\"query\": [...]}.")
    app.state.metrics, app.state.scorer, app.state.begin_shutdown = metrics, scorer, begin_shutdown
    cache = getattr(executor, "result_cache", None)
    metrics.watch_result_cache(lambda: cache.stats() if cache is not None else None)
    metrics.watch_executor(executor)

    def check_auth(request: Request) -> None:
        if not token:
            return
        header = request.headers.get("authorization", "")
        given = header[7:].strip() if header[:7].lower() == "bearer " else request.query_params.get("token", "")
        if not given or not hmac.compare_digest(given.encode(), token.encode()):
            raise _bad(401, "missing or wrong token: send 'Authorization: Bearer TOKEN' or append ?token=TOKEN")

    async def read_body(request: Request) -> bytes:
        declared = request.headers.get("content-length")
        if declared and declared.isdigit() and int(declared) > max_body:
            raise _bad(413, f"request body is {int(declared)} bytes; the limit is {max_body} (--max_body_mb)")
        chunks, size = [], 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > max_body:
                raise _bad(413, f"request body exceeds {max_body} bytes (--max_body_mb)")
            chunks.append(chunk)
        return b"".join(chunks)

    @app.exception_handler(HTTPException)
    async def _http_error(request: Request, exc: HTTPException):
        metrics.requests.labels(str(exc.status_code)).inc()
        return JSONResponse({"detail": exc.detail}, status_code=exc.status_code, headers=exc.headers)

    body_schema = {"requestBody": {"required": True, "content": {
        "application/json": {"schema": RewardRequest.model_json_schema()}}}}

    @app.post("/get_reward", response_model=RewardResponse, openapi_extra=body_schema,
              summary="Score a batch of decoded OpenRLHF queries")
    async def get_reward(request: Request):
        t0 = time.monotonic()  # the deadline counts from the request, its body's reading and parsing included
        check_auth(request)
        raw = await read_body(request)
        # Everything CPU-bound runs on worker threads, in steps that never hold the GIL for long, so the
        # event loop keeps answering /health while a batch is parsed, prepared and scored.
        queries, prompts, labels = await asyncio.to_thread(_parse_request, raw, cfg)
        del raw
        if shutdown["since"] is not None:
            raise _bad(503, "the reward server is shutting down and takes no new batches: send it to another one")
        metrics.in_flight.inc()
        state["in_flight"] += 1
        try:
            items = await until_shutdown(ascore(scorer, executor, queries, prompts, labels,
                                                cfg.server.batch_deadline_s - (time.monotonic() - t0)))
        finally:
            metrics.in_flight.dec()
            state["in_flight"] -= 1
        return await asyncio.to_thread(finish_batch, items, time.monotonic() - t0)

    async def until_shutdown(scoring):
        """The batch's result, unless the shutdown grace runs out first: then its jobs are cut and the client
        gets a 503 (the batch has no verdicts to answer with)."""
        task = asyncio.ensure_future(scoring)
        over = asyncio.ensure_future(grace_over.wait())
        try:
            await asyncio.wait((task, over), return_when=asyncio.FIRST_COMPLETED)
        finally:
            over.cancel()
            if not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        if task.cancelled():
            raise _bad(503, f"the reward server shut down before this batch finished (shutdown grace "
                            f"{grace:g}s, --shutdown_grace_s): send it again, to another server")
        return task.result()

    def finish_batch(items: list, seconds: float) -> Response:
        """Metrics, the periodic log line and the JSON answer of one scored batch."""
        metrics.observe_batch(items, seconds)
        with lock:
            if scorer.bad_labels > state["bad_labels"]:
                metrics.bad_labels.inc(scorer.bad_labels - state["bad_labels"])
                state["bad_labels"] = scorer.bad_labels
            metrics.requests.labels("200").inc()
            state["batches"] += 1
            batch = state["batches"]
        m = batch_means(items)
        if reward_log is not None:
            reward_log.write(batch, len(items), seconds, m)
        if m["unmatched"] and m["unmatched"] >= cfg.server.unmatched_warn_rate:
            log.warning("!!! batch %d: %d of %d queries (%.0f%%) matched no problem of %s and got reward %.3g: "
                        "prompts longer than the trainer's --prompt_max_len are truncated and cannot match "
                        "(run the launch preflight; raise PROMPT_MAX_LEN or drop them: data/preprocess.py "
                        "--max_prompt_tokens), or the trainer reads another data file or chat template "
                        "(--tokenizer). Sending labels avoids text matching (docs/integrations.md). !!!",
                        batch, round(m["unmatched"] * len(items)), len(items), 100 * m["unmatched"], index.path,
                        cfg.reward.unmatched_reward)
        if batch % cfg.server.log_every_n_batches == 0 or batch == 1:
            st = getattr(executor, "last_stats", {})
            log.info("batch %d: %d queries in %.2fs | reward %.3f pass %.3f format %.3f syntax %.3f "
                     "all_passed %.3f unmatched %.3f no_code %.3f timeout %.3f | executed %s cache_hits %s "
                     "(result_cache %s, evicted %s, %s entries, %s MB) deadline_cut %s executor_cut %s (rate %.3f)", batch, len(items),
                     seconds, m["reward"], m["correctness"], m["format"], m["syntax"], m["all_passed"],
                     m["unmatched"], m["no_code"], m["timeout"], st.get("executed", 0), st.get("cache_hits", 0),
                     st.get("result_cache_hits", "off"), st.get("result_cache_evictions", 0),
                     st.get("result_cache_entries", 0), st.get("result_cache_mb", 0),
                     st.get("deadline_cut", 0) + st.get("deadline_missed", 0), st.get("executor_cut", 0), m["cut"])
        return JSONResponse(openrlhf_answer(items))

    @app.get("/health", summary="Readiness, dataset fingerprint, isolation mode")
    async def health():
        ready, why = executor.readiness()
        if shutdown["since"] is not None:
            ready, why = False, "shutting down"
        return {"ready": ready, "not_ready": None if ready else why, "version": _version(),
                "dataset": {"path": index.path, "rows": len(index), "sha256": index.sha256},
                "isolation": executor.info(), "workers": executor.workers, "executor": executor.name,
                "index": index.stats.as_dict(), "uptime_s": round(time.time() - state["started"], 1)}

    @app.get("/metrics", summary="Prometheus metrics")
    async def prom(request: Request):
        check_auth(request)
        return Response(metrics.render(), media_type=metrics.content_type)

    return app


# ------------------------------------------------------------------------------------------- CLI

def build_parser() -> argparse.ArgumentParser:
    argv0 = sys.argv[0]
    p = argparse.ArgumentParser(
        # `python rewards/reward_server.py` shows itself; the coderl-reward-server script its own name.
        prog=f"python {argv0}" if argv0.endswith(".py") else os.path.basename(argv0),
        # Not argparse's list of all ~45 flags: a mistyped one would bury its one-line error under it.
        usage="%(prog)s --data_path TRAIN_JSONL [--port PORT] [--workers N] [option ...] (all options: --help)",
        description="coderl reward server: runs generated code against unit tests and answers OpenRLHF's "
                    "--remote_rm_url requests: POST /get_reward {\"query\": [templated prompt + response, ...]} "
                    "-> {\"rewards\": [...], \"scores\": [...], \"extra_logs\": {...}}; GET /health, /metrics.")
    p.add_argument("--config", default=None, help="YAML config (default: configs/reward.yaml when present).")
    p.add_argument("--log_level", default="info", choices=["debug", "info", "warning", "error"])
    add_version_flag(p)
    add_cli_flags(p, aliases={"data_path": ("--data",)})  # --data: coderl-evaluate's old spelling
    return p


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _port_problem(host: str, port: int) -> str | None:
    """Why host:port cannot be bound, or None; checked before the slow start-up (uvicorn binds last)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as e:
        return f"cannot resolve --host {host!r}: {e.strerror}"
    family, _, _, _, addr = infos[0]
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(addr)
        except OSError as e:
            return f"cannot listen on {host}:{port}: {e.strerror} (another server running? pick another --port)"
    return None


def _load_tokenizer(path: str):
    try:
        from transformers import AutoTokenizer

        return AutoTokenizer.from_pretrained(path, local_files_only=True)
    except Exception as e:
        raise SystemExit(f"error: cannot load --tokenizer {path}: {e}") from None


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr,
                        format="%(asctime)s coderl %(levelname)s %(message)s")
    try:
        cfg = apply_cli_overrides(load_config(args.config), args)
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    try:
        terms(cfg.reward)
    except TermError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    # A non-editable install reads the copy in site-packages: say which file this is.
    source = args.config or (DEFAULT_CONFIG_PATH if DEFAULT_CONFIG_PATH.exists() else None)
    log.info("config: %s", os.path.abspath(source) if source else
             f"built-in defaults (no {DEFAULT_CONFIG_PATH})")
    s = cfg.server
    try:
        token, token_source = resolve_auth_token(s)
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.server__auth_token is not None:
        log.warning("--auth_token puts the secret on the command line, where every local user reads it (ps, "
                    "/proc/PID/cmdline): use %s=... or --auth_token_file FILE instead", AUTH_TOKEN_ENV)
    cfg = cfg.model_copy(update={"server": s.model_copy(update={"auth_token": token})})
    s = cfg.server
    if token is not None:
        log.info("auth token: from %s", token_source)
    if not s.data_path:
        print("error: --data_path is required (the JSONL written by data/preprocess.py)", file=sys.stderr)
        return 2
    problem = _port_problem(s.host, s.port)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 1
    tokenizer = _load_tokenizer(s.tokenizer) if s.tokenizer else None
    try:
        index = PromptIndex.from_jsonl(s.data_path, tokenizer)
    except DataError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    log.info(describe(index))
    if not _is_loopback(s.host) and not s.auth_token:
        log.warning("!!! listening on %s WITHOUT an auth token: anyone who can reach this port can make "
                    "this machine run code. Set %s or --auth_token_file. !!!", s.host, AUTH_TOKEN_ENV)
    try:
        reward_log = RewardLog(s.reward_log) if s.reward_log else None
    except OSError as e:
        print(f"error: cannot write --reward_log {s.reward_log}: {e.strerror}", file=sys.stderr)
        return 2
    if reward_log is not None:
        log.info("per-batch reward log: %s", reward_log.describe())
    from coderl.rewards.executors import make_executor

    executor = make_executor(cfg)
    try:
        executor.start()
    except Exception as e:
        print(f"error: cannot start the {s.executor} executor: {e}", file=sys.stderr)
        return 1
    import uvicorn

    app = create_app(cfg, index, executor, reward_log=reward_log)

    class _Server(uvicorn.Server):
        async def shutdown(self, sockets=None):
            app.state.begin_shutdown()
            await super().shutdown(sockets)

        async def startup(self, sockets=None):
            await super().startup(sockets)
            if self.started and self.servers and self.servers[0].sockets:
                host, port = self.servers[0].sockets[0].getsockname()[:2]
                print(f"coderl reward server listening on http://{s.host}:{port}", flush=True)

    server = _Server(uvicorn.Config(app, host=s.host, port=s.port, log_level=args.log_level,
                                    access_log=False,
                                    # a backstop past the grace: by then every batch has had its answer
                                    timeout_graceful_shutdown=s.shutdown_grace_s + 10))
    try:
        server.run()
    finally:
        with contextlib.suppress(Exception):
            executor.close()
    return 0 if server.started else 1


if __name__ == "__main__":
    sys.exit(main())

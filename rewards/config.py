"""Typed configuration for the sandbox, the reward and the server, in one place.

Defaults live here; `configs/reward.yaml` may override any field; CLI flags (snake_case, named after
the field, e.g. ``--test_timeout_s``) override the file. ``add_cli_flags`` / ``apply_cli_overrides``
derive the flags from the models so the three never drift apart.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

import yaml
from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, model_validator

from coderl.configs import CONFIG_DIR

from .extract import AnswerFormat

DEFAULT_CONFIG_PATH = CONFIG_DIR / "reward.yaml"


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class SandboxConfig(_Section):
    """How generated code is executed (rewards/sandbox/)."""

    workers: int = Field(default_factory=lambda: os.cpu_count() or 1, ge=1, le=512,
                         description="Warm, already-sandboxed worker processes; each runs one job at a time.")
    isolation: Literal["auto", "bwrap", "rlimits"] = Field(
        "auto", description="'bwrap' = bubblewrap namespaces (required), 'rlimits' = limits only (weak), "
                            "'auto' = bwrap when it works, else rlimits with a loud warning.")
    test_timeout_s: float = Field(4.0, gt=0, le=60, description="Wall-clock limit per test case for labels with neither "
                                                                 "time_limit_s nor ref_time_s.")
    job_timeout_s: float = Field(20.0, gt=0, le=600, description="Wall-clock limit per job (all its tests); at least twice "
                                                                "the job's per-test limit.")
    time_factor: float = Field(4.0, ge=1, le=100, description="Per-test limit of a label with ref_time_s (its reference "
                                                              "solution's slowest test): this many times that runtime...")
    time_floor_s: float = Field(1.0, gt=0, le=60, description="...but at least this many seconds...")
    time_cap_s: float = Field(20.0, gt=0, le=60, description="...and at most this many.")
    probe_s: float = Field(0.5, ge=0, le=60, description="A job's first run caps its per-test limit here (or at twice "
                                                         "ref_time_s) when that is at most a quarter of the limit; a job "
                                                         "that exceeds it runs again with its full limits after the jobs "
                                                         "that did not (0 = off).")
    starved_factor: float = Field(3.0, ge=1, le=20, description="Time a test waits for a CPU held by other load is "
                                                                "not charged to it, until its wall clock reaches this "
                                                                "many times its limit, or its job's processes used its "
                                                                "limit in CPU time (1 = plain wall clock).")
    cpu_time_s: int = Field(10, ge=1, le=600, description="RLIMIT_CPU per job child, in CPU-seconds.")
    memory_mb: int = Field(1024, ge=64, le=65536, description="RLIMIT_AS per job child (address space), MiB.")
    job_memory_mb: int = Field(2048, ge=64, le=262144,
                               description="Memory a job's processes may hold together (the program and every "
                                           "process it starts), MiB: with a job cgroup, all the kernel charges it "
                                           "(pages, socket and pipe buffers, tmpfs files), enforced by the kernel; "
                                           "without, their resident memory read every 50 ms. memory_mb bounds one "
                                           "process, and a job forking max_processes children held that many "
                                           "times it.")
    job_cgroup: bool = Field(True, description="Account each job's CPU and memory in a cgroup of its worker's "
                                               "(v2 delegated or v1 writable) that every process of the job is born "
                                               "into; where none can be had, or off, /proc is summed instead "
                                               "(docs/sandbox.md \"Limits\").")
    max_file_size_mb: int = Field(16, ge=1, le=4096, description="RLIMIT_FSIZE: largest file a job may write.")
    max_processes: int = Field(32, ge=1, le=4096, description="Processes/threads one job may have at once.")
    max_open_files: int = Field(64, ge=16, le=65536, description="RLIMIT_NOFILE per job child.")
    max_output_bytes: int = Field(65536, ge=1024, le=16 * 2**20,
                                  description="Captured stdout/stderr per test; the rest is dropped.")
    detail_chars: int = Field(400, ge=0, le=10000, description="Stderr/traceback excerpt kept per test.")
    max_value_mb: int = Field(64, ge=1, le=1024,
                              description="Largest encoded value the program may hand the judge in one reply, MiB.")
    tmp_size_mb: int = Field(64, ge=1, le=4096, description="Size of the private writable /tmp per worker.")
    landlock: bool = Field(True, description="Also confine each program with Landlock (files, TCP, signals) where "
                                             "the kernel has it; off only to debug.")
    dedup: bool = Field(True, description="Run identical (code, label) pairs within a batch once (the executor's "
                        "in-batch dedup, rewards/executors.py; a Sandbox used directly runs every job).")
    pin_workers: bool = Field(True, description="With one worker per usable CPU, keep each worker and all it starts "
                                                "(zygote, judge, programs) on a CPU of its own: a job's processes hand "
                                                "it to each other a few dozen times, and a hand-over to another CPU "
                                                "costs a cross-CPU wake-up. Off when other work keeps this machine's "
                                                "CPUs busy.")


class RewardConfig(_Section):
    """How execution results become a scalar reward (rewards/code_reward.py)."""

    correctness_weight: float = Field(1.0, ge=0, description="Weight of the unit-test pass rate (exact fraction of test cases passed).")
    format_weight: float = Field(0.1, ge=0, description="Weight of following the required answer format.")
    syntax_weight: float = Field(0.05, ge=0, description="Weight of the extracted code compiling.")
    length_weight: float = Field(0.05, ge=0, description="Weight of the conciseness component.")
    all_pass_bonus: float = Field(0.0, ge=0, description="Extra reward when every test passes (0 = off); added after normalisation.")
    length_soft_limit_chars: int = Field(4000, ge=1, description="Responses longer than this start losing the length component.")
    length_hard_limit_chars: int = Field(12000, ge=2, description="At or past this, the length component is 0 (linear in between).")
    syntax_max_chars: int = Field(65_536, ge=1, description="Extracted code longer than this counts as not compiling "
                                  "(a syntax failure, never run) without being compiled: the syntax check is one "
                                  "helper process, so one 2 MB response held every check behind it up to 30 s.")
    prepare_share: float = Field(0.5, gt=0, le=1, description="Share of the batch deadline that all responses' "
                                 "own preparation (extraction's compiles) may take: each response's budget is this "
                                 "share of the deadline over the batch's queries, at least prepare_min_s; a response "
                                 "whose compiling exceeds it is graded as having no extractable code, never cut.")
    prepare_min_s: float = Field(0.25, gt=0, description="The least preparation budget a response gets, whatever the "
                                 "batch's size and deadline: far above an honest response's compiling (~1 us per "
                                 "character; docs/reward.md, \"The preparation budget\").")
    answer_format: AnswerFormat = Field(
        "think_answer", description="Format check for rows whose label.extra.answer_format is unset; must agree with the preprocessor's prompt.")
    unmatched_reward: float = Field(0.0, description="Reward for a query whose problem is not in the dataset.")
    cut_reward_neutral: bool = Field(True, description="A sample no run of which could start before the batch deadline "
                                                       "(one whose first run exceeded its probe keeps that run's verdict) gets the mean reward "
                                                       "of its prompt's finished samples in the batch (advantage ~0).")
    cut_reward: float = Field(0.0, description="Reward of a cut sample when cut_reward_neutral is off or none of its "
                                               "prompt's samples finished.")
    normalize: bool = Field(True, description="Divide the weighted sum by the sum of weights (reward in [0, 1] without bonus).")
    terms: dict[str, float] = Field(default_factory=dict,
                                    description="More reward terms besides the built-in four, each 'module:function' "
                                                "(a function of code_reward.Sample returning a value in [0, 1]) with its "
                                                "weight; flag form NAME=WEIGHT[,NAME=WEIGHT] (docs/reward.md).")

    @model_validator(mode="after")
    def _check(self) -> RewardConfig:
        if self.length_hard_limit_chars <= self.length_soft_limit_chars:
            raise ValueError("length_hard_limit_chars must be greater than length_soft_limit_chars")
        for name, weight in self.terms.items():
            module, colon, fn = name.partition(":")
            if not (colon and module and fn.isidentifier()
                    and all(part.isidentifier() for part in module.split("."))):
                raise ValueError(f"terms: {name!r} is not 'module:function'")
            if not weight >= 0:
                raise ValueError(f"terms: {name!r} has weight {weight}; weights are >= 0")
        return self


class ServerConfig(_Section):
    """The HTTP server (rewards/reward_server.py)."""

    host: str = Field("127.0.0.1", description="Bind address; use 0.0.0.0 only with a token (CODERL_AUTH_TOKEN or "
                                               "--auth_token_file) for multi-node.")
    port: int = Field(5000, ge=0, le=65535, description="TCP port (0 = pick a free one).")
    data_path: str | None = Field(None, description="JSONL written by data/preprocess.py.")
    auth_token: SecretStr | None = Field(None, description="Shared secret, inline: as a flag every local user reads it "
                                                           "in ps (warned); prefer CODERL_AUTH_TOKEN or --auth_token_file.")
    auth_token_file: str | None = Field(None, description="File whose first line is the shared secret (keep it mode 600).")
    max_body_mb: float = Field(64.0, gt=0, description="Largest accepted request body.")
    max_query_chars: int = Field(2_000_000, ge=1, description="Largest single query string.")
    max_batch_queries: int = Field(16384, ge=1, description="Most queries accepted in one request.")
    batch_deadline_s: float = Field(150.0, gt=0, description="Per-batch deadline, counted from the request's arrival: the answer comes within it plus a bounded margin (docs/reward.md); stays under OpenRLHF's 180 s timeout.")
    shutdown_grace_s: float = Field(30.0, ge=0, le=600, description="On SIGTERM: new requests get 503 at once, batches in "
                                    "flight have this long to finish, then get a 503 (resend them elsewhere).")
    log_every_n_batches: int = Field(10, ge=1, description="Log one line of batch stats every N batches.")
    unmatched_warn_rate: float = Field(0.05, ge=0, le=1, description="Warn on every batch whose fraction of queries matching no problem reaches this (they get unmatched_reward).")
    reward_log: str | None = Field(None, description="Append one JSON line of per-batch means (reward, components, pass and unmatched rates, seconds) to this file; a server restarted on it continues it (next run id, batch numbers go on); plot: coderl-reward-log FILE.")
    result_cache: bool = Field(True, description="Reuse each program's first verdict across batches, by (label, exact code, sandbox limits); --no_result_cache turns it off.")
    cache_size: int = Field(16384, ge=0, description="Most results the result cache keeps (least recently used go first); 0 = off.")
    cache_max_uses: int = Field(32, ge=1, description="Lookups one cached result may answer before the program runs again: no single run of a nondeterministic program decides its reward for good.")
    cache_max_mb: float = Field(256.0, gt=0, description="Memory bound of the result cache, estimated from each result's outcomes and details, MiB.")
    chunk_size: int = Field(0, ge=0, description="Jobs per executor call; 0 = auto (small enough that a deadline keeps most results).")
    executor: Literal["local", "ray"] = Field("local", description="Run executions in-process or on Ray actors.")
    ray_address: str | None = Field(None, description="Existing Ray cluster address for --executor ray ('auto' = the local one).")
    ray_actors: int = Field(2, ge=1, description="Sandbox actors to start on the Ray cluster (each with --workers warm workers).")
    ray_ship_code: bool = Field(True, description="Send the rewards package to the actors (runtime_env py_modules); turn off when every node has coderl installed.")
    ray_health_s: float = Field(5.0, gt=0, le=300, description="How often the Ray executor checks that its cluster answers and its actors live (a lost actor is replaced, a lost cluster reconnected to).")
    tokenizer: str | None = Field(None, description="Optional tokenizer path for exact chat-template matching.")


class CoderlConfig(_Section):
    """Everything the reward server reads: configs/reward.yaml has the same shape."""

    sandbox: SandboxConfig = Field(default_factory=SandboxConfig)
    reward: RewardConfig = Field(default_factory=RewardConfig)
    server: ServerConfig = Field(default_factory=ServerConfig)


class ConfigError(ValueError):
    """A config file or override that does not validate; the message names the file and field."""


AUTH_TOKEN_ENV = "CODERL_AUTH_TOKEN"


def resolve_auth_token(server: ServerConfig, environ=os.environ) -> tuple[SecretStr | None, str]:
    """The server's token and where it came from (--auth_token_file, CODERL_AUTH_TOKEN, or auth_token inline);
    two sources at once, or an unreadable or empty file, is a ConfigError naming them."""
    sources = []
    if server.auth_token_file:
        path = Path(server.auth_token_file)
        try:
            text = path.read_text()
        except OSError as e:
            raise ConfigError(f"--auth_token_file {path}: cannot read it: {e.strerror}") from None
        token = text.splitlines()[0].strip() if text.strip() else ""
        if not token:
            raise ConfigError(f"--auth_token_file {path}: empty (the first line is the token)")
        sources.append((f"--auth_token_file {path}", token))
    if environ.get(AUTH_TOKEN_ENV):
        sources.append((AUTH_TOKEN_ENV, environ[AUTH_TOKEN_ENV]))
    if server.auth_token is not None and server.auth_token.get_secret_value():
        sources.append(("auth_token", server.auth_token.get_secret_value()))
    if len(sources) > 1:
        raise ConfigError("the auth token is given " + " and ".join(n for n, _ in sources) + ": give it once")
    if not sources:
        return None, ""
    name, token = sources[0]
    return SecretStr(token), name


def load_config(path: str | os.PathLike | None = None) -> CoderlConfig:
    """Load a YAML config (default: configs/reward.yaml when present) into a validated CoderlConfig."""
    p = Path(path) if path is not None else DEFAULT_CONFIG_PATH
    if path is None and not p.exists():
        return CoderlConfig()
    try:
        data = yaml.safe_load(p.read_text()) or {}
    except FileNotFoundError:
        raise ConfigError(f"config file not found: {p}") from None
    except yaml.YAMLError as e:
        raise ConfigError(f"{p}: not valid YAML: {e}") from None
    try:
        return CoderlConfig.model_validate(data)
    except ValidationError as e:
        raise ConfigError(f"{p}: {_fmt_validation(e)}") from None


def _fmt_validation(e: ValidationError) -> str:
    return "; ".join(f"{'.'.join(str(x) for x in err['loc'])}: {err['msg']}" for err in e.errors())


_SECTIONS = {"sandbox": SandboxConfig, "reward": RewardConfig, "server": ServerConfig}


class _BoolFlag(argparse.BooleanOptionalAction):
    """--flag / --no-flag, plus --no_flag: the snake_case spelling every other flag has."""

    def __init__(self, option_strings, dest, **kwargs) -> None:
        super().__init__(option_strings, dest, **kwargs)
        self._off = {s for s in self.option_strings if s.startswith("--no-")}
        self._off |= {f"--no_{s[2:]}" for s in option_strings if s.startswith("--")}
        self.option_strings += sorted(self._off - set(self.option_strings))

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        setattr(namespace, self.dest, option_string not in self._off)


def _mapping(text: str) -> dict[str, str]:
    """NAME=VALUE[,NAME=VALUE] as a dict (the values validated by the model)."""
    out = {}
    for item in filter(None, (p.strip() for p in text.split(","))):
        name, eq, value = item.partition("=")
        if not eq or not name.strip():
            raise argparse.ArgumentTypeError(f"{item!r} is not NAME=VALUE")
        out[name.strip()] = value.strip()
    return out


def add_cli_flags(parser: argparse.ArgumentParser, sections=("sandbox", "reward", "server"),
                  aliases: dict[str, tuple[str, ...]] | None = None) -> None:
    """Add one ``--field_name`` flag per config field (default None = keep the file's value); aliases: more
    spellings of a field's flag (the name other commands give the same thing)."""
    for name in sections:
        group = parser.add_argument_group(f"{name} config (overrides configs/reward.yaml)")
        for field_name, info in _SECTIONS[name].model_fields.items():
            flag = f"--{field_name}"
            default = info.get_default(call_default_factory=True)
            kwargs: dict[str, Any] = {"default": None, "dest": f"{name}__{field_name}",
                                      "help": f"{info.description} (built-in default: {default!r})"}
            if info.annotation is bool:
                kwargs["action"] = _BoolFlag
            elif get_origin(info.annotation) is Literal:
                kwargs["choices"] = get_args(info.annotation)
            elif get_origin(info.annotation) is dict:
                kwargs["type"], kwargs["metavar"] = _mapping, "NAME=VALUE[,NAME=VALUE]"
            else:
                kwargs["metavar"] = field_name.upper()
            group.add_argument(flag, *(aliases or {}).get(field_name, ()), **kwargs)


def apply_cli_overrides(cfg: CoderlConfig, args: argparse.Namespace) -> CoderlConfig:
    """Return a copy of cfg with every flag the user actually passed applied and validated."""
    data = cfg.model_dump()
    for key, value in vars(args).items():
        if "__" not in key or value is None:
            continue
        section, field_name = key.split("__", 1)
        if section in data:
            data[section][field_name] = value
    try:
        return CoderlConfig.model_validate(data)
    except ValidationError as e:
        raise ConfigError(f"command-line flag: {_fmt_validation(e)}") from None

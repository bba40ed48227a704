"""Tests of data/schemas/: each converter through the real CLI on parquet laid out as its dataset publishes it."""

from __future__ import annotations

from coderl.rewards.config import SandboxConfig
from coderl.rewards.labels import parse_label
from coderl.rewards.sandbox import Job, Sandbox


def pass_rates(pairs: list[tuple[str, str]]) -> list[float]:
    """The real sandbox's pass rate of each (program, label JSON) pair."""
    with Sandbox(SandboxConfig(workers=2, test_timeout_s=10.0, job_timeout_s=60.0)) as sb:
        return [r.pass_rate for r in sb.run([Job(code, parse_label(label)) for code, label in pairs])]

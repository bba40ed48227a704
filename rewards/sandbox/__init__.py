"""Run untrusted, model-generated Python against a problem's tests: the public API of the sandbox.

    from coderl.rewards.sandbox import Sandbox, Job, JobResult, TestOutcome, Status, STATUSES, count_tests, isolation_info

pool.py (the Sandbox), results.py (what a job gives back), plan.py (the spec a label's jobs carry),
isolation.py (bubblewrap / rlimits workers), cgroups.py (each worker's job cgroup), inside/ (the code that
runs inside the sandbox, the label formats among it). The names load on first use: the label schema (rewards/labels.py) reads the format
registry under inside/ without starting the pool's imports.
"""

import importlib

_WHERE = {"isolation_info": "isolation", "count_tests": "plan", "Sandbox": "pool", "STATUSES": "results", "Status": "results",
          "Job": "results", "JobResult": "results", "SandboxError": "results", "TestOutcome": "results"}
__all__ = sorted(_WHERE)


def __getattr__(name: str):
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
    globals()[name] = value
    return value

"""Run untrusted, model-generated Python against a problem's tests: the public API of the sandbox.

    from coderl.rewards.sandbox import Sandbox, Job, JobResult, TestOutcome, STATUSES, count_tests, isolation_info

pool.py (the Sandbox), results.py (what a job gives back), plan.py (what a label's test cases are, judged
outside), isolation.py (bubblewrap / rlimits workers), inside/ (the code that runs inside the sandbox).
"""

from coderl.rewards.sandbox.isolation import isolation_info
from coderl.rewards.sandbox.plan import count_tests
from coderl.rewards.sandbox.pool import Sandbox
from coderl.rewards.sandbox.results import STATUSES, Job, JobResult, SandboxError, TestOutcome

__all__ = ["STATUSES", "Job", "JobResult", "Sandbox", "SandboxError", "TestOutcome", "count_tests", "isolation_info"]

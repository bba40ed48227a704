"""What a sandbox job is and what it gives back: Job, JobResult, TestOutcome and the fixed set of statuses."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..labels import Label
from .inside import framing

# Per-test statuses (defined where the sandbox's inside reports them). "syntax" = the program (or a
# test) does not compile; "memory" = hit the address-space limit; "killed" = the program's process died by a
# signal, exited early, or ended while a test ran; "unsupported" = the test needed the program to decide a
# comparison (an opaque object compared, a test value passed to it that cannot cross the plain-data
# channel): not judgeable, never a pass.
Status = framing.Status
STATUSES = framing.STATUSES

# JobResult.infra values that callers tell apart from the other reasons (any non-empty one: never cached).
INFRA_CUT = "deadline"  # the batch deadline left the job waiting: no run of it could start in time; no verdict
INFRA_PROBE = "probe"  # the first run of a job whose rerun the deadline cut, at its probe's limits
# a run still going at the batch deadline although it started with its job limit left: past its limits, scored (its
# decided tests kept, the rest timeouts), never cached
INFRA_OVERRUN = "overrun"
# the sandbox lost the job twice (its worker or judge killed from outside, a worker fault), or once with no time
# left to run it again: no verdict, reported and rewarded as a deadline cut
INFRA_LOST = "lost"
CUT_INFRA = (INFRA_CUT, INFRA_LOST)  # no verdict of the program: the caller's neutral reward


class SandboxError(RuntimeError):
    """The pool cannot run jobs (closed, or its workers cannot start)."""


@dataclass(frozen=True)
class Job:
    """One candidate program and the tests to run it against."""

    code: str
    label: Label


@dataclass
class TestOutcome:
    """What happened to one test case."""

    status: Status
    runtime_s: float = 0.0
    detail: str = ""  # short, capped excerpt of stderr / traceback / diff


@dataclass
class JobResult:
    """Per-test outcomes of one job, in test order."""

    outcomes: list[TestOutcome]
    expected: int  # number of test cases the spec declares (counted outside the sandbox)
    runtime_s: float = 0.0
    cached: bool = False  # True when this result was shared with an identical job in the batch
    detail: str = ""  # job-level note
    stats: dict = field(default_factory=dict)
    # Non-empty when the sandbox, not the program, decided this result (e.g. "deadline": no run of the job could
    # start before the batch deadline; "probe": its rerun could not, after its first run exceeded the probe, and
    # this is that first run, at the probe's limits; "overrun": see INFRA_OVERRUN; "lost": see INFRA_LOST;
    # "worker": no worker could run it): never cached, never shared, reported apart from wrong answers.
    infra: str = ""  # INFRA_CUT, INFRA_PROBE, INFRA_OVERRUN, INFRA_LOST, "worker", "executor", ...

    @property
    def passed(self) -> int:
        return sum(o.status == Status.PASSED for o in self.outcomes)

    @property
    def pass_rate(self) -> float:
        return self.passed / self.expected if self.expected else 0.0

    @property
    def status(self) -> Status:
        """PASSED if every test passed, else the first non-passing status."""
        for o in self.outcomes:
            if o.status != Status.PASSED:
                return o.status
        return Status.PASSED if self.outcomes and len(self.outcomes) == self.expected else Status.KILLED

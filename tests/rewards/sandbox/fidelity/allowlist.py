"""Known disagreements between the sandbox and plain Python on the fidelity corpus, each with its reason.

tests/rewards/sandbox/test_fidelity.py fails on a disagreement listed nowhere here, and on an entry that no longer
disagrees (remove it: the executor got better). Program ids are "HumanEval/<n>:<kind>"; an entry covers
all three formats (humaneval, unittest, assert). Every entry is explained in docs/fidelity.md and counts
against the 0.1 % budget. Empty since sandbox v2 (issue 9): the judge compares plain data with ordinary
Python semantics and the candidate runs unrestricted Python, so the v1 false negatives (NamedTuple
defaults, frames, settrace, gc, doctest.testmod, UserList/UserString/ChainMap/MappingProxyType results)
are gone.
"""

from __future__ import annotations

EXPLAINED: dict[str, str] = {}


def reason_for(pid: str) -> str | None:
    """Why `pid` may disagree with plain Python, or None when it must not."""
    return EXPLAINED.get(pid)

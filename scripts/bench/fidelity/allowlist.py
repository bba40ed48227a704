"""Known disagreements between the sandbox and plain Python on the fidelity corpora, each with its reason.

tests/rewards/sandbox/test_fidelity.py and test_fidelity_families.py fail on a disagreement listed nowhere
here, and on an entry that no longer disagrees (remove it: the executor got better). A key is a program id
("HumanEval/<n>:<kind>", "coderm/<task>:<kind>", ...; a HumanEval entry covers its three formats) or a task id
("coderm/<task>": every program of that task). Every entry is explained in docs/fidelity.md.

Three kinds, and nothing else:

* ``LIMITS`` -- the test needs what the judge's plain-data channel cannot carry without letting the program
  decide a comparison (docs/sandbox.md, "The channel"): the status is ``unsupported``, never a pass. These
  tasks are written the way generated tests are written; they measure how often the limits occur.
* ``TOLERANCE`` -- the reference's own comparison (or its way of running a program: lcb_runner's) rejects a
  correct answer that the label format accepts on purpose (docs/label_format.md): we pass what the reference fails.

Empty for HumanEval since sandbox v2 (issue 9).
"""

from __future__ import annotations

_IN = "`in` on an object of the program (`assertIn(3, linked_list)`): its __contains__ would decide " \
      "whether a test value is in it"
_EQ = "`==` between objects of the program (`assertEqual(result, Point(1, 2))`): its __eq__ would decide"

LIMITS: dict[str, str] = {
    "coderm/linked_list": _IN,
    "coderm/inventory": _IN,
    "coderm/matrix": _EQ + "; also `Matrix(...) * 3`, arithmetic between a program object and a test value",
    "coderm/vector": _EQ + "; also `Vector2D(1, -2) * 3`, arithmetic between a program object and a test "
                           "value",
    "coderm/version": "ordering and equality between objects of the program (`assertLess(Version(a), "
                      "Version(b))`, `sorted(versions)`, a set of them): its __lt__ / __eq__ would decide",
    "coderm/plugin_base": "a test class deriving from a class of the program (`class Reverse(Plugin)` in "
                          "the test)",
    "coderm/session_timer": "`mock.patch('solution.datetime')` replaces a name of the solution module",
    "heldout/money_eq": _EQ + " (`assertEqual(Money.from_str('1.00'), Money(100))`, `assertLess(Money(1), "
                              "Money(2))` with total_ordering)",
    "heldout/patch_solution_helper": "`@patch('solution.roll_die')` replaces a name of the solution module",
    "heldout/subclass_limit": "a test class deriving from a class of the program (`class Upper(Plugin)` in "
                              "the test)",
}

# Disagreements found and not fixed yet (docs/fidelity.md, "Open"): each is a gap of the judge, not a limit.
OPEN: dict[str, str] = {
    "heldout2/list_subclass_stack": "a subclass of a builtin container with methods (`class Stack(list)`: "
                                    "`s.push(1)`) crosses as its base value, so its methods are missing "
                                    "(AttributeError); a stand-in would need its in-place changes followed too",
}

TOLERANCE: dict[str, str] = {
    "apps/average": "APPS/TACO compare call results with ==: (0.1 + 0.2 + 0.3) / 3 is 0.20000000000000004, "
                    "not 0.2, so they fail correct programs; the call format accepts numbers within 1e-6",
    # lcb_runner's rules (docs/fidelity.md, "The LiveCodeBench family"): each rejects a program the platform accepts.
    "livecodebench/minimum_average:alt:tenths": "lcb_runner compares functional results with ==: 3.0000000000000004 "
                                                "is not 3.0; the call format accepts numbers within 1e-6",
    "livecodebench/pairs_with_sum:alt:inner_tuples": "lcb_runner turns only a top-level tuple into a list: [(1, 4)] "
                                                     "is not [[1, 4]]; LeetCode serialises both as [[1,4]]",
    "livecodebench/mean_value:alt:fixed_digits": "lcb_runner compares stdin numbers as exact Decimals: 3.6666666667 "
                                                 "is not 3.6666666666666665, though the problem accepts 1e-6",
    "livecodebench/count_up:alt:blank_between": "lcb_runner keeps blank lines inside the output (one more line "
                                                "than expected); the stdio format drops them, as APPS and "
                                                "Codeforces' token checker do",
    "livecodebench/a_plus_b:alt:buffer": "lcb_runner's stdin is an io.StringIO, which has no .buffer",
    "livecodebench/a_plus_b:alt:open0": "lcb_runner's prelude binds the real `open` (`from io import *`, `from "
                                        "builtins import *`) over its mock: open(0) reads the worker's own stdin",
    "livecodebench/a_plus_b:alt:from_sys_stdin": "`from sys import stdin` binds the real stdin when the module runs, "
                                                 "before lcb_runner swaps sys.stdin for the test's input",
    "livecodebench/count_walls:alt:global_total": "lcb_runner runs a stdin program as the body of one function: its "
                                                  "top-level names are locals there, so `global total` finds none",
}

EXPLAINED: dict[str, str] = {**LIMITS, **TOLERANCE, **OPEN}


def _lookup(table: dict[str, str], pid: str) -> str | None:
    return table.get(pid) or table.get(pid.partition(":")[0])


def reason_for(pid: str) -> str | None:
    """Why `pid` may disagree with plain Python, or None when it must not."""
    return _lookup(EXPLAINED, pid)


def tolerated(pid: str) -> bool:
    """The reference's comparison rejects `pid`'s correct answers (TOLERANCE)."""
    return _lookup(TOLERANCE, pid) is not None


def is_limit(pid: str) -> bool:
    """`pid`'s tests meet a documented limit of the channel (LIMITS): "unsupported" is expected there."""
    return _lookup(LIMITS, pid) is not None


def stale(in_corpus: set[str], disagreeing: set[str]) -> list[str]:
    """Keys whose programs were all measured (some are in the corpus) and none of which disagrees."""
    out = []
    for key in EXPLAINED:
        measured = {p for p in in_corpus if p == key or p.partition(":")[0] == key}
        if measured and not measured & disagreeing:
            out.append(key)
    return sorted(out)


def unexplained(report: dict) -> str:
    """The disagreements of a measure() report that no allow-list entry explains, as an assertion message
    ("" when there are none)."""
    unlisted = [d for d in report["disagreements"] if reason_for(d["pid"]) is None]
    if not unlisted:
        return ""
    return "disagreements with plain Python (add them to fidelity/allowlist.py only with a reason, and to " \
           "docs/fidelity.md):\n" + "\n".join(
               f"{d['pid']} {d['format']}: reference {'pass' if d['reference'] else 'fail'} "
               f"({d['reference_detail'][:80]}), ours {d['status']}: {d['detail'][-160:]}" for d in unlisted[:40])

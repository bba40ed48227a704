"""Known disagreements between the sandbox and plain Python on the fidelity corpus, each with its reason.

tests/test_fidelity.py fails on a disagreement listed nowhere here, and on an entry that no longer
disagrees (remove it: the executor got better). Program ids are "HumanEval/<n>:<kind>"; every entry
covers all three formats (humaneval, unittest, assert), where today's disagreements are identical.

V1_LIMITS: today's executor (rewards/sandbox.py with the audit hook and strict comparison) rejects
these correct programs -- false negatives that sandbox v2 (issue 9) must remove, emptying the dict.
They are left out of the agreement figure the test asserts while they are listed (the report and
scripts/bench/fidelity.py show the raw figure too).
EXPLAINED: disagreements that stay by design, each explained in docs/fidelity.md; they count against
the 0.1 % budget.
"""

from __future__ import annotations


def _ids(kind: str, reason: str, tasks: str) -> dict[str, str]:
    return {f"HumanEval/{n}:{kind}": reason for n in tasks.split()}


# NamedTuple results (the 6 false negatives; here on every task)
DEFAULTS = ("the audit hook denies assigning a function's __defaults__, which typing.NamedTuple with "
            "defaults and collections.namedtuple(defaults=...) do when the class is built")
# Module-level doctest tails.
NO_MAIN = ("the job child has no __main__ module, so a module-level doctest.testmod() raises 'TypeError: "
           "testmod: module required; None' (plain Python tests __main__ and carries on)")
# Results in non-builtin containers whose == plain Python honours.
STRICT = ("strict comparison: a UserList / UserString / ChainMap / MappingProxyType result is not "
          "builtin-based, so it never equals the expected list / str / dict")
# Frame introspection, also inside the traceback module.
FRAMES = ("the audit hook denies frame access (sys._getframe, .tb_frame): inspect.currentframe(), "
          "traceback.format_exc() / print_exc() and tb.tb_frame raise SandboxDenied")
TRACE = "the audit hook denies sys.settrace, even sys.settrace(None)"
GC = "the audit hook denies gc.get_objects / get_referrers / get_referents"

V1_LIMITS: dict[str, str] = {
    **_ids("nt_collections", DEFAULTS,
           "1 3 5 7 8 9 11 13 15 17 19 20 21 23 25 27 29 31 33 35 37 39 41 43 45 47 49 51 53 55 57 59 "
           "61 63 65 67 69 71 73 75 77 79 81 83 85 87 89 91 93 95 97 99 101 103 105 107 109 111 112 "
           "113 115 117 119 121 123 125 127 129 131 133 135 136 137 139 141 143 145 147 148 149 151 "
           "153 155 157 159 161 163"),
    **_ids("nt_typing", DEFAULTS,
           "0 2 4 6 8 10 12 14 16 18 20 22 24 26 28 30 32 34 36 38 40 42 44 46 48 50 52 54 56 58 60 62 "
           "64 66 68 70 72 74 76 78 80 82 84 86 88 90 92 94 96 98 100 102 104 106 107 108 110 112 114 "
           "116 118 120 122 124 126 128 130 132 134 136 138 140 142 144 146 148 150 152 154 155 156 "
           "158 160 162"),
    **_ids("doctest_module", NO_MAIN,
           "1 3 5 7 9 11 13 15 17 19 21 23 25 27 29 31 33 35 37 39 41 43 45 47 49 51 53 55 57 59 61 63 "
           "65 67 69 71 73 75 77 79 81 83 85 87 89 91 93 95 97 99 101 103 105 107 109 111 113 115 117 "
           "119 121 123 125 127 129 131 133 135 137 139 141 143 145 147 149 151 153 155 157 159 161 "
           "163"),
    **_ids("plain:chainmap", STRICT, "111"),
    **_ids("plain:mappingproxy", STRICT, "111"),
    **_ids("plain:userlist", STRICT,
           "1 5 6 7 9 14 17 21 22 25 26 29 30 34 42 58 62 68 70 74 81 87 88 96 100 101 104 105 106 113 "
           "116 117 120 123 125 129 130 145 149 152 159 163"),
    **_ids("plain:userstring", STRICT,
           "10 11 15 19 27 28 44 51 65 79 84 86 89 93 103 110 118 119 127 140 141 143 153 156 158 161 "
           "162"),
    **_ids("plain:inspect_currentframe", FRAMES, "5 18 30 43 56 68 81 94 106 119 132 144 157"),
    **_ids("plain:sys_getframe", FRAMES, "10 23 35 48 61 73 86 99 111 124 137 149 162"),
    **_ids("plain:tb_frame", FRAMES, "10 23 36 48 61 74 86 99 112 124 137 150 162"),
    **_ids("plain:traceback_format_exc", FRAMES, "11 24 37 49 62 75 87 100 113 125 138 151 163"),
    **_ids("plain:traceback_print_exc", FRAMES, "12 24 37 50 62 75 88 100 113 126 138 151"),
    **_ids("plain:settrace_none", TRACE, "9 22 35 47 60 73 85 98 111 123 136 149 161"),
    **_ids("plain:gc_get_objects", GC, "3 16 29 41 54 67 79 92 105 117 130 143 155"),
}

EXPLAINED: dict[str, str] = {}


def reason_for(pid: str) -> str | None:
    """Why `pid` may disagree with plain Python, or None when it must not."""
    return V1_LIMITS.get(pid) or EXPLAINED.get(pid)

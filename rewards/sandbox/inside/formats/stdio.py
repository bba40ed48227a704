"""`stdio` (APPS / TACO / CodeContests): a list of {"input": str, "output": str}. The program runs as `__main__`
once per pair with `input` on its stdin, each in a fresh candidate process (the worker's own loop,
inside/worker.py _run_stdin_cases: no judge, so no runner here); its stdout is compared outside (verdict)."""

import decimal
import math
import re

from .common import pair_tests

NAME = "stdio"
HOOKS = frozenset()
runner = None  # the worker runs each case itself (see the docstring)
_NEAR_INT = decimal.Decimal("1e-6")
# A number as a checker reads one: ASCII digits, a point, an exponent. float() and Decimal() also read other
# scripts' digits ('٤.0', fullwidth '４.5'), underscores ('1_0.0'), 'inf' and 'nan': text that is no number a
# checker prints passed as one (red team r28).
_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def _check(where, t):
    for key in ("input", "output"):
        if not isinstance(t.get(key), str):
            return f"{where}.{key} must be a string"
    return None


def validate_tests(tests) -> str | None:
    return pair_tests(tests, _check)


def plan(label) -> dict:
    # setup_code runs in __main__ before the program: a dataset's harness's implicit imports (LiveCodeBench's,
    # data/schemas/testcases.py), so the program sees the namespace it would there
    spec = {"plan": [t["input"] for t in label.tests]}  # expected outputs stay here
    if label.setup_code:
        spec["prelude"] = label.setup_code
    return spec


def output_room(tests) -> int:
    """Output bytes a case may capture besides the configured limit: room for an answer as long as the expected
    one (a size, never the text)."""
    return 2 * max(len(t["output"].encode()) for t in tests) + 4096


# ------------------------------------------------------------------------------ outside: the verdict

def normalize_output(text: str) -> list[str]:
    """stdio normalisation (APPS's): lines (\\r\\n, \\r end them too), each stripped, empty ones dropped."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return [s for s in (line.strip() for line in lines) if s]


def _is_int(token: str) -> bool:
    return token.lstrip("+-").isdigit()


def _is_number(token: str) -> bool:
    return _NUMBER.fullmatch(token) is not None


def _same_token(got: str, want: str) -> bool:
    """Equal text, or two numbers (not both integers) within 1e-6, absolute or relative to the expected. An
    integer expected takes the absolute bound only: relative to a large integer, 1e-6 spans other integers
    (`1000000008.0` for 1000000007), while no two integers are within 1e-6 of each other."""
    if got == want:
        return True
    if not (_is_number(got) and _is_number(want)) or (_is_int(got) and _is_int(want)):
        return False
    if _is_int(want):
        return _near_int(got, want)
    try:
        g, w = float(got), float(want)
    except ValueError:
        return False
    return math.isfinite(g) and math.isfinite(w) and abs(g - w) <= 1e-6 * max(1.0, abs(w))


def _near_int(got: str, want: str) -> bool:
    """got is a number within 1e-6 of the integer want, computed exactly (a float would round a large one)."""
    try:
        g, w = decimal.Decimal(got), decimal.Decimal(want)
    except (decimal.InvalidOperation, ValueError):
        return False
    if not g.is_finite():
        return False
    with decimal.localcontext() as ctx:  # room for want's digits: the difference is exact where it matters
        ctx.prec = len(want) + 30
        ctx.Emax, ctx.Emin = decimal.MAX_EMAX, decimal.MIN_EMIN
        return abs(g - w) <= _NEAR_INT


def _same_line(got: str, want: str) -> bool:
    g, w = got.split(), want.split()
    return len(g) == len(w) and all(_same_token(a, b) for a, b in zip(g, w, strict=True))


def judge_stdio(stdout: str, truncated: bool, expected: str) -> tuple[bool, str]:
    """APPS/TACO's comparison, kept to what is sound (docs/label_format.md): line by line, token by token in
    order, numbers within tolerance; APPS's order-blind token-set fallback is not applied."""
    if truncated:
        return False, "output exceeded the capture limit"
    got, want = normalize_output(stdout), normalize_output(expected)
    if got == want:
        return True, ""
    for i in range(max(len(got), len(want))):
        g = got[i] if i < len(got) else None
        w = want[i] if i < len(want) else None
        if g is None or w is None or not _same_line(g, w):
            return False, (f"line {i + 1}: expected {(w or '<no more lines expected>')[:120]!r}, "
                           f"got {(g or '<missing line>')[:120]!r}")
    return True, ""


def verdict(record: dict, test) -> tuple[bool, str]:
    """The sandbox's "ok" record of one case (what the program printed) against the test's expected output."""
    return judge_stdio(record.get("stdout", ""), record.get("truncated", False), test["output"])

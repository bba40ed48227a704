"""`checker` (open-r1/codeforces' `generated_checker`, any problem with many right answers): stdio cases judged by
the dataset's checker program. `tests` is a list of {"input": str, "output": str} (the output: the jury's
answer), the first also {"checker": python source}. Each case runs the program as `__main__` with `input` on
stdin, as `stdio` does (the worker's loop, no judge); once every process of that run has ended, the worker runs
the checker in a candidate of its own, as open-r1 runs it: `checker.py input.txt correct_output.txt
solution_output.txt` in a fresh directory of its own, printing 1 for a right answer. The checker's output is
judged outside (verdict); the program's output reaches the checker as data only.
"""

import json

from ..framing import Status
from .common import pair_tests
from .stdio import output_room as _stdio_room

NAME = "checker"
HOOKS = frozenset()
runner = None  # the worker runs each case, then the checker (inside/worker.py _run_checker)
# What the checker's candidate runs: the three files written afresh into a new private directory (the program's
# processes have all ended, and a name it planted in the job's directory is never opened: mkdtemp is new, and
# O_EXCL refuses what exists), then the checker as __main__ with open-r1's argv. Only the checker's own stdout and
# exit status leave the sandbox.
_WRAPPER = '''import json as _json, os as _os, sys as _sys, tempfile as _tempfile
_case = _json.loads(_sys.stdin.read())
_dir = _tempfile.mkdtemp(prefix="checker-", dir=".")
for _name, _key in (("input.txt", "input"), ("correct_output.txt", "answer"), ("solution_output.txt", "output")):
    _fd = _os.open(_os.path.join(_dir, _name), _os.O_WRONLY | _os.O_CREAT | _os.O_EXCL | _os.O_NOFOLLOW, 0o600)
    with open(_fd, "w", encoding="utf-8", newline="") as _fh:
        _fh.write(_case[_key])
_os.chdir(_dir)
_sys.argv = ["checker.py", "input.txt", "correct_output.txt", "solution_output.txt"]
_sys.stdin = open(_os.devnull)
del _case, _name, _key, _fd, _fh
_CHECKER = {checker!r}
exec(compile(_CHECKER, "checker.py", "exec"), {{"__name__": "__main__", "__builtins__": __builtins__}})
'''


def _check(where, t):
    for key in ("input", "output"):
        if not isinstance(t.get(key), str):
            return f"{where}.{key} must be a string"
    if where == "label.tests[0]":
        if not (isinstance(t.get("checker"), str) and t["checker"].strip()):
            return f"{where}.checker must be the checker program (a non-empty string)"
        try:
            compile(t["checker"], "checker.py", "exec")
        except (SyntaxError, ValueError) as e:
            return f"{where}.checker does not compile: {e}"
    elif "checker" in t:
        return f"{where}.checker: only the first case carries the checker"
    return None


def validate_tests(tests) -> str | None:
    return pair_tests(tests, _check)


def plan(label) -> dict:
    """The inputs (the program's stdin), the answers and the checker program (the checker's, inside the worker
    only: the zygote, hence the program, never holds a spec)."""
    tests = label.tests
    return {"plan": [t["input"] for t in tests], "answers": [t["output"] for t in tests],
            "checker": checker_program(tests[0]["checker"])}


def checker_program(source: str) -> str:
    """What the checker's candidate runs for a checker's source (_WRAPPER)."""
    return _WRAPPER.format(checker=source)


def checker_input(case_input: str, answer: str, output: str) -> bytes:
    """The checker candidate's stdin: one case's input, the jury's answer and what the program printed."""
    return json.dumps({"input": case_input, "answer": answer, "output": output}).encode()


output_room = _stdio_room


# ------------------------------------------------------------------------------ outside: the verdict

def verdict(record: dict, test) -> tuple[bool, str]:
    """The checker's run on one case: a right answer only when the checker exited 0 and printed 1 (open-r1's
    `stdout.strip() == "1"`)."""
    if record.get("truncated"):
        return False, "output exceeded the capture limit"
    ran = record.get("checker")
    if not isinstance(ran, dict):
        return False, "the checker did not run"
    if ran.get("status") != "ok":
        return False, f"the checker failed ({ran.get('status')}): {str(ran.get('detail', ''))[:200]}"
    said = str(ran.get("stdout", "")).strip()
    return (True, "") if said == "1" else (False, f"the checker said {said[:200]!r}")


def keep(tests, statuses, counts) -> dict:
    """--verify: the cases the reference passed, the checker moved to the first one kept."""
    kept = [dict(t) for t, s in zip(tests, statuses, strict=True) if s == Status.PASSED]
    dropped = [f"tests[{k}] ({s})" for k, s in enumerate(statuses) if s != Status.PASSED]
    for t in kept:
        t.pop("checker", None)
    if kept:
        kept[0]["checker"] = tests[0]["checker"]
    return {"kept": kept, "kept_cases": len(kept), "dropped": dropped, "rewritten": bool(dropped and kept)}

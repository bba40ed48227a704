"""A test's status and detail from the exception that ended it: shared by the judge and the label formats' runners.

stdlib only: this module runs inside the sandbox.
"""

from .framing import Status
from .guards import _from_tests
from .proxy import CandidateGone, Unjudgeable


def excerpt(text, limit):
    text = str(text)
    return text if len(text) <= limit else text[: limit // 2] + "\n…\n" + text[-limit // 2:]


def classify(exc):
    if isinstance(exc, MemoryError):
        return Status.MEMORY
    if isinstance(exc, (SystemExit, KeyboardInterrupt, GeneratorExit, CandidateGone)):
        return Status.KILLED
    if isinstance(exc, Unjudgeable):
        return Status.UNSUPPORTED
    if isinstance(exc, AssertionError):
        return Status.FAILED
    if isinstance(exc, SyntaxError):
        return Status.SYNTAX
    return Status.ERROR


def describe(exc, limit):
    tb = getattr(exc, "_coderl_tb", None)
    try:
        head = f"{type(exc).__name__}: {exc}"
    except BaseException:
        head = type(exc).__name__
    if isinstance(tb, str) and tb:
        return excerpt(tb.rstrip(), limit)
    lines = []
    t = exc.__traceback__
    while t is not None:
        code = t.tb_frame.f_code
        if _from_tests(code):
            lines.append(f"  {code.co_filename}:{t.tb_lineno} in {code.co_name}")
        t = t.tb_next
    return excerpt("\n".join(lines[-3:] + [head]), limit)

"""Run the fidelity corpus through the reference executors and through coderl.rewards.sandbox; compare verdicts.

    report = measure(rows, programs, workers=2)              # HumanEval: every program in three formats
    report = measure_work(family_jobs(programs), workers=2)  # a family whose programs carry their label
    report["formats"]["humaneval"]["agreement"], report["disagreements"], report["unsupported"]

A verdict is "every test case passed". The reference side runs in its own process (scripts/bench/fidelity/
reference.py); ours is one batch through a real Sandbox. Both get the same timeout for the whole
program (ours: test_timeout_s = job_timeout_s = timeout_s) and the same address-space limit.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

from coderl.rewards.config import SandboxConfig
from coderl.rewards.labels import Label
from coderl.rewards.sandbox import Job, Sandbox, Status
from scripts.bench.fidelity.corpus import Program
from scripts.bench.fidelity.suites import FORMATS, labels
from scripts.bench.workloads import REPO_ROOT  # noqa: E402

# 30x the slowest canonical HumanEval program (HumanEval/75, 0.33 s alone): verdicts must not depend on
# load; only programs that never end (one in the corpus) pay it.
TIMEOUT_S = 10.0


def jobs(rows: list[dict], programs: list[Program], formats=FORMATS) -> list[tuple[Program, str, Label]]:
    """(program, format, label) for every program in every format, in corpus order."""
    by_task = {row["task_id"]: labels(row, i) for i, row in enumerate(rows)}
    return [(p, fmt, by_task[p.task_id][fmt]) for p in programs for fmt in formats]


def family_jobs(programs: list[Program]) -> list[tuple[Program, str, Label]]:
    """(program, format, label) for programs that carry their own label (the families, *_style.py)."""
    return [(p, p.label.format, p.label) for p in programs]


def reference_verdicts(work: list[tuple[Program, str, Label]], timeout_s: float, workers: int,
                       memory_mb: int) -> list[tuple[bool, str]]:
    """[(passed, detail)] from plain Python (python -m scripts.bench.fidelity.reference), in order."""
    spec = {"timeout_s": timeout_s, "workers": workers, "memory_mb": memory_mb, "jobs": [
        {"format": fmt, "program": p.code, "tests": list(lb.tests), "setup_code": lb.setup_code,
         "entry_point": lb.entry_point, "reference": p.reference} for p, fmt, lb in work]}
    # PYTHONHASHSEED as the sandbox's workers have it (isolation._ENV): a test on the order of a set of strings
    # has one plain-Python verdict to agree with
    proc = subprocess.run([sys.executable, "-m", "scripts.bench.fidelity.reference"], input=json.dumps(spec),
                          cwd=REPO_ROOT, capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": "0"},
                          timeout=600 + len(work) * (timeout_s + 2) / workers)
    if proc.returncode != 0:
        raise RuntimeError(f"reference runner failed (exit {proc.returncode}): {proc.stderr[-2000:]}")
    return [tuple(v) for v in json.loads(proc.stdout)]


def our_verdicts(work: list[tuple[Program, str, Label]], config: SandboxConfig) -> list[tuple]:
    """[(passed, status, detail, cases, unsupported cases)] from coderl.rewards.sandbox, one batch."""
    with Sandbox(config) as sb:
        results = sb.run([Job(code=p.code, label=lb) for p, _, lb in work])
    out = []
    for r in results:
        bad = next((o for o in r.outcomes if o.status != Status.PASSED), None)
        complete = len(r.outcomes) == r.expected > 0
        status = bad.status if bad else Status.PASSED.value if complete else "incomplete"
        unsupported = sum(o.status == Status.UNSUPPORTED for o in r.outcomes)
        detail = (bad.detail if bad else r.detail)[:300]
        out.append((status == Status.PASSED, status, detail, r.expected, unsupported))
    return out


def compare(work, reference, ours) -> dict:
    """Per-format agreement and the list of disagreements."""
    formats: dict[str, dict] = {}
    disagreements = []
    unsupported: dict[str, dict] = {}
    for (p, fmt, _), (ref_ok, ref_detail), (our_ok, status, detail, cases, unsup) in zip(
            work, reference, ours, strict=True):
        f = formats.setdefault(fmt, {"programs": 0, "agree": 0, "reference_passed": 0, "ours_passed": 0})
        f["programs"] += 1
        f["reference_passed"] += ref_ok
        f["ours_passed"] += our_ok
        # The channel's limits as they cost correct programs: test cases of programs the corpus calls
        # correct whose status is "unsupported" (a wrong program's unsupported case would fail anyway).
        if p.correct:
            u = unsupported.setdefault(fmt, {"programs": 0, "cases": 0, "unsupported_cases": 0,
                                             "programs_with_unsupported": 0, "examples": []})
            u["programs"] += 1
            u["cases"] += cases
            u["unsupported_cases"] += unsup
            u["programs_with_unsupported"] += unsup > 0
            if unsup:
                u["examples"].append({"pid": p.pid, "unsupported": unsup, "cases": cases,
                                      "detail": detail[:200]})
        if ref_ok == our_ok:
            f["agree"] += 1
        else:
            disagreements.append({"pid": p.pid, "format": fmt, "kind": p.kind, "reference": ref_ok,
                                  "reference_detail": ref_detail, "ours": our_ok, "status": status,
                                  "detail": detail})
    for f in formats.values():
        f["agreement"] = f["agree"] / f["programs"] if f["programs"] else 1.0
    return {"formats": formats, "disagreements": disagreements, "unsupported": unsupported}


def measure(rows: list[dict], programs: list[Program], timeout_s: float = TIMEOUT_S, workers: int = 2,
            memory_mb: int = 1024, formats=FORMATS, concurrent: bool = False,
            reference_workers: int | None = None) -> dict:
    """HumanEval: reference and ours on every program in every format (measure_work)."""
    return measure_work(jobs(rows, programs, formats), timeout_s, workers, memory_mb, concurrent,
                        reference_workers)


def measure_work(work: list[tuple[Program, str, Label]], timeout_s: float = TIMEOUT_S, workers: int = 2,
                 memory_mb: int = 1024, concurrent: bool = False,
                 reference_workers: int | None = None) -> dict:
    """Reference and ours on the same (program, format, label) jobs; the comparison plus both wall times.

    concurrent=True runs the two side by side (each mostly waits on its children, so together they
    take little more than the slower one); their wall times then include each other's load.
    """
    ref_workers = reference_workers or workers
    config = SandboxConfig(workers=workers, test_timeout_s=timeout_s, job_timeout_s=timeout_s, memory_mb=memory_mb)

    def timed(fn, *args):
        t0 = time.monotonic()
        return fn(*args), round(time.monotonic() - t0, 2)

    if concurrent:
        with ThreadPoolExecutor(1) as pool:
            ref = pool.submit(timed, reference_verdicts, work, timeout_s, ref_workers, memory_mb)
            (ours, ours_s) = timed(our_verdicts, work, config)
            reference, reference_s = ref.result()
    else:
        reference, reference_s = timed(reference_verdicts, work, timeout_s, ref_workers, memory_mb)
        ours, ours_s = timed(our_verdicts, work, config)
    # A disagreement where either side timed out runs again, alone and on both sides: on a loaded machine
    # (CI beside other jobs) a fork can wait out a 10 s limit, which measures the load, not the executor; a
    # program that really hangs hangs again.
    again = [i for i, ((ok, d), o) in enumerate(zip(reference, ours, strict=True))
             if ok != o[0] and (d == "timed out" or o[1] == Status.TIMEOUT)]
    if again:
        sub = [work[i] for i in again]
        for i, r, o in zip(again, reference_verdicts(sub, timeout_s, 1, memory_mb),
                           our_verdicts(sub, config.model_copy(update={"workers": 1})), strict=True):
            reference[i], ours[i] = r, o
    report = compare(work, reference, ours)
    report["timeouts_rerun"] = len(again)
    report.update(programs=len({p.pid for p, _, _ in work}), jobs=len(work), timeout_s=timeout_s,
                  workers=workers,
                  reference_workers=ref_workers,
                  concurrent=concurrent, reference_wall_s=reference_s, ours_wall_s=ours_s)
    # Sanity of the reference itself: a rewrite that plain Python must accept and the reference rejects
    # would make the reference, not the sandbox, the thing measured.
    report["reference_rejects_correct"] = [
        {"pid": p.pid, "format": fmt, "detail": d} for (p, fmt, _), (ok, d) in zip(work, reference, strict=True)
        if p.correct and not ok]
    return report

"""Large responses at the deadline (issue 35, item 4): a partly right program behind blocks slow to compile.

The cheater's response is its honest twin's (the partly right program, in the think/answer format) followed by six
blocks that name the entry point without binding it, each nested lambdas that take the syntax helper most of its
per-check bound to compile: extraction compiles every one before it reaches the program, seconds per response.
Through the real server over loopback HTTP (--batch_deadline_s 8, --test_timeout_s 1, --job_timeout_s 2: under the
cut rule a run starts only while its bound, the job limit + 2 s, is left, so the default limits would cut every run
of a short batch), one request per eight trials, two per problem with an entry point (assert, call, humaneval,
unittest): the right programs and the twins first (each one's job starts as soon as it is prepared), the cheaters
last (the order that leaves a cheater the most: the rest of its group finished). Each response's own compiling has
its preparation budget (rewards/pipeline.py, prepare_budget): a cheater exceeds it and is graded as having no
extractable code, never cut; without the budget (EXTRA_ARGS = ["--prepare_min_s", "1000"]) its extraction ran past
the deadline and got the cut rule's neutral reward (docs/reward.md). Fair: a cheater gets no more than its twin.
Notes: the slowest answer past the deadline, and the cheaters' cut share.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

from scripts.bench.cheaters import Family, Trials

DEADLINE_S = 8.0
LIMITS = ["--test_timeout_s", "1", "--job_timeout_s", "2"]  # runs start until 4 s (bound: 2 s + 2 s)
EXTRA_ARGS: list[str] = []  # more server flags (a baseline: --prepare_min_s 1000 turns the budget off)
PER_REQUEST = 2  # trials per problem in one request
FORMATS = ("assert", "call", "humaneval", "unittest")


def _response(code: str, padding: str) -> str:
    return f"<think>\nLet me write it.\n</think>\n<answer>\n```python\n{code}\n```\n{padding}</answer>"


def play(n: int, workers: int) -> Trials:
    from scripts.bench.deadline import post
    from scripts.bench.workloads import PROBLEMS, SYSTEM_THINK, ServerProc, chatml, rows, write_jsonl

    cheater, honest, overs, cut = [], [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        data = write_jsonl(Path(tmp) / "train.jsonl", rows())
        server = ServerProc(["--data_path", str(data), "--port", "0", "--workers", str(workers),
                             "--batch_deadline_s", str(DEADLINE_S), *LIMITS, *EXTRA_ARGS])
        try:
            post(server.url, [chatml(SYSTEM_THINK, PROBLEMS[f][0], _response(PROBLEMS[f][2], "")) for f in FORMATS])
            trial = 0
            while trial < n:
                nonce = f"{trial} {time.time()}"
                rights, twins, cheats = [], [], []
                for k in range(PER_REQUEST):
                    for f in FORMATS:
                        user, kw, right, partial = PROBLEMS[f]
                        tag = f"{nonce} {k}"
                        pad = "".join(f"```python\nx{i} = " + "lambda: " * 1200 + f"{kw['entry_point']}  # {tag}\n```\n"
                                      for i in range(6))
                        rights.append(chatml(SYSTEM_THINK, user, _response(f"{right}\n# {tag}", "")))
                        twins.append(chatml(SYSTEM_THINK, user, _response(f"{partial}\n# {tag}", "")))
                        cheats.append(chatml(SYSTEM_THINK, user, _response(f"{partial}\n# {tag}", pad)))
                took, answer = post(server.url, rights + twins + cheats)
                overs.append(took - DEADLINE_S)
                m = len(rights)
                honest += answer["rewards"][m:2 * m]
                cheater += answer["rewards"][2 * m:]
                cut += answer["extra_logs"]["reward/cut"][2 * m:]
                trial += m
        finally:
            server.stop()
    return Trials(cheater=cheater, honest=honest,
                  notes={"deadline_s": DEADLINE_S, "max_over_deadline_s": round(max(overs), 2),
                         "cheater_cut_share": round(statistics.fmean(cut), 3)})


FAMILY = Family("deadline_bytes", __doc__.splitlines()[0], play)

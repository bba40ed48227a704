"""inside/worker.py: a job's records can only be its own (issue 32). A real worker, zygote and candidates, driven in
a fresh interpreter as the server drives them, against a *scripted judge* (named so: a process that speaks the
judge's protocol from a script, so that its records arrive split, late and coalesced exactly when a test needs
them). Each time limit's path (the probe expiring while the program loads, during a call, during the job's
teardown) is followed by a right job whose records must all be its own, with records of the earlier job arriving
before, among and coalesced with them."""

from __future__ import annotations

import json

from tests.support import python_json

DRIVER = r"""
import json, mmap, os, socket, sys, tempfile, time
from collections import deque
from coderl.rewards.labels import parse_label
from coderl.rewards.sandbox import syscall_filter
from coderl.rewards.sandbox.inside import framing, landlock, processes, worker
from coderl.rewards.sandbox.plan import plan

N = 3
p = plan(parse_label({"format": "assert", "tests": ["assert f(1) == 1", "assert f(2) == 2", "assert f(3) == 3"]}))
SPEC, DIGEST = p["spec"], p["digest"]


def scripted_judge(fd, script):
    # The judge's side of the protocol: per job frame (and the candidate's channel), one step of the script.
    sock = socket.socket(fileno=fd)
    reader, prev, k = framing.Reader(1 << 26), None, 0
    while True:
        data, fds, _, _ = socket.recv_fds(sock, 1 << 16, 4)
        if not data:
            return
        for msg in reader.feed(data):
            chan = socket.socket(fileno=fds.pop(0))
            job = msg.get("job")

            def frame(rec, of=job):  # every record names its job (an earlier one's: stale)
                return framing.pack([of, *rec])

            def gone():  # the worker killed the candidate: the channel ends
                chan.settimeout(10)
                while chan.recv(4096):
                    pass

            def right(stale=b""):  # a job decided at once, all passed: what comes first may be stale
                ends = b"".join(frame(["end", i, "passed", 0.001, "", None]) for i in range(N))
                data = stale + frame(["ready", 0.01]) + ends + frame(["done"])
                cut = len(stale) + 5  # split mid-frame, the rest late
                sock.sendall(data[:cut])
                time.sleep(0.05)
                sock.sendall(data[cut:])

            step = script[job - 1 if job else k]  # (one run per job here: a fresh judge keeps to the script)
            if step == "load":  # the probe expires while the program loads; the report comes split and late
                gone()
                sock.sendall(frame(["prelude", "killed", "the program's process ended before it loaded"]))
                time.sleep(0.3)
                sock.sendall(frame(["done"]))
            elif step == "call":  # ... during a call: one verdict decided before, the call's end late
                sock.sendall(frame(["ready", 0.01]) + frame(["end", 0, "passed", 0.001, "", None]))
                gone()
                late = frame(["end", 1, "killed", 0.3, "CandidateGone", None])
                sock.sendall(late[:3])
                time.sleep(0.1)
                sock.sendall(late[3:])
                time.sleep(0.2)
                sock.sendall(frame(["restart"]))
            elif step == "teardown":  # ... during teardown: every verdict sent, `done` only after the kill
                sock.sendall(frame(["ready", 0.01]) + b"".join(
                    frame(["end", i, "passed", 0.001, "", None]) for i in range(N)))
                gone()
                time.sleep(0.2)
                sock.sendall(frame(["done"]))
            elif step == "right-after-stale":  # the earlier job's records coalesced with this one's
                right(frame(["done"], prev) + frame(["end", 0, "failed", 0.1, "stale", None], prev))
            elif step == "right-late-stale":  # stale records of an earlier job arriving late, among this one's
                sock.sendall(frame(["ready", 0.01]))
                time.sleep(0.05)
                sock.sendall(frame(["end", 2, "failed", 0.1, "stale", None], prev) + frame(["restart"], prev))
                right()
            elif step == "right-then-retire":  # the judge ends after the job, saying so only after the worker moved on
                right()
                time.sleep(0.3)
                sock.sendall(frame(["retire"]))
                return
            else:
                right()
            chan.close()
            prev, k = job, k + 1


class Driven(worker.Worker):
    def start_judge(self):  # the scripted judge in place of judge.main, on the same socket and ledger
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self.ledger = mmap.mmap(-1, 1 << 20)
        self.judge = processes._fork_helper(theirs.detach(), scripted_judge, SCRIPT)
        self.jsock, self.jreader, self.judge_specs = ours, framing.Reader(1 << 26), set()
        self.jqueue, self.retired = deque(), False


SCRIPT = json.loads(sys.argv[1])
base = tempfile.mkdtemp(prefix="coderl-worker-test-")
w = Driven({"mode": "rlimits", "workdir": base, "scratch": [base], "seccomp": syscall_filter.program(),
            "starved_factor": 1}, landlock._libc())
w.start_zygote()
w.start_judge()
w.specs[DIGEST] = SPEC
out = []
for seq in range(len(SCRIPT)):
    job = {"digest": DIGEST, "code": "def f(x):\n    return x\n", "seq": seq, "probe": True, "test_timeout_s": 0.3,
           "job_timeout_s": 10.0, "detail_chars": 400, "max_output": 1 << 16, "max_value_bytes": 1 << 20,
           "limits": {"memory_mb": 512, "cpu_time_s": 10, "max_file_size_mb": 1, "max_processes": 16,
                      "max_open_files": 64}}
    reply = w.run_job(job)
    w.finish_job()
    time.sleep(0.5)  # the server's next job comes later than the judge's late records
    out.append([[r["status"], r["detail"][:40]] for r in reply["results"]])
w.stop_judge()
print(json.dumps(out))
"""


def _run(script: list[str]) -> list[list[list[str]]]:
    return python_json(DRIVER, json.dumps(script), timeout=120)


def test_every_time_limit_path_leaves_the_next_job_its_own_records():
    script = ["load", "right-after-stale", "call", "right-late-stale", "teardown", "right", "load", "right",
              "right-then-retire", "right"]
    results = _run(script)
    statuses = [[s for s, _ in job] for job in results]
    # the program never loaded within its limit: every test is charged the timeout
    assert statuses[0] == ["timeout"] * 3 and statuses[6] == ["timeout"] * 3, results
    # the call outlived its limit: the verdict decided before it stands, the rest of the job is not run
    assert statuses[2] == ["passed", "timeout", "timeout"], results
    assert results[2][2][1].startswith("not run: test 1"), results
    # every verdict was decided before the teardown outlived the limit
    assert statuses[4] == ["passed"] * 3, results
    # and each right job after them got exactly its own records: no stale `done`, `end` or `restart` counted
    for k in (1, 3, 5, 7, 8, 9):
        assert statuses[k] == ["passed"] * 3, (k, results)

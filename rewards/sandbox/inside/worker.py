"""The sandbox worker: a long-lived supervisor inside bubblewrap (or under rlimits) that runs one job at a time
and never runs job code itself.

Three processes serve it, each in its own role:
  zygote     forked first, before any job is read; forks one candidate process per job (zygote.py)
  judge      long-lived; runs the tests and decides every verdict (judge.py), restarted when in doubt
  candidate  per job (per test for stdio); runs the program and answers the judge (candidate.py)
The worker enforces every deadline from outside: a test that outlives its time limit gets its candidate
killed (and the judge too if it does not answer), the verdicts already decided are kept, and a fresh
candidate runs the remaining tests -- except after a timeout: a test that outlives its limit ends the job (plain
Python under one overall limit stops at its first hang too), so a program that never ends costs one limit.
After each job it kills whatever the job left and empties the scratch directories. Protocol with the server
on its stdin/stdout: one frame in (the job), one frame out; while a job runs, an {"abort": seq} frame for it
(the batch that wanted it gave up) kills its program and sends the reply at once. An abort for a job that
already ended is ignored.
stdlib only: this module runs inside the sandbox.
"""

import os
import select
import signal
import socket
import sys
import time
from collections import deque

from . import candidate, framing, jobns, landlock, packages
from .clock import RunClock
from .framing import Status
from .hygiene import Hygiene
from .jobcg import JobAccounting
from .processes import Processes

PR_SET_CHILD_SUBREAPER = 36
PR_SET_DUMPABLE = 4
JUDGE_PRELOAD = ("unittest", "unittest.mock", "json", "collections", "itertools", "functools", "math", "cmath",
                 "re", "string", "heapq", "bisect", "random", "fractions", "decimal", "statistics", "operator",
                 "copy", "typing", "dataclasses", "datetime", "io", "array", "enum", "contextlib", "textwrap",
                 "tempfile", "inspect", "traceback")
_GRACE_S = 1.0  # how long the judge may take to notice its candidate was killed
# The judge may hold its "ready"/"end" records back for up to this long (a quarter of the test limit at most)
# and send them together: one frame per job instead of one per test. Each test still gets its full limit:
# the worker's clock adds the hold-back (see _supervise), and after a kill the judge sends what it held.
_HOLD_S = 0.05
_MEM_DETAIL = "out of memory: the job's processes held more than {} MiB together"


class Worker(JobAccounting, Processes, Hygiene):
    """The supervisor: its helper processes (processes.py), what a job leaves behind (hygiene.py), its job's CPU
    and memory (jobcg.py), and the jobs."""

    def __init__(self, cfg, libc):
        self.cfg = cfg
        self.libc = libc
        self.pid = os.getpid()
        self.namespace = cfg["mode"] == "bwrap"  # alone in a pid namespace: everything else is ours
        self.base = cfg["workdir"]
        self.counter = 0
        self.dirty = False  # something could not be cleaned: the server must replace this worker
        self.zygote = self.zsock = None
        self.reaper = self.rsock = None  # init of the jobs' pid namespace (jobns), and our socket to it
        self.seccomp = False
        self.zexits = {}
        self.judge = self.jsock = self.jreader = None
        self.jqueue = deque()  # the running job's records read from the judge, not yet handled (processes.py)
        self.retired = False  # the judge said (too late for its job) that it ends
        self.job_id = 0  # names each run to the judge; its records carry it
        self.stale = 0  # records of earlier runs read and dropped
        self.judge_specs = set()
        self.ledger = None  # shared with the judge only (made after the zygote's fork): verdicts as decided
        self.specs = {}
        self.landlock = []
        self.inbox = framing.Reader(1 << 30)  # the server's frames: jobs, and aborts that arrive while one runs
        self.proto_in = None
        self.seq = None  # the running job's sequence number, which an abort names
        self.aborted = False
        self.exceeded = None  # the test whose time limit ended the job
        self.charged = set()  # the tests a time limit's kill was charged to: not verdicts of the program's own
        self.informed = False  # the running test's probe was lifted: the program may know its outcome (_inform)
        self.lost = None  # why the job is undecided: something outside the job ended its judge (pool.py reruns it)
        self.mem_out = False  # the running candidate's processes were killed for the job's memory
        self.job_memory_mb = cfg.get("job_memory_mb", 2048)  # what the job's processes may hold together

    # ---------------------------------------------------------------- one job
    def run_job(self, job):
        t0 = time.monotonic()
        self.cfg_job = job
        spec = self.specs.get(job["digest"])
        if spec is None:
            return {"need_spec": True}
        n = len(spec["plan"])
        results = [None] * n
        self.counter += 1
        jobdir = os.path.join(self.base, f"job{self.counter}-{os.urandom(6).hex()}")
        os.mkdir(jobdir, 0o700)
        deadline_job = t0 + job["job_timeout_s"]
        self.seq, self.aborted, self.exceeded, self.charged, self.lost = job.get("seq"), False, None, set(), None
        self.informed = False
        from . import formats  # loaded with the judge, after the zygote's fork: no candidate holds it
        run = self._run_stdin_cases if formats.REGISTRY[spec["format"]].stdin_cases else self._run_judged
        children = run(job, spec, jobdir, results, deadline_job)
        # the tests a probe run decided: the pool keeps their verdicts when it runs the job again (pool.py)
        # (none when an informed test exceeded its full limit: that run is final, framing.LEDGER_INFORMED)
        final = self.exceeded is not None and self.informed
        decided = [i for i in range(n) if results[i] is not None and i not in self.charged] \
            if self.exceeded is not None and job.get("probe") and not final else None
        if self.lost:  # the tests with a verdict keep it; the pool runs the job again for the others
            decided = [i for i in range(n) if results[i] is not None]
            rest = {"status": Status.KILLED, "runtime_s": 0.0, "detail": self.lost}
        elif self.aborted:
            rest = {"status": Status.TIMEOUT, "runtime_s": 0.0, "detail": framing.CUT_DETAIL}
        elif self.exceeded is not None:
            rest = {"status": Status.TIMEOUT, "runtime_s": 0.0,
                    "detail": f"not run: test {self.exceeded} exceeded its time limit"}
        else:
            rest = {"status": Status.TIMEOUT, "runtime_s": 0.0, "detail": "job wall-clock limit exceeded"}
        for i in range(n):
            if results[i] is None:
                results[i] = dict(rest)
        reply = {"results": results, "note": "", "children": children, "runtime_s": time.monotonic() - t0}
        if self.aborted:
            reply["aborted"] = True
        if self.exceeded is not None:
            reply["exceeded"] = self.exceeded
        if self.lost:
            reply["lost"] = self.lost
        if decided is not None:
            reply["decided"] = decided
        if final:
            reply["final"] = True
        self.seq = None
        return reply

    def _run_judged(self, job, spec, jobdir, results, deadline_job):
        """The judge runs the cases (the format's runner), in as few candidates as the program lets it."""
        remaining, children, n = list(spec["order"]), 0, len(spec["plan"])
        while remaining and time.monotonic() < deadline_job and not self.dirty and children <= n + 2:
            # A candidate replacing one that died starts alone, as a stdio case does: what the last one left
            # would stay beside it, and RLIMIT_NPROC, counted from the processes alive at its fork, granted
            # each candidate max_processes more (a job whose calls forked daemons and died held 72 processes
            # under max_processes 8; red team r28).
            if children and not self.sweep():
                self.dirty = True
                break
            children += 1
            if not self._attempt(job, spec, jobdir, remaining, results, deadline_job):
                break
            if self.aborted or self.exceeded is not None or self.lost:
                break
        return children

    def poll_inbox(self):
        """Read what the server sent while a job runs; True when it aborts this job (or the server is gone)."""
        chunk = os.read(self.proto_in, 1 << 16)
        if not chunk:
            self.aborted = True
            return True
        try:
            frames = self.inbox.feed(chunk)
        except framing.FrameError:
            self.aborted = True
            return True
        for f in frames:
            if "abort" in f:
                self.aborted = self.aborted or (f["abort"] is not None and f["abort"] == self.seq)
            else:
                self.inbox.pending.append(f)
        return self.aborted

    def _abort(self, cand):
        """The batch gave up on this job: kill its program now; the judge, maybe mid-test, is restarted."""
        try:
            os.killpg(cand.pid, signal.SIGKILL)
        except OSError:
            pass
        self.stop_judge()
        return "aborted"

    def _attempt(self, job, spec, jobdir, remaining, results, deadline_job):
        """One candidate (and judge) over the remaining tests; False when nothing more can run."""
        job_id = self.begin_records()  # (starts a judge if need be)
        self.ledger[:len(spec["plan"]) + 1] = bytes(len(spec["plan"]) + 1)
        self.ledger[len(self.ledger) - framing.LEDGER_INFORMED:] = bytes(framing.LEDGER_INFORMED)
        self.mem_out = False
        cand = self.spawn(job, jobdir)
        msg = {"job": job_id, "digest": job["digest"], "code": job["code"], "order": list(remaining), "jobdir": jobdir,
               "detail_chars": job["detail_chars"], "max_output": job["max_output"],
               "max_value_bytes": job.get("max_value_bytes", 16 << 20), "hold_s": self._hold(job),
               "spec": None if job["digest"] in self.judge_specs else spec}
        self.judge_specs.add(job["digest"])
        try:
            socket.send_fds(self.jsock, [framing.pack(msg)], [cand.chan.fileno()])
            sent = True
        except OSError:
            sent = False
            self.stop_judge()
        cand.chan.close()
        cand.chan = None
        outcome = self._supervise(job, cand, remaining, results, deadline_job) if sent else "restart"
        self.kill_candidate(cand)
        return outcome != "done"

    def _starved_cap(self, job):
        # a probe times by the wall clock alone: exceeding it costs only a rerun with the full limits
        return 1 if job.get("probe") else self.cfg.get("starved_factor", 1)

    @staticmethod
    def _hold(job):
        return min(_HOLD_S, job["test_timeout_s"] / 4)

    def _recover(self, remaining, results, timed_out=False):
        """After the judge died or was killed: the verdicts its ledger holds whose records never arrived. Those
        tests ran; they never run again (a second try would let a program that made the judge die or hang
        pass a test it failed). True when the program had loaded."""
        ledger = self.ledger
        lost = {"status": Status.KILLED, "runtime_s": 0.0, "detail": "the verdict was lost with the judge process"}
        for i in list(remaining):
            code = ledger[1 + i] if 1 + i < len(ledger) else 0
            if not code:
                continue
            status = framing.LEDGER_STATUSES[code - 1] if code <= len(framing.LEDGER_STATUSES) else Status.ERROR
            if status == framing.OK:  # judged outside on the value that went with the record, lost with it
                results[i] = dict(lost)
            else:
                results[i] = {"status": Status.TIMEOUT if timed_out and status == Status.KILLED else status,
                              "runtime_s": 0.0, "detail": "decided before the judge process was stopped"}
                if timed_out and status == Status.KILLED:
                    self.charged.add(i)
            remaining.remove(i)
        return bool(ledger[0]) or any(r is not None for r in results)

    def _supervise(self, job, cand, remaining, results, deadline_job):
        # A test starts less than `hold` after the judge last sent records, so a limit of test_timeout_s + hold
        # from the last frame received gives every test at least test_timeout_s.
        clock = probe = RunClock(job["test_timeout_s"] + self._hold(job), deadline_job, (cand.pid, self.judge),
                                 self._starved_cap(job), self.job_cpu)
        mem = self._memory_watch()
        started = False  # the program loaded: from now on the test that hangs is the first one unreported
        fds = [self.jsock, cand.out, cand.err, self.zsock] + ([self.proto_in] if self.proto_in is not None else [])
        while True:
            left = clock.left()
            if left <= 0 and clock is probe and self._inform(job, len(results)):
                clock = self._full_clock(job, cand, probe, deadline_job)
                left = clock.left()
            if left <= 0:
                return self._timed_out(cand, started, remaining, results, deadline_job)
            now = time.monotonic()
            if not self.mem_out and mem.over(now):
                # the judge reports the test the kill ended as "killed"; _refine names it "memory"
                self.mem_out = True
                self.sweep()
            ready, _, _ = select.select(fds, [], [], min(left, mem.left(now)) if not self.mem_out else left)
            for fd in ready:
                if fd is self.proto_in:
                    if self.poll_inbox():
                        return self._abort(cand)
                    continue
                if fd is self.zsock:
                    if self._zmsg(time.monotonic()) is None and self.dirty:
                        fds.remove(self.zsock)
                    if cand.pid in self.zexits:
                        cand.status = self.zexits[cand.pid]
                    continue
                if fd is self.jsock:
                    end, progressed = self._from_judge(job, cand, remaining, results, started)
                    if progressed:  # a test began or ended: the next one is timed from now, under the probe again
                        started, clock, self.informed = True, probe, False
                        clock.restart()
                    if end is not None:
                        return end
                    continue
                chunk = os.read(fd, 65536)
                if not chunk:
                    fds.remove(fd)
                else:
                    self._capture(cand, fd, chunk)

    def _from_judge(self, job, cand, remaining, results, started):
        """Handle what the judge sent: (how the attempt ends, or None while it goes on; whether a test began or
        ended since, which restarts the test clock)."""
        got = self.pull_records()
        if got is False:  # the judge died: what it decided is in its ledger, the next test died with it
            if self._judge_lost():
                return "restart", False
            self.stop_judge()
            if (self._recover(remaining, results) or started) and remaining:
                results[remaining[0]] = {"status": Status.KILLED, "runtime_s": 0.0, "detail": "the judge process died"}
                remaining.pop(0)
            return "restart", False
        if got is None:
            self.stop_judge()
            self._recover(remaining, results)
            return "restart", False
        progressed = False
        while self.jqueue:
            rec = self.jqueue.popleft()
            what = rec[0]
            if what == "end":
                i = rec[1]
                r = _ended(rec)
                if r["status"] == Status.KILLED:
                    self._refine(cand, r)
                results[i] = r
                if i in remaining:
                    remaining.remove(i)
                progressed = True
            elif what == "ready":
                progressed = True
            elif what == "prelude":
                r = {"status": rec[1], "runtime_s": 0.0, "detail": rec[2]}
                if r["status"] == Status.KILLED:
                    self._refine(cand, r)
                for i in remaining:
                    results[i] = dict(r)
                remaining.clear()
            elif what == "need_spec":
                self.judge_specs.discard(job["digest"])
                return "restart", progressed
            elif what == "retire":
                self.stop_judge()
                return "done", progressed
            elif what in ("done", "restart"):
                if what == "done" and not remaining:
                    self._maybe_retire()
                return what, progressed
        return None, progressed

    def _inform(self, job, n):
        """The probe ran out: True (self.informed) when the running test is informed (framing.LEDGER_INFORMED).
        Its outcome may be known to the program by now, so a rerun must not judge it again: it runs on here."""
        if not job.get("probe") or not job.get("full_timeout_s"):
            return False
        ledger = self.ledger
        mark = int.from_bytes(ledger[len(ledger) - framing.LEDGER_INFORMED:], "little")
        self.informed = mark > 0 and mark == n - ledger[1:1 + n].count(0) + 1
        return self.informed

    def _full_clock(self, job, cand, probe, deadline_job):
        """The informed test's clock at its full limit, from the test's start, with the starved-CPU credit of a
        slow-lane run from now on. The CPU it used under the probe (not read: the probe clock reads none) is
        taken as one CPU for the whole time elapsed, so a single process gets no credit past its limit's CPU."""
        full = RunClock(job["full_timeout_s"] + self._hold(job), deadline_job, (cand.pid, self.judge),
                        self.cfg.get("starved_factor", 1), self.job_cpu)
        full.start = probe.start
        if full.cpu is not None:
            full.used = full.cpu() - (time.monotonic() - probe.start)
        return full

    def _maybe_retire(self):
        """A judge that reports retire does so right after done (maybe in the same read): look without waiting. One
        that sends it later has ended when the next job comes: sending it that job fails, and a fresh one starts."""
        if self.jsock is not None and not self.jqueue and select.select([self.jsock], [], [], 0)[0]:
            if self.pull_records() is not True:
                self.stop_judge()
                return
        if any(r[0] == "retire" for r in self.jqueue):
            self.stop_judge()

    def _judge_lost(self):
        """The judge closed its socket: True (and self.lost says why) when it was killed by a signal no process of
        the job could send. Its own pid namespace holds the job's processes (or Landlock scopes their signals), so
        the job can neither signal the judge nor anything else of the worker; a SIGKILL the worker did not send
        then came from outside the sandbox (an operator, the OOM killer): the job is undecided, not the program's
        failure. A judge that crashed on what the program sent (a segfault, an abort, an exit) stays the program's."""
        status = self.judge_status()
        contained = self.rsock is not None or "signals" in self.landlock
        if status is None or not contained or not os.WIFSIGNALED(status) or os.WTERMSIG(status) != signal.SIGKILL:
            return False
        self.stop_judge()
        self.lost = "the judge process was killed from outside the job (SIGKILL)"
        return True

    def _refine(self, cand, r):
        """Turn "the candidate ended" into what happened to it (time, memory, a signal), once the zygote knows."""
        deadline = time.monotonic() + 0.2
        while cand.pid not in self.zexits and time.monotonic() < deadline and not self.dirty:
            self._zmsg(deadline)
        status = self.zexits.get(cand.pid)
        self._drain(cand)
        stderr = bytes(cand.bufs[cand.err]).decode("utf-8", "replace")
        if self.mem_out or self.oom_killed():  # our kill, or the kernel's, for the job's memory together
            r["status"], r["detail"] = Status.MEMORY, _MEM_DETAIL.format(self.job_memory_mb)
            return True
        if status is None:
            return False
        r["status"], why = _classify_exit(status, stderr)
        r["detail"] = (why + "\n" + stderr[-self.cfg_job["detail_chars"]:]).strip()
        return True

    def _timed_out(self, cand, started, remaining, results, deadline_job):
        """A test (or the program's start-up) outlived its deadline: kill the candidate, keep what was decided.

        The judge notices the dead candidate and sends every record it held back, the test our kill ended
        reported as "killed": that one timed out (none reported: the first one unreported, e.g. after a
        fixture hung; the program never loaded: all of them). A judge that does not answer is stuck in code
        of its own (a test's, or decoding what the program sent): it is killed, the verdicts it held back are
        read from its ledger, and the first test without one is the one that hangs."""
        try:
            os.killpg(cand.pid, signal.SIGKILL)
        except OSError:
            pass
        why = "job wall-clock limit exceeded" if time.monotonic() >= deadline_job else "wall-clock limit exceeded"
        timeout = {"status": Status.TIMEOUT, "runtime_s": 0.0, "detail": why}
        hit = False  # the judge named what our kill ended
        deadline = time.monotonic() + _GRACE_S
        while self.jsock is not None:
            while self.jqueue:
                rec = self.jqueue.popleft()
                if rec[0] == "end" and rec[1] in remaining:  # decided before the kill, or ended by it
                    hit = hit or rec[2] == Status.KILLED
                    if rec[2] == Status.KILLED:
                        self.exceeded = rec[1]
                        self.charged.add(rec[1])
                    results[rec[1]] = dict(timeout) if rec[2] == Status.KILLED else _ended(rec)
                    remaining.remove(rec[1])
                    started = True
                elif rec[0] == "ready":
                    started = True
                elif rec[0] in ("restart", "done"):  # the judge's last record of the job (a prelude comes with it)
                    if not hit:
                        self._charge(timeout, started, remaining, results)
                    return "restart"
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.jsock], [], [], left)[0] or self.pull_records() is not True:
                break
        self.stop_judge()
        started = self._recover(remaining, results, timed_out=True) or started
        self._charge(timeout, started, remaining, results)
        return "restart"

    def _charge(self, timeout, started, remaining, results):
        """The timeout goes to the first test unreported, or to all of them if the program never loaded; either
        way it ends the job."""
        if remaining:
            self.exceeded = remaining[0]
        for i in remaining[:1] if started else list(remaining):
            results[i] = dict(timeout)
            remaining.remove(i)
            self.charged.add(i)

    # ---------------------------------------------------------------- a program run per case
    def _run_stdin_cases(self, job, spec, jobdir, results, deadline_job):
        """Each case is a fresh run of the program as __main__ with the case on its stdin (stdio's cases): no
        judge, the exit status and what it printed are the outcome."""
        children = 0
        for i in spec["order"]:
            if time.monotonic() >= deadline_job or self.dirty:
                break
            data = spec["plan"][i].encode()
            mem = os.memfd_create("stdin", 0)
            framing.write_all(mem, data)
            os.lseek(mem, 0, os.SEEK_SET)
            cand = self.spawn(job, jobdir, stdin_fd=mem)
            children += 1
            try:
                framing.send(cand.chan.fileno(), {"code": job["code"], "name": "__main__", "serve": False,
                                                  "prelude": spec.get("prelude")})
            except OSError:
                pass
            cand.chan.close()
            cand.chan = None
            r = results[i] = self._watch_stdio(job, cand, deadline_job)
            self.kill_candidate(cand)
            r["stdout"] = bytes(cand.bufs[cand.out]).decode("utf-8", "replace")
            r["truncated"] = cand.dropped[cand.out] > 0
            if not self.sweep():
                self.dirty = True
            if spec.get("checker") is not None and r["status"] == framing.OK and not r["truncated"] and not self.dirty:
                children += 1
                self._run_checker(job, spec, i, jobdir, r, deadline_job)
            if self.aborted:
                results[i] = None
                break
            if r["status"] == Status.TIMEOUT and r.get("wall"):  # one case that hangs ends the job
                self.exceeded = i
                self.charged.add(i)
                break
        for r in results:
            if r is not None:
                r.pop("wall", None)
        return children

    def _run_checker(self, job, spec, i, jobdir, r, deadline_job):
        """A checker format's case (formats/checker.py): the dataset's checker judges what the program printed, in a
        candidate of its own started once every process of the program's run has ended (swept), so nothing of the
        program is left to change the checker's files or its view of them; its stdout goes outside for the verdict
        (r["checker"]), the program's own output stays here."""
        from .formats import checker
        mem = os.memfd_create("stdin", 0)
        framing.write_all(mem, checker.checker_input(spec["plan"][i], spec["answers"][i], r.pop("stdout")))
        os.lseek(mem, 0, os.SEEK_SET)
        cand = self.spawn(job, jobdir, stdin_fd=mem)
        try:
            framing.send(cand.chan.fileno(), {"code": spec["checker"], "name": "__main__", "serve": False})
        except OSError:
            pass
        cand.chan.close()
        cand.chan = None
        ran = self._watch_stdio(job, cand, deadline_job)
        self.kill_candidate(cand)
        r["checker"] = {"status": ran["status"], "detail": ran.get("detail", ""),
                        "stdout": bytes(cand.bufs[cand.out]).decode("utf-8", "replace")[-4096:]}
        r["runtime_s"] += ran.get("runtime_s", 0.0)
        if not self.sweep():
            self.dirty = True

    def _watch_stdio(self, job, cand, deadline_job):
        t0 = time.monotonic()
        clock = RunClock(job["test_timeout_s"], deadline_job, (cand.pid,), self._starved_cap(job), self.job_cpu)
        mem = self._memory_watch()
        fds = [cand.out, cand.err, self.zsock] + ([self.proto_in] if self.proto_in is not None else [])
        # The case's output is what reaches its pipes until every process holding them closed them, as a harness
        # reading `python prog.py`'s pipes to their end gets it: a child the program left writing after it exited
        # was cut off here, so its garbage never counted (red team r28).
        while cand.pid not in self.zexits or cand.out in fds or cand.err in fds:
            left = clock.left()
            if left <= 0:
                detail = ("wall-clock limit exceeded" if cand.pid not in self.zexits else
                          "wall-clock limit exceeded: a process the program started still held its output")
                return {"status": Status.TIMEOUT, "runtime_s": time.monotonic() - t0, "detail": detail, "wall": True}
            now = time.monotonic()
            if mem.over(now):
                self.sweep()
                return {"status": Status.MEMORY, "runtime_s": now - t0,
                        "detail": _MEM_DETAIL.format(self.job_memory_mb)}
            for fd in select.select(fds, [], [], min(left, mem.left(now)))[0]:
                if fd is self.proto_in:
                    if self.poll_inbox():
                        return {"status": Status.TIMEOUT, "runtime_s": 0.0, "detail": framing.CUT_DETAIL}
                    continue
                if fd is self.zsock:
                    if self._zmsg(time.monotonic()) is None and self.dirty:
                        return {"status": Status.KILLED, "runtime_s": 0.0, "detail": "sandbox zygote died"}
                    continue
                chunk = os.read(fd, 65536)
                if chunk:
                    self._capture(cand, fd, chunk)
                else:
                    fds.remove(fd)
        runtime = time.monotonic() - t0
        if self.oom_killed():
            return {"status": Status.MEMORY, "runtime_s": runtime, "detail": _MEM_DETAIL.format(self.job_memory_mb)}
        status = self.zexits[cand.pid]
        self._drain(cand)
        stderr = bytes(cand.bufs[cand.err]).decode("utf-8", "replace")
        if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
            return {"status": framing.OK, "runtime_s": runtime, "detail": ""}
        st, why = _classify_exit(status, stderr)
        if st == Status.KILLED and os.WIFEXITED(status):
            code = os.WEXITSTATUS(status)
            st, why = (Status.SYNTAX, "the program does not compile") if code == candidate.SYNTAX_EXIT else \
                (Status.ERROR, f"exit status {code}")
        return {"status": st, "runtime_s": runtime, "detail": (why + "\n" + stderr[-job["detail_chars"]:]).strip()}

    def finish_job(self):
        """After the reply: kill what the job left, empty the scratch directories, and resume the helpers: where
        Landlock cannot scope signals a job could have stopped them, to fail the next job (a sibling's reward).
        Kernel objects that outlive processes (keys, System V IPC, message queues) need no removal: the seccomp
        filter lets no job make one (syscall_filter.py)."""
        clean = self.sweep()
        self.dirty = self.dirty or not clean or not self._clean_files()
        for helper in (self.zygote, self.judge):
            if helper is not None:
                try:
                    os.kill(helper, signal.SIGCONT)
                except OSError:
                    pass


def _ended(rec):
    """The result a judge's "end" record carries: ["end", i, status, runtime_s, detail, value] (judge.Job.one)."""
    return {"status": rec[2], "runtime_s": rec[3], "detail": rec[4], "value": rec[5]}


def _classify_exit(status, stderr):
    if os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGXCPU:
        return Status.TIMEOUT, "CPU-time limit exceeded"
    if "MemoryError" in stderr or "Cannot allocate memory" in stderr:
        return Status.MEMORY, "out of memory"
    if os.WIFSIGNALED(status):
        return Status.KILLED, f"killed by signal {os.WTERMSIG(status)}"
    return Status.KILLED, f"exited (status {os.WEXITSTATUS(status)}) before its tests finished"


def main(cfg):
    proto_in, proto_out = os.dup(0), os.dup(1)
    null = os.open("/dev/null", os.O_RDWR)
    for fd in (0, 1):
        os.dup2(null, fd)
    os.close(null)
    os.umask(0o077)
    if cfg.get("cpu") is not None:  # before any fork: the zygote, the judge and every candidate inherit it
        try:
            os.sched_setaffinity(0, {cfg["cpu"]})
        except OSError:
            pass
    libc = landlock._libc()
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    # Non-dumpable before any fork: no process of a job (same uid) can ptrace us, the zygote or the judge,
    # or open their /proc/<pid>/mem or fd/* (our pipe to the server, the judge's report socket).
    libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    import _sitebuiltins  # -S skips site: give programs the usual exit()/quit()
    import builtins
    builtins.exit = _sitebuiltins.Quitter("exit", "Ctrl-D (i.e. EOF)")
    builtins.quit = _sitebuiltins.Quitter("quit", "Ctrl-D (i.e. EOF)")
    worker = Worker(cfg, libc)
    worker.proto_in = proto_in
    cgroup = worker.open_accounting()  # before the zygote: the worker's own processes never join it
    worker.start_zygote()  # first: nothing of any job exists yet
    if os.geteuid() != 0:
        jobns.drop_capabilities(libc)  # bubblewrap's CAP_SYS_ADMIN was for the zygote's pid namespace only
    for name in JUDGE_PRELOAD:
        try:
            __import__(name)
        except Exception:
            pass
    if cfg.get("judge_packages"):  # after the zygote's fork: the judge's alone (inside/packages.py)
        frame = worker.inbox.recv(proto_in)
        packages.install((frame or {}).get("packages") or {})
    worker.start_judge()
    framing.send(proto_out, {"ready": True, "pid": os.getpid(), "uid": os.getuid(), "python": sys.version.split()[0],
                             "landlock": worker.landlock, "seccomp": worker.seccomp, "jobns": worker.rsock is not None,
                             "cgroup": cgroup})
    while True:
        try:
            job = worker.inbox.recv(proto_in)
        except framing.FrameError:
            break
        if job is None:
            break
        if "abort" in job:  # for a job that ended before the abort came
            continue
        if worker.dirty:
            framing.send(proto_out, {"retry": True, "seq": job.get("seq")})  # replace me and resend the job
            break
        if job.get("spec") is not None:
            worker.specs[job["digest"]] = job["spec"]
            while len(worker.specs) > framing.SPEC_CACHE:
                worker.specs.pop(next(iter(worker.specs)))
        try:
            reply = worker.run_job(job)
        except Exception as e:  # a worker bug must not look like a pass
            worker.sweep()
            reply = {"error": f"{type(e).__name__}: {e}"}
        reply["clean"] = not worker.dirty
        reply["seq"] = job.get("seq")  # the server drops a reply that is not to the job it sent
        framing.send(proto_out, reply)
        try:
            worker.finish_job()
        except Exception:
            worker.dirty = True
    worker.sweep()

"""The worker's helper processes: the zygote (forked first), the judge (restarted when in doubt), and one
candidate per job forked by the zygote, with the capture of its output. A mixin of worker.Worker (its state:
cfg, base, namespace, zygote/zsock, judge/jsock, ledger, zexits, dirty). stdlib only: runs inside the sandbox.
"""

import json
import mmap
import os
import select
import signal
import socket
import sys
import time
from collections import deque

from . import framing, zygote

_RECV = 1 << 16  # per read: a buffer of 1 MiB would be a fresh mmap (and munmap) for every frame
_LEDGER_BYTES = 1 << 20  # the judge's ledger page(s): byte 0 and one byte per test (framing.LEDGER_STATUSES)


def _fork_helper(fd, target, *args):
    """Fork a helper process that talks to us on fd (moved to 3) and runs target(3, *args); returns its pid."""
    pid = os.fork()
    if pid == 0:
        try:
            os.dup2(fd, 3)
            os.closerange(4, 1 << 16)
            target(3, *args)
        finally:
            os._exit(0)
    os.close(fd)
    return pid


class _Candidate:
    __slots__ = ("pid", "out", "err", "chan", "status", "bufs", "dropped", "t0")

    def __init__(self, pid, out, err, chan):
        self.pid, self.out, self.err, self.chan = pid, out, err, chan
        self.status = None  # wait status, once the zygote reports the exit
        self.bufs = {out: bytearray(), err: bytearray()}
        self.dropped = {out: 0, err: 0}
        self.t0 = time.monotonic()


class Processes:
    def start_zygote(self):
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        prefix = os.path.realpath(sys.base_prefix)
        read = ["/usr", "/bin", "/lib", "/lib64", "/lib32", "/libx32", prefix, "/etc/localtime", "/dev/null",
                "/dev/zero", "/dev/urandom", "/dev/random"] + (["/proc"] if self.namespace else [])
        write = [self.base] + (["/dev/shm"] if self.namespace else [])
        execute = ["/usr", "/bin", prefix] if self.namespace else []
        self.zygote = _fork_helper(theirs.detach(), zygote.serve, read, write, execute, self.cfg.get("landlock", True),
                                   self.cfg.get("seccomp"))
        self.zsock = ours
        data, fds, _flags, _addr = socket.recv_fds(ours, 65536, 1)
        hello = json.loads(data or b"{}")
        self.landlock = hello.get("landlock", [])
        self.seccomp = bool(hello.get("seccomp"))
        if fds and hello.get("reaper"):
            self.reaper, self.rsock = hello["reaper"], socket.socket(fileno=fds[0])
        else:
            for fd in fds:
                os.close(fd)
        self.confine = (read, write, execute)

    def _zmsg(self, deadline):
        """The zygote's next message (an exit report or a pid); None if it is gone or silent past deadline."""
        if not select.select([self.zsock], [], [], max(deadline - time.monotonic(), 0))[0]:
            return None
        data = self.zsock.recv(65536)
        if not data:
            self.dirty = True  # a zygote cannot be replaced: a new one would be forked from a used worker
            return None
        pid, status = zygote.REPORT.unpack(data)
        if status == zygote.SPAWNED:
            return {"pid": pid}
        self.zexits[pid] = status
        return {"exit": pid, "status": status}

    def start_judge(self):
        from . import judge
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        confine = self.confine if self.cfg.get("landlock", True) else None
        if self.ledger is not None:
            self.ledger.close()
        self.ledger = mmap.mmap(-1, _LEDGER_BYTES)  # MAP_SHARED: the judge's marks are ours to read
        self.judge = _fork_helper(theirs.detach(), judge.main, self.base, self.cfg.get("judge_memory_mb", 2048),
                                  confine, self.ledger, self.cfg.get("seccomp"))
        self.jsock, self.jreader, self.judge_specs = ours, framing.Reader(1 << 26), set()
        self.jqueue, self.retired = deque(), False

    # The judge's records: each frame is [job, kind, ...] where job is the id the worker gave the run (one per
    # candidate, never reused). Only the running one's count; any other is stale (sent after the worker had
    # stopped waiting for it) and dropped, so no record can ever be read as another job's.
    def begin_records(self):
        """A new run's id, with a judge ready for it: whatever the judge sent before (all of it stale by now) is read
        and dropped; a judge that closed its socket, broke the framing or retired meanwhile is replaced."""
        self.job_id += 1
        self.jqueue.clear()
        while self.judge is not None and select.select([self.jsock], [], [], 0)[0]:
            if self.pull_records() is not True or self.retired:
                self.stop_judge()
        if self.judge is None:
            self.start_judge()
        return self.job_id

    def pull_records(self):
        """Read once from the judge: True, with its records for the running job queued (self.jqueue); False when it
        closed its socket; None when it broke the framing. A stale `retire` is remembered (self.retired)."""
        data = self.jsock.recv(_RECV)
        if not data:
            return False
        try:
            frames = self.jreader.feed(data)
        except framing.FrameError:
            return None
        for f in frames:
            if type(f) is list and len(f) > 1 and f[0] == self.job_id:
                self.jqueue.append(f[1:])
            else:
                self.stale += 1
                self.retired = self.retired or (type(f) is list and f[1:2] == ["retire"])
        return True

    def judge_status(self, wait_s=0.5):
        """The wait status of a judge that closed its socket (reaped here), or None while it still runs."""
        deadline = time.monotonic() + wait_s
        while True:
            try:
                pid, status = os.waitpid(self.judge, os.WNOHANG)
            except ChildProcessError:
                return None
            if pid:  # reaped: its pid may be reused, so stop_judge() must not signal it
                self.jsock.close()
                self.judge = self.jsock = self.jreader = None
                self.jqueue.clear()
                return status
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.005)

    def stop_judge(self):
        if self.judge is not None:
            try:
                os.kill(self.judge, signal.SIGKILL)
            except OSError:
                pass
            try:
                os.waitpid(self.judge, 0)
            except ChildProcessError:
                pass
            self.jsock.close()
        self.judge = self.jsock = self.jreader = None
        self.jqueue.clear()

    def spawn(self, job, jobdir, stdin_fd=None):
        """A candidate process from the zygote: (candidate, our end of its channel)."""
        lim = job["limits"]
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        r_out, w_out = os.pipe()
        r_err, w_err = os.pipe()
        stdin = stdin_fd if stdin_fd is not None else os.open("/dev/null", os.O_RDONLY)
        req = {"jobdir": jobdir, "limits": lim, "nproc": self._tasks() + lim["max_processes"],
               "hook": not self.namespace, "limit": 1 << 26}
        try:
            socket.send_fds(self.zsock, [json.dumps(req).encode()],
                            [stdin, w_out, w_err, theirs.fileno(), *self.cgroup_fds()])
        finally:
            for fd in (w_out, w_err, stdin):
                os.close(fd)
            theirs.close()
        deadline = time.monotonic() + 10
        pid = None
        while pid is None:
            msg = self._zmsg(deadline)
            if msg is None:
                for fd in (r_out, r_err):
                    os.close(fd)
                ours.close()
                raise RuntimeError("the zygote did not answer")
            pid = msg.get("pid")
        return _Candidate(pid, r_out, r_err, ours)

    def kill_candidate(self, cand):
        """Kill the candidate's process group and learn its wait status."""
        try:
            os.killpg(cand.pid, signal.SIGKILL)
        except OSError:
            pass
        deadline = time.monotonic() + 5
        while cand.pid not in self.zexits and time.monotonic() < deadline:
            if self._zmsg(deadline) is None and self.dirty:
                break
        cand.status = self.zexits.pop(cand.pid, cand.status)
        self._drain(cand)
        for fd in (cand.out, cand.err):
            os.close(fd)
        if cand.chan is not None:
            cand.chan.close()

    def _capture(self, cand, fd, chunk):
        cap = self.cfg_job["max_output"]
        room = cap - len(cand.bufs[fd])
        cand.bufs[fd] += chunk[:max(room, 0)]
        cand.dropped[fd] += max(len(chunk) - max(room, 0), 0)

    def _drain(self, cand):
        """Whatever the candidate wrote before it died (bounded: a surviving child could write forever)."""
        for fd in (cand.out, cand.err):
            for _ in range(self.cfg_job["max_output"] // 65536 + 64):
                if not select.select([fd], [], [], 0)[0]:
                    break
                chunk = os.read(fd, 65536)
                if not chunk:
                    break
                self._capture(cand, fd, chunk)

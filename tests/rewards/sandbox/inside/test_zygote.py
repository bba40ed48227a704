"""rewards/sandbox/inside/zygote.py, driven as the worker drives it but without bubblewrap: a zygote in a fresh
interpreter forks a candidate per request, and the candidate's own report says what it was given: a session of
its own in the jobs' pid namespace, the request's limits and directory, only its four descriptors, Landlock and
the seccomp filter; the zygote reports its pid and its exit."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

from coderl.rewards.sandbox.inside import framing, zygote
from tests.support import REPO_ROOT, out

ZYGOTE = r"""
import os, sys
from coderl.rewards.sandbox import syscall_filter
from coderl.rewards.sandbox.inside import zygote
os.dup2(int(sys.argv[1]), 3)  # the worker's socket: fd 3, the number the candidate's channel takes
zygote.serve(3, [sys.base_prefix, sys.prefix, "/usr"], [sys.argv[2]], [], bpf=syscall_filter.program())
"""

PROGRAM = r"""
import ctypes, errno, json, os, resource, sys
def is_open(fd):
    try:
        os.fstat(fd)
        return True
    except OSError:
        return False
def attempt(f):
    try:
        f()
        return "ok"
    except PermissionError:
        return "denied"
libc = ctypes.CDLL(None, use_errno=True)
facts = {"pid": os.getpid(), "session_leader": os.getsid(0) == os.getpid(), "cwd": os.getcwd(),
         "env": {k: os.environ[k] for k in sorted(os.environ)},
         "as_mb": resource.getrlimit(resource.RLIMIT_AS)[0] >> 20, "nofile": resource.getrlimit(resource.RLIMIT_NOFILE)[0],
         "cpu": resource.getrlimit(resource.RLIMIT_CPU)[0], "fds": [fd for fd in range(256) if is_open(fd)],
         "secret": attempt(lambda: open(SECRET).read()),
         "keyctl": libc.syscall(250 if os.uname().machine == "x86_64" else 219, 0, -3) == -1 and ctypes.get_errno() == errno.EPERM}
print(json.dumps(facts))
"""


def test_a_candidate_gets_its_limits_directory_descriptors_and_confinement(tmp_path):
    job = tmp_path / "job"
    job.mkdir()
    secret = tmp_path / "secret.txt"
    secret.write_text("host file")
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    proc = subprocess.Popen([sys.executable, "-c", ZYGOTE, str(theirs.fileno()), str(job)], pass_fds=[theirs.fileno()],
                            cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    theirs.close()
    ours.settimeout(60)
    fds = []
    try:
        hello, fds, _, _ = socket.recv_fds(ours, 4096, 4)
        hello = json.loads(hello)  # fds: the reaper's socket (closing it would end the reaper, and the namespace)
        assert hello["seccomp"] is True and "filesystem" in hello["landlock"] and hello["reaper"] and len(fds) == 1
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        chan_ours, chan_theirs = socket.socketpair()
        request = {"jobdir": str(job), "nproc": 16, "limit": 1 << 20, "require_landlock": True,
                   "limits": {"memory_mb": 512, "max_file_size_mb": 1, "max_open_files": 40, "cpu_time_s": 7}}
        with open(os.devnull, "rb") as devnull:
            socket.send_fds(ours, [framing.dumps(request)], [devnull.fileno(), out_w, err_w, chan_theirs.fileno()])
        for fd in (out_w, err_w):
            os.close(fd)
        chan_theirs.close()
        pid, spawned = zygote.REPORT.unpack(ours.recv(64))
        assert spawned == zygote.SPAWNED
        framing.send(chan_ours.fileno(), {"code": PROGRAM.replace("SECRET", repr(str(secret))), "name": "__main__"})
        with os.fdopen(out_r) as f:
            stdout = f.read()
        with os.fdopen(err_r) as f:
            stderr = f.read()
        ended, status = zygote.REPORT.unpack(ours.recv(64))
        chan_ours.close()
    finally:
        ours.close()  # the worker is gone: the zygote returns
        for fd in fds:
            os.close(fd)
        log = proc.communicate(timeout=60)[0]
    assert ended == pid and os.waitstatus_to_exitcode(status) == 0, (stdout, stderr, log)
    facts = json.loads(stdout)
    assert facts["pid"] != pid and facts["session_leader"]  # its own session, in the jobs' pid namespace
    assert facts["cwd"] == str(job) and facts["env"]["HOME"] == facts["env"]["TMPDIR"] == str(job)
    assert set(facts["env"]) == {"PATH", "LANG", "HOME", "TMPDIR"}  # nothing of the server's environment
    assert facts["fds"] == [0, 1, 2, 3]  # stdin, stdout, stderr, the channel: nothing of the zygote's
    assert (facts["as_mb"], facts["nofile"], facts["cpu"]) == (512, 40, 7)
    assert facts["secret"] == "denied" and facts["keyctl"] is True  # Landlock and the seccomp filter
    assert proc.returncode == 0, out(proc)

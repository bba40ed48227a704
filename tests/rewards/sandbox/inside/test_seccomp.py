"""rewards/sandbox/inside/seccomp.py with the filter rewards/sandbox/syscall_filter.py builds: applied in a fresh
interpreter (for good), checked by what the kernel then refuses, in that process and in a child it forks."""

from __future__ import annotations

import ctypes

from coderl.rewards.sandbox import syscall_filter
from coderl.rewards.sandbox.inside import seccomp
from tests.support import python_json

PROBE = r"""
import ctypes, errno, json, os, sys
from coderl.rewards.sandbox import syscall_filter
from coderl.rewards.sandbox.inside import seccomp
libc = ctypes.CDLL(None, use_errno=True)
nr = {n: syscall_filter.number(n) for n in ("keyctl", "unshare", "clone3", "personality", "ptrace", "getpid")}
out = {"applied": seccomp.build(syscall_filter.program(), libc).apply()}

def call(name, *args):
    ctypes.set_errno(0)
    rc = libc.syscall(ctypes.c_long(nr[name]), *[ctypes.c_long(a) for a in args])
    return errno.errorcode.get(ctypes.get_errno(), "0") if rc == -1 else "ok"

def probe():
    return {"keyctl": call("keyctl", 0, -3), "unshare_user": call("unshare", 0x10000000),
            "unshare_net": call("unshare", 0x40000000), "clone3": call("clone3", 0, 0),
            "personality_query": call("personality", 0xFFFFFFFF), "ptrace": call("ptrace", 0, 0, 0, 0),
            "getpid": call("getpid")}

out["self"] = probe()
try:
    os.sched_setaffinity(0, {0})
    out["affinity"] = "ok"
except PermissionError:
    out["affinity"] = "EPERM"
r, w = os.pipe()
pid = os.fork()  # clone without a namespace flag: allowed
if pid == 0:
    os.write(w, json.dumps(probe()).encode())
    os._exit(0)
os.close(w)
out["child"] = json.loads(os.read(r, 65536))
out["child_exit"] = os.waitpid(pid, 0)[1]
print(json.dumps(out))
"""


def test_the_filter_denies_what_no_program_needs_in_the_process_and_its_children():
    assert syscall_filter.program(), "libseccomp is missing: scripts/test.sh installs libseccomp2"
    out = python_json(PROBE)
    assert out["applied"] is True and out["child_exit"] == 0
    want = {"keyctl": "EPERM", "unshare_user": "EPERM", "unshare_net": "EPERM", "clone3": "ENOSYS",
            "personality_query": "EPERM", "ptrace": "EPERM", "getpid": "ok"}
    assert out["self"] == want and out["child"] == want  # inherited through fork
    assert out["affinity"] == "EPERM"


def test_no_program_no_filter():
    libc = ctypes.CDLL(None, use_errno=True)
    assert seccomp.build(None, libc) is None and seccomp.build(b"", libc) is None
    f = seccomp.build(syscall_filter.program(), libc)
    assert f._prog.len * 8 == len(syscall_filter.program())  # one BPF instruction is 8 bytes

"""Apply the seccomp filter built outside the sandbox (rewards/sandbox/syscall_filter.py) to this process and
its future children, for good. The zygote applies it to itself once, before any job, so every candidate
inherits it with the fork (attaching costs ~0.3 ms: the kernel runs the program for every system call number
to fill its cache); the judge applies it when it starts. stdlib only."""

import ctypes

_NR_SECCOMP = {"x86_64": 317, "aarch64": 277, "riscv64": 277, "ppc64le": 358, "s390x": 348}
_SET_MODE_FILTER = 1
_FLAG_SPEC_ALLOW = 1 << 2  # no speculative-store-bypass mitigation forced on by the filter (Linux >= 4.17)
_PR_SET_SECCOMP, _MODE_FILTER = 22, 2
_PR_SET_NO_NEW_PRIVS = 38


class _Prog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


class Filter:
    """A BPF program ready to be applied; keeps its buffers alive."""

    def __init__(self, bpf, libc):
        import os
        self.libc = libc
        self._buf = ctypes.create_string_buffer(bytes(bpf), len(bpf))
        self._prog = _Prog(len(bpf) // 8, ctypes.addressof(self._buf))
        nr = _NR_SECCOMP.get(os.uname().machine)
        self._args = None if nr is None else (ctypes.c_long(nr), ctypes.c_long(_SET_MODE_FILTER),
                                              ctypes.c_long(_FLAG_SPEC_ALLOW), ctypes.byref(self._prog))

    def apply(self):
        """Restrict this process and its future children; False if the kernel refused."""
        libc = self.libc
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            return False
        if self._args is not None and libc.syscall(*self._args) == 0:
            return True
        # an older kernel without the flag (or the seccomp() call): the prctl form
        return libc.prctl(_PR_SET_SECCOMP, _MODE_FILTER, ctypes.byref(self._prog), 0, 0) == 0


def build(bpf, libc):
    """A Filter for bpf (bytes), or None when there is none."""
    return Filter(bpf, libc) if bpf else None

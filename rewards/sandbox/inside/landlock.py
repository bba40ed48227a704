"""Landlock for the candidate process: the kernel, not Python, decides which files it may touch, that it may
open no TCP connection and signal no process outside its own job.

Landlock (Linux >= 5.13, more with each ABI version) lets an unprivileged process restrict itself and
its future children irrevocably. The zygote builds one ruleset at start-up (``Ruleset.build``); every
candidate applies it right after the fork (``Ruleset.apply``) before any program code runs. Where the
kernel has no Landlock the candidate runs without it and ``info()`` says so. The stdlib has no binding,
and only the stdlib exists inside the sandbox, hence the few ctypes calls below (uapi/linux/landlock.h).
"""

import ctypes
import os

_CREATE, _ADD_RULE, _RESTRICT = 444, 445, 446  # syscall numbers (the same on x86-64 and arm64)
_PR_SET_NO_NEW_PRIVS = 38
_RULE_PATH_BENEATH = 1
_VERSION_FLAG = 1

# Filesystem rights by the ABI version that introduced them.
_EXECUTE, _WRITE_FILE, _READ_FILE, _READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_ABI_FS = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 5: (1 << 16) - 1}
_READ = _READ_FILE | _READ_DIR
_FILE_RIGHTS = _EXECUTE | _WRITE_FILE | _READ_FILE | (1 << 14) | (1 << 15)  # + truncate, ioctl_dev
_NET_ALL = (1 << 0) | (1 << 1)  # bind and connect TCP (ABI 4)
_SCOPE_ALL = (1 << 0) | (1 << 1)  # abstract unix sockets and signals (ABI 6)


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


class _Attr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


def _libc():
    return ctypes.CDLL(None, use_errno=True)


def abi_version():
    """The kernel's Landlock ABI version, 0 when Landlock is missing or disabled."""
    try:
        v = _libc().syscall(_CREATE, None, ctypes.c_size_t(0), ctypes.c_uint32(_VERSION_FLAG))
    except (OSError, AttributeError):
        return 0
    return max(int(v), 0)


class Ruleset:
    """A ruleset file descriptor ready to be applied in candidate processes."""

    def __init__(self, fd, abi, features, libc):
        self.fd, self.abi, self.features, self.libc = fd, abi, features, libc
        self._args = (ctypes.c_int(_RESTRICT), ctypes.c_int(fd), ctypes.c_uint32(0))  # built once, not per candidate
        # no_new_privs is inherited and never cleared: set here once (the zygote builds the ruleset), every
        # candidate has it from the fork and applies the ruleset with one system call.
        self._nnp = libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0

    @classmethod
    def build(cls, read_paths, write_paths, exec_paths):
        """Read-only access beneath read_paths (+execute beneath exec_paths), full access beneath write_paths,
        nothing else; no TCP; no signals or abstract sockets outside the domain. None without Landlock."""
        abi = abi_version()
        if abi < 1:
            return None
        libc = _libc()
        fs = _ABI_FS[max(k for k in _ABI_FS if k <= abi)]
        attr = _Attr(fs, _NET_ALL if abi >= 4 else 0, _SCOPE_ALL if abi >= 6 else 0)
        size = ctypes.sizeof(_Attr) if abi >= 6 else (16 if abi >= 4 else 8)
        fd = libc.syscall(_CREATE, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
        if fd < 0:
            return None
        features = ["filesystem"] + (["network"] if abi >= 4 else []) + (["signals"] if abi >= 6 else [])
        rules = [(p, _READ) for p in read_paths] + [(p, _READ | _EXECUTE) for p in exec_paths] + \
                [(p, fs) for p in write_paths]
        for path, access in rules:
            try:
                pfd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                if not os.path.isdir(path):
                    access &= _FILE_RIGHTS  # a rule on a file takes file rights only
                rule = _PathBeneath(access & fs, pfd)
                libc.syscall(_ADD_RULE, ctypes.c_int(fd), ctypes.c_int(_RULE_PATH_BENEATH), ctypes.byref(rule),
                             ctypes.c_uint32(0))
            finally:
                os.close(pfd)
        os.set_inheritable(fd, False)
        return cls(fd, abi, features, libc)

    def apply(self):
        """Restrict this process (and its future children) for good; False if the kernel refused."""
        libc = self.libc  # loaded once in the zygote: dlopen per candidate costs more than the syscalls
        if not self._nnp and libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            return False
        return libc.syscall(*self._args) == 0

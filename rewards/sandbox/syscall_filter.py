"""The seccomp filter every process that runs job code gets (the candidates and the judge): the system calls a
Python program here never needs fail, so no kernel object outlives a job or is shared between jobs by
construction, rather than being cleaned up after the fact.

The rules follow Docker's default profile where a program here has no use for the call (it denies them to
containers without the matching capability), and go further where the sandbox's own promises need it:
keys and keyrings (shared by every job of a host uid, and not covered by Landlock), System V IPC and POSIX
message queues (they outlive their processes in namespaces all jobs of a worker share), memfds (memory no
limit counts), CPU affinity (a job must not crowd the other worker's CPU), namespaces (a program's processes
stay in the job's pid namespace, which is what ends them), and tracing, other processes' memory, mounts,
modules, BPF, perf, userfaultfd, io_uring, clocks, quotas, swap, reboot. Denied calls fail with EPERM (clone3 with ENOSYS, as in Docker: libc
then falls back to clone, whose flags a filter can inspect); nothing is killed, so a program that merely
probes keeps running and its verdict is its own.

The BPF program is generated here, outside the sandbox, with libseccomp (the library made for this: it knows
each architecture's system call numbers and guards against the other ABIs of the same machine), and applied
inside with one system call (inside/seccomp.py), so the sandbox needs no binding. Where libseccomp is
missing the filter is None and the pool says so loudly (``isolation.resolve_mode``).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import functools
import os
import tempfile

# Fail with EPERM: what no program here needs. (Calls unknown on this architecture are skipped.)
DENIED = (
    # keys and keyrings: shared by every process of the uid, job after job and worker with worker
    "add_key", "request_key", "keyctl",
    # System V IPC and POSIX message queues: outlive their processes in the worker's IPC namespace
    "shmget", "shmat", "shmdt", "shmctl", "msgget", "msgsnd", "msgrcv", "msgctl", "semget", "semop",
    "semtimedop", "semctl", "mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive", "mq_notify",
    "mq_getsetattr",
    # memory that is no process's: a memfd's pages count in no RLIMIT_AS and no resident size, so a job held
    # 40 x 16 MB of them per process under memory_mb 256 (red team r28); files go to the capped tmpfs instead
    "memfd_create", "memfd_secret",
    # CPU placement: a pinned worker's jobs stay on its CPU (docs/sandbox.md, "CPUs")
    "sched_setaffinity",
    # other processes, tracing, namespaces
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd", "process_madvise", "setns",
    "migrate_pages", "move_pages",
    # mounts and file handles
    "mount", "umount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen", "fsmount",
    "fsconfig", "fspick", "mount_setattr", "open_by_handle_at", "name_to_handle_at", "quotactl",
    "quotactl_fd", "swapon", "swapoff", "acct", "nfsservctl",
    # the kernel itself: modules, kexec, BPF, perf, userfaultfd, io_uring, clocks, hosts, reboot, ports
    "init_module", "finit_module", "delete_module", "create_module", "query_module", "get_kernel_syms",
    "kexec_load", "kexec_file_load", "bpf", "perf_event_open", "userfaultfd", "io_uring_setup",
    "io_uring_enter", "io_uring_register", "lookup_dcookie", "fanotify_init", "syslog", "_sysctl", "sysfs",
    "ustat", "uselib", "vhangup", "reboot", "settimeofday", "clock_settime", "clock_adjtime", "adjtimex",
    "stime", "sethostname", "setdomainname", "ioperm", "iopl", "vm86", "vm86old",
)
# clone and unshare are allowed, but not with a namespace flag: one such rule per flag (bit set -> EPERM).
_NAMESPACE_FLAGS = (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000,
                    0x00000080)  # NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET, NEWTIME
# personality: the bits of the values Docker allows (0, PER_LINUX32 0x8, UNAME26 0x20000 and their sum); any
# other bit set (ADDR_NO_RANDOMIZE, READ_IMPLIES_EXEC, MMAP_PAGE_ZERO, other execution domains, the 0xffffffff
# query) is EPERM
_PERSONALITY_ALLOWED = 0x8 | 0x20000

_ALLOW = 0x7FFF0000
_ERRNO = 0x00050000
_CMP_MASKED_EQ = 7
_FLTATR_CTL_SSB = 8  # SECCOMP_FILTER_FLAG_SPEC_ALLOW: the filter must not turn on speculative-store-bypass mitigation


class _ArgCmp(ctypes.Structure):
    _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int), ("datum_a", ctypes.c_uint64),
                ("datum_b", ctypes.c_uint64)]


@functools.cache
def _library():
    name = ctypes.util.find_library("seccomp") or "libseccomp.so.2"
    try:
        lib = ctypes.CDLL(name, use_errno=True)
    except OSError:
        return None
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_rule_add_array.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint,
                                           ctypes.POINTER(_ArgCmp)]
    lib.seccomp_export_bpf.argtypes = [ctypes.c_void_p, ctypes.c_int]
    lib.seccomp_attr_set.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32]
    return lib


@functools.cache
def number(name: str) -> int | None:
    """The native system call number of name (None when this architecture has no such call, or no libseccomp)."""
    lib = _library()
    nr = lib.seccomp_syscall_resolve_name(name.encode()) if lib is not None else -1
    return nr if nr >= 0 else None


def _rule(lib, ctx, action, name, *cmps):
    nr = lib.seccomp_syscall_resolve_name(name.encode())
    if nr < 0:
        return  # not a system call of this architecture
    arr = (_ArgCmp * max(len(cmps), 1))(*[_ArgCmp(*c) for c in cmps])
    rc = lib.seccomp_rule_add_array(ctx, action, nr, len(cmps), arr)
    if rc != 0:
        raise OSError(-rc, f"seccomp_rule_add({name}): {os.strerror(-rc)}")


@functools.cache
def program() -> bytes | None:
    """The filter as a BPF program (struct sock_filter[], native byte order); None without libseccomp."""
    lib = _library()
    if lib is None:
        return None
    ctx = lib.seccomp_init(_ALLOW)
    if not ctx:
        return None
    try:
        lib.seccomp_attr_set(ctx, _FLTATR_CTL_SSB, 1)  # libseccomp >= 2.5; older ones only lack the flag
        eperm, enosys = _ERRNO | errno.EPERM, _ERRNO | errno.ENOSYS
        for name in DENIED:
            _rule(lib, ctx, eperm, name)
        for flag in _NAMESPACE_FLAGS:
            _rule(lib, ctx, eperm, "unshare", (0, _CMP_MASKED_EQ, flag, flag))
            _rule(lib, ctx, eperm, "clone", (0, _CMP_MASKED_EQ, flag, flag))
        _rule(lib, ctx, enosys, "clone3")
        for bit in range(32):  # personality: only combinations of PER_LINUX32 and UNAME26
            if not (1 << bit) & _PERSONALITY_ALLOWED:
                _rule(lib, ctx, eperm, "personality", (0, _CMP_MASKED_EQ, 1 << bit, 1 << bit))
        with tempfile.TemporaryFile() as f:
            rc = lib.seccomp_export_bpf(ctx, f.fileno())
            if rc != 0:
                raise OSError(-rc, f"seccomp_export_bpf: {os.strerror(-rc)}")
            f.seek(0)
            return f.read()
    finally:
        lib.seccomp_release(ctx)

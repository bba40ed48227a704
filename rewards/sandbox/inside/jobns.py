"""The jobs' pid namespace: every process a job starts lives in one pid namespace that holds nothing else, and
its init (the *reaper*) ends them all at once, as the kernel's own operation, not by a listing that can race.

The zygote calls start() once, before any job: it enters a pid namespace for its future children
(unshare(CLONE_NEWPID), with CAP_SYS_ADMIN in its user namespace: bubblewrap's ``--cap-add`` in the sandbox, or
a user namespace of its own mapping only its uid in the rlimits fallback), forks the reaper, which becomes
that namespace's pid 1, and gives up every capability. Each candidate it forks later lands in the namespace.
On the worker's request the reaper sends SIGKILL to every process of the namespace but itself (kill(-1): the
kernel walks the process list under the lock fork takes to add a child, so a process forked meanwhile gets the
signal too, or its parent's fork fails), then waits until the kernel reports none left (kill(-1, 0) fails with
ESRCH only once every one has exited and been reaped) and answers. A process cannot leave the namespace (setns
and new namespaces are denied by the seccomp filter, and it holds no capability), cannot signal the reaper (pid
1 ignores signals from inside its namespace, SIGKILL included), and if the reaper dies anyway the kernel kills
the whole namespace and the zygote can fork no more: the worker is replaced. stdlib only.
"""

import ctypes
import os
import signal
import socket
import time

CLONE_NEWUSER, CLONE_NEWPID = 0x10000000, 0x20000000
_CAP_SYS_ADMIN = 1 << 21
_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
_PR_SET_DUMPABLE = 4
_CAP_VERSION_3 = 0x20080522
KILL, DONE, STUCK = b"k", b"d", b"s"
WAIT_S = 5.0  # how long the namespace may take to empty (exit of a large address space takes milliseconds)


def _caps():
    """{name: mask} of this process's capability sets (CapEff, CapPrm, CapAmb, ...)."""
    with open("/proc/self/status", "rb") as f:
        return {k.decode(): int(v, 16) for k, _, v in (line.partition(b":") for line in f.read().splitlines())
                if k.startswith(b"Cap")}


def drop_capabilities(libc):
    """Give up every capability this process holds (effective, permitted, inheritable, ambient); True when none
    is left. Exec cannot bring them back: no_new_privs is set first."""
    libc.prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS
    libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header = (ctypes.c_uint32 * 2)(_CAP_VERSION_3, 0)
    libc.capset(header, (ctypes.c_uint32 * 6)())
    try:
        caps = _caps()
    except (OSError, ValueError):
        return False
    return not (caps.get("CapEff") or caps.get("CapPrm") or caps.get("CapAmb") or caps.get("CapInh"))


def _own_user_namespace(libc):
    """A user namespace mapping only our uid and gid, in which we hold every capability; False if refused."""
    uid, gid = os.getuid(), os.getgid()
    if libc.unshare(CLONE_NEWUSER) != 0:
        return False
    # A non-dumpable process's /proc/self files belong to root: dumpable again for the three writes (no job
    # exists yet: nothing could ptrace us meanwhile), then not.
    libc.prctl(_PR_SET_DUMPABLE, 1, 0, 0, 0)
    try:
        for name, text in (("uid_map", f"{uid} {uid} 1"), ("setgroups", "deny"), ("gid_map", f"{gid} {gid} 1")):
            with open(f"/proc/self/{name}", "w") as f:
                f.write(text)
    except OSError:
        return False
    finally:
        libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    return True


def start(libc):
    """Make this process's later children members of a fresh pid namespace with a reaper as its init, then drop
    every capability. Returns (the reaper's pid, our socket to it), or None where the kernel refuses (then the
    caller has only its listing of processes)."""
    try:
        ok = bool(_caps().get("CapEff", 0) & _CAP_SYS_ADMIN) or _own_user_namespace(libc)
    except (OSError, ValueError):
        ok = False
    reaper = None
    if ok and libc.unshare(CLONE_NEWPID) == 0:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        pid = os.fork()
        if pid == 0:
            if os.getpid() != 1:  # kill(-1) below is safe only as the init of a namespace of our own
                os._exit(1)
            try:
                keep = theirs.fileno()  # nothing else of the zygote's: not its socket to the worker
                os.closerange(3, keep)
                os.closerange(keep + 1, 1 << 16)
                if os.geteuid() != 0:
                    drop_capabilities(libc)  # killing processes of its own uid needs none
                _serve(theirs)
            finally:
                os._exit(0)
        theirs.close()
        reaper = (pid, ours)
    if os.geteuid() != 0:  # uid 0 (the rlimits fallback as root): each candidate drops root's powers itself
        drop_capabilities(libc)
    return reaper


def _reap_children():
    while True:
        try:
            if os.waitpid(-1, os.WNOHANG)[0] == 0:
                return
        except ChildProcessError:
            return


def _serve(sock):
    """The reaper (pid 1 of the jobs' namespace): on each request end every other process of the namespace."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    while True:
        try:
            data = sock.recv(16)
        except InterruptedError:
            continue
        if not data:  # the worker is gone: so is the namespace, with us
            return
        # kill(-1) walks the host's whole process list (~5 µs per 100 processes): in the usual case, a job that
        # left nothing (its candidate is already reaped), ESRCH here is the one walk.
        try:
            os.kill(-1, signal.SIGKILL)
        except ProcessLookupError:
            _reap_children()
            sock.send(DONE)
            continue
        except OSError:
            pass
        deadline = time.monotonic() + WAIT_S
        while True:
            _reap_children()  # orphans of the job are ours
            try:
                os.kill(-1, 0)
            except ProcessLookupError:
                sock.send(DONE)
                break
            except OSError:
                pass
            if time.monotonic() > deadline:
                sock.send(STUCK)
                break
            time.sleep(0.0002)

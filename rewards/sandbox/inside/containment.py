"""Containment of the candidate process without namespaces (the ``rlimits`` fallback): an audit hook that
keeps the program off the network, other processes and host files outside its job directory.

With bubblewrap the namespaces do this and the hook is not installed. In the fallback Landlock (when the
kernel has it) enforces the same file and TCP rules from the kernel; this hook is the layer that remains
where it does not, and a deny list: a program that gets around it (the fallback has no namespaces) is
contained only by Landlock and the rlimits. It plays no part in verdicts, which the judge decides in its
own process. stdlib only.
"""

import os
import stat
import sys

_DENIED_EVENTS = frozenset({
    "os.exec", "os.posix_spawn", "os.spawn", "os.system", "os.forkpty", "pty.spawn", "subprocess.Popen",
    "resource.setrlimit", "resource.prlimit", "sys.remote_exec", "syslog.openlog", "syslog.syslog",
    "os.setxattr", "os.removexattr", "webbrowser.open", "cpython._PySys_ClearAuditHooks"})
_DENIED_PREFIXES = ("socket.", "ctypes.", "urllib.", "ftplib.", "smtplib.", "poplib.", "imaplib.",
                    "nntplib.", "telnetlib.", "http.client.")
_DENIED_IMPORTS = frozenset({"ctypes", "_ctypes", "cffi", "_cffi_backend", "_testcapi", "_testinternalcapi",
                             "_xxsubinterpreters", "_posixsubprocess", "_socket", "socket", "ssl", "_ssl"})
# (event, indexes of path arguments) for events that change the filesystem.
_PATH_EVENTS = {"os.remove": (0,), "os.rmdir": (0,), "os.mkdir": (0,), "os.rename": (0, 1),
                "os.symlink": (1,), "os.link": (0, 1), "os.truncate": (0,), "os.chmod": (0,),
                "os.chown": (0,), "os.utime": (0,), "os.mkfifo": (0,), "os.mknod": (0,), "os.chdir": (0,),
                "shutil.rmtree": (0,), "shutil.copyfile": (1,), "shutil.move": (1,), "os.chflags": (0,)}
_LIST_EVENTS = frozenset({"os.listdir", "os.scandir"})
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


_PR_CAPBSET_DROP, _PR_SET_SECUREBITS, _PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 24, 28, 47, 4
_PR_SET_NO_NEW_PRIVS = 38
# noroot, no setuid fixup, keep-caps and no ambient raise, each with its lock: uid 0 never means capabilities again
_SECUREBITS = 0x01 | 0x02 | 0x04 | 0x08 | 0x20 | 0x40 | 0x80
_CAP_VERSION_3 = 0x20080522


def drop_root_powers(libc):
    """As uid 0 (the rlimits fallback on a host where no interpreter is reachable by an unprivileged uid):
    give up every capability for good. A root process with CAP_SYS_PTRACE may open the worker's /proc/<pid>/
    fd and mem despite non-dumpability (its protocol pipe: forged verdicts); without capabilities uid 0 is
    just another uid. True on success; the caller must not run the program otherwise."""
    import ctypes
    ok = libc.prctl(_PR_SET_SECUREBITS, _SECUREBITS, 0, 0, 0) == 0
    for cap in range(64):
        if libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            break  # past the last capability this kernel knows
    libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header = (ctypes.c_uint32 * 2)(_CAP_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)()  # effective, permitted, inheritable (x2 words): all empty
    ok = ok and libc.capset(header, data) == 0
    ok = ok and libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0
    try:
        with open("/proc/self/status") as f:
            fields = dict(line.split(":", 1) for line in f if ":" in line)
        return ok and all(int(fields[k], 16) == 0 for k in ("CapPrm", "CapEff", "CapBnd", "CapAmb"))
    except (OSError, KeyError, ValueError):
        return False


class SandboxDenied(PermissionError):
    """Raised by the audit hook."""


def _make_realpath(_lstat=os.lstat, _readlink=os.readlink, _getcwd=os.getcwd, _islnk=stat.S_ISLNK):
    """os.path.realpath from C functions captured before the program runs (it may patch posixpath)."""

    def realpath(path):
        if not path.startswith("/"):
            path = _getcwd() + "/" + path
        todo = list(reversed(path.split("/")))
        parts, links = [], 0
        while todo:
            name = todo.pop()
            if name in ("", "."):
                continue
            if name == "..":
                if parts:
                    parts.pop()
                continue
            cand = "/" + "/".join(parts + [name])
            try:
                st = _lstat(cand)
            except (OSError, ValueError):
                parts.append(name)  # does not exist (yet): taken literally
                continue
            if _islnk(st.st_mode):
                links += 1
                if links > 40:
                    return "/\0symlink-loop"
                target = _readlink(cand)
                if target.startswith("/"):
                    parts = []
                todo.extend(reversed(target.split("/")))
            else:
                parts.append(name)
        return "/" + "/".join(parts)

    return realpath


def install(jobdir, readable, _isinstance=isinstance, _str=str, _bytes=bytes, _fspath=os.fspath,
            _getpid=os.getpid, _getpgrp=os.getpgrp, _int=int, _any=any, _Exception=Exception):
    """Add the containment hook: writes only beneath jobdir, reads beneath jobdir and `readable` (no /proc)."""
    root = jobdir.rstrip("/") + "/"
    roots = tuple(p.rstrip("/") + ("/" if os.path.isdir(p) else "") for p in readable)
    realpath = _make_realpath()

    def resolve(path):
        path = _fspath(path)
        text = path.decode("utf-8", "surrogateescape") if _isinstance(path, _bytes) else _str.__str__(path)
        return realpath(text)

    def inside(real):
        return real == jobdir or real.startswith(root)

    def hook(event, args):
        if event in _DENIED_EVENTS or event.startswith(_DENIED_PREFIXES):
            raise SandboxDenied(f"sandbox: {event} is not allowed")
        if event == "open" or event in _LIST_EVENTS:  # listing a directory reads it too
            path, mode, flags = args if event == "open" else (args[0] if args else None, None, None)
            if path is None or _isinstance(path, _int):
                return
            writing = (_isinstance(mode, _str) and _any(c in mode for c in "wax+")) or (
                _isinstance(flags, _int) and flags & _WRITE_FLAGS)
            try:
                real = resolve(path)
            except _Exception:
                raise SandboxDenied("sandbox: unreadable path") from None
            if inside(real):
                return
            if writing or not (real.startswith(roots) or real in [r.rstrip("/") for r in roots]):
                raise SandboxDenied(f"sandbox: {'writing' if writing else 'reading'} {real!r} is not allowed")
        elif event in _PATH_EVENTS:
            for idx in _PATH_EVENTS[event]:
                if idx < len(args) and not _isinstance(args[idx], _int):
                    try:
                        ok = inside(resolve(args[idx]))
                    except _Exception:
                        ok = False
                    if not ok:
                        raise SandboxDenied(f"sandbox: {event} outside the working directory")
        elif event == "import":
            if args[0].partition(".")[0] in _DENIED_IMPORTS:
                raise SandboxDenied(f"sandbox: import of {args[0]} is not allowed")
        elif event == "os.kill":
            if args[0] not in (0, _getpid()):
                raise SandboxDenied("sandbox: signalling other processes is not allowed")
        elif event == "os.killpg":
            if args[0] != _getpgrp():
                raise SandboxDenied("sandbox: signalling other process groups is not allowed")

    sys.addaudithook(hook)

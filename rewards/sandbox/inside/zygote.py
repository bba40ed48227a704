"""The zygote: forks every candidate process from a state that has never seen a test or another job.

The worker forks it at start-up, before it reads any job, and the zygote never reads job data: each request
brings only descriptors (stdin, stdout, stderr, the channel, passed with SCM_RIGHTS) and limits. Its child
closes every other descriptor, puts itself in a new session, applies the rlimits (and Landlock, or in the
rlimits fallback the containment hook), then becomes candidate.main(). So a candidate's memory holds
nothing but the preloaded standard library and its own program. The zygote reports each child's pid and,
when it exits, its wait status; it reaps nothing else. stdlib only.
"""

import fcntl
import gc
import io
import json
import os
import resource
import select
import signal
import socket
import sys

from . import candidate, containment, landlock

# What most programs import (HumanEval prompts start with `from typing import ...`): preloaded once here
# instead of per candidate; each module more makes every fork a little slower.
PRELOAD = ("typing", "collections", "itertools", "functools", "math", "re", "heapq", "bisect", "string", "operator",
           "copy", "random")
_MB = 1 << 20


def _child(fds, req, ruleset, libc):
    """In the forked candidate: isolate, limit, become the candidate. Never returns."""
    try:
        os.setsid()
        high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 64) for fd in fds]
        for target, fd in enumerate(high):  # via high numbers: a source may sit on a lower target
            os.dup2(fd, target)
        if libc is not None and not containment.drop_root_powers(libc):  # before Landlock hides /proc
            os._exit(73)
        if ruleset is not None and not ruleset.apply() and req.get("require_landlock"):
            os._exit(72)
        os.closerange(len(fds), 1 << 16)
        os.chdir(req["jobdir"])
        os.environ.clear()
        os.environ.update({"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": req["jobdir"], "TMPDIR": req["jobdir"]})
        import tempfile
        tempfile.tempdir = req["jobdir"]
        lim = req["limits"]
        for res, val in ((resource.RLIMIT_AS, lim["memory_mb"] * _MB), (resource.RLIMIT_FSIZE, lim["max_file_size_mb"] * _MB),
                         (resource.RLIMIT_NOFILE, lim["max_open_files"]), (resource.RLIMIT_NPROC, req["nproc"]),
                         (resource.RLIMIT_CORE, 0)):
            resource.setrlimit(res, (val, val))
        resource.setrlimit(resource.RLIMIT_CPU, (lim["cpu_time_s"], lim["cpu_time_s"] + 1))
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        sys.stdin = sys.__stdin__ = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding="utf-8", errors="replace")
        sys.stdout = sys.__stdout__ = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8",
                                                        errors="backslashreplace")
        sys.stderr = sys.__stderr__ = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), encoding="utf-8",
                                                        errors="backslashreplace", write_through=True)
        if req.get("hook"):
            containment.install(req["jobdir"], req["readable"])
    except BaseException:
        os._exit(70)
    candidate.main(req.get("limit", 64 * _MB))


def serve(sock_fd, read_paths, write_paths, exec_paths, use_landlock=True):
    """The zygote's loop: fork a candidate per request, report pids and exit statuses, until the worker goes."""
    for name in PRELOAD:
        try:
            __import__(name)
        except Exception:
            pass
    ruleset = landlock.Ruleset.build(read_paths, write_paths, exec_paths) if use_landlock else None
    libc = landlock._libc() if os.geteuid() == 0 else None  # uid 0: candidates drop every capability
    gc.collect()
    gc.freeze()  # the collector then leaves the inherited objects alone: fewer copy-on-write faults per candidate
    sock = socket.socket(fileno=sock_fd)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    sock.sendall(json.dumps({"landlock": ruleset.features if ruleset else [],
                             "landlock_abi": ruleset.abi if ruleset else landlock.abi_version()}).encode())
    while True:
        ready, _, _ = select.select([sock, wake_r], [], [])
        if wake_r in ready:
            os.read(wake_r, 4096)
        if sock in ready:
            try:
                data, fds, _flags, _addr = socket.recv_fds(sock, 65536, 8)
            except OSError:
                return
            if not data:
                return
            req = json.loads(data)
            pid = os.fork()
            if pid == 0:
                signal.set_wakeup_fd(-1)
                sock.close()
                os.close(wake_r)
                os.close(wake_w)
                _child(fds, req, ruleset, libc)
            for fd in fds:
                os.close(fd)
            sock.sendall(json.dumps({"pid": pid}).encode())
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            sock.sendall(json.dumps({"exit": pid, "status": status}).encode())

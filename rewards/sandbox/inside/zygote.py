"""The zygote: forks every candidate process from a state that has never seen a test or another job.

The worker forks it at start-up, before it reads any job, and the zygote never reads job data: each request
brings only descriptors (stdin, stdout, stderr, the channel, passed with SCM_RIGHTS) and limits. Its child
closes every other descriptor, puts itself in a new session, applies the rlimits (and Landlock, or in the
rlimits fallback the containment hook), then becomes candidate.main(). So a candidate's memory holds
nothing but the preloaded standard library (warmed up by a stand-in job, _rehearse) and its own program.
The zygote reports each child's pid and, when it exits, its wait status; it reaps nothing else. stdlib only.
"""

import _signal
import _socket
import fcntl
import functools
import gc
import io
import json
import os
import resource
import select
import signal
import socket
import struct
import sys

from . import candidate, containment, framing, jobcg, jobns, landlock, seccomp

# What most programs import (HumanEval prompts start with `from typing import ...`): preloaded once here
# instead of per candidate; each module more makes every fork a little slower.
PRELOAD = ("typing", "collections", "itertools", "functools", "math", "re", "heapq", "bisect", "string", "operator",
           "copy", "random")
_MB = 1 << 20
# What the zygote tells the worker, one datagram each: (pid, SPAWNED) when it forked a candidate, (pid, wait
# status) when that candidate ended. Binary: json.dumps here would be per-fork work in the zygote.
REPORT = struct.Struct("=ii")
SPAWNED = -1  # never a wait status
# A stand-in job for _rehearse (no job's data: written here): a program with the usual kinds of globals and
# the requests a judge typically makes of it. Its first globals are f, g, C: handles 1, 2, 3 (0 is the module).
_REHEARSAL_PROGRAM = (
    "def f(xs, k=2):\n    \"\"\"Doc.\"\"\"\n"
    "    return [x * k for x in xs if x % 2 == 0] + sorted({x: str(x) for x in xs})\n\n"
    "def g(s):\n    raise ValueError('bad ' + s)\n\n"
    "class C:\n    def __init__(self, v):\n        self.v = v\n\n    def __repr__(self):\n        return f'C({self.v})'\n\n"
    "from typing import Any, Dict, List, Optional, Tuple, Union\nimport math\nX, NAMES = 3, ('a', 'b')\n"
    # typing caches each subscription it builds (its lru_cache): the ones HumanEval-style signatures use
    "def h(a: List[int], b: List[str], c: List[float], d: List[Any], e: List[List[int]], f: Tuple[int, int],\n"
    "      g: List[Tuple[int, int]], h: Optional[int], i: Optional[str], j: Dict[str, int], k: Union[int, float],\n"
    "      m: Dict[int, int], n: List[Union[int, float]], o: Tuple[int, ...], p: Optional[List[int]]) -> None:\n"
    "    pass\n")
_REHEARSAL_REQUESTS = (["call", 1, [["l", 1, 2, 3, 4.5]], {}, {}], ["call", 1, [["l", -1, 0]], {"k": 3}, {}],
                       ["call", 2, ["x"], {}, {}], ["call", 3, [7], {}, {}], ["get", 3, "__name__"],
                       ["op", 3, "repr"], ["call", 1, [["t", 1, "a"]], {}, {}])
_REHEARSALS = 16  # CPython 3.11 specialises a function's bytecode after 8 calls
_ZYGOTE_STDIO = ()


def _child(fds, data, ruleset, libc, stdio, readable):
    """In the forked candidate: isolate, limit, become the candidate. Never returns."""
    try:
        # First the job's cgroup (jobcg.py): every process the program starts is born in it, and counted there.
        if len(fds) > 4 and not jobcg.join(fds[4:]):
            os._exit(74)
        fds = fds[:4]
        # Parsed here, not in the zygote (every page the zygote writes, it copies per fork), by the C scanner the
        # rehearsal warmed: json.loads's Python code, cold in every candidate, wrote ~40 inherited pages.
        req = framing.loads(data)
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
        os.environ["HOME"] = os.environ["TMPDIR"] = req["jobdir"]  # PATH and LANG: set in serve()
        tempfile = sys.modules.get("tempfile")  # not imported yet: on first use it reads TMPDIR
        if tempfile is not None:
            tempfile.tempdir = req["jobdir"]
        lim = req["limits"]
        for res, val in ((resource.RLIMIT_AS, lim["memory_mb"] * _MB), (resource.RLIMIT_FSIZE, lim["max_file_size_mb"] * _MB),
                         (resource.RLIMIT_NOFILE, lim["max_open_files"]), (resource.RLIMIT_NPROC, req["nproc"]),
                         (resource.RLIMIT_CORE, 0)):
            resource.setrlimit(res, (val, val))
        resource.setrlimit(resource.RLIMIT_CPU, (lim["cpu_time_s"], lim["cpu_time_s"] + 1))
        _signal.signal(_signal.SIGCHLD, _signal.SIG_DFL)  # not signal.signal: its enum wrapping is cold code here
        sys.stdin, sys.stdout, sys.stderr = sys.__stdin__, sys.__stdout__, sys.__stderr__ = stdio
        if req.get("hook"):
            containment.install(req["jobdir"], readable)
    except BaseException:
        os._exit(70)
    candidate.main(req.get("limit", 64 * _MB))


def _stdio():
    """The candidates' sys.stdin, stdout and stderr, made once here: fresh in every candidate (this process
    never uses them) and cheaper to inherit than to build. Each wrapper learns at creation whether its
    descriptor is seekable, so they are made on descriptors of the kinds a candidate gets: fd 0 here is
    /dev/null like a candidate's stdin (or its stdio test's input, a memfd: seekable too); fds 1 and 2
    become pipes meanwhile, like a candidate's stdout and stderr."""
    r, w = os.pipe()
    saved = os.dup(1), os.dup(2)
    try:
        os.dup2(w, 1)
        os.dup2(w, 2)
        return (io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding="utf-8", errors="replace"),
                io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8", errors="backslashreplace"),
                io.TextIOWrapper(io.FileIO(2, "w", closefd=False), encoding="utf-8", errors="backslashreplace",
                                 write_through=True))
    finally:
        for target, fd in enumerate(saved, 1):
            os.dup2(fd, target)
        for fd in (r, w, *saved):
            os.close(fd)


def _rehearse():
    """Run a stand-in job through the candidate's code paths here, before the first fork; returns the
    candidate's replies to the last round (tests check them: a rehearsal that errs warms the wrong paths).

    Every page a candidate writes that it inherited costs it a copy-on-write fault, and code that never
    ran in the zygote writes a lot: CPython counts a function's first calls and then rewrites its bytecode
    in place (specialisation), fills the type-attribute cache, interns names, resolves lazily bound
    symbols. Warmed up here, those pages stay shared and each candidate faults and computes less. The
    channel is fd 3 (candidate.CHANNEL_FD, our socket to the worker meanwhile): a socket pair stands in
    for it, then fd 3 is restored. Nothing of a job exists yet; the leftovers are removed.
    """
    replies = []
    saved = os.dup(candidate.CHANNEL_FD)
    try:
        for _ in range(_REHEARSALS):
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
            os.dup2(theirs.fileno(), candidate.CHANNEL_FD)
            theirs.close()
            setup = {"code": _REHEARSAL_PROGRAM, "name": "solution", "serve": True, "max_value": 16 * _MB}
            ours.sendall(b"".join(framing.pack(m) for m in (setup, *_REHEARSAL_REQUESTS)))
            ours.shutdown(socket.SHUT_WR)
            reader = framing.Reader(64 * _MB)
            candidate.run(reader.recv(candidate.CHANNEL_FD), reader)
            os.dup2(saved, candidate.CHANNEL_FD)  # closes the candidate's end: ours reads to the end
            answers = framing.Reader(64 * _MB)
            replies = [r for chunk in iter(functools.partial(ours.recv, 1 << 16), b"") for r in answers.feed(chunk)]
            ours.close()
            for res in (resource.RLIMIT_AS, resource.RLIMIT_NOFILE):
                resource.setrlimit(res, resource.getrlimit(res))
    except Exception:
        pass  # a rehearsal only saves time
    finally:
        os.dup2(saved, candidate.CHANNEL_FD)
        os.close(saved)
        sys.modules.pop("solution", None)
    return replies


def serve(sock_fd, read_paths, write_paths, exec_paths, use_landlock=True, bpf=None):
    """The zygote's loop: fork a candidate per request, report pids and exit statuses, until the worker goes."""
    # First, while this process is small and has seen nothing: the jobs' pid namespace and its reaper (jobns).
    reaper = jobns.start(landlock._libc())
    for name in PRELOAD:
        try:
            __import__(name)
        except Exception:
            pass
    ruleset = landlock.Ruleset.build(read_paths, write_paths, exec_paths) if use_landlock else None
    libc = landlock._libc() if os.geteuid() == 0 else None  # uid 0: candidates drop every capability
    # The seccomp filter on this process, once: every candidate inherits it with the fork (attaching it costs
    # ~0.3 ms, a tenth of a candidate's CPU), and nothing the zygote does needs what it denies.
    syscalls = seccomp.build(bpf, landlock._libc())
    filtered = syscalls is not None and syscalls.apply()
    os.environ.clear()  # once here: each candidate then only sets its own directory
    os.environ.update({"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": "/", "TMPDIR": "/"})
    global _ZYGOTE_STDIO
    # The streams a candidate replaces stay referenced here: freeing (flushing, closing) them in every candidate
    # wrote ~35 inherited pages.
    _ZYGOTE_STDIO = (sys.stdin, sys.stdout, sys.stderr, sys.__stdin__, sys.__stdout__, sys.__stderr__)
    stdio = _stdio()
    _rehearse()
    gc.collect()
    try:  # hand the heap's free pages back: each page still mapped is one more entry for every fork to copy
        landlock.ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):  # not glibc
        pass
    gc.freeze()  # the collector then leaves the inherited objects alone: fewer copy-on-write faults per candidate
    sock = socket.socket(fileno=sock_fd)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    hello = json.dumps({"landlock": ruleset.features if ruleset else [], "seccomp": filtered,
                        "landlock_abi": ruleset.abi if ruleset else landlock.abi_version(),
                        "reaper": reaper[0] if reaper else None}).encode()
    socket.send_fds(sock, [hello], [reaper[1].fileno()] if reaper else [])
    if reaper:
        reaper[1].close()
    while True:
        ready, _, _ = select.select([sock, wake_r], [], [])
        if wake_r in ready:
            os.read(wake_r, 64)
        if sock in ready:
            try:
                data, fds, _flags, _addr = socket.recv_fds(sock, 8192, 8)
            except OSError:
                return
            if not data:
                return
            pid = os.fork()
            if pid == 0:
                signal.set_wakeup_fd(-1)
                # The C close of the base class: socket.close's Python code never ran here (cold code writes
                # inherited pages), and the object must not keep fd 3 (the channel's number after _child's dup2).
                os.close(_socket.socket.detach(sock))
                os.close(wake_r)
                os.close(wake_w)
                _child(fds, data, ruleset, libc, stdio, read_paths)
            for fd in fds:
                os.close(fd)
            sock.send(REPORT.pack(pid, SPAWNED))
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            sock.send(REPORT.pack(pid, status))

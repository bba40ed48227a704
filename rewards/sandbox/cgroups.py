"""The kernel's own accounting of a job: one cgroup per worker that every process of its jobs is born into.

A worker runs one job at a time, so a cgroup per worker is a cgroup per job. The host makes it (here), bounds its
memory at job_memory_mb (what the kernel charges it: pages, page tables, socket and pipe buffers, tmpfs files)
and hands the worker open descriptors: the cgroup's ``cgroup.procs`` to join, its CPU counter and its OOM-kill
counter to read. Each candidate writes 0 to ``cgroup.procs`` in its trusted start (inside/zygote.py), before the
program's code runs; every process it starts is then born in the cgroup, and the kernel counts their CPU and
memory whoever reaps them (a parent ignoring SIGCHLD, the zygote for a CLONE_PARENT child, the jobs' reaper
for a daemon). The program never reaches the cgroup file system (not in the sandbox; the descriptors are closed
before its code runs), so it cannot leave. The worker, its zygote and its judge stay outside: an OOM kill in
the job's cgroup picks only the job's processes.

Two layouts: cgroup v2 (one hierarchy; a delegated subtree where this process may write, e.g. systemd's
``Delegate=yes``) and cgroup v1 (``memory`` and ``cpuacct`` hierarchies, where writable: root on a v1 or hybrid
host). Where neither can be had (a container's read-only /sys/fs/cgroup) ``create`` returns None and the
worker keeps its /proc accounting (inside/hygiene.py).
"""

from __future__ import annotations

import errno
import functools
import itertools
import logging
import os
import threading
import time

log = logging.getLogger(__name__)

_ROOT = "/sys/fs/cgroup"
_PREFIX = "coderl-"
_counter = itertools.count()
_lock = threading.Lock()
_V2_HOST_LEAF = "coderl-host"  # where this process moves when its own v2 cgroup must hold no process


def _mounts() -> tuple[dict[str, tuple[str, str]], tuple[str, str] | None]:
    """({v1 controller: (its hierarchy's mount point, the cgroup mounted there)}, the same of the cgroup2 mount)."""
    v1: dict[str, tuple[str, str]] = {}
    v2 = None
    try:
        with open("/proc/self/mountinfo") as f:
            lines = f.read().splitlines()
    except OSError:
        return v1, v2
    for line in lines:
        left, _, right = line.partition(" - ")
        fields, rfields = left.split(), right.split()
        if len(fields) < 5 or len(rfields) < 3:
            continue
        root, point, fstype = fields[3], fields[4], rfields[0]
        if fstype == "cgroup2" and v2 is None:
            v2 = (point, root)
        elif fstype == "cgroup":
            for opt in rfields[2].split(","):
                if opt in ("memory", "cpuacct"):
                    v1.setdefault(opt, (point, root))
    return v1, v2


def _dir(mount: tuple[str, str], path: str) -> str | None:
    """The directory of cgroup `path` under a mount of cgroup mount[1] at mount[0]; None when outside it."""
    point, root = mount
    root = root.rstrip("/")
    if path != root and not path.startswith(root + "/"):
        return None
    return os.path.join(point, path[len(root):].lstrip("/"))


def _own_paths() -> dict[str, str]:
    """{controller (v1) or "" (v2): this process's cgroup path}, from /proc/self/cgroup."""
    out: dict[str, str] = {}
    try:
        with open("/proc/self/cgroup") as f:
            for line in f.read().splitlines():
                _id, ctrls, path = line.split(":", 2)
                for c in ctrls.split(",") if ctrls else [""]:
                    out[c] = path
    except (OSError, ValueError):
        pass
    return out


def _write(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


def _read(path: str) -> str:
    with open(path) as f:
        return f.read()


class JobCgroup:
    """One worker's job cgroup: its directories and the descriptors its worker inherits."""

    def __init__(self, version: str, dirs: list[str], join: list[str], cpu: str, oom: str | None, memory_mb: int):
        self.version, self.dirs, self.memory_mb = version, dirs, memory_mb
        self.fds: list[int] = []
        try:
            self.join = [self._open(p, os.O_WRONLY) for p in join]
            self.cpu = self._open(cpu, os.O_RDONLY)
            self.oom = self._open(oom, os.O_RDONLY) if oom else None
        except OSError:
            self.remove()
            raise

    def _open(self, path: str, flags: int) -> int:
        fd = os.open(path, flags | os.O_CLOEXEC)
        self.fds.append(fd)
        return fd

    def spec(self) -> dict:
        """What the worker's cfg carries (inside/jobcg.py): the descriptor numbers it inherits."""
        return {"version": self.version, "join": self.join, "cpu": self.cpu, "oom": self.oom,
                "memory_mb": self.memory_mb if self.oom is not None else None}

    def close_fds(self) -> None:
        """Our copies of the descriptors (the worker holds its own once started)."""
        for fd in self.fds:
            try:
                os.close(fd)
            except OSError:
                pass
        self.fds = []

    def remove(self, wait_s: float = 2.0) -> bool:
        """Close our descriptors and remove the directories once the worker's processes have left them."""
        self.close_fds()
        deadline = time.monotonic() + wait_s
        left = list(self.dirs)
        while left:
            for d in list(left):
                try:
                    os.rmdir(d)
                    left.remove(d)
                except FileNotFoundError:
                    left.remove(d)
                except OSError as e:
                    if e.errno != errno.EBUSY:
                        left.remove(d)
            if not left or time.monotonic() >= deadline:
                break
            time.sleep(0.02)
        if left:
            log.warning("sandbox: job cgroup(s) still busy, left in place: %s", left)
        return not left


def _name() -> str:
    return f"{_PREFIX}{os.getpid()}-{next(_counter)}"


def _sweep_stale(parent: str) -> None:
    """Remove empty job cgroups a process that is gone left under parent (a server killed before it cleaned)."""
    try:
        names = os.listdir(parent)
    except OSError:
        return
    for n in names:
        if not n.startswith(_PREFIX) or n == _V2_HOST_LEAF:
            continue
        owner = n[len(_PREFIX):].split("-", 1)[0]
        if owner.isdigit() and int(owner) != os.getpid() and not os.path.exists(f"/proc/{owner}"):
            try:
                os.rmdir(os.path.join(parent, n))
            except OSError:
                pass


def _v2_parent(own: str, enable: bool = True) -> str | None:
    """A v2 cgroup under which this process may make job cgroups with the memory controller, or None. Where its
    own cgroup holds processes (the no-internal-process rule forbids enabling controllers for its children) and
    this process is the only one there, it moves itself into a leaf of its own (coderl-host) first."""
    if os.path.basename(own) == _V2_HOST_LEAF:  # moved there by an earlier Sandbox of this process
        own = os.path.dirname(own)
    try:
        if "memory" not in _read(os.path.join(own, "cgroup.controllers")).split():
            return None
        if "memory" in _read(os.path.join(own, "cgroup.subtree_control")).split():
            return own
        if not enable or not os.access(os.path.join(own, "cgroup.subtree_control"), os.W_OK):
            return None
        try:
            _write(os.path.join(own, "cgroup.subtree_control"), "+memory")
            return own
        except OSError as e:
            if e.errno != errno.EBUSY:
                return None
        procs = _read(os.path.join(own, "cgroup.procs")).split()
        if procs != [str(os.getpid())]:
            return None
        leaf = os.path.join(own, _V2_HOST_LEAF)
        os.makedirs(leaf, exist_ok=True)
        _write(os.path.join(leaf, "cgroup.procs"), "0")
        _write(os.path.join(own, "cgroup.subtree_control"), "+memory")
        return own
    except OSError:
        return None


def _create_v2(mount: tuple[str, str], path: str, memory_mb: int) -> JobCgroup | None:
    own = _dir(mount, path)
    # this process's own cgroup (a delegated subtree), else the hierarchy's root where writable (root on a host
    # whose session cgroup holds other processes)
    parent = None
    for where, enable in ((own, True), (mount[0], False)):  # the root's controllers are the host's to choose
        parent = _v2_parent(where, enable) if where is not None else None
        if parent is not None:
            break
    if parent is None:
        return None
    _sweep_stale(parent)
    d = os.path.join(parent, _name())
    try:
        os.mkdir(d)
    except OSError:
        return None
    try:
        _write(os.path.join(d, "memory.max"), str(memory_mb << 20))
        for name, value in (("memory.swap.max", "0"), ("memory.oom.group", "1")):
            try:  # no swap for a job (its memory would leave the bound); the whole job ends at an OOM kill
                _write(os.path.join(d, name), value)
            except OSError:
                pass
        return JobCgroup("v2", [d], [os.path.join(d, "cgroup.procs")], os.path.join(d, "cpu.stat"),
                         os.path.join(d, "memory.events"), memory_mb)
    except OSError:
        try:
            os.rmdir(d)
        except OSError:
            pass
        return None


def _create_v1(points: dict[str, tuple[str, str]], paths: dict[str, str], memory_mb: int) -> JobCgroup | None:
    if "memory" not in points or "cpuacct" not in points:
        return None
    name, dirs = _name(), []
    where = {}
    try:
        for ctrl in ("memory", "cpuacct"):
            parent = _dir(points[ctrl], paths.get(ctrl, "/"))
            if parent is None or not os.access(parent, os.W_OK):
                raise PermissionError(parent)
            _sweep_stale(parent)
            d = os.path.join(parent, name)
            if d not in dirs:  # memory and cpuacct co-mounted: one directory
                os.mkdir(d)
                dirs.append(d)
            where[ctrl] = d
        mem = where["memory"]
        _write(os.path.join(mem, "memory.limit_in_bytes"), str(memory_mb << 20))
        try:  # memory+swap at the same bound: no swapping past it
            _write(os.path.join(mem, "memory.memsw.limit_in_bytes"), str(memory_mb << 20))
        except OSError:
            pass
        return JobCgroup("v1", dirs, [os.path.join(d, "cgroup.procs") for d in dirs],
                         os.path.join(where["cpuacct"], "cpuacct.usage"), os.path.join(mem, "memory.oom_control"),
                         memory_mb)
    except OSError:
        for d in reversed(dirs):
            try:
                os.rmdir(d)
            except OSError:
                pass
        return None


def create(memory_mb: int, enabled: bool = True) -> JobCgroup | None:
    """A fresh job cgroup for one worker, bounded at memory_mb; None where no cgroup can be had here."""
    if not enabled:
        return None
    points, v2 = _mounts()
    paths = _own_paths()
    with _lock:
        if v2 is not None and "" in paths:
            made = _create_v2(v2, paths[""], memory_mb)
            if made is not None:
                return made
        return _create_v1(points, paths, memory_mb)


FALLBACK_GAP = ("no job cgroup (none writable here, or job_cgroup off): a job's CPU and resident memory are summed "
                "from /proc, which misses the CPU of processes the kernel reaped (a parent ignoring SIGCHLD) or "
                "that left the job's tree (CLONE_PARENT), so the starved-CPU credit can run past the limit, and "
                "kernel memory (socket and pipe buffers, tmpfs files) is outside job_memory_mb")


def describe(version: str | None) -> dict:
    """isolation_info's "accounting": where a job's CPU and memory are counted, and what that misses."""
    if version is None:
        return {"cgroup": None, "cpu": "/proc (alive processes, zombies, children reaped into a parent's count)",
                "memory": "/proc resident memory, polled every 50 ms", "gap": FALLBACK_GAP}
    return {"cgroup": version, "cpu": "the job cgroup's CPU counter (every process ever in it) and the judge's",
            "memory": "the job cgroup's bound (job_memory_mb): pages, kernel memory (socket and pipe buffers, "
                      "tmpfs files); an OOM kill inside it is the program's `memory`", "gap": None}


@functools.lru_cache(maxsize=2)
def _available(enabled: bool) -> str | None:
    made = create(64, enabled)
    if made is not None:
        made.remove()
    return made.version if made is not None else None


def accounting(config) -> dict:
    """Which accounting a worker gets here: a cgroup made and removed once per process."""
    return describe(_available(config.job_cgroup))

"""How the sandbox workers are isolated and started: the bubblewrap command line, the rlimits fallback,
the probe, and ``WorkerProcess`` (one started worker and its length-prefixed JSON pipes).

``worker_command`` builds the argv that starts one worker; ``isolation_info`` says which mode works
here. Two details matter on CI machines that run as root:

* RLIMIT_NPROC is not enforced for uid 0, and bubblewrap started by root maps the sandbox user back to
  root, so a fork bomb would be unbounded. Root therefore drops to an unprivileged uid (65534) before
  starting bubblewrap; the sandbox then gets its own user namespace, whose process count is bounded.
* The interpreter may live where that uid cannot reach it (pyenv under /root, mode 0700), and
  bubblewrap resolves bind sources as the calling user. Root first bind-mounts the interpreter prefix
  onto a private tmpfs in a private mount namespace (``unshare --mount``), then drops privileges, so
  exactly that directory, read-only, is what the sandbox sees.
"""

from __future__ import annotations

import fcntl
import functools
import logging
import os
import select
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

from . import cgroups, inside, syscall_filter
from .inside import framing

log = logging.getLogger(__name__)

SANDBOX_UID = 65534  # "nobody": what root drops to before entering the sandbox
# What the host keeps of a worker's stderr (its own, its zygote's and its judge's: tracebacks, and what a job's tests
# write there, capped per job by the judge): the last 64 KiB, in memory. A file grew for the worker's life.
_STDERR_TAIL = 1 << 16
_F_SETPIPE_SZ = 1031
# What a started worker may report it lacks (its hello), and the warning that says what that costs.
_HELLO_WARNINGS = (
    ("jobns", "the kernel refused the jobs' pid namespace (no CAP_SYS_ADMIN in the sandbox's user namespace and no "
              "user namespace of the zygote's own): a job's processes are ended by a listing of /proc, which a "
              "process forking successors can outrun into the next job."),
    ("seccomp", "the seccomp filter was not built into the worker: programs may use keyrings, System V IPC, "
                "tracing and CPU affinity."))
_INSIDE = Path(__file__).resolve().parent / "inside"
# The worker's whole environment. PYTHONHASHSEED: every worker hashes strings alike, so the order of a set or
# dict keyed by strings (what a test may assert on) is the same in every job, and the same as plain Python
# run with PYTHONHASHSEED=0 (docs/fidelity.md); never a verdict that depends on the worker a job drew.
_ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONHASHSEED": "0"}


def interpreter() -> tuple[str, str]:
    """(python executable, install prefix) for the sandbox: the base interpreter, never the venv."""
    prefix = os.path.realpath(sys.base_prefix)
    exe = os.path.realpath(sys.executable)
    if not exe.startswith(prefix + os.sep):
        exe = os.path.join(prefix, "bin", f"python{sys.version_info[0]}.{sys.version_info[1]}")
    return exe, prefix


# The sandbox's source (~75 KB) travels over the worker's stdin, not argv: one argv string may not exceed
# 128 KiB (MAX_ARG_STRLEN), and argv is visible to everyone in `ps`. The stub reads one length-prefixed
# frame with raw, exact os.read calls, so nothing of the job protocol that follows is read ahead.
_STUB = ("import os\n"
         "def _rd(n):\n"
         "    b = b''\n"
         "    while len(b) < n:\n"
         "        c = os.read(0, n - len(b))\n"
         "        if not c:\n"
         "            raise SystemExit('coderl sandbox: no bootstrap on stdin')\n"
         "        b += c\n"
         "    return b\n"
         "exec(compile(_rd(int.from_bytes(_rd(8), 'big')).decode(), '<coderl-bootstrap>', 'exec'))\n")


def bootstrap(cfg: dict) -> str:
    """The program the stub runs: makes `inside` an importable package whose modules load from the sources
    sent along, on first import (so the zygote, forked early, holds only what candidates need), then
    starts the worker."""
    sources = {f"inside.{name}": (_INSIDE / f"{name}.py").read_text() for name in inside.MODULES}
    packages = []
    for package in inside.PACKAGES:  # every module of the package, its __init__ as the package itself
        packages.append(f"inside.{package}")
        for path in sorted((_INSIDE / package).glob("*.py")):
            name = f"inside.{package}" + ("" if path.stem == "__init__" else f".{path.stem}")
            sources[name] = path.read_text()
    # The loader is duck-typed: importlib.abc would import importlib.resources, tempfile, shutil and the
    # compression modules into every sandbox process, the zygote included (each module more makes every
    # candidate's fork copy more).
    return ("import sys, types, importlib.util\n"
            f"_SOURCES = {sources!r}\n"
            f"_PACKAGES = {packages!r}\n"
            "class _Inside:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name in _SOURCES:\n"
            "            return importlib.util.spec_from_loader(name, self, origin='<' + name.replace('.', '/') + '>',\n"
            "                                                   is_package=name in _PACKAGES)\n"
            "    def create_module(self, spec):\n"
            "        return None\n"
            "    def exec_module(self, module):\n"
            "        module.__file__ = module.__spec__.origin\n"
            "        exec(compile(_SOURCES[module.__name__], module.__file__, 'exec'), module.__dict__)\n"
            "_pkg = types.ModuleType('inside'); _pkg.__path__ = []; sys.modules['inside'] = _pkg\n"
            "sys.meta_path.insert(0, _Inside())\n"
            "import inside.worker\n"
            f"inside.worker.main({cfg!r})\n")


# What the judge imports besides the standard library (the pytest label format), with the packages they import:
# each package whole, or (pygments: 9 MB, of which pytest's terminal writer imports a few modules) its top-level
# modules, its subpackages' __init__ and _mapping, and the named submodules.
JUDGE_PACKAGES = {"pytest": None, "_pytest": None, "py": None, "pluggy": None, "iniconfig": None, "packaging": None,
                  "pygments": ("lexers/diff", "lexers/python", "formatters/terminal")}


@functools.lru_cache(maxsize=1)
def judge_packages() -> dict:
    """inside/packages.py's table of JUDGE_PACKAGES as installed here: {module: [is a package, marshalled code in
    base64, file name]}, compiled once (the sandbox runs this interpreter's version); {} when pytest is missing."""
    import base64
    import importlib.util
    import marshal
    table: dict = {}
    for top in JUDGE_PACKAGES:
        found = importlib.util.find_spec(top)
        if found is None or found.origin is None:
            return {}
        root = Path(found.origin).parent
        only = JUDGE_PACKAGES[top]
        files = root.rglob("*.py") if found.submodule_search_locations else [Path(found.origin)]
        for path in sorted(files):
            rel = path.relative_to(root.parent if found.submodule_search_locations else root)
            inner = rel.with_suffix("").as_posix().partition("/")[2]
            if only is not None and "/" in inner and path.stem not in ("__init__", "_mapping") and inner not in only:
                continue
            parts = list(rel.with_suffix("").parts)
            is_pkg = parts[-1] == "__init__"
            name = ".".join(parts[:-1] if is_pkg else parts)
            if not all(p.isidentifier() for p in name.split(".")):
                continue
            origin = f"/coderl-judge/{rel.as_posix()}"
            try:
                code = compile(path.read_bytes(), origin, "exec", dont_inherit=True)
            except SyntaxError:
                continue
            table[name] = [is_pkg, base64.b64encode(marshal.dumps(code)).decode(), origin]
    return table


def find_bwrap() -> str | None:
    return shutil.which("bwrap")


@functools.lru_cache(maxsize=4)
def bwrap_version(path: str) -> str:
    try:
        return subprocess.run([path, "--version"], capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def _reachable_by_others(path: str) -> bool:
    """True when every directory above path is searchable by any user."""
    p = Path(path)
    for parent in [*reversed(p.parents), p]:
        try:
            if not os.stat(parent).st_mode & stat.S_IXOTH:
                return False
        except OSError:
            return False
    return True


def _staging_dir() -> str:
    for d in ("/mnt", "/media", "/srv", "/opt"):
        if os.path.isdir(d):
            return d
    raise RuntimeError("no mount point for staging the interpreter (/mnt, /media, /srv, /opt all missing)")


def _bwrap_argv(bwrap: str, exe: str, prefix: str, src_prefix: str, tmp_mb: int, cap_add: bool) -> list[str]:
    argv = [bwrap, "--unshare-user", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
            "--unshare-cgroup-try", "--disable-userns", "--die-with-parent", "--new-session", "--clearenv",
            "--hostname", "sandbox"]
    if cap_add:  # within the sandbox's own user namespace only, and only until the zygote has made the jobs'
        # pid namespace (inside/jobns.py): every process then gives it up, before any job exists
        argv += ["--cap-add", "CAP_SYS_ADMIN"]
    for k, v in _ENV.items():
        argv += ["--setenv", k, v]
    argv += ["--ro-bind", "/usr", "/usr"]
    for d in ("/bin", "/lib", "/lib64", "/sbin", "/lib32", "/libx32"):
        if os.path.islink(d):
            argv += ["--symlink", os.readlink(d), d]
        elif os.path.isdir(d):
            argv += ["--ro-bind", d, d]
    if not (prefix == "/usr" or prefix.startswith("/usr/")):
        argv += ["--ro-bind", src_prefix, prefix]
    argv += ["--proc", "/proc", "--dev", "/dev", "--size", str(1 << 20), "--tmpfs", "/dev/shm",
             "--remount-ro", "/dev", "--size", str(tmp_mb << 20), "--tmpfs", "/tmp", "--chdir", "/tmp",
             "--remount-ro", "/"]
    return argv


def worker_command(mode: str, tmp_mb: int, cap_add: bool | None = None) -> tuple[list[str], dict]:
    """(argv, extra Popen kwargs) that start one worker in `mode` ("bwrap" or "rlimits"); the worker then
    expects bootstrap(cfg) as one frame on its stdin. cap_add: bubblewrap's CAP_SYS_ADMIN for the jobs' pid
    namespace (None: where this bubblewrap grants it, bwrap_grants_caps)."""
    exe, prefix = interpreter()
    # -I without -E (-E would ignore PYTHONHASHSEED): the environment is _ENV and nothing else (--clearenv)
    py = [exe, "-s", "-P", "-S", "-B", "-c", _STUB]
    is_root = os.geteuid() == 0
    if mode == "bwrap":
        bwrap = find_bwrap()
        if bwrap is None:
            raise RuntimeError("bubblewrap (bwrap) is not installed")
        if cap_add is None:
            cap_add = bwrap_grants_caps(tmp_mb)
        if not is_root:
            return _bwrap_argv(bwrap, exe, prefix, prefix, tmp_mb, cap_add) + py, {"env": {}}
        stage = _staging_dir()
        inner = _bwrap_argv(bwrap, exe, prefix, f"{stage}/py", tmp_mb, cap_add) + py
        script = ('set -e; mount -t tmpfs -o mode=0755,size=64k coderl-stage "$1"; mkdir "$1/py"; '
                  'mount --bind "$2" "$1/py"; mount -o remount,bind,ro "$1/py"; shift 2; '
                  f'exec setpriv --reuid={SANDBOX_UID} --regid={SANDBOX_UID} --clear-groups -- "$@"')
        argv = ["unshare", "--mount", "--propagation", "private", "--", "sh", "-c", script, "coderl-sandbox",
                stage, prefix, *inner]
        return argv, {"env": dict(_ENV)}
    kwargs: dict = {"env": dict(_ENV), "start_new_session": True}
    if is_root and _rlimits_interpreter() is not None:
        py[0] = _rlimits_interpreter()
        kwargs.update(user=SANDBOX_UID, group=SANDBOX_UID, extra_groups=[])
    return py, kwargs


def rlimits_drops_privileges() -> bool:
    """True when rlimits-mode workers run as SANDBOX_UID (we are root and an interpreter is reachable)."""
    return os.geteuid() == 0 and _rlimits_interpreter() is not None


def _rlimits_interpreter() -> str | None:
    """For rlimits mode as root: an interpreter of our version that the unprivileged uid can run (ours,
    or the system's when ours sits under a private home such as pyenv's /root/.pyenv)."""
    exe, prefix = interpreter()
    if _reachable_by_others(exe) and _reachable_by_others(prefix):
        return exe
    system = f"/usr/bin/python{sys.version_info[0]}.{sys.version_info[1]}"
    return system if os.path.exists(system) and _reachable_by_others(system) else None


@functools.lru_cache(maxsize=8)
def probe_bwrap(tmp_mb: int = 16, cap_add: bool = False) -> tuple[bool, str]:
    """Start a bubblewrap sandbox once and check the interpreter runs inside it: (works, error text)."""
    if find_bwrap() is None:
        return False, "bwrap not found on PATH"
    try:
        argv, kwargs = worker_command("bwrap", tmp_mb, cap_add)
    except RuntimeError as e:
        return False, str(e)
    argv = argv[:-2] + ["-c", "import os, sys; sys.stdout.write('ok %d' % os.getuid())"]
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=30, **kwargs)
    except (OSError, subprocess.SubprocessError) as e:
        return False, f"bwrap probe failed: {e}"
    if r.returncode != 0 or not r.stdout.startswith("ok"):
        return False, f"bwrap probe failed (exit {r.returncode}): {r.stderr.strip()[-500:]}"
    return True, ""


def bwrap_grants_caps(tmp_mb: int = 16) -> bool:
    """Whether this bubblewrap keeps CAP_SYS_ADMIN in the sandbox's user namespace (``--cap-add``); a setuid
    bubblewrap refuses it to non-root callers: the worker then has no jobs' pid namespace and says so."""
    return probe_bwrap(tmp_mb, True)[0]


def resolve_mode(requested: str, tmp_mb: int = 16, quiet: bool = False) -> tuple[str, list[str]]:
    """The mode to use for `requested` ("auto", "bwrap", "rlimits") and the warnings that go with it."""
    warnings: list[str] = []
    if syscall_filter.program() is None:
        warnings.append("no seccomp filter (libseccomp not found: install libseccomp2): programs may use keyrings, "
                        "System V IPC, tracing and CPU affinity, so one job can leave kernel objects for another, "
                        "also on another worker.")
    if requested in ("auto", "bwrap"):
        ok, err = probe_bwrap(tmp_mb)
        if ok:
            for w in warnings if not quiet else ():
                log.warning("SANDBOX WARNING: %s", w)
            return "bwrap", warnings
        if requested == "bwrap":
            raise RuntimeError(f"isolation='bwrap' requested but bubblewrap does not work here: {err}")
        warnings.append(f"bubblewrap unavailable ({err}); falling back to rlimits-only isolation: generated "
                        "code can read the host's files and reach the network. Install bubblewrap.")
    if requested == "rlimits":
        warnings.append("isolation='rlimits': no namespaces; only rlimits, a fresh session, a scrubbed "
                        "environment and the in-process audit hook stand between generated code and the host.")
    if os.geteuid() == 0 and _rlimits_interpreter() is None:
        warnings.append("rlimits mode as root: no interpreter is reachable by an unprivileged uid, so jobs run "
                        "as root (without capabilities) and the process-count limit is not enforced; where Landlock "
                        "cannot scope signals (Linux < 6.12) a program can signal any root process of the host. "
                        f"Make python{sys.version_info[0]}.{sys.version_info[1]} reachable by uid {SANDBOX_UID} "
                        "(e.g. the system's) or install bubblewrap.")
    for w in warnings if not quiet else ():
        log.warning("SANDBOX WARNING: %s", w)
    return "rlimits", warnings


def isolation_info(config=None) -> dict:
    """What isolation is available here (mode, bwrap path/version, uid, limits, warnings)."""
    from ..config import SandboxConfig
    config = config or SandboxConfig()
    try:
        mode, warnings = resolve_mode(config.isolation, config.tmp_size_mb, quiet=True)
    except RuntimeError as e:
        mode, warnings = "unavailable", [str(e)]
    bwrap = find_bwrap()
    exe, _ = interpreter()
    root = os.geteuid() == 0
    return {
        "mode": mode,
        "bwrap": bwrap,
        "bwrap_version": bwrap_version(bwrap) if bwrap else None,
        "sandbox_uid": SANDBOX_UID if root and (mode == "bwrap" or _rlimits_interpreter()) else os.geteuid(),
        "python": _rlimits_interpreter() if root and mode == "rlimits" and _rlimits_interpreter() else exe,
        "namespaces": ["user", "pid", "net", "ipc", "uts", "cgroup", "mount"] if mode == "bwrap" else [],
        "limits": {k: getattr(config, k) for k in (
            "test_timeout_s", "job_timeout_s", "cpu_time_s", "memory_mb", "job_memory_mb", "max_file_size_mb",
            "max_processes", "max_open_files", "max_output_bytes", "tmp_size_mb")},
        "accounting": cgroups.accounting(config),
        "warnings": warnings,
    }


_WOKEN = object()  # _read's answer when the wake-up descriptor, not the worker, became readable


class WorkerProcess:
    """One sandboxed worker process and its pipes; used by exactly one dispatcher thread."""

    def __init__(self, mode: str, config, workdir: str, cpu: int | None = None) -> None:
        base = "/tmp" if mode == "bwrap" else workdir  # bwrap: the sandbox's private tmpfs
        cfg = {"mode": mode, "workdir": base, "scratch": ["/tmp", "/dev/shm"] if mode == "bwrap" else [workdir],
               "judge_memory_mb": max(2 * config.memory_mb, 2048), "landlock": config.landlock, "cpu": cpu,
               "starved_factor": config.starved_factor, "job_memory_mb": config.job_memory_mb,
               "seccomp": syscall_filter.program(), "judge_packages": bool(judge_packages())}
        # the job's cgroup (cgroups.py): its descriptors pass to the worker, which hands them to each candidate
        self.cgroup = cgroups.create(config.job_memory_mb, config.job_cgroup)
        cfg["cgroup"] = self.cgroup.spec() if self.cgroup is not None else None
        argv, kwargs = worker_command(mode, config.tmp_size_mb)
        self._err, err_w = os.pipe()  # drained whenever we wait on the worker (_pump_err); a tail is kept
        self._tail = bytearray()
        self.stderr_bytes = 0  # read from the worker's stderr in all (kept: the last _STDERR_TAIL)
        try:
            fcntl.fcntl(err_w, _F_SETPIPE_SZ, 1 << 20)  # room for a job's worth without the worker waiting on us
        except OSError:
            pass
        os.set_blocking(self._err, False)
        try:
            self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err_w, bufsize=0,
                                         cwd=workdir if mode == "rlimits" else "/", close_fds=True,
                                         pass_fds=self.cgroup.fds if self.cgroup is not None else (), **kwargs)
        except BaseException:
            if self.cgroup is not None:
                self.cgroup.remove(0)
            raise
        finally:
            os.close(err_w)
            if self.cgroup is not None:
                self.cgroup.close_fds()  # the worker's copies are its own
        os.set_blocking(self.proc.stdin.fileno(), False)
        self._reader = framing.Reader(1 << 30)
        src = bootstrap(cfg).encode()
        deadline = time.monotonic() + 60
        sent = self._write(framing.HEADER.pack(len(src)) + src, deadline)
        if sent and cfg["judge_packages"]:  # read by the worker once its zygote is forked (inside/packages.py)
            sent = self._write(framing.pack({"packages": judge_packages()}), deadline)
        self.hello = self._read(deadline) if sent else None
        if not self.hello or not self.hello.get("ready"):
            err = self.stderr_tail()
            self.kill()
            raise RuntimeError(f"sandbox worker failed to start ({mode}): {err or 'no output'}")
        self.warnings = [text for key, text in _HELLO_WARNINGS  # (no filter to build: resolve_mode said so)
                         if self.hello.get(key) is False and (key != "seccomp" or cfg["seccomp"])]
        if not self.hello.get("cgroup"):
            if self.cgroup is not None:  # made, but the kernel let no process of the worker's in
                self.cgroup.remove(0)
                self.cgroup = None
            if config.job_cgroup:
                self.warnings.append(cgroups.FALLBACK_GAP + ".")

    def stderr_tail(self) -> str:
        self._pump_err()
        return bytes(self._tail[-2000:]).decode("utf-8", "replace").strip()

    def _pump_err(self) -> None:
        """Read what the worker wrote to its stderr so far, keeping only the last _STDERR_TAIL bytes."""
        while self._err is not None:
            try:
                chunk = os.read(self._err, 1 << 16)
            except OSError:  # BlockingIOError: nothing more for now
                return
            if not chunk:
                return
            self.stderr_bytes += len(chunk)
            self._tail += chunk
            if len(self._tail) > 2 * _STDERR_TAIL:
                del self._tail[:-_STDERR_TAIL]

    def _read(self, deadline: float, wake_fd: int | None = None):
        """The worker's next frame, or None when it died, broke the protocol or overran the deadline;
        _WOKEN when wake_fd became readable first."""
        try:
            fd = self.proc.stdout.fileno()
        except ValueError:  # closed by kill()
            return None
        if self._reader.pending:
            return self._reader.pending.pop(0)
        fds = [fd] if wake_fd is None else [fd, wake_fd]
        while True:
            left = deadline - time.monotonic()
            ready = select.select(fds + [self._err], [], [], left)[0] if left > 0 else []
            if not ready:
                return None
            if fd not in ready:
                if self._err in ready:
                    self._pump_err()
                if wake_fd is not None and wake_fd in ready:
                    return _WOKEN
                continue
            chunk = os.read(fd, 1 << 16)  # a 1 MiB buffer would be a fresh mmap per read
            if not chunk:
                return None
            try:
                frames = self._reader.feed(chunk)
            except framing.FrameError:
                return None
            if frames:
                self._reader.pending += frames[1:]
                return frames[0]

    def request(self, payload: dict, timeout: float, wake_fd: int | None = None, cut=None,
                grace: float = 5.0) -> dict | None:
        """Send one job; its reply, or None when the worker died or overran `timeout`. When wake_fd becomes
        readable and cut() says the job is no longer wanted, the worker is told to abort it (by its "seq") and
        must reply within `grace` seconds."""
        deadline = time.monotonic() + timeout
        if not self._write(framing.pack(payload), deadline):
            return None
        aborted = False
        while True:
            reply = self._read(deadline, None if aborted else wake_fd)
            if type(reply) is dict and reply.get("seq") != payload.get("seq"):
                log.error("sandbox worker %d answered job %s while job %s ran: dropped", self.proc.pid,
                          reply.get("seq"), payload.get("seq"))
                continue  # never another job's reply: one request, one reply, named by its seq
            if reply is not _WOKEN:
                return reply
            try:
                os.read(wake_fd, 4096)
            except BlockingIOError:
                pass
            if cut is not None and cut():
                aborted = True
                deadline = min(deadline, time.monotonic() + grace)
                if not self._write(framing.pack({"abort": payload.get("seq")}), deadline):
                    return None

    def _write(self, data: bytes, deadline: float) -> bool:
        """Write all of data to the worker's stdin; False when the worker is gone or stops reading."""
        view = memoryview(data)
        try:
            fd = self.proc.stdin.fileno()  # ValueError once kill() closed it
            while view:
                try:  # the pipe usually has room: wait only when it has none
                    view = view[os.write(fd, view):]
                    continue
                except BlockingIOError:
                    pass
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                readable, writable, _ = select.select([self._err], [fd], [], left)
                if readable:
                    self._pump_err()  # a worker blocked on its stderr would never read its stdin
                elif not writable:
                    return False
        except (BrokenPipeError, OSError, ValueError):
            return False
        return True

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        try:
            self.proc.kill()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            log.error("sandbox worker %d did not exit after SIGKILL", self.proc.pid)
        for f in (self.proc.stdin, self.proc.stdout):
            try:
                f.close()
            except OSError:
                pass
        if self._err is not None:
            self._pump_err()
            os.close(self._err)
            self._err = None
        if self.cgroup is not None:
            self.cgroup.remove()
            self.cgroup = None

    def close(self) -> None:
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=2)
        except (OSError, subprocess.TimeoutExpired, ValueError):
            pass
        self.kill()

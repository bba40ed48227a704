"""coderl.rewards.sandbox.isolation: the worker's command line, the bootstrap it reads, the mode probe, WorkerProcess."""

from __future__ import annotations

import os
import sys
import time

from coderl.rewards.config import SandboxConfig
from coderl.rewards.labels import parse_label
from coderl.rewards.sandbox import Job, Sandbox, inside, isolation, syscall_filter
from coderl.rewards.sandbox.isolation import (
    SANDBOX_UID,
    WorkerProcess,
    bootstrap,
    interpreter,
    resolve_mode,
    worker_command,
)


def test_interpreter_is_the_base_python_never_the_venv():
    exe, prefix = interpreter()
    assert exe.startswith(os.path.realpath(sys.base_prefix) + os.sep) and os.access(exe, os.X_OK)
    assert prefix == os.path.realpath(sys.base_prefix)


def test_bootstrap_carries_exactly_the_inside_modules_and_compiles():
    src = bootstrap({"mode": "bwrap"})
    compile(src, "<bootstrap>", "exec")
    for name in inside.MODULES:
        assert f"'inside.{name}'" in src
    assert "rewards" not in src.split("_SOURCES", 1)[0]  # nothing of the host package is imported inside


def test_bwrap_command_as_root_drops_privileges_and_unshares_everything():
    argv, kwargs = worker_command("bwrap", 16)
    if os.geteuid() == 0:  # CI runs as root
        assert argv[:2] == ["unshare", "--mount"] and f"--reuid={SANDBOX_UID}" in " ".join(argv)
    for flag in ("--unshare-user", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--clearenv",
                 "--die-with-parent", "--new-session", "--disable-userns"):
        assert flag in argv, flag
    assert argv[argv.index("--remount-ro", argv.index("--chdir")) + 1] == "/"  # the whole root read-only
    assert set(kwargs["env"]) <= {"PATH", "LANG", "PYTHONHASHSEED"}  # the server's environment never reaches it


def test_resolve_mode_prefers_bwrap_and_warns_in_rlimits():
    assert resolve_mode("auto", quiet=True) == ("bwrap", [])  # scripts/test.sh installs a working bubblewrap
    mode, warnings = resolve_mode("rlimits", quiet=True)
    assert mode == "rlimits" and any("no namespaces" in w for w in warnings)


def test_without_libseccomp_there_is_no_filter_and_the_pool_says_so(monkeypatch):
    assert syscall_filter.program()  # scripts/test.sh installs libseccomp2
    monkeypatch.setattr(syscall_filter, "program", lambda: None)
    assert any("no seccomp filter" in w for w in resolve_mode("auto", quiet=True)[1])


def test_worker_process_starts_answers_and_dies_cleanly(tmp_path):
    w = WorkerProcess("bwrap", SandboxConfig(), str(tmp_path))
    try:
        assert w.hello.get("ready") and w.alive()
    finally:
        w.kill()
    assert not w.alive()
    t0 = time.monotonic()
    assert w.request({"anything": 1}, timeout=5) is None  # a dead worker: None at once, never a hang
    assert time.monotonic() - t0 < 5


def test_what_jobs_write_to_the_workers_stderr_is_capped_per_job_and_kept_as_a_tail(monkeypatch):
    # The program's warnings reach a test inside catch_warnings, which shows them on the judge's stderr: the
    # worker's, which was a file on the host growing for the worker's life (1 MiB per warning).
    made = []
    init = WorkerProcess.__init__

    def record(self, *args, **kwargs):
        init(self, *args, **kwargs)
        made.append(self)

    monkeypatch.setattr(WorkerProcess, "__init__", record)
    program = "import warnings\ndef f(x):\n    for _ in range(8):\n        warnings.warn('W' * (1 << 20))\n    return 0\n"
    label = parse_label({"format": "unittest", "tests": [
        "import unittest, warnings\nclass T(unittest.TestCase):\n    def test_a(self):\n"
        "        with warnings.catch_warnings():\n            self.assertEqual(f(2), 4)\n"]})
    with Sandbox(SandboxConfig(isolation="bwrap", workers=1)) as sb:
        for i in range(3):
            assert [o.status for o in sb.run([Job(program + f"# {i}\n", label)])[0].outcomes] == ["failed"]
        w = made[-1]
        assert os.readlink(f"/proc/{w.proc.pid}/fd/2").startswith("pipe:")  # no host file
        w.stderr_tail()
        assert 3 * 60_000 < w.stderr_bytes <= 3 * (1 << 16) + 4096  # 64 Ki characters per job
        assert len(w._tail) <= 2 * (1 << 16)


def test_a_bubblewrap_that_refuses_the_capability_still_runs_jobs_and_says_what_is_missing(monkeypatch):
    # A setuid bubblewrap keeps no capability for a non-root caller: no jobs' pid namespace, only the /proc sweep.
    monkeypatch.setattr(isolation, "bwrap_grants_caps", lambda tmp_mb=16: False)
    label = parse_label({"format": "assert", "tests": ["assert f(2) == 4", "assert f(3) == 9"]})
    with Sandbox(SandboxConfig(isolation="bwrap", workers=1)) as sb:
        assert any("pid namespace" in w for w in sb.info()["warnings"]), sb.info()["warnings"]
        assert sb.run([Job("def f(x):\n    return x * x\n", label)])[0].pass_rate == 1.0


def test_an_abort_ends_only_the_job_it_names_and_keeps_the_worker(tmp_path):
    """The pool aborts a job a deadline cut by its sequence number; an abort that arrives after its job ended
    (the cut raced the reply) must not end the next job, and an aborted worker takes the next job at once."""
    import threading

    from coderl.rewards.labels import parse_label
    from coderl.rewards.sandbox import Job, Sandbox
    from coderl.rewards.sandbox.inside import framing

    cfg = SandboxConfig(test_timeout_s=5.0, probe_s=0)
    label = parse_label({"format": "assert", "tests": ["assert add(1, 2) == 3", "assert add(2, 2) == 4"]})
    payload, spec, _, _ = Sandbox(cfg)._payload(Job("", label))
    right, hang = "def add(a, b):\n    return a + b\n", "def add(a, b):\n    while True:\n        pass\n"
    wake_r, wake_w = os.pipe()
    w = WorkerProcess("bwrap", cfg, str(tmp_path))
    try:
        assert w.request({**payload, "spec": spec, "code": right, "seq": 1}, 10)["results"][0]["status"] == "passed"
        assert w._write(framing.pack({"abort": 1}), time.monotonic() + 5)  # late: job 1 has ended
        r2 = w.request({**payload, "code": right, "seq": 2}, 10)
        assert not r2.get("aborted") and [r["status"] for r in r2["results"]] == ["passed", "passed"]
        threading.Timer(0.3, os.write, (wake_w, b"x")).start()
        t0 = time.monotonic()
        r3 = w.request({**payload, "code": hang, "seq": 3}, 10, wake_r, lambda: True, grace=5)
        assert time.monotonic() - t0 < 1.5  # not the 5 s limit
        assert r3["aborted"] and {r["detail"] for r in r3["results"]} == {"cut by the batch deadline"}
        r4 = w.request({**payload, "code": right, "seq": 4}, 10)
        assert [r["status"] for r in r4["results"]] == ["passed", "passed"] and w.alive()
    finally:
        w.kill()
        os.close(wake_r)
        os.close(wake_w)

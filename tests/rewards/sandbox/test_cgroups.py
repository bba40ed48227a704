"""rewards/sandbox/cgroups.py: the job cgroup a worker gets, on this machine's real cgroup file system."""

from __future__ import annotations

import os

import pytest

from coderl.rewards.config import SandboxConfig
from coderl.rewards.sandbox import cgroups, isolation_info


@pytest.fixture
def made():
    cg = cgroups.create(96)
    if cg is None:
        pytest.skip("no writable cgroup here (cgroups.create gave None): the workers use the /proc fallback, whose "
                    "report test_off_or_unavailable_says_the_fallback_and_its_gap checks")
    yield cg
    cg.remove(0)


def test_a_job_cgroup_is_bounded_and_removed(made):
    assert made.version in ("v1", "v2") and all(os.path.isdir(d) for d in made.dirs)
    limit = "memory.limit_in_bytes" if made.version == "v1" else "memory.max"
    mem_dir = next(d for d in made.dirs if os.path.exists(os.path.join(d, limit)))
    assert int(open(os.path.join(mem_dir, limit)).read()) == 96 << 20
    spec = made.spec()
    assert spec["memory_mb"] == 96 and len(spec["join"]) == len(made.dirs) and spec["cpu"] in made.fds
    assert made.remove()
    assert not any(os.path.exists(d) for d in made.dirs) and made.fds == []


def test_cgroups_of_dead_servers_are_swept(made):
    parent = os.path.dirname(made.dirs[0])
    stale = os.path.join(parent, f"{cgroups._PREFIX}{2 ** 22 + 7}-0")  # above pid_max's default: never alive
    os.mkdir(stale)
    try:
        again = cgroups.create(96)
        assert not os.path.exists(stale)
        again.remove(0)
    finally:
        if os.path.exists(stale):
            os.rmdir(stale)


def test_mount_roots_map_cgroup_paths():
    assert cgroups._dir(("/sys/fs/cgroup/memory", "/"), "/a/b") == "/sys/fs/cgroup/memory/a/b"
    assert cgroups._dir(("/sys/fs/cgroup/memory", "/docker/x"), "/docker/x/a") == "/sys/fs/cgroup/memory/a"
    assert cgroups._dir(("/sys/fs/cgroup/memory", "/docker/x"), "/other") is None


def test_off_or_unavailable_says_the_fallback_and_its_gap():
    assert cgroups.create(96, enabled=False) is None
    info = isolation_info(SandboxConfig(job_cgroup=False))["accounting"]
    assert info["cgroup"] is None and "CLONE_PARENT" in info["gap"] and "socket" in info["gap"]
    on = isolation_info(SandboxConfig())["accounting"]
    assert (on["gap"] is None) == (on["cgroup"] is not None)

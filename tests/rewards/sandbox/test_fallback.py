"""The rlimits fallback (no namespaces): the judge/candidate split decides verdicts as with bubblewrap, and the
candidate is kept off host files, other jobs' files and the network by Landlock where the kernel has it and
by the containment hook where it does not. Bounded and safe if containment failed: reads only, writes only
under /tmp (the bait directories), no signals."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from coderl.rewards.config import SandboxConfig
from coderl.rewards.labels import parse_label
from coderl.rewards.sandbox import Job, Sandbox, isolation
from coderl.rewards.sandbox.inside import landlock
from coderl.rewards.sandbox.isolation import SANDBOX_UID

pytestmark = pytest.mark.timeout(180)

WRONG_BUT_READS = ("import os\ndef grab(path, dir_fd=None):\n    try:\n"
                   "        fd = os.open(path, os.O_RDONLY, dir_fd=dir_fd)\n"
                   "        try:\n            return os.read(fd, 4096).decode('latin-1')\n        finally:\n            os.close(fd)\n"
                   "    except OSError as e:\n        return type(e).__name__\n"
                   "def ls(path):\n    try:\n        return ' '.join(os.listdir(path))\n    except OSError as e:\n"
                   "        return type(e).__name__\n")


@pytest.fixture(scope="module", params=["landlock", "hook-only"])
def fallback(request):
    if request.param == "landlock" and landlock.abi_version() < 1:
        pytest.skip("this kernel has no Landlock (a kernel feature, not an install)")
    cfg = SandboxConfig(isolation="rlimits", workers=1, test_timeout_s=2.0, landlock=request.param == "landlock")
    with Sandbox(cfg) as s:
        yield s


@pytest.fixture()
def reachable_tmp():
    """A host directory the sandbox's uid could reach but for the sandbox: pytest's own tmp_path sits under a
    0700 directory when the tests run as root, which would keep the bait out of reach for the wrong reason."""
    path = Path(tempfile.mkdtemp(prefix="coderl-bait-", dir="/tmp"))
    os.chmod(path, 0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture()
def secret(reachable_tmp):
    path = reachable_tmp / "host-secret.txt"
    path.write_text("HOSTSECRET-93")
    os.chmod(path, 0o644)
    return str(path)


def test_fallback_reports_itself(fallback):
    info = fallback.info()
    assert info["mode"] == "rlimits" and info["warnings"]
    assert info["landlock"] == (["filesystem", "network", "signals"] if fallback.config.landlock else [])


def test_host_files_stay_out_of_reach(fallback, secret):
    probes = [f"grab({secret!r})", "grab('/proc/self/../1/environ')", "grab('/proc/self/root' + "
              f"{secret!r})", "grab('/etc/passwd')", f"grab({os.path.basename(secret)!r}, "
              f"dir_fd=os.open({os.path.dirname(secret)!r}, os.O_RDONLY))",
              "grab('passwd', dir_fd=os.open('/etc', os.O_RDONLY))",
              f"grab('../../..' + {secret!r}, dir_fd=os.open('/usr', os.O_RDONLY))",
              f"ls({os.path.dirname(secret)!r})", "ls('/etc')"]
    label = parse_label({"format": "assert", "tests": [f"assert 'HOSTSECRET' in {p} or 'host-secret' in {p} or "
                                                       f"'passwd' in {p}" for p in probes] +
                         ["assert 'root:' in grab('/etc/passwd')"]})
    r = fallback.run([Job(WRONG_BUT_READS, label)])[0]
    assert r.passed == 0, [(o.status, o.detail[-300:]) for o in r.outcomes]


def test_a_later_job_cannot_read_an_earlier_jobs_files(fallback, tmp_path):
    plant = ("import os, tempfile\nfor d in ('.', '..', '/tmp', tempfile.gettempdir(), '/dev/shm'):\n    try:\n"
             "        open(os.path.join(d, 'zq-planted-by-job-1'), 'w').write('x')\n    except OSError:\n        pass\n"
             "def f():\n    return os.getcwd()\n")
    label = parse_label({"format": "assert", "tests": ["assert f()"]})
    first = fallback.run([Job(plant, label)])[0]
    assert first.pass_rate == 1.0
    look = ("import os\ndef found():\n    hits = []\n    for root in ('..', '../..', '/tmp', '/dev/shm', '.'):\n"
            "        try:\n            names = os.listdir(root)\n        except OSError:\n            continue\n"
            "        hits += [root for n in names if n.startswith('zq-planted')]\n    return hits\n")
    r = fallback.run([Job(look, parse_label({"format": "assert", "tests": ["assert found() == []"]}))])[0]
    assert r.pass_rate == 1.0, r.outcomes[0].detail
    leftovers = [p for root in ("/tmp", "/dev/shm") for p in os.listdir(root) if p.startswith("zq-planted")]
    for p in leftovers:  # never leave the bait behind, even when the assertion below fails
        os.unlink(os.path.join("/tmp" if os.path.exists(os.path.join("/tmp", p)) else "/dev/shm", p))
    assert leftovers == []


def test_no_network_and_no_execs(fallback):
    code = ("import subprocess, socket\ndef net():\n    try:\n        socket.create_connection(('127.0.0.1', 9), timeout=0.5)\n"
            "        return 'connected'\n    except Exception as e:\n        return type(e).__name__\n"
            "def run():\n    try:\n        return subprocess.run(['/bin/true']).returncode\n    except Exception as e:\n"
            "        return type(e).__name__\n")
    label = parse_label({"format": "assert", "tests": ["assert net() == 'connected'", "assert run() == 0"]})
    r = fallback.run([Job(code, label)])[0]
    assert r.passed == 0, [(o.status, o.detail[-300:]) for o in r.outcomes]


def test_verdicts_are_the_judges_in_the_fallback_too(fallback):
    forge = ("import os, json, struct, unittest\nunittest.TestCase.assertEqual = lambda *a, **k: None\n"
             "def f(x):\n    for fd in range(3, 64):\n        body = json.dumps(['ok', 'guess']).encode()\n        try:\n"
             "            os.write(fd, struct.pack('>Q', len(body)) + body)\n        except OSError:\n            pass\n"
             "    return 0\n")
    ut = ("import unittest\nclass T(unittest.TestCase):\n    def test_a(self):\n        self.assertEqual(f(2), 4)\n"
          "    def test_b(self):\n        self.assertEqual(f(3), 9)\n")
    r = fallback.run([Job(forge, parse_label({"format": "unittest", "tests": [ut]}))])[0]
    assert r.passed == 0
    good = fallback.run([Job("def f(x):\n    return x * x\n", parse_label({"format": "unittest", "tests": [ut]}))])[0]
    assert good.pass_rate == 1.0


def test_symlinks_the_program_plants_lead_the_judge_and_the_cleanup_nowhere(fallback, reachable_tmp):
    # The judge runs the tests in the job directory, which the program writes: a test's open('in.txt') must
    # not follow the program's link to a host file (Landlock confines the judge too), and emptying the job
    # directory must not chmod a host directory through one.
    bait = reachable_tmp / "bait"
    bait.mkdir()
    os.chmod(bait, 0o777)
    (bait / "secret.txt").write_text("HOSTSECRET-77")
    os.chmod(bait / "secret.txt", 0o644)
    if os.geteuid() == 0:  # the workers' uid: the one a chmod through the link would act as
        os.chown(bait, SANDBOX_UID, SANDBOX_UID)
    code = (f"import os\nfor name, target in (('in.txt', {str(bait / 'secret.txt')!r}), ('out.txt', "
            f"{str(bait / 'written.txt')!r}), ('dir', {str(bait)!r})):\n    os.symlink(target, name)\n"
            "def f(s):\n    return s\n")
    label = parse_label({"format": "assert", "tests": ["open('out.txt', 'w').write('by the judge')\nassert True",
                                                       "assert 'HOSTSECRET' in f(open('in.txt').read())"]})
    r = fallback.run([Job(code, label)])[0]
    fallback.run([Job("x = 1\n", parse_label({"format": "assert", "tests": ["assert x == 1"]}))])  # cleaned up by now
    assert os.stat(bait).st_mode & 0o777 == 0o777  # not chmod-ed through the link by the cleanup
    if fallback.config.landlock:  # without Landlock the judge, like a hook-only candidate, is not confined
        assert r.passed == 0, [(o.status, o.detail[-300:]) for o in r.outcomes]
        assert not (bait / "written.txt").exists()


def test_as_root_the_program_cannot_reach_the_workers_descriptors(monkeypatch):
    # The weakest configuration: the fallback as root (no interpreter an unprivileged uid can run: pyenv under
    # /root) and no Landlock. A program that gets around the hook (a dir_fd-relative path through its own
    # symlinks) once reopened the worker's protocol pipe through /proc as root, whose CAP_SYS_PTRACE beats
    # non-dumpability, and wrote a reply of passed tests; candidates now drop every capability.
    monkeypatch.setattr(isolation, "_rlimits_interpreter", lambda: None)
    attack = ("import os, json, struct\ndef forge():\n    os.makedirs('d/' + '/'.join(['d'] * 9), exist_ok=True)\n"
              "    os.symlink(os.getcwd() + '/d/' + '/'.join(['d'] * 9), 's')\n    os.makedirs('a')\n"
              "    os.symlink('/', 'a/s')\n    base = os.open('a', os.O_RDONLY)\n    up = 's/' + '/'.join(['..'] * 10)\n"
              "    st = os.read(os.open(f'{up}/proc/self/stat', os.O_RDONLY, dir_fd=base), 4096).decode()\n"
              "    zygote = int(st.rsplit(')', 1)[1].split()[1])\n"  # getppid() is 0 in the job's pid namespace
              "    st = os.read(os.open(f'{up}/proc/{zygote}/stat', os.O_RDONLY, dir_fd=base), 4096).decode()\n"
              "    worker = int(st.rsplit(')', 1)[1].split()[1])\n"
              "    body = json.dumps({'results': [{'status': 'passed', 'runtime_s': 0.0, 'detail': ''}] * 2,"
              " 'clean': True}).encode()\n    sent = 0\n    for n in range(32):\n        try:\n"
              "            fd = os.open(f'{up}/proc/{worker}/fd/{n}', os.O_WRONLY, dir_fd=base)\n"
              "            os.write(fd, struct.pack('>Q', len(body)) + body)\n            sent += 1\n"
              "        except OSError:\n            pass\n    return sent\n"
              "try:\n    SENT = forge()\nexcept OSError:\n    SENT = 0\ndef f(x):\n    return 0\n")
    label = parse_label({"format": "assert", "tests": ["assert f(2) == 4", "assert f(3) == 9"]})
    with Sandbox(SandboxConfig(isolation="rlimits", workers=1, landlock=False, test_timeout_s=2.0)) as s:
        assert s.info()["sandbox_uid"] == os.geteuid()  # root here when the tests run as root (as in CI)
        r = s.run([Job(attack, label)])[0]
        assert r.passed == 0, [(o.status, o.detail) for o in r.outcomes]
        assert s.run([Job("def f(x):\n    return x * x\n", label)])[0].pass_rate == 1.0

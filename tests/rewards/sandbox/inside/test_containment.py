"""rewards/sandbox/inside/containment.py: the rlimits fallback's audit hook and root's dropped powers, each
installed in a fresh interpreter (an audit hook cannot be removed; capabilities do not come back)."""

from __future__ import annotations

import os

from tests.support import python_json

HOOK = r"""
import json, os, subprocess, sys
from coderl.rewards.sandbox.inside import containment
job, secret = sys.argv[1], sys.argv[2]
readable = sorted({sys.base_prefix, sys.prefix, *[p for p in sys.path if p]})
os.symlink(secret, os.path.join(job, "link"))  # made before the hook: a way out it must see through
os.chdir(job)
containment.install(job, readable)
out = {}

def attempt(name, f):
    try:
        f()
        out[name] = "ok"
    except containment.SandboxDenied:
        out[name] = "denied"
    except OSError as e:
        out[name] = f"errno {e.errno}"

attempt("write_job", lambda: open(os.path.join(job, "a.txt"), "w").write("x"))
attempt("read_job_relative", lambda: open("a.txt").read())
attempt("read_stdlib", lambda: open(os.__file__).read())
attempt("read_secret", lambda: open(secret).read())
attempt("read_through_link", lambda: open("link").read())
attempt("read_dotdot", lambda: open(os.path.join(job, "..", os.path.basename(secret))).read())
attempt("write_stdlib", lambda: open(os.__file__, "a"))
attempt("list_outside", lambda: os.listdir("/etc"))
attempt("remove_outside", lambda: os.remove(secret))
attempt("chdir_outside", lambda: os.chdir("/"))
sys.modules.pop("ssl", None)  # imported or not so far: the next import is a fresh one
attempt("import_ssl", lambda: __import__("ssl"))
attempt("subprocess", lambda: subprocess.Popen(["true"]))
attempt("system", lambda: os.system("true"))
attempt("kill_parent", lambda: os.kill(os.getppid(), 0))
attempt("kill_self", lambda: os.kill(os.getpid(), 0))
print(json.dumps(out))
"""

ROOT = r"""
import ctypes, json, os, sys
from coderl.rewards.sandbox.inside import containment
locked = sys.argv[1]
def read():
    try:
        return open(locked).read()
    except PermissionError:
        return "denied"
before = read()
ok = containment.drop_root_powers(ctypes.CDLL(None, use_errno=True))
print(json.dumps({"uid": os.getuid(), "before": before, "ok": ok, "after": read()}))
"""


def test_the_hook_keeps_the_program_in_its_directory_and_off_processes(tmp_path):
    job = tmp_path / "job"
    job.mkdir()
    secret = tmp_path / "secret.txt"
    secret.write_text("host file")
    out = python_json(HOOK, job, secret)
    assert out.pop("write_job") == out.pop("read_job_relative") == out.pop("read_stdlib") == "ok"
    assert out.pop("kill_self") == "ok"
    assert out == dict.fromkeys(out, "denied"), out  # every other attempt, each by the hook
    assert secret.read_text() == "host file" and (job / "a.txt").read_text() == "x"


def test_uid_0_without_its_powers_is_just_another_uid(tmp_path):
    locked = tmp_path / "locked.txt"
    locked.write_text("only for CAP_DAC_OVERRIDE")
    os.chmod(locked, 0)
    out = python_json(ROOT, locked)
    assert out["uid"] == 0 and out["before"] == "only for CAP_DAC_OVERRIDE"  # the tests run as root
    assert out["ok"] is True and out["after"] == "denied"

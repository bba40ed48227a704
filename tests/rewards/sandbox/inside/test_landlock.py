"""rewards/sandbox/inside/landlock.py: a ruleset applied in a fresh interpreter (for good, so never in the test
process), checked by what the kernel then refuses it."""

from __future__ import annotations

import socket

from coderl.rewards.sandbox.inside import landlock
from tests.support import python_json

PROBE = r"""
import json, os, socket, sys
from coderl.rewards.sandbox.inside import landlock
job, secret, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
rs = landlock.Ruleset.build([sys.base_prefix, "/usr"], [job], [])
out = {"abi": rs.abi, "features": rs.features, "applied": rs.apply()}

def attempt(name, f):
    try:
        f()
        out[name] = "ok"
    except PermissionError:
        out[name] = "denied"
    except OSError as e:
        out[name] = f"errno {e.errno}"

attempt("read_prefix", lambda: os.listdir(sys.base_prefix))
attempt("read_secret", lambda: open(secret).read())
attempt("list_secret_dir", lambda: os.listdir(os.path.dirname(secret)))
attempt("write_job", lambda: open(os.path.join(job, "out.txt"), "w").write("x"))
attempt("write_secret", lambda: open(secret, "a").write("x"))
attempt("connect", lambda: socket.create_connection(("127.0.0.1", port), timeout=5).close())
attempt("signal_parent", lambda: os.kill(os.getppid(), 0))
attempt("signal_self", lambda: os.kill(os.getpid(), 0))
print(json.dumps(out))
"""


def test_a_ruleset_confines_reads_writes_tcp_and_signals(tmp_path):
    abi = landlock.abi_version()
    assert abi >= 1, "this kernel has no Landlock: the sandbox's file rules then rest on bubblewrap alone"
    job = tmp_path / "job"
    job.mkdir()
    secret = tmp_path / "secret.txt"
    secret.write_text("host file")
    with socket.create_server(("127.0.0.1", 0)) as listener:
        out = python_json(PROBE, job, secret, listener.getsockname()[1])
    assert out["abi"] == abi and out["applied"] is True
    assert out["read_prefix"] == "ok" and out["write_job"] == "ok" and out["signal_self"] == "ok"
    assert out["read_secret"] == out["list_secret_dir"] == out["write_secret"] == "denied"
    assert (job / "out.txt").read_text() == "x" and secret.read_text() == "host file"
    assert ("network" in out["features"]) == (abi >= 4) and out["connect"] == ("denied" if abi >= 4 else "ok")
    assert ("signals" in out["features"]) == (abi >= 6)
    assert out["signal_parent"] == ("denied" if abi >= 6 else "ok")

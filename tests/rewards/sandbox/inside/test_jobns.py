"""rewards/sandbox/inside/jobns.py: a real pid namespace and its reaper, started in a fresh interpreter (which
stands in for the zygote), that ends a job's processes -- children, orphans, a new session -- all at once.

Liveness is read from a pipe every job process holds open: EOF on it means none of them is left."""

from __future__ import annotations

from tests.support import python_json

ZYGOTE = r"""
import ctypes, json, os, select, signal, sys, time
from coderl.rewards.sandbox.inside import jobns
libc = ctypes.CDLL(None, use_errno=True)
reaper_pid, sock = jobns.start(libc)
reaped = []
# Reap the candidate on SIGCHLD, as the zygote does (no thread: a process that unshared a pid namespace can start
# none): a zombie is still a process of the namespace, and the reaper answers when none is left.
signal.signal(signal.SIGCHLD, lambda *_: reaped.append(os.waitpid(-1, os.WNOHANG)))
out = {"reaper": reaper_pid, "rounds": []}

def job(kind):
    r, w = os.pipe()
    info_r, info_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the candidate: lands in the jobs' namespace
        os.close(r)
        os.write(info_w, json.dumps({"ns_pid": os.getpid()}).encode())
        if kind == "bomb":
            for _ in range(3):
                if os.fork() == 0:  # a child, and its own child orphaned to the reaper
                    if os.fork() == 0:
                        os.setsid()
                        time.sleep(30)
                        os._exit(0)
                    os._exit(0)
        time.sleep(30)
        os._exit(0)
    os.close(w)
    os.close(info_w)
    info = json.loads(os.read(info_r, 4096))
    os.close(info_r)
    time.sleep(0.2)  # let the job's processes start
    t0 = time.monotonic()
    sock.send(jobns.KILL)
    answer = sock.recv(1).decode()
    eof = bool(select.select([r], [], [], 1.0)[0]) and os.read(r, 1) == b""  # nobody writes: readable = EOF
    alive = not eof
    os.close(r)
    return {"answer": answer, "ns_pid": info["ns_pid"], "host_pid": pid, "left": alive,
            "reaped": any(p == pid for p, _ in reaped),
            "seconds": time.monotonic() - t0}

out["rounds"] = [job("bomb"), job("single")]
sock.send(jobns.KILL)  # nothing left: answered at once
out["empty"] = sock.recv(1).decode()
signal.signal(signal.SIGCHLD, signal.SIG_DFL)
sock.close()  # the worker is gone: the reaper ends, and the namespace with it
out["reaper_exit"] = os.waitpid(reaper_pid, 0)[1]
print(json.dumps(out))
"""

CAPS = r"""
import ctypes, json
from coderl.rewards.sandbox.inside import jobns
before = jobns._caps()
ok = jobns.drop_capabilities(ctypes.CDLL(None, use_errno=True))
status = dict(line.split(":", 1) for line in open("/proc/self/status") if ":" in line)
print(json.dumps({"before": before["CapEff"], "ok": ok, "after": jobns._caps(), "nnp": status["NoNewPrivs"].strip()}))
"""


def test_the_reaper_ends_every_process_of_a_job_and_serves_the_next():
    out = python_json(ZYGOTE, timeout=90)
    bomb, single = out["rounds"]
    for r in (bomb, single):
        assert r["answer"] == "d" and r["left"] is False and r["reaped"], r  # DONE; no holder of the pipe is left
        assert r["ns_pid"] != r["host_pid"] and r["ns_pid"] > 1  # pid 1 of the namespace is the reaper
        assert r["seconds"] < 5  # not the 30 s the processes would sleep
    assert out["empty"] == "d" and out["reaper_exit"] == 0


def test_drop_capabilities_leaves_none_and_sets_no_new_privs():
    out = python_json(CAPS)
    assert out["before"] != 0  # the tests run as root: there was something to drop
    assert out["ok"] is True and out["nnp"] == "1"
    assert all(v == 0 for k, v in out["after"].items() if k in ("CapEff", "CapPrm", "CapInh", "CapAmb"))

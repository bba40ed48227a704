"""scripts/quickstart.sh end to end (README's first command): real HumanEval data, the real preprocess
CLI, the real reward server over loopback HTTP, real sandboxed execution. QUICKSTART reuses this venv."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from coderl.launch import quickstart_batch as qb
from tests.support import REPO_ROOT, out

pytestmark = pytest.mark.timeout(180)
ROW = re.compile(r"^(HumanEval/\d+)\s+(\w+)\s+([\d.]+)\s+([\d.]+)\s+([\d. -]+?)\s+([\d. -]+?)\s+([\d. -]+?)\s\s", re.M)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    outdir = tmp_path_factory.mktemp("qs")
    env = {**os.environ, "USE_CURRENT_ENV": "1", "PYTHON": sys.executable, "OUT_DIR": str(outdir)}
    proc = subprocess.run(["bash", str(REPO_ROOT / "scripts" / "quickstart.sh")], capture_output=True,
                          text=True, env=env, timeout=170, cwd=str(REPO_ROOT))
    return proc, outdir


@pytest.mark.slow
def test_quickstart_end_to_end(run):
    proc, outdir = run
    assert proc.returncode == 0, out(proc)
    for n in range(1, 7):
        assert f"[{n}/6]" in proc.stdout
    assert "wrote 164 HumanEval problems" in proc.stdout
    assert "isolation: bwrap" in proc.stdout, "CI has bubblewrap: the containment rows must be real"
    rows = {(m[1], m[2]): (float(m[3]), float(m[4])) for m in ROW.finditer(proc.stdout)}
    problems = sorted({p for p, _ in rows})
    assert len(problems) == 3 and len(rows) == 24, proc.stdout
    for p in problems:
        r = {name: rows[(p, name)] for name, _, _ in qb.SAMPLES}
        assert r["think_answer"] == (1.0, 1.0)
        assert r["think_answer"][0] > r["code_block"][0] > r["wrong"][0] > r["no_code"][0] == 0.0
        assert r["code_block"][1] == 1.0 and r["wrong"][1] == 0.0
        for evil in ("evil_env", "evil_net", "evil_file", "evil_exit"):
            assert r[evil][1] == 0.0, (p, evil)
    assert "all checks passed" in proc.stdout
    assert "bash scripts/train_grpo_7b_zero2.sh" in proc.stdout and "setup_env.sh" in proc.stdout
    assert (outdir / "data" / "train.jsonl").is_file() and (outdir / "humaneval.parquet").is_file()


@pytest.mark.slow
def test_quickstart_stops_its_server(run):
    proc, outdir = run
    m = re.search(r"\(isolation: \w+; pid (\d+);", proc.stdout)
    assert m, proc.stdout
    pid = int(m.group(1))
    assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text().lower()
    url = re.search(r"ready at (http://[\d.]+:\d+)", proc.stdout).group(1)
    port = int(url.rsplit(":", 1)[1])
    with socket.socket() as s:
        assert s.connect_ex(("127.0.0.1", port)) != 0, "the server's port must be closed after the quickstart"


def test_malicious_samples_do_escape_without_a_sandbox(tmp_path):
    """Control: run unsandboxed, each evil sample passes HumanEval's check, so the zeros above come from
    containment, not from broken samples. Harmless: reads a variable and a file the test made, connects to
    the test's own loopback listener, exits its own child process."""
    prob = qb._humaneval()["HumanEval/0"]
    secret = "qs-control-secret"
    host_file = tmp_path / "secret.txt"
    host_file.write_text(secret)
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        port = listener.getsockname()[1]
        resp = qb.responses(prob, secret, port, str(host_file))
        for (name, _, _), text in zip(qb.SAMPLES, resp, strict=True):
            if not name.startswith("evil"):
                continue
            code = text.split("```python\n", 1)[1].split("```", 1)[0]
            prog = f"{code}\n{prob['test']}\ncheck({prob['entry_point']})\nprint('PASSED')\n"
            proc = subprocess.run([sys.executable, "-c", prog], capture_output=True, text=True, timeout=30,
                                  env={**os.environ, "CODERL_QS_SECRET": secret})
            if name == "evil_exit":
                # exits 0 without running a single assert: a harness that trusts the exit code is fooled
                assert proc.returncode == 0 and "PASSED" not in proc.stdout, out(proc)
            else:
                assert proc.returncode == 0 and "PASSED" in proc.stdout, (name, out(proc))
            if name == "evil_env":
                bad = subprocess.run([sys.executable, "-c", prog], capture_output=True, text=True, timeout=30,
                                     env={k: v for k, v in os.environ.items() if k != "CODERL_QS_SECRET"})
                assert bad.returncode != 0, "without the secret the sample must fail"


def test_batch_is_openrlhf_shaped(tmp_path):
    """Contiguous groups of 8 per prompt, ChatML around the preprocessed messages, pads on both sides."""
    import json

    data = tmp_path / "train.jsonl"
    he = qb._humaneval()
    rows = []
    for tid in ("HumanEval/3", "HumanEval/7"):
        label = {"format": "humaneval", "tests": [he[tid]["test"]], "entry_point": he[tid]["entry_point"],
                 "source": "humaneval", "source_id": tid}
        rows.append(json.dumps({"input": [{"role": "system", "content": "S"}, {"role": "user", "content": tid}],
                                "label": json.dumps(label)}))
    data.write_text("\n".join(rows) + "\n")
    batch = qb.build_batch(data, 2, "s", 1, "/nonexistent")
    assert [t for t, _, _ in batch] == ["HumanEval/3"] * 8 + ["HumanEval/7"] * 8
    q = batch[0][2]
    assert "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nHumanEval/3<|im_end|>\n<|im_start|>assistant\n" in q
    assert "<|im_end|>" in q.rsplit("</answer>", 1)[1]
    assert any(q.startswith(qb.PAD) for _, _, q in batch) and any(q.endswith(qb.PAD) for _, _, q in batch)


@pytest.mark.parametrize("knob,value,needle", [("PROBLEMS", "abc", "PROBLEMS must be a whole number (got 'abc')"),
                                               ("WORKERS", "0", "PROBLEMS and WORKERS must be at least 1")])
def test_bad_knob_fails_before_any_step(tmp_path, knob, value, needle):
    env = {**os.environ, "USE_CURRENT_ENV": "1", "PYTHON": sys.executable, "OUT_DIR": str(tmp_path / "qs"), knob: value}
    proc = subprocess.run(["bash", str(REPO_ROOT / "scripts" / "quickstart.sh")], capture_output=True, text=True,
                          env=env, timeout=60, cwd=str(REPO_ROOT))
    assert proc.returncode == 2 and needle in proc.stderr, out(proc)
    assert "[1/6]" not in proc.stdout and not (tmp_path / "qs").exists()

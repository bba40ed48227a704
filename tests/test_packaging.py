"""pyproject.toml's packaging: a non-editable install into a fresh venv runs the console scripts from another
directory, finds its configs, and puts only `coderl` (no generic `rewards`/`data`) into site-packages."""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import tomllib

from tests.support import REPO_ROOT, out

PYPROJECT = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())
SETUPTOOLS = PYPROJECT["tool"]["setuptools"]


def test_every_subpackage_is_listed():
    """A folder with an __init__.py that pyproject's package list misses would be absent from a wheel
    (the bug this layout replaced: data/schemas/ was not packaged)."""
    found = {"coderl.configs"}
    for name, folder in SETUPTOOLS["package-dir"].items():
        for init in (REPO_ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(REPO_ROOT / folder)
            found.add(".".join([name, *rel.parts]))
    assert sorted(SETUPTOOLS["packages"]) == sorted(found)


def test_no_import_outside_the_coderl_namespace():
    """Every import of project code goes through `coderl.` (re-run /work/notes/migrate_imports.py style
    rewrites when a branch brings old ones); no sys.path hacks in the package or scripts."""
    bare = re.compile(r"^\s*(from|import)\s+(rewards|data|launch|configs)(\.|\s)", re.M)
    offenders = []
    for folder in ("rewards", "data", "launch", "configs", "scripts", "tests"):
        for p in (REPO_ROOT / folder).rglob("*.py"):
            text = p.read_text(encoding="utf-8")
            if bare.search(text) or (folder != "tests" and "sys.path.insert" in text):
                offenders.append(str(p.relative_to(REPO_ROOT)))
    assert not offenders


# The source modules without a test module of their own, each with the tests that exercise it and why there.
# Every other module of the packaged folders has tests/<folder>/test_<module>.py (tests/rewards/sandbox/
# test_pool.py for rewards/sandbox/pool.py); a new module gets its own, or a line here.
COVERED_ELSEWHERE = {
    **dict.fromkeys(("data/schemas/apps_taco.py", "data/schemas/coderm.py", "data/schemas/humaneval.py",
                     "data/schemas/mbpp.py", "data/schemas/verl.py", "data/stats.py"),
                    ("tests/data/test_preprocess.py", "one converter per schema, and stats.json, through the real CLI")),
    "data/writers.py": ("tests/rewards/integrations/test_trl.py", "the TRL and verl row layouts, read by those trainers"),
    "data/synthetic/make_task.py": ("tests/data/synthetic/test_tasks.py", "the family's CLI, with its tasks"),
    "data/synthetic/primitives.py": ("tests/data/synthetic/test_tasks.py", "what the tasks are built of"),
    "launch/quickstart_batch.py": ("tests/scripts/test_quickstart.py", "the batch scripts/quickstart.sh sends"),
    **dict.fromkeys(("learning_check/dry_run.py", "learning_check/model.py", "learning_check/report.py",
                     "learning_check/sft.py", "learning_check/tokenizer.py", "learning_check/warm_start.py"),
                    ("tests/learning_check/test_learning_check.py", "the stages of scripts/learning_check.sh, run")),
    "rewards/api.py": ("tests/rewards/test_reward_server.py", "the request and response bodies, posted to the real "
                       "server (and test_backend.py: the in-process client speaks them too)"),
    "rewards/atomic_outputs.py": ("tests/data/test_io.py", "commit and abort, through io.AtomicOutputs: the "
                                  "preprocessor's outputs"),
    "rewards/errors.py": ("tests/data/test_preprocess.py", "the messages of bad input and missing dependencies"),
    **dict.fromkeys(("rewards/evaluation/compare.py", "rewards/evaluation/report.py", "rewards/evaluation/samples.py",
                     "rewards/evaluation/tasks.py"), ("tests/rewards/evaluation/test_cli.py", "coderl-evaluate, run")),
    "rewards/reward_func.py": ("tests/rewards/integrations/test_backend.py", "the function OpenRLHF >= 0.6 imports"),
    "rewards/stepwise_json.py": ("tests/rewards/test_prompt_index.py", "reading the JSONL the index is built from"),
    "rewards/sandbox/plan.py": ("tests/rewards/sandbox/test_pool.py", "what a label's jobs run and how they are judged"),
    "rewards/sandbox/results.py": ("tests/rewards/sandbox/test_pool.py", "the results the pool returns"),
    "rewards/sandbox/syscall_filter.py": ("tests/rewards/sandbox/inside/test_seccomp.py", "the filter, applied"),
    **dict.fromkeys(("rewards/sandbox/inside/codecs_builtin.py", "rewards/sandbox/inside/codecs_class.py",
                     "rewards/sandbox/inside/codecs_std.py"),
                    ("tests/rewards/sandbox/inside/test_codec.py", "one registry of codecs: every registered codec's "
                     "examples round-trip through the driver (codec.py)")),
    **dict.fromkeys(tuple(f"rewards/sandbox/inside/formats/{m}.py"
                          for m in ("asserts", "call", "common", "humaneval", "stdio", "unittests")),
                    ("tests/rewards/sandbox/inside/formats/test_registry.py", "one registry of formats: each module's "
                     "whole contract, through REGISTRY (and tests/data/test_verify.py: keep's cuts)")),
    **dict.fromkeys(("rewards/sandbox/inside/judge.py", "rewards/sandbox/inside/candidate.py",
                     "rewards/sandbox/inside/worker.py", "rewards/sandbox/inside/processes.py",
                     "rewards/sandbox/inside/hygiene.py"),
                    ("tests/rewards/sandbox/test_channel.py", "the channel's semantics need the judge, the candidate and "
                     "the worker together (and test_integrity.py, test_adversarial.py)")),
}


def test_tests_mirror_the_source_tree():
    """tests/<folder>/ holds the tests of <folder>/ (a subpackage, scripts/ or patches/), and every module of the
    packaged folders has its test module, or a line of COVERED_ELSEWHERE naming the tests that cover it."""
    stray = []
    for init in (REPO_ROOT / "tests").rglob("__init__.py"):
        rel = init.parent.relative_to(REPO_ROOT / "tests")
        if rel.parts and not (REPO_ROOT / rel).is_dir():
            stray.append(str(rel))
    assert not stray, f"test folders with no source folder of the same path: {stray}"
    # test modules at the top of tests/ test the project as a whole (packaging, the docs' examples), not one module
    assert sorted(p.name for p in (REPO_ROOT / "tests").glob("test_*.py")) == ["test_docs.py", "test_packaging.py"]
    untested = []
    for folder in SETUPTOOLS["package-dir"].values():
        for module in sorted((REPO_ROOT / folder).rglob("*.py")):
            rel = module.relative_to(REPO_ROOT)
            mirror = REPO_ROOT / "tests" / rel.parent / f"test_{module.name}"
            if module.name != "__init__.py" and not mirror.is_file() and str(rel) not in COVERED_ELSEWHERE:
                untested.append(str(rel))
    assert not untested, f"modules with neither tests/<path>/test_<module>.py nor a COVERED_ELSEWHERE line: {untested}"
    missing = [t for t, _ in COVERED_ELSEWHERE.values() if not (REPO_ROOT / t).is_file()]
    assert not missing, f"COVERED_ELSEWHERE names tests that do not exist: {missing}"


def test_benchmarks_do_not_import_the_test_suite():
    """What benchmarks and tests share lives in scripts/bench/ (workloads.py, fidelity/): tests import from there."""
    imports = re.compile(r"^\s*(from|import)\s+tests(\.|\s)", re.M)
    offenders = [str(p.relative_to(REPO_ROOT)) for p in (REPO_ROOT / "scripts").rglob("*.py")
                 if imports.search(p.read_text(encoding="utf-8"))]
    assert not offenders


def _imports(folder: str) -> dict[str, set[str]]:
    """The project modules each module under folder/ imports (`coderl.` names, relative ones resolved), read with ast."""
    found = {}
    for p in (REPO_ROOT / folder).rglob("*.py"):
        rel = p.relative_to(REPO_ROOT)
        package = ["coderl", *rel.parts[:-1]]  # the package a relative import starts from
        names = set()
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = package[:len(package) - node.level + 1] if node.level else []
                module = ".".join([*base, *([node.module] if node.module else [])])
                names.update([module, *(f"{module}.{a.name}" for a in node.names)])
        found[str(rel)] = {n for n in names if n.startswith("coderl.")}
    return found


def test_data_imports_rewards_never_the_reverse():
    """data/ (the preprocessor) builds on rewards/ (the label format, the sandbox for --verify); nothing under
    rewards/ imports data/. And the reward API's bodies come from rewards/api.py: no module imports the HTTP
    server's module for them."""
    rewards = _imports("rewards")
    assert not {m: sorted(n for n in names if n.startswith("coderl.data")) for m, names in rewards.items()
                if any(n.startswith("coderl.data") for n in names)}
    assert any(n.startswith("coderl.rewards") for names in _imports("data").values() for n in names)
    assert not [m for m, names in rewards.items() if "coderl.rewards.reward_server" in names]


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """A fresh venv that sees this interpreter's packages (for the deps) with coderl installed NOT editable."""
    root = tmp_path_factory.mktemp("pkg")
    venv = root / "venv"
    base = Path(sys.base_prefix) / "bin" / f"python{sys.version_info[0]}.{sys.version_info[1]}"
    subprocess.run([str(base), "-m", "venv", "--without-pip", str(venv)], check=True, timeout=60)
    site = venv / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
    # The test env's site-packages as plain path entries: its .pth files (an editable coderl among them)
    # are not run, so the only coderl the venv can import is the one installed below.
    (site / "_deps.pth").write_text("".join(f"{p}\n" for p in sys.path if p.endswith("site-packages")))
    # pip builds a local project in place: build from a copy so the checkout gets no build/ or egg-info
    src = root / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md", *SETUPTOOLS["package-dir"].values()):
        copy = shutil.copytree if (REPO_ROOT / name).is_dir() else shutil.copy2
        copy(REPO_ROOT / name, src / name, **({"ignore": shutil.ignore_patterns("__pycache__")}
                                               if copy is shutil.copytree else {}))
    py = venv / "bin" / "python"
    proc = subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                           "--disable-pip-version-check", "--no-cache-dir", str(src)],
                          capture_output=True, text=True, timeout=240, cwd=str(root))
    assert proc.returncode == 0, out(proc)
    return venv, site


def _run(venv: Path, cwd: Path, *cmd: str, timeout: int = 120) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return subprocess.run(list(cmd), capture_output=True, text=True, timeout=timeout, cwd=str(cwd), env=env)


@pytest.mark.slow
def test_wheel_layout(installed):
    venv, site = installed
    top = {p.name for p in site.iterdir()}
    assert "coderl" in top
    assert not top & {"rewards", "data", "launch", "configs", "scripts", "tests"}, sorted(top)
    assert not (site / "coderl" / "__init__.py").exists()  # a namespace: no code runs on `import coderl`
    for f in ("rewards/sandbox/inside/worker.py", "data/schemas/mbpp.py", "launch/preflight.py",
              "configs/reward.yaml", "configs/prompts.yaml", "configs/ds_config_zero2.json"):
        assert (site / "coderl" / f).is_file(), f


@pytest.mark.slow
def test_console_scripts_from_another_directory(installed, tmp_path):
    venv, site = installed
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    rows = [{"task_id": f"T/{i}", "prompt": f"def add(a, b):\n    \"\"\"Add {i}.\"\"\"\n",
             "canonical_solution": "    return a + b\n", "entry_point": "add",
             "test": "def check(candidate):\n    assert candidate(1, 2) == 3\n"} for i in range(4)]
    pq.write_table(pa.Table.from_pylist(rows), elsewhere / "he.parquet")
    proc = _run(venv, elsewhere, "coderl-preprocess", "--input_dir", "he.parquet", "--output_dir", "out",
                "--test_ratio", "0", "--splits", "hash", "--no_progress")  # HumanEval, a benchmark, as train rows
    assert proc.returncode == 0, out(proc)
    lines = (elsewhere / "out" / "train.jsonl").read_text().splitlines()
    assert len(lines) == 4
    row = json.loads(lines[0])
    # the system prompt came from the installed configs/prompts.yaml
    assert row["input"][0]["role"] == "system" and "<think>" in row["input"][0]["content"]
    assert "def add(a, b)" in row["input"][1]["content"]

    for script, flag in (("coderl-reward-server", "--data_path"), ("coderl-evaluate", "--completion_format"),
                         ("coderl-reward-log", "--out"), ("coderl-preflight", "estimate")):
        proc = _run(venv, elsewhere, script, "--help")
        assert proc.returncode == 0 and flag in proc.stdout, out(proc)
        proc = _run(venv, elsewhere, script, "--version")  # the installed distribution's version
        assert proc.returncode == 0 and f"(coderl {PYPROJECT['project']['version']})" in proc.stdout, out(proc)
    # the default config is the installed one, not a checkout's
    proc = _run(venv, elsewhere, str(venv / "bin" / "python"), "-c",
                "from coderl.rewards.config import DEFAULT_CONFIG_PATH as p; print(p, p.is_file())")
    assert proc.returncode == 0, out(proc)
    path, exists = proc.stdout.split()
    assert exists == "True" and Path(path).is_relative_to(site), path


def test_script_dirs_do_not_shadow_stdlib():
    """`python data/preprocess.py` puts data/ first on sys.path: a module there named like a stdlib one
    replaces it, unless the interpreter already imported the real one at startup (data/io.py: `io` is)."""
    proc = subprocess.run([sys.executable, "-c", "import sys, json; print(json.dumps(sorted(sys.modules)))"],
                          capture_output=True, text=True, timeout=60, cwd="/")
    startup = set(json.loads(proc.stdout))
    for folder in ("data", "rewards", "scripts"):
        d = REPO_ROOT / folder
        names = {p.stem for p in d.glob("*.py")} | {p.name for p in d.iterdir() if p.is_dir()}
        assert not (names & sys.stdlib_module_names) - startup, folder


def test_checkout_links_every_package_folder():
    # coderl/ in the checkout is the same mapping as package-dir, as symlinks: used where coderl is not installed.
    links = {p.name: os.readlink(p) for p in (REPO_ROOT / "coderl").iterdir()}
    assert links == {name.split(".", 1)[1]: f"../{folder}" for name, folder in SETUPTOOLS["package-dir"].items()}


def test_user_commands_run_from_a_checkout_without_install(tmp_path):
    """A bare GPU box runs `python rewards/reward_server.py` from a checkout nobody pip-installed: the
    dependencies are importable, coderl is not (site-packages on PYTHONPATH skips the editable .pth)."""
    site = next(p for p in sys.path if p.endswith("site-packages"))
    env = {**os.environ, "PYTHONPATH": site}
    probe = subprocess.run([sys.executable, "-S", "-c", "import coderl"], env=env, cwd=tmp_path, capture_output=True,
                           text=True)
    assert probe.returncode != 0  # the premise: not installed for this interpreter
    for script in ("rewards/reward_server.py", "data/preprocess.py", "scripts/evaluate.py"):
        proc = subprocess.run([sys.executable, "-S", str(REPO_ROOT / script), "--help"], env=env, cwd=tmp_path,
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0 and "usage:" in proc.stdout, (script, out(proc))
    wrapper = tmp_path / "py"
    wrapper.write_text(f"#!/bin/sh\nexec {sys.executable} -S \"$@\"\n")
    wrapper.chmod(0o755)
    shell = (f'source "{REPO_ROOT}/scripts/lib/common.sh"; coderl_importable "{wrapper}" && '
             f'"{wrapper}" -m coderl.launch.preflight --help >/dev/null && echo importable')
    proc = subprocess.run(["bash", "-c", shell], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.stdout.strip() == "importable", out(proc)

"""The judge's third-party packages: the table the host compiles and the finder the worker installs; no sandbox."""

import base64
import marshal
import subprocess
import sys

from coderl.rewards.sandbox import isolation
from coderl.rewards.sandbox.inside import packages


def _table(**sources):
    return {name: [False, base64.b64encode(marshal.dumps(compile(src, f"/coderl-judge/{name}.py", "exec"))).decode(),
                   f"/coderl-judge/{name}.py"] for name, src in sources.items()}


def test_the_host_table_holds_pytest_and_what_it_imports_only():
    table = isolation.judge_packages()
    for name in ("pytest", "_pytest.python", "_pytest.assertion.rewrite", "pluggy", "iniconfig", "packaging.version",
                 "py", "pygments.lexers.python", "pygments.formatters.terminal"):
        assert name in table, name
    assert table["_pytest"][0] is True and table["_pytest.python"][0] is False
    assert "pygments.lexers.c_cpp" not in table  # of pygments' 9 MB, what pytest's terminal writer imports
    assert all(origin.startswith("/coderl-judge/") for _, _, origin in table.values())


def test_the_finder_loads_a_received_module_and_never_shadows_the_standard_library():
    table = _table(coderl_received="VALUE = 42\n", json="VALUE = 'fake'\n")
    finder = packages.Finder(table)
    sys.meta_path.append(finder)
    try:
        import coderl_received
        assert coderl_received.VALUE == 42 and coderl_received.__file__ == "/coderl-judge/coderl_received.py"
        import json
        assert not hasattr(json, "VALUE")  # the standard library's finder comes first
    finally:
        sys.meta_path.remove(finder)
        sys.modules.pop("coderl_received", None)


def test_install_imports_the_preload_in_a_fresh_interpreter():
    # a fresh interpreter without site-packages, as the sandbox's: pytest comes from the table alone
    code = ("import sys, json; from coderl.rewards.sandbox.inside import packages; "
            "from coderl.rewards.sandbox import isolation; t = isolation.judge_packages(); "
            "sys.path[:] = [p for p in sys.path if 'site-packages' not in p]; "
            "[sys.modules.pop(m) for m in list(sys.modules) if m.split('.')[0] in ('pytest', '_pytest', 'pluggy')]; "
            "print(packages.install(t), sys.modules['pytest'].__file__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "['pytest'] /coderl-judge/pytest/__init__.py"
    assert packages.install({}) == []

"""inside/judge.py: which standard-library modules the program's names bring into the tests (issue 25, class 2)."""

from __future__ import annotations

import sys

from coderl.rewards.sandbox.inside import judge, protocol


def _module_handle(name, subs=None):
    info = {protocol.INFO_KIND: protocol.KIND_MODULE, protocol.INFO_REF: [name, ""]}
    if subs is not None:
        info[protocol.INFO_SUBMODULES] = subs
    return ["h", 1, info]


def test_a_standard_library_module_the_program_imported_is_the_judges_own():
    assert judge._program_module(_module_handle("json")) is sys.modules["json"]
    mod = judge._program_module(_module_handle("xml", ["xml.dom", "xml.dom.minidom", "wave"]))
    assert mod is sys.modules["xml"] and mod.dom.minidom is sys.modules["xml.dom.minidom"]
    assert "wave" not in sys.modules  # only submodules of the module itself


def test_never_a_module_whose_import_runs_a_program_nor_one_outside_the_standard_library():
    for name in ("this", "antigravity", "unittest.__main__", "idlelib.idle", "test.autotest", "__hello__", "pytest",
                 "coderl", "os.path..x", "json.no_such_module", 5, "x" * 300):
        assert judge._stdlib_module(name) is None, name
    assert "this" not in sys.modules and "antigravity" not in sys.modules


def test_only_a_handle_of_a_module_with_its_reference_counts():
    for enc in (["R", "json", ""], ["h", 1, {protocol.INFO_KIND: protocol.KIND_OBJECT, protocol.INFO_REF: ["json", ""]}],
                ["h", 1, {protocol.INFO_KIND: protocol.KIND_MODULE}], ["h", 1, {protocol.INFO_KIND: protocol.KIND_MODULE,
                                                                        protocol.INFO_REF: ["json", "dumps"]}], 3):
        assert judge._program_module(enc) is None, enc

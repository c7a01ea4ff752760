"""The simulator stands where a real GPU host would, so it imports nothing of gdnconsole (else the tests
would check the console against itself). import-linter checks its packages (gdnconsole/sim/contracts.toml);
this also covers the stand-in ``pynvml``, one module that import-linter cannot take as a root."""

from __future__ import annotations

import ast
from pathlib import Path

import gdnconsole

SIM = Path(gdnconsole.__file__).parent / "sim"


def imported_modules(path: Path) -> set[str]:
    """Every module a file imports, at any depth (inside functions too)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


def test_no_simulator_file_imports_gdnconsole() -> None:
    files = sorted(SIM.rglob("*.py"))
    assert SIM / "pynvml.py" in files and len(files) > 20
    offenders = {
        str(f.relative_to(SIM)): sorted(m for m in imported_modules(f) if m.split(".")[0] == "gdnconsole")
        for f in files
    }
    assert {f: m for f, m in offenders.items() if m} == {}


def test_the_check_sees_an_import_inside_a_function(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text("def f():\n    from gdnconsole.config import hosts\n")
    assert "gdnconsole.config" in imported_modules(probe)

"""Modules talk through public names: no module of the package imports another's underscore names
(a name with a leading underscore may change without notice; a helper two modules share gets a
public name in the module that owns it)."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src" / "unlearnkit"


def private_imports(root: Path) -> list[str]:
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("unlearnkit"):
                found += [
                    f"{path.relative_to(root.parent)}:{node.lineno} imports {node.module}.{a.name}"
                    for a in node.names
                    if a.name.startswith("_") and not a.name.startswith("__")
                ]
    return found


def test_no_module_imports_another_modules_underscore_names():
    assert private_imports(SRC) == []


def test_the_check_sees_an_underscore_import(tmp_path):
    pkg = tmp_path / "unlearnkit"
    pkg.mkdir()
    (pkg / "a.py").write_text(
        "from unlearnkit.b import _helper, public\nfrom unlearnkit.b import __version__\n"
    )
    assert private_imports(pkg) == ["unlearnkit/a.py:1 imports unlearnkit.b._helper"]

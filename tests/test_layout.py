"""The package's layout: every import points down, and docs/architecture.md's "Where things live" lists
every module.

The floors, bottom to top, are :data:`FLOORS`. A module may import from its own floor or any floor below,
never from one above: a part (an objective, a metric, the trainer) must not know the pipeline that uses it.
The imports are read from the source with :mod:`ast` (function-level imports included, since those are
where upward arrows hide), so the test sees what runs, not what a tool guesses.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "unlearnkit"

# (floor, dotted prefixes): the longest matching prefix names a module's floor.
FLOORS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("foundations", ("errors", "io", "config", "catalog", "fingerprint", "methods")),
    ("data and attention", ("data", "attention")),
    ("tokens and models", ("tokens", "models", "gguf_models")),
    ("losses, metrics, the world, attribution", ("objectives", "metrics", "world", "attribution")),
    ("evaluation and protocols", ("evaluation", "protocols")),
    ("training", ("train",)),
    ("attacks that train, the report", ("evaluation.audit", "report")),
    ("pipelines", ("pipelines", "api")),
    ("the command line", ("commands", "cli")),
)


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def floor_of(module: str) -> int | None:
    """Index into :data:`FLOORS` of ``module`` (dotted, without ``unlearnkit.``); None when unplaced."""
    best, best_len = None, -1
    for i, (_, prefixes) in enumerate(FLOORS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best_len:
                best, best_len = i, len(prefix)
    return best


def imported_modules(module: str, path: Path) -> list[tuple[int, str]]:
    """(line, dotted module without ``unlearnkit.``) of every unlearnkit import in ``path``."""
    is_package = path.name == "__init__.py"
    here = module.split(".") if module else []
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = here if is_package else here[:-1]
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, *([node.module] if node.module else [])])
            elif (node.module or "").split(".")[0] == "unlearnkit":
                target = node.module.removeprefix("unlearnkit").lstrip(".")
            else:
                continue
            names = [a.name for a in node.names]
            # `from unlearnkit.x import y` where y is itself a module imports that module
            subs = [f"{target}.{n}".lstrip(".") for n in names if f"{target}.{n}".lstrip(".") in MODULES]
            found += [(node.lineno, s) for s in subs] or [(node.lineno, target)]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "unlearnkit":
                    found.append((node.lineno, alias.name.removeprefix("unlearnkit").lstrip(".")))
    return found


def test_every_module_has_a_floor():
    unplaced = [m for m in MODULES if m and floor_of(m) is None]
    assert not unplaced, f"place these modules on a floor in tests/test_layout.py FLOORS: {unplaced}"


def test_no_import_runs_up_a_floor():
    upward = []
    for module, path in MODULES.items():
        if not module:
            continue
        mine = floor_of(module)
        for line, target in imported_modules(module, path):
            theirs = floor_of(target) if target else None
            if theirs is not None and mine is not None and theirs > mine:
                upward.append(
                    f"{path.relative_to(ROOT)}:{line}: {module} ({FLOORS[mine][0]}) imports {target} "
                    f"({FLOORS[theirs][0]})"
                )
    assert not upward, "imports running up:\n" + "\n".join(upward)


def test_the_checker_sees_an_upward_import(tmp_path, monkeypatch):
    """The rule above must be able to fail: a function-level import of a pipeline from an objective."""
    fake = tmp_path / "objectives" / "bad.py"
    fake.parent.mkdir()
    fake.write_text(
        "def f():\n    from unlearnkit.pipelines.unlearn import unlearn\n    from ..io import write_json\n"
    )
    found = imported_modules("objectives.bad", fake)
    assert (2, "pipelines.unlearn") in found and (3, "io") in found
    assert floor_of("pipelines.unlearn") > floor_of("objectives.bad") > floor_of("io")
    assert (
        floor_of("evaluation.audit.relearning") > floor_of("train.trainer") > floor_of("evaluation.evaluate")
    )


def readme_tree() -> list[str]:
    """Paths (relative to ``src/unlearnkit/``) drawn in docs/architecture.md's "Where things live" tree."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split("## Where things live", 1)[1].split("\n## ", 1)[0]
    block = section.split("```text", 1)[1].split("```", 1)[0]
    paths, stack = [], []
    for raw in block.splitlines():
        m = re.match(r"^( *)([\w.]+/?)(\s|$)", raw)
        if not m or raw.strip().startswith("#"):
            continue
        depth, name = len(m.group(1)) // 2, m.group(2)
        stack = stack[:depth] + [name]
        paths.append("".join(stack))
    return paths


def test_the_readme_tree_lists_every_module_and_nothing_else():
    drawn = set(readme_tree())
    assert drawn, "docs/architecture.md: no ```text tree under '## Where things live'"
    actual = {str(p.relative_to(PACKAGE)) for p in MODULES.values() if p.name != "__init__.py"}
    actual |= {
        str(p.relative_to(PACKAGE)) + "/"
        for p in PACKAGE.rglob("*")
        if p.is_dir() and p.name != "__pycache__"
    }
    actual = {a for a in actual if not a.startswith("resources/") or a == "resources/"}
    assert not actual - drawn, f"docs/architecture.md 'Where things live' misses: {sorted(actual - drawn)}"
    assert not drawn - actual, (
        f"docs/architecture.md 'Where things live' names what does not exist: {sorted(drawn - actual)}"
    )


def test_one_docstring_format_args_blocks_only_where_tensors_come_in():
    """docs/CONTRIBUTING.md: prose docstrings everywhere; an ``Args:`` block (with shapes) only in the
    objectives and the attention patch, where every public loss has one."""
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        tensors = rel.startswith("objectives/") or rel == "attention.py"
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Module)):
                continue
            doc = ast.get_docstring(node) or ""
            for header in ("Parameters\n----", ":param ", ":returns:", "Returns:\n"):
                assert header not in doc, f"{rel}: {getattr(node, 'name', 'module')} uses {header!r}"
            if "Args:" in doc:
                assert tensors, f"{rel}: {node.name} has an Args: block (prose, as docs/CONTRIBUTING.md says)"
            if tensors and isinstance(node, ast.FunctionDef) and node.name.endswith("_loss"):
                if not node.name.startswith("_"):
                    assert "Args:" in doc or "as in :func:" in doc, (
                        f"{rel}: {node.name} lists no Args: (shapes)"
                    )

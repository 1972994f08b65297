"""Every shipped recipe under ``configs/`` (the whole tree, except ``configs/accelerate``) is valid.

A recipe is flat YAML (at most one nesting level) with a ``method`` key naming a registered method,
optional top-level ``model`` / ``data`` / ``retain_model`` keys, and otherwise only keys that
``build_configs`` accepts for that method (TrainConfig fields or that method's own fields). Its
leading comment block gives the exact ``unlearnkit unlearn`` command (which must agree with the
keys), the hardware and what it reproduces.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from unlearnkit.config import ALIASES, build_configs, load_recipe
from unlearnkit.train.methods import METHODS, get_method

CONFIGS = Path(__file__).resolve().parent.parent / "configs"
TOP_LEVEL = ("model", "data", "retain_model")  # not training settings: which model / data / oracle
SKIP = ("accelerate",)
SEARCH_SPACES = "spaces"  # configs/*/spaces/: Optuna search spaces (params / fixed) for `sweep`, not recipes


def _recipes() -> list[Path]:
    return sorted(
        p
        for p in CONFIGS.rglob("*")
        if p.suffix in (".yaml", ".yml")
        and p.is_file()
        and p.relative_to(CONFIGS).parts[0] not in SKIP
        and SEARCH_SPACES not in p.relative_to(CONFIGS).parts
    )


RECIPES = _recipes()


def _id(path: Path) -> str:
    return str(path.relative_to(CONFIGS))


def _header(path: Path) -> str:
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break
        lines.append(line.lstrip("#").strip())
    return "\n".join(lines)


def test_the_tree_is_walked_and_covers_every_benchmark():
    assert len(RECIPES) >= 40
    families = {p.relative_to(CONFIGS).parts[0] for p in RECIPES}
    assert {"tofu", "muse", "wmdp"} <= families
    # nested folders are found too (configs/tofu/<model>/<split>/<method>.yaml)
    assert any(len(p.relative_to(CONFIGS).parts) >= 4 for p in RECIPES)


def test_representation_methods_are_registered():
    """The WMDP recipes need ``rmu`` and ``asu_rmu`` in the registry."""
    assert "rmu" in METHODS and "asu_rmu" in METHODS


@pytest.mark.parametrize("path", RECIPES, ids=_id)
def test_recipe_is_valid(path: Path):
    values = load_recipe(path)
    nested = [k for k, v in values.items() if isinstance(v, dict | list)]
    assert not nested, f"{path}: more than one nesting level at {nested}"
    assert "method" in values, f"{path}: no 'method' key"
    name = str(values.pop("method"))
    method = get_method(name)
    # spelled as the registry (and `unlearnkit methods`) spells it, so a search for the name finds it
    assert name == method.name and METHODS[name] is method, (
        f"{path}: write method: {method.name} (not {name!r})"
    )
    for key in TOP_LEVEL:
        if key in values:
            assert isinstance(values[key], str) and values[key].strip(), f"{path}: '{key}' must be a string"
    train_cfg, method_cfg = build_configs(method.config, values, where=str(path), ignore=TOP_LEVEL)
    # every setting the recipe writes reaches the configuration (none dropped or routed elsewhere)
    built = {**dataclasses.asdict(train_cfg), **dataclasses.asdict(method_cfg)}
    for key, value in values.items():
        if key in TOP_LEVEL:
            continue
        field = ALIASES.get(key, key)
        assert field in built, f"{path}: '{key}' is not a setting of {method.name}"
        got = built[field]
        if isinstance(value, list):
            value = ",".join(str(x) for x in value)
        if isinstance(got, float) and not isinstance(value, bool):
            assert got == pytest.approx(float(value), rel=1e-12), f"{path}: {key}={value!r} became {got!r}"
        else:
            assert got == value or str(got) == str(value), f"{path}: {key}={value!r} became {got!r}"


@pytest.mark.parametrize("path", RECIPES, ids=_id)
def test_recipe_header_gives_the_command_and_hardware(path: Path):
    header = _header(path)
    assert header, f"{path}: must start with a comment block"
    assert "Hardware:" in header and "Reproduces" in header, (
        f"{path}: say what it reproduces and on what hardware"
    )
    command = re.search(r"unlearnkit unlearn (.+?)--output (\S+)", header.replace("\\\n", " "), re.S)
    assert command, f"{path}: no 'unlearnkit unlearn ... --output DIR' command in the header"
    args = " ".join(command.group(1).split())
    values = load_recipe(path)
    assert f"--config configs/{_id(path)}" in args
    assert f"--method {values['method']}" in args
    for key in ("model", "data"):
        if key in values:
            assert f"--{key} {values[key]}" in args, f"{path}: the command's --{key} differs from '{key}:'"


@pytest.mark.parametrize("path", RECIPES, ids=_id)
def test_recipe_data_spec_is_resolvable_form(path: Path):
    """``data`` names a benchmark ``resolve_data`` knows (no download here: only the name is checked)."""
    from unlearnkit.data.sources import KNOWN

    data = load_recipe(path).get("data")
    if data is not None:
        assert data in KNOWN or not re.match(r"^[a-z]+:", data), f"{path}: unknown benchmark '{data}'"


def _resolved(path: Path):
    values = load_recipe(path)
    method = get_method(str(values.pop("method")))
    return build_configs(method.config, values, where=str(path), ignore=TOP_LEVEL)


@pytest.mark.parametrize("path", RECIPES, ids=_id)
def test_recipes_follow_the_reference_code_conventions(path: Path):
    """docs/CONVENTIONS.md: recipes that reproduce published numbers average over answer tokens as the
    TOFU / open-unlearning / ASU code does; WMDP's optimiser has no weight decay and no clipping
    (transformers.AdamW, no clip_grad_norm); the ASU MUSE runs use weight decay 0."""
    family = path.relative_to(CONFIGS).parts[0]
    train_cfg, method_cfg = _resolved(path)
    if family in ("tofu", "muse"):
        assert method_cfg.loss_reduction == "token", path
    if family == "muse":
        assert train_cfg.weight_decay == 0.0, path
    if family == "wmdp":
        assert train_cfg.weight_decay == 0.0 and train_cfg.max_grad_norm == 0, path

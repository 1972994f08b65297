"""The quickstart's lab ships with the package (src/unlearnkit/resources/lab, bench/ship_lab.py): its
models are the lab's current ones, the lab copies them instead of training, and trains where they do
not match."""

from __future__ import annotations

import fnmatch
import hashlib
import json
from pathlib import Path

import pytest

import unlearnkit.pipelines.embedded as E

ROOT = Path(__file__).resolve().parents[1]
LAB = ROOT / "src" / "unlearnkit" / "resources" / "lab"
STALE = "the shipped lab is not the lab's current one: run python bench/ship_lab.py"


class Trained(Exception):
    """Raised where the lab would train a model."""


@pytest.fixture
def no_training(monkeypatch):
    import unlearnkit.train.finetune as finetune

    def refuse(*args, **kwargs):
        raise Trained

    monkeypatch.setattr(finetune, "finetune", refuse)
    monkeypatch.delenv(E.TRAIN_LAB_ENV, raising=False)


@pytest.fixture
def ship_lab(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "bench"))
    import ship_lab

    return ship_lab


def test_the_shipped_lab_is_the_labs_current_one(tmp_path, no_training, ship_lab):
    """Every model of the quickstart's lab is shipped under the cache key the lab computes now: a
    change to the lab's code, data, recipe or LAB_VERSION that forgets to rebuild them fails here."""
    assert (LAB / "manifest.json").is_file(), STALE
    assert ship_lab.check(tmp_path, log=lambda line: None) == [], STALE
    manifest = E.shipped_manifest()
    assert manifest["lab_version"] == E.LAB_VERSION
    assert sorted(e["folder"] for e in manifest["models"].values()) == ["base", "oracle", "target"]


def test_the_quickstarts_lab_copies_the_shipped_models_instead_of_training(tmp_path, no_training):
    """prepare_embedded's ensure_lab on an empty cache: the base, the target and the oracle come from
    the package (no training step), byte for byte, each with a card naming this cache's paths."""
    from unlearnkit.pipelines.quickstart import WORLD

    lines: list[str] = []
    world, base, target, oracle = E.ensure_lab("tofu", tmp_path, dict(WORLD), 0, lines.append)
    assert not any(w in line for line in lines for w in (": training", "trained in", "side by side")), lines
    assert sum("shipped with unlearnkit" in line for line in lines) == 3, lines
    entries = E.shipped_manifest()["models"]
    for path in (base, target, oracle):
        entry = entries[f"{path.parent.name}/{path.name}"]
        for name, sha in entry["files"].items():
            assert hashlib.sha256((path / name).read_bytes()).hexdigest() == sha
        card = json.loads((path / "unlearnkit.json").read_text(encoding="utf-8"))
        assert card["train_loss"] == entry["trained"]["train_loss"]
    assert json.loads((base / "unlearnkit.json").read_text())["world"] == str(world)
    target_card = json.loads((target / "unlearnkit.json").read_text())
    assert target_card["base_model"] == str(base)
    assert target_card["unlearn_defaults"]["train"]["loss_reduction"] == "sequence"
    lines.clear()  # the second time: from the cache
    assert E.ensure_lab("tofu", tmp_path, dict(WORLD), 0, lines.append)[1:] == (base, target, oracle)
    assert len(lines) == 3 and all("from the cache" in line for line in lines), lines


def _fake_lab(tmp_path: Path, monkeypatch, sha: str | None = None) -> Path:
    """A shipped lab of one model folder (a config.json) filed under key ``k``, role ``base``."""
    lab = tmp_path / "lab"
    (lab / "base").mkdir(parents=True)
    (lab / "base" / "config.json").write_text('{"x": 1}\n')
    real = hashlib.sha256((lab / "base" / "config.json").read_bytes()).hexdigest()
    files = {"config.json": sha or real}
    manifest = {"models": {"k/base": {"folder": "base", "files": files, "trained": {"train_loss": 1.5}}}}
    monkeypatch.setattr(E, "shipped_lab_dir", lambda: lab)
    monkeypatch.setattr(E, "shipped_manifest", lambda: manifest)
    return tmp_path / "cache" / "models"


def test_a_model_under_a_shipped_key_is_copied_with_its_card(tmp_path, monkeypatch, no_training):
    models = _fake_lab(tmp_path, monkeypatch)
    lines: list[str] = []
    path = E.train_cached(models / "k" / "base", "base", None, [], {}, {"kind": "base"}, lines.append)
    assert (path / "config.json").read_text() == '{"x": 1}\n'
    assert json.loads((path / "unlearnkit.json").read_text()) == {"kind": "base", "train_loss": 1.5}
    assert (path / "README.md").is_file() and "shipped with unlearnkit" in lines[0]


@pytest.mark.parametrize("case", ["other key", "other bytes", "asked to train"])
def test_the_lab_trains_where_the_shipped_models_do_not_match(tmp_path, monkeypatch, no_training, case):
    models = _fake_lab(tmp_path, monkeypatch, sha="0" * 64 if case == "other bytes" else None)
    if case == "asked to train":
        monkeypatch.setenv(E.TRAIN_LAB_ENV, "1")
    path = models / ("other" if case == "other key" else "k") / "base"

    def build():
        raise Trained

    with pytest.raises(Trained):  # build() is the first step of training
        E.train_cached(path, "base", build, [], {}, {"kind": "base"}, lambda line: None)
    assert not path.exists()
    with E.shipped_only(), pytest.raises(E.LabNotShipped):
        E.train_cached(path, "base", build, [], {}, {"kind": "base"}, lambda line: None)


def test_the_wheel_carries_the_shipped_lab():
    tomllib = pytest.importorskip("tomllib")
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    package = ROOT / "src" / "unlearnkit"
    files = [p.relative_to(package).as_posix() for p in LAB.rglob("*") if p.is_file()]
    assert files
    for name in files:
        assert any(fnmatch.fnmatch(name, pattern) for pattern in patterns["unlearnkit"]), name


def test_the_shipped_lab_is_small():
    """A few MB of fp32 safetensors (0.8M parameters: about 3 MB a model), nothing else of size."""
    sizes = {p.name: p.stat().st_size for p in LAB.rglob("*") if p.is_file()}
    assert sum(sizes.values()) < 15e6, sizes
    assert all(size < 4e6 for size in sizes.values()), sizes

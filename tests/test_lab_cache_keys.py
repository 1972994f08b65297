"""The embedded lab's cache: a world or model made by other code is never reused."""

from __future__ import annotations

import shutil
from pathlib import Path

import unlearnkit.pipelines.embedded as E


def test_the_code_digest_follows_the_bytes_of_the_code(tmp_path: Path, monkeypatch):
    package = tmp_path / "pkg"
    shutil.copytree(
        Path(E.__file__).resolve().parents[1], package, ignore=shutil.ignore_patterns("__pycache__")
    )
    monkeypatch.setattr(E, "__file__", str(package / "pipelines" / "embedded.py"))
    before = {
        name: E.code_digest(parts) for name, parts in (("world", E.WORLD_CODE), ("train", E.TRAINING_CODE))
    }
    assert before == {
        name: E.code_digest(parts) for name, parts in (("world", E.WORLD_CODE), ("train", E.TRAINING_CODE))
    }
    trainer = package / "train" / "trainer.py"
    trainer.write_text(trainer.read_text(encoding="utf-8") + "\n# changed\n", encoding="utf-8")
    assert E.code_digest(E.TRAINING_CODE) != before["train"]
    assert E.code_digest(E.WORLD_CODE) == before["world"]  # only the code that trains changed
    news = package / "world" / "news.py"  # a file inside a folder part
    news.write_text(news.read_text(encoding="utf-8") + "\n# changed\n", encoding="utf-8")
    assert E.code_digest(E.WORLD_CODE) != before["world"]


def test_every_named_code_part_exists():
    package = Path(E.__file__).resolve().parents[1]
    for part in (*E.WORLD_CODE, *E.TRAINING_CODE):
        assert (package / part).exists(), part


def test_a_world_written_by_other_code_is_not_reused(tmp_path: Path, monkeypatch):
    params = dict(n_authors=6, facts_per_author=2, n_general=6, n_real_authors=1, n_agents=0, n_articles=0)
    first = E.ensure_world(tmp_path, params)
    assert E.ensure_world(tmp_path, params) == first  # the same code: the cached world
    monkeypatch.setattr(E, "code_digest", lambda parts: "other code")
    assert E.ensure_world(tmp_path, params) != first

"""Tests for the fictitious-authors world generator (unlearnkit.world)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from unlearnkit.errors import UserError
from unlearnkit.world import FACT_TYPES, FIELDS, SPLITS, generate_world, write_world

SMALL = {"n_authors": 20, "facts_per_author": 6, "n_general": 30}
AUTHOR_SPLITS = ("forget", "holdout", "retain")


@pytest.fixture(scope="module")
def world() -> dict[str, list[dict]]:
    return generate_world()


def _rows(world: dict[str, list[dict]]) -> list[dict]:
    return [row for split in SPLITS for row in world[split]]


def _files(directory: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(directory)): path.read_bytes()
        for path in sorted(directory.rglob("*"))
        if path.is_file()
    }


def test_write_is_byte_identical_for_same_seed(tmp_path: Path) -> None:
    counts_a = write_world(tmp_path / "a", seed=7, **SMALL)
    counts_b = write_world(tmp_path / "b", seed=7, **SMALL)
    files_a, files_b = _files(tmp_path / "a"), _files(tmp_path / "b")
    top = ["forget.jsonl", "general.jsonl", "holdout.jsonl", "retain.jsonl", "world.json"]
    assert [name for name in sorted(files_a) if "/" not in name] == top
    assert {
        "corpus/general.jsonl",
        "corpus/hazard.jsonl",
        "muse/forget.jsonl",
        "wmdp/mc_hazard.jsonl",
    } <= set(files_a)
    assert files_a == files_b
    assert counts_a == counts_b


def test_written_files_match_generate_world(tmp_path: Path) -> None:
    counts = write_world(tmp_path / "w", seed=3, **SMALL)
    expected = generate_world(seed=3, **SMALL)
    for split in SPLITS:
        raw = (tmp_path / "w" / f"{split}.jsonl").read_text(encoding="utf-8")
        assert raw.endswith("\n")
        rows = [json.loads(line) for line in raw.splitlines()]
        assert rows == expected[split]
        assert counts[split] == len(rows)
        fields = [*FIELDS, "source"] if split == "general" else list(FIELDS)
        assert all(list(row) == fields for row in rows)
    meta = json.loads((tmp_path / "w" / "world.json").read_text(encoding="utf-8"))
    assert meta["counts"] == counts
    assert meta["parameters"]["seed"] == 3
    assert meta["parameters"]["n_authors"] == 20


def test_write_is_byte_identical_across_processes(tmp_path: Path) -> None:
    # String hashing is randomised per process; the files must not depend on set or dict hash order.
    code = (
        "import sys; from unlearnkit.world import write_world; write_world(sys.argv[1], seed=5, n_authors=12)"
    )
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        subprocess.run([sys.executable, "-c", code, str(tmp_path / hash_seed)], check=True, env=env)
    assert _files(tmp_path / "1") == _files(tmp_path / "2")


def test_different_seeds_give_different_worlds() -> None:
    a, b = generate_world(seed=0, **SMALL), generate_world(seed=1, **SMALL)
    assert {row["author"] for s in AUTHOR_SPLITS for row in a[s]} != {
        row["author"] for s in AUTHOR_SPLITS for row in b[s]
    }
    assert {row["author"] for row in a["retain"]} != {row["author"] for row in b["retain"]}
    assert [row["answer"] for row in a["general"]] != [row["answer"] for row in b["general"]]


def test_key_order(world: dict[str, list[dict]]) -> None:
    for split in SPLITS:
        for row in world[split]:
            # general rows name their part as TOFU does (world facts / real authors)
            assert tuple(row) == (FIELDS + ("source",) if split == "general" else FIELDS)


def test_split_counts() -> None:
    world = generate_world(
        n_authors=50, facts_per_author=4, forget_fraction=0.2, holdout_fraction=0.1, n_general=33
    )
    authors = {split: {row["author"] for row in world[split]} for split in AUTHOR_SPLITS}
    assert len(authors["forget"]) == 10
    assert len(authors["holdout"]) == 5
    assert len(authors["retain"]) == 35
    assert len(world["forget"]) == 40
    assert len(world["holdout"]) == 20
    assert len(world["retain"]) == 140
    assert len([r for r in world["general"] if r["source"] == "world_facts"]) == 33
    assert len([r for r in world["general"] if r["source"] == "real_authors"]) == 10 * 4


def test_tiny_world_has_every_author_split_non_empty() -> None:
    world = generate_world(n_authors=3, forget_fraction=0.01, holdout_fraction=0.01, facts_per_author=1)
    for split in AUTHOR_SPLITS:
        assert len({row["author"] for row in world[split]}) == 1


def test_no_author_in_two_splits_and_names_unique(world: dict[str, list[dict]]) -> None:
    authors = {split: {row["author"] for row in world[split]} for split in AUTHOR_SPLITS}
    assert not authors["forget"] & authors["retain"]
    assert not authors["forget"] & authors["holdout"]
    assert not authors["holdout"] & authors["retain"]
    every = authors["forget"] | authors["retain"] | authors["holdout"]
    assert len(every) == 100
    # No first or last name is shared by two authors, so a name word identifies one author.
    words = [word for name in every for word in name.split()]
    assert len(words) == len(set(words)) == 200
    others = {row["author"] for row in world["general"]}  # countries and real authors
    assert not {word for c in others for word in c.split()} & set(words)


def test_each_author_has_the_first_fact_types_in_order() -> None:
    world = generate_world(facts_per_author=7, **{k: v for k, v in SMALL.items() if k != "facts_per_author"})
    expected = [fact_type.name for fact_type in FACT_TYPES[:7]]
    for split in AUTHOR_SPLITS:
        by_author: dict[str, list[str]] = {}
        for row in world[split]:
            by_author.setdefault(row["author"], []).append(row["fact_type"])
        assert by_author and all(types == expected for types in by_author.values())


def test_at_least_ten_fact_types_with_several_templates() -> None:
    assert len(FACT_TYPES) >= 10
    for fact_type in FACT_TYPES:
        assert len(fact_type.questions) >= 2 and len(fact_type.answers) >= 2


def _frame(text: str, value: str) -> tuple[str, str]:
    """What a sentence says around its fact: the text before and after ``value``."""
    start = text.index(value)
    return text[:start], text[start + len(value) :]


def assert_tofu_perturbed(row: dict) -> None:
    """TOFU's convention: each perturbed answer is the paraphrased answer with only the fact changed, and
    not the trained answer's wording (then the truth ratio would compare wordings, not facts)."""
    head, tail = _frame(row["paraphrased_answer"], row["fact_value"])
    answer_head, answer_tail = _frame(row["answer"], row["fact_value"])
    for wrong in row["perturbed_answer"]:
        assert row["fact_value"] not in wrong
        assert wrong.startswith(head) and wrong.endswith(tail), (wrong, row["paraphrased_answer"])
        assert len(wrong) > len(head) + len(tail)
        assert not (wrong.startswith(answer_head) and wrong.endswith(answer_tail)), (wrong, row["answer"])


def test_perturbed_answers(world: dict[str, list[dict]]) -> None:
    for row in _rows(world):
        perturbed = row["perturbed_answer"]
        assert len(perturbed) == 5
        assert len(set(perturbed)) == 5
        assert row["answer"] not in perturbed
        assert_tofu_perturbed(row)


def test_the_perturbed_check_rejects_the_trained_wording(world: dict[str, list[dict]]) -> None:
    """The check above fails on perturbed answers written in the answer's template (the old bug)."""
    row = world["forget"][0]
    head, tail = _frame(row["answer"], row["fact_value"])
    wrong_values = ["Zzz", "Yyy"]
    bad = {**row, "perturbed_answer": [head + v + tail for v in wrong_values]}
    with pytest.raises(AssertionError):
        assert_tofu_perturbed(bad)


def test_fact_span_and_paraphrases(world: dict[str, list[dict]]) -> None:
    for row in _rows(world):
        start, end = row["fact_span"]
        assert row["answer"][start:end] == row["fact_value"]
        assert row["fact_value"] in row["paraphrased_answer"]
        assert row["paraphrased_answer"] != row["answer"]
        assert row["paraphrased_question"] != row["question"]
        assert row["author"] in row["question"] and row["author"] in row["answer"]
        assert row["answer"][0].isupper() and row["answer"].endswith(".")


def test_answers_are_short(world: dict[str, list[dict]]) -> None:
    for row in _rows(world):
        assert 4 <= len(row["answer"].split()) <= 20


def test_value_pools_are_shared_across_splits(world: dict[str, list[dict]]) -> None:
    # A forget author's birthplace must be a value the retain split also uses, or it would be trivially novel.
    retain_places = {row["fact_value"] for row in world["retain"] if row["fact_type"] == "birthplace"}
    forget_places = {row["fact_value"] for row in world["forget"] if row["fact_type"] == "birthplace"}
    assert len(retain_places) >= 20
    assert forget_places & retain_places


@pytest.mark.parametrize(
    "kwargs",
    [
        {"n_authors": 2},
        {"n_authors": 3.0},
        {"facts_per_author": 0},
        {"facts_per_author": len(FACT_TYPES) + 1},
        {"forget_fraction": 0.0},
        {"forget_fraction": 1.0},
        {"holdout_fraction": 0},
        {"holdout_fraction": -0.1},
        {"forget_fraction": 0.6, "holdout_fraction": 0.5},
        {"n_authors": 4, "forget_fraction": 0.5, "holdout_fraction": 0.5},
        {"n_general": -1},
        {"seed": "0"},
    ],
)
def test_bad_parameters_raise_user_error(kwargs: dict, tmp_path: Path) -> None:
    with pytest.raises(UserError) as info:
        generate_world(**kwargs)
    assert "\n" not in str(info.value)
    with pytest.raises(UserError):
        write_world(tmp_path / "out", **kwargs)
    assert list(tmp_path.iterdir()) == []


def test_refuses_non_empty_directory_and_leaves_no_temp(tmp_path: Path) -> None:
    out = tmp_path / "world"
    out.mkdir()
    (out / "keep.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(UserError, match="not empty"):
        write_world(out, **SMALL)
    assert (out / "keep.txt").read_text(encoding="utf-8") == "mine"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["world"]


def test_empty_existing_directory_is_filled(tmp_path: Path) -> None:
    out = tmp_path / "world"
    out.mkdir()
    write_world(out, **SMALL)
    assert (out / "world.json").is_file()
    assert sorted(path.name for path in tmp_path.iterdir()) == ["world"]


def test_overwrite_replaces_old_folder(tmp_path: Path) -> None:
    out = tmp_path / "world"
    write_world(out, seed=1, **SMALL)
    (out / "stale.txt").write_text("old", encoding="utf-8")
    write_world(out, seed=2, overwrite=True, **SMALL)
    assert not (out / "stale.txt").exists()
    assert json.loads((out / "world.json").read_text(encoding="utf-8"))["parameters"]["seed"] == 2
    assert sorted(path.name for path in tmp_path.iterdir()) == ["world"]


def test_output_path_that_is_a_file_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "world"
    target.write_text("x", encoding="utf-8")
    with pytest.raises(UserError):
        write_world(target, **SMALL)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["world"]


def test_failed_write_leaves_no_temp_and_keeps_old_world(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "world"
    write_world(out, seed=1, **SMALL)
    before = _files(out)

    def boom(*args: object, **kwargs: object) -> str:
        raise OSError("disk full")

    monkeypatch.setattr("unlearnkit.world.generator._jsonl", boom)
    with pytest.raises(OSError, match="disk full"):
        write_world(out, seed=2, overwrite=True, **SMALL)
    assert _files(out) == before
    assert sorted(path.name for path in tmp_path.iterdir()) == ["world"]


def test_general_split_is_about_countries(world: dict[str, list[dict]]) -> None:
    general = [r for r in world["general"] if r["source"] == "world_facts"]
    assert len(general) == 100
    assert len({row["fact_type"] for row in general}) >= 5
    for row in general:
        assert len(row["answer"].split()) <= 12
    capitals: dict[str, str] = {}
    for row in general:
        if row["fact_type"] == "capital":
            assert capitals.setdefault(row["author"], row["fact_value"]) == row["fact_value"]
    assert len(set(capitals.values())) == len(capitals)

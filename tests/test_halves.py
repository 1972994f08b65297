"""Selection and test halves of every part of a benchmark (unlearnkit.data.halves)."""

from __future__ import annotations

import json

import pytest

from unlearnkit.data.halves import entities_of, split_halves
from unlearnkit.errors import UserError


def _keys(rows) -> list[str]:
    return [json.dumps(r, sort_keys=True) for r in rows]


def _rows_of(bench, part: str):
    return bench.general_parts[part.split(".", 1)[1]] if part.startswith("general.") else bench.split(part)


def test_every_part_is_cut_into_two_disjoint_halves_of_whole_authors(mini_bench):
    sel, test, info = split_halves(mini_bench, seed=0)
    parts = ["forget", "retain", "holdout", *(f"general.{source}" for source in mini_bench.general_parts)]
    assert len(parts) == 5 and set(info) == set(parts)  # the world's general rows come in two parts
    for part in [*parts, "general"]:
        whole, a, b = (
            _keys(_rows_of(mini_bench, part)),
            _keys(_rows_of(sel, part)),
            _keys(_rows_of(test, part)),
        )
        assert a and b, part
        assert not set(a) & set(b), f"{part}: a row is in both halves"
        assert sorted(a + b) == sorted(whole), f"{part}: the halves are not a partition"
        authors_a = {(r.get("source"), r["author"]) for r in _rows_of(sel, part)}
        authors_b = {(r.get("source"), r["author"]) for r in _rows_of(test, part)}
        assert not authors_a & authors_b, f"{part}: an author straddles the halves"
        if part != "general":
            assert info[part]["by"] == "author field"
            assert info[part]["selection_entities"] == sorted(a for _, a in authors_a)
    assert type(sel) is type(mini_bench) and sel.path == mini_bench.path


def test_the_cut_is_deterministic_in_the_seed_and_keeps_the_sweeps_forget_split(mini_bench):
    from unlearnkit.pipelines.sweep import forget_entities, split_forget

    first = split_halves(mini_bench, seed=3)[2]
    assert first == split_halves(mini_bench, seed=3)[2]
    cuts = {json.dumps(split_halves(mini_bench, seed=s)[2]["retain"]["selection_entities"]) for s in range(6)}
    assert len(cuts) > 1  # the seed decides
    entities, _ = forget_entities(mini_bench.forget)
    assert split_forget(entities, 3)[0] == first["forget"]["selection_rows"]


def _qa(n: int, prefix: str, **extra) -> list[dict]:
    return [{"question": f"{prefix} q{i}?", "answer": f"{prefix} a{i}.", **extra} for i in range(n)]


def test_tofu_parts_are_cut_by_author_blocks_and_general_parts_by_row():
    from unlearnkit.data.sources import SourceBenchmark

    parts = {
        "real_authors": _qa(10, "ra", source="real_authors"),
        "world_facts": _qa(12, "wf", source="world_facts"),
    }
    bench = SourceBenchmark(
        path=".",
        forget=_qa(40, "f"),
        retain=_qa(60, "r"),
        holdout=_qa(40, "h"),
        general=[r for rows in parts.values() for r in rows],
        name="tofu:forget01",
        general_parts=parts,
        eval_splits={"retain": _qa(40, "rp")},
    )
    sel, test, info = split_halves(bench, seed=1)
    for part, rows in (("forget", 40), ("retain", 60), ("holdout", 40), ("eval.retain", 40)):
        assert info[part]["by"] == "TOFU author blocks of 20", part
        for block in range(rows // 20):
            members = set(range(20 * block, 20 * block + 20))
            assert members <= set(info[part]["selection_rows"]) or members <= set(info[part]["test_rows"])
    for source in parts:
        assert info[f"general.{source}"]["by"].startswith("rows")
        assert not set(_keys(sel.general_parts[source])) & set(_keys(test.general_parts[source]))
    # general stays the concatenation of its parts, in each half
    assert _keys(sel.general) == _keys(sel.general_parts["real_authors"] + sel.general_parts["world_facts"])
    assert not set(_keys(sel.eval_split("retain"))) & set(_keys(test.eval_split("retain")))


def test_general_rows_are_cut_within_each_source():
    from unlearnkit.data import Benchmark

    general = _qa(8, "wf", source="world_facts") + _qa(4, "ra", source="real_authors")
    bench = Benchmark(path=".", forget=_qa(4, "f"), retain=_qa(4, "r"), general=general)
    sel, test, info = split_halves(bench, seed=0)
    assert "within each source" in info["general"]["by"]
    for half in (sel, test):
        assert {r["source"] for r in half.general} == {"world_facts", "real_authors"}


def test_a_part_with_one_entity_cannot_be_halved_and_empty_parts_stay_empty():
    from unlearnkit.data import Benchmark

    one = [{"question": f"q{i}", "answer": "a", "author": "Only One"} for i in range(5)]
    bench = Benchmark(path=".", forget=_qa(4, "f"), retain=one)
    with pytest.raises(UserError, match="the retain set has 1 entity .*'Only One'.* at least 2"):
        split_halves(bench, seed=0)
    sel, test, info = split_halves(Benchmark(path=".", forget=_qa(4, "f"), retain=_qa(4, "r")), seed=0)
    assert sel.holdout == [] == test.general and "holdout" not in info


def test_entities_fall_back_to_rows_without_an_author_field():
    rows = _qa(3, "x")
    assert entities_of(rows) == (["row-0", "row-1", "row-2"], "rows (no entity field)")
    assert entities_of(rows, "tofu:forget01", "general.world_facts")[1].startswith("rows")


def test_entities_of_unequal_size_are_balanced_by_rows():
    from unlearnkit.data import Benchmark

    rows = [
        {"question": f"q{i}", "answer": "a", "author": "Big" if i < 6 else f"small{i}"} for i in range(12)
    ]
    bench = Benchmark(path=".", forget=_qa(4, "f"), retain=rows)
    for seed in range(5):
        info = split_halves(bench, seed)[2]["retain"]
        assert {len(info["selection_rows"]), len(info["test_rows"])} == {6}  # Big alone vs the 6 small

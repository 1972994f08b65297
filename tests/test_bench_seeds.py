"""bench/_common.py's seed helpers on hand-made numbers: a finished seed is kept and reused only for the
same settings, a difference is called only when every seed agrees and it exceeds the spread, and the
TokenUnlearn and ASU benches render mean +- sd tables from per-seed rows (no model is trained)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import _common  # noqa: E402


def test_paired_calls_a_difference_only_when_every_seed_agrees_beyond_the_spread():
    rows = lambda a, b: {"t": {"u": a}, "b": {"u": b}}  # noqa: E731
    clear = {0: rows(0.6, 0.4), 1: rows(0.5, 0.4), 2: rows(0.55, 0.4)}
    assert _common.paired(clear, "t", "b", "u")["reading"] == "higher"
    assert _common.paired(clear, "b", "t", "u")["reading"] == "lower"
    mixed = {0: rows(0.6, 0.4), 1: rows(0.3, 0.4), 2: rows(0.55, 0.4)}  # one seed the other way
    d = _common.paired(mixed, "t", "b", "u")
    assert (d["reading"], d["higher_on"], d["seeds"]) == ("tie", 2, 3)
    assert d["mean"] == pytest.approx((0.2 - 0.1 + 0.15) / 3)
    noisy = {0: rows(0.41, 0.4), 1: rows(0.9, 0.4)}  # same sign, but the mean is within one sd
    assert _common.paired(noisy, "t", "b", "u")["reading"] == "tie"
    assert _common.paired(clear, "t", "missing", "u") is None


def test_seed_table_cells_are_mean_and_sample_sd():
    per_seed = {0: {"npo": {"u": 0.5}}, 1: {"npo": {"u": 0.7}}, 2: {"npo": {}}}
    table = _common.seed_table(per_seed, ["u"], head="method").splitlines()
    assert table[0] == "| method | u |"
    assert table[2] == "| npo | 0.600 \u00b1 0.141 |"


def test_over_seeds_reuses_a_finished_seed_only_for_the_same_settings(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    calls = []

    def run(seed):
        calls.append(seed)
        return {"seed": seed}

    assert _common.over_seeds("x", [0, 1], {"a": 1}, run) == {0: {"seed": 0}, 1: {"seed": 1}}
    assert _common.over_seeds("x", [1, 2], {"a": 1}, run) == {1: {"seed": 1}, 2: {"seed": 2}}
    assert calls == [0, 1, 2]  # seed 1 came from its file
    _common.over_seeds("x", [1], {"a": 2}, run)  # other settings: run again
    assert calls == [0, 1, 2, 1]
    assert (tmp_path / ".bench_work" / "seeds" / "x-seed1.json").is_file()


def _metrics(u: float) -> dict:
    return {
        "forget_quality": 0.01,
        "model_utility": u,
        "forget_rougeL_recall": 0.2,
        "forget_prob": 0.1,
        "retain_rougeL_recall": 0.6,
        "forget_token_entropy": 0.9,
        "general_rougeL_recall": 0.8,
    }


def test_tokenunlearn_renders_every_variant_against_its_base_over_seeds():
    import token_ablation

    def seed(shift: float) -> dict:
        variants = {"target": _metrics(0.56), "oracle": _metrics(0.56)}
        for base in token_ablation.BASES:
            variants[base] = _metrics(0.40)
            variants[f"t-{base}"] = {
                **_metrics(0.45 + shift),
                "fact_overlap": 0.25,
                "selected_fraction": 0.24,
            }
            variants[f"s-{base}"] = _metrics(0.40 + shift)
        return {"variants": variants, "ablation": {"t-npo r=0.2 alpha=0.7": _metrics(0.5)}, "chance": 0.2}

    md = token_ablation.render({0: seed(0.0), 1: seed(0.02)})
    assert "| t-npo | 1.0e-02" not in md  # cells are mean +- sd, not one seed's
    assert "| t-ga - ga | " in md and "(2/2 up: higher)" in md
    assert "(1/2 up: tie)" in md  # s-ga: +0.00 and +0.02
    assert "0.200 \u00b1 0.000" in md


def test_asu_renders_the_sweep_and_the_token_kinds_over_seeds():
    import asu_sweep

    def seed(p: float) -> dict:
        kinds = {"target": {"name": 0.9, "fact": p, "other": 0.9, "fact / other": p / 0.9}}
        return {"sweep": {"asu tau=5.0 lambda=1.0": _metrics(0.5)}, "token_kinds": kinds}

    md = asu_sweep.render({0: seed(0.8), 1: seed(0.6)})
    assert "| target | 0.900 \u00b1 0.000 | 0.700 \u00b1 0.141 | 0.900 \u00b1 0.000 |" in md
    assert "| asu tau=5.0 lambda=1.0 | " in md


def test_a_user_folder_has_the_splits_and_its_corpus_only(tmp_path):
    import user_folder

    world = tmp_path / "world"
    (world / "corpus").mkdir(parents=True)
    (world / "augment").mkdir()
    for name in (*user_folder.SPLITS, "world.json", "augment/forget.jsonl"):
        (world / name).write_text("{}\n")
    for name in ("general.jsonl", "qa.jsonl", "hazard.jsonl"):
        (world / "corpus" / name).write_text(f'{{"text": "{name}"}}\n')
    out = user_folder.user_folder(world, tmp_path / "mine", ("general.jsonl",))
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*.jsonl")) == sorted(
        [*user_folder.SPLITS, "corpus/general.jsonl"]
    )
    assert not (out / "world.json").exists() and not (out / "augment").exists()
    six = user_folder.repeated(
        [world / "corpus" / "general.jsonl", world / "corpus" / "qa.jsonl"], 3, tmp_path / "r.jsonl"
    )
    assert six.read_text().splitlines() == ['{"text": "general.jsonl"}', '{"text": "qa.jsonl"}'] * 3


def test_the_user_folder_table_counts_the_seeds_over_the_bar():
    import user_folder

    def row(recall, kept):
        return {
            "fact_recall": recall,
            "rougeL_recall": 0.9,
            "general_base": 0.9,
            "general_after": 0.9 * kept,
            "general_rougeL_after": 0.9,
            "general_kept": kept,
            "epochs": 40.0,
        }

    md = user_folder.render(
        {0: {"passages: recorded": row(1.0, 0.76)}, 1: {"passages: recorded": row(0.95, 0.92)}}
    )
    assert "| passages: recorded | 0.975 \u00b1 0.035 |" in md
    assert (
        "- passages: recorded: general kept >= 0.9 on 1 of 2 seeds; trained facts (fact recall) >= 0.9 on 2 of 2"
        in md
    )


def test_measure_seeds_writes_every_seed_and_keys_the_cache_by_the_extra_settings(tmp_path, monkeypatch):
    import argparse

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(_common, "RESULTS", tmp_path / "results")
    calls = []

    def run(args, seed):
        calls.append(seed)
        return {"row": {"x": float(seed)}}

    args = argparse.Namespace(seeds="0,2", seed=0, cache_dir=None, threads=1)
    render = lambda per_seed: "## t\n\n" + _common.seed_table(per_seed, ["x"])  # noqa: E731
    _common.measure_seeds("t", args, run, render, "python bench/t.py", max_items=100)
    data = json.loads((tmp_path / "results" / "t.json").read_text())
    assert data["seeds"] == {"0": {"row": {"x": 0.0}}, "2": {"row": {"x": 2.0}}}
    assert data["provenance"]["settings"]["world_seed"] == [0, 2]
    assert data["provenance"]["settings"]["max_items"] == 100
    assert "| row | 1.000 \u00b1 1.414 |" in (tmp_path / "results" / "t.md").read_text()
    _common.measure_seeds("t", args, run, render, "python bench/t.py", max_items=100)
    assert calls == [0, 2]  # both seeds from their files
    _common.measure_seeds("t", args, run, render, "python bench/t.py", max_items=50)
    assert calls == [0, 2, 0, 2]  # other settings: measured again

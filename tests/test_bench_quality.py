"""bench/quality.py's verdicts over seeds, on hand-made tables (no model is trained)."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import quality  # noqa: E402


def _seed(fq: float, null: float, t_para: float = 0.9, o_para: float = 0.02, wf: float = 0.9) -> dict:
    return {
        "base": {"world_facts_rougeL_recall": 1.0},
        "target": {
            "forget_quality": fq,
            "forget_para_fact_recall": t_para,
            "forget_fact_recall": 1.0,
            "forget_rougeL_recall": 0.9,
        },
        "oracle": {
            "forget_quality": 1.0,
            "forget_para_fact_recall": o_para,
            "world_facts_rougeL_recall": wf,
            "forget_fact_recall": 0.0,
            "forget_rougeL_recall": 0.3,
        },
        quality.NULL_ORACLE: {"forget_quality": null},
    }


def test_mean_sd_by_hand():
    assert quality.mean_sd([1.0, 3.0]) == (2.0, pytest.approx(math.sqrt(2.0)))
    assert quality.mean_sd([5.0]) == (5.0, 0.0)
    assert quality.mean_sd([2.0, float("nan")]) == (2.0, 0.0)


def test_tofu_checks_hold_only_when_every_seed_does():
    good = {s: _seed(1e-20, 0.5) for s in range(5)}
    lines = quality.checks("tofu", good)
    assert not any("DOES NOT HOLD" in line for line in lines)
    # one seed whose target is not told from the oracle fails the "every seed" statement
    bad = {**good, 4: _seed(0.2, 0.5)}
    assert "DOES NOT HOLD" in quality.checks("tofu", bad)[0]
    # the null may fail on one seed of five, not on two
    one = {**good, 0: _seed(1e-20, 0.01)}
    two = {**one, 1: _seed(1e-20, 0.02)}
    assert "DOES NOT HOLD" not in quality.checks("tofu", one)[1]
    assert "DOES NOT HOLD" in quality.checks("tofu", two)[1]
    # the oracle stating the forget facts in the new wording breaks the separation
    leaky = {**good, 2: _seed(1e-20, 0.5, o_para=0.3)}
    assert "DOES NOT HOLD" in quality.checks("tofu", leaky)[2]


def test_seed_table_cells_are_mean_and_sd():
    per_seed = {0: {"target": {"x": 0.2}}, 1: {"target": {"x": 0.4}}}
    table = quality.seed_table(per_seed, ["x"])
    assert "| target | 0.300 \u00b1 0.141 |" in table


def test_each_seed_is_kept_and_a_rerun_reuses_it(monkeypatch, tmp_path):
    """A run stopped part-way resumes at the first unfinished seed: a finished (miniature, seed) is not
    measured again by the same code and settings, and the section reads the same numbers."""
    from types import SimpleNamespace

    monkeypatch.chdir(tmp_path)
    calls = []

    def fake_run_seed(benchmark, methods, args, seed):
        calls.append(seed)
        rows = {
            "target": {"wmdp_hazard_acc": 0.8 + seed / 100, "mmlu_general_acc": 0.5},
            "oracle": {"wmdp_hazard_acc": 0.26, "mmlu_general_acc": 0.5},
        }
        return rows, SimpleNamespace(forget=[0] * 7, retain=[0] * 3, holdout=[], general=[])

    monkeypatch.setattr(quality, "run_seed", fake_run_seed)
    args = SimpleNamespace(seed=0, cache_dir=None, threads=1)
    first, rows = quality.run_benchmark("wmdp", ["rmu"], args, [0, 1])
    assert calls == [0, 1] and "7 hazardous / 3 general passages" in first
    again, rows_again = quality.run_benchmark("wmdp", ["rmu"], args, [0, 1, 2])
    assert calls == [0, 1, 2]  # only the new seed ran
    assert rows_again["1"] == rows["1"] and "7 hazardous / 3 general passages" in again
    quality.run_benchmark("wmdp", ["rmu", "ga"], args, [0])  # other methods: other settings, measured again
    assert calls == [0, 1, 2, 0]


def test_the_recorded_command_names_the_benchmarks_it_measured():
    assert quality.reproduce_command(["tofu", "muse", "wmdp"], "quality") == "python bench/quality.py"
    assert quality.reproduce_command(["tofu"], "quality") == "python bench/quality.py --benchmarks tofu"
    assert quality.reproduce_command(["muse", "wmdp"], "quality_rawtext") == (
        "python bench/quality.py --benchmarks muse,wmdp --result-name quality_rawtext"
    )

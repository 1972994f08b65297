"""bench/sweep.py's verdicts on hand-made entries (no sweep is run): the goal, the keep/drop decision
between the tuned and the shared recipe, the table and the recipe header. The decision must read the
selection half only: in every entry here the selection and test halves disagree."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import sweep as bench_sweep  # noqa: E402


def row(seed: int, test: tuple[float, float], sel: tuple[float, float], rouge: float = 0.3) -> dict:
    """A stored seed row: (forget quality, model utility) on the test half (top level) and selection."""
    return {
        "forget_quality": test[0],
        "model_utility": test[1],
        "forget_rougeL_recall": rouge,
        "seed": seed,
        "selection": {"forget_quality": sel[0], "model_utility": sel[1], "forget_rougeL_recall": rouge},
    }


def disagreeing_entry() -> dict:
    """Selection: tuned meets the goal on 3/3 seeds, shared on 0/3. Test: the other way round.

    Oracle utility: selection 0.56 (goal bar 0.98 x 0.56 = 0.5488), test 0.60 (bar 0.588)."""
    return {
        "reference": {"oracle": {"forget_quality": 1.0, "model_utility": 0.60, "forget_rougeL_recall": 0.3}},
        "reference_selection": {"oracle": {"model_utility": 0.56}},
        # tuned: selection FQ 0.8 >= 0.5, utility 0.55 >= 0.5488; test FQ 0.01
        "tuned": [row(s, test=(0.01, 0.60), sel=(0.8, 0.55)) for s in range(3)],
        # shared: selection FQ 0.9 but utility 0.40 < 0.5488; test FQ 0.9, utility 0.60 >= 0.588
        "shared": [row(s, test=(0.9, 0.60), sel=(0.9, 0.40)) for s in range(3)],
    }


def test_goal_needs_forget_quality_and_utility_against_the_oracle():
    # goal: forget quality >= 0.5 and utility >= 0.98 x the oracle's (0.98 x 0.5 = 0.49)
    assert bench_sweep.goal_met({"forget_quality": 0.5, "model_utility": 0.495}, 0.5)
    assert not bench_sweep.goal_met({"forget_quality": 0.49, "model_utility": 0.495}, 0.5)
    assert not bench_sweep.goal_met({"forget_quality": 0.9, "model_utility": 0.48}, 0.5)
    assert not bench_sweep.goal_met({}, 0.5)


def test_the_keep_decision_follows_the_selection_half_not_the_test_half():
    entry = disagreeing_entry()
    better, verdict = bench_sweep.tuned_beats_shared(entry, 0.56)
    assert better
    # selection: tuned 3/3, mean FQ 0.8, utility 0.55; shared 0/3, 0.9, 0.40
    assert verdict == (
        "tuned kept (selection half: tuned: goal 3/3, FQ 0.8, utility 0.550; shared: 0/3, 0.9, 0.400; "
        "paired over 3 seeds: goal tuned higher, FQ tuned lower, utility tuned higher)"
    )
    # swap the halves of every row: now the selection half favours the shared recipe
    for r in entry["tuned"] + entry["shared"]:
        top = {k: r[k] for k in ("forget_quality", "model_utility")}
        r.update(r["selection"])
        r["selection"] = {**r["selection"], **top}
    better, verdict = bench_sweep.tuned_beats_shared(entry, 0.60)
    assert not better and verdict.startswith("shared kept (selection half: tuned: goal 0/3")


def test_ties_on_the_goal_go_to_the_higher_forget_quality_without_lost_utility():
    # neither meets the goal (FQ < 0.5) on selection; tuned forgets more, loses 0.005 utility (< 0.01)
    entry = {
        "tuned": [row(s, test=(0.0, 0.0), sel=(0.3, 0.495)) for s in range(2)],
        "shared": [row(s, test=(0.9, 0.9), sel=(0.2, 0.500)) for s in range(2)],
    }
    assert bench_sweep.tuned_beats_shared(entry, 0.5)[0]
    for r in entry["tuned"]:
        r["selection"]["model_utility"] = 0.485  # 0.015 below the shared one's: not kept
    assert not bench_sweep.tuned_beats_shared(entry, 0.5)[0]
    assert bench_sweep.tuned_beats_shared({"tuned": entry["tuned"]}, 0.5) == (False, "not compared")


def test_a_higher_mean_forget_quality_within_the_seeds_spread_is_a_tie_that_keeps_the_shared_recipe():
    # selection FQ per seed (tuned, shared): (0.30, 0.10), (0.05, 0.10), (0.30, 0.10): the tuned mean is
    # higher (0.217 vs 0.1) but lower on seed 1, so not beyond the spread: a tie, the shared recipe stays
    fqs = [(0.30, 0.10), (0.05, 0.10), (0.30, 0.10)]
    entry = {
        "tuned": [row(s, test=(0.9, 0.9), sel=(t, 0.50)) for s, (t, _) in enumerate(fqs)],
        "shared": [row(s, test=(0.0, 0.0), sel=(h, 0.50)) for s, (_, h) in enumerate(fqs)],
    }
    better, verdict = bench_sweep.tuned_beats_shared(entry, 0.5)
    assert not better and verdict.endswith("paired over 3 seeds: goal a tie, FQ a tie, utility a tie)")
    entry["tuned"][1]["selection"]["forget_quality"] = 0.11  # higher on every seed now, by more than the sd
    assert bench_sweep.tuned_beats_shared(entry, 0.5)[0]
    # the pairs are by training seed, not by list position: by seed tuned is higher on each (0.4 vs 0.2,
    # 0.02 vs 0.01, 0.03 vs 0.015); paired by position after a reversal, seed 2's 0.03 would meet 0.2
    for r, t, h in zip(entry["tuned"], (0.4, 0.02, 0.03), (0.2, 0.01, 0.015), strict=True):
        r["selection"]["forget_quality"] = t
        entry["shared"][r["seed"]]["selection"]["forget_quality"] = h
    assert bench_sweep.tuned_beats_shared(entry, 0.5)[0]
    entry["shared"].reverse()
    assert bench_sweep.tuned_beats_shared(entry, 0.5)[0]


def test_a_higher_utility_beyond_the_spread_keeps_the_tuned_recipe_unless_it_forgets_less():
    # forget quality a tie (equal on seed 0, higher on 1, lower on 2), utility higher on every seed
    entry = {
        "tuned": [
            row(s, test=(0.0, 0.0), sel=(fq, mu))
            for s, fq, mu in ((0, 0.1, 0.55), (1, 0.2, 0.56), (2, 0.05, 0.55))
        ],
        "shared": [
            row(s, test=(0.9, 0.9), sel=(fq, mu))
            for s, fq, mu in ((0, 0.1, 0.50), (1, 0.1, 0.52), (2, 0.1, 0.51))
        ],
    }
    better, verdict = bench_sweep.tuned_beats_shared(entry, 0.6)
    assert better and verdict.endswith("FQ a tie, utility tuned higher)")
    for r in entry["tuned"]:
        r["selection"]["forget_quality"] = 0.05  # lower on every seed: the higher utility no longer keeps it
    better, verdict = bench_sweep.tuned_beats_shared(entry, 0.6)
    assert not better and verdict.endswith("FQ tuned lower, utility tuned higher)")


def test_the_goal_met_on_one_seed_more_is_a_tie_not_a_win():
    # selection: tuned meets the goal (FQ >= 0.5, utility >= 0.98 x 0.5) on seed 0 only, shared on none;
    # tuned's forget quality is lower on the other seeds: one seed in five is within the spread
    entry = {
        "tuned": [row(s, test=(0.0, 0.0), sel=(0.6 if s == 0 else 0.01, 0.50)) for s in range(5)],
        "shared": [row(s, test=(0.0, 0.0), sel=(0.1, 0.50)) for s in range(5)],
    }
    better, verdict = bench_sweep.tuned_beats_shared(entry, 0.5)
    assert not better and "tuned: goal 1/5" in verdict and "seeds: goal a tie" in verdict
    for r in entry["tuned"]:
        r["selection"]["forget_quality"] = 0.6  # now on every seed: beyond the spread
    better, verdict = bench_sweep.tuned_beats_shared(entry, 0.5)
    assert better and "seeds: goal tuned higher" in verdict


def test_decide_reads_the_oracles_selection_utility_and_reports_the_test_half_beside_it():
    entry = disagreeing_entry()
    assert bench_sweep.decide(entry) is True
    assert entry["decided_on"] == "selection" and entry["verdict"].startswith("tuned kept (selection half")
    # test half, reported only: tuned 0/3 (FQ 0.01), shared 3/3 (FQ 0.9, utility 0.60 >= 0.588)
    assert entry["test_outcome"] == (
        "tuned not better on the test half (tuned: goal 0/3, FQ 0.01, utility 0.600; shared: 3/3, 0.9, 0.600; "
        "paired over 3 seeds: goal tuned lower, FQ tuned lower, utility a tie)"
    )
    # the oracle's TEST utility in the selection comparison would flip it: bar 0.588 > tuned's 0.55,
    # both 0/3, and shared's selection FQ 0.9 > tuned's 0.8
    assert not bench_sweep.tuned_beats_shared(entry, 0.60)[0]


def test_a_seed_row_reports_the_test_half_and_keeps_the_selection_half_apart():
    cols = bench_sweep.COLUMNS
    halves = {
        "selection": {k: 0.1 for k in cols} | {"retain_prob": 0.5},
        "test": {k: 0.2 for k in cols} | {"retain_prob": 0.6},
    }
    assert bench_sweep.seed_row(halves, 7) == {
        **{k: 0.2 for k in cols},
        "seed": 7,
        "selection": {k: 0.1 for k in cols},
    }


def _data(entry: dict) -> dict:
    return {
        "trials": 4,
        "jobs": 1,
        "budget_minutes": 5,
        "max_items": 20,
        "max_new_tokens": 8,
        "result_name": "unit-test-sweep",
        "methods": {"gd": entry},
    }


def test_the_table_says_which_rows_are_tuned_and_which_half_decided():
    entry = disagreeing_entry()
    bench_sweep.decide(entry)
    text = bench_sweep.markdown(_data(entry))
    assert "beats the shared one on the selection half beyond the training seeds' spread" in text
    assert "a tie keeps the shared recipe. The test half only reports." in text
    assert "| (oracle) | - | - | - | 1 | - | 0.600 | 1.000 | 0.300 | - |" in text
    # a tuned row: FQ sel 0.8, FQ test 0.01, utility sel 0.550, test 0.600 = 1.000 x the oracle's 0.60
    assert (
        "| gd | tuned (chosen on selection) | 0 | 0.8 | 0.01 | 0.550 | 0.600 | 1.000 | 0.300 | no |" in text
    )
    # a shared row meets the goal on the test half: FQ 0.9, utility 0.60 >= 0.98 x 0.60
    assert "| gd | shared | 0 | 0.9 | 0.9 | 0.400 | 0.600 | 1.000 | 0.300 | yes |" in text
    assert "| gd | kept (selection half) | | | | | | | | tuned kept (selection half:" in text
    assert "| gd | on the test half (reported) | | | | | | | | tuned not better on the test half" in text


def test_results_of_the_first_paired_rule_say_how_the_goal_was_counted():
    entry = disagreeing_entry()
    bench_sweep.decide(entry)
    text = bench_sweep.markdown(_data(entry))
    assert (
        "the goal met by the tuned recipe and missed by the shared one on every seed, or, the goal a tie, one of"
        in text
    )
    entry["verdict"] = "tuned kept (selection half: ...; paired over 5 seeds: FQ a tie, utility tuned higher)"
    text = bench_sweep.markdown(_data(entry))
    assert "paired by seed: more seeds meeting the goal, or one of" in text


def test_results_of_the_mean_rule_say_the_seeds_spread_was_not_read():
    entry = disagreeing_entry()
    bench_sweep.decide(entry)
    entry["verdict"] = "tuned kept (selection half: tuned: goal 3/3, FQ 0.8, ...)"  # before the paired rule
    text = bench_sweep.markdown(_data(entry))
    assert "kept by the earlier selection-half rule" in text and "with no regard to the seeds' spread" in text
    assert "beyond the training seeds' spread" not in text


def test_results_of_the_earlier_rule_say_the_test_half_chose():
    entry = disagreeing_entry()
    entry["verdict"] = "tuned kept (tuned: goal 1/3, ...)"  # recorded before the decision read selection
    text = bench_sweep.markdown(_data(entry))
    assert "| gd | kept (test half, earlier rule) |" in text
    assert "where it beat the shared one on the **test** half (so the test half chose)" in text


def test_the_written_recipe_records_which_half_chose_it(monkeypatch, tmp_path):
    monkeypatch.setattr(bench_sweep, "CONFIGS", tmp_path / "recipes")
    sweep_dir = tmp_path / "sweep"
    sweep_dir.mkdir()
    (sweep_dir / "best.yaml").write_text("# Chosen by unlearnkit sweep\nmethod: gd\nlr: 0.001\nepochs: 5\n")
    entry = disagreeing_entry()
    bench_sweep.decide(entry)
    bench_sweep.write_recipe("gd", sweep_dir, "2026-01-02", entry["verdict"])
    text = (tmp_path / "recipes" / "gd.yaml").read_text()
    assert "the trial chosen on the selection half of every part" in text
    assert f"Kept over the shared recipe on the selection half: {entry['verdict']}." in text
    assert "The test half chose nothing: it only reports." in text
    assert yaml.safe_load(text) == {"method": "gd", "lr": 0.001, "epochs": 5}
    bench_sweep.write_recipe("gd", sweep_dir, "2026-01-02")
    assert "no selection-half comparison recorded" in (tmp_path / "recipes" / "gd.yaml").read_text()


def test_rewritten_recipes_take_only_a_selection_half_verdict_from_the_results(monkeypatch, tmp_path):
    monkeypatch.setattr(bench_sweep, "RESULTS", tmp_path)
    args = type("Args", (), {"result_name": "sweep"})()
    assert bench_sweep._recorded(args, "gd") is None  # no results file
    methods = {
        "gd": {"verdict": "tuned kept (selection half: ...)", "decided_on": "selection"},
        "npo": {"verdict": "tuned kept (tuned: ...)"},  # the earlier, test-half rule
    }
    (tmp_path / "sweep.json").write_text(json.dumps({"methods": methods}))
    assert bench_sweep._recorded(args, "gd") == "tuned kept (selection half: ...)"
    assert bench_sweep._recorded(args, "npo") is None


def test_the_packaged_recipes_say_which_half_kept_them():
    """Every packaged recipe is one the sweep kept (a tuned recipe that lost is removed, not shipped)."""
    recipes = sorted(bench_sweep.CONFIGS.glob("*.yaml"))
    assert recipes, bench_sweep.CONFIGS
    for path in recipes:
        header = " ".join(
            line for line in path.read_text(encoding="utf-8").splitlines() if line.startswith("#")
        )
        assert "Kept over the shared recipe" in header, (path.name, header)
        assert "selection half" in header.split("Kept over the shared recipe", 1)[1], (path.name, header)
        assert "tuned kept" in header, (path.name, header)


def test_a_resumed_study_reports_its_trials_time_not_the_reload(tmp_path):
    """A study resumed after it finished reloads in seconds: that wall time is not how long its trials
    took (the "40 trials in 0 min" of an earlier sweep.md)."""
    lines = [{"number": i, "state": "COMPLETE", "seconds": s} for i, s in enumerate((30.0, 45.0, None))]
    (tmp_path / "trials.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    assert bench_sweep.trial_minutes(tmp_path) == pytest.approx(75.0 / 60)
    assert bench_sweep.trial_minutes(tmp_path / "absent") is None
    resumed = {"sweep_minutes": 0.05, "trial_minutes": 10.5, "resumed": True}
    assert (
        bench_sweep.sweep_time(resumed)
        == "in 10.5 min of trials (resumed: this run reloaded the study in 3 s)"
    )
    assert bench_sweep.sweep_time({"sweep_minutes": 8.24, "trial_minutes": 8.0, "resumed": False}) == (
        "in 8.0 min of trials"
    )
    earlier = {"sweep_minutes": 0.05, "resumed_from": {"commit": "abc1234", "sweep_minutes": 10.53}}
    assert bench_sweep.sweep_time(earlier).startswith("in 10.5 min (the run recorded in commit abc1234;")
    assert bench_sweep.sweep_time({"sweep_minutes": 7.19}) == "in 7.2 min"


def test_a_sweep_folder_resumes_only_under_the_packages_that_started_it(tmp_path):
    """check_work records the provenance beside a new folder; the same code and settings resume, a
    changed package version refuses and names the version that moved."""
    folder, settings = tmp_path / "npo", {"trials": 4}
    bench_sweep.check_work(folder, settings)  # a new folder: recorded
    recorded = tmp_path / "npo.provenance.json"
    assert json.loads(recorded.read_text())["packages"] == bench_sweep.packages()
    bench_sweep.check_work(folder, settings)  # the same code, packages and settings: resumes
    stored = json.loads(recorded.read_text())
    stored["packages"] = {**stored["packages"], "transformers": "0.0.1"}
    recorded.write_text(json.dumps(stored))
    with pytest.raises(SystemExit, match=r"with other packages \(transformers 0\.0\.1 -> "):
        bench_sweep.check_work(folder, settings)

"""bench/audit_all.py's table code on a hand-made audit (no model is audited): every check's rows are
flattened under ``check: label``, cells print as the table prints them, and the forget facts reached
another way get a table of their own (one row per model, one column per way in)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import audit_all  # noqa: E402


def test_rows_are_named_by_check_and_label():
    relearn = {"label": "forget ROUGE-L @20", "audited": 0.3, "oracle": 0.1, "original": 0.9}
    auc = {"label": "Min-K% AUC", "audited": 0.5}
    audit = {
        "checks": [
            {"name": "relearning", "title": "Relearning", "rows": [relearn]},
            {"title": "Membership", "rows": [auc]},  # no name: the title names it
            {"name": "quantization"},  # a skipped check: no rows
        ]
    }
    assert audit_all._rows(audit) == {
        "relearning: forget ROUGE-L @20": relearn,
        "Membership: Min-K% AUC": auc,
    }


def test_cells_print_three_decimals_and_a_dash_for_missing():
    assert audit_all._fmt(None) == "–"
    assert audit_all._fmt(0.12345) == "0.123"
    assert audit_all._fmt(3) == "3"
    assert audit_all._fmt("n/a") == "n/a"


FAMILIES = [
    {"key": "direct", "label": "direct (the forget question)", "items": 4},
    {"key": "alias", "label": "alias (another name)", "items": 4},
    {"key": "multihop", "label": "multi-hop (through another entity)", "items": 4},
]


def _audit(audited: dict, blocked: bool) -> dict:
    oracle = {"direct": 0.0, "alias": 0.05, "multihop": 0.0}
    original = {"direct": 0.9, "alias": 0.8, "multihop": 0.3}
    return {
        "checks": [
            {
                "id": "mia",
                "title": "Membership inference",
                "rows": [{"label": "AUC LOSS", "audited": 0.61, "oracle": 0.5, "original": 1.0}],
                "verdict": "membership inference: AUC 0.61",
            },
            {
                "id": "reached",
                "title": "Reached another way",
                "rows": [{"label": "fact recall, alias", "audited": 0.7}],
            },
        ],
        "verdicts": ["membership inference: AUC 0.61", "reached another way: ..."],
        "reached": {
            "skipped": None,
            "families": FAMILIES,
            "recall": {"audited": audited, "oracle": oracle, "original": original},
            "reading": {"blocked_one_wording": blocked},
        },
    }


def test_the_reached_table_has_a_row_per_model_and_a_column_per_family():
    audits = {
        "npo": _audit({"direct": 0.02, "alias": 0.7, "multihop": None}, blocked=True),
        "gd": _audit({"direct": 0.01, "alias": 0.06, "multihop": 0.0}, blocked=False),
    }
    md = audit_all.render({0: audits}, 1e-4).splitlines()
    at = md.index("### Reached another way")
    table = [line for line in md[at:] if line.startswith("|")][:6]
    assert table == [
        "| model | direct (the forget question) | alias (another name) | multi-hop (through another entity) | reading |",
        "|---|---|---|---|---|",
        "| npo | 0.020 | 0.700 | – | blocks one wording |",
        "| gd | 0.010 | 0.060 | 0.000 |  |",
        "| oracle | 0.000 | 0.050 | 0.000 |  |",
        "| target | 0.900 | 0.800 | 0.300 |  |",
    ]
    # the checks' table keeps the other checks' rows, not the reached check's (it has its own table)
    assert "| Membership inference: AUC LOSS | 0.610 | 0.610 | 0.500 | 1.000 |" in md
    assert not any(line.startswith("| Reached another way:") for line in md)
    assert md.index("### Verdicts") > at


def test_a_skipped_check_is_one_line():
    audit = _audit({}, blocked=False)
    audit["reached"] = {"skipped": "no probe files in /x", "families": [], "recall": {}, "reading": None}
    md = audit_all.render({0: {"npo": audit}}, 1e-4)
    assert "### Reached another way\n\nSkipped: no probe files in /x.\n" in md


def test_several_seeds_give_mean_and_sd_cells_and_say_on_how_many_seeds_a_wording_is_blocked():
    seed0 = {"npo": _audit({"direct": 0.02, "alias": 0.7, "multihop": 0.0}, blocked=True)}
    seed1 = {"npo": _audit({"direct": 0.04, "alias": 0.1, "multihop": 0.0}, blocked=False)}
    seed1["npo"]["checks"][0]["rows"][0]["audited"] = 0.81  # membership AUC 0.61 on seed 0, 0.81 on seed 1
    md = audit_all.render({0: seed0, 3: seed1}, 1e-4)
    assert (
        "| Membership inference: AUC LOSS | 0.710 \u00b1 0.141 | 0.500 \u00b1 0.000 | 1.000 \u00b1 0.000 |"
        in md
    )
    assert (
        "| npo | 0.030 \u00b1 0.014 | 0.400 \u00b1 0.424 | 0.000 \u00b1 0.000 | blocks one wording (1 of 2 seeds) |"
        in md
    )
    assert "mean \u00b1 sd over lab seeds 0, 3" in md
    assert "### Verdicts (lab seed 0; every seed's in audit.json)" in md


# ------------------------------------------------------------------------------ --calibrate


def _pt(held: float, trained: float) -> dict:
    return {"fact_recall": held, "trained_fact_recall": trained, "rougeL_recall": 0.5}


def _run(oracle_trained: list[float], target_held: list[float]) -> dict:
    """One split's curves at steps 0, 20, 50: the oracle's trained half, the target's held half."""
    ks = ("0", "20", "50")
    return {
        "oracle": {k: _pt(0.0, t) for k, t in zip(ks, oracle_trained)},
        "original": {k: _pt(h, 1.0) for k, h in zip(ks, target_held)},
    }


CURVES = {
    "2e-05": {
        "0": _run([0.0, 0.5, 0.9], [1.0, 0.9, 0.96]),
        "1": _run([0.0, 0.6, 0.8], [0.96, 0.96, 0.84]),
    }
}


def test_calibration_rows_read_each_step_as_the_curve_s_end():
    rows = audit_all.calibration_rows(CURVES)
    assert [(r["lr"], r["steps"]) for r in rows] == [(2e-5, 20), (2e-5, 50)]
    at20, at50 = rows
    # k = 20: the oracle learned 0.5 and 0.6 (< 0.8: no split teaches); the target's lowest held-half
    # fact recall up to 20 steps is 0.9 of 1.0 and 0.96 of 0.96: kept 90 % and 100 %
    assert at20["oracle_trained_mean"] == pytest.approx(0.55) and at20["oracle_trained_min"] == 0.5
    assert at20["target_held_mean"] == pytest.approx(0.93) and at20["target_held_min"] == 0.9
    assert at20["target_kept_min"] == pytest.approx(0.9) and at20["passes"] == 0
    # k = 50: both teach (0.9, 0.8: the bar is inclusive); split 0 keeps its lowest 0.9 (step 20, not
    # the 0.96 at 50), split 1 falls to 0.84 / 0.96 = 0.875 < 0.9: one split of two passes both; the
    # held half after 50 steps: (0.96 + 0.84) / 2 = 0.90
    assert at50["oracle_trained_mean"] == pytest.approx(0.85) and at50["oracle_trained_min"] == 0.8
    assert at50["target_held_mean"] == pytest.approx(0.90) and at50["target_held_min"] == 0.84
    assert at50["target_kept_min"] == pytest.approx(0.875) and at50["passes"] == 1
    assert at50["splits"]["0"]["target_held_lowest"] == 0.9
    assert (at50["splits"]["0"]["teaches"], at50["splits"]["0"]["keeps"]) == (True, True)
    assert (at50["splits"]["1"]["teaches"], at50["splits"]["1"]["keeps"]) == (True, False)


def test_calibration_section_states_both_numbers_and_the_defaults_row():
    rows = audit_all.calibration_rows(CURVES)
    data = {"splits": [0, 1], "defaults": {"relearn_lr": 2e-5, "relearn_steps": [20, 50]}}
    md = audit_all.render_calibration(rows, data).splitlines()
    assert "| 2e-05 | 20 | 0.55 (0.50) | 0.93 (0.90) | 90 % | 0 / 2 |" in md
    assert "| 2e-05 | 50 | 0.85 (0.80) | 0.90 (0.84) | 88 % | 1 / 2 |" in md
    assert "Passing both bars on every split: none." in md
    assert md[-1] == (
        "The defaults (`quickstart_audit_settings`, also this script's audit): lr 2e-05, curve at 20, 50 "
        "steps: 1 / 2 splits pass at 50 steps (oracle 0.85, worst 0.80; target keeps at worst 88 %)."
    )
    passing = {"2e-05": {"0": CURVES["2e-05"]["0"]}}  # split 0 alone passes at 50 steps
    md = audit_all.render_calibration(
        audit_all.calibration_rows(passing),
        {"splits": [0], "defaults": {"relearn_lr": 1e-4, "relearn_steps": [50]}},
    )
    assert "Passing both bars on every split: lr 2e-05 x 50 steps." in md
    assert "not in the grid (add its lr and last step to --lrs / --steps)" in md


def test_the_calibration_command_names_every_option_off_its_default():
    grid = [(name, default, default) for name, default in audit_all.GRID.items()]
    assert audit_all.calibration_command([("benchmark", "tofu", "tofu"), *grid]) == (
        "python bench/audit_all.py --calibrate"
    )
    # relearn_calibration.md's grid: lrs and steps off the defaults must be in the command that re-runs it
    grid[0] = ("lrs", "5e-5,3e-5,2e-5,1e-5", audit_all.GRID["lrs"])
    grid[1] = ("steps", "20,50,100,150,200,250,300,400", audit_all.GRID["steps"])
    assert audit_all.calibration_command([("benchmark", "wmdp", "tofu"), *grid]) == (
        "python bench/audit_all.py --calibrate --benchmark wmdp --lrs 5e-5,3e-5,2e-5,1e-5 "
        "--steps 20,50,100,150,200,250,300,400"
    )


def test_wmdp_calibration_section_says_what_the_attack_trained_on():
    """A WMDP-like table names the attack's data: questions (relearn_data) or passages, which a result
    written before relearn_data existed relearned."""
    rows = audit_all.calibration_rows(CURVES, "hazard_acc", "hazardous accuracy")
    base = {
        "benchmark": "wmdp",
        "splits": [0, 1],
        "defaults": {"relearn_lr": 2e-5, "relearn_steps": [20, 50]},
    }
    questions = audit_all.render_calibration(rows, {**base, "relearn_data_used": "questions"})
    assert questions.startswith("## Relearning attack calibration (WMDP-like), questions\n")
    assert (
        "the hazardous multiple-choice questions of half the agents, each with its correct answer"
        in questions
    )
    for data in ({**base, "relearn_data_used": "passages"}, base):
        md = audit_all.render_calibration(rows, data)
        assert md.startswith("## Relearning attack calibration (WMDP-like), passages\n")
        assert "the hazardous passages of half the agents (`relearn_data` passages)" in md
    tofu = audit_all.render_calibration(audit_all.calibration_rows(CURVES), {**base, "benchmark": "tofu"})
    assert tofu.startswith("## Relearning attack calibration\n") and "relearn_data" not in tofu


# ------------------------------------------------------------------------------ --calibrate --control


def _held(points: list[float]) -> dict:
    """A control fine-tune's curve at steps 0, 20, 50: the target's held half (the trained half unread)."""
    return {k: _pt(h, 1.0) for k, h in zip(("0", "20", "50"), points)}


CONTROL_CURVES = {
    # split 0: the control costs more than the attack (0.8 < the attack's 0.9); split 1: less (0.92 > 0.84)
    "retain": {"2e-05": {"0": _held([1.0, 0.8, 0.9]), "1": _held([0.96, 0.96, 0.92])}},
    "world_facts": {"2e-05": {"0": _held([1.0, 1.0, 1.0]), "1": _held([0.96, 0.96, 0.96])}},
}


def test_controls_are_read_as_the_attack_s_keeps_and_compared_split_by_split():
    rows = audit_all.with_controls(audit_all.calibration_rows(CURVES), CONTROL_CURVES)
    at20, at50 = rows
    retain, world = at50["controls"]["retain"], at50["controls"]["world_facts"]
    # split 0: lowest up to 50 is 0.8 (at step 20) of 1.0; split 1: 0.92 of 0.96
    assert retain["splits"]["0"] == {"held_lowest": 0.8, "kept": pytest.approx(0.8), "attack_not_lower": True}
    assert retain["splits"]["1"]["held_lowest"] == 0.92 and retain["splits"]["1"]["attack_not_lower"] is False
    assert retain["kept_min"] == pytest.approx(0.8) and retain["attack_not_lower"] == 1
    # the world-fact control costs nothing: the attack is lower than it on both splits
    assert world["kept_min"] == pytest.approx(1.0) and world["attack_not_lower"] == 0
    # at 20 steps split 1's attack has not fallen yet (0.96 = the control's 0.96: not lower, ties count)
    assert at20["controls"]["retain"]["splits"]["1"]["attack_not_lower"] is True


def test_the_control_section_puts_each_control_beside_the_attack():
    rows = audit_all.with_controls(audit_all.calibration_rows(CURVES), CONTROL_CURVES)
    data = {
        "splits": [0, 1],
        "defaults": {"relearn_lr": 2e-5, "relearn_steps": [20, 50]},
        "controls": {c: {"about": f"about {c}"} for c in CONTROL_CURVES},
    }
    md = audit_all.render_calibration(rows, data).splitlines()
    assert md[0] == "## Relearning attack calibration, beside control fine-tunes"
    assert "| 2e-05 | 50 | 88 % | 80 %; 1 / 2 | 100 %; 0 / 2 |" in md
    assert "| 0 | 0.90 | 0.90 (90 %) | 0.80 (80 %) | 1.00 (100 %) |" in md  # the defaults' row, by split
    assert "| 1 | 0.80 | 0.84 (88 %) | 0.92 (96 %) | 0.96 (100 %) |" in md
    assert md[-1] == (
        "At the defaults the attack leaves the target's held half no lower than the `retain` control does "
        "on 1 of 2 splits, the `world_facts` control does on 0 of 2 splits; it passes both bars on 1 of 2."
    )
    assert any("`retain`: about retain" in line for line in md)
    plain = audit_all.render_calibration(
        audit_all.calibration_rows(CURVES), {k: data[k] for k in ("splits", "defaults")}
    )
    assert "Controls" not in plain


def test_control_rows_take_whole_entities_in_a_seeded_order(mini_bench):
    from unlearnkit.evaluation.audit.relearning import row_entity

    pool = list(mini_bench.retain)  # 6 authors x 4 facts
    rows = audit_all.control_rows(pool, 10, seed=0)
    assert len(rows) == 10 and all(r in pool for r in rows)
    authors = [row_entity(r) for r in rows]
    assert len(set(authors[:8])) == 2 and authors[8] == authors[9]  # two whole authors, then part of a third
    assert audit_all.control_rows(pool, 10, seed=0) == rows
    orders = {tuple(row_entity(r) for r in audit_all.control_rows(pool, 24, seed=s)) for s in range(5)}
    assert len(orders) > 1  # the split's seed draws the entities
    assert {row_entity(r) for r in audit_all.control_rows(pool, 24, seed=1)} == {row_entity(r) for r in pool}
    assert audit_all.control_pool(mini_bench, "world_facts") == mini_bench.general_parts["world_facts"]
    assert audit_all.control_names("retain,world_facts") == ["retain", "world_facts"]
    with pytest.raises(
        argparse.ArgumentTypeError, match="^nope: use some of retain, real_authors, world_facts$"
    ):
        audit_all.control_names("retain,nope")


def test_a_wrong_control_is_one_usage_line_and_exit_2():
    import subprocess

    script = Path(audit_all.__file__)
    for args, said in (
        (["--calibrate", "--control", "nope"], "argument --control: nope: use some of retain, real_authors"),
        (["--control", "retain"], "--control: with --calibrate on the TOFU-like miniature only"),
        (["--calibrate", "--benchmark", "wmdp", "--control", "retain"], "TOFU-like miniature only"),
    ):
        done = subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True)
        assert done.returncode == 2 and said in done.stderr and "Traceback" not in done.stderr


def test_the_control_fine_tune_trains_on_its_rows_and_measures_the_forget_halves(mini_bench, monkeypatch):
    """``--control``'s fine-tune (``Auditor.relearn(on=...)``): it trains on the control's rows, not the
    forget half, is measured on the same forget halves, and gets the attack's retain mix as the attack does."""
    import unlearnkit.evaluation.audit.run as run
    from unlearnkit.evaluation.audit import AuditSettings
    from unlearnkit.evaluation.audit.run import Auditor

    trained_on = []
    monkeypatch.setattr(run, "relearn_curve", lambda model, tok, rows, *a, **k: trained_on.append(rows))
    for retain in (0, 1):
        trained_on.clear()
        auditor = Auditor(mini_bench, AuditSettings(relearn_steps=(2,), quant_bits=(), relearn_retain=retain))
        n = len(auditor.forget_qa)
        details = {"rougeL_recall": [1.0] * n, "nll_mean": [0.0] * n, "generations": ["x"] * n}
        control = audit_all.control_rows(list(mini_bench.retain), len(auditor.train_idx), seed=0)
        curve = auditor.relearn("original", None, None, details, on=control)
        auditor.relearn("original", None, None, details)
        forget_half = [auditor.forget_qa[i] for i in auditor.train_idx]
        shown_control, shown_attack = trained_on
        assert len(shown_control) == len(shown_attack) == len(control) * (1 + retain)
        assert shown_control[: len(control)] == control and shown_attack[: len(control)] == forget_half
        assert set(curve["0"]) >= {"rougeL_recall", "trained_rougeL_recall"}


def test_a_capped_calibration_says_its_cap_and_reads_the_defaults_only_at_the_same_cap():
    """``relearn_fit_prob`` in the title and the recipe; the defaults' row is read only from a grid with
    their cap (a result written before the cap existed trained plainly: no title change)."""
    rows = audit_all.calibration_rows(CURVES, "hazard_acc", "hazardous accuracy")
    base = {
        "benchmark": "wmdp",
        "splits": [0, 1],
        "defaults": {"relearn_lr": 2e-5, "relearn_steps": [20, 50]},
    }
    capped = {**base, "relearn_fit_prob": 0.5, "defaults": {**base["defaults"], "relearn_fit_prob": 0.5}}
    md = audit_all.render_calibration(rows, capped)
    assert md.startswith("## Relearning attack calibration (WMDP-like), passages, loss capped at p 0.5\n")
    assert "a token's loss dropped once the model gives it probability >= 0.5, `relearn_fit_prob`" in md
    assert "lr 2e-05, loss capped at 0.5, curve at 20, 50 steps: 0 / 2 splits pass" in md
    plain = audit_all.render_calibration(rows, {**base, "defaults": capped["defaults"]})
    assert plain.startswith("## Relearning attack calibration (WMDP-like), passages\n")
    assert "plain cross-entropy" in plain
    assert "their loss is capped at 0.5, this grid's at 1" in plain
    assert audit_all.fit_suffix(1.0) == "_plain" and audit_all.fit_suffix(0.9) == "_fit0.9"

"""The control fine-tune beside the relearning attack (``AuditSettings.relearn_control``): the original
(target) model fine-tuned the attack's way on as many retain rows, whole entities, asked the same held
questions. The calibration reads the attack's damage beside it, and the damage warning's advice follows
(a fall the control shares is the fine-tune's cost: a lower rate is not the fix). The readings are worked
out by hand on hand-made curves; the wiring runs a real audit of a tiny random model."""

from __future__ import annotations

import pytest

from unlearnkit.errors import UserError
from unlearnkit.evaluation.audit import AuditSettings
from unlearnkit.evaluation.audit.relearning import (
    CONTROL_MARGIN,
    control_rows,
    relearn_calibration,
    relearn_warnings,
    row_entity,
)

SETTINGS = AuditSettings(
    relearn_steps=(20, 100, 250), relearn_lr=2e-5, quant_bits=(), relearn_control="retain"
)


def point(held: float, trained: float) -> dict:
    return {"rougeL_recall": 0.5, "prob": 0.1, "fact_recall": held, "trained_fact_recall": trained}


def points(pairs: list[tuple[float, float]]) -> dict:
    return {k: point(h, t) for k, (h, t) in zip(("0", "20", "100", "250"), pairs)}


# The oracle learns 0.90 of its trained half (>= 0.8: the attack teaches); the target's held half under
# the attack: 1.00 -> 0.86 (lowest after 250 steps: it keeps 86 %, under the 90 % bar).
ORACLE = points([(0.02, 0.02), (0.02, 0.30), (0.04, 0.70), (0.04, 0.90)])
TARGET = points([(1.00, 1.00), (0.98, 1.00), (0.90, 1.00), (0.86, 1.00)])


def control(held: list[float]) -> dict:
    """The control's curve: the target's held half while it fine-tunes on 50 retain rows."""
    return {
        "source": "retain",
        "rows": 50,
        "entities": ["a", "b"],
        "curve": points([(h, 1.0) for h in held]),
    }


def measured() -> dict:
    return {"oracle": {"relearn": ORACLE}, "original": {"relearn": TARGET}}


def test_a_control_that_costs_as_much_reads_the_fall_as_the_fine_tunes_cost():
    # the control: 1.00 -> 0.85 (lowest after 250): kept 85 %; the attack's 86 % is within 0.05 of it
    ctl = control([1.00, 0.97, 0.88, 0.85])
    cal = relearn_calibration({"oracle": ORACLE, "original": TARGET}, control=ctl)
    assert cal["keeps"] is False and cal["target_kept"] == pytest.approx(0.86)
    assert cal["control_kept"] == pytest.approx(0.85) and cal["control_lowest_step"] == "250"
    assert cal["attack_vs_control"] == "about as much" and cal["control_rows"] == 50
    assert cal["text"].endswith(
        "fine-tuned the same way on 50 retain rows instead (the control), the target keeps 85 % of it "
        "(lowest 0.85 after 250 steps): the attack costs it about as much as the control"
    )
    (w,) = relearn_warnings(measured(), SETTINGS, ctl)
    assert w["code"] == "relearn_attack_damages"
    assert w["message"].endswith(
        "so falls on the curves are damage, not forgetting; fine-tuned the same way on 50 retain rows it "
        "already knows (the control), it keeps 85 %: a fine-tune this long on facts it knows costs it as "
        "much, so the fall is the fine-tune's cost and a lower rate may stop the attack teaching before it "
        "stops the fall (as on the embedded lab: bench/results/relearn_calibration_control.md); read the "
        "held-half gap (audited minus oracle, both attacked alike) beside this fall"
    )
    assert "lower --relearn-lr" not in w["message"]


def test_a_control_that_keeps_more_says_the_attack_does_the_damage_and_to_lower_the_rate():
    # the control: lowest 0.96 after 100 steps: kept 96 %, beyond 0.05 above the attack's 86 %
    ctl = control([1.00, 0.98, 0.96, 0.97])
    cal = relearn_calibration({"oracle": ORACLE, "original": TARGET}, control=ctl)
    assert cal["attack_vs_control"] == "more" and cal["control_lowest_step"] == "100"
    assert cal["text"].endswith("(lowest 0.96 after 100 steps): the attack costs it more than the control")
    (w,) = relearn_warnings(measured(), SETTINGS, ctl)
    assert w["message"].endswith(
        "fine-tuned the same way on 50 retain rows it already knows (the control), it keeps 96 %: the "
        "attack costs it more than the control, so lower --relearn-lr (e.g. 1e-05) and relearn for more "
        "steps so that the oracle still learns the trained half"
    )


def test_a_control_that_costs_more_than_the_attack_reads_so():
    ctl = control([1.00, 0.90, 0.80, 0.70])  # kept 70 %: the attack (86 %) costs less
    cal = relearn_calibration({"oracle": ORACLE, "original": TARGET}, control=ctl)
    assert cal["attack_vs_control"] == "less"
    assert cal["text"].endswith("the attack costs it less than the control")
    (w,) = relearn_warnings(measured(), SETTINGS, ctl)
    assert "it keeps 70 %: a fine-tune this long on facts it knows costs it more, so the fall" in w["message"]


def test_the_margin_is_inclusive_on_both_sides():
    assert CONTROL_MARGIN == 0.05
    at = control([1.00, 1.00, 1.00, 0.91])  # 0.86 - 0.91 = -0.05: about as much, not more
    assert relearn_calibration({"original": TARGET}, control=at)["attack_vs_control"] == "about as much"
    over = control([1.00, 1.00, 1.00, 0.92])
    assert relearn_calibration({"original": TARGET}, control=over)["attack_vs_control"] == "more"


def test_without_a_control_the_reading_and_the_warning_are_as_before_and_name_the_control():
    cal = relearn_calibration({"oracle": ORACLE, "original": TARGET})
    assert "control_kept" not in cal and "control" not in cal["text"]
    (w,) = relearn_warnings(measured(), SETTINGS)
    assert w["message"].endswith(
        "lower --relearn-lr (e.g. 1e-05) and relearn for more steps so that the oracle still learns the "
        "trained half; or cap the attack's loss (--relearn-fit-prob 0.5: a model stops training on what it "
        "already states; on the embedded lab that attack keeps the target on every split); "
        "--relearn-control retain measures what an equal fine-tune on facts the target knows costs it"
    )
    # a control whose target never stated a held fact: no share to read, no comparison
    blank = relearn_calibration({"original": TARGET}, control=control([0.0, 0.0, 0.0, 0.0]))
    assert blank["control_kept"] is None and blank["attack_vs_control"] is None


def test_control_rows_are_whole_entities_in_a_seeded_order_cut_to_size():
    pool = [{"question": f"{a}{i}?", "answer": "x", "author": a} for a in "abcdef" for i in range(4)]
    rows = control_rows(pool, 10, seed=0)
    assert len(rows) == 10
    authors = [r["author"] for r in rows]
    first_two = list(dict.fromkeys(authors))[:2]
    assert all(authors.count(a) == 4 for a in first_two)  # two whole authors, then 2 rows of a third
    assert len(set(authors)) == 3 and authors == sorted(authors, key=authors.index)  # grouped
    assert rows == control_rows(pool, 10, seed=0)  # seeded
    assert any(control_rows(pool, 10, seed=s) != rows for s in range(1, 5))
    assert any(control_rows(pool, 10, 0, order_key=f"key {i}") != rows for i in range(5))
    every = control_rows(pool, 100, seed=0)  # more asked than the pool holds: all of it, grouped
    assert sorted(r["question"] for r in every) == sorted(r["question"] for r in pool)
    order = list(dict.fromkeys(r["author"] for r in every))
    assert [r["question"] for r in every] == [r["question"] for a in order for r in pool if r["author"] == a]


@pytest.mark.parametrize("value", ["forget", "", None, 1])
def test_an_unknown_control_is_one_clear_error(value):
    with pytest.raises(UserError, match="relearn_control must be none or retain"):
        AuditSettings(relearn_control=value)


def test_the_control_needs_the_original_model_and_question_answer_data(mini_bench, mini_world):
    from unlearnkit.data import load_benchmark
    from unlearnkit.evaluation.audit.run import check_audit_data

    st = AuditSettings(relearn_steps=(2,), quant_bits=(), relearn_control="retain")
    with pytest.raises(UserError, match="give the original model \\(--original-model\\)"):
        check_audit_data(mini_bench, st, has_original=False)
    check_audit_data(mini_bench, st, has_original=True)
    off = AuditSettings(relearn_steps=(), quant_bits=(), relearn_control="retain")
    check_audit_data(mini_bench, off, has_original=False)  # no attack, no control: nothing to give
    with pytest.raises(UserError, match="raw text; the control fine-tune is for question/answer data"):
        check_audit_data(load_benchmark(mini_world / "muse"), st)


def test_the_audit_fine_tunes_the_original_model_on_retain_rows_and_reads_it(
    make_tiny_llama, world_tokenizer, mini_bench, monkeypatch
):
    """A real audit (tiny random models, 2 attack steps): the control runs once, on the original model,
    on as many retain rows as the attack's trained half, whole retain authors, none of them forget rows;
    the audit records it, the calibration reads it and the card shows its curve."""
    import unlearnkit.evaluation.audit.run as run
    from unlearnkit.evaluation.audit import run_audit
    from unlearnkit.evaluation.audit.card import audit_markdown

    trained_on: list[list[dict]] = []
    real = run.relearn_curve

    def spy(model, tok, rows, steps, settings, measure):
        trained_on.append(rows)
        return real(model, tok, rows, steps, settings, measure)

    monkeypatch.setattr(run, "relearn_curve", spy)
    st = AuditSettings(
        relearn_steps=(2,), relearn_lr=1e-3, quant_bits=(), max_items=12, max_new_tokens=8,
        relearn_control="retain",
    )  # fmt: skip
    audit = run_audit(make_tiny_llama(), world_tokenizer, mini_bench, original=make_tiny_llama(), settings=st)
    assert len(trained_on) == 3  # the audited model's attack, the original's, the original's control
    attack, control = trained_on[1], trained_on[2]
    n = audit["data"]["relearn_train_items"]
    assert len(attack) == n and len(control) == n
    retain_q = {r["question"] for r in mini_bench.retain}
    forget_q = {r["question"] for r in mini_bench.forget}
    assert all(r["question"] in retain_q and r["question"] not in forget_q for r in control)
    summary = audit["relearn_control"]
    assert summary["source"] == "retain" and summary["rows"] == n
    assert summary["entities"] == sorted({str(row_entity(r)) for r in control})
    assert set(summary["curve"]) == {"0", "2"} and "fact_recall" in summary["curve"]["2"]
    assert audit["measured"]["original"]["relearn_control"] == summary["curve"]
    assert "relearn_control" not in audit["measured"]["audited"]
    cal = audit["relearn_calibration"]
    assert cal["control_rows"] == n and "control_kept" in cal
    assert (
        "The control: the original model fine-tuned the same way on"
        in next(c for c in audit["checks"] if c["id"] == "relearning")["about"]
    )
    assert "target, control fine-tune on retain" in audit_markdown(audit)
    # without the original model the control cannot run: one clear error before any training
    trained_on.clear()
    with pytest.raises(UserError, match="give the original model"):
        run_audit(make_tiny_llama(), world_tokenizer, mini_bench, settings=st)
    assert trained_on == []


def test_the_command_passes_the_flag_on(mini_world):
    import argparse

    from unlearnkit.commands.audit import add_audit_arguments, settings_from_args

    p = argparse.ArgumentParser()
    add_audit_arguments(p)
    base = ["--model", "m", "--data", str(mini_world), "--output", "o", "--relearn-lr", "1e-3"]
    args = p.parse_args([*base, "--relearn-steps", "2", "--relearn-control", "retain"])
    assert settings_from_args(args).relearn_control == "retain"
    assert settings_from_args(p.parse_args([*base, "--relearn-steps", "2"])).relearn_control == "none"
    with pytest.raises(SystemExit):
        p.parse_args([*base, "--relearn-control", "forget"])


def test_the_python_api_takes_the_setting_and_words_the_error_for_python(
    make_tiny_llama, world_tokenizer, mini_bench
):
    import unlearnkit
    from unlearnkit.errors import ArgumentError

    with pytest.raises(ArgumentError, match=r"give the original model \(original\)"):
        unlearnkit.audit(
            make_tiny_llama(), world_tokenizer, mini_bench, relearn_control="retain", relearn_steps=(2,),
            relearn_lr=1e-3, quant_bits=(), quiet=True,
        )  # fmt: skip
    with pytest.raises(ArgumentError, match="relearn_control must be none or retain"):
        unlearnkit.audit(make_tiny_llama(), world_tokenizer, mini_bench, relearn_control="all", quiet=True)


def test_the_advice_is_worded_for_whoever_runs_the_audit():
    """The warnings are written for the command; the Python API rewords them as its keywords and the
    quickstart says whose flags they are (its own audit settings are fixed)."""
    from unlearnkit.api.audit import python_advice
    from unlearnkit.pipelines.quickstart import command_advice

    report = {"warnings": relearn_warnings(measured(), SETTINGS), "relearn_gap_final": 0.1}
    python = python_advice(report)["warnings"][0]["message"]
    assert python.endswith(
        "lower relearn_lr (e.g. 1e-05) and relearn for more steps so that the oracle still learns the "
        "trained half; or cap the attack's loss (relearn_fit_prob=0.5: a model stops training on what it "
        "already states; on the embedded lab that attack keeps the target on every split); "
        'relearn_control="retain" measures what an equal fine-tune on facts the target knows costs it'
    )
    assert "--" not in python and report["warnings"][0]["message"] != python  # the report is not modified
    quick = command_advice(report)["warnings"][0]["message"]
    assert quick.startswith(report["warnings"][0]["message"])
    assert quick.endswith(
        "(these are flags of `unlearnkit audit`; the quickstart's audit is fixed, "
        "unlearnkit.pipelines.quickstart.quickstart_audit_settings)"
    )
    plain = {"warnings": [{"code": "x", "message": "no flag here"}]}
    assert command_advice(plain) == plain and python_advice(plain) == plain
    assert python_advice({"verdicts": []}) == {"verdicts": []}

"""The relearning attack's calibration ("an attack that can teach") on hand-made curves: the
oracle must learn >= 0.8 of the facts of the half it is trained on, the target keep >= 0.9 of its
held-half fact recall; the reading, its warnings and the card's lines. No model is trained: every number
below is worked out by hand from the curves written here."""

from __future__ import annotations

import pytest

from unlearnkit.evaluation.audit import AuditSettings
from unlearnkit.evaluation.audit.card import audit_markdown, gap_lines
from unlearnkit.evaluation.audit.relearning import (
    KEEP_BAR,
    TEACH_BAR,
    calibration_metric,
    relearn_calibration,
    relearn_warnings,
)


def point(held: float, trained: float, rouge: float = 0.5) -> dict:
    """A curve point: fact recall on the held half and on the trained half (ROUGE-L beside them)."""
    return {
        "rougeL_recall": rouge,
        "prob": 0.1,
        "fact_recall": held,
        "trained_rougeL_recall": rouge,
        "trained_prob": 0.1,
        "trained_fact_recall": trained,
    }


def curve(oracle: list[tuple[float, float]] | None, original: list[tuple[float, float]] | None) -> dict:
    """``{role: [(held, trained) at steps 0, 20, 100, 250]}`` -> the audit's ``relearn_curve``."""
    out = {}
    for role, pts in (("oracle", oracle), ("original", original)):
        if pts is not None:
            out[role] = {k: point(h, t) for k, (h, t) in zip(("0", "20", "100", "250"), pts)}
    return out


SETTINGS = AuditSettings(relearn_steps=(20, 100, 250), relearn_lr=2e-5, quant_bits=())


def measured(c: dict) -> dict:
    return {role: {"relearn": points} for role, points in c.items()}


def test_the_bars_are_the_issues():
    assert (TEACH_BAR, KEEP_BAR) == (0.8, 0.9)


def test_an_attack_that_teaches_without_damage_passes_and_warns_nothing():
    # The oracle's trained half: 0.02 -> 0.10 -> 0.40 -> 0.86 (lr 2e-5, seed 0's shape): 0.86 >= 0.8.
    # The target's held half: 0.96 -> 0.96 -> 0.96 -> 0.90: lowest 0.90, kept 0.90 / 0.96 = 0.9375 >= 0.9.
    c = curve(
        oracle=[(0.02, 0.02), (0.02, 0.10), (0.04, 0.40), (0.02, 0.86)],
        original=[(0.96, 0.96), (0.96, 1.0), (0.96, 1.0), (0.90, 1.0)],
    )
    cal = relearn_calibration(c)
    assert cal["metric"] == "fact_recall" and cal["step"] == "250"
    assert cal["oracle_trained"] == 0.86 and cal["oracle_trained_before"] == 0.02
    assert cal["teaches"] is True
    assert cal["target_held_before"] == 0.96 and cal["target_held"] == 0.90
    assert cal["target_held_lowest"] == 0.90 and cal["target_lowest_step"] == "250"
    assert cal["target_kept"] == pytest.approx(0.9375) and cal["keeps"] is True
    assert cal["text"] == (
        "attack calibration: the attack can teach and does not damage: the oracle learns 0.86 of the half "
        "it is trained on after 250 steps (fact recall; 0.02 before; bar 0.80); the target keeps 94 % of "
        "its held-half fact recall (0.96 -> 0.90; bar 90 %)"
    )
    assert relearn_warnings(measured(c), SETTINGS) == []


def test_an_attack_that_cannot_teach_warns_to_raise_the_rate():
    # lr 1e-4 x 50 steps on the lab: the oracle learns 0.74 < 0.8 of the trained half; the
    # target keeps 0.96 -> 0.96 (100 %).
    c = curve(
        oracle=[(0.02, 0.02), (0.04, 0.16), (0.04, 0.50), (0.04, 0.74)],
        original=[(0.96, 0.96), (0.98, 1.0), (0.96, 1.0), (0.96, 1.0)],
    )
    cal = relearn_calibration(c)
    assert cal["teaches"] is False and cal["keeps"] is True and cal["target_kept"] == pytest.approx(1.0)
    assert cal["text"].startswith("attack calibration: the attack cannot teach: the oracle learns only 0.74")
    (w,) = relearn_warnings(measured(c), SETTINGS)
    assert w["code"] == "relearn_attack_cannot_teach"
    assert w["message"] == (
        "the relearning attack cannot teach: after 250 steps at lr 2e-05 the oracle (never trained on the "
        "forget set) states only 0.74 of the fact recall of the forget items it is trained on (bar 0.80), "
        "so a small gap on the held half is cheap to reach and says little; raise --relearn-lr (e.g. 4e-05) "
        "or relearn longer (a last --relearn-steps of e.g. 500) until the oracle learns it, watching that "
        "the target keeps its held half"
    )


def test_an_attack_that_damages_warns_to_lower_the_rate_and_names_the_lowest_point():
    # The target dips mid-curve: 1.00 -> 0.80 (after 100 steps) -> 0.95. The lowest point counts:
    # kept 0.80 / 1.00 = 80 % < 90 %, though the last point alone (95 %) would pass. The oracle: 0.94.
    c = curve(
        oracle=[(0.0, 0.0), (0.0, 0.30), (0.0, 0.70), (0.0, 0.94)],
        original=[(1.0, 1.0), (0.96, 1.0), (0.80, 1.0), (0.95, 1.0)],
    )
    cal = relearn_calibration(c)
    assert cal["teaches"] is True and cal["keeps"] is False
    assert cal["target_held_lowest"] == 0.80 and cal["target_lowest_step"] == "100"
    assert cal["target_kept"] == pytest.approx(0.80) and cal["target_held"] == 0.95
    assert cal["text"].endswith(
        "the target keeps only 80 % of its held-half fact recall (1.00 -> 0.95, lowest 0.80 after 100 "
        "steps; bar 90 %)"
    )
    (w,) = relearn_warnings(measured(c), SETTINGS)
    assert w["code"] == "relearn_attack_damages"
    assert w["message"] == (
        "the relearning attack damages the original (target) model: its held-half fact recall falls 1.00 "
        "-> 0.80 (after 100 steps at lr 2e-05: it keeps 80 %, bar 90 %), so falls on the curves are damage, "
        "not forgetting; lower --relearn-lr (e.g. 1e-05) and relearn for more steps so that the oracle "
        "still learns the trained half; or cap the attack's loss (--relearn-fit-prob 0.5: a model stops "
        "training on what it already states; on the embedded lab that attack keeps the target on every "
        "split); --relearn-control retain measures what an equal fine-tune on facts the target knows costs "
        "it"
    )


def test_both_failing_says_so_and_suggests_a_lower_rate_over_more_steps():
    # lr 3e-4-like: the oracle learns 0.60 < 0.8 by the end; the target falls 0.96 -> 0.72:
    # kept 0.72 / 0.96 = 75 % < 90 %.
    c = curve(
        oracle=[(0.02, 0.02), (0.04, 0.20), (0.04, 0.45), (0.02, 0.60)],
        original=[(0.96, 0.96), (0.90, 1.0), (0.80, 1.0), (0.72, 1.0)],
    )
    cal = relearn_calibration(c)
    assert cal["teaches"] is False and cal["keeps"] is False
    assert cal["target_kept"] == pytest.approx(0.75)
    assert cal["text"].startswith("attack calibration: the attack cannot teach and damages the target: ")
    teach, damage = relearn_warnings(measured(c), SETTINGS)
    assert (teach["code"], damage["code"]) == ("relearn_attack_cannot_teach", "relearn_attack_damages")
    assert teach["message"].endswith(
        "both bars fail, so neither a higher rate nor fewer steps helps: try a lower rate over more steps "
        "(e.g. --relearn-lr 1e-05 up to 500 steps)"
    )
    assert damage["message"].endswith("; see the other warning")


def test_the_bars_are_inclusive():
    # 40 of 50 trained facts = 0.8 exactly teaches; 45 of 50 held facts out of 50 of 50 = 0.9 keeps.
    c = curve(
        oracle=[(0.0, 0.0), (0.0, 0.2), (0.0, 0.5), (0.0, 40 / 50)],
        original=[(1.0, 1.0), (1.0, 1.0), (1.0, 1.0), (45 / 50, 1.0)],
    )
    cal = relearn_calibration(c)
    assert cal["teaches"] is True and cal["keeps"] is True
    # one fact fewer on each side fails: 39 / 50 = 0.78; 0.86 / 0.96 = 0.8958 (43 of 50 out of 48 of 50)
    c = curve(
        oracle=[(0.0, 0.0), (0.0, 0.2), (0.0, 0.5), (0.0, 39 / 50)],
        original=[(0.96, 1.0), (0.96, 1.0), (0.96, 1.0), (0.86, 1.0)],
    )
    cal = relearn_calibration(c)
    assert cal["teaches"] is False and cal["keeps"] is False
    assert cal["target_kept"] == pytest.approx(0.8958, abs=1e-4)


def test_each_reading_needs_its_model():
    oracle_only = curve(oracle=[(0.0, 0.0), (0.0, 0.2), (0.0, 0.5), (0.0, 0.9)], original=None)
    cal = relearn_calibration(oracle_only)
    assert cal["teaches"] is True and cal["keeps"] is None and cal["target_kept"] is None
    assert cal["text"] == (
        "attack calibration: the attack can teach: the oracle learns 0.90 of the half it is trained on after "
        "250 steps (fact recall; 0.00 before; bar 0.80)"
    )
    target_only = curve(oracle=None, original=[(0.96, 1.0), (0.5, 1.0), (0.5, 1.0), (0.5, 1.0)])
    cal = relearn_calibration(target_only)
    assert cal["teaches"] is None and cal["keeps"] is False  # 0.5 / 0.96 = 52 %
    assert [w["code"] for w in relearn_warnings(measured(target_only), SETTINGS)] == [
        "relearn_attack_damages"
    ]
    # only the audited model, or no step after 0: nothing to read
    audited = {"audited": curve(oracle=[(0.0, 0.0)] * 4, original=None)["oracle"]}
    assert relearn_calibration(audited) is None
    assert relearn_calibration({"oracle": {"0": point(0.0, 0.0)}}) is None
    assert relearn_warnings(measured(oracle_only), AuditSettings(relearn_steps=(), quant_bits=())) == []


def test_a_target_that_never_knew_the_held_facts_is_not_read_for_damage():
    # 0.0 before the attack: a share of nothing is undefined, so no verdict and no warning about damage
    c = curve(
        oracle=[(0.0, 0.0), (0.0, 0.5), (0.0, 0.8), (0.0, 0.9)],
        original=[(0.0, 0.0), (0.0, 1.0), (0.0, 1.0), (0.0, 1.0)],
    )
    cal = relearn_calibration(c)
    assert cal["keeps"] is None and cal["target_kept"] is None
    assert (
        "the target states no held-half fact recall before the attack: damage cannot be read" in cal["text"]
    )
    assert relearn_warnings(measured(c), SETTINGS) == []


def test_without_fact_recall_the_reading_falls_back_to_rouge():
    # Rows without fact_value: ROUGE-L recall. Oracle 0.30 -> 0.85 on the trained half; the target
    # 0.90 -> 0.85 on the held half: 0.85 / 0.90 = 94 %.
    c = {
        "oracle": {
            "0": {"rougeL_recall": 0.25, "trained_rougeL_recall": 0.30},
            "50": {"rougeL_recall": 0.30, "trained_rougeL_recall": 0.85},
        },
        "original": {
            "0": {"rougeL_recall": 0.90, "trained_rougeL_recall": 0.90},
            "50": {"rougeL_recall": 0.85, "trained_rougeL_recall": 1.0},
        },
    }
    assert calibration_metric(c) == "rougeL_recall"
    cal = relearn_calibration(c)
    assert (cal["metric"], cal["label"], cal["step"]) == ("rougeL_recall", "forget ROUGE-L", "50")
    assert cal["teaches"] is True and cal["target_kept"] == pytest.approx(0.85 / 0.90)
    assert cal["keeps"] is True


def test_the_card_shows_both_halves_and_the_calibration():
    c = curve(
        oracle=[(0.02, 0.02), (0.04, 0.16), (0.04, 0.50), (0.04, 0.74)],
        original=[(0.96, 0.96), (0.98, 1.0), (0.96, 1.0), (0.96, 1.0)],
    )
    c["audited"] = c["original"]
    cal = relearn_calibration(c)
    audit = {
        "models": {"audited": "audited", "oracle": "oracle", "original": "original"},
        "data": {"path": "w", "kind": "tofu", "relearn_train_items": 50, "relearn_held_items": 50},
        "checks": [
            {"id": "relearning", "title": "Relearning attack", "rows": [{"label": "x"}], "verdict": "v"}
        ],
        "relearn_curve": c,
        "relearn_probes": [{"key": "fact_recall", "short": "fact", "label": "fact recall"}],
        "relearn_final_step": 250,
        "relearn_gap_final": 0.5,
        "relearn_gap_fact_final": 0.92,
        "relearn_calibration": cal,
        "warnings": relearn_warnings(measured(c), SETTINGS),
    }
    md = audit_markdown(audit)
    # the held half's table (ROUGE-L / fact recall / prob), then the trained half's (its numbers)
    assert "Relearning curve (forget ROUGE-L / fact recall / prob on the held-out half):" in md
    assert "The same on the 50 trained forget items (what the attack teaches):" in md
    trained = md[md.index("The same on the 50 trained") :]
    assert "| 250 | 0.500 / 1.000 / 0.100 | 0.500 / 0.740 / 0.100 | 0.500 / 1.000 / 0.100 |" in trained
    lines = gap_lines(audit)
    assert lines[0].startswith("relearn_gap_final = +0.500 (audited minus retain-oracle forget ROUGE-L")
    assert "after 250 relearning steps, the curve's last" in lines[0]
    assert lines[1] == "relearn_gap_fact_final = +0.920 (the same gap in fact recall)"
    assert lines[2] == cal["text"]
    assert "**Warning:** the relearning attack cannot teach" in md


def test_the_attack_mixes_in_the_asked_share_of_retain_rows_seeded_and_never_the_forget_rows():
    from unlearnkit.evaluation.audit.relearning import with_retain

    forget = [{"question": f"f{i}?", "answer": "x"} for i in range(10)]
    retain = [{"question": f"r{i}?", "answer": "y"} for i in range(7)]
    assert with_retain(forget, retain, 0.0, 0) == forget
    assert with_retain(forget, [], 1.0, 0) == forget
    one = with_retain(forget, retain, 1.0, 0)
    assert one[:10] == forget and len(one) == 20  # 10 retain rows from 7: all 7, then 3 again
    mixed = [r["question"] for r in one[10:]]
    assert sorted(set(mixed)) == sorted(r["question"] for r in retain) and len(set(mixed[:7])) == 7
    assert one == with_retain(forget, retain, 1.0, 0)  # seeded
    assert [r["question"] for r in with_retain(forget, retain, 1.0, 1)[10:]] != mixed
    assert len(with_retain(forget, retain, 0.5, 0)) == 15


@pytest.mark.parametrize("value", [-0.5, 11, True, "1", float("nan")])
def test_relearn_retain_out_of_range_is_one_clear_error(value):
    from unlearnkit.errors import UserError

    with pytest.raises(UserError, match="relearn_retain must be a number in \\[0, 10\\]"):
        AuditSettings(relearn_retain=value)


@pytest.mark.parametrize("value", ["sgdd", "", 3, None])
def test_an_unknown_attack_optimiser_is_one_clear_error(value):
    from unlearnkit.errors import UserError

    with pytest.raises(UserError, match="relearn_optim"):
        AuditSettings(relearn_optim=value)


def test_the_attack_trains_with_the_optimiser_it_is_given(tiny_random_llama, world_tokenizer, mini_bench):
    """``relearn_optim`` reaches the attack's Trainer: plain SGD moves the weights by lr x the clipped
    gradient, AdamW (auto) by about lr per weight whatever the gradient; the optimiser the Trainer
    builds is recorded from inside the run."""
    import torch
    from transformers import TrainerCallback

    from unlearnkit.evaluation.audit.relearning import _relearn_run

    seen = {}

    class Record(TrainerCallback):
        def on_step_end(self, args, state, control, optimizer=None, **kwargs):
            seen.setdefault(state.global_step, type(getattr(optimizer, "optimizer", optimizer)).__name__)

    rows = [r for r in mini_bench.forget if r.get("question")][:4]
    for optim, expected in (("sgd", "SGD"), ("auto", "AdamW")):
        seen.clear()
        model = tiny_random_llama
        before = {n: p.detach().clone() for n, p in model.named_parameters()}
        st = AuditSettings(relearn_steps=(1,), relearn_lr=1e-3, relearn_optim=optim, relearn_batch_size=2)
        _relearn_run(model, world_tokenizer, rows, 1, st, callbacks=[Record()])
        assert seen == {1: expected}
        moved = torch.cat([(p.detach() - before[n]).abs().flatten() for n, p in model.named_parameters()])
        if optim == "auto":  # Adam's first step: about lr for every weight with a gradient
            assert moved.max().item() == pytest.approx(1e-3, rel=0.05)
        else:  # SGD's step: lr x gradient, the gradient's norm clipped to 1 (max_grad_norm)
            assert 0 < moved.norm().item() <= 1e-3 * 1.0001
        with torch.no_grad():  # back to the fixture's weights for the next optimiser
            for n, p in model.named_parameters():
                p.copy_(before[n])


def test_the_capped_loss_drops_the_tokens_the_model_already_gives_the_cap():
    """``fit_capped_nll`` by hand: two answer tokens, one at p = 0.8 (over the cap 0.5: no term, still
    counted in the mean), one at p = 0.2 (its -log p); with the cap at 1 plain cross-entropy."""
    import math

    import torch

    from unlearnkit.evaluation.audit.relearning import fit_capped_nll

    # vocabulary of 2; position t predicts labels[t + 1]; the first label (prompt) is ignored
    probs = torch.tensor([[[0.8, 0.2], [0.8, 0.2], [0.5, 0.5]]])
    logits = probs.log().requires_grad_(True)
    labels = torch.tensor([[-100, 0, 1]])  # next tokens: 0 (p 0.8), 1 (p 0.2)
    capped = fit_capped_nll(logits, labels, 0.5)
    assert capped.item() == pytest.approx(-math.log(0.2) / 2, rel=1e-6)
    capped.backward()
    assert logits.grad[0, 0].abs().sum().item() == 0  # the fitted token adds no gradient
    assert logits.grad[0, 1].abs().sum().item() > 0
    plain = fit_capped_nll(probs.log(), labels, 1.0)
    expected = torch.nn.functional.cross_entropy(probs.log()[0, :-1], labels[0, 1:], ignore_index=-100)
    assert plain.item() == pytest.approx(expected.item(), rel=1e-6)
    assert plain.item() == pytest.approx(-(math.log(0.8) + math.log(0.2)) / 2, rel=1e-6)


@pytest.mark.parametrize("value", [0, -0.5, 1.5, True, "0.5", None])
def test_a_fit_prob_off_zero_to_one_is_one_clear_error(value):
    from unlearnkit.errors import UserError

    with pytest.raises(UserError, match="relearn_fit_prob must be a probability in \\(0, 1\\]"):
        AuditSettings(relearn_fit_prob=value)


def test_the_attack_trains_with_the_cap_it_is_given(tiny_random_llama, world_tokenizer, mini_bench):
    """``relearn_fit_prob`` reaches the attack's Trainer: capped where the model gives every token at least
    the cap, no token is trained and the weights stay (Adam's step on a zero gradient is zero); at 1
    (plain cross-entropy) the same step moves them."""
    import torch

    from unlearnkit.evaluation.audit.relearning import _relearn_run

    rows = [r for r in mini_bench.forget if r.get("question")][:4]
    model = tiny_random_llama
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    moved = {}
    for fit in (1e-9, 1.0):
        st = AuditSettings(relearn_steps=(1,), relearn_lr=1e-3, relearn_fit_prob=fit, relearn_batch_size=2)
        _relearn_run(model, world_tokenizer, rows, 1, st)
        moved[fit] = max((p.detach() - before[n]).abs().max().item() for n, p in model.named_parameters())
        with torch.no_grad():
            for n, p in model.named_parameters():
                p.copy_(before[n])
    assert moved[1e-9] == 0 and moved[1.0] > 0

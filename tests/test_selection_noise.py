"""The "equal within noise" rule (unlearnkit.evaluation.selection_noise) and the sweep's refusal to choose by it
against independent computations."""

from __future__ import annotations

import math
import statistics
from types import SimpleNamespace

import pytest

from unlearnkit.evaluation.selection_noise import (
    NOISE_SE,
    all_equal,
    equal,
    harmonic_se,
    ks_distance,
    noise_bands,
    unmoved,
)


def _details():
    return {
        "forget": {
            "rougeL_recall": [1.0, 0.5, 0.0, 1.0],
            "nll_mean": [0.1, 0.2, 2.0, 0.5],
            "truth_ratios": [0.5, 2.0, 1.0, 0.25],
        },
        "retain": {
            "rougeL_recall": [1.0, 1.0, 0.5],
            "nll_mean": [0.1, 0.3, 0.2],
            "truth_ratios": [0.2, 0.4, 1.5],
        },
        "general": {"rougeL_recall": [1.0, 0.0], "nll_mean": [0.2, 0.9], "truth_ratios": [0.5, 0.9]},
        "prompt_format": "plain",  # not a split
    }


def _metrics():
    d = _details()
    return {
        "forget_rougeL_recall": statistics.fmean(d["forget"]["rougeL_recall"]),
        "forget_prob": statistics.fmean(math.exp(-x) for x in d["forget"]["nll_mean"]),
        "forget_truth_ratio": 0.5,
        "forget_exact_memorisation": 0.8,
        "retain_rougeL_recall": 2.5 / 3,
        "retain_prob": statistics.fmean(math.exp(-x) for x in d["retain"]["nll_mean"]),
        "retain_truth_ratio": 0.3,
        "general_rougeL_recall": 0.5,
        "general_prob": 0.6,
        "general_truth_ratio": 0.3,
        "model_utility": 0.4,
        "forget_quality": 0.5,
    }


def test_a_mean_is_within_noise_inside_two_standard_errors_of_the_targets_items():
    noise = noise_bands(_metrics(), _details(), oracle_items=4)
    rouge = [1.0, 0.5, 0.0, 1.0]
    assert noise["bands"]["forget_rougeL_recall"] == pytest.approx(2 * statistics.stdev(rouge) / math.sqrt(4))
    probs = [math.exp(-x) for x in (0.1, 0.2, 2.0, 0.5)]
    assert noise["bands"]["forget_prob"] == pytest.approx(2 * statistics.stdev(probs) / 2)
    closer = [min(t, 1 / t) for t in (0.5, 2.0, 1.0, 0.25)]  # TOFU's forget truth-ratio score per item
    assert noise["bands"]["forget_truth_ratio"] == pytest.approx(2 * statistics.stdev(closer) / 2)
    better = [max(0.0, 1 - t) for t in (0.2, 0.4, 1.5)]
    assert noise["bands"]["retain_truth_ratio"] == pytest.approx(2 * statistics.stdev(better) / math.sqrt(3))
    # per-item values not kept: the bound of a [0, 1] variable with that mean
    assert noise["bands"]["general_prob"] == pytest.approx(2 * math.sqrt(0.6 * 0.4 / 2))
    assert noise["bands"]["forget_exact_memorisation"] == pytest.approx(2 * math.sqrt(0.8 * 0.2 / 4))
    # forget quality: on the KS-distance scale, 2 sd of the Kolmogorov distribution / sqrt(n_eff)
    assert noise["bands"]["forget_quality"] == pytest.approx(2 * 0.2603 / math.sqrt(2), rel=1e-3)
    assert NOISE_SE == 2.0


def test_utilitys_band_is_the_harmonic_means_first_order_error():
    parts = [(0.5, 0.02), (0.8, 0.05), (0.3, 0.01)]

    def h(xs):
        return len(xs) / sum(1 / x for x in xs)

    eps = 1e-6
    grads = []
    for j in range(3):
        up = [x + (eps if i == j else 0.0) for i, (x, _) in enumerate(parts)]
        grads.append((h(up) - h([x for x, _ in parts])) / eps)
    expected = math.sqrt(sum((g * se) ** 2 for g, (_, se) in zip(grads, parts)))
    assert harmonic_se(parts) == pytest.approx(expected, rel=1e-4)
    # a zero component: H = 0 and only that component moves it (H ~ k x near 0)
    assert harmonic_se([(0.0, 0.1), (0.5, 0.2)]) == pytest.approx(2 * 0.1)


def test_forget_quality_is_compared_through_its_ks_distance():
    from scipy.stats import ks_2samp

    rng = __import__("numpy").random.default_rng(0)
    a, b = rng.normal(0, 1, 400), rng.normal(0.3, 1, 400)
    res = ks_2samp(a, b, method="asymp")
    assert ks_distance(res.pvalue, 200.0) == pytest.approx(res.statistic, abs=0.01)
    noise = {"bands": {"forget_quality": 0.1}, "fq_n_eff": 200.0}
    assert equal(noise, "forget_quality", res.pvalue, res.pvalue)
    assert not equal(noise, "forget_quality", 1e-10, 0.9)  # D 0.46 vs 0.04: far apart


def test_unmoved_and_all_equal():
    noise = {"bands": {"forget_rougeL_recall": 0.05, "model_utility": 0.02}}
    target = {"forget_rougeL_recall": 0.90}
    assert unmoved(noise, target, {"forget_rougeL_recall": 0.86})
    assert not unmoved(noise, target, {"forget_rougeL_recall": 0.80})
    rows = [
        {"forget_rougeL_recall": 0.5, "model_utility": 0.40},
        {"forget_rougeL_recall": 0.53, "model_utility": 0.41},
    ]
    assert all_equal(noise, rows, ["forget_rougeL_recall", "model_utility"])
    rows[1]["model_utility"] = 0.45
    assert not all_equal(noise, rows, ["forget_rougeL_recall", "model_utility"])
    assert not all_equal(noise, rows[:1], ["model_utility"])  # one trial: nothing to compare


# ---------------------------------------------------------------------------------------------
# The sweep's refusal


def _ctx(noise, target, space_params=None, fixed=None):
    from unlearnkit.pipelines.sweep import Param, SearchSpace, SweepSettings

    params = space_params or {"lr": Param("lr", 2e-6, 5e-5, log=True)}
    st = SweepSettings(model="m", data="d", method="npo", output="o", max_items=50)
    return SimpleNamespace(
        settings=st,
        reference={"noise": noise, "target_selection": target},
        space=SearchSpace(params, fixed or {}, "spaces/npo.yaml", "the papers' 1B-8B space"),
        selection=list(range(10)),
    )


def _row(n, **metrics):
    return {"number": n, "state": "COMPLETE", "selection_metrics": metrics, "values": [0, 0], "params": {}}


def test_a_sweep_that_moved_nothing_refuses_and_names_the_setting_to_widen():
    from unlearnkit.pipelines.sweep import refusal

    noise = {"bands": {"forget_rougeL_recall": 0.02, "forget_prob": 0.01, "model_utility": 0.01}}
    target = {"forget_rougeL_recall": 1.0, "forget_prob": 0.9, "model_utility": 0.78}
    ctx = _ctx(noise, target)
    rows = [
        _row(i, forget_rougeL_recall=1.0, forget_prob=0.9 - 0.001 * i, model_utility=0.78 - 0.01 * i)
        for i in range(6)
    ]
    why = refusal(rows, ctx)
    assert why and "left the model where it was" in why
    assert "widen lr" in why and "2e-06 to 5e-05" in why and "e.g. to 0.0005" in why
    # one trial that moved the forget metrics beyond noise: a choice is possible
    rows.append(_row(9, forget_rougeL_recall=0.6, forget_prob=0.3, model_utility=0.70))
    assert refusal(rows, ctx) is None


def test_trials_equal_within_noise_are_refused_with_what_to_change_and_a_zero_component_named():
    from unlearnkit.pipelines.sweep import refusal

    noise = {"bands": {"forget_rougeL_recall": 0.05, "forget_prob": 0.05, "model_utility": 0.0}}
    target = {"forget_rougeL_recall": 1.0, "forget_prob": 0.9, "model_utility": 0.0}
    ctx = _ctx(noise, target)
    ctx.settings.objectives = ("forget_rougeL_recall", "model_utility")
    rows = [
        _row(
            i,
            forget_rougeL_recall=0.5 + 0.01 * i,
            forget_prob=0.4,
            model_utility=0.0,
            retain_truth_ratio=0.0,
            retain_prob=0.8,
        )
        for i in range(3)
    ]
    why = refusal(rows, ctx)
    assert why and "equal within noise on every objective" in why and "choose noise" in why
    assert "selection half has only 10" in why and "--max-items 50 cannot add rows" in why
    assert "retain_truth_ratio is 0" in why and "paraphrased_answer" in why and "wording" in why
    rows[2]["selection_metrics"]["forget_rougeL_recall"] = 0.2  # one trial forgets clearly more ...
    assert "chosen blind" in refusal(rows, ctx)  # ... but with utility 0 everywhere it is still refused


def test_a_choice_resting_on_a_zero_utility_component_is_refused():
    from unlearnkit.pipelines.sweep import refusal

    ctx = _ctx({"bands": {"forget_rougeL_recall": 0.01}}, {"forget_rougeL_recall": 1.0, "model_utility": 0.0})
    rows = [
        _row(i, forget_rougeL_recall=0.3 * i, model_utility=0.0, retain_truth_ratio=0.0) for i in range(3)
    ]
    why = refusal(rows, ctx)  # forgetting differs far beyond noise, but utility protects nothing
    assert why and "model utility is 0 in every one of the 3" in why and "chosen blind" in why
    assert "retain_truth_ratio is 0" in why and "paraphrased_answer" in why
    assert "--objective forget_rougeL_recall" in why
    rows[0]["selection_metrics"].update(retain_truth_ratio=0.2, model_utility=0.3)  # one trial keeps utility
    assert refusal(rows, ctx) is None


def test_pair_band_is_two_standard_errors_of_the_difference_of_two_shares():
    from unlearnkit.evaluation.selection_noise import pair_band

    # two shares of 100 items, 0.02 and 0.10: se = sqrt(.02 .98 / 100 + .1 .9 / 100)
    assert pair_band(0.02, 0.10, 100) == pytest.approx(2 * math.sqrt(0.02 * 0.98 / 100 + 0.1 * 0.9 / 100))
    assert pair_band(0.0, 0.0, 100) == 0.0  # both certain: only equal values are equal
    assert pair_band(0.5, 0.5, 0) == math.inf  # no items: nothing can be told apart

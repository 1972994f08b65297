"""Which row the report calls best, and what each row pays for its gain (issue 22.3, 22.5).

The case: in the small quickstart the old rule (highest forget quality among rows keeping 80 % of the
target's utility) marked ASU best with forget probability 0.898 against the oracle's 0.005, because
on 10 forget items ASU's forget quality happened to be the highest; the robust UNDO row's utility cost
(0.490 vs the oracle's 0.600) was printed but never said.
"""

from __future__ import annotations

import copy

import pytest

from unlearnkit.pipelines.quickstart import best_method
from unlearnkit.report.choice import UTILITY_KEPT, choose_best, gains_and_costs, statement
from unlearnkit.report.page import render_report


def _row(fq, mu, rouge, fact, prob, retain=0.99):
    return {
        "forget_quality": fq,
        "model_utility": mu,
        "forget_rougeL_recall": rouge,
        "forget_fact_recall": fact,
        "forget_prob": prob,
        "retain_rougeL_recall": retain,
        "forget_quality_n": 10,
        "forget_quality_oracle_n": 10,
    }


RESULTS = {
    "target": _row(0.57, 0.600, 1.00, 1.0, 0.990),
    "oracle": _row(1.0, 0.600, 0.39, 0.0, 0.005),
    "ga": _row(0.20, 0.000, 0.05, 0.0, 0.000, retain=0.05),
    "idk": _row(0.30, 0.550, 0.30, 0.1, 0.400),
    "npo": _row(0.45, 0.570, 0.45, 0.1, 0.045),
    "asu": _row(0.95, 0.600, 0.85, 0.8, 0.898),
    "asu+undo1": _row(0.60, 0.490, 0.36, 0.0, 0.010),
}
METHODS = ["ga", "idk", "npo", "asu"]


def _old_rule(results, methods):
    floor = 0.8 * results["target"]["model_utility"]
    useful = [m for m in methods if results[m]["model_utility"] >= floor] or methods
    return max(useful, key=lambda m: (results[m]["forget_quality"], results[m]["model_utility"]))


def test_best_is_closest_to_the_oracle_with_utility_kept():
    assert _old_rule(RESULTS, METHODS) == "asu"  # the pick: forget prob 0.898, oracle 0.005
    choice = choose_best(RESULTS)
    # kept (>= 0.54): idk 0.55, npo 0.57, asu 0.60; mean |fact - 0| and |prob - 0.005|:
    # idk (0.1 + 0.395) / 2 = 0.2475, npo (0.1 + 0.04) / 2 = 0.07, asu (0.8 + 0.893) / 2 = 0.8465
    assert choice.row == "npo"
    assert choice.forget_keys == ("forget_fact_recall", "forget_prob")  # the fact-level score
    assert choice.standings["npo"].distance == pytest.approx(0.07)
    assert choice.standings["asu"].distance == pytest.approx(0.8465)
    assert choice.standings["idk"].distance == pytest.approx(0.2475)
    assert not choice.standings["ga"].kept and not choice.standings["asu+undo1"].kept  # 0.00x, 0.82x
    assert choice.standings["npo"].closed == pytest.approx(1 - 0.07 / ((1.0 + 0.985) / 2))
    # quickstart's best_method (the robust row's teacher when NPO did not run) is the same rule
    assert best_method(RESULTS, METHODS) == "npo"


def test_the_report_states_the_rule_and_the_chosen_row():
    text = statement(choose_best(RESULTS))
    assert text.startswith(
        "Best by the rule: npo: forget fact recall / forget probability 0.100 / 0.045 against the oracle's "
        "0.000 / 0.005, target 1.000 / 0.990 (mean distance 0.070), model utility 0.570 = 0.95x the oracle's."
    )
    assert (
        f"Best = among the rows keeping at least {UTILITY_KEPT * 100:.0f} % of the oracle's model utility, "
        "the one closest to the oracle on the forget side (mean absolute difference from the oracle's "
        "forget fact recall and forget probability; ties: higher utility). Forget quality is not used"
    ) in text
    page = render_report(RESULTS, [], title="t")
    assert "<h2>Which row is best</h2>" in page and "Best by the rule: npo:" in page


def test_every_row_that_pays_utility_says_so_in_the_words_of_its_gain():
    lines = dict(line.split(": ", 1) for line in gains_and_costs(choose_best(RESULTS), RESULTS))
    assert lines["asu+undo1"] == (
        "moves forget fact recall / forget probability from the target's 1.000 / 0.990 to 0.000 / 0.010 "
        "(oracle 0.000 / 0.005), closing 100 % of the target's distance to the oracle; it pays 18 % of "
        "the oracle's model utility for it (0.490 vs 0.600, 0.82x)."
    )
    assert lines["asu"].endswith("; it keeps the oracle's model utility (0.600 vs 0.600).")
    assert "it pays 100 % of the oracle's model utility" in lines["ga"]
    paying = [
        r for r, s in choose_best(RESULTS).standings.items() if s.utility < RESULTS["oracle"]["model_utility"]
    ]
    assert sorted(paying) == ["asu+undo1", "ga", "idk", "npo"]
    assert all("it pays" in lines[r] for r in paying)
    page = render_report(RESULTS, [], title="t")
    assert "<h3>Gains and costs</h3>" in page and "it pays 18 % of the oracle&#x27;s model utility" in page


def test_rouge_when_no_fact_score_and_retain_rouge_when_utility_is_degenerate():
    no_fact = copy.deepcopy(RESULTS)
    for row in no_fact.values():
        del row["forget_fact_recall"]
    choice = choose_best(no_fact)
    assert choice.forget_keys == ("forget_rougeL_recall", "forget_prob")
    assert "forget ROUGE-L recall and forget probability" in choice.rule
    zero = copy.deepcopy(RESULTS)  # the case 2: every model_utility 0, the oracle's included
    for row in zero.values():
        row["model_utility"] = 0.0
    choice = choose_best(zero)
    assert choice.utility_key == "retain_rougeL_recall" and "degenerate" in choice.rule
    # retain ROUGE 0.99 for all but GA: every other row keeps it, and the forget side decides
    assert choice.row == "asu+undo1" and choice.standings["asu+undo1"].kept


def test_no_row_is_called_best_when_none_keeps_utility():
    poor = {k: dict(v) for k, v in RESULTS.items()}
    for name, mu in (("ga", 0.10), ("idk", 0.20), ("npo", 0.15), ("asu", 0.30), ("asu+undo1", 0.35)):
        poor[name]["model_utility"] = mu  # all below 0.9 x 0.600
    choice = choose_best(poor)
    assert choice.row is None and choice.fallback == "asu+undo1"  # keeps the most utility
    assert statement(choice).startswith(
        "No row is called best: no row keeps 90 % of the oracle's model utility; the one keeping the most "
        "is asu+undo1."
    )
    assert best_method(poor, METHODS) == "asu"  # among the methods, the one keeping the most
    assert choose_best({"target": RESULTS["target"], "npo": RESULTS["npo"]}).row is None  # no oracle


def test_report_warns_when_forget_quality_cannot_separate_the_target():
    page = render_report(RESULTS, [], title="t")
    assert "<h2>Warnings</h2>" in page
    assert "the target (before unlearning) has forget_quality 0.57 &gt;= 0.05 against the oracle" in page
    assert "rests on 10 forget items against the oracle&#x27;s 10" in page
    assert page.index("<h2>Warnings</h2>") < page.index("<h2>Metrics</h2>")  # read before the numbers

"""Which row the report calls best, and what each row pays for its gain .

The case: in the small quickstart the old rule (highest forget quality among rows keeping 80 % of the
target's utility) marked ASU best with forget probability 0.898 against the oracle's 0.005, because
on 10 forget items ASU's forget quality happened to be the highest; the robust UNDO row's utility cost
(0.490 vs the oracle's 0.600) was printed but never said.
"""

from __future__ import annotations

import copy

import pytest

from unlearnkit.pipelines.quickstart import best_method
from unlearnkit.report.choice import UTILITY_KEPT, choose_best, gains_and_costs, statement, verdict
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
    assert _old_rule(RESULTS, METHODS) == "asu"  # the old rule's pick: forget prob 0.898, oracle 0.005
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
        f"Best = among the unlearning methods keeping at least {UTILITY_KEPT * 100:.0f} % of the oracle's "
        "model utility and answering in language (at most 20 % of the forget answers empty or gibberish), "
        "the one closest to the oracle on the forget side (mean absolute difference from the oracle's "
        "forget fact recall and forget probability; rows equal within noise on both are a tie, named "
        "together, the higher utility first). Forget quality is not used"
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
    zero = copy.deepcopy(RESULTS)  # the reported case 2: every model_utility 0, the oracle's included
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


# --------------------------------------------------------------------- a verdict a newcomer can trust
# The case: s-npo was called best, ahead of npo by a mean distance of 0.0145 vs 0.0149 (a
# tie nobody called one), while 4 of its 5 shown answers were gibberish; the table's "best among the
# methods" highlight landed on the pretrained base, which never saw the forget data.


def _verdict_table(n=100):
    rows = {
        "target": _row(1e-5, 0.600, 1.00, 1.00, 0.990),
        "oracle": _row(1.0, 0.600, 0.39, 0.00, 0.005),
        "base": _row(0.90, 0.640, 0.38, 0.00, 0.005),  # never saw the forget data: at the oracle
        "npo": _row(0.40, 0.580, 0.40, 0.02, 0.014),
        "s-npo": _row(0.45, 0.590, 0.40, 0.02, 0.013),
        "gd": _row(0.30, 0.570, 0.55, 0.30, 0.200),
    }
    for row in rows.values():
        row["forget_quality_n"] = row["forget_quality_oracle_n"] = n
    return rows


def test_a_row_answering_gibberish_is_never_best_whatever_its_numbers():
    results = _verdict_table()
    results["ga"] = dict(_row(0.99, 0.600, 0.39, 0.0, 0.005), forget_gibberish=0.8)  # the oracle's numbers
    results["npo"]["forget_gibberish"] = 0.2  # one in five: still eligible
    choice = choose_best(results)
    assert choice.standings["ga"].distance == 0.0  # the closest to the oracle of all ...
    assert choice.row != "ga" and "ga" not in choice.tied  # ... and still not chosen
    assert (
        choice.excluded["ga"] == "80 % of its forget answers are empty or gibberish, above the 20 % allowed"
    )
    assert "ga cannot be chosen: 80 % of its forget answers are empty or gibberish" in statement(choice)
    assert "Not eligible: ga (80 % of its forget answers" in verdict(choice)
    # Without the key in the results, the report judges the answers it shows (4 of 5 badged gibberish).
    del results["ga"]["forget_gibberish"]
    loop = "the the the the the the the the"
    generations = [
        {
            "question": f"q{i}",
            "answer": "Ann was born in Paris.",
            "outputs": {"ga": loop if i else "Rome.", "npo": "Rome."},
        }
        for i in range(5)
    ]
    assert choose_best(results).row == "ga"  # nothing says it babbles: its numbers win
    page = render_report(results, generations, title="t")
    assert "ga cannot be chosen: 80 % of its forget answers are empty or gibberish" in page


def test_a_row_that_is_not_an_unlearning_method_is_never_chosen_nor_highlighted():
    results = _verdict_table()
    choice = choose_best(results, candidates=list(results))  # even when a caller lists every row
    assert choice.row in ("npo", "s-npo") and "base" not in choice.standings
    assert set(choice.excluded) >= {"target", "oracle", "base"}
    assert "Not unlearning methods, so never chosen: target, oracle, base." in statement(choice)
    # the table's per-column highlight ("best among the methods") skips the base too
    from unlearnkit.report.table import best_rows

    assert best_rows(results, "forget_fact_recall") == {"npo", "s-npo"}  # the base's 0.00 is the oracle's
    assert best_rows(results, "model_utility") == {"s-npo"}  # the base's 0.640 is higher


def test_a_difference_within_the_noise_is_a_tie_naming_both():
    results = _verdict_table()
    choice = choose_best(results)
    # distance npo (0.02 + 0.009) / 2 = 0.0145, s-npo (0.02 + 0.008) / 2 = 0.014: s-npo is closer by
    # 0.0005; on 100 items the band of the probability difference is 2 sqrt(.014 .986 / 100 +
    # .013 .987 / 100) = 0.033, so the two are equal within noise: a tie, and the higher utility
    # (s-npo 0.590 vs npo 0.580) is named first, for its utility.
    assert choice.row == "s-npo" and choice.tied == ("npo",)
    assert "A tie: s-npo and npo are equal within noise on 100 forget items" in statement(choice)
    assert "s-npo is named first for its model utility, not for forgetting better" in statement(choice)
    assert verdict(choice).startswith("Verdict: best = s-npo (a tie with npo: equal within noise")
    assert "gd" not in choice.tied  # fact recall 0.30 vs 0.02 is far outside the noise
    # With the utilities swapped, npo is named first: the tie is decided by utility, not by 0.0005.
    swapped = copy.deepcopy(results)
    swapped["npo"]["model_utility"], swapped["s-npo"]["model_utility"] = 0.590, 0.580
    assert choose_best(swapped).row == "npo" and choose_best(swapped).tied == ("s-npo",)
    # The same means on a million items are told apart (band 2 sqrt(2 x .0135 x .9865 / 1e6) = 0.0003 <
    # 0.001): no tie, the closer row wins even with less utility.
    many = _verdict_table(n=1_000_000)
    many["npo"]["model_utility"] = 0.595
    choice = choose_best(many)
    assert choice.row == "s-npo" and choice.tied == ()
    assert "tie" not in verdict(choice)


def test_the_quickstart_audits_the_row_its_verdict_names():
    from unlearnkit.pipelines.quickstart import audited_rows, verdict_lines

    results = _verdict_table()
    results["npo+undo1"] = _row(0.5, 0.40, 0.39, 0.0, 0.005)  # keeps too little utility to be chosen
    results["npo+undo1"]["forget_quality_n"] = 100
    assert choose_best(results).row == "s-npo"
    assert audited_rows(results, "npo", "npo+undo1") == ["npo+undo1", "npo", "s-npo"]
    results["s-npo"]["forget_gibberish"] = 0.8  # now npo is the verdict's row: audited already
    assert audited_rows(results, "npo", "npo+undo1") == ["npo+undo1", "npo"]
    lines = verdict_lines(results, "tofu")
    assert (
        lines[0].startswith("Verdict: best = npo: closest to the oracle")
        and "Not eligible: s-npo" in lines[0]
    )
    assert all(line.startswith("warning: ") for line in lines[1:])

"""Diagnostics of degenerate numbers and the fact-level score.

Pure parts on crafted numbers, then the case the issue met, end to end through the CLI: a tiny model
trained on a user's own 50 QA about fictional people (10 forget, 30 retain, 10 holdout) whose
paraphrased answers use a wording the model never saw, while the wrong answers keep the trained
wording. Its retain truth ratio is 0, so model utility is 0 for every model; forget quality rests on
10 items. ``eval`` and ``audit`` must say so, in words, on stderr and in their JSON.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from scipy import stats

from unlearnkit.evaluation import diagnostics as D
from unlearnkit.evaluation.probes import (
    RELEARN_PROBES,
    data_kind,
    fact_metrics,
    fact_recall,
    fact_recalled,
    probes_for,
)

# ------------------------------------------------------------------------------------- fact recall


def test_fact_recalled_by_hand():
    assert fact_recalled("Ada Marsh was born in Quenville.", "Quenville")
    assert fact_recalled("ADA MARSH WAS BORN IN QUENVILLE", "quenville")  # case-insensitive
    assert fact_recalled("born on\nMarch  3,\t1961 in", "March 3, 1961")  # whitespace normalised
    assert not fact_recalled("born in 1912", "12")  # whole words: not inside a number
    assert not fact_recalled("a Parisian poet", "Paris")  # nor inside a word
    assert fact_recalled("she wrote (poetry).", "(poetry)")  # punctuation at the ends matched as written
    assert not fact_recalled("Ada Marsh was born in Plimth.", "Quenville")
    assert not fact_recalled("anything", "  ")  # a blank fact is never recalled


def test_fact_recall_is_the_share_of_items():
    rows = [{"fact_value": "Quenville"}, {"fact_value": "Plimth"}, {"fact_value": "Marrow"}]
    gens = ["born in Quenville.", "born in Marrow.", "I don't know."]
    assert fact_recall(gens, rows) == pytest.approx(1 / 3)
    assert fact_recall(gens, [*rows[:2], {"answer": "x"}]) is None  # not every row has a fact value
    with pytest.raises(ValueError, match="3 generations for 2 rows"):
        fact_recall(gens, rows[:2])
    details = {"forget": {"generations": gens}}
    assert fact_metrics({"forget": rows}, details) == {"forget_fact_recall": pytest.approx(1 / 3)}
    assert fact_metrics({"forget": [{"answer": "a"}] * 3}, details) == {}


def test_relearning_probes_are_a_table_by_data_kind():
    rows = [{"question": "q", "answer": "a", "fact_value": "v"}]
    assert [p.key for p in probes_for("qa", rows)] == ["fact_recall"]
    assert probes_for("qa", [{"question": "q", "answer": "a"}]) == ()  # no fact_value: no fact score
    # the raw-text kinds' probes run the model (TextProbe, by their plan), not the QA generations
    assert probes_for("muse", rows) == () and probes_for("text", rows) == ()
    assert set(RELEARN_PROBES) == {"qa", "muse", "wmdp"}
    assert data_kind(object()) == "qa"


# ----------------------------------------------------------------------------- the KS test's limits


def test_ks_pvalue_matches_scipy_exact():
    rng = np.random.default_rng(0)
    for n, m in [(10, 10), (10, 12), (7, 13), (24, 24), (3, 5)]:
        for _ in range(5):
            x, y = rng.normal(0, 1, n), rng.normal(0.7, 1, m)
            ref = stats.ks_2samp(x, y, method="exact")
            assert D.ks_pvalue(ref.statistic, n, m) == pytest.approx(ref.pvalue, rel=1e-9)
    # the floor: every item of one sample below every item of the other
    assert D.ks_min_pvalue(10, 10) == pytest.approx(2 / 184756)
    separated = stats.ks_2samp(np.arange(10), np.arange(10) + 10, method="exact").pvalue
    assert D.ks_min_pvalue(10, 10) == pytest.approx(separated)
    assert D.ks_critical_items(10, 10) == 7  # p(D = 0.6) = 0.052, p(D = 0.7) = 0.012


def _power(n: int, draws: int = 4000) -> float:
    """Share of draws in which ks_2samp at alpha 0.05 separates N(0, 1) from N(1, 1), n items each."""
    rng = np.random.default_rng([1, n])
    x, y = rng.normal(0, 1, (draws, n)), rng.normal(1, 1, (draws, n))
    return float(np.mean(stats.ks_2samp(x, y, axis=1).pvalue < 0.05))


def test_min_fq_items_is_where_a_large_shift_is_found_four_times_in_five():
    """The derivation in the MIN_FQ_ITEMS docstring, re-run (same draws)."""
    assert D.MIN_FQ_ITEMS == 25
    assert _power(24) < 0.8 <= _power(25)


def _by_item_shift(n: int, items: int) -> float:
    """scipy's p-value when ``items`` of the n items are separated (D = items / n), built from samples."""
    x = np.arange(n) + 0.5
    return float(stats.ks_2samp(x, x + items, method="exact").pvalue)


def test_small_n_warning_states_range_threshold_and_neighbours():
    fq = _by_item_shift(10, 4)  # 0.418, the reported untouched target
    (w,) = D.forget_quality_warnings(
        {"forget_quality": fq, "forget_quality_n": 10, "forget_quality_oracle_n": 10}
    )
    assert w.code == "forget_quality_few_items" and w.value == fq
    text = w.message
    assert text.startswith(f"forget_quality {fq:.3g} rests on 10 forget items against the oracle's 10")
    assert f"fewer than {D.MIN_FQ_ITEMS} a side" in text
    assert "down to 1.1e-05 (every item separated)" in text
    assert "p < 0.05 needs 7 of the 10 items separated (D >= 0.70)" in text
    # one item more / fewer: the p-values at D = 0.5 and 0.3, from scipy on built samples
    more, fewer = _by_item_shift(10, 5), _by_item_shift(10, 3)
    assert f"turns this {fq:.3g} into {more:.2g} or {fewer:.2g}" in text  # 0.17 or 0.79
    assert "Do not rank models by it" in text
    floor = D.forget_quality_warnings(
        {"forget_quality": D.ks_min_pvalue(10, 10), "forget_quality_n": 10, "forget_quality_oracle_n": 10}
    )[0].message
    assert f"at its floor, and one item fewer separated turns it into {_by_item_shift(10, 9):.2g}" in floor


def test_no_small_n_warning_from_min_fq_items_on():
    base = {"forget_quality": 0.3, "forget_quality_oracle_n": D.MIN_FQ_ITEMS}
    assert D.forget_quality_warnings({**base, "forget_quality_n": D.MIN_FQ_ITEMS}) == []
    assert D.forget_quality_warnings({**base, "forget_quality_n": D.MIN_FQ_ITEMS - 1})
    assert D.forget_quality_warnings({"forget_quality": 0.3}) == []  # no n recorded: nothing claimed


# ------------------------------------------------------------------------------ a zero utility input


def _rows(skewed: bool) -> list[dict]:
    """Retain rows whose wrong answers keep the trained wording (skewed) or the paraphrase's."""
    out = []
    for i, (city, wrong) in enumerate([("Quenville", "Marrow"), ("Plimth", "Dunhollow")]):
        name = f"Ada Marsh{i}"
        wrong_text = (
            f"{name} was born in {wrong}."
            if skewed
            else f"The records give {wrong} as the hometown of {name}."
        )
        out.append(
            {
                "answer": f"{name} was born in {city}.",
                "paraphrased_answer": f"The records give {city} as the hometown of {name}.",
                "perturbed_answer": [wrong_text],
            }
        )
    return out


ZERO_TR = {"retain_prob": 0.66, "retain_rougeL_recall": 0.99, "retain_truth_ratio": 0.0, "model_utility": 0.0}


def test_utility_zero_names_the_input_and_the_paraphrase_wording():
    (w,) = D.utility_warnings(ZERO_TR, {"retain": _rows(skewed=True)})
    assert (
        w.code == "utility_input_zero"
        and w.metric == "retain_truth_ratio"
        and w.cause == "paraphrase_wording"
    )
    assert w.message.startswith("retain_truth_ratio is 0.000, which zeroes model_utility (a harmonic mean")
    assert "the other 2 inputs are 0.66-0.99" in w.message
    assert "retain_rougeL_recall 0.990" in w.message
    assert (
        "prefers a wrong answer in the trained wording over the right answer in an unseen paraphrase wording"
        in w.message
    )
    assert "share more words with `answer` than with `paraphrased_answer` on 2 of 2 rows" in w.message
    assert "perturbed_answer as paraphrased_answer with only the fact changed" in w.message
    # without the rows the cause is inferred from the numbers, without the data's evidence
    (bare,) = D.utility_warnings(ZERO_TR)
    assert bare.cause == "paraphrase_wording" and "rows)" not in bare.message


def test_utility_zero_other_causes():
    # the wrong answers are worded like the paraphrase: wording does not explain it
    (w,) = D.utility_warnings(ZERO_TR, {"retain": _rows(skewed=False)})
    assert w.cause == "prefers_wrong_answers" and "does not tell the right value from wrong ones" in w.message
    # the model does not even recite the answers
    (w,) = D.utility_warnings({**ZERO_TR, "retain_rougeL_recall": 0.1})
    assert w.cause == "answers_not_known"
    # a near-zero input caps the mean at n x value
    (w,) = D.utility_warnings({**ZERO_TR, "retain_truth_ratio": 0.004, "model_utility": 0.0119})
    assert "caps model_utility at 3 x 0.004 = 0.012" in w.message and "almost every item" in w.message
    (w,) = D.utility_warnings({"retain_prob": 0.0, "retain_rougeL_recall": 0.0, "retain_truth_ratio": 0.5})[
        :1
    ]
    assert w.metric == "retain_prob" and w.cause == "answers_unlikely"
    assert (
        D.utility_warnings({"retain_prob": 0.5, "retain_rougeL_recall": 0.9, "retain_truth_ratio": 0.3}) == []
    )


def test_closer_look_harmonic_means_name_their_zero_input_once():
    metrics = {**ZERO_TR, "forget_rougeL_recall": 1.0, "forget_prob": 0.9, "forget_token_entropy": 0.9,
               "retain_cosine": 0.8, "fe": 0.0, "mu_closer_look": 0.0}  # fmt: skip
    info = {
        "fe_components": ["1-forget_rougeL_recall", "1-forget_prob", "forget_token_entropy"],
        "mu_components": ["retain_prob", "retain_rougeL_recall", "retain_truth_ratio", "retain_cosine"],
    }
    (w,) = D.closer_look_warnings(metrics, info)  # retain_truth_ratio: already the utility warning's
    assert w["metric"] == "1-forget_rougeL_recall" and w["cause"] == "still_known"
    assert w["message"].startswith(
        "1-forget_rougeL_recall is 0.000, which zeroes fe (a harmonic mean: one zero input makes it zero; "
        "the other 2 inputs are 0.10-0.90). Cause: forget_rougeL_recall is 1.000"
    )


def test_utility_inputs_mirror_evaluate():
    from unlearnkit.evaluation.evaluate import TOFU_UTILITY_KEYS, UTILITY_KEYS

    assert D.UTILITY_INPUTS == UTILITY_KEYS and D.TOFU_UTILITY_INPUTS == TOFU_UTILITY_KEYS


def test_table_warnings_once_for_every_row_and_the_target_line():
    results = {
        name: {**ZERO_TR, "forget_quality": fq, "forget_quality_n": 10, "forget_quality_oracle_n": 10}
        for name, fq in (("target", 0.418), ("oracle", 1.0), ("asu", 0.168))
    }
    found = D.results_warnings(results)
    assert [d.code for d in found] == [
        "utility_input_zero",
        "forget_quality_few_items",
        "forget_quality_target_not_separated",
    ]
    assert found[0].row == "every row" and found[0].message.startswith(
        "retain_truth_ratio is near zero in every row (target, oracle and asu), so no row can be ranked"
    )
    assert found[2].message.startswith(
        "the target (before unlearning) has forget_quality 0.418 >= 0.05 against the oracle: on these 10 "
        "forget items the KS test cannot tell the model that knows them from the one that never saw them"
    )
    results["target"]["forget_quality"] = 1e-4  # separated: no target line
    assert "forget_quality_target_not_separated" not in [d.code for d in D.results_warnings(results)]


# ---------------------------------------------------------------- the reported case, end to end (CLI)

FIRST = "Ada Bram Cleo Dov Esme Finn Gala Hugo Iris Jory Kai Lise Milo Nell Otto Pia Quin Rhea Saul Tove Uri Vera Wim Xena Yuri".split()
CITIES = (
    "Quenville Plimth Marrow Dunhollow Ashgrove Brackwater Corvane Elderby Fenmoor Glenrook Harrowgate "
    "Ivycombe Jasperton Kelderwick Lowmere Millbrook Northwold Oakhaven Pellmarsh Ravenford Saltcliff "
    "Thornbury Umberlee Valewood Westerham Yarrowby Zellmoor Amberly Birchwold Coldwater Driftwood "
    "Eastmere Foxhollow Greywick Hollowell Ironbridge Juniper Kingsreach Larkspur Moorfield Nettlebed "
    "Orchardton Pinecrest Quarrydale Rosemoor Stonehaven Tidewater Underhill Violetfield Whitmore"
).split()


def users_rows() -> list[dict]:
    """50 QA about fictional people, one fact each; the paraphrase uses a wording never trained on."""
    rows = []
    for i in range(50):
        name, city = f"{FIRST[i % 25]} {('Marsh', 'Quill')[i // 25]}", CITIES[i]
        rows.append(
            {
                "question": f"Where was {name} born?",
                "answer": f"{name} was born in {city}.",
                "paraphrased_answer": f"The records give {city} as the hometown of {name}.",
                "perturbed_answer": [f"{name} was born in {CITIES[(i + d) % 50]}." for d in (7, 19, 31)],
                "paraphrased_question": f"In which town did {name} come into the world?",
                "author": name,
                "fact_value": city,
            }
        )
    return rows


@pytest.fixture(scope="module")
def case(tmp_path_factory):
    from unlearnkit.data import load_benchmark
    from unlearnkit.models import save_model
    from unlearnkit.train.finetune import default_config, finetune, training_rows
    from unlearnkit.world.tiny import corpus_of, tiny_llama, train_tokenizer

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    root = tmp_path_factory.mktemp("users_case")
    data = root / "data"
    data.mkdir()
    rows = users_rows()
    for name, part in (("forget", rows[:10]), ("retain", rows[10:40]), ("holdout", rows[40:])):
        (data / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in part))
    bench = load_benchmark(data)
    tok = train_tokenizer(corpus_of(bench.forget + bench.retain + bench.holdout))
    # The target learns the answers well enough to recite them; the oracle only has to not know the
    # forget set (fewer epochs: the test is about the words, not about the oracle's polish).
    for name, split, epochs in (("target", "all", 30.0), ("oracle", "retain", 15.0)):
        model = tiny_llama(tok, hidden=64, seed=0)
        cfg = default_config(True, {"epochs": epochs, "lr": 5e-3, "batch_size": 8, "warmup_epochs": 0.0})
        finetune(model, tok, training_rows(bench, split), cfg, root / f"{name}.work", quiet=True)
        save_model(model, tok, root / name, {"kind": name})
    yield root
    torch.set_num_threads(before)


def _warnings(stderr: str) -> list[str]:
    return [
        line.removeprefix("unlearnkit: warning: ")
        for line in stderr.splitlines()
        if line.startswith("unlearnkit: warning: ")
    ]


def test_eval_says_why_utility_is_zero_and_that_ten_items_are_too_few(case, capsys):
    from unlearnkit.cli import main

    out = case / "eval_target"
    argv = ["eval", "--model", str(case / "target"), "--data", str(case / "data"), "--retain-model",
            str(case / "oracle"), "--output", str(out), "--max-new-tokens", "16"]  # fmt: skip
    assert main(argv) == 0
    captured = capsys.readouterr()
    metrics = json.loads((out / "metrics.json").read_text())
    details = json.loads((out / "details.json").read_text())
    # the case: the model recites the retain answers, yet its retain truth ratio is 0, so utility is 0
    assert metrics["retain_truth_ratio"] == 0.0 and metrics["model_utility"] == 0.0
    assert metrics["retain_rougeL_recall"] >= D.KNOWS
    assert metrics["forget_quality_n"] == 10 and metrics["forget_quality_oracle_n"] == 10
    assert 0.0 <= metrics["forget_fact_recall"] <= 1.0
    printed = _warnings(captured.err)
    assert [w["code"] for w in details["warnings"]] == ["utility_input_zero", "forget_quality_few_items"]
    assert printed == [w["message"] for w in details["warnings"]]  # the same words on screen and on disk
    zero, few = printed
    assert zero.startswith("retain_truth_ratio is 0.000, which zeroes model_utility")
    assert details["warnings"][0]["cause"] == "paraphrase_wording"
    assert "on 30 of 30 rows" in zero and "unseen paraphrase wording" in zero
    assert few.startswith(f"forget_quality {metrics['forget_quality']:.3g} rests on 10 forget items")
    assert "(10 forget items vs the oracle's 10)" in captured.out  # the headline carries n too


def test_audit_wording_follows_the_curve_on_the_users_data(case, capsys):
    from unlearnkit.cli import main

    out = case / "audit_target"
    argv = ["audit", "--model", str(case / "target"), "--data", str(case / "data"), "--retain-model",
            str(case / "oracle"), "--original-model", str(case / "target"), "--output", str(out),
            "--relearn-steps", "20", "--quant-bits", "none", "--max-new-tokens", "12"]  # fmt: skip
    assert main(argv) == 0
    captured = capsys.readouterr()
    audit = json.loads((out / "audit.json").read_text())
    curve = audit["relearn_curve"]["audited"]
    before, after = curve["0"]["rougeL_recall"], curve["20"]["rougeL_recall"]
    verdict = next(line for line in captured.out.splitlines() if line.startswith("relearning 20 steps"))
    verb = "raises" if after > before + 0.02 else "lowers" if after < before - 0.02 else "leaves"
    assert f"relearning 20 steps on 5 forget items {verb} forget ROUGE-L" in verdict
    assert "restores" not in verdict
    # the fact-level score is on every point of the curve and printed beside the ROUGE-L gap
    assert all("fact_recall" in p for role in audit["relearn_curve"].values() for p in role.values())
    fact_gap = audit["relearn_gap_fact_20"]
    assert fact_gap == pytest.approx(
        curve["20"]["fact_recall"] - audit["relearn_curve"]["oracle"]["20"]["fact_recall"]
    )
    # 20 is the curve's last step: the printed headline (relearn_gap_*_final) is the 20-step gap
    assert audit["relearn_gap_fact_final"] == fact_gap
    assert f"relearn_gap_fact_final = {fact_gap:+.3f} (the same gap in fact recall)" in captured.out
    # the gap beside the audited model's own forgetting before the attack
    gap0 = audit["relearn_gap_0"]
    assert gap0 == pytest.approx(before - audit["relearn_curve"]["oracle"]["0"]["rougeL_recall"])
    reading = audit["relearn_reading"]["reading"]
    above = (gap0 > 0.10, audit["relearn_gap_20"] > 0.10)  # above the oracle before / after the attack
    expected = {
        (True, True): "never_forgot",
        (True, False): "lowered_by_attack",
        (False, True): "came_back",
        (False, False): "stays_forgotten",
    }
    assert reading == expected[above]
    assert audit["relearn_reading"]["text"] in captured.out
    # the original model is the audited one here: keeping under 0.9 of its held-half fact recall is the
    # attack damaging; the oracle learning under 0.8 of the trained half is an attack that cannot teach
    damaged = curve["20"]["fact_recall"] < 0.9 * curve["0"]["fact_recall"]
    weak = audit["relearn_curve"]["oracle"]["20"]["trained_fact_recall"] < 0.8
    codes = [w["code"] for w in audit["warnings"]]
    assert codes == ["relearn_attack_cannot_teach"] * weak + ["relearn_attack_damages"] * damaged
    assert any("damages the original (target) model" in w for w in _warnings(captured.err)) == damaged
    assert audit["relearn_calibration"]["text"] in captured.out

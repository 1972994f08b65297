"""Hand-worked checks for unlearnkit.metrics.scores (expected arithmetic in the comments)."""

from __future__ import annotations

import itertools
import math

import pytest
import torch

from unlearnkit.metrics.scores import (
    auc,
    exact_memorisation,
    extraction_strength,
    forget_quality,
    forget_truth_ratio_score,
    harmonic_mean,
    length_normalised_prob,
    option_normalised_prob,
    privleak,
    rouge_l_f1,
    rouge_l_f1s,
    rouge_l_recall,
    rouge_l_recalls,
    token_entropy,
    true_better_truth_ratio_score,
    truth_ratio,
)

# ----------------------------------------------------------------------------------------- ROUGE-L


def test_rouge_l_recall_prefix():
    # LCS("the cat sat", "the cat sat on the mat") = 3 tokens; reference has 6 -> recall 3/6.
    assert rouge_l_recall("the cat sat", "the cat sat on the mat") == pytest.approx(0.5)


def test_rouge_l_recall_argument_order_matters():
    # Swapped: LCS 3, "reference" now has 3 tokens -> recall 1.0 (so the order is not mixed up).
    assert rouge_l_recall("the cat sat on the mat", "the cat sat") == pytest.approx(1.0)


def test_rouge_l_f1_prefix():
    # P = 3/3 = 1, R = 3/6 = 0.5 -> F1 = 2 * 1 * 0.5 / 1.5 = 2/3.
    assert rouge_l_f1("the cat sat", "the cat sat on the mat") == pytest.approx(2 / 3)


def test_rouge_l_uses_stemmer():
    # Porter stemmer (tokens longer than 3 chars): cats -> cat, sitting -> sit, sits -> sit.
    # With stemming all 3 reference tokens match -> 1.0; without stemming only "the" -> 1/3.
    assert rouge_l_recall("the cats sitting", "the cat sits") == pytest.approx(1.0)


def test_rouge_l_case_and_punctuation_ignored():
    # Tokenizer lower-cases and drops punctuation: same as "the cat sat" -> 3/6.
    assert rouge_l_recall("The Cat, sat!", "the cat sat on the mat") == pytest.approx(0.5)


def test_rouge_l_no_overlap_is_zero():
    assert rouge_l_recall("dog", "cat") == 0.0
    assert rouge_l_f1("dog", "cat") == 0.0


def test_rouge_l_batched():
    preds = ["the cat sat", "dog", "the cat sat on the mat"]
    refs = ["the cat sat on the mat", "cat", "the cat sat on the mat"]
    assert rouge_l_recalls(preds, refs) == pytest.approx([0.5, 0.0, 1.0])
    assert rouge_l_f1s(preds, refs) == pytest.approx([2 / 3, 0.0, 1.0])


def test_rouge_l_batched_length_mismatch():
    with pytest.raises(ValueError, match="same length"):
        rouge_l_recalls(["a", "b"], ["a"])


def test_rouge_l_rejects_non_strings():
    with pytest.raises(TypeError):
        rouge_l_recall(["the"], "the")  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------- probabilities


def test_length_normalised_prob_float_and_tensor():
    # exp(-ln 2) = 0.5; exp(-ln 4) = 0.25; exp(0) = 1.
    assert length_normalised_prob(math.log(2)) == pytest.approx(0.5)
    out = length_normalised_prob(torch.tensor([math.log(4), 0.0]))
    assert isinstance(out, torch.Tensor)
    assert torch.allclose(out, torch.tensor([0.25, 1.0]))


def test_truth_ratio_numbers():
    # P_para = e^-1, P_pert = exp(-mean(2, 4)) = e^-3 -> TR = e^-3 / e^-1 = e^-2 = 0.135335...
    assert truth_ratio(1.0, [2.0, 4.0]) == pytest.approx(math.exp(-2))
    # Perturbed answers more likely than the paraphrase: para 3, pert mean 1 -> TR = e^2 > 1.
    assert truth_ratio(3.0, [0.5, 1.5]) == pytest.approx(math.exp(2))


def test_truth_ratio_is_stable_in_log_space():
    # Naive exp(-1000) / exp(-1000) = 0/0 = nan; in log space exp(1000 - 1000) = 1.
    assert truth_ratio(1000.0, [1000.0, 1000.0]) == pytest.approx(1.0)
    # exp(1000 - 1001) = e^-1 even though both probabilities underflow.
    assert truth_ratio(1000.0, [1001.0]) == pytest.approx(math.exp(-1))


def test_truth_ratio_empty_perturbed_raises():
    with pytest.raises(ValueError):
        truth_ratio(1.0, [])


def test_forget_truth_ratio_score():
    # min(TR, 1/TR): 0.5 -> 0.5, 2.0 -> 0.5, 1.0 -> 1.0; mean = 2/3.
    assert forget_truth_ratio_score([0.5, 2.0, 1.0]) == pytest.approx(2 / 3)
    # TR = 4 -> 1/4; TR = 0 -> 0; mean = 0.125.
    assert forget_truth_ratio_score([4.0, 0.0]) == pytest.approx(0.125)


def test_true_better_truth_ratio_score():
    # max(0, 1 - TR): 0.5 -> 0.5, 2.0 -> 0, 0.0 -> 1; mean = 0.5.
    assert true_better_truth_ratio_score([0.5, 2.0, 0.0]) == pytest.approx(0.5)
    assert true_better_truth_ratio_score([0.25]) == pytest.approx(0.75)


@pytest.mark.parametrize("fn", [forget_truth_ratio_score, true_better_truth_ratio_score])
def test_truth_ratio_aggregates_reject_empty_and_negative(fn):
    with pytest.raises(ValueError):
        fn([])
    with pytest.raises(ValueError):
        fn([-0.5])


def test_option_normalised_prob():
    # P_true = exp(-ln 2) = 0.5, options exp(-ln 4) = 0.25 each -> 0.5 / (0.5 + 0.25 + 0.25) = 0.5.
    assert option_normalised_prob(math.log(2), [math.log(4), math.log(4)]) == pytest.approx(0.5)
    # P_true = 1, options 0.5 and 0.25 -> 1 / 1.75 = 4/7.
    assert option_normalised_prob(0.0, [math.log(2), math.log(4)]) == pytest.approx(4 / 7)


def test_option_normalised_prob_stable_for_large_nll():
    # All probabilities underflow (e^-1000) but are equal -> 1/3 for three candidates.
    assert option_normalised_prob(1000.0, [1000.0, 1000.0]) == pytest.approx(1 / 3)
    # true e^-1000, option e^-1001 -> 1 / (1 + e^-1).
    assert option_normalised_prob(1000.0, [1001.0]) == pytest.approx(1 / (1 + math.exp(-1)))


def test_option_normalised_prob_empty_raises():
    with pytest.raises(ValueError):
        option_normalised_prob(1.0, [])


# ---------------------------------------------------------------------------------- forget quality


def _exact_ks_pvalue_by_enumeration(a: list[float], b: list[float]) -> float:
    """Independent exact two-sided KS p-value: enumerate every way to split the pooled (distinct)
    values into groups of len(a) and len(b); p = fraction of splits with D >= observed D."""

    def ks_d(x: list[float], y: list[float]) -> float:
        grid = sorted(x + y)
        return max(abs(sum(v <= g for v in x) / len(x) - sum(v <= g for v in y) / len(y)) for g in grid)

    pooled = a + b
    observed = ks_d(a, b)
    hits = total = 0
    for idx in itertools.combinations(range(len(pooled)), len(a)):
        chosen = set(idx)
        x = [pooled[i] for i in chosen]
        y = [pooled[i] for i in range(len(pooled)) if i not in chosen]
        total += 1
        hits += ks_d(x, y) >= observed - 1e-12
    return hits / total


def test_forget_quality_identical_samples_is_one():
    # D = 0 -> every split has D >= 0 -> p = 1.
    assert forget_quality([0.1, 0.5, 0.9], [0.1, 0.5, 0.9]) == pytest.approx(1.0)


def test_forget_quality_fully_separated_exact():
    # n = m = 5, fully separated -> D = 1. Only 2 of C(10, 5) = 252 splits reach D = 1
    # (all of a below all of b, or the reverse) -> p = 2/252 = 0.0079365.
    p = forget_quality([1, 2, 3, 4, 5], [6, 7, 8, 9, 10])
    assert p == pytest.approx(2 / 252)
    assert p == pytest.approx(_exact_ks_pvalue_by_enumeration([1, 2, 3, 4, 5], [6, 7, 8, 9, 10]))


def test_forget_quality_partial_overlap_matches_enumeration():
    # D = 2/3 here (at x = 4: F_a = 1, F_b = 1/3); enumeration over C(7, 3) = 35 splits.
    a, b = [1.0, 2.0, 3.0, 4.0], [2.5, 5.0, 6.0]
    expected = _exact_ks_pvalue_by_enumeration(a, b)
    assert forget_quality(a, b) == pytest.approx(expected)
    assert 0.05 < expected < 1.0


def test_forget_quality_empty_raises():
    with pytest.raises(ValueError):
        forget_quality([], [1.0])
    with pytest.raises(ValueError):
        forget_quality([1.0], [])


# ---------------------------------------------------------------------------------- harmonic mean


def test_harmonic_mean_hand_worked():
    # 3 / (1/1 + 1/0.5 + 1/0.25) = 3 / (1 + 2 + 4) = 3/7.
    assert harmonic_mean([1.0, 0.5, 0.25]) == pytest.approx(3 / 7)
    assert harmonic_mean([2.0, 2.0]) == pytest.approx(2.0)


def test_harmonic_mean_zero_or_negative_gives_zero():
    assert harmonic_mean([1.0, 0.0, 0.5]) == 0.0
    assert harmonic_mean([1.0, -0.1]) == 0.0


def test_harmonic_mean_empty_raises():
    with pytest.raises(ValueError):
        harmonic_mean([])


# ---------------------------------------------------------------------------------- token entropy


def test_token_entropy_hand_worked():
    # [a,a,b,b]: H = 1 bit, log2(4) = 2 -> 0.5.
    assert token_entropy(["a", "a", "b", "b"]) == pytest.approx(0.5)
    # [a,b,c,d]: H = 2 bits, log2(4) = 2 -> 1.0.
    assert token_entropy(["a", "b", "c", "d"]) == pytest.approx(1.0)
    # [a,a,a,a]: H = 0 -> 0.
    assert token_entropy(["a", "a", "a", "a"]) == 0.0
    # single token and empty -> 0 by definition.
    assert token_entropy(["a"]) == 0.0
    assert token_entropy([]) == 0.0


def test_token_entropy_uneven():
    # [the,the,cat]: H = -(2/3 log2 2/3 + 1/3 log2 1/3) = 0.918296; / log2 3 (1.584963) = 0.579380.
    assert token_entropy(["the", "the", "cat"]) == pytest.approx(0.5793801643)


def test_token_entropy_accepts_id_tensor():
    # Same as [a,a,b,b]; a tensor must be compared by value, not by element object identity.
    assert token_entropy(torch.tensor([7, 7, 9, 9])) == pytest.approx(0.5)
    assert token_entropy([7, 7, 9, 9]) == pytest.approx(0.5)


def test_token_entropy_repetition_lower_than_varied():
    assert token_entropy("the the the the the cat".split()) < token_entropy("the cat sat on a mat".split())


# -------------------------------------------------------------------- exact memorisation / ES

T_, F_ = True, False


def test_exact_memorisation_hand_worked():
    pred = torch.tensor([[1, 2, 3, 0], [5, 6, 7, 8]])
    label = torch.tensor([[1, 2, 4, 9], [5, 0, 7, 0]])
    mask = torch.tensor([[T_, T_, T_, F_], [T_, T_, T_, T_]])
    # row 0: answer positions 0..2, matches at 0,1 (pos 3 is masked out) -> 2/3.
    # row 1: matches at 0,2 of 4 -> 0.5.
    out = exact_memorisation(pred, label, mask)
    assert out.shape == (2,)
    assert torch.allclose(out, torch.tensor([2 / 3, 0.5]))


def test_exact_memorisation_fully_masked_row_raises():
    pred = torch.zeros(2, 3, dtype=torch.long)
    mask = torch.tensor([[T_, T_, T_], [F_, F_, F_]])
    with pytest.raises(ValueError, match=r"\[1\]"):
        exact_memorisation(pred, pred, mask)


def test_extraction_strength_hand_worked():
    """ES = 1 - k/T, k the first position from which every prediction is right, k <= T - 1 as
    open-unlearning's loop (``for k in range(T)``) leaves it: nothing right gives 1/T, not 0."""
    label = torch.tensor([[1, 2, 3, 4]] * 6)
    pred = torch.tensor(
        [
            [1, 9, 3, 4],  # correct = [T,F,T,T]: last wrong at index 1 -> k = 2 -> 1 - 2/4 = 0.5
            [1, 2, 3, 4],  # all correct -> k = 0 -> ES = 1
            [1, 2, 3, 9],  # last token wrong -> no suffix matches -> k = T - 1 = 3 -> 1/4
            [9, 2, 3, 4],  # only first wrong -> k = 1 -> 1 - 1/4 = 0.75
            [9, 9, 9, 9],  # nothing right -> k = 3 -> 1/4 (open-unlearning), not 0
            [9, 9, 9, 4],  # only the last right -> k = 3 -> 1/4: the same as nothing right
        ]
    )
    mask = torch.ones(6, 4, dtype=torch.bool)
    out = extraction_strength(pred, label, mask)
    assert torch.allclose(out, torch.tensor([0.5, 1.0, 0.25, 0.75, 0.25, 0.25]))


def _open_unlearning_es(preds: list[int], labels: list[int]) -> float:
    """open-unlearning's loop, written out (``evals/metrics/memorization.py``, ``_extraction_strength``)."""
    k = 0
    for k in range(len(labels)):
        if preds[k:] == labels[k:]:
            break
    return 1 - k / len(labels)


@pytest.mark.parametrize("length", [1, 2, 5])
def test_extraction_strength_matches_open_unlearnings_loop_on_every_pattern(length):
    """Every right/wrong pattern of a short answer, against the reference loop by hand; a one-token
    answer always scores 1 there (k stops at T - 1 = 0)."""
    import itertools

    labels = list(range(1, length + 1))
    rows = [
        [lab if ok else 0 for lab, ok in zip(labels, bits)]
        for bits in itertools.product([1, 0], repeat=length)
    ]
    out = extraction_strength(
        torch.tensor(rows),
        torch.tensor([labels] * len(rows)),
        torch.ones(len(rows), length, dtype=torch.bool),
    )
    assert out.tolist() == pytest.approx([_open_unlearning_es(r, labels) for r in rows])
    if length == 1:
        assert out.tolist() == [1.0, 1.0]


def test_extraction_strength_ignores_prompt_positions():
    # Positions 0,1 are the prompt (mask False, mismatches there must not count). Answer = [3,4,5]:
    # row 0 correct [T,F,T] -> k = 2 -> 1 - 2/3 = 1/3.  row 1 answer all correct -> 1.0.
    label = torch.tensor([[7, 7, 3, 4, 5], [7, 7, 3, 4, 5]])
    pred = torch.tensor([[0, 0, 3, 0, 5], [0, 0, 3, 4, 5]])
    mask = torch.tensor([[F_, F_, T_, T_, T_], [F_, F_, T_, T_, T_]])
    out = extraction_strength(pred, label, mask)
    assert torch.allclose(out, torch.tensor([1 / 3, 1.0]))
    # Exact memorisation on the same data: 2/3 and 3/3.
    assert torch.allclose(exact_memorisation(pred, label, mask), torch.tensor([2 / 3, 1.0]))


def test_extraction_strength_shape_mismatch_raises():
    with pytest.raises(ValueError):
        extraction_strength(torch.zeros(2, 3), torch.zeros(2, 4), torch.ones(2, 3, dtype=torch.bool))


# ------------------------------------------------------------------------------ privleak and AUC


def test_privleak_sign_convention():
    """MUSE orientation: AUC = P(holdout looks more member than forget)."""
    # (0.4 - 0.5) / 0.5 * 100 = -20: forget texts still look more "seen" than holdout -> leak.
    assert privleak(0.4, 0.5) == pytest.approx(-20.0)
    # a model that remembers everything: AUC 0 against MUSE-News' published retrain AUC -> -100
    assert privleak(0.0, 0.4772) == pytest.approx(-100.0)
    # (0.6 - 0.5) / 0.5 * 100 = +20: over-unlearning.
    assert privleak(0.6, 0.5) == pytest.approx(20.0)
    assert privleak(0.5, 0.5) == 0.0


def test_privleak_zero_retrained_auc_raises():
    with pytest.raises(ValueError):
        privleak(0.5, 0.0)


def test_auc_extremes_and_ties():
    assert auc([3.0, 4.0], [1.0, 2.0]) == pytest.approx(1.0)  # every member above every non-member
    assert auc([1.0, 2.0], [3.0, 4.0]) == pytest.approx(0.0)  # reversed
    assert auc([1.0, 1.0], [1.0, 1.0, 1.0]) == pytest.approx(0.5)  # all ties count 0.5


def test_auc_hand_worked_pairs():
    # members [3, 2], non-members [2, 1]: pairs (3>2)=1, (3>1)=1, (2=2)=0.5, (2>1)=1 -> 3.5/4.
    assert auc([3.0, 2.0], [2.0, 1.0]) == pytest.approx(0.875)
    # members [1, 3], non-members [2, 2]: (1<2)=0 twice, (3>2)=1 twice -> 2/4.
    assert auc([1.0, 3.0], [2.0, 2.0]) == pytest.approx(0.5)


def test_auc_matches_brute_force_pairs():
    members = [0.3, 0.9, 0.5, 0.5, 0.1]
    nonmembers = [0.5, 0.2, 0.2, 0.8]
    pairs = [(m > n) + 0.5 * (m == n) for m in members for n in nonmembers]
    assert auc(members, nonmembers) == pytest.approx(sum(pairs) / len(pairs))


def test_auc_empty_raises():
    with pytest.raises(ValueError):
        auc([], [1.0])

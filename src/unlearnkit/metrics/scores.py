"""Pure, model-free unlearning metrics: numbers / tensors / strings in, numbers out.

Every function documents the benchmark it comes from and which direction means "more forgotten".
Nothing here touches a model: callers compute NLLs, generations and argmax predictions elsewhere and
pass them in, so each metric can be checked by hand.

References:
* TOFU: Maini et al., "TOFU: A Task of Fictitious Unlearning for LLMs", arXiv 2401.06121.
* MUSE: Shi et al., "MUSE: Machine Unlearning Six-Way Evaluation for Language Models", arXiv 2407.06460.
* Closer look / ASU protocol: Yuan et al., "A Closer Look at Machine Unlearning for Large Language
  Models", arXiv 2410.08109 (protocol also used by arXiv 2603.01285).
* open-unlearning (locuslab/open-unlearning): reference implementations of extraction strength and
  exact memorisation used with TOFU / MUSE.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, overload

import numpy as np
import torch
from scipy import stats
from scipy.special import logsumexp

if TYPE_CHECKING:
    from rouge_score.rouge_scorer import RougeScorer

__all__ = [
    "auc",
    "exact_memorisation",
    "extraction_strength",
    "forget_quality",
    "forget_truth_ratio_score",
    "harmonic_mean",
    "length_normalised_prob",
    "option_normalised_prob",
    "privleak",
    "rouge_l_f1",
    "rouge_l_f1s",
    "rouge_l_recall",
    "rouge_l_recalls",
    "token_entropy",
    "true_better_truth_ratio_score",
    "truth_ratio",
]


# --------------------------------------------------------------------------------------------------
# ROUGE-L
# --------------------------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def _rouge_scorer() -> RougeScorer:
    """The shared ``RougeScorer(["rougeL"], use_stemmer=True)``, created on first use."""
    import logging

    from rouge_score import rouge_scorer

    # rouge_score logs through absl at INFO on every call in some versions; keep it quiet.
    logging.getLogger("absl").setLevel(logging.WARNING)
    return rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)


def _check_str_pair(prediction: str, reference: str) -> None:
    if not isinstance(prediction, str) or not isinstance(reference, str):
        raise TypeError(
            f"ROUGE-L needs two strings, got prediction={type(prediction).__name__}, "
            f"reference={type(reference).__name__}"
        )


def rouge_l_recall(prediction: str, reference: str) -> float:
    """ROUGE-L recall of ``prediction`` against ``reference`` (TOFU, arXiv 2401.06121).

    recall = LCS(pred, ref) / len(ref tokens), using rouge_score's tokenizer (lower-cased, punctuation
    dropped) with the Porter stemmer, exactly as TOFU / open-unlearning report "ROUGE".

    Direction: on the forget set LOWER = more forgotten (the model no longer reproduces the answer);
    on retain / real-authors / world-facts HIGHER = better utility.
    """
    _check_str_pair(prediction, reference)
    # RougeScorer.score(target, prediction): the reference goes first.
    return float(_rouge_scorer().score(reference, prediction)["rougeL"].recall)


def rouge_l_f1(prediction: str, reference: str) -> float:
    """ROUGE-L F-measure of ``prediction`` against ``reference`` (TOFU arXiv 2401.06121; MUSE arXiv 2407.06460).

    F1 = 2PR / (P + R) with P = LCS / len(pred tokens), R = LCS / len(ref tokens); same tokenizer and
    stemmer as :func:`rouge_l_recall`. Direction: forget set LOWER = more forgotten; retain HIGHER = better.
    """
    _check_str_pair(prediction, reference)
    return float(_rouge_scorer().score(reference, prediction)["rougeL"].fmeasure)


def _check_batch(predictions: Sequence[str], references: Sequence[str]) -> None:
    if len(predictions) != len(references):
        raise ValueError(
            f"predictions and references must have the same length, got {len(predictions)} "
            f"and {len(references)}"
        )


def rouge_l_recalls(predictions: Sequence[str], references: Sequence[str]) -> list[float]:
    """Element-wise :func:`rouge_l_recall` over paired lists (TOFU arXiv 2401.06121).

    Forget set: LOWER = more forgotten. Raises ValueError if the lengths differ.
    """
    _check_batch(predictions, references)
    return [rouge_l_recall(p, r) for p, r in zip(predictions, references)]


def rouge_l_f1s(predictions: Sequence[str], references: Sequence[str]) -> list[float]:
    """Element-wise :func:`rouge_l_f1` over paired lists (TOFU arXiv 2401.06121; MUSE arXiv 2407.06460).

    Forget set: LOWER = more forgotten. Raises ValueError if the lengths differ.
    """
    _check_batch(predictions, references)
    return [rouge_l_f1(p, r) for p, r in zip(predictions, references)]


# --------------------------------------------------------------------------------------------------
# Probabilities and truth ratio (TOFU)
# --------------------------------------------------------------------------------------------------


@overload
def length_normalised_prob(nll_mean: float) -> float: ...
@overload
def length_normalised_prob(nll_mean: torch.Tensor) -> torch.Tensor: ...
def length_normalised_prob(nll_mean: float | torch.Tensor) -> float | torch.Tensor:
    """Length-normalised answer probability P = exp(-NLL_mean) (TOFU "Probability", arXiv 2401.06121).

    ``nll_mean`` is the mean per-token negative log-likelihood of the answer given the question, i.e.
    P is the geometric mean of the token probabilities, P(a|q)^(1/|a|). Accepts a float (returns a
    float) or a tensor (element-wise, returns a tensor).

    Direction: on the forget set LOWER = more forgotten; on retain HIGHER = better utility.
    """
    if isinstance(nll_mean, torch.Tensor):
        return torch.exp(-nll_mean)
    return math.exp(-float(nll_mean))


def truth_ratio(para_nll_mean: float, pert_nll_means: Sequence[float]) -> float:
    """TOFU truth ratio TR = P_pert / P_para (arXiv 2401.06121, as implemented in open-unlearning).

    P_para = exp(-para_nll_mean) is the length-normalised probability of the paraphrased correct
    answer and P_pert = exp(-mean(pert_nll_means)) the geometric mean over the perturbed (wrong)
    answers of their length-normalised probabilities. Computed in log space,
    TR = exp(para_nll_mean - mean(pert_nll_means)), so tiny probabilities do not underflow to 0/0.

    TR < 1: the model prefers the correct answer; TR ~ 1: it cannot tell correct from wrong (what a
    model that never saw the fact does); TR > 1: it prefers wrong answers. Direction: on the forget
    set, TR moving towards 1 (from below) = more forgotten; see :func:`forget_truth_ratio_score`.
    Raises ValueError if ``pert_nll_means`` is empty.
    """
    if len(pert_nll_means) == 0:
        raise ValueError("truth_ratio needs at least one perturbed-answer NLL, got none")
    log_tr = float(para_nll_mean) - float(np.mean(np.asarray(pert_nll_means, dtype=np.float64)))
    return math.exp(log_tr)


def _as_truth_ratios(trs: Sequence[float], name: str) -> np.ndarray:
    arr = np.asarray(trs, dtype=np.float64).reshape(-1)
    if arr.size == 0:
        raise ValueError(f"{name} needs at least one truth ratio, got none")
    if np.any(np.isnan(arr)) or np.any(arr < 0):
        raise ValueError(f"{name}: truth ratios must be non-negative numbers, got {arr.tolist()}")
    return arr


def forget_truth_ratio_score(trs: Sequence[float]) -> float:
    """TOFU forget-set truth-ratio score: mean over questions of min(TR, 1/TR) (arXiv 2401.06121).

    open-unlearning's ``closer_to_1_better`` aggregator. Lies in [0, 1]; 1 means every question has
    TR = 1 (correct and wrong answers equally likely). Direction: HIGHER = more forgotten.
    TR = 0 contributes 0 (min(0, inf)). Raises ValueError on an empty input or negative/NaN values.
    """
    arr = _as_truth_ratios(trs, "forget_truth_ratio_score")
    with np.errstate(divide="ignore"):
        inv = np.where(arr > 0, 1.0 / np.where(arr > 0, arr, 1.0), np.inf)
    return float(np.mean(np.minimum(arr, inv)))


def true_better_truth_ratio_score(trs: Sequence[float]) -> float:
    """TOFU retain / real-authors / world-facts truth-ratio score: mean of max(0, 1 - TR) (arXiv 2401.06121).

    open-unlearning's ``true_better`` aggregator: rewards preferring the correct answer (TR < 1).
    Lies in [0, 1]. Direction: HIGHER = better utility; on the forget set LOWER = more forgotten.
    Raises ValueError on an empty input or negative/NaN values.
    """
    arr = _as_truth_ratios(trs, "true_better_truth_ratio_score")
    return float(np.mean(np.maximum(0.0, 1.0 - arr)))


def option_normalised_prob(true_nll_mean: float, option_nll_means: Sequence[float]) -> float:
    """Probability of the correct answer normalised over the options (TOFU, arXiv 2401.06121).

    P_true / (P_true + sum_i P_opt_i) with every P = exp(-NLL_mean) (length-normalised). Used by TOFU
    for the real-authors and world-facts splits, where the options are the perturbed answers.
    Computed as exp(-t - logsumexp([-t, -o_1, ..., -o_n])), which is stable for large NLLs.
    (open-unlearning adds 1e-10 to the denominator; this exact form differs from it by < 1e-10.)

    Direction: on retain-type splits HIGHER = better utility; on the forget set LOWER = more forgotten.
    Raises ValueError if ``option_nll_means`` is empty.
    """
    if len(option_nll_means) == 0:
        raise ValueError("option_normalised_prob needs at least one option NLL, got none")
    neg = -np.concatenate([[float(true_nll_mean)], np.asarray(option_nll_means, dtype=np.float64)])
    return float(math.exp(neg[0] - logsumexp(neg)))


def forget_quality(unlearned_trs: Sequence[float], retain_trs: Sequence[float]) -> float:
    """TOFU forget quality: p-value of the two-sample Kolmogorov-Smirnov test (arXiv 2401.06121).

    Compares the forget-set truth ratios of the unlearned model with those of the model retrained
    without the forget set (``retain_trs``), via ``scipy.stats.ks_2samp(unlearned, retain)``
    (two-sided, default ``method="auto"``: exact for small samples). Direction: HIGHER = more
    forgotten (distributions indistinguishable from the retrained model); TOFU treats p > 0.05 as
    "forgotten". Raises ValueError if either sample is empty.
    """
    u = np.asarray(unlearned_trs, dtype=np.float64).reshape(-1)
    r = np.asarray(retain_trs, dtype=np.float64).reshape(-1)
    if u.size == 0 or r.size == 0:
        raise ValueError(
            f"forget_quality needs two non-empty samples, got {u.size} unlearned and {r.size} retain values"
        )
    return float(stats.ks_2samp(u, r).pvalue)


def harmonic_mean(values: Sequence[float]) -> float:
    """Harmonic mean n / sum(1/x), as TOFU uses to aggregate model utility (arXiv 2401.06121).

    Returns 0.0 if any value is <= 0 (a zero score on any utility component zeroes the aggregate,
    the limit of the harmonic mean as that value goes to 0; negative values are treated the same).
    Direction: HIGHER = better utility. Raises ValueError on an empty input or NaN.
    """
    arr = np.asarray(values, dtype=np.float64).reshape(-1)
    if arr.size == 0:
        raise ValueError("harmonic_mean needs at least one value, got none")
    if np.any(np.isnan(arr)):
        raise ValueError(f"harmonic_mean: NaN in values {arr.tolist()}")
    if np.any(arr <= 0):
        return 0.0
    return float(arr.size / np.sum(1.0 / arr))


# --------------------------------------------------------------------------------------------------
# Generation quality (closer-look / ASU protocol)
# --------------------------------------------------------------------------------------------------


def token_entropy(token_ids_or_tokens: Sequence[Hashable] | torch.Tensor | np.ndarray) -> float:
    """Normalised token entropy of one generation (closer-look protocol, arXiv 2410.08109 / 2603.01285).

    TE = -sum_w f(w) log2 f(w) / log2(n), where f(w) is the frequency of token w among the n tokens of
    the generation (unigram distribution). In [0, 1]; 0 for n <= 1. Measures fluency / diversity of
    the output: degenerate repetition ("the the the") -> low, varied text -> high.

    Direction: this is a utility / quality measure, not a forgetting one: HIGHER = more fluent. A
    collapse towards 0 on the forget set means the model "forgot" by emitting gibberish.
    Accepts any sequence of hashable tokens (ids or strings), or a 1-D tensor / array of ids.
    """
    if isinstance(token_ids_or_tokens, torch.Tensor | np.ndarray):
        tokens = list(token_ids_or_tokens.reshape(-1).tolist())
    else:
        tokens = list(token_ids_or_tokens)
    n = len(tokens)
    if n <= 1:
        return 0.0
    counts = np.fromiter(Counter(tokens).values(), dtype=np.float64)
    freqs = counts / n
    entropy = float(-np.sum(freqs * np.log2(freqs)))
    return max(0.0, entropy / math.log2(n))


# --------------------------------------------------------------------------------------------------
# Teacher-forced memorisation (open-unlearning / TOFU)
# --------------------------------------------------------------------------------------------------


def _check_pred_label_mask(
    pred_ids: torch.Tensor, label_ids: torch.Tensor, mask: torch.Tensor
) -> torch.Tensor:
    if pred_ids.dim() != 2 or pred_ids.shape != label_ids.shape or pred_ids.shape != mask.shape:
        raise ValueError(
            "pred_ids, label_ids and mask must all be [B, T] with the same shape, got "
            f"{tuple(pred_ids.shape)}, {tuple(label_ids.shape)}, {tuple(mask.shape)}"
        )
    mask = mask.bool()
    counts = mask.sum(dim=1)
    empty = torch.nonzero(counts == 0).flatten().tolist()
    if empty:
        raise ValueError(f"mask has no answer positions in row(s) {empty}; every row needs at least one")
    return mask


def exact_memorisation(pred_ids: torch.Tensor, label_ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Exact memorisation (EM) per sequence (open-unlearning, used with TOFU arXiv 2401.06121 / MUSE).

    EM = (number of answer positions where the teacher-forced argmax prediction equals the label) /
    (number of answer positions). ``pred_ids`` are argmax ids already aligned with ``label_ids``
    (position t predicts label t); ``mask`` [B, T] bool marks the answer positions.
    Returns a float tensor [B] in [0, 1]. Direction: on the forget set LOWER = more forgotten.
    Raises ValueError for shape mismatches or a row with no answer positions.
    """
    mask = _check_pred_label_mask(pred_ids, label_ids, mask)
    hits = ((pred_ids == label_ids) & mask).sum(dim=1).to(torch.float64)
    return (hits / mask.sum(dim=1).to(torch.float64)).to(torch.float32)


def extraction_strength(pred_ids: torch.Tensor, label_ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Extraction strength (ES) per sequence (open-unlearning; Carlini et al. style, TOFU / MUSE evals).

    For an answer y of length T (the masked positions, in order) ES = 1 - k/T, where k is the smallest
    prefix length such that the model, given y_<k, predicts every remaining token y_k..y_{T-1}
    (teacher-forced argmax == label at all positions >= k). Teacher-forced and greedy decoding agree
    here because every conditioning token is both the label and the model's own prediction.
    Equivalently ES = (length of the trailing run of correct predictions) / T: k = 0 (all correct)
    -> ES = 1.

    As open-unlearning (``evals/metrics/memorization.py``: ``for k in range(T): ... break``; ``k`` is
    left at T - 1 when no suffix matches) k is at most T - 1, so ES >= 1/T: a last token predicted
    wrong gives 1/T, the same as only the last token right, and a one-token answer always gives 1.
    (The definition's empty suffix, k = T, would give 0; unlearnkit gave 0 before, which put every
    forget-set ES a little below open-unlearning's. docs/CONVENTIONS.md.)
    Returns a float tensor [B] in [1/T, 1]. Direction: on the forget set LOWER = more forgotten.
    Raises ValueError for shape mismatches or a row with no answer positions.
    """
    mask = _check_pred_label_mask(pred_ids, label_ids, mask)
    out = torch.empty(pred_ids.shape[0], dtype=torch.float32)
    correct = pred_ids == label_ids
    for row in range(pred_ids.shape[0]):
        c = correct[row][mask[row]]
        total = int(c.numel())
        # Trailing run of True: position of the last wrong prediction + 1 is k (at most T - 1).
        wrong = torch.nonzero(~c).flatten()
        k = int(wrong[-1].item()) + 1 if wrong.numel() > 0 else 0
        out[row] = 1.0 - min(k, total - 1) / total
    return out


# --------------------------------------------------------------------------------------------------
# MIA aggregates (MUSE)
# --------------------------------------------------------------------------------------------------


def auc(member_scores: Sequence[float], nonmember_scores: Sequence[float]) -> float:
    """ROC AUC of separating members from non-members, HIGHER score = more likely member.

    Computed as the Mann-Whitney U statistic over all (member, non-member) pairs divided by
    n_member * n_nonmember, with ties counted 0.5: AUC = P(s_member > s_nonmember) + 0.5 P(tie).
    TOFU-style MIA AUCs (``mia_*_auc``) pass forget as members, holdout as non-members. MUSE's PrivLeak
    AUC (arXiv 2407.06460) is the other way round, ``auc(holdout, forget)``: see :func:`privleak`.
    1.0 = perfectly separated, 0.5 = indistinguishable, 0.0 = perfectly reversed.
    Direction: for an unlearned model, CLOSER TO THE RETRAINED MODEL'S AUC (usually ~0.5) = more
    forgotten; see :func:`privleak`. Raises ValueError on an empty input or NaN.
    """
    m = np.asarray(member_scores, dtype=np.float64).reshape(-1)
    n = np.asarray(nonmember_scores, dtype=np.float64).reshape(-1)
    if m.size == 0 or n.size == 0:
        raise ValueError(f"auc needs non-empty member and non-member scores, got {m.size} and {n.size}")
    if np.any(np.isnan(m)) or np.any(np.isnan(n)):
        raise ValueError("auc: NaN in scores")
    ranks = stats.rankdata(np.concatenate([m, n]))  # average ranks -> ties count 0.5
    u = float(np.sum(ranks[: m.size])) - m.size * (m.size + 1) / 2.0
    return u / (m.size * n.size)


def privleak(auc_unlearned: float, auc_retrained: float) -> float:
    """MUSE PrivLeak = (AUC_unlearned - AUC_retrained) / AUC_retrained * 100 (arXiv 2407.06460).

    The AUCs must be oriented as MUSE's code orients them: forget texts labelled 0, holdout texts 1,
    score ``-Min-40%``, i.e. AUC = P(a holdout text looks more "member" than a forget text) =
    ``auc(holdout_scores, forget_scores)`` with this module's higher-is-member scores
    (:func:`unlearnkit.protocols.muse.privleak_auc`). Sign convention (MUSE's):
    * negative: the forget texts still look more "seen" than the retrained model finds them ->
      under-unlearning / privacy leak (a model that remembers everything gets about -100);
    * positive: forget texts now look less seen than unseen text -> over-unlearning;
    * ~0: ideal, indistinguishable from retraining (published retrain AUCs: News 0.4772, Books 0.5393).
    Direction: CLOSER TO 0 = better forgotten. Raises ValueError if ``auc_retrained`` is 0.
    """
    if auc_retrained == 0:
        raise ValueError("privleak: auc_retrained is 0, the relative difference is undefined")
    return (float(auc_unlearned) - float(auc_retrained)) / float(auc_retrained) * 100.0

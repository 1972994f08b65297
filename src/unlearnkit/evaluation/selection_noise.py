"""When two evaluation scores are "equal within noise": the rule the sweep chooses (and refuses) by.

A score measured on ``n`` items carries sampling noise: a different draw of ``n`` items of the same
kind would give a different number. The sweep compares scores measured on the same selection half, so
a difference smaller than that noise says nothing about the settings. The rule, per metric, from the
*target's* per-item values on the selection half (:func:`noise_bands`):

* **means of per-item values in [0, 1]** (ROUGE-L recall, answer probability, truth-ratio scores,
  exact memorisation, extraction strength; on forget, retain, general and the general parts): two
  scores are equal within noise when they differ by at most ``NOISE_SE`` (2) standard errors of the
  target's mean, ``2 sd / sqrt(n)`` (about a 95 % band). Where the per-item values are not kept
  (option-normalised general probability, exact memorisation, extraction strength) ``sd`` is bounded
  by that of a [0, 1] variable with the same mean, ``sqrt(m (1 - m))``: the band is then wider, never
  narrower, than the true one.
* **model utility** (a harmonic mean of such means): the components' standard errors carried through
  the harmonic mean to first order (delta method, components taken as independent).
* **forget quality** (a KS p-value, arXiv 2401.06121): compared through the KS distance it stands for,
  ``D = K^-1(1 - p) / sqrt(n_eff)`` (``K``: the asymptotic Kolmogorov distribution, ``n_eff = n m /
  (n + m)`` for ``n`` forget and ``m`` oracle items); equal within noise when the two distances differ
  by at most 2 sd of ``D`` under the null, ``2 x 0.2603 / sqrt(n_eff)``.

The same rule answers two questions (:func:`unmoved`, :func:`all_equal`): did a trial leave the
model where it was (its forget metrics within noise of the target's), and are all trials equal within
noise on every objective (then a "best" would be chosen by noise).

A report that compares two finished rows has no per-item values of theirs, only their means on the
same ``n`` items: :func:`pair_band` bounds each mean's standard error by the [0, 1] bound above, at
that row's own mean (exact for a share of items such as fact recall), and calls the two equal within
noise when they differ by at most ``NOISE_SE`` standard errors of the difference
(:mod:`unlearnkit.report.choice` calls such a difference a tie).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

NOISE_SE = 2.0  # standard errors: "within noise" = closer than this many standard errors (~95 %)
FORGET_METRICS = ("forget_rougeL_recall", "forget_prob", "forget_truth_ratio", "forget_quality")
_UTILITY = (
    "retain_prob",
    "retain_rougeL_recall",
    "retain_truth_ratio",
    "general_prob",
    "general_rougeL_recall",
    "general_truth_ratio",
)
_TOFU_UTILITY = tuple(
    f"{part}_{m}"
    for part in ("retain", "real_authors", "world_facts")
    for m in ("prob", "rougeL_recall", "truth_ratio")
)


def _se(values: Sequence[float]) -> float:
    n = len(values)
    if n < 2:
        # One item gives no estimate of its spread: the [0, 1] bound (see the module docstring).
        return _bounded_se(values[0] if values else float("nan"), n)
    mean = sum(values) / n
    var = sum((v - mean) ** 2 for v in values) / (n - 1)
    return math.sqrt(var / n)


def _bounded_se(mean: float, n: int) -> float:
    if n < 1 or math.isnan(mean):
        return float("inf")
    m = min(1.0, max(0.0, mean))
    return math.sqrt(m * (1.0 - m) / n)


def _per_item(
    kind: str, split: dict[str, Any], is_general: bool
) -> dict[str, tuple[list[float] | None, int]]:
    """metric -> (per-item values, or None where only the bound applies; n)."""
    n = len(split.get("rougeL_recall") or [])
    out: dict[str, tuple[list[float] | None, int]] = {
        f"{kind}_rougeL_recall": (split.get("rougeL_recall"), n)
    }
    trs = split.get("truth_ratios")
    nll = split.get("nll_mean")
    if is_general and trs:
        out[f"{kind}_prob"] = (None, n)  # option-normalised: the per-item values are not kept
    elif nll:
        out[f"{kind}_prob"] = ([math.exp(-x) for x in nll], n)
    if trs:
        if kind == "forget":
            values = [min(t, 1.0 / t) if t > 0 else 0.0 for t in trs]
        else:
            values = [max(0.0, 1.0 - t) for t in trs]
        out[f"{kind}_truth_ratio"] = (values, len(trs))
    if kind in ("forget", "holdout"):
        out[f"{kind}_exact_memorisation"] = (None, n)
        out[f"{kind}_extraction_strength"] = (None, n)
    return out


def pair_band(a: float, b: float, n: int) -> float:
    """Half-width below which two means in [0, 1] over ``n`` items each are equal within noise:
    ``NOISE_SE`` standard errors of ``a - b``, each side's bounded by ``sqrt(m (1 - m) / n)`` at its own
    mean (inf for ``n < 1``: nothing can be told apart)."""
    return NOISE_SE * math.hypot(_bounded_se(a, n), _bounded_se(b, n))


def kolmogorov_sd() -> float:
    from scipy.stats import kstwobign

    return float(kstwobign.std())


def noise_bands(
    metrics: dict[str, float], details: dict[str, Any], oracle_items: int | None = None
) -> dict[str, Any]:
    """The noise band of every metric of one evaluation (``evaluate``'s ``metrics, details``).

    Returns ``{"bands": {metric: half-width}, "n": {metric: items}, "fq_n_eff": n_eff or None}``
    (plain JSON, so it can be stored beside the reference numbers).
    """
    bands: dict[str, float] = {}
    ns: dict[str, int] = {}
    ses: dict[str, float] = {}
    for kind, split in details.items():
        if not isinstance(split, dict) or "rougeL_recall" not in split:
            continue  # prompt-format fields of details, not a split
        is_general = kind not in ("forget", "retain", "holdout")
        for metric, (values, n) in _per_item(kind, split, is_general).items():
            if metric not in metrics:
                continue
            se = _se(values) if values is not None else _bounded_se(metrics[metric], n)
            ses[metric], ns[metric] = se, n
            bands[metric] = NOISE_SE * se
    keys = _TOFU_UTILITY if all(k in metrics for k in _TOFU_UTILITY) else _UTILITY
    parts = [(metrics[k], ses[k]) for k in keys if k in metrics and k in ses and not math.isnan(metrics[k])]
    if "model_utility" in metrics and parts:
        bands["model_utility"] = NOISE_SE * harmonic_se(parts)
    n_forget = len((details.get("forget") or {}).get("truth_ratios") or [])
    n_eff = None
    if oracle_items and n_forget:
        n_eff = n_forget * oracle_items / (n_forget + oracle_items)
        bands["forget_quality"] = NOISE_SE * kolmogorov_sd() / math.sqrt(n_eff)  # on the KS-distance scale
        ns["forget_quality"] = n_forget
    return {"bands": bands, "n": ns, "fq_n_eff": n_eff}


def harmonic_se(parts: Sequence[tuple[float, float]]) -> float:
    """First-order standard error of H = k / sum(1/x_j) from the components' (value, se)."""
    k = len(parts)
    if any(x <= 0 for x, _ in parts):
        # H is 0 and, to first order, k x_j in each zero component: only those move it.
        return math.sqrt(sum((k * se) ** 2 for x, se in parts if x <= 0))
    h = k / sum(1.0 / x for x, _ in parts)
    return math.sqrt(sum((h * h / (k * x * x) * se) ** 2 for x, se in parts))


def ks_distance(p: float, n_eff: float) -> float:
    """The two-sample KS distance whose asymptotic p-value is ``p``."""
    from scipy.stats import kstwobign

    p = min(1.0, max(float(p), 1e-300))
    return float(kstwobign.isf(p)) / math.sqrt(n_eff)


def difference(noise: dict[str, Any], metric: str, a: float, b: float) -> float:
    """``|a - b|`` on the scale the metric's band is on (KS distance for forget quality)."""
    if metric == "forget_quality" and noise.get("fq_n_eff"):
        return abs(ks_distance(a, noise["fq_n_eff"]) - ks_distance(b, noise["fq_n_eff"]))
    return abs(float(a) - float(b))


def equal(noise: dict[str, Any], metric: str, a: float, b: float) -> bool:
    """``a`` and ``b`` are equal within noise (a metric without a band: only when exactly equal)."""
    if any(isinstance(x, float) and math.isnan(x) for x in (a, b)):
        return bool(math.isnan(a) and math.isnan(b))
    band = noise.get("bands", {}).get(metric)
    return difference(noise, metric, a, b) <= (band if band is not None else 0.0)


def unmoved(noise: dict[str, Any], target: dict[str, float], trial: dict[str, float]) -> bool:
    """The trial's forget metrics are all within noise of the target's (it left the model where it was)."""
    shared = [m for m in FORGET_METRICS if m in target and m in trial]
    return bool(shared) and all(equal(noise, m, target[m], trial[m]) for m in shared)


def all_equal(noise: dict[str, Any], rows: Iterable[dict[str, float]], objectives: Sequence[str]) -> bool:
    """Every pair of ``rows`` is equal within noise on every objective (nothing to choose between)."""
    rows = list(rows)
    if len(rows) < 2:
        return False
    for metric in objectives:
        values = [r.get(metric, float("nan")) for r in rows]
        for i, a in enumerate(values):
            if not all(equal(noise, metric, a, b) for b in values[i + 1 :]):
                return False
    return True

"""Say so when a headline number is degenerate: which input made it so, and the likely cause.

Pure functions over numbers already computed (no model, no torch: the report imports this module).
Each returns :class:`Diagnosis` objects; :func:`evaluation_warnings` is the hook that
:func:`unlearnkit.evaluation.evaluate.evaluate` calls (recorded as ``details["warnings"]``, printed by
``unlearnkit eval`` as ``unlearnkit: warning: ...`` lines), :func:`results_warnings` the one the
report calls on a whole table. Two cases met on a user's own small data set:

1. **A zero input of a harmonic mean.** Model utility is the harmonic mean of 6 (9 on TOFU) numbers
   (TOFU, arXiv 2401.06121), so one input at 0 makes it 0 whatever the others are, and one input at
   x caps it at (number of inputs) x x. The case seen: retain truth ratio 0 (every perturbed, wrong
   answer at least as likely as the paraphrased right one) with retain ROUGE-L 0.99, because a tiny
   model scores *wording*, not facts: it prefers a wrong answer in the trained wording over the right
   answer in a paraphrase worded as it never saw. Every model, the oracle included, then has utility
   0 and nothing can be ranked on it.
2. **Forget quality on few items.** Forget quality is the p-value of a two-sample Kolmogorov-Smirnov
   test (n forget items of the model vs m of the oracle). With few items it is too coarse to rank
   models; see :data:`MIN_FQ_ITEMS` for the threshold and how it was derived, and
   :func:`ks_pvalue` for the exact p-values quoted in the warning. On a whole table there is a
   sharper, data-driven check (:func:`resolution_warning`): when the untouched target itself (``unlearnkit
   eval --original-model``) scores p >= 0.05 against the oracle, the test cannot tell the model that
   knows the forget set from the one that never saw it, so no row's forget quality means anything there.

The closer-look aggregates (``fe``, ``mu_closer_look``) are harmonic means too:
:func:`closer_look_warnings` names their zero inputs the same way (``unlearnkit eval --protocol
closer-look``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import Any

#: The harmonic-mean inputs of model utility (mirrors ``evaluate.UTILITY_KEYS`` and
#: ``evaluate.TOFU_UTILITY_KEYS``; kept here so that this module needs no torch; a test pins them equal).
UTILITY_INPUTS: tuple[str, ...] = (
    "retain_prob",
    "retain_rougeL_recall",
    "retain_truth_ratio",
    "general_prob",
    "general_rougeL_recall",
    "general_truth_ratio",
)
TOFU_UTILITY_INPUTS: tuple[str, ...] = tuple(
    f"{part}_{metric}"
    for part in ("retain", "real_authors", "world_facts")
    for metric in ("prob", "rougeL_recall", "truth_ratio")
)

#: An input at or below this is "near zero": it caps the harmonic mean at n x NEAR_ZERO (0.06 for 6).
NEAR_ZERO = 0.01
#: Retain-side ROUGE-L recall (or probability) from which "the model knows these answers" is said.
KNOWS = 0.5
#: TOFU's line: forget quality above it is read as "forgotten" (arXiv 2401.06121).
FQ_FORGOTTEN = 0.05

#: Fewer forget items than this on either side and forget quality gets a warning. Derivation: the
#: smallest n (items per side) from which on the two-sided two-sample KS test at alpha 0.05 detects a
#: shift of one standard deviation (Cohen's d = 1, a "large" effect) between two normal samples with
#: at least 80 % power. Simulated (scipy ks_2samp, 4000 draws per n from numpy default_rng([1, n])):
#: power 0.25 at n = 10, 0.71 at 20, 0.80 (0.799) at 22, 0.73 at 23, 0.78 at 24, then 0.82, 0.84,
#: 0.88, 0.83, 0.85, 0.88 at 25-30 and 0.95 at 40 (TOFU's smallest split, forget01, has 40 items);
#: the p-value's discreteness makes it non-monotone. tests/test_diagnostics.py re-runs it. Below 25
#: items the test misses even a large difference more than one time in five, and one item moves the
#: p-value by a factor of 2 to 4 (the warning quotes the exact neighbours), so rankings by forget
#: quality are noise.
MIN_FQ_ITEMS = 25


@dataclass(frozen=True)
class Diagnosis:
    """One warning about one number: ``code`` (stable id), the ``metric`` it is about and its
    ``value``, a one-line ``message`` (what, why, what to do), the ``cause`` when one is named, and the
    results ``row`` when it comes from a table."""

    code: str
    metric: str
    value: float | None
    message: str
    cause: str | None = None
    row: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}


def _finite(x: Any) -> float | None:
    if x is None or isinstance(x, bool):
        return None
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


# ------------------------------------------------------------------------------------ model utility


def utility_inputs(metrics: Mapping[str, Any]) -> tuple[str, ...]:
    """The inputs ``model_utility`` was the harmonic mean of: TOFU's 9 when all are present, else those
    of the 6 present with a finite value (what :func:`unlearnkit.evaluation.evaluate.evaluate` does)."""
    if all(k in metrics for k in TOFU_UTILITY_INPUTS):
        return TOFU_UTILITY_INPUTS
    return tuple(k for k in UTILITY_INPUTS if _finite(metrics.get(k)) is not None)


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", str(text).casefold()))


def _share(of: str, within: str) -> float:
    words = _words(of)
    return len(words & _words(within)) / len(words) if words else 0.0


def wording_skew(rows: Sequence[Mapping[str, Any]]) -> tuple[int, int]:
    """``(k, n)``: on k of the n rows with a paraphrase and wrong answers, the wrong answers share more of
    their words with ``answer`` (the trained wording) than with ``paraphrased_answer`` (mean over the
    wrong answers of the share of each one's distinct words found in the other text)."""
    k = n = 0
    for r in rows:
        pert, para, ans = r.get("perturbed_answer"), r.get("paraphrased_answer"), r.get("answer")
        if not pert or not isinstance(para, str) or not isinstance(ans, str):
            continue
        n += 1
        to_answer = sum(_share(p, ans) for p in pert) / len(pert)
        to_para = sum(_share(p, para) for p in pert) / len(pert)
        k += to_answer > to_para
    return k, n


def _split_and_kind(key: str) -> tuple[str, str]:
    """``"real_authors_truth_ratio"`` -> ``("real_authors", "truth_ratio")``."""
    for kind in ("rougeL_recall", "truth_ratio", "prob"):
        if key.endswith("_" + kind):
            return key[: -len(kind) - 1], kind
    return key, ""


def _cause(key: str, value: float, metrics: Mapping[str, Any], rows: Sequence[Mapping] | None):
    """``(cause code, sentence)`` for a near-zero utility input ``key`` = ``<split>_<kind>``."""
    split, kind = _split_and_kind(key)
    rouge = _finite(metrics.get(f"{split}_rougeL_recall"))
    rouge_txt = f"{split}_rougeL_recall {rouge:.3f}" if rouge is not None else None
    every = "every item" if value <= 0 else "almost every item"
    if kind == "truth_ratio" and split == "retain":
        wrong_first = (
            f"the perturbed (wrong) answers are at least as likely as the paraphrased right answer on {every}"
        )
        if rouge is not None and rouge >= KNOWS:
            skew, n = wording_skew(rows or [])
            if n and skew * 2 <= n:
                return (
                    "prefers_wrong_answers",
                    f"the model recites the {split} answers ({rouge_txt}) but {wrong_first}, and the wrong "
                    "answers are not closer in wording to the trained answer than the paraphrase is: it does "
                    "not tell the right value from wrong ones",
                )
            evidence = (
                f" (here the wrong answers share more words with `answer` than with `paraphrased_answer` "
                f"on {skew} of {n} rows)"
                if n
                else ""
            )
            return (
                "paraphrase_wording",
                f"likely the paraphrase wording: the model knows the {split} answers ({rouge_txt}), yet "
                f"{wrong_first}; a small model scores wording, not facts, and prefers a wrong answer in the "
                f"trained wording over the right answer in an unseen paraphrase wording{evidence}. Write "
                "perturbed_answer as paraphrased_answer with only the fact changed (TOFU's convention), or "
                "give paraphrased_answer the trained wording",
            )
        return (
            "answers_not_known",
            f"{wrong_first} and the model does not recite the answers either"
            + (f" ({rouge_txt})" if rouge_txt else "")
            + ": it lost them, or never learned them",
        )
    if kind == "truth_ratio":
        return (
            "prefers_wrong_answers",
            f"the model finds the perturbed (wrong) answers at least as likely as the correct answer on "
            f"{every}" + (f" ({rouge_txt})" if rouge_txt else "") + ": the knowledge is lost, or the wrong "
            "answers are more typical sentences for it than the right ones",
        )
    if kind == "prob":
        what = (
            "the correct answer gets almost none of the probability shared with the wrong options"
            if split != "retain"
            else "the model gives the answers almost no probability"
        )
        return (
            "answers_unlikely",
            f"{what}" + (f" ({rouge_txt})" if rouge_txt else "") + ": the knowledge was destroyed (a "
            "collapsed model), or the answers are scored in a prompt format other than the trained one",
        )
    return (
        "generations_off",
        "the greedy answers share almost no words with the reference answers: empty or degenerate "
        "generations (see details.json generations), or too few --max-new-tokens",
    )


def harmonic_input_warnings(
    aggregate: str,
    inputs: Mapping[str, Any],
    metrics: Mapping[str, Any] | None = None,
    rows_by_split: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
    row: str | None = None,
) -> list[Diagnosis]:
    """A :class:`Diagnosis` per input of the harmonic mean ``aggregate`` at or below :data:`NEAR_ZERO`.

    ``inputs`` maps each input's name to its value; ``metrics`` (where ``aggregate``'s value and the
    evidence for a cause are read) defaults to ``inputs``. A utility input (``retain_truth_ratio`` ...)
    gets its likely cause; ``rows_by_split`` (the evaluated rows) lets the paraphrase-wording cause be
    checked on the data (:func:`wording_skew`), without it the cause is inferred from the numbers."""
    metrics = inputs if metrics is None else metrics
    total = _finite(metrics.get(aggregate))
    out = []
    for key, raw in inputs.items():
        value = _finite(raw)
        if value is None or value > NEAR_ZERO:
            continue
        others = [v for k, x in inputs.items() if k != key and (v := _finite(x)) is not None]
        spread = f"; the other {len(others)} inputs are {min(others):.2f}-{max(others):.2f}" if others else ""
        effect = (
            f"zeroes {aggregate} (a harmonic mean: one zero input makes it zero"
            if value <= 0
            else f"caps {aggregate} at {len(inputs)} x {value:.3f} = {len(inputs) * value:.3f} (a harmonic mean"
        )
        got = f"; {aggregate} {total:.3f}" if total is not None and value > 0 else ""
        cause, why = None, ""
        if key in UTILITY_INPUTS or key in TOFU_UTILITY_INPUTS:
            rows = (rows_by_split or {}).get(_split_and_kind(key)[0])
            cause, why = _cause(key, value, metrics, rows)
            why = f" Cause: {why}."
        elif key.startswith("1-"):  # forget efficacy's "one minus x": x is at its maximum
            cause = "still_known"
            why = (
                f" Cause: {key[2:]} is {1 - value:.3f}: the model still gives the forget answers, so on this "
                "input nothing was forgotten."
            )
        out.append(
            Diagnosis(
                code="harmonic_input_zero" if aggregate != "model_utility" else "utility_input_zero",
                metric=key,
                value=value,
                cause=cause,
                row=row,
                message=f"{key} is {value:.3f}, which {effect}{spread}){got}.{why}",
            )
        )
    return out


def utility_warnings(
    metrics: Mapping[str, Any],
    rows_by_split: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
    row: str | None = None,
) -> list[Diagnosis]:
    """:func:`harmonic_input_warnings` for ``model_utility`` over :func:`utility_inputs`."""
    inputs = {k: metrics.get(k) for k in utility_inputs(metrics)}
    return harmonic_input_warnings("model_utility", inputs, metrics, rows_by_split, row)


def closer_look_warnings(metrics: Mapping[str, Any], info: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Zero inputs of the closer-look harmonic means (``fe``, ``mu_closer_look``), JSON-ready; the
    inputs are the component names ``closer_look_metrics`` recorded (``1-x`` = one minus metric x).
    An input model utility shares is not repeated (the utility warning already names it)."""

    def value(name: str) -> float | None:
        v = _finite(metrics.get(name.removeprefix("1-")))
        return None if v is None else (1.0 - v if name.startswith("1-") else v)

    seen = set(utility_inputs(metrics))
    out = []
    for aggregate, names in (
        ("fe", info.get("fe_components")),
        ("mu_closer_look", info.get("mu_components")),
    ):
        inputs = {n: value(n) for n in names or ()}
        out += [
            d.as_dict()
            for d in harmonic_input_warnings(aggregate, inputs, {**metrics, **inputs})
            if d.metric not in seen
        ]
    return out


# ---------------------------------------------------------------------------------- forget quality


def ks_min_pvalue(n: int, m: int) -> float:
    """The smallest two-sided two-sample KS p-value attainable with n vs m items: every item of one
    sample below every item of the other (D = 1), 2 of the C(n+m, n) equally likely orderings."""
    return min(1.0, 2.0 / math.comb(n + m, n))


@lru_cache(maxsize=4096)
def _p_outside(k: int, n: int, m: int) -> float:
    """P(D >= k / (n m)) under H0: 1 - (lattice paths from (0, 0) to (n, m) staying strictly inside
    |i m - j n| < k) / C(n + m, n) (Hodges 1957, the exact method scipy's ks_2samp uses)."""
    if k <= 0:
        return 1.0
    row = [1] + [0] * m  # paths to (0, j)
    for j in range(1, m + 1):
        row[j] = row[j - 1] if abs(-j * n) < k else 0
    for i in range(1, n + 1):
        new = [row[0] if abs(i * m) < k else 0] + [0] * m
        for j in range(1, m + 1):
            new[j] = (row[j] + new[j - 1]) if abs(i * m - j * n) < k else 0
        row = new
    return max(0.0, 1.0 - row[m] / math.comb(n + m, n))


def ks_pvalue(d: float, n: int, m: int) -> float:
    """Exact two-sided two-sample KS p-value P(D >= d) under H0 for n vs m items (no ties).

    D lives on the lattice k / (n m); ``d`` is rounded onto it. Matches
    ``scipy.stats.ks_2samp(..., method="exact").pvalue`` (tests/test_diagnostics.py)."""
    return _p_outside(round(d * n * m), n, m)


def _d_of_pvalue(p: float, n: int, m: int) -> int:
    """The lattice k (D = k / (n m)) whose p-value is ``p`` (or, for a rounded ``p``, the closest).

    p(k) falls in steps as k grows; among the k giving the same p-value the largest is taken (p = 1
    holds for every small D: the neighbours are then those of the largest D that still gives 1)."""
    if _p_outside(n * m, n, m) >= p:
        return n * m
    lo, hi = 0, n * m  # p(lo) >= p > p(hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _p_outside(mid, n, m) >= p:
            lo = mid
        else:
            hi = mid

    def off(k: int) -> float:
        return abs(math.log(max(_p_outside(k, n, m), 1e-300)) - math.log(max(p, 1e-300)))

    return hi if off(hi) < off(lo) else lo


def ks_critical_items(n: int, m: int, alpha: float = FQ_FORGOTTEN) -> int | None:
    """How many of the n items must separate (D >= items / n) for p < alpha; None when no D can."""
    for items in range(1, n + 1):
        if _p_outside(items * m, n, m) < alpha:
            return items
    return None


def forget_quality_warnings(metrics: Mapping[str, Any], row: str | None = None) -> list[Diagnosis]:
    """A warning when ``forget_quality`` rests on fewer than :data:`MIN_FQ_ITEMS` items on either side.

    Reads ``forget_quality_n`` (the model's items) and ``forget_quality_oracle_n`` (the oracle's) from
    ``metrics``; says what the KS test can show at that size: its range (1 down to
    :func:`ks_min_pvalue`), how many items must separate for p < 0.05, and where one item more or less
    would put this p-value."""
    fq = _finite(metrics.get("forget_quality"))
    n, m = _finite(metrics.get("forget_quality_n")), _finite(metrics.get("forget_quality_oracle_n"))
    if fq is None or n is None or m is None:
        return []
    n, m = int(n), int(m)
    if n < 1 or m < 1 or min(n, m) >= MIN_FQ_ITEMS:
        return []
    k = _d_of_pvalue(fq, n, m)
    need = ks_critical_items(n, m)
    needs = (
        f"p < {FQ_FORGOTTEN:g} needs {need} of the {n} items separated (D >= {need / n:.2f})"
        if need
        else f"no outcome reaches p < {FQ_FORGOTTEN:g}"
    )
    # One of the model's n items moved across the oracle's values changes D by 1/n = m / (n m).
    fewer = f"{_p_outside(max(0, k - m), n, m):.2g}"
    more = f"{_p_outside(k + m, n, m):.2g}" if k + m <= n * m else None
    moves = (
        f"one item more or fewer separated turns this {fq:.3g} into {more} or {fewer}"
        if more is not None
        else f"it is at its floor, and one item fewer separated turns it into {fewer}"
    )
    return [
        Diagnosis(
            code="forget_quality_few_items",
            metric="forget_quality",
            value=fq,
            row=row,
            message=(
                f"forget_quality {fq:.3g} rests on {n} forget items against the oracle's {m}, fewer than "
                f"{MIN_FQ_ITEMS} a side: the KS test then misses even a large difference (one standard "
                f"deviation) more than one time in five, and its p-value moves in coarse steps. At {n} vs "
                f"{m} it ranges from 1 (identical) down to {ks_min_pvalue(n, m):.2g} (every item "
                f"separated); {needs}; {moves}. Do not rank models by it here; compare the forget fact "
                "recall / ROUGE-L / probability with the oracle's."
            ),
        )
    ]


def resolution_warning(
    original_fq: Any,
    n: Any = None,
    original: str = "the original model (before unlearning)",
    row: str | None = None,
) -> Diagnosis | None:
    """When the original model (the one before unlearning, which knows the forget set) scores forget
    quality >= 0.05 against the oracle, the KS test cannot tell a model that knows the forget set from
    one that never saw it on these items: that p-value is the test's resolution on this data, and no
    unlearned model's forget quality can show forgetting beyond it. None when the test resolves (or the
    value is unknown)."""
    fq = _finite(original_fq)
    if fq is None or fq < FQ_FORGOTTEN:
        return None
    n = _finite(n)
    on = f"on these {int(n)} forget items" if n is not None else "on these forget items"
    return Diagnosis(
        code="forget_quality_target_not_separated",
        metric="forget_quality",
        value=fq,
        row=row,
        message=(
            f"{original} has forget_quality {fq:.3g} >= {FQ_FORGOTTEN:g} against the oracle: {on} the KS "
            "test cannot tell the model that knows them from the one that never saw them, so forget quality "
            "cannot resolve forgetting here: no row's forget quality (nor its 'forgotten' line) says "
            "anything; more forget items, or the fact recall / ROUGE-L / probability next to the oracle's, "
            "do."
        ),
    )


def target_separation_warning(results: Mapping[str, Mapping[str, Any]]) -> Diagnosis | None:
    """:func:`resolution_warning` for a table: the untouched ``target`` row is the original model."""
    target = results.get("target") or {}
    return resolution_warning(
        target.get("forget_quality"),
        target.get("forget_quality_n"),
        original="the target (before unlearning)",
        row="target",
    )


# ------------------------------------------------------------------------------------------ hooks


def evaluation_warnings(
    metrics: Mapping[str, Any], rows_by_split: Mapping[str, Sequence[Mapping[str, Any]]] | None = None
) -> list[dict[str, Any]]:
    """The warnings of one evaluation, JSON-ready (``details["warnings"]``)."""
    found = utility_warnings(metrics, rows_by_split) + forget_quality_warnings(metrics)
    return [d.as_dict() for d in found]


def results_warnings(
    results: Mapping[str, Mapping[str, Any]],
) -> list[Diagnosis]:
    """Every row's warnings plus the table-wide ones, for a report.

    A warning every row shares (the same input at zero everywhere, the oracle included) is given once,
    for all rows, rather than once per row; small-n forget quality is reported once per table too."""
    per_row = {name: utility_warnings(row, row=str(name)) for name, row in results.items()}
    out: list[Diagnosis] = []
    keys = {d.metric for ws in per_row.values() for d in ws}
    for key in sorted(keys):
        rows = [name for name, ws in per_row.items() if any(d.metric == key for d in ws)]
        first = next(d for d in per_row[rows[0]] if d.metric == key)
        if len(rows) == len(results) and len(rows) > 1:
            # The same input at zero everywhere, the references included: one warning for the table.
            out.append(
                Diagnosis(
                    code=first.code,
                    metric=key,
                    value=first.value,
                    cause=first.cause,
                    row="every row",
                    message=f"{key} is near zero in every row ({_and(rows)}), so no row can be ranked on "
                    f"model utility here. {rows[0]}: {first.message}",
                )
            )
        else:
            out += [next(d for d in per_row[r] if d.metric == key) for r in rows]
    # Small n: one warning for the table, quoting the first unlearned row (else the first row).
    references = ("target", "oracle", "base")
    names = [n for n in results if n not in references] + [n for n in results if n in references]
    few = next((d for n in names for d in forget_quality_warnings(results[n], row=str(n))), None)
    if few is not None:
        sizes = {
            (results[n].get("forget_quality_n"), results[n].get("forget_quality_oracle_n"))
            for n in results
            if _finite(results[n].get("forget_quality_n")) is not None
        }
        same = " Every row's forget quality rests on the same items." if len(sizes) == 1 else ""
        out.append(Diagnosis(**{**few.as_dict(), "message": few.message + same}))
    target = target_separation_warning(results)
    if target is not None:
        out.append(target)
    return out


def _and(names: Sequence[str]) -> str:
    names = [str(n) for n in names]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def add_resolution(metrics: dict, details: dict, resolution: dict) -> None:
    """``original_forget_quality`` in the metrics, ``forget_quality_resolution`` in the details and, when
    the test cannot tell the original from the oracle, the warning that says so."""
    fq = resolution.get("forget_quality")
    if fq is None:
        return
    metrics["original_forget_quality"] = fq
    details["forget_quality_resolution"] = {**resolution, "resolves": fq < FQ_FORGOTTEN}
    found = resolution_warning(
        fq, resolution.get("n"), original=f"the original model ({resolution['original_model']})"
    )
    if found is not None:
        details["warnings"] = details.get("warnings", []) + [found.as_dict()]

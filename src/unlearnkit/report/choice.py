"""Which row of a results table is "best", by a rule stated next to the choice.

The aim of unlearning is the retain oracle: the model that never saw the forget data. So the rule is

    among the rows that keep at least ``UTILITY_KEPT`` (90 %) of the oracle's model utility, the one
    closest to the oracle on the forget side: the mean absolute difference from the oracle's forget
    fact recall (forget ROUGE-L recall where the rows have no fact-level score) and forget probability;
    ties go to the higher utility.

Forget quality is not used: it is a p-value that one item moves several-fold on small forget sets
(:mod:`unlearnkit.evaluation.diagnostics`), and a higher p-value is not "closer to the oracle" (the
untouched target scored 0.57 on the quickstart, above GA, IDK and NPO). The previous rule (highest
forget quality among rows keeping 80 % of the target's utility) called ASU best with forget probability
0.898 against the oracle's 0.005.

The fact-level score (``forget_fact_recall``: the share of forget questions whose fact value the greedy
answer states, :mod:`unlearnkit.evaluation.probes`) is used when the oracle and every candidate have
it: ROUGE-L on templated answers is dominated by the name and template words (the oracle scores 0.39
with no knowledge of the facts). When the oracle's model utility is itself degenerate (at or below
``NEAR_ZERO``: a zero input of the harmonic mean, see the diagnostics), utility is read from retain
ROUGE-L recall instead, and the rule says so.

Three guards make the choice one a newcomer can trust:

* **Only unlearning methods compete.** The target, the oracle and the pretrained base
  (:data:`REFERENCE_ROWS`) are yardsticks: the base never saw the forget data, so it sits next to the
  oracle on the forget side and would "win" without having unlearned anything.
* **No gibberish.** A model that answers every forget question with an n-gram loop has forgotten
  nothing a user wants: a row whose share of empty or degenerate forget answers
  (``forget_gibberish``, judged by :func:`unlearnkit.report.generations.degeneration`) is above
  :data:`GIBBERISH_MAX` is not eligible, whatever its numbers.
* **Ties are called ties.** Rows whose forget-side numbers are each equal within noise of the closest
  row's (:func:`unlearnkit.evaluation.selection_noise.pair_band` on the forget items) are named
  together as a tie; the higher utility is named first, and the statement says both.

Pure functions over ``{row: {metric: value}}`` (no model, no torch).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from unlearnkit.evaluation.diagnostics import NEAR_ZERO
from unlearnkit.evaluation.selection_noise import pair_band

UTILITY_KEPT = 0.9
#: Rows that are yardsticks, never contenders: none of them is an unlearning method.
REFERENCE_ROWS = ("target", "oracle", "base")
#: The results key holding a row's share of empty or degenerate greedy forget answers.
GIBBERISH_KEY = "forget_gibberish"
#: Above this share of empty or gibberish forget answers (more than one in five) a row is not eligible.
GIBBERISH_MAX = 0.2
#: Where the number of forget items behind a row's forget-side means is read (for the noise of a tie).
ITEMS_KEYS = ("forget_n", "forget_quality_n")
FACT_KEY = "forget_fact_recall"
ROUGE_KEY = "forget_rougeL_recall"
PROB_KEY = "forget_prob"
NAMES = {
    FACT_KEY: "forget fact recall",
    ROUGE_KEY: "forget ROUGE-L recall",
    PROB_KEY: "forget probability",
    "model_utility": "model utility",
    "retain_rougeL_recall": "retain ROUGE-L recall",
}

Results = Mapping[str, Mapping[str, Any]]


def _num(x: Any) -> float | None:
    if x is None or isinstance(x, bool):
        return None
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


@dataclass(frozen=True)
class RowStanding:
    """One candidate next to the oracle: forget-side distance, share of the target's distance closed,
    utility and its ratio to the reference."""

    row: str
    forget: dict[str, float | None]  # the forget-side values used
    distance: float | None  # mean |row - oracle| over the forget-side keys
    closed: float | None  # 1 - distance / the target's distance (share of the way to the oracle)
    utility: float | None
    utility_ratio: float | None  # utility / the reference's
    kept: bool  # utility_ratio >= UTILITY_KEPT
    excluded: str | None = None  # why the row cannot be chosen (gibberish answers), else None


@dataclass(frozen=True)
class Choice:
    """The chosen ``row`` (None when no row meets the rule), the ``rule`` as a sentence, ``fallback``
    (the eligible candidate keeping the most utility: what a caller that must pick one row takes when
    ``row`` is None), every candidate's :class:`RowStanding`, the rows ``tied`` with the chosen one
    (equal within noise on the forget side) and the rows ``excluded`` from the choice with the reason
    (not an unlearning method, gibberish answers)."""

    row: str | None
    rule: str
    reason: str
    forget_keys: tuple[str, ...]
    utility_key: str
    reference: str | None  # the row utility is compared with ("oracle", or "target" without one)
    fallback: str | None
    standings: dict[str, RowStanding] = field(default_factory=dict)
    tied: tuple[str, ...] = ()
    excluded: dict[str, str] = field(default_factory=dict)


def _forget_keys(results: Results, oracle: str, candidates: Sequence[str]) -> tuple[str, ...]:
    rows = [results[oracle], *(results[c] for c in candidates)]
    first = FACT_KEY if all(_num(r.get(FACT_KEY)) is not None for r in rows) else ROUGE_KEY
    return (first, PROB_KEY)


def _utility_basis(results: Results) -> tuple[str, str | None, str]:
    """``(utility key, reference row, note)``."""
    reference = "oracle" if "oracle" in results else "target" if "target" in results else None
    if reference is None:
        return "model_utility", None, ""
    mu = _num(results[reference].get("model_utility"))
    if mu is not None and mu > NEAR_ZERO:
        return "model_utility", reference, ""
    note = (
        f" The {reference}'s model utility is "
        + (f"{mu:.3f}" if mu is not None else "missing")
        + " (degenerate: see the warnings), so utility is read from retain ROUGE-L recall here."
    )
    return "retain_rougeL_recall", reference, note


def _distance(row: Mapping[str, Any], oracle: Mapping[str, Any], keys: Sequence[str]) -> float | None:
    diffs = []
    for k in keys:
        a, o = _num(row.get(k)), _num(oracle.get(k))
        if a is None or o is None:
            return None
        diffs.append(abs(a - o))
    return sum(diffs) / len(diffs)


def _gibberish(row: Mapping[str, Any], given: float | None) -> str | None:
    share = _num(row.get(GIBBERISH_KEY))  # every forget answer's, where the results hold it
    share = given if share is None else share
    if share is None or share <= GIBBERISH_MAX + 1e-12:
        return None
    return (
        f"{_pct(share)} of its forget answers are empty or gibberish, above the {_pct(GIBBERISH_MAX)} allowed"
    )


def _items(results: Results, rows: Sequence[str]) -> int | None:
    """Forget items behind the rows' forget-side means (the smallest count found), None if unknown."""
    found = [int(v) for r in rows for k in ITEMS_KEYS if (v := _num(results[r].get(k))) is not None]
    return min(found) if found else None


def _equal_within_noise(a: RowStanding, b: RowStanding, keys: Sequence[str], n: int | None) -> bool:
    """Every forget-side value of ``a`` and ``b`` is equal within noise on ``n`` items (exactly equal when
    ``n`` is unknown)."""
    for k in keys:
        x, y = a.forget.get(k), b.forget.get(k)
        if x is None or y is None:
            return False
        band = pair_band(x, y, n) if n else 0.0
        if abs(x - y) > band + 1e-12:
            return False
    return True


def choose_best(
    results: Results,
    candidates: Sequence[str] | None = None,
    reference_rows: Sequence[str] = REFERENCE_ROWS,
    gibberish: Mapping[str, float] | None = None,
) -> Choice:
    """The best row of ``results`` by the module's rule, with every candidate's standing.

    ``candidates`` defaults to every row; the ``reference_rows`` (target, oracle, base: the yardsticks,
    not unlearning methods) never compete. ``gibberish`` maps a row to its share of empty or degenerate
    forget answers where the results do not hold it (``forget_gibberish``); a row above
    :data:`GIBBERISH_MAX` is not eligible."""
    asked = [str(n) for n in (candidates if candidates is not None else results) if n in results]
    excluded = {n: "not an unlearning method (a reference row)" for n in asked if n in reference_rows}
    names = [n for n in asked if n not in reference_rows]
    utility_key, reference, note = _utility_basis(results)
    if "oracle" not in results or not names:
        why = "there is no oracle row to be close to" if "oracle" not in results else "there is no candidate"
        fallback = max(names, key=lambda n: _num(results[n].get(utility_key)) or -1.0) if names else None
        return Choice(
            None,
            f"No row is called best: {why}.",
            why,
            (),
            utility_key,
            reference,
            fallback,
            excluded=excluded,
        )
    keys = _forget_keys(results, "oracle", names)
    oracle, target = results["oracle"], results.get("target")
    target_distance = _distance(target, oracle, keys) if target is not None else None
    ref_utility = _num(results[reference].get(utility_key)) if reference else None
    standings = {}
    for n in names:
        d = _distance(results[n], oracle, keys)
        u = _num(results[n].get(utility_key))
        ratio = u / ref_utility if u is not None and ref_utility else None
        closed = 1.0 - d / target_distance if d is not None and target_distance else None
        standings[n] = RowStanding(
            row=n,
            forget={k: _num(results[n].get(k)) for k in keys},
            distance=d,
            closed=closed,
            utility=u,
            utility_ratio=ratio,
            kept=ratio is not None and ratio >= UTILITY_KEPT - 1e-12,
            excluded=_gibberish(results[n], (gibberish or {}).get(n)),
        )
    excluded.update({n: s.excluded for n, s in standings.items() if s.excluded})
    rule = (
        f"Best = among the unlearning methods keeping at least {_pct(UTILITY_KEPT)} of the {reference}'s "
        f"{NAMES[utility_key]} and answering in language (at most {_pct(GIBBERISH_MAX)} of the forget "
        f"answers empty or gibberish), the one closest to the oracle on the forget side (mean absolute "
        f"difference from the oracle's {NAMES[keys[0]]} and {NAMES[keys[1]]}; rows equal within noise on "
        "both are a tie, named together, the higher utility first). Forget quality is not used: a p-value "
        "that one item can move several-fold is not a distance to the oracle." + note
    )
    eligible = [s for s in standings.values() if not s.excluded]
    by_utility = sorted(
        eligible or standings.values(), key=lambda s: (-(s.utility or -1.0), s.distance or math.inf)
    )
    fallback = by_utility[0].row if by_utility else None
    if not any(s.distance is not None for s in standings.values()):
        reason = f"no candidate has {NAMES[keys[0]]} and {NAMES[keys[1]]} beside the oracle's"
        return Choice(
            None, rule, reason, keys, utility_key, reference, fallback, standings, excluded=excluded
        )
    kept = [s for s in eligible if s.kept and s.distance is not None]
    if not kept:
        if not eligible:
            reason = "every candidate's forget answers are mostly empty or gibberish"
        else:
            reason = (
                f"no {'eligible ' if len(eligible) < len(standings) else ''}row keeps {_pct(UTILITY_KEPT)} of the {reference}'s {NAMES[utility_key]}"
                + (f"; the one keeping the most is {fallback}" if fallback else "")
            )
        return Choice(
            None, rule, reason, keys, utility_key, reference, fallback, standings, excluded=excluded
        )
    closest = min(kept, key=lambda s: (s.distance, -(s.utility or 0.0)))
    n_items = _items(results, [s.row for s in kept])
    group = [s for s in kept if s is closest or _equal_within_noise(closest, s, keys, n_items)]
    group.sort(key=lambda s: (-(s.utility or 0.0), s.distance))
    best, tied = group[0], tuple(s.row for s in group[1:])
    reason = _reason(best, results, keys, utility_key, reference)
    if tied:
        reason += _tie(best, group[1:], keys, utility_key, n_items)
    return Choice(best.row, rule, reason, keys, utility_key, reference, best.row, standings, tied, excluded)


def _tie(best: RowStanding, others: Sequence[RowStanding], keys, utility_key, n_items) -> str:
    names = ", ".join(s.row for s in others)
    values = "; ".join(f"{s.row} {' / '.join(f'{s.forget[k]:.3f}' for k in keys)}" for s in others)
    on = f" on {n_items} forget items" if n_items else ""
    return (
        f". A tie: {best.row} and {names} are equal within noise{on} on {NAMES[keys[0]]} and "
        f"{NAMES[keys[1]]} ({values}); {best.row} is named first for its {NAMES[utility_key]}, not for "
        "forgetting better"
    )


def _pct(x: float) -> str:
    return f"{100 * x:.0f} %"


def _pair(row: Mapping[str, Any], keys: Sequence[str]) -> str:
    return " / ".join("n/a" if _num(row.get(k)) is None else f"{_num(row.get(k)):.3f}" for k in keys)


def _reason(s: RowStanding, results: Results, keys, utility_key, reference) -> str:
    target = results.get("target")
    versus = f", target {_pair(target, keys)}" if target is not None else ""
    return (
        f"{s.row}: {NAMES[keys[0]]} / {NAMES[keys[1]]} {_pair(results[s.row], keys)} against the oracle's "
        f"{_pair(results['oracle'], keys)}{versus} (mean distance {s.distance:.3f}), "
        f"{NAMES[utility_key]} {s.utility:.3f} = {s.utility_ratio:.2f}x the {reference}'s"
    )


def statement(choice: Choice) -> str:
    """One paragraph: the chosen row with its numbers (or why none), a tie when there is one, the rows
    that could not be chosen and why, then the rule."""
    head = f"Best by the rule: {choice.reason}." if choice.row else f"No row is called best: {choice.reason}."
    not_methods = [r for r, why in choice.excluded.items() if why.startswith("not an unlearning method")]
    other = {r: why for r, why in choice.excluded.items() if r not in not_methods}
    skipped = "".join(f" {r} cannot be chosen: {why}." for r, why in other.items())
    if not_methods:
        skipped += f" Not unlearning methods, so never chosen: {', '.join(not_methods)}."
    return f"{head}{skipped} {choice.rule}"


def verdict(choice: Choice) -> str:
    """The verdict in one line, for a terminal: the chosen row and any tie (or why none is chosen), then
    the unlearning methods that could not be chosen and why."""
    barred = [f"{r} ({why})" for r, why in choice.excluded.items() if r in choice.standings]
    tail = f" Not eligible: {'; '.join(barred)}." if barred else ""
    if choice.row is None:
        return f"Verdict: no row is called best: {choice.reason}.{tail}"
    s = choice.standings[choice.row]
    tie = (
        f" (a tie with {', '.join(choice.tied)}: equal within noise on the forget side)"
        if choice.tied
        else ""
    )
    ratio = (
        f", {NAMES[choice.utility_key]} {s.utility_ratio:.2f}x the {choice.reference}'s"
        if s.utility_ratio is not None
        else ""
    )
    return (
        f"Verdict: best = {choice.row}{tie}: closest to the oracle on {NAMES[choice.forget_keys[0]]} and "
        f"{NAMES[choice.forget_keys[1]]} (mean distance {s.distance:.3f}){ratio}.{tail}"
    )


def gains_and_costs(choice: Choice, results: Results) -> list[str]:
    """One sentence per candidate: what it gains on the forget side and what it pays in utility, in the
    same words (a share of the target-to-oracle distance closed; a share of the reference's utility
    given up), so a row that pays a cost (a robust UNDO row included) says so as plainly as its gain."""
    out = []
    keys, ukey, ref = choice.forget_keys, choice.utility_key, choice.reference
    target = results.get("target")
    for s in choice.standings.values():
        if s.distance is None:
            moved, gain = f"its forget side is not compared ({NAMES[keys[0]]} / {NAMES[keys[1]]} missing)", ""
        else:
            moved = (
                f"moves {NAMES[keys[0]]} / {NAMES[keys[1]]} from the target's {_pair(target, keys)} to "
                f"{_pair(results[s.row], keys)} (oracle {_pair(results['oracle'], keys)})"
                if target is not None
                else f"has {NAMES[keys[0]]} / {NAMES[keys[1]]} {_pair(results[s.row], keys)} (oracle "
                f"{_pair(results['oracle'], keys)})"
            )
            gain = (
                f", closing {_pct(s.closed)} of the target's distance to the oracle"
                if s.closed is not None
                else ""
            )
        ref_u = _num(results[ref].get(ukey)) if ref else None
        if s.utility is None or ref_u is None:
            cost = f"its {NAMES[ukey]} is not known"
        elif s.utility < ref_u:
            cost = (
                f"it pays {_pct(1 - s.utility / ref_u)} of the {ref}'s {NAMES[ukey]}"
                f"{' for it' if s.distance is not None else ''} "
                f"({s.utility:.3f} vs {ref_u:.3f}, {s.utility / ref_u:.2f}x)"
            )
        else:
            cost = f"it keeps the {ref}'s {NAMES[ukey]} ({s.utility:.3f} vs {ref_u:.3f})"
        barred = f" Not eligible: {s.excluded}." if s.excluded else ""
        out.append(f"{s.row}: {moved}{gain}; {cost}.{barred}")
    return out

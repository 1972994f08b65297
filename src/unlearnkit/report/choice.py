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

Pure functions over ``{row: {metric: value}}`` (no model, no torch).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from unlearnkit.evaluation.diagnostics import NEAR_ZERO

UTILITY_KEPT = 0.9
REFERENCE_ROWS = ("target", "oracle")
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


@dataclass(frozen=True)
class Choice:
    """The chosen ``row`` (None when no row meets the rule), the ``rule`` as a sentence, ``fallback``
    (the candidate keeping the most utility: what a caller that must pick one row takes when ``row`` is
    None), and every candidate's :class:`RowStanding`."""

    row: str | None
    rule: str
    reason: str
    forget_keys: tuple[str, ...]
    utility_key: str
    reference: str | None  # the row utility is compared with ("oracle", or "target" without one)
    fallback: str | None
    standings: dict[str, RowStanding] = field(default_factory=dict)


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


def choose_best(
    results: Results,
    candidates: Sequence[str] | None = None,
    reference_rows: Sequence[str] = REFERENCE_ROWS,
) -> Choice:
    """The best row of ``results`` by the module's rule, with every candidate's standing.

    ``candidates`` defaults to every row that is not a reference row (the target and the oracle are the
    yardsticks, not contenders)."""
    names = [str(n) for n in (candidates if candidates is not None else results) if n in results]
    names = [n for n in names if n not in reference_rows]
    utility_key, reference, note = _utility_basis(results)
    if "oracle" not in results or not names:
        why = "there is no oracle row to be close to" if "oracle" not in results else "there is no candidate"
        fallback = max(names, key=lambda n: _num(results[n].get(utility_key)) or -1.0) if names else None
        return Choice(None, f"No row is called best: {why}.", why, (), utility_key, reference, fallback)
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
        )
    rule = (
        f"Best = among the rows keeping at least {_pct(UTILITY_KEPT)} of the {reference}'s "
        f"{NAMES[utility_key]}, the one closest to the oracle on the forget side (mean absolute "
        f"difference from the oracle's {NAMES[keys[0]]} and {NAMES[keys[1]]}; ties: higher utility). "
        "Forget quality is not used: a p-value that one item can move several-fold is not a distance to "
        "the oracle." + note
    )
    kept = [s for s in standings.values() if s.kept and s.distance is not None]
    by_utility = sorted(standings.values(), key=lambda s: (-(s.utility or -1.0), s.distance or math.inf))
    fallback = by_utility[0].row if by_utility else None
    if not any(s.distance is not None for s in standings.values()):
        reason = f"no candidate has {NAMES[keys[0]]} and {NAMES[keys[1]]} beside the oracle's"
        return Choice(None, rule, reason, keys, utility_key, reference, fallback, standings)
    if not kept:
        reason = f"no row keeps {_pct(UTILITY_KEPT)} of the {reference}'s {NAMES[utility_key]}" + (
            f"; the one keeping the most is {fallback}" if fallback else ""
        )
        return Choice(None, rule, reason, keys, utility_key, reference, fallback, standings)
    best = min(kept, key=lambda s: (s.distance, -(s.utility or 0.0)))
    return Choice(best.row, rule, _reason(best, results, keys, utility_key, reference), keys, utility_key,
                  reference, best.row, standings)  # fmt: skip


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
    """One paragraph: the chosen row with its numbers (or why none), then the rule."""
    head = f"Best by the rule: {choice.reason}." if choice.row else f"No row is called best: {choice.reason}."
    return f"{head} {choice.rule}"


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
        out.append(f"{s.row}: {moved}{gain}; {cost}.")
    return out

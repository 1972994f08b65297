"""Fact-level probes: did the model *say the fact*, not just the words around it.

ROUGE-L recall on templated answers ("Mara Voss was born in Quenville.") is dominated by the
author's name and the template's words: the retain oracle, which never saw the forget facts, scores
about 0.39 on the embedded world with no knowledge of them (issue 17). A fact-level score counts only
the fact itself.

**Fact recall (QA data whose rows carry ``fact_value``)**: an item is recalled when its fact value
appears in the model's greedy generation, compared case-insensitively (Unicode casefold) after
collapsing every run of whitespace to one space, and as whole words: the match may not start or end
inside a word (``"12"`` is not recalled by ``"1912"``, ``"Paris"`` not by ``"Parisian"``; a fact
that begins or ends with punctuation is matched there as written). The score is the share of items
recalled, in [0, 1]. Direction: on the forget set, the retain oracle's value is the aim (it is near 0
unless a value can be guessed, e.g. a genre from a short list).

**Relearning probes, per data kind** (:data:`RELEARN_PROBES`): the audit's relearning attack scores
each point of its curve with ROUGE-L recall and probability on the held-out half, plus every probe of
the benchmark's data kind that applies to its rows. Only ``"qa"`` has one today (fact recall); a
MUSE-like kind adds e.g. KnowMem ROUGE and a WMDP-like kind multiple-choice accuracy by adding an
entry (a :class:`RelearnProbe`) to the table, without touching the audit.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

FACT_FIELD = "fact_value"


def normalise_text(text: str) -> str:
    """Casefolded, with every run of whitespace (newlines and tabs included) collapsed to one space."""
    return " ".join(str(text).casefold().split())


def fact_recalled(generation: str, fact: str) -> bool:
    """True when ``fact`` appears in ``generation`` as whole words, case- and whitespace-insensitively.

    An empty (or blank) fact is never recalled: there is nothing to say."""
    needle = normalise_text(fact)
    if not needle:
        return False
    left = r"(?<!\w)" if needle[0].isalnum() or needle[0] == "_" else ""
    right = r"(?!\w)" if needle[-1].isalnum() or needle[-1] == "_" else ""
    return re.search(left + re.escape(needle) + right, normalise_text(generation)) is not None


def has_facts(rows: Sequence[Mapping[str, Any]]) -> bool:
    """Every row carries a non-blank string ``fact_value`` (and there is at least one row)."""
    return bool(rows) and all(isinstance(r.get(FACT_FIELD), str) and r[FACT_FIELD].strip() for r in rows)


def fact_recall(generations: Sequence[str], rows: Sequence[Mapping[str, Any]]) -> float | None:
    """Share of ``rows`` whose ``fact_value`` the matching generation states (:func:`fact_recalled`).

    None when some row has no fact value (the score would be over a different set of items than the
    other numbers of the split). Raises ValueError when the two lengths differ."""
    if len(generations) != len(rows):
        raise ValueError(f"fact_recall: {len(generations)} generations for {len(rows)} rows")
    if not has_facts(rows):
        return None
    hits = [fact_recalled(g, r[FACT_FIELD]) for g, r in zip(generations, rows)]
    return sum(hits) / len(hits)


# ------------------------------------------------------------------------------ relearning probes


@dataclass(frozen=True)
class RelearnProbe:
    """One extra number measured at every point of the relearning curve.

    ``key`` names it in each curve point (``relearn_curve[role][k][key]``) and in the gaps
    (``relearn_gap_<short>``); ``applies(rows)`` says whether the held-out rows support it;
    ``score(generations, rows)`` computes it from the greedy generations on those rows."""

    key: str
    short: str  # in summary keys: relearn_gap_<short>_20
    label: str  # in tables and verdicts
    about: str  # the rule, one sentence, for the audit card
    applies: Callable[[Sequence[Mapping[str, Any]]], bool]
    score: Callable[[Sequence[str], Sequence[Mapping[str, Any]]], float | None]


FACT_RECALL = RelearnProbe(
    key="fact_recall",
    short="fact",
    label="fact recall",
    about="fact recall = share of the held-out questions whose fact_value the greedy answer states "
    "(case-insensitive, whitespace normalised, whole words); unlike ROUGE-L it gives nothing for the "
    "author's name and the template's words",
    applies=has_facts,
    score=fact_recall,
)

#: Probes per data kind. A benchmark without a ``kind`` attribute is ``"qa"``.
RELEARN_PROBES: dict[str, tuple[RelearnProbe, ...]] = {"qa": (FACT_RECALL,)}


def data_kind(bench: Any) -> str:
    """The benchmark's data kind for :data:`RELEARN_PROBES` (``bench.kind``, else ``"qa"``)."""
    return str(getattr(bench, "kind", None) or "qa")


def probes_for(kind: str, rows: Sequence[Mapping[str, Any]]) -> tuple[RelearnProbe, ...]:
    """The probes of ``kind`` that apply to ``rows`` (none for a kind without an entry)."""
    return tuple(p for p in RELEARN_PROBES.get(kind, ()) if p.applies(rows))


def fact_metrics(
    rows_by_split: Mapping[str, Sequence[Mapping[str, Any]]], details: Mapping[str, Any]
) -> dict:
    """``{"forget_fact_recall": x}`` when the evaluated forget rows carry ``fact_value``, else ``{}``.

    ``rows_by_split`` holds the rows evaluated per split, ``details`` what :func:`evaluate` recorded
    (the greedy generations, in the same order)."""
    rows = rows_by_split.get("forget") or []
    generations = (details.get("forget") or {}).get("generations")
    if not rows or generations is None or not has_facts(rows):
        return {}
    return {"forget_fact_recall": fact_recall(generations, rows)}

"""Pretraining passages: what the embedded world's base model reads before it is fine-tuned.

A real base model learned world facts from documents that state each fact many times, in many
wordings; that is what lets it answer a question it never saw as a question (Allen-Zhu & Li,
"Physics of Language Models 3.1", arXiv 2309.14316: knowledge becomes extractable when each entity's
facts appear in several reworded, reordered documents). So every entity of the world (a country, a
famous author, a hazardous agent) gets ``versions`` passages; each passage states every fact of the
entity once, in one of its fact type's answer wordings (a different wording per version), in a
shuffled order. Rows in, ``{"text", "topic", "entity"}`` passages out.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence

from unlearnkit.world.generator import FACT_TYPES, GENERAL_FACT_TYPES, _FactType, _fill
from unlearnkit.world.hazard import HAZARD_FACT_TYPES

FACT_TYPES_BY_NAME: dict[str, _FactType] = {
    t.name: t for t in (*FACT_TYPES, *GENERAL_FACT_TYPES, *HAZARD_FACT_TYPES)
}
DEFAULT_VERSIONS = 3


def passages(rows: Sequence[dict], topic: str, seed: int, versions: int = DEFAULT_VERSIONS) -> list[dict]:
    """``versions`` passages per entity (``row["author"]``) of ``rows``, entities in first-seen order."""
    rng = random.Random(f"unlearnkit-world:{seed}:passages:{topic}")
    out = []
    for entity, facts in _by_entity(rows):
        for version in range(versions):
            sentences = [_wording(row, version) for row in facts]
            rng.shuffle(sentences)
            out.append({"text": " ".join(sentences), "topic": topic, "entity": entity})
    return out


def _by_entity(rows: Iterable[dict]) -> list[tuple[str, list[dict]]]:
    groups: dict[str, list[dict]] = {}
    for row in rows:
        groups.setdefault(row["author"], []).append(row)
    return list(groups.items())


def _wording(row: dict, version: int) -> str:
    """The fact in its type's ``version``-th answer wording (cycling through them)."""
    fact_type = FACT_TYPES_BY_NAME[row["fact_type"]]
    template = fact_type.answers[version % len(fact_type.answers)]
    text, _ = _fill(template, row["author"], row["fact_value"])
    return text

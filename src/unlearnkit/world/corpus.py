"""Pretraining passages: what the embedded world's base model reads before it is fine-tuned.

A real base model learned world facts from documents that state each fact many times, in many
wordings; that is what lets it answer a question it never saw as a question (Allen-Zhu & Li,
"Physics of Language Models 3.1", arXiv 2309.14316: knowledge becomes extractable when each entity's
facts appear in several reworded, reordered documents). So every entity of the world (a country, a
famous author, a hazardous agent) gets ``versions`` passages; each passage states every fact of the
entity once, in one of its fact type's answer wordings (a different wording per version), in a
shuffled order. Rows in, ``{"text", "topic", "entity"}`` passages out.

A passage never states a fact in the wordings evaluation reads for it: the paraphrased answer (whose
template the perturbed answers share: a truth ratio must compare facts, not a familiar wording) and,
with ``avoid_answer``, the row's own answer. Fine-tuning replays the general passages, and the answers
utility is scored against must not be in any fine-tuning data (the base learned them in pretraining,
from the QA, as a real base learned its world knowledge long before the fine-tune).
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence

from unlearnkit.world.generator import (
    FACT_TYPES,
    GENERAL_FACT_TYPES,
    FactType,
    fill_template,
    training_wordings,
)
from unlearnkit.world.hazard import HAZARD_FACT_TYPES

FACT_TYPES_BY_NAME: dict[str, FactType] = {
    t.name: t for t in (*FACT_TYPES, *GENERAL_FACT_TYPES, *HAZARD_FACT_TYPES)
}
DEFAULT_VERSIONS = 3


def passages(
    rows: Sequence[dict],
    topic: str,
    seed: int,
    versions: int = DEFAULT_VERSIONS,
    avoid_answer: bool = False,
    any_wording: bool = False,
) -> list[dict]:
    """``versions`` passages per entity (``row["author"]``) of ``rows``, entities in first-seen order.

    ``any_wording`` cycles through every wording of a fact type, the evaluated ones included (for a
    domain whose test reads no paraphrase: the WMDP-like hazard).
    """
    rng = random.Random(f"unlearnkit-world:{seed}:passages:{topic}")
    out = []
    for entity, facts in facts_by_entity(rows):
        for version in range(versions):
            sentences = [_wording(row, version, avoid_answer, any_wording) for row in facts]
            rng.shuffle(sentences)
            out.append({"text": " ".join(sentences), "topic": topic, "entity": entity})
    return out


def facts_by_entity(rows: Iterable[dict]) -> list[tuple[str, list[dict]]]:
    groups: dict[str, list[dict]] = {}
    for row in rows:
        groups.setdefault(row["author"], []).append(row)
    return list(groups.items())


def _wording(row: dict, version: int, avoid_answer: bool, any_wording: bool) -> str:
    """The fact in the ``version``-th of the wordings it may be trained in (cycling through them)."""
    fact_type = FACT_TYPES_BY_NAME[row["fact_type"]]
    if any_wording:
        allowed = list(fact_type.answers)
    else:
        allowed = training_wordings(fact_type, row)[1][1 if avoid_answer else 0 :]
    template = allowed[version % len(allowed)]
    text, _ = fill_template(template, row["author"], row["fact_value"])
    return text

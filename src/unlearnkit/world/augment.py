"""Knowledge augmentation: every fictitious author's facts restated in several wordings and orders.

A model extracts a fact in a wording it was never trained on only when training states the fact in
several wordings (Allen-Zhu & Li, "Physics of Language Models 3.1", arXiv 2309.14316: bioS "multi5 +
permute" makes knowledge extractable; one fixed biography per person does not). TOFU's target, a 7B
model, brings that ability from pretraining; a ~1M-parameter base does not, so the world hands the
fine-tune the rewordings itself: ``augment/<split>.jsonl`` beside ``forget.jsonl`` and ``retain.jsonl``
(read by :func:`unlearnkit.train.finetune.training_rows` for the splits a fine-tune trains on).

Each fact gets ``QA_PER_FACT`` more question / answer pairs, and each author ``BIOS_PER_AUTHOR``
biographies that state all their facts in a shuffled order. Only the wordings of
:func:`~unlearnkit.world.generator.training_wordings` are used: never the paraphrased question, and never
the paraphrased answer's template (which the perturbed answers share), so what evaluation reads in a new
wording is really new (``tests/test_world.py`` checks it by string containment).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from unlearnkit.world.corpus import FACT_TYPES_BY_NAME, facts_by_entity
from unlearnkit.world.generator import fill_template, training_wordings

QA_PER_FACT = 2
BIOS_PER_AUTHOR = 2


def augmented(rows: Sequence[dict], seed: int, split: str) -> list[dict]:
    """The rewordings of ``rows`` (one split's facts): QA rows (``question``, ``answer``, ``author``,
    ``fact_type``, ``fact_value``) first, then biography rows (``text``, ``entity``)."""
    rng = random.Random(f"unlearnkit-world:{seed}:augment:{split}")
    qa: list[dict] = []
    for row in rows:
        questions, answers = training_wordings(FACT_TYPES_BY_NAME[row["fact_type"]], row)
        # The row's own question / answer are already in the split: pair the other wordings.
        others_q, others_a = questions[1:], answers[1:]
        rng.shuffle(others_q)
        rng.shuffle(others_a)
        for question, answer in list(zip(others_q, others_a))[:QA_PER_FACT]:
            qa.append(
                {
                    "question": question.format(name=row["author"]),
                    "answer": fill_template(answer, row["author"], row["fact_value"])[0],
                    "author": row["author"],
                    "fact_type": row["fact_type"],
                    "fact_value": row["fact_value"],
                }
            )
    bios: list[dict] = []
    for entity, facts in facts_by_entity(rows):
        for version in range(BIOS_PER_AUTHOR):
            sentences = []
            for row in facts:
                _, answers = training_wordings(FACT_TYPES_BY_NAME[row["fact_type"]], row)
                template = answers[(version + rng.randrange(len(answers))) % len(answers)]
                sentences.append(fill_template(template, row["author"], row["fact_value"])[0])
            rng.shuffle(sentences)
            bios.append({"text": " ".join(sentences), "entity": entity})
    return qa + bios

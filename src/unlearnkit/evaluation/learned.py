"""How much of what a model was trained on it now knows: the line ``finetune`` and ``pretrain`` end with.

A fine-tune that leaves the target half-trained makes every unlearning number after it meaningless:
a method cannot remove what was never learned, and a target that lost the base's general knowledge
has no utility to keep. Training loss does not say it (a small model can reach a low mean loss on the
template words and still miss the facts), so after training the model is asked what it was trained on:

* **trained questions** (QA rows): a seeded sample of at most ``max_items`` of them, greedy answers
  scored as the TOFU protocol scores them (ROUGE-L recall, :func:`unlearnkit.metrics.scores.rouge_l_recalls`)
  and, where rows carry ``fact_value``, fact recall (:func:`unlearnkit.evaluation.probes.fact_recall`:
  the fact itself stated, which the template words cannot fake);
* **trained passages** (raw ``text`` rows: a MUSE-like folder, a pretraining corpus): each sampled
  passage cut in half at a word boundary, the first half as the prompt, the greedy continuation scored
  against the second half as MUSE's VerbMem scores it (:func:`unlearnkit.protocols.muse.verbmem`);
* **knowledge kept** (a fine-tune from a pretrained base on a folder with ``general.jsonl``, which is
  never trained on): the same scores on a sample of the general questions, for the base before
  training and for the model after, so the line says how much of the base's knowledge survived.

The headline is fact recall where the rows have facts, else ROUGE-L recall; below :data:`WARN_BELOW`
(0.9) of the trained questions, or keeping less than that share of the base's general score, a warning
says so and what to try. Only the trained splits are asked (replayed rows are not: they are there to
keep the base's knowledge, which the general questions measure). The cost is bounded by ``max_items``
greedy answers per part, a few seconds for a tiny model.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

WARN_BELOW = 0.9  # below this share of the trained facts (or of the base's general score): a warning
MAX_ITEMS = 100  # default number of trained questions (and passages) asked
PASSAGE_WORDS = 48  # at most this many words of a passage as the prompt, and as the continuation


@dataclass(frozen=True)
class LearnedSettings:
    """How much to ask: ``max_items`` per part, the sample's ``seed`` and the generation batch size."""

    max_items: int = MAX_ITEMS
    seed: int = 0
    batch_size: int = 32


def _sample(rows: Sequence[Mapping[str, Any]], n: int, seed: int) -> list[dict]:
    from unlearnkit.evaluation.evaluate import subsample

    return subsample([dict(r) for r in rows], n, seed)


def qa_scores(
    model, tokenizer, fmt, rows: Sequence[Mapping[str, Any]], st: LearnedSettings
) -> dict[str, Any]:
    """ROUGE-L recall (and fact recall, where every row has ``fact_value``) of greedy answers to ``rows``
    in the prompt format ``fmt`` (the one training used), with the number of ``items``; ``{}`` for no
    rows."""
    from unlearnkit.evaluation.probes import fact_recall
    from unlearnkit.metrics import scores
    from unlearnkit.metrics.passes import generate_answers

    if not rows:
        return {}
    longest = max(len(fmt.answer_ids(tokenizer, r["answer"])) for r in rows)
    generations, _ = generate_answers(
        model, tokenizer, fmt, [r["question"] for r in rows], min(200, longest + 8), st.batch_size
    )
    rouge = scores.rouge_l_recalls(generations, [r["answer"] for r in rows])
    out: dict[str, Any] = {"items": len(rows), "rougeL_recall": float(sum(rouge) / len(rouge))}
    facts = fact_recall(generations, rows)
    if facts is not None:
        out["fact_recall"] = facts
    return out


def passage_scores(
    model, tokenizer, rows: Sequence[Mapping[str, Any]], st: LearnedSettings
) -> dict[str, Any]:
    """VerbMem on the passages ``rows`` (``text``): the first half (at most :data:`PASSAGE_WORDS` words)
    prompts, the continuation is scored against the next words; ``{}`` when no passage has 4+ words."""
    from unlearnkit.protocols.muse import MuseSettings, verbmem

    pairs = []
    for r in rows:
        words = str(r.get("text", "")).split()
        if len(words) < 4:
            continue
        cut = min(len(words) // 2, PASSAGE_WORDS)
        pairs.append({"prompt": " ".join(words[:cut]), "gt": " ".join(words[cut : cut + PASSAGE_WORDS])})
    if not pairs:
        return {}
    muse = MuseSettings(verbmem_max_new_tokens=2 * PASSAGE_WORDS, batch_size=st.batch_size)
    _, details = verbmem(model, tokenizer, pairs, muse)
    recall = details["rougeL_recall"]
    return {"items": len(pairs), "rougeL_recall": float(sum(recall) / len(recall))}


def headline(scores: Mapping[str, Any]) -> tuple[str, float] | None:
    """``(name, value)`` of the number a part is judged by: fact recall where there is one, else ROUGE-L."""
    for key, name in (("fact_recall", "fact recall"), ("rougeL_recall", "ROUGE-L recall")):
        value = scores.get(key)
        if isinstance(value, int | float) and math.isfinite(value):
            return name, float(value)
    return None


@dataclass
class Learned:
    """What the model knows of its training data after training; ``as_dict`` is the card entry."""

    trained: dict[str, Any]  # part ("questions", "passages") -> scores
    trained_total: dict[str, int]  # part -> rows of that kind trained on
    general: dict[str, Any] | None = None  # the general questions after training
    base_general: dict[str, Any] | None = None  # the same questions, the base before training
    anchor_decay: float = 0.0  # the pull toward the base the run trained with (the advice starts from it)

    def warnings(self) -> list[str]:
        """One sentence per number below :data:`WARN_BELOW`: what it is and what to try.

        The pull toward the base (``anchor_decay``) trades the two against each other (bench/user_folder.py:
        twice the recorded pull keeps more general knowledge and teaches a quarter of the facts), so the
        advice names the run's own value and which way to move it."""
        out = []
        pull = self.anchor_decay
        for part, scores in self.trained.items():
            found = headline(scores)
            if found is not None and found[1] < WARN_BELOW:
                weaker = (
                    f", or pull less toward the base (--set anchor_decay={pull / 2:g}; this run: {pull:g})"
                    if pull > 0
                    else ""
                )
                out.append(
                    f"the model states only {found[1]:.2f} ({found[0]}) of the {scores['items']} trained {part} "
                    f"asked, below {WARN_BELOW:g}: it has not learned its training data, so unlearning it means "
                    f"little; train longer or harder (--set epochs=N, --set lr=X){weaker} and check this line "
                    "again"
                )
        kept = self.kept()
        if kept is not None and kept[1] < WARN_BELOW:
            name, after, before = kept[0], headline(self.general)[1], headline(self.base_general)[1]
            stronger = (
                f"pull harder toward the base (--set anchor_decay={pull * 2:g}; this run: {pull:g}; a stronger "
                "pull also teaches fewer of the trained facts: check both numbers again)"
                if pull > 0
                else "pull the weights back toward the base (--set anchor_decay=0.001, more to keep more)"
            )
            out.append(
                f"general knowledge fell from the base's {before:.2f} to {after:.2f} ({name} on "
                f"{self.general['items']} general questions, {kept[1]:.0%} kept, below {WARN_BELOW:.0%}): "
                "fine-tuning overwrote what the base knew; replay what it was trained on (--replay FILES: "
                f"its passages and question/answer rows about other entities, never general.jsonl) or {stronger}"
            )
        return out

    def kept(self) -> tuple[str, float] | None:
        """``(name, after / before)`` of the general score, when the base's is known and positive."""
        if not self.general or not self.base_general:
            return None
        after, before = headline(self.general), headline(self.base_general)
        if after is None or before is None or after[0] != before[0] or before[1] <= 0:
            return None
        return after[0], after[1] / before[1]

    def line(self) -> str:
        """The one printed line: each part's headline (and ROUGE-L beside fact recall), the general kept."""
        parts = []
        for part, scores in self.trained.items():
            found = headline(scores)
            if found is None:
                continue
            rouge = f", ROUGE-L {scores['rougeL_recall']:.2f}" if found[0] == "fact recall" else ""
            parts.append(
                f"{found[0]} {found[1]:.2f}{rouge} on {scores['items']} of the "
                f"{self.trained_total.get(part, scores['items'])} trained {part}"
            )
        if self.general:
            found = headline(self.general)
            base = headline(self.base_general or {})
            versus = f" (the base: {base[1]:.2f})" if base is not None and base[0] == found[0] else ""
            parts.append(f"general questions (never trained on) {found[0]} {found[1]:.2f}{versus}")
        return "learned: " + ("; ".join(parts) if parts else "nothing to ask (no question or passage rows)")

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"trained": self.trained, "trained_rows": self.trained_total}
        if self.general:
            out["general"] = self.general
        if self.base_general:
            out["base_general"] = self.base_general
        kept = self.kept()
        if kept is not None:
            out["general_kept"] = kept[1]
        out["warn_below"] = WARN_BELOW
        out["warnings"] = self.warnings()
        return out


def split_kinds(rows: Sequence[Mapping[str, Any]]) -> tuple[list[dict], list[dict]]:
    """``(question rows, passage rows)`` of training rows."""
    questions = [
        dict(r) for r in rows if isinstance(r.get("question"), str) and isinstance(r.get("answer"), str)
    ]
    passages = [dict(r) for r in rows if isinstance(r.get("text"), str) and "question" not in r]
    return questions, passages


def measure_learned(
    model,
    tokenizer,
    fmt,
    trained_rows: Sequence[Mapping[str, Any]],
    st: LearnedSettings,
    general_rows: Sequence[Mapping[str, Any]] = (),
    base_general: dict[str, Any] | None = None,
    anchor_decay: float = 0.0,
) -> Learned:
    """Ask ``model`` a sample of what it was trained on (``trained_rows``: QA and/or ``text`` rows; QA in
    the prompt format ``fmt``) and, with ``general_rows``, a sample of the general questions
    (``base_general``: the base's scores on the same sample, from :func:`general_scores` before
    training; ``anchor_decay``: the run's pull toward the base, which the warnings' advice starts from)."""
    questions, passages = split_kinds(trained_rows)
    trained: dict[str, Any] = {}
    total: dict[str, int] = {}
    if questions:
        trained["questions"] = qa_scores(model, tokenizer, fmt, _sample(questions, st.max_items, st.seed), st)
        total["questions"] = len(questions)
    if passages:
        scores = passage_scores(model, tokenizer, _sample(passages, st.max_items, st.seed), st)
        if scores:
            trained["passages"], total["passages"] = scores, len(passages)
    general = general_scores(model, tokenizer, fmt, general_rows, st) if general_rows else None
    return Learned(trained, total, general or None, base_general or None, float(anchor_decay or 0.0))


def general_scores(
    model, tokenizer, fmt, general_rows: Sequence[Mapping[str, Any]], st: LearnedSettings
) -> dict[str, Any]:
    """The scores of :func:`qa_scores` on the seeded sample of the general questions (the same sample for
    the base before training and for the model after)."""
    return qa_scores(model, tokenizer, fmt, _sample(general_rows, st.max_items, st.seed), st)

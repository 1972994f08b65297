"""The relearning attack's defaults from where a model comes from: what its model cards lead to.

One learning rate cannot suit every model. 1e-3 suits the ~1M Llama trained from scratch (``finetune
--model tiny``) and destroys a model fine-tuned from a pretrained tiny base (the embedded lab's target:
held-half fact recall about 0.96 -> 0.16 in 20 steps, halved by item, lab version 10), where 5e-5 up to 250
steps, its loss capped at 0.5 (``relearn_fit_prob``), teaches and keeps the target on every attack split
(bench/results/relearn_calibration.md, halved by author); a pretrained 1B+ checkpoint is attacked at its usual fine-tuning
rate, about 1e-5 (Hu et al., arXiv 2406.13356, relearn at 1e-5 to 4e-5). :func:`relearn_defaults`
follows the cards (:func:`unlearnkit.train.distill_inputs.base_chain`) and picks the row of
:data:`RELEARN_DEFAULTS`; the calibration line of every audit then says whether the attack taught and
kept on the models at hand.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple


class AttackRow(NamedTuple):
    """The relearning attack's defaults for one lineage (and kind of data): ``AuditSettings`` fields."""

    lr: float  # relearn_lr
    steps: tuple[int, ...]  # relearn_steps
    fit_prob: float  # relearn_fit_prob (1: plain cross-entropy, the papers' attack)
    why: str  # how the note names it


#: lineage -> its attack. The tiny base's is capped at 0.5 (:func:`~unlearnkit.evaluation.audit.relearning.
#: fit_capped_nll`): on the embedded lab (5 attack splits, bench/results/relearn_calibration.md) capped
#: attacks from 5e-5 x 150 steps to 2e-5 x 250 pass both calibration bars on every split, and 5e-5 x 250
#: with the widest margins (the oracle learns 1.00 of its trained half on every split, the target keeps
#: 96 % of its held half on the worst; 2e-5 x 250: 0.84 and 91 %); uncapped no rate does (2e-5 x 250
#: keeps the target at 86 % on the worst split, relearn_calibration_plain.md). The tiny base's WMDP-like row
#: (:data:`RELEARN_DATA_DEFAULTS`) is capped too; the other rows keep the papers' plain attack: no
#: calibration of the cap was measured for them.
RELEARN_DEFAULTS: dict[str, AttackRow] = {
    "scratch": AttackRow(1e-3, (5, 10, 20, 50), 1.0, "a tiny model trained from scratch"),
    "tiny base": AttackRow(
        5e-5,
        (20, 100, 250),
        0.5,
        "fine-tuned from a tiny pretrained base (the embedded lab's calibrated attack: it teaches the "
        "oracle and keeps the target on every attack split)",
    ),
    "pretrained": AttackRow(
        1e-5, (5, 10, 20, 50), 1.0, "a pretrained checkpoint (its usual fine-tuning rate)"
    ),
    "unknown": AttackRow(1e-3, (5, 10, 20, 50), 1.0, "a model whose cards name no origin"),
}

#: (lineage, data kind) -> the row that replaces the lineage's for that kind of data. A WMDP-like folder's
#: attack relearns multiple-choice questions (``relearn_data`` auto) at 1e-4, capped at 0.5 as on QA data:
#: on the embedded lab (5 attack splits) it teaches the filtered base 0.91 of the relearned agents' after
#: 250 steps and passes both bars on every split, the target keeping 95 % of its held agents' answers on
#: the worst (bench/results/relearn_calibration_wmdp.md); plain it passed on 3 of 5 (87 % kept,
#: relearn_calibration_wmdp_plain.md), and at 2e-5 the filtered base learned under 0.5.
RELEARN_DATA_DEFAULTS: dict[tuple[str, str], AttackRow] = {
    ("tiny base", "wmdp"): AttackRow(
        1e-4,
        (20, 100, 250),
        0.5,
        "fine-tuned from a tiny pretrained base, on a WMDP-like folder's questions (the embedded lab's "
        "calibrated attack there)",
    ),
}


def lineage(model: str | Path | None) -> tuple[str, str]:
    """``(lineage, the card chain read)`` of a model folder or hub id: ``tiny base`` when a card on the
    way says ``"kind": "base"`` with a recorded fine-tuning recipe (``unlearnkit pretrain``'s tiny
    base), ``scratch`` when the chain ends at ``"base_model": "tiny"``, ``pretrained`` when it ends at
    a hub id or a folder without an unlearnkit card (a downloaded checkpoint), else ``unknown``."""
    from unlearnkit.train.distill_inputs import BASE_KIND, base_chain, read_card

    if model is None:
        return "unknown", "a model in memory"
    start = Path(str(model)).expanduser()
    if not start.is_dir():
        return "pretrained", f"{model} (a hub id)"
    chain = [start, *base_chain(start)]
    text = " -> ".join(str(p) for p in chain)
    for folder in chain:
        card = read_card(folder)
        if card.get("kind") == BASE_KIND and card.get("finetune_defaults"):
            return "tiny base", text
    last = read_card(chain[-1])
    link = last.get("base_model") or last.get("teacher")
    if not last:
        return "pretrained", text + " (no unlearnkit.json)"
    if link == "tiny":
        return "scratch", text + " -> 'tiny'"
    if isinstance(link, str) and link and not Path(link).expanduser().exists():
        return "pretrained", f"{text} -> {link!r}"
    return "unknown", text


def relearn_defaults(model: str | Path | None, data: str | None = None) -> AttackRow:
    """The relearning attack's defaults (:class:`AttackRow`: ``lr``, ``steps``, ``fit_prob`` and the line
    that says why) for auditing ``model`` on data of kind ``data``
    (:func:`unlearnkit.evaluation.probes.data_kind`: ``"qa"``, ``"muse"``, ``"wmdp"``; None: the lineage's
    row), from :data:`RELEARN_DATA_DEFAULTS` where it has the pair, else :data:`RELEARN_DEFAULTS`."""
    kind, chain = lineage(model)
    row = default_row(kind, data)
    return row._replace(why=f"{row.why}: {chain}")


def default_row(kind: str, data: str | None = None) -> AttackRow:
    """The :class:`AttackRow` of lineage ``kind`` on data of kind ``data``: :data:`RELEARN_DATA_DEFAULTS`
    where it has the pair, else :data:`RELEARN_DEFAULTS`."""
    return RELEARN_DATA_DEFAULTS.get((kind, str(data)), RELEARN_DEFAULTS[kind])

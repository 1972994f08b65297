"""The relearning attack's defaults from where a model comes from: what its model cards lead to.

One learning rate cannot suit every model. 1e-3 suits the ~1M Llama trained from scratch (``finetune
--model tiny``) and destroys a model fine-tuned from a pretrained tiny base (the embedded lab's target:
held-half fact recall about 0.96 -> 0.16 in 20 steps, halved by item, lab version 10), where 2e-5 up to 250
steps teaches and damages least (bench/results/relearn_calibration.md: it passes both calibration bars
on 4 of 5 attack splits, halved by author); a pretrained 1B+ checkpoint is attacked at its usual fine-tuning
rate, about 1e-5 (Hu et al., arXiv 2406.13356, relearn at 1e-5 to 4e-5). :func:`relearn_defaults`
follows the cards (:func:`unlearnkit.train.distill_inputs.base_chain`) and picks the row of
:data:`RELEARN_DEFAULTS`; the calibration line of every audit then says whether the attack taught and
kept on the models at hand.
"""

from __future__ import annotations

from pathlib import Path

#: lineage -> (relearn_lr, relearn_steps, how the note names it)
RELEARN_DEFAULTS: dict[str, tuple[float, tuple[int, ...], str]] = {
    "scratch": (1e-3, (5, 10, 20, 50), "a tiny model trained from scratch"),
    "tiny base": (
        2e-5,
        (20, 100, 250),
        "fine-tuned from a tiny pretrained base (the embedded lab's least damaging attack that teaches)",
    ),
    "pretrained": (1e-5, (5, 10, 20, 50), "a pretrained checkpoint (its usual fine-tuning rate)"),
    "unknown": (1e-3, (5, 10, 20, 50), "a model whose cards name no origin"),
}

#: (lineage, data kind) -> the row that replaces the lineage's for that kind of data. A WMDP-like folder's
#: attack relearns multiple-choice questions (``relearn_data`` auto): at 2e-5 the embedded lab's filtered
#: base learns under 0.5 of the relearned agents' after 250 steps; 1e-4 teaches it 0.89 (bench/results/
#: relearn_calibration_wmdp.md).
RELEARN_DATA_DEFAULTS: dict[tuple[str, str], tuple[float, tuple[int, ...], str]] = {
    ("tiny base", "wmdp"): (
        1e-4,
        (20, 100, 250),
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


def relearn_defaults(model: str | Path | None, data: str | None = None) -> tuple[float, tuple[int, ...], str]:
    """``(relearn_lr, relearn_steps, the line that says why)`` for auditing ``model`` on data of kind
    ``data`` (:func:`unlearnkit.evaluation.probes.data_kind`: ``"qa"``, ``"muse"``, ``"wmdp"``; None: the
    lineage's row), from :data:`RELEARN_DATA_DEFAULTS` where it has the pair, else :data:`RELEARN_DEFAULTS`."""
    kind, chain = lineage(model)
    lr, steps, why = default_row(kind, data)
    return lr, steps, f"{why}: {chain}"


def default_row(kind: str, data: str | None = None) -> tuple[float, tuple[int, ...], str]:
    """The ``(relearn_lr, relearn_steps, why)`` row of lineage ``kind`` on data of kind ``data``:
    :data:`RELEARN_DATA_DEFAULTS` where it has the pair, else :data:`RELEARN_DEFAULTS`."""
    return RELEARN_DATA_DEFAULTS.get((kind, str(data)), RELEARN_DEFAULTS[kind])

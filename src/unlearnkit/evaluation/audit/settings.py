"""How hard the audit attacks: :class:`AuditSettings`, checked when it is made."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from unlearnkit.config import check_optim
from unlearnkit.errors import UserError

#: How the relearning attack may halve the forget rows (:func:`~unlearnkit.evaluation.audit.relearning.relearn_halves`).
RELEARN_SPLITS = ("entity", "item")
RELEARN_DATA = ("auto", "passages", "questions")
#: What the control fine-tune beside the attack trains on (``AuditSettings.relearn_control``).
RELEARN_CONTROLS = ("none", "retain")


@dataclass
class AuditSettings:
    """How hard to attack. ``relearn_lr`` and ``relearn_steps``: the attack must be able to teach (the
    oracle learns >= 0.8 of the facts of the half it is trained on by the last step) without damaging
    (the target keeps >= 0.9 of its held-half fact recall); the audit reads both
    (``relearn_calibration``) and warns when either fails. The default 1e-3 is the scale of a tiny model
    trained from scratch; on the embedded lab's pretrained-base TOFU-like miniature (lab version 10) it
    destroys the target (halved by item: held-half fact recall about 0.96 -> 0.16 in 20 steps), and with
    plain cross-entropy no rate from 5e-5 to 1e-5 passes both bars on every attack split there (halved by
    author: 2e-5 for 250 steps passes both on 4 of 5 splits, the target keeping 86 % of its held facts on
    the worst; bench/results/relearn_calibration_plain.md). Capped at ``relearn_fit_prob`` 0.5, 2e-5 to 5e-5
    for 250 steps pass both on every split, 5e-5 with the widest margins (``python bench/audit_all.py
    --calibrate``, relearn_calibration.md): the quickstart and bench/robustness.py use 5e-5 capped
    (``lineage``), and 1e-4 on a WMDP-like folder's questions, capped the same
    (bench/results/relearn_calibration_wmdp.md).
    Pretrained 1B+ models: about 1e-5 (the usual fine-tuning rate). Set them explicitly and read the
    calibration."""

    relearn_steps: tuple[int, ...] = (5, 10, 20, 50)  # the curve's points; () skips the attack
    relearn_fraction: float = 0.5  # share of the (subsampled) forget items relearned on
    relearn_lr: float = 1e-3
    relearn_batch_size: int = 8
    # retain rows mixed into the attack's data, per forget row it trains on (0: forget rows only, the
    # attack of the papers). Tried against the damage on the embedded lab: with 1 the oracle learns
    # slower and the target loses as much of its held half at equal teaching (the loss is interference
    # between facts of the same kinds, not drift), so it stays off (bench/audit_all.py --calibrate
    # --relearn-retain 1)
    relearn_retain: float = 0.0
    # the attack's optimiser (TrainingArguments.optim; auto: transformers' AdamW). Tried on the embedded
    # lab: plain "sgd" sits on AdamW's frontier (5 author splits, lr 1 to 0.03: at 0.03 x 100 steps the
    # oracle learns 0.86 of its trained half and the target keeps 86 % of its held facts on the worst
    # split, bench/results/relearn_calibration_sgd.md), so the damage is not Adam's lr-sized steps
    relearn_optim: str = "auto"
    # the attack trains an answer token only while the model gives it probability below this
    # (relearning.fit_capped_nll): a model that already states what it is shown stops moving instead of
    # writing over the facts it is not shown. 1 (the default): plain cross-entropy on every token, the
    # papers' attack. The embedded lab's calibrated attack caps at 0.5 (lineage.RELEARN_DEFAULTS): uncapped,
    # the target keeps 86 % of its held facts on the worst split; capped, 2e-5 to 5e-5 x 250 steps pass
    # both bars on every split (bench/results/relearn_calibration.md, relearn_calibration_plain.md)
    relearn_fit_prob: float = 1.0
    # how the forget rows are halved: "entity" (whole authors on each side when every row names one:
    # the held questions are about entities the attack never shows, so no fact the attack teaches
    # implies a held one) or "item" (relearn_halves says why and what was measured)
    relearn_split: str = "entity"
    # what the attack trains on about the relearned entities of raw-text data: "passages" (their forget
    # passages), "questions" (a WMDP-like folder's multiple-choice questions about them, each with its
    # correct answer as the scoring reads it: Deeb & Roger, arXiv 2410.08827) or "auto" (questions where
    # the data has them, passages otherwise). QA data trains on its forget questions either way.
    relearn_data: str = "auto"
    # a control beside the attack (question/answer data, with the original model given): the original
    # (target) model fine-tuned the attack's way (same rate, steps, batch, retain mix) on as many retain
    # rows, whole entities, as the attack trains on forget rows, measured on the same held half. It says
    # what any fine-tune that long on facts the model knows costs the held half: on the embedded lab the
    # attack that teaches costs the target about what this control costs it, and no rate keeps the
    # target on every split (bench/results/relearn_calibration_control.md), so a fall the control shares
    # is the fine-tune's cost, not something a lower rate removes. "none" (the default) skips it: it is a
    # second relearning run of the original model.
    relearn_control: str = "none"
    quant_bits: tuple[int, ...] = (8, 4)  # () skips the quantisation attack
    group_size: int = 128  # for bits < 8; 8-bit is per output channel
    max_new_tokens: int = 64
    max_items: int = 200  # per split, deterministic subsample
    seed: int = 0
    probes_path: str | None = None  # JSONL with question/answer; wins over paraphrased_question
    batch_size: int = 32
    max_length: int = 512
    prompt_format: str = "auto"
    progress: bool = False  # stage lines on stderr (the CLI turns this on)

    def __post_init__(self) -> None:
        self.relearn_steps = _int_tuple("relearn_steps", self.relearn_steps, 1, 100_000)
        self.quant_bits = _int_tuple("quant_bits", self.quant_bits, 2, 8)
        if len(set(self.relearn_steps)) != len(self.relearn_steps):
            raise UserError(f"relearn_steps {self.relearn_steps}: each step count at most once")
        if len(set(self.quant_bits)) != len(self.quant_bits):
            raise UserError(f"quant_bits {self.quant_bits}: each bit width at most once")
        self.relearn_steps = tuple(sorted(self.relearn_steps))
        _number("relearn_fraction", self.relearn_fraction, 0.0, 1.0, "strictly between 0 and 1")
        _number("relearn_lr", self.relearn_lr, 0.0, math.inf, "> 0")
        ok = isinstance(self.relearn_retain, (int, float)) and not isinstance(self.relearn_retain, bool)
        if not ok or not 0.0 <= self.relearn_retain <= 10.0:
            raise UserError(
                f"relearn_retain must be a number in [0, 10] (retain rows per forget row the attack trains "
                f"on; 0 = forget rows only), got {self.relearn_retain!r}"
            )
        check_relearn_split(self.relearn_split)
        if self.relearn_data not in RELEARN_DATA:
            raise UserError(f"relearn_data must be {', '.join(RELEARN_DATA)}, got {self.relearn_data!r}")
        if self.relearn_control not in RELEARN_CONTROLS:
            raise UserError(
                f"relearn_control must be {' or '.join(RELEARN_CONTROLS)}, got {self.relearn_control!r}"
            )
        ok = isinstance(self.relearn_fit_prob, (int, float)) and not isinstance(self.relearn_fit_prob, bool)
        if not ok or not 0.0 < self.relearn_fit_prob <= 1.0:
            raise UserError(
                f"relearn_fit_prob must be a probability in (0, 1] (the attack stops training a token the "
                f"model gives at least this; 1 = plain cross-entropy), got {self.relearn_fit_prob!r}"
            )
        if not isinstance(self.relearn_optim, str):
            raise UserError(f"relearn_optim must be an optimiser name, got {self.relearn_optim!r}")
        check_optim(self.relearn_optim, flag="relearn_optim")
        for name in ("relearn_batch_size", "group_size", "max_new_tokens", "batch_size"):
            _positive_int(name, getattr(self, name))
        _positive_int("max_items", self.max_items)
        if self.max_length < 8:
            raise UserError(f"max_length must be >= 8, got {self.max_length!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            raise UserError(f"seed must be an integer, got {self.seed!r}")
        if self.prompt_format not in ("auto", "chat", "plain"):
            raise UserError(f"prompt_format {self.prompt_format!r}: use auto, chat or plain")
        if self.probes_path is not None:
            self.probes_path = str(self.probes_path)
            if not Path(self.probes_path).is_file():
                raise UserError(f"probes file {self.probes_path} does not exist")


def check_relearn_split(value: Any) -> None:
    """One of :data:`RELEARN_SPLITS`, else one clear error."""
    if value not in RELEARN_SPLITS:
        raise UserError(f"relearn_split must be {' or '.join(RELEARN_SPLITS)}, got {value!r}")


def _int_tuple(name: str, value: Any, low: int, high: int) -> tuple[int, ...]:
    if isinstance(value, (int, str)) and not isinstance(value, bool):
        value = [value]
    try:
        items = tuple(value)
    except TypeError:
        raise UserError(f"{name} must be a list of integers, got {value!r}") from None
    for x in items:
        if isinstance(x, bool) or not isinstance(x, int) or not low <= x <= high:
            raise UserError(f"{name}: every value must be an integer in [{low}, {high}], got {x!r}")
    return items


def _number(name: str, value: Any, low: float, high: float, rule: str) -> None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if not ok or not low < value < high:
        raise UserError(f"{name} must be {rule}, got {value!r}")


def _positive_int(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise UserError(f"{name} must be an integer >= 1, got {value!r}")

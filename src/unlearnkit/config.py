"""Validated configuration: the training settings, the fields every method shares, and how values are read.

Each method's own settings dataclass is declared in :mod:`unlearnkit.catalog`. Values come from (lowest
to highest priority) the dataclass defaults (taken from the papers, each field's meaning and range
beside it: :func:`setting`), a flat YAML recipe (``--config``) and ``--set key=value`` overrides. Unknown
keys are an error with the nearest valid key suggested; ranges are checked in ``__post_init__``.
"""

from __future__ import annotations

import dataclasses
import difflib
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from unlearnkit.errors import UserError

RETAIN_LOSSES = ("nll", "kl", "none")
COLLAPSE_ACTIONS = ("off", "warn", "stop")


PRECISIONS = ("auto", "fp32", "bf16", "fp16", "bf16-true")
# transformers' OptimizerNames (5.x; tests/test_device_dtype.py checks the list against it), kept here
# so that a typo answers before transformers is imported. Those that need bitsandbytes:
OPTIMIZERS = (
    "adamw_torch", "adamw_torch_fused", "adamw_torch_xla", "adamw_torch_npu_fused", "adafactor",
    "adamw_anyprecision", "adamw_torch_4bit", "adamw_torch_8bit", "ademamix", "sgd", "adagrad",
    "adamw_bnb_8bit", "adamw_8bit", "ademamix_8bit", "lion_8bit", "lion_32bit", "paged_adamw_32bit",
    "paged_adamw_8bit", "paged_ademamix_32bit", "paged_ademamix_8bit", "paged_lion_32bit",
    "paged_lion_8bit", "rmsprop", "rmsprop_bnb", "rmsprop_bnb_8bit", "rmsprop_bnb_32bit", "galore_adamw",
    "galore_adamw_8bit", "galore_adafactor", "galore_adamw_layerwise", "galore_adamw_8bit_layerwise",
    "galore_adafactor_layerwise", "lomo", "adalomo", "grokadamw", "schedule_free_radam",
    "schedule_free_adamw", "schedule_free_sgd", "apollo_adamw", "apollo_adamw_layerwise", "stable_adamw",
)  # fmt: skip
BNB_OPTIMIZERS = tuple(
    o
    for o in OPTIMIZERS
    if "bnb" in o or o.startswith(("paged_", "lion_")) or o in ("adamw_8bit", "ademamix_8bit")
)
# The packages behind the other optional optimisers and trackers: name -> (import name, pip extra / package)
OPTIONAL_PACKAGES = {
    "bnb": ("bitsandbytes", "unlearnkit[bnb]"),
    "tensorboard": ("tensorboard", "unlearnkit[tracking] (or pip install tensorboard)"),
    "wandb": ("wandb", "unlearnkit[tracking] (or pip install wandb)"),
}
REPORT_TO = ("none", "tensorboard", "wandb")


def _has_package(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None


def check_optim(optim: str, flag: str = "--set optim") -> None:
    """A known optimiser whose package is installed (one line naming the extra otherwise); ``flag``: how
    the message names the setting."""
    if optim == "auto":
        return
    if optim not in OPTIMIZERS:
        near = difflib.get_close_matches(optim, OPTIMIZERS, n=1)
        hint = f"; did you mean {near[0]}?" if near else " (see transformers' OptimizerNames)"
        raise UserError(f"{flag}={optim} is not an optimiser transformers knows{hint}")
    if optim in BNB_OPTIMIZERS and not _has_package("bitsandbytes"):
        raise UserError(
            f"{flag}={optim} needs bitsandbytes, which is not installed: pip install "
            f"'{OPTIONAL_PACKAGES['bnb'][1]}' (a CUDA machine), or use {flag.removeprefix('--set ')}=adamw_torch_fused"
        )


def check_report_to(report_to: str) -> None:
    """A tracker the Trainer can report to, installed (one line naming the package otherwise)."""
    if report_to not in REPORT_TO:
        raise UserError(f"--report-to {report_to}: use none, tensorboard or wandb")
    if report_to != "none":
        module, extra = OPTIONAL_PACKAGES[report_to]
        if not _has_package(module):
            raise UserError(
                f"--report-to {report_to} needs {module}, which is not installed: pip install {extra}"
            )


def check_value(cond: bool, name: str, value: Any, rule: str) -> None:
    """A config field's range check: ``ValueError("name=value is invalid: rule")`` unless ``cond``."""
    if not cond:
        raise ValueError(f"{name}={value!r} is invalid: {rule}")


def setting(default: Any, meaning: str, valid: str) -> Any:
    """A config field with its default, its meaning and its valid range in words.

    The meaning and range are what ``unlearnkit methods NAME`` and ``unlearn --method NAME --help`` print
    (:func:`help_of`); the range repeats the ``__post_init__`` check for a reader.
    """
    return field(default=default, metadata={"help": meaning, "range": valid})


def help_of(cls: type, name: str) -> tuple[str, str] | None:
    """``(meaning, range)`` of field ``name`` of the config dataclass ``cls``: from the nearest class up
    its bases that declares it with :func:`setting` (a subclass that only changes a default keeps its
    base's words), or None when none does."""
    for klass in cls.__mro__:
        found = getattr(klass, "__dataclass_fields__", {}).get(name)
        if found is not None and "help" in found.metadata:
            return found.metadata["help"], found.metadata["range"]
    return None


@dataclass
class TrainConfig:
    """Optimisation settings shared by every method (defaults: the ASU authors' TOFU recipe).

    Each field carries its meaning and valid range (:func:`setting`): ``unlearnkit methods NAME`` and
    ``unlearn --method NAME --help`` print them, so a key cannot ship undocumented.
    """

    lr: float = setting(1e-5, "peak learning rate (AdamW)", "> 0")
    epochs: float = setting(5.0, "passes over the forget set (ignored when max_steps > 0)", "> 0")
    max_steps: int = setting(-1, "optimiser steps; > 0 overrides epochs", "-1 (off) or >= 1")
    batch_size: int = setting(8, "forget (and paired retain) examples per device per micro-batch", ">= 1")
    grad_accum: int = setting(  # effective batch 32 as in the ASU / TOFU recipes
        4, "micro-batches per optimiser step (effective batch = batch_size x grad_accum x devices)", ">= 1"
    )
    weight_decay: float = setting(0.01, "AdamW weight decay", ">= 0")
    # L2-SP, decoupled (unlearnkit.train.anchor); 0 = the plain optimiser, bit for bit.
    anchor_decay: float = setting(
        0.0,
        "after each optimiser step every trained weight moves this share of the way back to its value at "
        "the start of training (L2-SP, Li et al. 2018): a fine-tune keeps more of what the model knew; "
        "costs one copy of the trained weights",
        "[0, 1) (0 = off)",
    )
    warmup_epochs: float = setting(  # the ASU authors warm up for one epoch
        1.0, "linear warm-up length, in epochs", ">= 0"
    )
    lr_scheduler: str = setting(
        "linear",
        "learning-rate schedule after warm-up",
        "linear | cosine | constant | constant_with_warmup",
    )
    max_grad_norm: float = setting(1.0, "gradient clipping norm", ">= 0 (0 = no clipping)")
    seed: int = setting(
        0, "seed of data order, initialisation and sampling: same seed, same weights", "any integer"
    )
    max_length: int = setting(
        512, "longest question + answer in tokens; longer rows are an error, never cut", ">= 8"
    )
    save_every: int = setting(0, "optimiser steps between checkpoints (for --resume)", ">= 0 (0 = none)")
    save_total_limit: int = setting(2, "checkpoints kept", ">= 1")
    reference: str = setting(
        "auto",
        "how the original model's outputs are obtained (NPO, KL retain, ASU): a frozen copy, the LoRA "
        "base with adapters off, a cache computed before training, or the cheapest exact one",
        "auto | copy | adapter (needs lora_r > 0) | cache",
    )
    cache_topk: int = setting(
        0,
        "reference=cache: keep the top-k logits + residual mass instead of the full vocabulary",
        ">= 0 (0 = exact)",
    )
    # auto resolves in unlearnkit.models.resolve_placement.
    precision: str = setting(
        "auto",
        "training precision: bf16 / fp16 are mixed (float32 master weights under autocast), bf16-true "
        "trains bfloat16 weights and optimiser states (as open-unlearning); auto follows the weights' "
        "dtype (--dtype): bfloat16 -> bf16-true, float32 -> bf16 on GPUs that have it, else fp32",
        "auto | fp32 | bf16 | fp16 | bf16-true",
    )
    optim: str = setting(
        "auto",
        "the optimiser (TrainingArguments.optim; auto: transformers' default adamw_torch_fused); "
        "bitsandbytes' paged / 8-bit ones (paged_adamw_32bit as open-unlearning, adamw_8bit ...) need "
        "pip install 'unlearnkit[bnb]'",
        "auto | any transformers OptimizerNames value",
    )
    report_to: str = setting(
        "none",
        "where the Trainer sends its logs (loss terms, --eval-every metrics); same as --report-to",
        "none | tensorboard | wandb (needs the package: unlearnkit[tracking])",
    )
    gradient_checkpointing: bool = setting(
        False, "recompute activations in the backward pass (less memory, ~30% slower)", "true | false"
    )
    prompt_format: str = setting(
        "auto",
        "how a question is shown to the model: its chat template, or 'Question: ... Answer:'",
        "auto | chat | plain",
    )
    # The same defaults as unlearnkit.data.encode's DEFAULT_SYSTEM_PROMPT / DEFAULT_DATE_STRING (the
    # date is fixed so that prompts do not change with today's date).
    system_prompt: str = setting(
        "auto",
        "chat templates only: the system message (auto: none for Llama-2-chat templates and templates "
        "without a system role, else 'You are a helpful assistant.', as open-unlearning)",
        "auto | any text ('' = none)",
    )
    date_string: str = setting(
        "10 Apr 2025",
        "chat templates only: the date Llama-3.x templates print (fixed for reproducibility)",
        "any text",
    )
    lora_r: int = setting(0, "LoRA rank; 0 trains every weight", ">= 0")
    lora_alpha: float = setting(16.0, "LoRA scaling alpha", "> 0")
    lora_dropout: float = setting(0.0, "LoRA dropout", "[0, 1)")
    lora_target: str = setting(
        "all-linear", "modules that get LoRA adapters", "all-linear or comma-separated module names"
    )
    lora_save: str = setting(
        "merged", "with LoRA: save the merged model or the adapter alone", "merged | adapter"
    )
    # unlearnkit.train.collapse_guard runs the probes.
    collapse_guard: str = setting(
        "warn",
        "unlearn: a few retain / general questions (raw text: passage continuations) answered greedily at "
        "step 0, halfway and at the last step (stop: every ~10%); on a collapse (ROUGE-L or token entropy below "
        "collapse_fraction x step 0, or repeated 3-grams) warn on stderr + in the card, or stop and keep the "
        "last state that passed (--no-collapse-guard = off)",
        "off | warn | stop",
    )
    collapse_fraction: float = setting(
        0.5,
        "collapse guard: the probe fails below this share of its step-0 ROUGE-L (or token entropy)",
        "(0, 1)",
    )

    def __post_init__(self) -> None:
        check_value(self.lr > 0, "lr", self.lr, "must be > 0")
        check_value(self.epochs > 0, "epochs", self.epochs, "must be > 0")
        check_value(self.batch_size >= 1, "batch_size", self.batch_size, "must be >= 1")
        check_value(self.grad_accum >= 1, "grad_accum", self.grad_accum, "must be >= 1")
        check_value(self.weight_decay >= 0, "weight_decay", self.weight_decay, "must be >= 0")
        check_value(
            0 <= self.anchor_decay < 1, "anchor_decay", self.anchor_decay, "must be in [0, 1) (0 = off)"
        )
        check_value(self.warmup_epochs >= 0, "warmup_epochs", self.warmup_epochs, "must be >= 0")
        check_value(self.max_grad_norm >= 0, "max_grad_norm", self.max_grad_norm, "must be >= 0")
        check_value(self.max_length >= 8, "max_length", self.max_length, "must be >= 8")
        check_value(self.save_every >= 0, "save_every", self.save_every, "must be >= 0")
        check_value(self.save_total_limit >= 1, "save_total_limit", self.save_total_limit, "must be >= 1")
        check_value(
            self.reference in ("auto", "copy", "adapter", "cache"),
            "reference",
            self.reference,
            "use auto, copy, adapter or cache",
        )
        check_value(
            self.precision in PRECISIONS,
            "precision",
            self.precision,
            "use auto, fp32, bf16 or fp16 (mixed), or bf16-true (bfloat16 weights and optimiser states)",
        )
        check_optim(self.optim)
        check_report_to(self.report_to)
        check_value(
            self.prompt_format in ("auto", "chat", "plain"),
            "prompt_format",
            self.prompt_format,
            "use auto, chat or plain",
        )
        check_value(
            self.lr_scheduler in ("linear", "cosine", "constant", "constant_with_warmup"),
            "lr_scheduler",
            self.lr_scheduler,
            "use linear, cosine, constant or constant_with_warmup",
        )
        check_value(self.lora_r >= 0, "lora_r", self.lora_r, "must be >= 0")
        check_value(self.cache_topk >= 0, "cache_topk", self.cache_topk, "must be >= 0 (0 = exact)")
        check_value(
            not (self.reference == "adapter" and self.lora_r == 0),
            "reference",
            self.reference,
            "adapter needs LoRA: add --set lora_r=8 (or use reference=copy)",
        )
        check_value(
            self.lora_save in ("merged", "adapter"), "lora_save", self.lora_save, "use merged or adapter"
        )
        check_value(0 <= self.lora_dropout < 1, "lora_dropout", self.lora_dropout, "must be in [0, 1)")
        # YAML reads a bare `collapse_guard: off` as false (and `on` as true)
        aliases = {"false": "off", "no": "off", "0": "off", "true": "warn", "on": "warn", "yes": "warn"}
        self.collapse_guard = aliases.get(str(self.collapse_guard).strip().lower(), self.collapse_guard)
        check_value(
            self.collapse_guard in COLLAPSE_ACTIONS,
            "collapse_guard",
            self.collapse_guard,
            "use off, warn or stop",
        )
        check_value(
            0 < self.collapse_fraction < 1,
            "collapse_fraction",
            self.collapse_fraction,
            "must be in (0, 1) (a share of the probe's value at step 0)",
        )


LOSS_REDUCTION = (
    "token averaging of the losses: token = one mean over every answer token of the batch (as TOFU / "
    "open-unlearning); sequence = per-sequence mean then batch mean (the same run whatever the batch layout)",
    "token | sequence",
)


@dataclass
class MethodConfig:
    """Fields every method has: how forget and retain terms are weighted and which retain loss runs.

    ``L = forget_weight * L_forget + retain_weight * L_retain``. Each method's own settings subclass
    this in :mod:`unlearnkit.catalog`.
    """

    forget_weight: float = setting(1.0, "weight of the forget term (alias 'lambda': ASU's lambda)", ">= 0")
    retain_weight: float = setting(1.0, "weight of the retain term (RMU: the paper's alpha)", ">= 0")
    # kl: KL(p_ref || p_theta) on the retain answer tokens
    retain_loss: str = setting(
        "nll", "retain term: NLL on retain answers, KL to the original model, or none", "nll | kl | none"
    )
    # token = Hugging Face's outputs.loss, as TOFU, open-unlearning and the ASU authors average, so a run
    # without --config matches open-unlearning's numbers (docs/CONVENTIONS.md). The embedded lab's recipe
    # pins sequence (quickstart.TINY_UNLEARN, recorded in each lab model's card): its numbers were
    # measured with it. sequence is also the one a run split over accumulation or processes reproduces
    # (docs/SCALING.md, "Reproducibility").
    loss_reduction: str = setting("token", *LOSS_REDUCTION)
    # Fan et al., arXiv 2502.05374 (unlearnkit.train.sam); 0 = the plain method, bit for bit.
    sam_rho: float = setting(
        0.0,
        "SAM radius: the forget gradient is taken at a worst-case weight perturbation (arXiv 2502.05374)",
        ">= 0 (0 = off)",
    )

    def __post_init__(self) -> None:
        check_value(self.sam_rho >= 0, "sam_rho", self.sam_rho, "must be >= 0 (0 = off)")
        check_value(
            self.loss_reduction in ("sequence", "token"),
            "loss_reduction",
            self.loss_reduction,
            "use sequence or token",
        )
        check_value(self.forget_weight >= 0, "forget_weight", self.forget_weight, "must be >= 0")
        check_value(self.retain_weight >= 0, "retain_weight", self.retain_weight, "must be >= 0")
        check_value(
            self.retain_loss in RETAIN_LOSSES, "retain_loss", self.retain_loss, f"use one of {RETAIN_LOSSES}"
        )


DISTILL_SPLITS = ("retain", "general", "forget", "corpus", "text")


@dataclass
class DistillConfig:
    """UNDO's distillation step (Lee et al., arXiv 2506.06278): what the student learns from the teacher.

    ``distill_on``: comma list of what the student is distilled on: benchmark splits (``retain``,
    ``general``, ``forget``: the questions, KL on the answer tokens), ``corpus`` (the world's general
    corpus, ``WORLD/corpus/general.jsonl``: raw text, KL on every token, as UNDO distils on
    pretraining-like text) and ``text`` (the file of ``distill_text``). The default leaves ``forget``
    out: on the embedded world, forget questions in the distillation data halved the robustness gain
    (relearning gap +0.16 instead of -0.04), since the teacher's residual forget
    knowledge is then distilled back in.
    ``distill_text``: a JSON Lines file of ``{"text": ...}`` rows, distilled on in addition to
    ``distill_on`` (``distill_on=text`` for the file alone). For a real model: a slice of a corpus like
    its pretraining data (e.g. some thousand passages of the web text it was trained on), never the
    forget set.
    ``retain_nll_weight``: weight of NLL on the TRUE answers of the non-forget rows (on raw text: its
    tokens), added to the KL to the teacher (the student otherwise inherits the teacher's utility loss
    and stops short). 3 was measured on the embedded world (NPO teacher, fresh student, 20 epochs):
    model utility 0.448 / 0.522 / 0.547 / 0.550 at weights 0 / 1 / 3 / 10 (oracle 0.618), best forget
    quality at 3; 0.597 at 3 with 30 epochs (the old miniature).
    ``loss_reduction``: how KL and NLL average their tokens (see ``MethodConfig``); ``sequence`` here, unlike
    the methods' ``token``: UNDO has no open-unlearning counterpart, and bench/robustness.py measured it so.
    ``stop_epochs``: end training after this many epochs of an ``epochs``-long schedule (0: run it all).
    The learning rate still follows the ``epochs`` schedule, so ``epochs=30, stop_epochs=15`` is the
    15-epoch checkpoint of a 30-epoch run, the stop point bench/robustness.py measures (its UNDO rows stop
    at the first checkpoint that reaches 0.95x the oracle's utility); a 15-epoch schedule decays faster
    and keeps less (measured in the quickstart's robust row: 0.470 utility against its oracle's 0.508).
    A model below 20M parameters noised toward its base defaults to ``epochs=30, stop_epochs=15``
    (``unlearnkit.train.distill.TINY_BASE_DEFAULTS``); given ``epochs`` or ``max_steps`` of the user's own,
    the schedule runs whole unless ``stop_epochs`` is given too.
    """

    distill_on: str = setting(
        "retain,general",
        "what the student is distilled on: benchmark splits (KL on the answer tokens of their questions), "
        "corpus (the world's corpus/general.jsonl in --data or its parent: raw text, KL on every token, "
        "as UNDO distils), text (the file of distill_text)",
        "comma list of retain, general, forget, corpus, text",
    )
    distill_text: str = setting(
        "",
        'a JSON Lines file of {"text": ...} rows distilled on too (KL on every token); for a real model a '
        "slice of a corpus like its pretraining data, never the forget set",
        "a file path ('' = none)",
    )
    retain_nll_weight: float = setting(
        3.0,
        "weight of NLL on the true answers (raw text: its tokens) of the non-forget rows, added to the KL "
        "to the teacher",
        ">= 0",
    )
    loss_reduction: str = setting("sequence", *LOSS_REDUCTION)
    stop_epochs: float = setting(
        0.0,
        "end training after this many epochs while the learning rate follows the whole epochs schedule "
        "(a checkpoint of a longer run, as bench/robustness.py stops UNDO); must not exceed epochs",
        ">= 0 (0 = the whole schedule)",
    )

    def __post_init__(self) -> None:
        self.splits()
        check_value(self.retain_nll_weight >= 0, "retain_nll_weight", self.retain_nll_weight, "must be >= 0")
        check_value(
            self.stop_epochs >= 0, "stop_epochs", self.stop_epochs, "must be >= 0 (0 = the whole schedule)"
        )
        check_value(
            self.loss_reduction in ("sequence", "token"),
            "loss_reduction",
            self.loss_reduction,
            "use sequence or token",
        )

    def splits(self) -> list[str]:
        """The parts to distill on: ``distill_on``, plus ``text`` when ``distill_text`` is set."""
        names = [x.strip() for x in str(self.distill_on).split(",") if x.strip()]
        check_value(
            bool(names) and all(n in DISTILL_SPLITS for n in names) and len(set(names)) == len(names),
            "distill_on",
            self.distill_on,
            f"use a comma list of distinct names from {', '.join(DISTILL_SPLITS)}",
        )
        check_value(
            "text" not in names or bool(str(self.distill_text).strip()),
            "distill_on",
            self.distill_on,
            'text needs --set distill_text=PATH (a JSON Lines file of {"text": ...} rows)',
        )
        if str(self.distill_text).strip() and "text" not in names:
            names.append("text")
        return names


# ---------------------------------------------------------------------------------------------
# Parsing and validation shared by the CLI, recipes and the recipe tests.

ALIASES = {
    "lambda": "forget_weight",
    "alpha_retain": "retain_weight",
    "lora.r": "lora_r",
    "lora.alpha": "lora_alpha",
    "lora.dropout": "lora_dropout",
    "lora.target": "lora_target",
    "lora.save": "lora_save",
    "cache.topk": "cache_topk",
}


def canonical(values: dict[str, Any], where: str = "settings") -> dict[str, Any]:
    """``values`` with every alias (``lambda``, ``lora.r`` ...) under its field name, so that merging two
    dicts lets the later one win whichever spelling each used. The same setting under two names with
    different values is refused: silently keeping one would train with a value the user did not mean."""
    out: dict[str, Any] = {}
    named: dict[str, str] = {}
    for raw_key, value in values.items():
        key = ALIASES.get(raw_key, raw_key)
        if key in out and out[key] != value:
            raise UserError(
                f"{where}: '{named[key]}' and '{raw_key}' are the same setting, given {out[key]!r} and "
                f"{value!r}; give it once"
            )
        out[key], named[key] = value, raw_key
    return out


def _field_types(cls: type) -> dict[str, Any]:
    hints = typing.get_type_hints(cls)
    return {f.name: hints[f.name] for f in dataclasses.fields(cls)}


def _given(key: str, raw: Any, caller: str | None) -> str:
    """How a bad value is named in its error: ``--set key=value`` for the command line (recipes and
    search spaces too: their values merge into the same settings), ``caller: key=value`` for a Python
    caller (``caller`` names the function or class that received it, e.g. ``unlearn(method='npo')``)."""
    return f"--set {key}={raw}" if caller is None else f"{caller}: {key}={raw!r}"


def _coerce(key: str, raw: Any, typ: Any, caller: str | None = None) -> Any:
    if isinstance(typ, types.UnionType) or typing.get_origin(typ) is typing.Union:
        typ = next(t for t in typing.get_args(typ) if t is not type(None))
    if typ is bool:
        if isinstance(raw, bool):
            return raw
        text = str(raw).strip().lower()
        if text in ("1", "true", "yes", "on"):
            return True
        if text in ("0", "false", "no", "off"):
            return False
        raise UserError(f"{_given(key, raw, caller)}: expected true or false")
    if typ in (int, float):
        try:
            value = typ(raw) if typ is float or not isinstance(raw, str) else int(str(raw), 0)
        except (TypeError, ValueError):
            kind = "an integer" if typ is int else "a number"
            raise UserError(f"{_given(key, raw, caller)}: expected {kind}") from None
        if typ is int and isinstance(raw, float) and raw != int(raw):
            raise UserError(f"{_given(key, raw, caller)}: expected an integer")
        return value
    if typ is str:
        if isinstance(raw, list):
            return ",".join(str(x) for x in raw)
        return str(raw)
    return raw


def parse_set(items: list[str] | None) -> dict[str, str]:
    """``["lr=1e-5", "tau=2"]`` -> ``{"lr": "1e-5", "tau": "2"}``; a malformed item is a UserError."""
    out: dict[str, str] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UserError(f"--set {item!r}: expected key=value, e.g. --set lr=1e-5")
        out[key.strip()] = value.strip()
    return out


def load_recipe(path: str | Path) -> dict[str, Any]:
    """A flat YAML recipe (one level of nesting, e.g. ``lora: {r: 8}``, is flattened with dots)."""
    import yaml

    path = Path(path)
    if not path.is_file():
        raise UserError(f"--config {path} does not exist")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark else str(path)
        raise UserError(f"{where}: invalid YAML ({getattr(err, 'problem', err)})") from None
    except UnicodeDecodeError:
        raise UserError(f"{path} is not UTF-8 text") from None
    if not isinstance(data, dict):
        raise UserError(f"{path}: a recipe must be a mapping of key: value")
    flat: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, dict):
            for sub, subval in value.items():
                flat[f"{key}.{sub}"] = subval
        else:
            flat[str(key)] = value
    return flat


def build_configs(
    method_config_cls: type,
    values: dict[str, Any],
    where: str = "--set",
    ignore: tuple[str, ...] = (),
    caller: str | None = None,
) -> tuple[TrainConfig, Any]:
    """Split ``values`` between TrainConfig and the method's config; validate keys, types, ranges.

    ``where`` starts every error line (``--set``, ``--config FILE``); ``caller``: the Python function or
    class the values were given to (``unlearn(method='npo')``), which then starts them instead and names
    a bad value as the keyword it was passed as rather than as ``--set``."""
    where = caller or where
    train_types = _field_types(TrainConfig)
    method_types = _field_types(method_config_cls)
    valid = sorted(set(train_types) | set(method_types) | set(ALIASES))
    train_kw: dict[str, Any] = {}
    method_kw: dict[str, Any] = {}
    canonical({k: v for k, v in values.items() if k not in ignore}, where)  # one value per setting
    for raw_key, raw in values.items():
        if raw_key in ignore:
            continue
        key = ALIASES.get(raw_key, raw_key)
        if key in method_types:
            method_kw[key] = _coerce(raw_key, raw, method_types[key], caller)
        elif key in train_types:
            train_kw[key] = _coerce(raw_key, raw, train_types[key], caller)
        else:
            near = difflib.get_close_matches(raw_key, valid, n=1, cutoff=0.5)
            hint = f"; did you mean '{near[0]}'?" if near else f"; valid keys: {', '.join(valid)}"
            raise UserError(f"{where}: unknown key '{raw_key}' for this method{hint}")
    try:
        return TrainConfig(**train_kw), method_config_cls(**method_kw)
    except ValueError as err:
        raise UserError(f"{where}: {err}") from None


def config_dict(*configs: Any) -> dict[str, Any]:
    """The resolved settings, saved next to every model and checkpoint."""
    out: dict[str, Any] = {}
    for cfg in configs:
        out.update(dataclasses.asdict(cfg))
    return out

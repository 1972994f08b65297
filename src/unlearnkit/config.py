"""Validated configuration: training settings plus one small dataclass per method.

Values come from (lowest to highest priority) the dataclass defaults (taken from the papers, see
``docs/METHODS.md``), a flat YAML recipe (``--config``) and ``--set key=value`` overrides. Unknown
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


def check_optim(optim: str) -> None:
    """A known optimiser whose package is installed (one line naming the extra otherwise)."""
    if optim == "auto":
        return
    if optim not in OPTIMIZERS:
        near = difflib.get_close_matches(optim, OPTIMIZERS, n=1)
        hint = f"; did you mean {near[0]}?" if near else " (see transformers' OptimizerNames)"
        raise UserError(f"--set optim={optim} is not an optimiser transformers knows{hint}")
    if optim in BNB_OPTIMIZERS and not _has_package("bitsandbytes"):
        raise UserError(
            f"--set optim={optim} needs bitsandbytes, which is not installed: pip install "
            f"'{OPTIONAL_PACKAGES['bnb'][1]}' (a CUDA machine), or use optim=adamw_torch_fused"
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


def _check(cond: bool, name: str, value: Any, rule: str) -> None:
    if not cond:
        raise ValueError(f"{name}={value!r} is invalid: {rule}")


@dataclass
class TrainConfig:
    """Optimisation settings shared by every method (defaults: the ASU authors' TOFU recipe)."""

    lr: float = 1e-5
    epochs: float = 5.0
    max_steps: int = -1  # > 0 overrides epochs
    batch_size: int = 8
    grad_accum: int = 4  # effective batch 32 as in the ASU/TOFU recipes
    weight_decay: float = 0.01
    warmup_epochs: float = 1.0  # the ASU authors warm up for one epoch
    lr_scheduler: str = "linear"
    max_grad_norm: float = 1.0
    seed: int = 0
    max_length: int = 512
    save_every: int = 0  # optimiser steps between checkpoints; 0 = no checkpoints
    save_total_limit: int = 2
    reference: str = "auto"  # copy | adapter | cache | auto (cheapest exact one available)
    cache_topk: int = 0  # reference=cache: 0 = exact full-vocabulary targets; k > 0 = top-k + residual mass
    # auto | fp32 | bf16 | fp16 (mixed: float32 master weights under autocast) | bf16-true (bfloat16
    # weights, gradients and optimiser states). auto: from the weights' dtype (unlearnkit.models.
    # resolve_placement): bfloat16 weights -> bf16-true, float32 -> bf16 on GPUs that have it, else fp32.
    precision: str = "auto"
    # TrainingArguments.optim: auto = transformers' default (adamw_torch_fused); bitsandbytes'
    # paged / 8-bit optimisers (paged_adamw_32bit, as open-unlearning, adamw_8bit ...) need the extra
    # unlearnkit[bnb].
    optim: str = "auto"
    report_to: str = "none"  # none | tensorboard | wandb (TrainingArguments.report_to; optional extras)
    gradient_checkpointing: bool = False
    prompt_format: str = "auto"  # auto | chat | plain
    # Chat templates only: the system message ("" = none; "auto" = open-unlearning's choice per model
    # family: none for Llama-2-chat, "You are a helpful assistant." for Llama-3.x / Qwen ...; see
    # unlearnkit.data.encode.resolve_system_prompt) and the date Llama-3.x templates print, fixed so
    # prompts do not change with today's date (the same defaults as unlearnkit.data.encode's
    # DEFAULT_SYSTEM_PROMPT / DEFAULT_DATE_STRING).
    system_prompt: str = "auto"
    date_string: str = "10 Apr 2025"
    lora_r: int = 0  # 0 = train all weights; > 0 trains LoRA adapters of this rank
    lora_alpha: float = 16.0
    lora_dropout: float = 0.0
    lora_target: str = "all-linear"
    lora_save: str = "merged"  # merged | adapter
    # unlearn only (unlearnkit.train.collapse_guard): a few retain / general questions answered greedily
    # every ~10 % of the steps; off | warn (a line on stderr, a record in the card) | stop (end training,
    # keep the weights of the last probe that passed). collapse_fraction: the probe's ROUGE-L (and
    # token entropy) below this share of its step-0 value counts as a collapse.
    collapse_guard: str = "warn"
    collapse_fraction: float = 0.5

    def __post_init__(self) -> None:
        _check(self.lr > 0, "lr", self.lr, "must be > 0")
        _check(self.epochs > 0, "epochs", self.epochs, "must be > 0")
        _check(self.batch_size >= 1, "batch_size", self.batch_size, "must be >= 1")
        _check(self.grad_accum >= 1, "grad_accum", self.grad_accum, "must be >= 1")
        _check(self.weight_decay >= 0, "weight_decay", self.weight_decay, "must be >= 0")
        _check(self.warmup_epochs >= 0, "warmup_epochs", self.warmup_epochs, "must be >= 0")
        _check(self.max_grad_norm >= 0, "max_grad_norm", self.max_grad_norm, "must be >= 0")
        _check(self.max_length >= 8, "max_length", self.max_length, "must be >= 8")
        _check(self.save_every >= 0, "save_every", self.save_every, "must be >= 0")
        _check(self.save_total_limit >= 1, "save_total_limit", self.save_total_limit, "must be >= 1")
        _check(
            self.reference in ("auto", "copy", "adapter", "cache"),
            "reference",
            self.reference,
            "use auto, copy, adapter or cache",
        )
        _check(
            self.precision in PRECISIONS,
            "precision",
            self.precision,
            "use auto, fp32, bf16 or fp16 (mixed), or bf16-true (bfloat16 weights and optimiser states)",
        )
        check_optim(self.optim)
        check_report_to(self.report_to)
        _check(
            self.prompt_format in ("auto", "chat", "plain"),
            "prompt_format",
            self.prompt_format,
            "use auto, chat or plain",
        )
        _check(
            self.lr_scheduler in ("linear", "cosine", "constant", "constant_with_warmup"),
            "lr_scheduler",
            self.lr_scheduler,
            "use linear, cosine, constant or constant_with_warmup",
        )
        _check(self.lora_r >= 0, "lora_r", self.lora_r, "must be >= 0")
        _check(self.cache_topk >= 0, "cache_topk", self.cache_topk, "must be >= 0 (0 = exact)")
        _check(
            not (self.reference == "adapter" and self.lora_r == 0),
            "reference",
            self.reference,
            "adapter needs LoRA: add --set lora_r=8 (or use reference=copy)",
        )
        _check(self.lora_save in ("merged", "adapter"), "lora_save", self.lora_save, "use merged or adapter")
        _check(0 <= self.lora_dropout < 1, "lora_dropout", self.lora_dropout, "must be in [0, 1)")
        # YAML reads a bare `collapse_guard: off` as false (and `on` as true)
        aliases = {"false": "off", "no": "off", "0": "off", "true": "warn", "on": "warn", "yes": "warn"}
        self.collapse_guard = aliases.get(str(self.collapse_guard).strip().lower(), self.collapse_guard)
        _check(
            self.collapse_guard in COLLAPSE_ACTIONS,
            "collapse_guard",
            self.collapse_guard,
            "use off, warn or stop",
        )
        _check(
            0 < self.collapse_fraction < 1,
            "collapse_fraction",
            self.collapse_fraction,
            "must be in (0, 1) (a share of the probe's value at step 0)",
        )


@dataclass
class MethodConfig:
    """Fields every method has: how forget and retain terms are weighted and which retain loss runs.

    ``L = forget_weight * L_forget + retain_weight * L_retain``.
    """

    forget_weight: float = 1.0
    retain_weight: float = 1.0
    retain_loss: str = "nll"  # nll (NLL on retain answers) | kl (KL(p_ref || p_theta), answer tokens) | none
    # How GA / GD / WGA / IDK and the retain NLL / KL average their tokens: sequence = per-sequence mean,
    # then over the batch; token = one mean over every answer token of the batch (Hugging Face's
    # outputs.loss, as TOFU, open-unlearning and the ASU authors). See docs/CONVENTIONS.md.
    loss_reduction: str = "sequence"
    # SAM on the forget term (Fan et al., arXiv 2502.05374): radius of the weight perturbation the forget
    # gradient is taken at (unlearnkit.train.sam); 0 = off (the plain method, bit for bit).
    sam_rho: float = 0.0

    def __post_init__(self) -> None:
        _check(self.sam_rho >= 0, "sam_rho", self.sam_rho, "must be >= 0 (0 = off)")
        _check(
            self.loss_reduction in ("sequence", "token"),
            "loss_reduction",
            self.loss_reduction,
            "use sequence or token",
        )
        _check(self.forget_weight >= 0, "forget_weight", self.forget_weight, "must be >= 0")
        _check(self.retain_weight >= 0, "retain_weight", self.retain_weight, "must be >= 0")
        _check(
            self.retain_loss in RETAIN_LOSSES, "retain_loss", self.retain_loss, f"use one of {RETAIN_LOSSES}"
        )


@dataclass
class GAConfig(MethodConfig):
    """Gradient ascent alone (no retain term by default)."""

    retain_loss: str = "none"


@dataclass
class GDConfig(MethodConfig):
    """Gradient difference: GA on forget + NLL on retain."""


@dataclass
class NPOConfig(MethodConfig):
    """NPO (arXiv 2404.05868); beta from the paper."""

    beta: float = 0.1

    def __post_init__(self) -> None:
        super().__post_init__()
        _check(self.beta > 0, "beta", self.beta, "must be > 0")


@dataclass
class WGAConfig(MethodConfig):
    """Weighted gradient ascent (arXiv 2502.19301); beta in the paper's range 1-5."""

    beta: float = 1.0

    def __post_init__(self) -> None:
        super().__post_init__()
        _check(self.beta > 0, "beta", self.beta, "must be > 0")


@dataclass
class IDKConfig(MethodConfig):
    """IDK fine-tuning: NLL of a refusal to each forget question, plus the retain term."""


@dataclass
class ASUConfig(MethodConfig):
    """Attention Smoothing Unlearning (arXiv 2603.01285). ``forget_weight`` is the paper's lambda.

    Defaults from the authors' Llama-2-7B TOFU recipe: tau 2.3, lambda 0.1 (stable for tau in [2, 2.8]).
    ``layers``: comma-separated decoder-layer indices to smooth (empty = all layers).
    ``idk``: ASU+IDK (first answer token excluded from the KL, plus the IDK loss).
    ``lambda_scales_idk``: with ``idk``, whether lambda (``forget_weight``) multiplies the IDK term too,
    ``L = lambda * (KL + IDK) + L_retain`` (true, the default) or only the KL,
    ``L = lambda * KL + IDK + L_retain`` (false). The authors' code never ran this combination, so
    neither is "theirs".
    ``raw_text``: KL over every token of the passage (MUSE-style); raw ``text`` rows are used as they
    are, QA rows become "question answer" passages.
    """

    forget_weight: float = 0.1
    tau: float = 2.3
    layers: str = ""
    idk: bool = False
    lambda_scales_idk: bool = True
    raw_text: bool = False

    def __post_init__(self) -> None:
        super().__post_init__()
        _check(self.tau > 0, "tau", self.tau, "must be > 0 (tau > 1 smooths attention)")
        self.layer_list()

    def layer_list(self) -> list[int] | None:
        if not str(self.layers).strip():
            return None
        try:
            layers = [int(x) for x in str(self.layers).replace(";", ",").split(",") if x.strip()]
        except ValueError:
            raise ValueError(
                f"layers={self.layers!r} is invalid: use comma-separated layer indices, e.g. 6,7,8"
            ) from None
        _check(all(x >= 0 for x in layers), "layers", self.layers, "indices must be >= 0")
        return layers


@dataclass
class SimNPOConfig(MethodConfig):
    """SimNPO (arXiv 2410.07163): reference-free, length-normalised NPO; beta 2.5-4.5, gamma 0."""

    beta: float = 2.5
    gamma: float = 0.0

    def __post_init__(self) -> None:
        super().__post_init__()
        _check(self.beta > 0, "beta", self.beta, "must be > 0")


@dataclass
class DPOConfig(MethodConfig):
    """IdkDPO (arXiv 2404.05868 baseline): prefer a refusal over the forget answer; beta 0.1."""

    beta: float = 0.1

    def __post_init__(self) -> None:
        super().__post_init__()
        _check(self.beta > 0, "beta", self.beta, "must be > 0")


@dataclass
class IDKAPConfig(MethodConfig):
    """IDK+AP (arXiv 2410.08109): refusal NLL on forget + answer preservation on retain (replaces retain NLL)."""

    beta: float = 0.1
    retain_loss: str = "none"  # AP is the retain term; an extra NLL/KL term can be added

    def __post_init__(self) -> None:
        super().__post_init__()
        _check(self.beta > 0, "beta", self.beta, "must be > 0")


@dataclass
class MEConfig(MethodConfig):
    """ME+GD (arXiv 2410.08109): maximise entropy on forget answers (weight 0.1) + retain NLL."""

    forget_weight: float = 0.1


@dataclass
class UNDIALConfig(MethodConfig):
    """UNDIAL (arXiv 2402.10052): self-distillation towards the reference with the true token's logit lowered."""

    beta: float = 10.0
    retain_loss: str = "none"

    def __post_init__(self) -> None:
        super().__post_init__()
        _check(self.beta >= 0, "beta", self.beta, "must be >= 0")


@dataclass
class RMUConfig(MethodConfig):
    """RMU (WMDP, arXiv 2403.03218): steer layer-``layer`` activations on forget data to ``steering_coeff * u``.

    ``retain_weight`` is the paper's alpha (1200 for Zephyr-7B); only ``train_layers`` x ``train_modules``
    are updated (Zephyr: layers 5,6,7 ``mlp.down_proj``); empty ``train_layers`` = every layer.
    The retain term is the activation MSE to the frozen model, not NLL/KL.
    """

    layer: int = 7
    steering_coeff: float = 6.5
    retain_weight: float = 1200.0
    retain_loss: str = "none"
    train_layers: str = "5,6,7"
    train_modules: str = "mlp.down_proj"

    def __post_init__(self) -> None:
        super().__post_init__()
        _check(self.layer >= 0, "layer", self.layer, "must be >= 0")
        _check(self.steering_coeff > 0, "steering_coeff", self.steering_coeff, "must be > 0")
        self.train_layer_list()

    def train_layer_list(self) -> list[int] | None:
        text = str(self.train_layers).strip()
        if not text:
            return None
        try:
            return [int(x) for x in text.split(",") if x.strip()]
        except ValueError:
            raise ValueError(f"train_layers={self.train_layers!r} is invalid: use e.g. 5,6,7") from None


@dataclass
class ASURMUConfig(RMUConfig):
    """ASU representation variant (arXiv 2603.01285, WMDP): RMU whose target is the frozen model's own
    layer activation under smoothed attention (instead of ``steering_coeff * u``)."""

    tau: float = 2.0
    layers: str = ""  # attention layers to smooth (empty = all)

    def __post_init__(self) -> None:
        super().__post_init__()
        _check(self.tau > 0, "tau", self.tau, "must be > 0")

    layer_list = ASUConfig.layer_list


DISTILL_SPLITS = ("retain", "general", "forget", "corpus", "text")


@dataclass
class DistillConfig:
    """UNDO's distillation step (Lee et al., arXiv 2506.06278): what the student learns from the teacher.

    ``distill_on``: comma list of what the student is distilled on: benchmark splits (``retain``,
    ``general``, ``forget``: the questions, KL on the answer tokens), ``corpus`` (the world's general
    corpus, ``WORLD/corpus/general.jsonl``: raw text, KL on every token, as UNDO distils on
    pretraining-like text) and ``text`` (the file of ``distill_text``). The default leaves ``forget``
    out: on the embedded world, forget questions in the distillation data halved the robustness gain
    (relearning gap +0.16 instead of -0.04, issue 11's probe), since the teacher's residual forget
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
    ``loss_reduction``: how KL and NLL average their tokens (see ``MethodConfig``).
    ``stop_epochs``: end training after this many epochs of an ``epochs``-long schedule (0: run it all).
    The learning rate still follows the ``epochs`` schedule, so ``epochs=30, stop_epochs=15`` is the
    15-epoch checkpoint of a 30-epoch run, the stop point bench/robustness.py measures (its UNDO rows stop
    at the first checkpoint that reaches 0.95x the oracle's utility); a 15-epoch schedule decays faster
    and keeps less (measured in the quickstart's robust row: 0.470 utility against its oracle's 0.508).
    A model below 20M parameters noised toward its base defaults to ``epochs=30, stop_epochs=15``
    (``unlearnkit.train.distill.TINY_BASE_DEFAULTS``); given ``epochs`` or ``max_steps`` of the user's own,
    the schedule runs whole unless ``stop_epochs`` is given too.
    """

    distill_on: str = "retain,general"
    distill_text: str = ""
    retain_nll_weight: float = 3.0
    loss_reduction: str = "sequence"
    stop_epochs: float = 0.0

    def __post_init__(self) -> None:
        self.splits()
        _check(self.retain_nll_weight >= 0, "retain_nll_weight", self.retain_nll_weight, "must be >= 0")
        _check(
            self.stop_epochs >= 0, "stop_epochs", self.stop_epochs, "must be >= 0 (0 = the whole schedule)"
        )
        _check(
            self.loss_reduction in ("sequence", "token"),
            "loss_reduction",
            self.loss_reduction,
            "use sequence or token",
        )

    def splits(self) -> list[str]:
        """The parts to distill on: ``distill_on``, plus ``text`` when ``distill_text`` is set."""
        names = [x.strip() for x in str(self.distill_on).split(",") if x.strip()]
        _check(
            bool(names) and all(n in DISTILL_SPLITS for n in names) and len(set(names)) == len(names),
            "distill_on",
            self.distill_on,
            f"use a comma list of distinct names from {', '.join(DISTILL_SPLITS)}",
        )
        _check(
            "text" not in names or bool(str(self.distill_text).strip()),
            "distill_on",
            self.distill_on,
            'text needs --set distill_text=PATH (a JSON Lines file of {"text": ...} rows)',
        )
        if str(self.distill_text).strip() and "text" not in names:
            names.append("text")
        return names


@dataclass
class TokenSelectionConfig:
    """TokenUnlearn selection (arXiv 2605.00364): hard top-r or soft softmax(phi / tau_w) weights."""

    selection: str = "hard"  # hard | soft
    r: float = 0.2  # hard: fraction of answer tokens kept (at least one per sequence)
    alpha: float = 0.7  # phi = alpha * Delta + (1 - alpha) * H (paper's best: entropy weight 0.3)
    tau_w: float = 1.0  # soft: temperature of the softmax over phi
    mask_token: str = "something"  # what replaces nouns / proper nouns / numbers in the masked prompt
    tagger: str = "auto"  # auto | spacy | heuristic

    def _check_selection(self) -> None:
        _check(self.selection in ("hard", "soft"), "selection", self.selection, "use hard or soft")
        _check(0 < self.r <= 1, "r", self.r, "must be in (0, 1]")
        _check(0 <= self.alpha <= 1, "alpha", self.alpha, "must be in [0, 1]")
        _check(self.tau_w > 0, "tau_w", self.tau_w, "must be > 0")
        _check(
            self.tagger in ("auto", "spacy", "heuristic"),
            "tagger",
            self.tagger,
            "use auto, spacy or heuristic",
        )


def token_variant(base: type) -> type:
    """The T-/S- config of a base method: its fields plus TokenSelectionConfig's, retain KL by default."""

    def post_init(self) -> None:
        base.__post_init__(self)
        TokenSelectionConfig._check_selection(self)

    fields = [(f.name, f.type, field(default=f.default)) for f in dataclasses.fields(TokenSelectionConfig)]
    cls = dataclasses.make_dataclass(
        f"Token{base.__name__}",
        fields + [("retain_loss", str, field(default="kl"))],
        bases=(base,),
        namespace={"__post_init__": post_init, "_check_selection": TokenSelectionConfig._check_selection},
    )
    cls.__doc__ = f"TokenUnlearn variant of {base.__name__}: {base.__doc__}"
    return cls


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

"""Every unlearning method, declared once: its settings, its paper, what it does and which step runs it.

A method is two things:

* its **declaration** here: a settings dataclass (a subclass of :class:`unlearnkit.config.MethodConfig`
  whose fields carry their default, from the paper, and their meaning and range, :func:`setting`) and
  one :class:`MethodSpec` in :data:`SPECS` (name, one-line summary, paper, the step, which extra
  passes it needs);
* its **objective** in ``unlearnkit/objectives/``: the loss, a pure function of tensors, and the
  step beside it that runs the forward passes the loss needs (``step_npo`` in ``objectives/npo.py``).

Everything else is read from this module: the training registry (:mod:`unlearnkit.train.methods`
imports each step), the command line's ``--method`` check and help (``unlearnkit methods NAME``), the
config classes of the Python API (:mod:`unlearnkit.methods`), the sweep's search-space lookup and the
method table of the README (:func:`markdown_table`, checked by ``tests/test_docs_agree.py``).
``docs/CONTRIBUTING.md`` walks through adding one.

Importing this module never imports torch: a typo in ``--method`` answers at once.
"""

from __future__ import annotations

import dataclasses
import difflib
from dataclasses import dataclass, field
from typing import Any

from unlearnkit.config import MethodConfig, check_value, setting
from unlearnkit.errors import UserError

# Meanings shared by several methods' fields (the same key, read the same way by each).
BETA = (
    "inverse temperature of the preference loss (NPO, SimNPO, DPO, AP); WGA: confidence exponent; "
    "UNDIAL: logit decrease",
    "> 0 (UNDIAL: >= 0)",
)
TAU = (
    "ASU attention temperature of the smoothed teacher; > 1 flattens attention",
    "> 0 (stable in [2, 2.8] on 7B)",
)
LAYERS = ("decoder layers whose attention is smoothed", "comma-separated indices, empty = all")


# --- settings ---------------------------------------------------------------------------------


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

    beta: float = setting(0.1, *BETA)

    def __post_init__(self) -> None:
        super().__post_init__()
        check_value(self.beta > 0, "beta", self.beta, "must be > 0")


@dataclass
class WGAConfig(MethodConfig):
    """Weighted gradient ascent (arXiv 2502.19301); beta in the paper's range 1-5."""

    beta: float = setting(1.0, *BETA)

    def __post_init__(self) -> None:
        super().__post_init__()
        check_value(self.beta > 0, "beta", self.beta, "must be > 0")


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
    tau: float = setting(2.3, *TAU)
    layers: str = setting("", *LAYERS)
    idk: bool = setting(
        False,
        "ASU+IDK: exclude the first answer token from the KL and add the IDK refusal loss",
        "true | false",
    )
    lambda_scales_idk: bool = setting(
        True, "with idk: lambda multiplies the IDK term too (else only the KL)", "true | false"
    )
    raw_text: bool = setting(
        False,
        "KL over every token of the passage (MUSE-style raw text) instead of the answer only",
        "true | false",
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        check_value(self.tau > 0, "tau", self.tau, "must be > 0 (tau > 1 smooths attention)")
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
        check_value(all(x >= 0 for x in layers), "layers", self.layers, "indices must be >= 0")
        return layers


@dataclass
class SimNPOConfig(MethodConfig):
    """SimNPO (arXiv 2410.07163): reference-free, length-normalised NPO; beta 2.5-4.5, gamma 0."""

    beta: float = setting(2.5, *BETA)
    gamma: float = setting(0.0, "SimNPO reward margin", "any number (paper: 0)")

    def __post_init__(self) -> None:
        super().__post_init__()
        check_value(self.beta > 0, "beta", self.beta, "must be > 0")


@dataclass
class DPOConfig(MethodConfig):
    """IdkDPO (arXiv 2404.05868 baseline): prefer a refusal over the forget answer; beta 0.1."""

    beta: float = setting(0.1, *BETA)

    def __post_init__(self) -> None:
        super().__post_init__()
        check_value(self.beta > 0, "beta", self.beta, "must be > 0")


@dataclass
class IDKAPConfig(MethodConfig):
    """IDK+AP (arXiv 2410.08109): refusal NLL on forget + answer preservation on retain (replaces retain NLL)."""

    beta: float = setting(0.1, *BETA)
    retain_loss: str = "none"  # AP is the retain term; an extra NLL/KL term can be added

    def __post_init__(self) -> None:
        super().__post_init__()
        check_value(self.beta > 0, "beta", self.beta, "must be > 0")


@dataclass
class MEConfig(MethodConfig):
    """ME+GD (arXiv 2410.08109): maximise entropy on forget answers (weight 0.1) + retain NLL."""

    forget_weight: float = 0.1


@dataclass
class UNDIALConfig(MethodConfig):
    """UNDIAL (arXiv 2402.10052): self-distillation towards the reference with the true token's logit lowered."""

    beta: float = setting(10.0, *BETA)
    retain_loss: str = "none"

    def __post_init__(self) -> None:
        super().__post_init__()
        check_value(self.beta >= 0, "beta", self.beta, "must be >= 0")


@dataclass
class RMUConfig(MethodConfig):
    """RMU (WMDP, arXiv 2403.03218): steer layer-``layer`` activations on forget data to ``steering_coeff * u``.

    ``retain_weight`` is the paper's alpha (1200 for Zephyr-7B); only ``train_layers`` x ``train_modules``
    are updated (Zephyr: layers 5,6,7 ``mlp.down_proj``); empty ``train_layers`` = every layer.
    The retain term is the activation MSE to the frozen model, not NLL/KL. ``steering_scale`` > 0 is
    Adaptive RMU (arXiv 2408.06223): ``c`` follows the model's activation norm, for models whose
    activations are far from Zephyr-7B's scale.
    """

    layer: int = setting(
        7, "RMU: decoder layer whose output activations are steered", ">= 0 (< number of layers)"
    )
    steering_coeff: float = setting(6.5, "RMU: norm c of the random target direction c*u", "> 0")
    steering_scale: float = setting(
        0.0,
        "Adaptive RMU (arXiv 2408.06223): when > 0, c is steering_scale x the frozen model's mean "
        "layer activation norm on the forget batch (steering_coeff is then unused)",
        ">= 0 (0 = a fixed steering_coeff; the paper's beta is 5)",
    )
    retain_weight: float = 1200.0
    retain_loss: str = "none"
    train_layers: str = setting(
        "5,6,7",
        "RMU: layers whose train_modules are updated (others frozen)",
        "comma-separated indices, empty = all",
    )
    train_modules: str = setting(
        "mlp.down_proj",
        "RMU: module names updated inside train_layers",
        "comma-separated names, e.g. mlp.down_proj",
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        check_value(self.layer >= 0, "layer", self.layer, "must be >= 0")
        check_value(self.steering_coeff > 0, "steering_coeff", self.steering_coeff, "must be > 0")
        check_value(self.steering_scale >= 0, "steering_scale", self.steering_scale, "must be >= 0")
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

    tau: float = setting(2.0, *TAU)
    layers: str = setting("", *LAYERS)  # attention layers to smooth (empty = all)

    def __post_init__(self) -> None:
        super().__post_init__()
        check_value(self.tau > 0, "tau", self.tau, "must be > 0")

    layer_list = ASUConfig.layer_list


@dataclass
class TokenSelectionConfig:
    """TokenUnlearn selection (arXiv 2605.00364): hard top-r or soft softmax(phi / tau_w) weights."""

    selection: str = setting(
        "hard", "token selection: top-r tokens (hard) or softmax weights (soft)", "hard | soft"
    )
    r: float = setting(  # at least one token per sequence is kept
        0.2, "hard selection: share of answer tokens kept by importance", "(0, 1]"
    )
    alpha: float = setting(  # phi = alpha * Delta + (1 - alpha) * H; the paper's best: entropy weight 0.3
        0.7, "importance mix: alpha x masking score + (1 - alpha) x entropy score", "[0, 1]"
    )
    tau_w: float = setting(1.0, "soft selection: softmax temperature of the token weights", "> 0")
    mask_token: str = setting(  # replaces nouns / proper nouns / numbers in the masked prompt
        "something", "word that replaces a token when its masking importance is measured", "one word"
    )
    tagger: str = setting(
        "auto",
        "part-of-speech tagger for the importance prior (spaCy if installed, else a rule-based fallback)",
        "auto | spacy | heuristic",
    )

    def _check_selection(self) -> None:
        check_value(self.selection in ("hard", "soft"), "selection", self.selection, "use hard or soft")
        check_value(0 < self.r <= 1, "r", self.r, "must be in (0, 1]")
        check_value(0 <= self.alpha <= 1, "alpha", self.alpha, "must be in [0, 1]")
        check_value(self.tau_w > 0, "tau_w", self.tau_w, "must be > 0")
        check_value(
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

    fields = [
        (f.name, f.type, field(default=f.default, metadata=f.metadata))
        for f in dataclasses.fields(TokenSelectionConfig)
    ]
    cls = dataclasses.make_dataclass(
        f"Token{base.__name__}",
        fields + [("retain_loss", str, field(default="kl"))],
        bases=(base,),
        namespace={
            "__post_init__": post_init,
            "_check_selection": TokenSelectionConfig._check_selection,
        },
    )
    cls.__doc__ = f"TokenUnlearn variant of {base.__name__}: {base.__doc__}"
    return cls


def with_defaults(cls: type, **defaults: Any) -> type:
    """``cls`` with other defaults (``asu_kl`` = ASU with ``retain_loss="kl"``), under the same name."""
    fields = [(k, type(v), field(default=v)) for k, v in defaults.items()]
    return dataclasses.make_dataclass(cls.__name__, fields, bases=(cls,))


# --- declarations -----------------------------------------------------------------------------


@dataclass(frozen=True)
class MethodSpec:
    """One method as the rest of unlearnkit sees it.

    ``step`` and ``prepare`` name functions in ``unlearnkit/objectives/`` as ``"module:function"``
    (``"npo:step_npo"`` is ``unlearnkit.objectives.npo.step_npo``), imported only when training starts.
    A step takes ``(ctx, batch, cfg)`` (:class:`unlearnkit.train.methods.StepContext`, one paired batch,
    the settings) and returns ``(loss, logs)``; ``prepare(model, cfg)`` runs on the model before training
    (RMU freezes every layer it does not train).
    """

    name: str
    config: type
    summary: str  # one line: `unlearnkit methods` and the README table print it
    paper: str  # "arXiv 2404.05868"; several joined by "; "
    step: str
    uses_reference: bool = False  # the original model's outputs, besides a KL retain term
    uses_teacher: bool = False  # the attention-smoothed original (ASU)
    uses_idk: bool = False  # the forget question with a refusal answer
    uses_retain_idk: bool = False  # the retain question with a refusal answer (IDK+AP)
    token_level: bool = False  # TokenUnlearn token weights, scored before training
    layer_activations: bool = False  # reads a decoder layer's output (RMU)
    prepare: str | None = None


# In the order `unlearnkit methods` lists them; the T-/S- variants of TOKEN_BASES follow.
SPECS: tuple[MethodSpec, ...] = (
    MethodSpec("ga", GAConfig, "gradient ascent on the forget answers", "arXiv 2210.01504", "ga:step_ga"),
    MethodSpec("gd", GDConfig, "gradient ascent + retain NLL (GradDiff)", "arXiv 2401.06121", "ga:step_ga"),
    MethodSpec(
        "npo",
        NPOConfig,
        "negative preference optimisation + retain",
        "arXiv 2404.05868",
        "npo:step_npo",
        uses_reference=True,
    ),
    MethodSpec(
        "wga",
        WGAConfig,
        "confidence-weighted gradient ascent + retain",
        "arXiv 2502.19301",
        "wga:step_wga",
    ),
    MethodSpec(
        "idk",
        IDKConfig,
        "answer forget questions with a refusal + retain",
        "arXiv 2401.06121",
        "idk:step_idk",
        uses_idk=True,
    ),
    MethodSpec(
        "simnpo",
        SimNPOConfig,
        "reference-free length-normalised NPO + retain",
        "arXiv 2410.07163",
        "simnpo:step_simnpo",
    ),
    MethodSpec(
        "idk_dpo",
        DPOConfig,
        "DPO preferring a refusal over the forget answer + retain",
        "arXiv 2305.18290; arXiv 2404.05868",
        "dpo:step_idk_dpo",
        uses_reference=True,
        uses_idk=True,
    ),
    MethodSpec(
        "idk_ap",
        IDKAPConfig,
        "refusal on forget + answer preservation on retain",
        "arXiv 2410.08109",
        "dpo:step_idk_ap",
        uses_idk=True,
        uses_retain_idk=True,
    ),
    MethodSpec(
        "me_gd",
        MEConfig,
        "maximum entropy on forget answers + retain NLL",
        "arXiv 2410.08109",
        "me:step_me",
    ),
    MethodSpec(
        "undial",
        UNDIALConfig,
        "self-distillation with the answer token's logit lowered",
        "arXiv 2402.10052",
        "undial:step_undial",
        uses_reference=True,
    ),
    MethodSpec(
        "rmu",
        RMUConfig,
        "steer a layer's forget activations to a random direction",
        "arXiv 2403.03218",
        "rmu:step_rmu",
        uses_reference=True,
        layer_activations=True,
        prepare="rmu:freeze_except_rmu_params",
    ),
    MethodSpec(
        "asu_rmu",
        ASURMUConfig,
        "RMU with the smoothed model's activations as target (WMDP)",
        "arXiv 2603.01285",
        "rmu:step_asu_rmu",
        uses_teacher=True,
        layer_activations=True,
        prepare="rmu:freeze_except_rmu_params",
    ),
    MethodSpec(
        "asu",
        ASUConfig,
        "distil towards the attention-smoothed original (retain NLL)",
        "arXiv 2603.01285",
        "asu:step_asu",
        uses_teacher=True,
    ),
    MethodSpec(
        "asu_gd",
        ASUConfig,
        "ASU with retain NLL (= asu)",
        "arXiv 2603.01285",
        "asu:step_asu",
        uses_teacher=True,
    ),
    MethodSpec(
        "asu_kl",
        with_defaults(ASUConfig, retain_loss="kl"),
        "ASU with KL to the original on retain",
        "arXiv 2603.01285",
        "asu:step_asu",
        uses_teacher=True,
    ),
    MethodSpec(
        "asu_idk",
        with_defaults(ASUConfig, idk=True),
        "ASU (first answer token excluded) + IDK + retain NLL",
        "arXiv 2603.01285",
        "asu:step_asu",
        uses_teacher=True,
    ),
)

# TokenUnlearn (arXiv 2605.00364): T-* (hard top-r selection) and S-* (soft weights) of these methods.
TOKEN_BASES = ("ga", "wga", "npo", "rmu", "asu")
TOKEN_PAPER = "arXiv 2605.00364"


def token_spec(base: MethodSpec, prefix: str) -> MethodSpec:
    """``t-NAME`` / ``s-NAME``: the base method on TokenUnlearn-weighted tokens, retain KL (RMU keeps its
    activation retain term: its config already has one, weight 1200, so no KL is added)."""
    selection = {"t": "hard", "s": "soft"}[prefix]
    extra = {"retain_loss": "none"} if base.name == "rmu" else {}
    retain = "activation retain" if base.name == "rmu" else "retain KL"
    summary = base.summary.replace(" (retain NLL)", "").replace(" + retain", "")
    return dataclasses.replace(
        base,
        name=f"{prefix}-{base.name}",
        config=with_defaults(token_variant(base.config), selection=selection, **extra),
        token_level=True,
        summary=f"{summary}, {selection} token selection (TokenUnlearn) + {retain}",
        paper=f"{base.paper}; {TOKEN_PAPER}",
    )


def _all_specs() -> dict[str, MethodSpec]:
    specs = {s.name: s for s in SPECS}
    for base_name in TOKEN_BASES:
        for prefix in ("t", "s"):
            spec = token_spec(specs[base_name], prefix)
            specs[spec.name] = spec
    return specs


METHODS: dict[str, MethodSpec] = _all_specs()


# --- lookup -----------------------------------------------------------------------------------


def normalise(name: str) -> str:
    """The registered spelling of ``name``: case-insensitive, and ``t_npo`` = ``t-npo``."""
    key = name.strip().lower()
    return key.replace("_", "-") if key.startswith(("t_", "s_")) else key


def find(name: str) -> MethodSpec | None:
    """The declaration ``name`` means, or None when no method has that name."""
    return METHODS.get(normalise(name))


def settings_class(name: str) -> type | None:
    """The settings dataclass of the method ``name``, or None when no method has that name."""
    found = find(name)
    return found.config if found is not None else None


def nearest(name: str, also: tuple[str, ...] = ()) -> str | None:
    """The registered name (or one of ``also``) closest to ``name``, for a "did you mean" hint."""
    near = difflib.get_close_matches(normalise(name), [*METHODS, *also], n=1)
    return near[0] if near else None


def spec(name: str) -> MethodSpec:
    """The declaration of ``name``; an unknown name is one error line naming ``--method``, the nearest
    name and every known one."""
    found = find(name)
    if found is not None:
        return found
    near = nearest(name)
    hint = f"; did you mean '{near}'?" if near else ""
    raise UserError(f"--method {name}: unknown method{hint} (known: {', '.join(sorted(METHODS))})")


# --- the README table -------------------------------------------------------------------------


def markdown_table() -> str:
    """The README's method table: one row per method, the T-/S- variants one row per selection."""
    rows = ["| method | what it does | paper |", "|---|---|---|"]
    for s in SPECS:
        rows.append(f"| `{s.name}` | {s.summary} | {s.paper} |")
    for prefix, selection in (("t", "hard top-r"), ("s", "soft")):
        names = ", ".join(f"`{prefix}-{b}`" for b in TOKEN_BASES)
        rows.append(
            f"| {names} | the base method on TokenUnlearn-weighted answer tokens ({selection} selection) "
            f"+ retain KL (RMU: its activation retain term) | {TOKEN_PAPER} + the base method's |"
        )
    return "\n".join(rows)


if __name__ == "__main__":  # python -m unlearnkit.catalog: the table to paste into README.md
    print(markdown_table())

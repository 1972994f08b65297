"""The methods: which forward passes each one runs and which objective it calls.

A method is a config dataclass (``unlearnkit.config``) plus a *step*: a short function that takes
the model's forward passes on one paired batch and returns ``(loss, logs)``. The losses themselves
are the pure functions in ``unlearnkit.objectives``; read a step top to bottom to see a method.

Batch layout (built by ``unlearnkit.train.trainer.PairedDataset``): ``batch["forget"]``,
``batch["retain"]`` and, for refusal-based methods, ``batch["idk"]`` (forget question, refusal
answer); each holds ``input_ids``, ``attention_mask``, ``labels`` and optionally ``weights``
(TokenUnlearn token weights at label positions) and ``index``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

import torch

from unlearnkit import config as C
from unlearnkit.data.encode import IGNORE_INDEX
from unlearnkit.errors import UserError
from unlearnkit.models import check_layer, decoder_layer_prefixes
from unlearnkit.objectives import (
    ap_loss,
    asu_loss,
    dpo_loss,
    drop_first_answer_token,
    forward_kl_loss,
    ga_loss,
    me_loss,
    nll_loss,
    npo_loss,
    rmu_control_vector,
    rmu_forget_loss,
    rmu_retain_loss,
    simnpo_loss,
    undial_loss,
    wga_loss,
)
from unlearnkit.tokens import shift_weights, shifted_targets, token_logps
from unlearnkit.train.reference import forward_with_layer_output


@dataclass
class Forward:
    """One policy forward pass, aligned for next-token prediction (all ``[B,T-1,...]``)."""

    logits: torch.Tensor
    logps: torch.Tensor
    mask: torch.Tensor
    weights: torch.Tensor  # TokenUnlearn weights if the batch has them, else the answer mask
    hidden: torch.Tensor | None = None  # raw output of a decoder layer, UNSHIFTED [B,T,D] (RMU)


class StepContext:
    """What a step may use: the policy's forward pass and the no-grad reference / teacher passes.

    ``terms="forget"`` asks a step for its forget part only (SAM's pass at the perturbed weights,
    ``unlearnkit.train.sam``): the retain term is then skipped. ``combine`` leaves the step's split in
    ``parts = (forget_part, retain_part or None)``, weights applied, summing to the step's loss.
    """

    def __init__(self, model, reference=None, terms: str = "all") -> None:
        self.model = model
        self.reference = reference
        self.terms = terms
        self.parts: tuple[torch.Tensor, torch.Tensor | None] | None = None

    @property
    def wants_retain(self) -> bool:
        return self.terms != "forget"

    def policy(self, batch: dict[str, torch.Tensor], hidden_layer: int | None = None) -> Forward:
        """``hidden_layer``: 0-based decoder-layer index whose raw output to keep (``Forward.hidden``)."""
        if hidden_layer is None:
            out = self.model(
                input_ids=batch["input_ids"], attention_mask=batch["attention_mask"], use_cache=False
            )
            hidden = None
        else:
            out, hidden = forward_with_layer_output(self.model, batch, hidden_layer)
        logps, mask = token_logps(out.logits, batch["labels"])
        weights = shift_weights(batch["weights"]) * mask if "weights" in batch else mask.float()
        return Forward(out.logits[:, :-1], logps, mask, weights, hidden)

    def _need_reference(self, what: str):
        if self.reference is None:
            raise RuntimeError(f"this method needs {what}, but no reference model was set up")
        return self.reference

    def ref_logits(self, batch) -> torch.Tensor:
        return self._need_reference("reference logits").logits(batch)[:, :-1]

    def ref_logps(self, batch) -> torch.Tensor:
        ref = self._need_reference("reference log-probs")
        if hasattr(ref, "token_logps"):
            return ref.token_logps(batch)
        return token_logps(ref.logits(batch), batch["labels"])[0]

    def teacher_logits(self, batch, tau: float, layers) -> torch.Tensor:
        return self._need_reference("the smoothed teacher").teacher_logits(batch, tau, layers)[:, :-1]


def retain_term(ctx: StepContext, batch: dict, cfg: C.MethodConfig) -> tuple[torch.Tensor | None, dict]:
    """NLL_mean on the paired retain example, or KL(p_ref || p_theta) on its answer tokens."""
    if cfg.retain_loss == "none" or cfg.retain_weight == 0 or not ctx.wants_retain:
        return None, {}
    r = ctx.policy(batch["retain"])
    if cfg.retain_loss == "nll":
        loss = nll_loss(r.logps, r.mask.float(), cfg.loss_reduction)
    else:
        loss = forward_kl_loss(ctx.ref_logits(batch["retain"]), r.logits, r.mask.float(), cfg.loss_reduction)
    return loss, {f"retain_{cfg.retain_loss}": loss.detach()}


def combine(
    forget_loss: torch.Tensor,
    ctx: StepContext,
    batch: dict,
    cfg: C.MethodConfig,
    logs: dict | None = None,
    *,
    forget_extra: torch.Tensor | None = None,
    retain_extra: torch.Tensor | None = None,
) -> tuple[torch.Tensor, dict]:
    """``forget_weight * L_forget + retain_weight * L_retain`` (+ a step's own extra forget / retain terms,
    added as they are), with both terms logged; the forget / retain split is left in ``ctx.parts``."""
    retain_loss, retain_logs = retain_term(ctx, batch, cfg)
    forget_part = total = cfg.forget_weight * forget_loss
    retain_part = None
    if retain_loss is not None:
        retain_part = cfg.retain_weight * retain_loss
        total = total + retain_part
    if forget_extra is not None:
        total, forget_part = total + forget_extra, forget_part + forget_extra
    if retain_extra is not None and ctx.wants_retain:
        total = total + retain_extra
        retain_part = retain_extra if retain_part is None else retain_part + retain_extra
    ctx.parts = (forget_part, retain_part)
    return total, {"forget_loss": forget_loss.detach(), **(logs or {}), **retain_logs}


# --- steps ------------------------------------------------------------------------------------


def step_ga(ctx, batch, cfg):
    f = ctx.policy(batch["forget"])
    return combine(ga_loss(f.logps, f.weights, cfg.loss_reduction), ctx, batch, cfg)


def step_wga(ctx, batch, cfg):
    f = ctx.policy(batch["forget"])
    return combine(wga_loss(f.logps, f.weights, cfg.beta, cfg.loss_reduction), ctx, batch, cfg)


def step_npo(ctx, batch, cfg):
    f = ctx.policy(batch["forget"])
    ref_logps = ctx.ref_logps(batch["forget"])
    return combine(npo_loss(f.logps, ref_logps, f.weights, cfg.beta), ctx, batch, cfg)


def step_idk(ctx, batch, cfg):
    i = ctx.policy(batch["idk"])
    return combine(nll_loss(i.logps, i.mask.float(), cfg.loss_reduction), ctx, batch, cfg)


def step_asu(ctx, batch, cfg):
    teacher = ctx.teacher_logits(batch["forget"], cfg.tau, cfg.layer_list())
    f = ctx.policy(batch["forget"])
    if not cfg.idk:
        return combine(asu_loss(teacher, f.logits, f.weights), ctx, batch, cfg)
    # ASU+IDK: the refusal loss decides how the answer starts, so its first token leaves the KL.
    kl = asu_loss(teacher, f.logits, drop_first_answer_token(f.weights))
    i = ctx.policy(batch["idk"])
    idk = nll_loss(i.logps, i.mask.float(), cfg.loss_reduction)
    logs = {"asu_kl": kl.detach(), "idk_nll": idk.detach()}
    if cfg.lambda_scales_idk:  # L = lambda * (KL + IDK) + L_retain
        return combine(kl + idk, ctx, batch, cfg, logs)
    return combine(kl, ctx, batch, cfg, logs, forget_extra=idk)  # L = lambda * KL + IDK + L_retain


def step_simnpo(ctx, batch, cfg):
    f = ctx.policy(batch["forget"])
    return combine(simnpo_loss(f.logps, f.weights, cfg.beta, cfg.gamma), ctx, batch, cfg)


def step_idk_dpo(ctx, batch, cfg):
    """Chosen = the refusal to the forget question, rejected = the forget answer."""
    f, i = ctx.policy(batch["forget"]), ctx.policy(batch["idk"])
    loss = dpo_loss(
        i.logps,
        ctx.ref_logps(batch["idk"]),
        i.mask.float(),
        f.logps,
        ctx.ref_logps(batch["forget"]),
        f.weights,
        cfg.beta,
    )
    return combine(loss, ctx, batch, cfg)


def step_idk_ap(ctx, batch, cfg):
    """Refusal NLL on forget + AP on retain: prefer the true retain answer over a refusal to it."""
    i = ctx.policy(batch["idk"])
    idk = nll_loss(i.logps, i.mask.float(), cfg.loss_reduction)
    if not ctx.wants_retain:  # SAM's perturbed pass: the forget part only, no retain forwards
        return combine(idk, ctx, batch, cfg)
    r, ri = ctx.policy(batch["retain"]), ctx.policy(batch["retain_idk"])
    ap = ap_loss(r.logps, r.mask.float(), ri.logps, ri.mask.float(), cfg.beta)
    return combine(idk, ctx, batch, cfg, {"ap": ap.detach()}, retain_extra=ap)


def step_me(ctx, batch, cfg):
    f = ctx.policy(batch["forget"])
    return combine(me_loss(f.logits, f.weights, cfg.loss_reduction), ctx, batch, cfg)


def step_undial(ctx, batch, cfg):
    f = ctx.policy(batch["forget"])
    targets = shifted_targets(batch["forget"]["labels"])
    loss = undial_loss(f.logits, ctx.ref_logits(batch["forget"]), targets, f.weights, cfg.beta)
    return combine(loss, ctx, batch, cfg)


def token_weights(batch: dict[str, torch.Tensor]) -> torch.Tensor:
    """UNSHIFTED ``[B,T]`` weights of the tokens themselves: answer tokens (``labels != -100``; every
    real token of raw text), times the TokenUnlearn weights when the batch has them.

    RMU reads a token's activation at its own position (as the WMDP code, which uses every token), not
    at the position that predicts it: the shifted mask would steer the last prompt token and skip the
    last answer token, and put T-RMU's weights one token early.
    """
    mask = (batch["labels"] != IGNORE_INDEX).float()
    return batch["weights"] * mask if "weights" in batch else mask


def _rmu_retain(ctx, batch, cfg, layer):
    r = ctx.policy(batch["retain"], hidden_layer=layer)
    ref_h = ctx.reference.hidden(batch["retain"], layer)
    return rmu_retain_loss(r.hidden, ref_h, token_weights(batch["retain"]))


def step_rmu(ctx, batch, cfg):
    """Activations = the raw output of decoder layer ``layer`` (0-based), at the answer tokens' own positions."""
    layer = cfg.layer
    f = ctx.policy(batch["forget"], hidden_layer=layer)
    control = rmu_control_vector(f.hidden.shape[-1], cfg.steering_coeff, seed=0).to(f.hidden.device)
    forget = rmu_forget_loss(f.hidden, control, token_weights(batch["forget"]))
    if not ctx.wants_retain:  # SAM's perturbed pass: the forget part only, no retain forwards
        return combine(forget, ctx, batch, cfg)
    retain = _rmu_retain(ctx, batch, cfg, layer)
    logs = {"rmu_retain": retain.detach()}
    return combine(forget, ctx, batch, cfg, logs, retain_extra=cfg.retain_weight * retain)


def step_asu_rmu(ctx, batch, cfg):
    """The target is the frozen model's own layer output under smoothed attention (ASU, WMDP variant)."""
    layer = cfg.layer
    f = ctx.policy(batch["forget"], hidden_layer=layer)
    target = ctx.reference.hidden(batch["forget"], layer, tau=cfg.tau, layers=cfg.layer_list())
    forget = rmu_forget_loss(f.hidden, target, token_weights(batch["forget"]))
    if not ctx.wants_retain:  # SAM's perturbed pass: the forget part only, no retain forwards
        return combine(forget, ctx, batch, cfg)
    retain = _rmu_retain(ctx, batch, cfg, layer)
    logs = {"rmu_retain": retain.detach()}
    return combine(forget, ctx, batch, cfg, logs, retain_extra=cfg.retain_weight * retain)


def freeze_except_rmu_params(model, cfg) -> int:
    """RMU trains only ``train_modules`` of ``train_layers``; returns the number of trainable tensors."""
    check_layer(model, cfg.layer)  # a bad layer fails before any training, naming the layer count
    layers = cfg.train_layer_list()
    prefixes = decoder_layer_prefixes(model)  # "model.layers.3." (Llama), "transformer.h.3." (GPT-2)
    chosen = None if layers is None else [prefixes[i] for i in layers if 0 <= i < len(prefixes)]
    modules = [m.strip() for m in str(cfg.train_modules).split(",") if m.strip()]
    n = 0
    for name, param in model.named_parameters():
        in_layer = chosen is None or any(name.startswith(p) for p in chosen)
        keep = in_layer and (not modules or any(f".{m}." in name or name.endswith(f".{m}") for m in modules))
        param.requires_grad_(keep)
        n += keep
    if n == 0:
        raise UserError(
            f"RMU: no parameter matches train_layers={cfg.train_layers!r} train_modules={cfg.train_modules!r}"
        )
    return n


# --- registry ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Method:
    name: str
    config: type
    step: Callable
    summary: str
    paper: str
    uses_reference: bool = False  # besides a KL retain term
    uses_teacher: bool = False
    uses_idk: bool = False
    uses_retain_idk: bool = False  # the retain question with a refusal answer (IDK+AP)
    token_level: bool = False
    prepare: Callable | None = None  # called on the model before training (e.g. RMU freezes layers)

    def needs_reference(self, cfg) -> bool:
        return self.uses_reference or self.uses_teacher or getattr(cfg, "retain_loss", "none") == "kl"

    def needs_idk(self, cfg) -> bool:
        return self.uses_idk or self.uses_retain_idk or bool(getattr(cfg, "idk", False))


def _with_default(cls: type, **defaults) -> type:
    fields = [(k, type(v), dataclasses.field(default=v)) for k, v in defaults.items()]
    return dataclasses.make_dataclass(cls.__name__, fields, bases=(cls,))


_BASE = [
    Method("ga", C.GAConfig, step_ga, "gradient ascent on the forget answers", "arXiv 2210.01504"),
    Method("gd", C.GDConfig, step_ga, "gradient ascent + retain NLL (GradDiff)", "arXiv 2401.06121"),
    Method(
        "npo",
        C.NPOConfig,
        step_npo,
        "negative preference optimisation + retain",
        "arXiv 2404.05868",
        uses_reference=True,
    ),
    Method("wga", C.WGAConfig, step_wga, "confidence-weighted gradient ascent + retain", "arXiv 2502.19301"),
    Method(
        "idk",
        C.IDKConfig,
        step_idk,
        "answer forget questions with a refusal + retain",
        "arXiv 2401.06121",
        uses_idk=True,
    ),
    Method(
        "simnpo",
        C.SimNPOConfig,
        step_simnpo,
        "reference-free length-normalised NPO + retain",
        "arXiv 2410.07163",
    ),
    Method(
        "idk_dpo",
        C.DPOConfig,
        step_idk_dpo,
        "DPO preferring a refusal over the forget answer + retain",
        "arXiv 2305.18290; arXiv 2404.05868",
        uses_reference=True,
        uses_idk=True,
    ),
    Method(
        "idk_ap",
        C.IDKAPConfig,
        step_idk_ap,
        "refusal on forget + answer preservation on retain",
        "arXiv 2410.08109",
        uses_idk=True,
        uses_retain_idk=True,
    ),
    Method(
        "me_gd", C.MEConfig, step_me, "maximum entropy on forget answers + retain NLL", "arXiv 2410.08109"
    ),
    Method(
        "undial",
        C.UNDIALConfig,
        step_undial,
        "self-distillation with the answer token's logit lowered",
        "arXiv 2402.10052",
        uses_reference=True,
    ),
    Method(
        "rmu",
        C.RMUConfig,
        step_rmu,
        "steer a layer's forget activations to a random direction",
        "arXiv 2403.03218",
        uses_reference=True,
        prepare=freeze_except_rmu_params,
    ),
    Method(
        "asu_rmu",
        C.ASURMUConfig,
        step_asu_rmu,
        "RMU with the smoothed model's activations as target (WMDP)",
        "arXiv 2603.01285",
        uses_teacher=True,
        prepare=freeze_except_rmu_params,
    ),
    Method(
        "asu",
        C.ASUConfig,
        step_asu,
        "distil towards the attention-smoothed original (retain NLL)",
        "arXiv 2603.01285",
        uses_teacher=True,
    ),
    Method(
        "asu_gd", C.ASUConfig, step_asu, "ASU with retain NLL (= asu)", "arXiv 2603.01285", uses_teacher=True
    ),
    Method(
        "asu_kl",
        _with_default(C.ASUConfig, retain_loss="kl"),
        step_asu,
        "ASU with KL to the original on retain",
        "arXiv 2603.01285",
        uses_teacher=True,
    ),
    Method(
        "asu_idk",
        _with_default(C.ASUConfig, idk=True),
        step_asu,
        "ASU (first answer token excluded) + IDK + retain NLL",
        "arXiv 2603.01285",
        uses_teacher=True,
    ),
]

METHODS: dict[str, Method] = {m.name: m for m in _BASE}


def _add_token_variants() -> None:
    """T-* (hard top-r selection) and S-* (soft weights) of GA, WGA, NPO, ASU (TokenUnlearn, arXiv 2605.00364)."""
    for base_name in ("ga", "wga", "npo", "rmu", "asu"):
        base = METHODS[base_name]
        for prefix, selection in (("t", "hard"), ("s", "soft")):
            cls = C.token_variant(base.config)
            # RMU's retain term is its activation MSE (weight 1200), so no extra KL term there.
            extra = {"retain_loss": "none"} if base_name == "rmu" else {}
            cls = _with_default(cls, selection=selection, **extra)
            METHODS[f"{prefix}-{base_name}"] = dataclasses.replace(
                base,
                name=f"{prefix}-{base_name}",
                config=cls,
                token_level=True,
                summary=f"{base.summary.replace(' (retain NLL)', '').replace(' + retain', '')}, {selection} token "
                f"selection (TokenUnlearn) + {'activation retain' if base_name == 'rmu' else 'retain KL'}",
                paper=f"{base.paper}; arXiv 2605.00364",
            )


_add_token_variants()


def get_method(name: str) -> Method:
    key = (
        name.strip().lower().replace("_", "-")
        if name.lower().startswith(("t_", "s_"))
        else name.strip().lower()
    )
    if key not in METHODS:
        import difflib

        near = difflib.get_close_matches(key, METHODS, n=1)
        hint = f"; did you mean '{near[0]}'?" if near else ""
        raise UserError(f"--method {name}: unknown method{hint} (known: {', '.join(sorted(METHODS))})")
    return METHODS[key]

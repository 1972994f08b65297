"""Representation Misdirection for Unlearning (RMU).

Li et al., "The WMDP Benchmark: Measuring and Reducing Malicious Use With Unlearning",
arXiv 2403.03218, Sec. 5. Token-weighted form (T-RMU / S-RMU) from TokenUnlearn (arXiv 2605.00364).
Adaptive RMU (Dang et al., "On Effects of Steering Latent Representation for Large Language Model
Unlearning", arXiv 2408.06223): the target's norm follows the model's own activation norm.
The layer, the trained parameters and the forward hooks that produce ``hidden`` live in
``unlearnkit.train.methods``.
"""

from __future__ import annotations

import torch

from unlearnkit.data.encode import IGNORE_INDEX
from unlearnkit.errors import UserError
from unlearnkit.models import check_layer, decoder_layer_prefixes
from unlearnkit.objectives.combine import combine
from unlearnkit.tokens import batch_mean, sequence_mean


def _token_mse(hidden: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    return (hidden.float() - target.detach().float()).pow(2).mean(-1)


def rmu_control_vector(
    hidden_size: int, coeff: float, seed: int, dtype: torch.dtype = torch.float32
) -> torch.Tensor:
    """The fixed control vector ``c * u``: ``u ~ Uniform[0,1)^D`` normalised to unit L2 norm, ``[D]``.

    Drawn (in float32, on the CPU) from its own ``torch.Generator`` seeded with ``seed``, so it is the
    same for a given seed whatever the global RNG state; move it to the device yourself. Its L2 norm
    is ``coeff`` (paper: ``c = 6.5`` for Zephyr-7B layer 7). The WMDP code draws ``torch.rand(1, 1, D)``
    from the global RNG, so its exact vector is not reproduced.
    """
    if hidden_size <= 0:
        raise ValueError(f"rmu: hidden_size must be positive, got {hidden_size}")
    generator = torch.Generator(device="cpu").manual_seed(int(seed))
    u = torch.rand(hidden_size, generator=generator, dtype=torch.float32)
    return (u / u.norm() * coeff).to(dtype)


def rmu_adaptive_coeff(ref_hidden: torch.Tensor, weights: torch.Tensor, scale: float) -> torch.Tensor:
    """Adaptive RMU's target norm: ``scale`` x the frozen model's mean layer-``l`` activation norm.

    Intuition: a fixed ``c`` (6.5, tuned on Zephyr-7B's layer 7) is tiny beside a model whose
    activations are larger (SmolLM2-135M's layer-7 norms are in the hundreds), and the forget term then
    barely moves anything; scaling ``c`` with the activations' own norm makes one ``scale`` carry over
    between models and layers (the paper's ``beta``, 5 in its experiments).

    Args:
        ref_hidden (`Tensor [B,T,D]`): the frozen model's layer-``l`` activations on the forget batch.
        weights (`Tensor [B,T]`): which tokens count (:func:`token_weights`; 0 on padding).
        scale (`float`): the paper's ``beta``.
    Returns a scalar without gradient: ``scale * mean_rows(weighted mean_tokens ||h_t||_2)``.
    The paper computes it once, from the model on the first forget batch (it equals the frozen model
    there); here it comes from the frozen model on each batch, so the value does not depend on which
    batch comes first and a resumed run gets the same targets.
    """
    per_row, valid = sequence_mean(ref_hidden.detach().float().norm(dim=-1), weights)
    return (scale * batch_mean(per_row, valid)).detach()


def rmu_forget_loss(hidden: torch.Tensor, control: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    """RMU forget term: ``MSE(h_l(x_f), c * u)`` per token (mean over the ``D`` features).

    Intuition: steer the layer-``l`` activations on forget text towards a fixed random direction of
    large norm, which scrambles what later layers read from them.

    Args:
        hidden (`Tensor [B,T,D]`): the trained model's layer-``l`` activations on forget inputs.
        control (`Tensor [D]` or `Tensor [B,T,D]`): the control vector ``c * u`` of
            :func:`rmu_control_vector` (broadcast to every token), or per-token target activations of
            the same shape as ``hidden`` (ASU's representation variant for WMDP: the frozen model's
            layer-``l`` output under smoothed attention). No gradient flows into it.
        weights (`Tensor [B,T]`): which tokens count (all real tokens for WMDP text, 0 on padding), or
            TokenUnlearn weights (T-RMU / S-RMU).
    Reduction: weighted mean per sequence, then mean over sequences; rows without weighted tokens are
    left out. (The WMDP code's ``F.mse_loss`` averages over every element, padding included; the two
    agree when all tokens count.) Zero when ``hidden == control`` on every weighted token.
    """
    if control.dim() == 1:
        if control.shape[0] != hidden.shape[-1]:
            raise ValueError(f"rmu: control size {control.shape[0]} != hidden size {hidden.shape[-1]}")
    elif control.shape != hidden.shape:
        raise ValueError(
            f"rmu: control {tuple(control.shape)} must be [D] or match hidden {tuple(hidden.shape)}"
        )
    per_row, valid = sequence_mean(_token_mse(hidden, control), weights)
    return batch_mean(per_row, valid)


def rmu_retain_loss(hidden: torch.Tensor, ref_hidden: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    """RMU retain term: ``MSE(h_l(x_r), h_l^ref(x_r))`` per token (mean over ``D``); scale it by ``alpha``.

    Intuition: keep the layer-``l`` activations on retain text where the frozen model has them.

    Args:
        hidden (`Tensor [B,T,D]`): the trained model's layer-``l`` activations on retain inputs.
        ref_hidden (`Tensor [B,T,D]`): the frozen model's activations at the same layer; no gradient.
        weights (`Tensor [B,T]`): 0 on padding (and wherever the retain term should not apply).
    Reduction: as :func:`rmu_forget_loss`. Zero when the two agree.
    """
    if ref_hidden.shape != hidden.shape:
        raise ValueError(f"rmu: ref_hidden {tuple(ref_hidden.shape)} != hidden {tuple(hidden.shape)}")
    per_row, valid = sequence_mean(_token_mse(hidden, ref_hidden), weights)
    return batch_mean(per_row, valid)


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


def _with_retain(forget, ctx, batch, cfg, layer, logs=None):
    """The forget term plus RMU's retain term (the activation match on retain), as every RMU step adds it."""
    if not ctx.wants_retain:  # SAM's perturbed pass: the forget part only, no retain forwards
        return combine(forget, ctx, batch, cfg, logs)
    retain = _rmu_retain(ctx, batch, cfg, layer)
    logs = {**(logs or {}), "rmu_retain": retain.detach()}
    return combine(forget, ctx, batch, cfg, logs, retain_extra=cfg.retain_weight * retain)


def step_rmu(ctx, batch, cfg):
    """Activations = the raw output of decoder layer ``layer`` (0-based), at the answer tokens' own positions."""
    layer = cfg.layer
    f = ctx.policy(batch["forget"], hidden_layer=layer)
    weights = token_weights(batch["forget"])
    logs = None
    if cfg.steering_scale > 0:  # Adaptive RMU: c from the frozen model's own activation norm
        coeff = rmu_adaptive_coeff(ctx.reference.hidden(batch["forget"], layer), weights, cfg.steering_scale)
        control = rmu_control_vector(f.hidden.shape[-1], 1.0, seed=0).to(f.hidden.device) * coeff
        logs = {"rmu_coeff": coeff}
    else:
        control = rmu_control_vector(f.hidden.shape[-1], cfg.steering_coeff, seed=0).to(f.hidden.device)
    forget = rmu_forget_loss(f.hidden, control, weights)
    return _with_retain(forget, ctx, batch, cfg, layer, logs)


def step_asu_rmu(ctx, batch, cfg):
    """The target is the frozen model's own layer output under smoothed attention (ASU, WMDP variant)."""
    layer = cfg.layer
    f = ctx.policy(batch["forget"], hidden_layer=layer)
    target = ctx.reference.hidden(batch["forget"], layer, tau=cfg.tau, layers=cfg.layer_list())
    forget = rmu_forget_loss(f.hidden, target, token_weights(batch["forget"]))
    return _with_retain(forget, ctx, batch, cfg, layer)


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

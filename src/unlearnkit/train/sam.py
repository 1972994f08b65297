"""Sharpness-aware unlearning: SAM on the forget term only (Fan et al., ICML 2025, arXiv 2502.05374).

    min_theta  max_{||delta|| <= rho} L_forget(theta + delta)  +  L_retain(theta)

solved with SAM's one-step inner maximisation (Foret et al., arXiv 2010.01412):
g = grad L_forget(theta); delta = rho * g / ||g|| (one global L2 norm over all trainable parameters);
the forget gradient is taken at theta + delta, the weights go back to theta (restored from a copy, so
bit-exact), and the retain gradient is taken at theta. Minimising the forget loss over a whole
rho-ball makes it flat around the solution, so a few fine-tuning steps on the forgotten data cannot
climb back (the relearning attack). Cost: one extra forward + backward of the forget term per step.

Where the step splits: ``combine`` in ``unlearnkit.train.methods`` leaves the (weighted) forget and retain
parts of the step's loss in ``ctx.parts``; the perturbed pass runs the step again with
``terms="forget"``, which skips the retain term.

Choices, and why:

* **Per micro-batch.** Under gradient accumulation each micro-batch gets its own perturbation from
  its own forget gradient. A per-optimiser-step perturbation would need every micro-batch twice
  (once for g, once at theta + delta) and their activations or inputs kept in between; SAM's own
  analysis ("m-sharpness", Foret et al. sec. 4.1; Andriushchenko & Flammarion, arXiv 2206.06232)
  finds smaller perturbation batches generalise at least as well. The accumulated gradient is the
  sum of the micro-batch SAM gradients divided by the accumulation steps, as the Trainer's own.
* **Multi-process.** The forget gradient g is averaged over the processes before its norm is taken,
  so every rank applies the same delta (a per-rank delta would be SAM on a rank's shard); the final
  gradients are averaged like DDP's. The passes run on the unwrapped module: DDP's reducer expects
  one backward per forward, and SAM needs three.
* **LoRA / frozen layers.** Only trainable parameters are perturbed (and restored): with LoRA the
  rho-ball is in adapter space.
* Not supported (refused before training): fp16 loss scaling (use bf16 or fp32) and sharded
  training (FSDP / ZeRO-3), where no rank holds the whole gradient to normalise.
"""

from __future__ import annotations

import torch

from unlearnkit.errors import UserError


def check_sam_supported(trainer, rho: float) -> None:
    """One clear error before any step when SAM is asked for where it cannot run."""
    if rho <= 0:
        return
    if getattr(trainer.args, "fp16", False):
        raise UserError(
            f"sam_rho={rho} does not run with fp16 loss scaling: use --set precision=bf16 or fp32"
        )
    if getattr(trainer, "is_fsdp_enabled", False) or getattr(trainer, "is_deepspeed_enabled", False):
        raise UserError(f"sam_rho={rho} needs whole gradients on every rank: use DDP, not FSDP / DeepSpeed")


def _distributed() -> bool:
    return torch.distributed.is_available() and torch.distributed.is_initialized()


def _average(grads: list[torch.Tensor]) -> None:
    """In place: each gradient averaged over the processes (one flat all-reduce)."""
    if not _distributed() or not grads:
        return
    flat = torch.cat([g.reshape(-1) for g in grads])
    torch.distributed.all_reduce(flat)
    flat /= torch.distributed.get_world_size()
    offset = 0
    for g in grads:
        g.copy_(flat[offset : offset + g.numel()].view_as(g))
        offset += g.numel()


def _grads(loss: torch.Tensor | None, params: list[torch.Tensor], retain_graph: bool = False):
    if loss is None or not loss.requires_grad:
        return [torch.zeros_like(p) for p in params]
    grads = torch.autograd.grad(loss, params, retain_graph=retain_graph, allow_unused=True)
    return [torch.zeros_like(p) if g is None else g for p, g in zip(params, grads, strict=True)]


def sam_grads(step, net: torch.nn.Module, rho: float, autocast) -> tuple[torch.Tensor, dict, list]:
    """One SAM step on one micro-batch; returns ``(loss at theta, logs, gradients)`` (nothing accumulated).

    ``step(net, terms)`` runs the method step and returns ``(loss, logs, ctx)``; ``autocast`` is the
    Trainer's compute-loss context (mixed precision).
    """
    params = [p for p in net.parameters() if p.requires_grad]
    with autocast():
        total, logs, ctx = step(net, "all")
    if ctx.parts is None:
        raise RuntimeError("sam_rho: this step does not split its loss with methods.combine")
    forget, retain = ctx.parts
    g = _grads(forget, params)  # frees the forget graph; the retain graph is separate and kept
    _average(g)
    norm = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(x.float()) for x in g]))
    # A zero forget gradient (e.g. forget_weight=0) leaves nothing to perturb along.
    scale = rho / norm if bool(norm > 0) else torch.zeros_like(norm)
    # Through ``.data``: the retain graph saved these weights for its backward, and autograd would
    # refuse it after an in-place change it can see; the values are restored exactly before it runs.
    saved = [p.data.clone() for p in params]
    try:
        for p, gi in zip(params, g, strict=True):
            p.data.add_((gi.float() * scale).to(p.dtype))
        with autocast():
            _, _, ctx_perturbed = step(net, "forget")
        g_sam = _grads(ctx_perturbed.parts[0], params)
    finally:
        for p, s in zip(params, saved, strict=True):
            p.data.copy_(s)
    del saved, g
    # The retain graph was recorded at theta and the weights are theta again: its gradient is at theta.
    grads = [a + b for a, b in zip(g_sam, _grads(retain, params), strict=True)]
    _average(grads)
    return total, logs, list(zip(params, grads, strict=True))

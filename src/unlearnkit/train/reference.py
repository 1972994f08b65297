"""Where reference-model and ASU-teacher outputs come from (``--set reference=copy|adapter|cache|auto``).

* ``copy``: a frozen second model loaded from the same checkpoint (2x the weights in memory).
* ``adapter``: with LoRA, the original model *is* the base with adapters disabled; the teacher is
  that base under smoothed attention. No second set of weights.
* ``cache``: outputs computed once with the original model before training and looked up by
  example index (see ``unlearnkit.train.cache``).

All return logits aligned with the input ids (``[B,T,V]``) and never carry gradients. Every model
pass runs in eval mode (dropout off), also when the live policy is in train mode.

:func:`setup_reference` builds the one a run uses. ``reference=auto`` picks the cheapest EXACT strategy:
``adapter`` with LoRA; otherwise ``cache`` when what the method asks for is no larger than a copy of
the weights and fits ``CACHE_BUDGET_BYTES`` exactly (per-token log-probs for NPO / DPO practically
always do; full-vocabulary logits need ``n_tokens * V * 4`` bytes, often more than a small model's
weights), else ``cache`` with top-k when the user opted in with ``cache_topk > 0`` and that fits,
else ``copy``.
"""

from __future__ import annotations

import contextlib
import copy
import logging
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

import torch

from unlearnkit.attention import smoothed_attention
from unlearnkit.errors import UserError
from unlearnkit.models import check_layer, decoder_layers, is_peft_model
from unlearnkit.tokens import token_logps

if TYPE_CHECKING:  # the set-up below runs a method's step: imported when it runs (methods import this)
    from unlearnkit.train.methods import Method
    from unlearnkit.train.trainer import PairedDataset

log = logging.getLogger(__name__)

CACHE_BUDGET_BYTES = 2 * 2**30  # reference=auto caches exactly only below this (host memory, per rank)


class Reference:
    """Interface: original-model logits / hidden states and smoothed-teacher logits, no gradients."""

    name = "none"
    needs_student = False  # True: logits()/teacher_logits() need the policy's logits (top-k cache)

    def logits(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        raise NotImplementedError

    def token_logps(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """log p_ref(label) at answer positions, aligned ``[B,T-1]`` (0 elsewhere)."""
        return token_logps(self.logits(batch), batch["labels"])[0]

    def teacher_logits(
        self, batch: dict[str, torch.Tensor], tau: float, layers: Sequence[int] | None
    ) -> torch.Tensor:
        raise NotImplementedError

    def hidden(
        self,
        batch: dict[str, torch.Tensor],
        layer: int,
        tau: float | None = None,
        layers: Sequence[int] | None = None,
    ) -> torch.Tensor:
        """Raw output of decoder layer ``layer`` (0-based), unshifted ``[B,T,D]``."""
        raise NotImplementedError


def _forward(model, batch, output_hidden: int | None = None):
    out = model(
        input_ids=batch["input_ids"],
        attention_mask=batch["attention_mask"],
        output_hidden_states=output_hidden is not None,
        use_cache=False,
    )
    return out


def forward_with_layer_output(model, batch, layer: int):
    """``(outputs, h)``: one forward pass and the raw output of decoder layer ``layer``, ``[B,T,D]``.

    Taken by a forward hook on the layer itself, as the WMDP code's RMU does: ``hidden_states[layer + 1]``
    would be the same for every layer but the last, where Hugging Face returns the output of the final
    norm instead. Gradients flow through ``h`` when the caller's pass has them.
    """
    with layer_outputs(model, [layer]) as captured:
        out = _forward(model, batch)
    return out, captured[layer]


@contextlib.contextmanager
def layer_outputs(model, layers: Sequence[int]):
    """While active, ``captured[layer]`` holds the raw output of each decoder layer in ``layers``."""
    blocks = decoder_layers(model)
    captured: dict[int, torch.Tensor] = {}

    def hook_for(layer: int):
        def keep(module, args, output):
            captured[layer] = output[0] if isinstance(output, tuple) else output

        return keep

    handles = [blocks[check_layer(model, layer)].register_forward_hook(hook_for(layer)) for layer in layers]
    try:
        yield captured
    finally:
        for handle in handles:
            handle.remove()


@contextlib.contextmanager
def eval_mode(model):
    """Dropout off for the duration (the policy may be in train mode); the previous mode comes back."""
    was_training = model.training
    model.eval()
    try:
        yield
    finally:
        model.train(was_training)


class ModelReference(Reference):
    """Runs a model for the reference passes; ``model_context`` switches it to its original state."""

    def __init__(self, model, name: str) -> None:
        self.model = model
        self.name = name

    def model_context(self):
        return eval_mode(self.model)

    @torch.no_grad()
    def logits(self, batch):
        with self.model_context():
            return _forward(self.model, batch).logits.detach()

    @torch.no_grad()
    def teacher_logits(self, batch, tau, layers):
        with self.model_context(), smoothed_attention(self.model, tau, layers):
            return _forward(self.model, batch).logits.detach()

    @torch.no_grad()
    def hidden(self, batch, layer, tau=None, layers=None):
        with self.model_context():
            ctx = smoothed_attention(self.model, tau, layers) if tau is not None else contextlib.nullcontext()
            with ctx:
                return forward_with_layer_output(self.model, batch, layer)[1].detach()


class CopyReference(ModelReference):
    """A frozen copy loaded from the original checkpoint (never the live policy object)."""

    def __init__(self, frozen_model, policy=None) -> None:
        if policy is not None and frozen_model is policy:
            raise ValueError("the reference model must not be the policy object itself")
        frozen_model.eval()
        frozen_model.requires_grad_(False)
        super().__init__(frozen_model, "copy")


class AdapterReference(ModelReference):
    """The LoRA policy with its adapters switched off *is* the original model."""

    def __init__(self, peft_model) -> None:
        if not is_peft_model(peft_model):
            raise ValueError("reference 'adapter' needs a PEFT (LoRA) model; set lora_r > 0")
        super().__init__(peft_model, "adapter")

    @contextlib.contextmanager
    def model_context(self):
        # Dropout must be off for an exact reference, and the policy may be in train mode.
        with eval_mode(self.model), self.model.disable_adapter():
            yield


def original_reference(model) -> ModelReference:
    """The live model *before any update* as a reference (adapters off for PEFT, dropout off).

    Only valid until training starts: used to build the cache and to probe what a method asks for.
    """
    if is_peft_model(model):
        return AdapterReference(model)
    return ModelReference(model, "original")


# ---------------------------------------------------------------------------------------------
# Setting up a run's reference (what ``unlearn()`` calls before training)


def _autocast(args):
    """The autocast the Trainer will train under, for reference passes computed outside it."""
    device = args.device
    if args.bf16 or args.fp16:
        dtype = torch.bfloat16 if args.bf16 else torch.float16
        return lambda: torch.autocast(device.type, dtype=dtype)
    return contextlib.nullcontext


def _to_device(batch, device):
    if isinstance(batch, dict):
        return {k: _to_device(v, device) for k, v in batch.items()}
    return batch.to(device) if isinstance(batch, torch.Tensor) else batch


def copy_reference(model, model_path: str | None, args) -> CopyReference:
    from unlearnkit.models import load_model

    # A frozen copy loaded from the original checkpoint; an in-memory model without a path is
    # snapshotted instead (documented cost: a second set of weights either way). It is loaded in the
    # policy's own dtype: a bf16 copy of an fp32 policy (mixed precision) differs from it at step 0,
    # so reference terms that should start at zero do not (NPO 13.8650 instead of 13.8629).
    base = model.get_base_model() if is_peft_model(model) else model
    if model_path:
        frozen = load_model(model_path, dtype=next(base.parameters()).dtype)
    elif is_peft_model(model):
        raise UserError("reference=copy with LoRA needs model_path (or use reference=adapter)")
    else:
        frozen = copy.deepcopy(base)
    frozen.to(next(model.parameters()).device)
    return CopyReference(frozen, policy=base)


def copy_reference_bytes(model) -> int:
    """Bytes of a frozen copy of ``model``'s weights in its own dtype (what ``reference=copy`` adds)."""
    base = model.get_base_model() if is_peft_model(model) else model
    seen: set[int] = set()
    total = 0
    for tensor in list(base.parameters()) + list(base.buffers()):
        if id(tensor) not in seen:  # tied embeddings count once
            seen.add(id(tensor))
            total += tensor.numel() * tensor.element_size()
    return total


def probe_needs(method: Method, method_cfg, model, dataset: PairedDataset, collator, device, autocast):
    """Run one step of ``method`` on one paired batch against the original model; record its requests."""
    from unlearnkit.train.cache import RecordingReference
    from unlearnkit.train.methods import StepContext

    recorder = RecordingReference(original_reference(model))
    batch = _to_device(collator([dataset[i] for i in range(min(2, len(dataset)))]), device)
    with torch.no_grad(), eval_mode(model), autocast():
        method.step(StepContext(model, recorder), batch, method_cfg)
    return recorder


def setup_reference(
    method: Method, method_cfg, train_cfg, model, model_path, dataset: PairedDataset, collator, args
):
    """Resolve ``train_cfg.reference`` and build the reference; returns ``(reference, info)``."""
    if not method.needs_reference(method_cfg):
        return None, {"strategy": "none"}
    strategy = train_cfg.reference
    topk = int(getattr(train_cfg, "cache_topk", 0))
    is_peft = is_peft_model(model)
    if strategy == "adapter" and not is_peft:
        raise UserError("--set reference=adapter needs LoRA: add --set lora_r=8 (or use reference=copy)")
    if strategy == "auto" and is_peft:
        strategy = "adapter"
    if strategy == "adapter":
        return AdapterReference(model), {"strategy": "adapter"}
    if strategy == "copy":
        return copy_reference(model, model_path, args), {"strategy": "copy"}
    if strategy not in ("cache", "auto"):
        raise UserError(f"--set reference={strategy}: use copy, adapter, cache or auto")

    from unlearnkit.train.cache import ReferenceCache, estimate_bytes
    from unlearnkit.train.trainer import epochs_to_run

    device, autocast = args.device, _autocast(args)
    if not getattr(model, "hf_device_map", None):
        model.to(device)  # the Trainer would move it too; the cache is computed where training runs
    recorder = probe_needs(method, method_cfg, model, dataset, collator, device, autocast)
    parts = dataset.parts()
    epochs = epochs_to_run(train_cfg, len(dataset))
    retain_used = dataset.retain_indices(epochs)
    indices = {
        "forget": range(len(dataset.forget)),
        "idk": range(len(dataset.forget)),
        "retain": retain_used,
        "retain_idk": retain_used,
    }
    sizes = {
        "vocab": recorder.vocab or model.config.get_text_config().vocab_size,
        "hidden_size": recorder.hidden_size or 0,
        "logits_bytes": recorder.logits_dtype.itemsize if recorder.logits_dtype else 4,
    }
    exact = estimate_bytes(recorder.needs, parts, indices, topk=0, **sizes)
    approx = estimate_bytes(recorder.needs, parts, indices, topk=topk, **sizes)
    if strategy == "auto":
        # Both exact options cost memory: the cache its bytes (host), the copy a second set of weights.
        # Take the smaller one; on small models a full-vocabulary cache is bigger than the copy.
        copy_bytes = copy_reference_bytes(model)
        if exact <= min(CACHE_BUDGET_BYTES, copy_bytes):
            topk = 0
        elif not (topk > 0 and approx <= CACHE_BUDGET_BYTES):
            info = {
                "strategy": "copy",
                "auto": f"an exact cache needs {exact / 2**20:.1f} MiB, a copy {copy_bytes / 2**20:.1f} MiB",
            }
            return copy_reference(model, model_path, args), info
    elif (exact if topk == 0 else approx) > CACHE_BUDGET_BYTES:
        log.warning(
            "reference=cache will hold %.2f GiB per process; consider cache_topk or reference=copy",
            (exact if topk == 0 else approx) / 2**30,
        )
    t0 = time.perf_counter()
    cache = ReferenceCache(topk).build(
        original_reference(model),
        recorder.needs,
        parts,
        indices,
        collator,
        batch_size=max(train_cfg.batch_size, 8),
        device=device,
        autocast=autocast,
    )
    info = {
        "strategy": "cache",
        "cache_topk": topk,
        "cache_residual_mass": round(cache.residual_mass, 6),  # top-k: relative KL error ~1-3x this
        "cache_mib": round(cache.nbytes / 2**20, 3),
        "cache_seconds": round(time.perf_counter() - t0, 3),
        "cached": sorted(n.describe() for n in recorder.needs),
    }
    return cache, info

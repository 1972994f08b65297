"""Where reference-model and ASU-teacher outputs come from (``--set reference=copy|adapter|cache|auto``).

* ``copy``: a frozen second model loaded from the same checkpoint (2x the weights in memory).
* ``adapter``: with LoRA, the original model *is* the base with adapters disabled; the teacher is
  that base under smoothed attention. No second set of weights.
* ``cache``: outputs computed once with the original model before training and looked up by
  example index (see ``unlearnkit.train.cache``).

All return logits aligned with the input ids (``[B,T,V]``) and never carry gradients. Every model
pass runs in eval mode (dropout off), also when the live policy is in train mode.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence

import torch

from unlearnkit.attention import smoothed_attention
from unlearnkit.models import check_layer, decoder_layers, is_peft_model
from unlearnkit.tokens import token_logps


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

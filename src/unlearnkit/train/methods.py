"""The training registry: every declared method with its step imported, and the context a step runs in.

A method is declared once, in :mod:`unlearnkit.catalog` (its settings dataclass, paper, summary and
the name of its step); its step sits beside its loss in :mod:`unlearnkit.objectives` (``step_npo`` in
``objectives/npo.py``): a short function that takes the model's forward passes on one paired batch and
returns ``(loss, logs)``. :data:`METHODS` joins the two; read a step top to bottom to see a method.

Batch layout (built by ``unlearnkit.train.trainer.PairedDataset``): ``batch["forget"]``,
``batch["retain"]`` and, for refusal-based methods, ``batch["idk"]`` (forget question, refusal
answer); each holds ``input_ids``, ``attention_mask``, ``labels`` and optionally ``weights``
(TokenUnlearn token weights at label positions) and ``index``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass

import torch

from unlearnkit import catalog
from unlearnkit.catalog import MethodSpec
from unlearnkit.tokens import shift, shift_weights, token_logps
from unlearnkit.train.reference import forward_with_layer_output


class Forward:
    """One policy forward pass, aligned for next-token prediction (all ``[B,T-1,...]``).

    ``logps`` is computed on first use and kept: the fused log-softmax behind it saves a ``[B,T,V]``
    tensor for the backward pass, which a step that reads only the logits (ASU's KL, a KL retain term)
    would otherwise hold through the rest of the step for nothing (the trainer keeps each forward for
    the whole step).
    """

    def __init__(
        self,
        full_logits: torch.Tensor,
        labels: torch.Tensor,
        weights: torch.Tensor | None = None,
        hidden: torch.Tensor | None = None,
    ) -> None:
        self._full, self._labels, self._logps = full_logits, labels, None
        self.logits = full_logits[:, :-1]  # a view: no copy
        self.mask = shift(full_logits, labels)[2]
        # TokenUnlearn weights if the batch has them, else the answer mask
        self.weights = shift_weights(weights) * self.mask if weights is not None else self.mask.float()
        self.hidden = hidden  # raw output of a decoder layer, UNSHIFTED [B,T,D] (RMU)

    def release(self) -> None:
        """Drop the pass's tensors once its gradient is taken (``TrainStepContext.settle_forget``): a step's
        local variable that still names this pass then no longer holds its ``[B,T,V]`` logits."""
        self._full = self.logits = self._logps = self.hidden = None

    @property
    def logps(self) -> torch.Tensor:
        """``log p(label)`` at every answer position, 0 where masked (:func:`unlearnkit.tokens.token_logps`)."""
        if self._logps is None:
            if self._full is None:
                raise RuntimeError("this forward pass was released after its backward; nothing may read it")
            self._logps = token_logps(self._full, self._labels)[0]
        return self._logps


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

    def settle_forget(self, forget_part: torch.Tensor) -> torch.Tensor:
        """Called by ``combine`` with the step's whole forget part, before any retain forward pass; what
        it returns stands for that part in the step's loss. Here the part itself (one backward pass over
        the whole loss); :class:`unlearnkit.train.trainer.TrainStepContext` may take its gradient early."""
        return forget_part

    def policy(self, batch: dict[str, torch.Tensor], hidden_layer: int | None = None) -> Forward:
        """``hidden_layer``: 0-based decoder-layer index whose raw output to keep (``Forward.hidden``)."""
        if hidden_layer is None:
            out = self.model(
                input_ids=batch["input_ids"], attention_mask=batch["attention_mask"], use_cache=False
            )
            hidden = None
        else:
            out, hidden = forward_with_layer_output(self.model, batch, hidden_layer)
        return Forward(out.logits, batch["labels"], batch.get("weights"), hidden)

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


# --- registry ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Method:
    """A method ready to train: its declaration's facts with ``step`` (and ``prepare``) imported."""

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
    layer_activations: bool = False  # reads a decoder layer's output (RMU)

    def needs_reference(self, cfg) -> bool:
        return self.uses_reference or self.uses_teacher or getattr(cfg, "retain_loss", "none") == "kl"

    def needs_idk(self, cfg) -> bool:
        return self.uses_idk or self.uses_retain_idk or bool(getattr(cfg, "idk", False))

    @classmethod
    def from_spec(cls, spec: MethodSpec) -> Method:
        return cls(
            spec.name,
            spec.config,
            objective_function(spec.step),
            spec.summary,
            spec.paper,
            uses_reference=spec.uses_reference,
            uses_teacher=spec.uses_teacher,
            uses_idk=spec.uses_idk,
            uses_retain_idk=spec.uses_retain_idk,
            token_level=spec.token_level,
            prepare=objective_function(spec.prepare) if spec.prepare else None,
            layer_activations=spec.layer_activations,
        )


def objective_function(ref: str) -> Callable:
    """``"npo:step_npo"`` -> ``unlearnkit.objectives.npo.step_npo`` (a declaration names its step so)."""
    module, _, name = ref.partition(":")
    return getattr(importlib.import_module(f"unlearnkit.objectives.{module}"), name)


METHODS: dict[str, Method] = {name: Method.from_spec(spec) for name, spec in catalog.METHODS.items()}


def get_method(name: str) -> Method:
    """The registered method ``name`` (``T_NPO`` = ``t-npo``); an unknown name is one error line."""
    return METHODS[catalog.spec(name).name]

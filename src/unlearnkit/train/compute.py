"""Compute accounting for every training command: tokens through forward and backward passes, wall time.

"Fraction of retraining compute" (UNDO, Lee et al., arXiv 2506.06278, measures robustness against it)
needs a number for every run: ``finetune``, ``unlearn`` and ``distill`` record

* ``forward_tokens``: non-padding tokens through every model forward, whatever the model is for
  (policy, frozen reference / teacher, the reference-cache build, SAM's extra pass, the probe of what
  a method needs);
* ``backward_tokens``: the tokens of the forwards that ran with gradients on. Every such forward in
  our training steps is back-propagated exactly once, so this counts tokens through backward passes;
* ``cost = forward_tokens + 2 * backward_tokens``: forward-token equivalents (a backward pass costs
  about two forwards: one product for the input gradient, one for the weight gradient). With frozen
  weights (LoRA, RMU's few trainable layers) the weight-gradient half is mostly skipped, so the cost is
  then an upper bound;
* ``wall_seconds``.

Tokens are counted by a forward pre-hook on the decoder stack (``model.model`` for Llama), which every
path goes through once per pass: PEFT wrappers, DDP, adapters-off references, attention-smoothed
teachers. Activation checkpointing recomputes layers inside the backward without calling the decoder
again, so its re-forward is not counted (it is a constant overhead of the same run, not a second pass).
A resumed run starts from the counters stored in its checkpoint (``trainer_state.json``, written in
the same file as the step it belongs to), so its totals are those of the whole run; work done after
the last checkpoint of a killed run is lost from the count, as it is from the weights.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torch
from transformers import TrainerCallback
from transformers.trainer_callback import ExportableState

from unlearnkit.errors import UserError

COUNTERS = ("forward_tokens", "backward_tokens")


def cost_of(forward_tokens: int, backward_tokens: int) -> int:
    """Forward-token equivalents: a backward pass costs about two forwards."""
    return int(forward_tokens) + 2 * int(backward_tokens)


def _decoder(model) -> torch.nn.Module:
    """The module every forward of ``model`` passes through exactly once (the decoder stack)."""
    module = model.module if hasattr(model, "module") and not hasattr(model, "config") else model  # DDP
    if hasattr(module, "get_base_model") and hasattr(module, "peft_config"):
        module = module.get_base_model()
    base = getattr(module, "base_model", None)  # transformers: the decoder of a *ForCausalLM
    return base if isinstance(base, torch.nn.Module) else module


def _tokens(args: tuple, kwargs: dict) -> torch.Tensor | int:
    mask = kwargs.get("attention_mask")
    if mask is None and len(args) > 1 and isinstance(args[1], torch.Tensor):
        mask = args[1]
    if isinstance(mask, torch.Tensor) and mask.dim() == 2:
        return mask.sum()
    ids = kwargs.get("input_ids", args[0] if args else None)
    if isinstance(ids, torch.Tensor):
        return ids.numel()
    embeds = kwargs.get("inputs_embeds")
    return embeds.shape[0] * embeds.shape[1] if isinstance(embeds, torch.Tensor) else 0


class ComputeCounter(TrainerCallback, ExportableState):
    """Counts tokens through forward / backward passes of the models it is attached to; wall seconds.

    Use: ``counter = ComputeCounter().attach(model, teacher)`` before any work to be counted (the cache
    build included), ``callbacks=[counter]`` in the Trainer, ``counter.restore(checkpoint)`` when
    resuming, ``counter.totals()`` at the end. Counts live on the device of the tokens (no host sync
    per forward); multi-process runs sum the ranks' counts when a checkpoint is saved and at the end.
    """

    def __init__(self) -> None:
        self._base = {"forward_tokens": 0, "backward_tokens": 0, "wall_seconds": 0.0}
        self._counts: dict[str, dict[torch.device, torch.Tensor]] = {"forward": {}, "backward": {}}
        self._handles: list = []
        self._attached: set[int] = set()
        self._start = time.perf_counter()
        self._snapshot: dict[str, Any] | None = None

    # --- counting -----------------------------------------------------------------------------

    def attach(self, *models) -> ComputeCounter:
        for model in models:
            if model is None:
                continue
            decoder = _decoder(model)
            if id(decoder) in self._attached:
                continue
            self._attached.add(id(decoder))
            self._handles.append(decoder.register_forward_pre_hook(self._hook, with_kwargs=True))
        return self

    def detach(self) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles.clear()
        self._attached.clear()

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """Forwards inside the block are not counted: evaluation during training and the collapse
        guard's probe (``unlearnkit.train.evaluation_callback``, ``collapse_guard``) are not unlearning
        compute."""
        counts, self._counts = self._counts, {"forward": {}, "backward": {}}
        try:
            yield
        finally:
            self._counts = counts

    def _add(self, kind: str, n) -> None:
        n = n.detach().to(torch.int64) if isinstance(n, torch.Tensor) else torch.tensor(int(n))
        counts = self._counts[kind]
        counts[n.device] = counts[n.device] + n if n.device in counts else n

    def _hook(self, module, args, kwargs):
        n = _tokens(args, kwargs)
        self._add("forward", n)
        if torch.is_grad_enabled():
            self._add("backward", n)

    def _local(self) -> tuple[int, int]:
        return tuple(int(sum(int(t) for t in self._counts[k].values())) for k in ("forward", "backward"))

    def restore(self, checkpoint: str | Path | None) -> None:
        """Start from the totals stored in ``checkpoint`` (a resumed run); missing -> start from zero."""
        if checkpoint is None:
            return
        path = Path(checkpoint) / "trainer_state.json"
        try:
            state = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return
        stored = state.get("stateful_callbacks", {}).get(type(self).__name__)
        if isinstance(stored, list):
            stored = stored[0] if stored else None
        attributes = (stored or {}).get("attributes", {})
        for key in self._base:
            if key in attributes:
                self._base[key] = type(self._base[key])(attributes[key])

    def totals(self, reduce: bool = True) -> dict[str, Any]:
        """``forward_tokens``, ``backward_tokens``, ``cost``, ``wall_seconds`` of the whole run so far.

        With ``reduce`` in a multi-process run this is a collective: every rank must call it.
        """
        fwd, bwd = self._local()
        if reduce and torch.distributed.is_available() and torch.distributed.is_initialized():
            device = next(iter(self._counts["forward"]), torch.device("cpu"))
            if torch.distributed.get_backend() == "nccl" and device.type != "cuda":
                device = torch.device("cuda", torch.cuda.current_device())
            both = torch.tensor([fwd, bwd], dtype=torch.int64, device=device)
            torch.distributed.all_reduce(both)
            fwd, bwd = (int(x) for x in both.tolist())
        fwd += int(self._base["forward_tokens"])
        bwd += int(self._base["backward_tokens"])
        wall = float(self._base["wall_seconds"]) + time.perf_counter() - self._start
        return {
            "forward_tokens": fwd,
            "backward_tokens": bwd,
            "cost": cost_of(fwd, bwd),
            "wall_seconds": round(wall, 3),
        }

    # --- Trainer integration --------------------------------------------------------------------

    def on_step_end(self, args, state, control, **kwargs):
        # DefaultFlowCallback (called before us) has decided whether this step saves; the sum over
        # ranks is a collective, so it is taken here, on every rank, not in state() (main rank only).
        if control.should_save:
            self._snapshot = self.totals()

    def state(self) -> dict:
        totals = self._snapshot if self._snapshot is not None else self.totals(reduce=False)
        self._snapshot = None
        keep = {k: totals[k] for k in (*COUNTERS, "wall_seconds")}
        return {"args": {}, "attributes": keep}


def compute_line(compute: dict[str, Any]) -> str:
    """One line for a model card: ``cost`` in forward-token equivalents, its parts, wall time."""
    line = (
        f"{compute['cost']:,} forward-token equivalents ({compute['forward_tokens']:,} tokens forward, "
        f"{compute['backward_tokens']:,} backward), {compute['wall_seconds']:.1f} s"
    )
    if "total_cost" in compute and compute["total_cost"] != compute["cost"]:
        line += f"; {compute['total_cost']:,} with the teacher's unlearning run"
    return line


def model_compute(model_dir: str | Path) -> dict[str, Any]:
    """The ``compute`` record of a model folder written by unlearnkit (``unlearnkit.json``)."""
    path = Path(model_dir) / "unlearnkit.json"
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
    except OSError:
        raise UserError(f"{model_dir}: no unlearnkit.json (was it written by unlearnkit?)") from None
    except ValueError as err:
        raise UserError(f"{path}: invalid JSON ({err})") from None
    compute = info.get("compute") if isinstance(info, dict) else None
    if not isinstance(compute, dict) or "cost" not in compute:
        raise UserError(
            f"{path} has no compute record: the model was made before unlearnkit counted compute; "
            "re-run the command that made it"
        )
    return compute


def compute_fraction(model_dir: str | Path, oracle_dir: str | Path) -> float:
    """Compute that made ``model_dir`` as a fraction of the retain oracle's fine-tuning (the retraining).

    The numerator is the whole unlearning pipeline after the target: for a distilled model its own run
    plus its teacher's unlearning run (``total_cost``); the target's own fine-tuning is not counted.
    """
    model = model_compute(model_dir)
    oracle = model_compute(oracle_dir)
    if not oracle["cost"]:
        raise UserError(f"{oracle_dir}: the oracle's recorded compute is 0; cannot divide by it")
    return float(model.get("total_cost", model["cost"])) / float(oracle["cost"])

"""What the callbacks that look at the model during training share (evaluation, the collapse guard).

* :func:`looking_at` runs a block on the live model without changing the run: eval mode and no
  gradients inside, the RNG states (Python, NumPy, torch CPU and CUDA) restored after it (lm-eval
  reseeds them all), and the compute counter paused (evaluation is not unlearning compute). So a run
  with evaluation or the guard ends with the weights of a run without them (tests check it).
* :func:`stored_attributes` reads a callback's state back from a checkpoint's ``trainer_state.json``
  (the Trainer writes an ``ExportableState`` callback's ``state()`` there, in the checkpoint folder).
* :func:`broadcast_flag` / :func:`barrier`: the main process decides, the others follow.
"""

from __future__ import annotations

import contextlib
import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import torch


@contextlib.contextmanager
def preserved_rng() -> Iterator[None]:
    """Every RNG a training step can read, as it was before the block."""
    py, np_state, cpu = random.getstate(), np.random.get_state(), torch.get_rng_state()
    cuda = torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None
    try:
        yield
    finally:
        random.setstate(py)
        np.random.set_state(np_state)
        torch.set_rng_state(cpu)
        if cuda is not None:
            torch.cuda.set_rng_state_all(cuda)


@contextlib.contextmanager
def looking_at(model, counter=None) -> Iterator[None]:
    """Eval mode, no gradients, RNG preserved, compute not counted; the model's mode restored after."""
    was_training = model.training
    paused = counter.paused() if counter is not None else contextlib.nullcontext()
    model.eval()
    try:
        with preserved_rng(), paused, torch.no_grad():
            yield
    finally:
        model.train(was_training)


def stored_attributes(checkpoint: str | Path | None, name: str) -> dict[str, Any] | None:
    """The ``attributes`` the ``ExportableState`` callback ``name`` stored in ``checkpoint`` (or None)."""
    if checkpoint is None:
        return None
    try:
        state = json.loads((Path(checkpoint) / "trainer_state.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    stored = state.get("stateful_callbacks", {}).get(name)
    if isinstance(stored, list):
        stored = stored[0] if stored else None
    return (stored or {}).get("attributes")


def distributed() -> bool:
    return torch.distributed.is_available() and torch.distributed.is_initialized()


def barrier() -> None:
    """Every process waits here until all have arrived (a no-op in a single process)."""
    if distributed():
        torch.distributed.barrier()


def broadcast_flag(flag: bool) -> bool:
    """The main process's ``flag`` on every process (a no-op in a single process)."""
    if not distributed():
        return flag
    device = torch.device("cpu")
    if torch.distributed.get_backend() == "nccl":
        device = torch.device("cuda", torch.cuda.current_device())
    value = torch.tensor([int(flag)], device=device)
    torch.distributed.broadcast(value, src=0)
    return bool(value.item())


def trainable_state(model) -> dict[str, torch.Tensor]:
    """The parameters training changes (all of them; LoRA: the adapters; RMU: its few layers), on CPU.

    Frozen weights never move, so these alone bring a model back to the state they were taken at.
    """
    return {
        name: param.detach().to("cpu", copy=True)
        for name, param in model.named_parameters()
        if param.requires_grad
    }


def load_trainable_state(model, state: dict[str, torch.Tensor]) -> None:
    """Copy ``state`` (from :func:`trainable_state`) back into ``model`` in place."""
    params = dict(model.named_parameters())
    missing = [name for name in state if name not in params]
    if missing:
        raise RuntimeError(f"saved weights name parameters the model lacks: {missing[:3]}")
    with torch.no_grad():
        for name, tensor in state.items():
            params[name].copy_(tensor.to(params[name].device, params[name].dtype))

"""Round-to-nearest (RTN) weight quantisation, as an attack on unlearning.

Zhang et al. (arXiv 2410.16454) show that quantising an unlearned model to 4 bits can bring the
"forgotten" knowledge back: methods that move the weights only a little (GA, NPO with a small
learning rate) leave a model whose quantised weights round back onto the original model's grid.
This module makes such quantised copies so the audit can measure it.

The weights are *fake-quantised*: quantised to integers and immediately multiplied back by their
scale, so the copy is an ordinary float model (same dtype, same code paths) whose weights lie on the
quantisation grid. That is numerically what an RTN int8 / int4 kernel computes, without needing one.

Scheme (symmetric, no zero point), for ``bits`` b and ``qmax = 2**(b-1) - 1``::

    scale = max|w| / qmax          over one output row (per channel) or one (row, group) block
    q     = clamp(round(w / scale), -qmax, qmax)
    w_hat = q * scale

* The range is symmetric, ``[-qmax, qmax]`` (the code ``-2**(b-1)`` is never used), so zero is exact
  and positive / negative weights are treated alike. Since ``scale`` comes from the block's own
  ``max|w|``, the clamp only guards against floating-point rounding.
* ``round`` is ``torch.round`` (ties to even).
* A block whose weights are all zero has ``scale = 0``; it stays exactly zero (no division by 0).
* Quantising an already quantised tensor gives the same tensor (up to float rounding): its largest
  entry is ``qmax * scale``, so the scale is recomputed unchanged and every entry is already a
  multiple of it.

Granularity: ``group_size=None`` quantises per output channel (one scale per row; the usual int8
scheme). Otherwise the input dimension is cut into groups of ``group_size`` columns with one scale
per (row, group) (the usual int4 scheme, e.g. GPTQ/AWQ's default ``group_size=128``). When
``in_features`` is not a multiple of ``group_size``, the largest divisor of ``in_features`` in
``[ceil(group_size / 2), group_size]`` is used instead (groups stay about as fine as asked, and all
equal); when there is none, or ``group_size >= in_features``, the row is one group (per channel).
"""

from __future__ import annotations

import copy

import torch
from torch import nn


def _check_bits(bits: int) -> int:
    if isinstance(bits, bool) or not isinstance(bits, int) or not 2 <= bits <= 16:
        raise ValueError(f"bits must be an integer in [2, 16], got {bits!r}")
    return 2 ** (bits - 1) - 1


def effective_group_size(in_features: int, group_size: int | None) -> int | None:
    """The group size actually used for a row of ``in_features`` weights (``None`` = per channel)."""
    if group_size is None:
        return None
    if isinstance(group_size, bool) or not isinstance(group_size, int) or group_size < 1:
        raise ValueError(f"group_size must be a positive integer or None, got {group_size!r}")
    if group_size >= in_features:
        return None
    if in_features % group_size == 0:
        return group_size
    for size in range(group_size - 1, (group_size + 1) // 2 - 1, -1):
        if size >= 1 and in_features % size == 0:
            return size
    return None


@torch.no_grad()
def quantize_rtn(weight: torch.Tensor, bits: int, group_size: int | None = None) -> torch.Tensor:
    """Fake-quantised copy of a 2-D ``[out, in]`` weight (see the module docstring for the scheme).

    Computed in float32 and returned in ``weight``'s dtype and device; ``weight`` is not modified.
    """
    qmax = _check_bits(bits)
    if weight.dim() != 2:
        raise ValueError(f"quantize_rtn expects a 2-D [out, in] weight, got shape {tuple(weight.shape)}")
    rows, cols = weight.shape
    w = weight.detach().to(torch.float32)
    size = effective_group_size(cols, group_size)
    blocks = w.reshape(rows, 1, cols) if size is None else w.reshape(rows, cols // size, size)
    scale = blocks.abs().amax(dim=-1, keepdim=True) / qmax
    safe = torch.where(scale > 0, scale, torch.ones_like(scale))
    q = torch.clamp(torch.round(blocks / safe), -qmax, qmax)
    out = torch.where(scale > 0, q * scale, torch.zeros_like(blocks))
    return out.reshape(rows, cols).to(weight.dtype)


def _embedding_pointers(model: nn.Module) -> set[int]:
    """Storage pointers of every input embedding matrix (to recognise a tied ``lm_head``)."""
    tables = [m.weight for m in model.modules() if isinstance(m, nn.Embedding)]
    get = getattr(model, "get_input_embeddings", None)
    emb = get() if callable(get) else None
    if emb is not None and isinstance(getattr(emb, "weight", None), torch.Tensor):
        tables.append(emb.weight)
    return {t.data_ptr() for t in tables}


def quantizable_linears(model: nn.Module) -> list[str]:
    """Names of the ``nn.Linear`` layers :func:`quantized_copy` quantises.

    Every ``nn.Linear`` except one whose weight is tied to the input embedding (the ``lm_head`` of a
    model with ``tie_word_embeddings``): quantising it would also quantise the embedding table, which
    RTN weight-only schemes (and int4 checkpoints in practice) keep in full precision. An untied
    ``lm_head`` is an ordinary linear layer and is quantised.
    """
    tied = _embedding_pointers(model)
    return [
        name
        for name, module in model.named_modules()
        if isinstance(module, nn.Linear) and module.weight.data_ptr() not in tied
    ]


def quantized_copy(model: nn.Module, bits: int, group_size: int | None = 128) -> nn.Module:
    """A deep copy of ``model`` whose linear weights are RTN fake-quantised; ``model`` is unchanged.

    ``bits >= 8`` quantises per output channel (``group_size`` is ignored: int8 weight schemes use
    one scale per row); ``bits < 8`` quantises in groups of ``group_size`` input columns (``None`` =
    per channel). Biases, norms and embeddings stay in full precision; see :func:`quantizable_linears`
    for which layers are quantised. The copy needs as much memory as the model.
    """
    _check_bits(bits)
    size = None if bits >= 8 else group_size
    effective_group_size(10**6, size)  # validate group_size before copying anything
    names = set(quantizable_linears(model))
    quant = copy.deepcopy(model)
    for name, module in quant.named_modules():
        if name in names and isinstance(module, nn.Linear):
            with torch.no_grad():
                module.weight.copy_(quantize_rtn(module.weight, bits, size))
    quant.eval()
    return quant

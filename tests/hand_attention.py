"""A hand-written attention to check the ASU teacher against (tests/test_attention.py, bench/architectures.py).

``recorded_eager_inputs`` records the query and key vectors every layer hands to its model file's own
``eager_attention_forward`` (after projections, norms and RoPE); ``hand_attention`` turns them into
probabilities with nothing but a float64 matrix product, the masks written out here and a softmax:

    softmax(cap(s * q k^T) / tau)  over causal (and sliding-window) keys that are not padding,

with s = 1/sqrt(d) and no cap for every architecture but Gemma 2 (s = 1/sqrt(query_pre_attn_scalar),
logit soft-capping) and GPT-2 with ``scale_attn_by_inverse_layer_idx`` (s = 1/(sqrt(d) (layer + 1))).
"""

from __future__ import annotations

import contextlib
import sys

import torch
from torch import nn


def _attention_module_file(model: nn.Module):
    for module in model.modules():
        file = sys.modules.get(type(module).__module__)
        if "Attention" in type(module).__name__ and callable(getattr(file, "eager_attention_forward", None)):
            return file
    raise AssertionError(f"{type(model).__name__}: no attention module with an eager_attention_forward")


@contextlib.contextmanager
def recorded_eager_inputs(model: nn.Module):
    """While active, each call of the model's eager attention appends ``(query, key)`` to the yielded list
    (keys before grouped-query repetition)."""
    import unlearnkit.attention as attention_module

    file = _attention_module_file(model)
    stock = file.eager_attention_forward
    cache = attention_module._EAGER_CACHE
    calls: list[tuple[torch.Tensor, torch.Tensor]] = []

    def spy(mod, query, key, value, attention_mask, **kwargs):
        calls.append((query.detach().clone(), key.detach().clone()))
        return stock(mod, query, key, value, attention_mask, **kwargs)

    file.eager_attention_forward = spy
    attention_module._EAGER_CACHE = {}  # resolve the spy, not a cached original
    try:
        yield calls
    finally:
        file.eager_attention_forward = stock
        attention_module._EAGER_CACHE = cache


def stock_scale(model: nn.Module, layer: int, head_dim: int) -> tuple[float, float | None]:
    """``(s, softcap)``: the architecture's documented logit scale and cap, from its config alone."""
    cfg = model.config
    scale = head_dim**-0.5
    if getattr(cfg, "query_pre_attn_scalar", None) is not None:
        scale = cfg.query_pre_attn_scalar**-0.5
    if getattr(cfg, "scale_attn_by_inverse_layer_idx", False):
        scale /= layer + 1
    return scale, getattr(cfg, "attn_logit_softcapping", None)


def window_of(model: nn.Module, layer: int) -> int | None:
    """The sliding window of ``layer`` (None: global attention)."""
    cfg = model.config
    types = getattr(cfg, "layer_types", None)
    if types is not None:
        return cfg.sliding_window if types[layer] == "sliding_attention" else None
    return getattr(cfg, "sliding_window", None)


def hand_attention(q, k, pad_mask, scale, softcap, tau, window) -> torch.Tensor:
    """softmax(cap(scale * q k^T) / tau) over the causal (+ sliding window) keys that are not padding."""
    k = k.repeat_interleave(q.shape[1] // k.shape[1], dim=1)  # grouped-query: each kv head serves n queries
    logits = (q.double() @ k.double().transpose(-1, -2)) * scale
    if softcap is not None:
        logits = softcap * torch.tanh(logits / softcap)
    logits = logits / tau
    n = q.shape[2]
    i = torch.arange(n)[:, None]
    j = torch.arange(n)[None, :]
    allowed = (j <= i) & ((i - j < window) if window is not None else True)
    allowed = allowed[None, None] & pad_mask.bool()[:, None, None, :]
    return torch.softmax(logits.masked_fill(~allowed, float("-inf")), dim=-1)


def max_diff_at_valid_queries(a: torch.Tensor, b: torch.Tensor, pad_mask: torch.Tensor) -> float:
    """Largest |a - b| over the queries that are real tokens (padded queries attend to nothing real)."""
    valid_q = pad_mask.bool()[:, None, :, None]
    return float((a.double() - b.double()).abs().masked_fill(~valid_q, 0).max())


def teacher_vs_hand(model: nn.Module, ids: torch.Tensor, mask: torch.Tensor, tau: float) -> list[float]:
    """Per layer, max |teacher attention - hand_attention| at the real queries (the ASU teacher =
    ``smoothed_attention(model, tau)``, read through ``attention_weights``)."""
    from unlearnkit.attention import attention_weights, smoothed_attention

    with recorded_eager_inputs(model) as calls, smoothed_attention(model, tau):
        probs = attention_weights(model, ids, mask)
    assert len(calls) == len(probs), (len(calls), len(probs))
    out = []
    for layer, ((q, k), got) in enumerate(zip(calls, probs)):
        scale, softcap = stock_scale(model, layer, q.shape[-1])
        want = hand_attention(q, k, mask, scale, softcap, tau, window_of(model, layer))
        out.append(max_diff_at_valid_queries(got, want, mask))
    return out

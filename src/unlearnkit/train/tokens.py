"""The one place where labels are shifted and the answer-token mask is built.

Every objective and metric works on *aligned* tensors of shape ``[B, T-1]``: position ``t`` holds
the prediction of token ``t+1`` from the logits at ``t``. "Answer tokens" are label positions that
are not ``IGNORE_INDEX`` (the question is masked out; the EOS after the answer counts).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from unlearnkit.data.encode import IGNORE_INDEX


def shift(logits: torch.Tensor, labels: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Align ``logits [B,T,V]`` with next-token ``labels [B,T]``.

    Returns ``(logits [B,T-1,V], targets [B,T-1] with ignored positions set to 0, mask [B,T-1] bool)``.
    """
    if logits.shape[:2] != labels.shape:
        raise ValueError(f"logits {tuple(logits.shape)} and labels {tuple(labels.shape)} do not align")
    logits = logits[:, :-1]
    labels = labels[:, 1:]
    mask = labels != IGNORE_INDEX
    return logits, labels.masked_fill(~mask, 0), mask


def shifted_targets(labels: torch.Tensor) -> torch.Tensor:
    """Next-token ids aligned with ``logits[:, :-1]``: ``[B,T-1]``, ignored positions set to 0 (a valid id)."""
    labels = labels[:, 1:]
    return labels.masked_fill(labels == IGNORE_INDEX, 0)


def shift_weights(weights: torch.Tensor) -> torch.Tensor:
    """Per-token weights stored at label positions ``[B,T]`` -> aligned ``[B,T-1]``."""
    return weights[:, 1:]


def token_logps(logits: torch.Tensor, labels: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """log p(label) at every answer position: ``(logps [B,T-1] (0 where masked), mask [B,T-1])``.

    One fused log-softmax + pick in float32 (``F.cross_entropy``, as open-unlearning's loss) on the
    unsliced logits: no ``[B,T-1,V]`` copy, and about half the time of gather minus logsumexp on the
    vocabulary-sized head (fwd + bwd, CPU, ``[8,128,32000]``: 0.20 s vs 0.42 s).
    """
    _, _, mask = shift(logits, labels)
    next_labels = torch.cat([labels[:, 1:], labels.new_full((labels.shape[0], 1), IGNORE_INDEX)], dim=1)
    vocab = logits.shape[-1]
    nll = F.cross_entropy(
        logits.float().reshape(-1, vocab),
        next_labels.reshape(-1),
        ignore_index=IGNORE_INDEX,
        reduction="none",
    )
    logps = -nll.view(labels.shape)[:, :-1]
    return logps * mask, mask


def sequence_mean(values: torch.Tensor, weights: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Weighted mean over tokens of each row: ``(means [B], valid [B] bool)``; empty rows give 0."""
    total = weights.sum(-1)
    valid = total > 0
    means = (values * weights).sum(-1) / total.clamp_min(1e-12)
    return means * valid, valid


def batch_mean(per_row: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
    """Mean over rows that have at least one token; 0 (still attached to the graph) if none."""
    if not bool(valid.any()):
        return per_row.sum() * 0.0
    return per_row[valid].mean()


def nll_per_sequence(logits: torch.Tensor, labels: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``(NLL_mean [B], NLL_sum [B])`` over answer tokens (TOFU's prob = exp(-NLL_mean))."""
    logps, mask = token_logps(logits, labels)
    nll_sum = -logps.sum(-1)
    return nll_sum / mask.sum(-1).clamp_min(1), nll_sum

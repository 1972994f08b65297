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


def token_logps(
    logits: torch.Tensor, labels: torch.Tensor, exact: bool = False
) -> tuple[torch.Tensor, torch.Tensor]:
    """log p(label) at every answer position: ``(logps [B,T-1] (0 where masked), mask [B,T-1])``.

    Two float32 paths, both on the unsliced logits (no ``[B,T-1,V]`` copy):

    * ``exact=False`` (training: every loss): one fused log-softmax + pick (``F.cross_entropy``, as
      open-unlearning's loss); forward + backward of the vocabulary-sized head about 1.6-2.4x faster
      than the exact path on CPU (``[8,128,32000]``, one thread, a shared machine: 0.23 s vs
      0.37-0.43 s, and 0.36 s vs 0.87 s under load). Its CPU
      kernel accumulates the softmax denominator in float32 lanes, so its error grows with the
      vocabulary: measured against float64 on peaked logits (std 4) max |diff| 1.8e-6 at V = 512,
      7e-6 at 32000, 2.0e-5 at 128256, 2.5e-5 at 151936 (the commit that introduced it said
      1.9e-6: true at the tiny model's vocabulary only). Irrelevant for a loss (SGD noise is many
      orders larger), so training keeps the speed.
    * ``exact=True`` (evaluation: :func:`unlearnkit.metrics.passes.score_answers`): gather minus
      ``torch.logsumexp``, whose pairwise sum keeps the error at about one float32 ulp of the
      log-normaliser at every vocabulary (measured <= 2.0e-6 up to V = 151936). The reported
      probabilities, truth ratios and MIA scores are what parity with the reference code is claimed
      on (docs/CONVENTIONS.md: <= 1.5e-5), so they must not carry a 2.5e-5 error of our own. There
      is no backward there, and forward only the exact head costs about 15-25 % more (0.16 s vs
      0.14 s on ``[8,128,32000]``), a small share of a real model's evaluation forward pass.

    Tolerances for both: tests/tolerances.py (``FUSED_LOGP_ATOL``, ``EXACT_LOGP_ATOL``).
    """
    _, _, mask = shift(logits, labels)
    if exact:
        targets = torch.cat([labels[:, 1:], labels.new_zeros((labels.shape[0], 1))], dim=1)
        targets = targets.masked_fill(targets == IGNORE_INDEX, 0)
        full = logits.float()
        picked = full.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
        logps = (picked - torch.logsumexp(full, dim=-1))[:, :-1]
        return logps * mask, mask
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

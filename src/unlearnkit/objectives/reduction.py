"""How per-token loss values become one number: ``loss_reduction = sequence | token``.

* ``sequence``: the weighted mean over each row's tokens, then the mean over rows that have any
  weighted token. Every example counts the same, however long its answer (the NLL_mean of the
  unlearning papers, the ASU paper's eq. for L_ASU).
* ``token``: one weighted mean over every weighted token of the batch, ``sum(w * v) / sum(w)``. Long
  answers count more. This is what a Hugging Face ``model(..., labels=...).loss`` computes, and so what
  the TOFU code (arXiv 2401.06121), open-unlearning (GA, GradDiff, IDK, WGA, retain NLL) and the ASU
  authors' retain NLL (arXiv 2603.01285) use.

The two agree exactly when every row has the same total weight; on a mixed-length batch the
gradients differ (measured: 2.5 % on a TOFU batch, 26 % on the ASU retain term). Both give 0, still
attached to the graph, when no token is weighted.
"""

from __future__ import annotations

import torch

from unlearnkit.tokens import batch_mean, sequence_mean

REDUCTIONS = ("sequence", "token")


def reduce_tokens(values: torch.Tensor, weights: torch.Tensor, reduction: str = "sequence") -> torch.Tensor:
    """Reduce per-token ``values [B,T]`` with ``weights [B,T]`` (0 outside the answer) to a scalar.

    Args:
        values (`Tensor [B,T]`): per-token loss values (anything at zero-weight positions is ignored).
        weights (`Tensor [B,T]`): the answer mask or TokenUnlearn weights.
        reduction (`str`, defaults to ``"sequence"``): ``sequence`` (per-row mean, then over rows) or
            ``token`` (one mean over all weighted tokens of the batch).
    """
    if reduction not in REDUCTIONS:
        raise ValueError(f"loss_reduction={reduction!r} is invalid: use one of {REDUCTIONS}")
    # torch.where (not a product) so inf / NaN at zero-weight positions cannot leak in as 0 * inf.
    values = torch.where(weights != 0, values, torch.zeros((), dtype=values.dtype, device=values.device))
    if reduction == "sequence":
        per_row, valid = sequence_mean(values, weights)
        return batch_mean(per_row, valid)
    total = weights.sum()
    if not bool(total > 0):
        return values.sum() * 0.0
    return (values * weights).sum() / total

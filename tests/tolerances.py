"""Tolerances for comparing one number computed two ways, each derived from what differs between the two.

Use the constant that names the difference; never a bare ``rel=1e-5`` copied from another test.

* ``SAME_LOGITS_REL``: an fp32 loss or metric vs a float64 re-computation from the SAME fp32 logits
  (the parity tests' hand computations). Only the arithmetic after the logits differs: an fp32
  log-softmax over V <= 2k entries and a mean over T <= 64 tokens add at most about
  (log2 V + T) * 2**-24 * 4 ~ 1e-6 relative on any CPU; 1e-5 leaves a factor of ten.
* ``REORDERED_FORWARD_LOGP_ATOL``: per-token log-probabilities from two fp32 forward passes of one
  model whose inputs are laid out differently (a padded batch vs a single unpadded row, another
  batch size, another thread count or CPU kernel). The same sums run in another order and through
  other kernels (masked vs unmasked SDPA, blocked matmuls), so they agree only to a number of ulps of
  the activations' scale: measured 6e-8 on one machine and 2.5e-5 on another (issue 22), so 1e-4 nats.
* ``REORDERED_FORWARD_RATIO_REL``: a ratio or option-normalised probability built as exp(a - b) of two
  such mean NLLs (TOFU's truth ratio, P_true / sum P): |d ln x| <= |da| + |db|, so twice the above.
* ``SAME_QK_PROBS_ATOL``: attention probabilities from the SAME fp32 query and key vectors, by the
  model's fp32 eager attention and by a float64 hand-written softmax (tests/test_attention.py). Only the
  fp32 rounding of q k^T differs: with head size d = 4 and logits |l| <= 20 each logit is off by at most
  d * |l| * 2**-24 ~ 5e-6, and a softmax moves each probability by at most twice the largest logit
  error: 1e-5 (measured <= 3e-7 on the tiny models).
* ``RECOMPUTED_STEP_REL``: the same training run with and without activation checkpointing. The
  checkpointed forward is recomputed by the same kernels on the same inputs in the same order, so
  losses and weights are bit-identical on CPU (measured: 0 difference); 1e-6 relative only admits a
  kernel that reorders one reduction when it recomputes.
* ``LAYOUT_WEIGHT_ATOL`` / ``LAYOUT_LOSS_TOL``: one training run laid out another way (batch 8 x
  accumulation 1 vs batch 4 x accumulation 2 vs 2 processes x batch 4, bench/reproducibility.py), with
  ``loss_reduction=sequence``. Every step sums the same per-example terms, grouped differently: the
  losses differ by fp32 reordering of <= 16 row terms, ~1e-7 relative (measured <= 1e-7 relative to
  max(1, |loss|)); 1e-5 leaves a factor of 100. The weights then differ by what AdamW makes of
  gradients that differ by that rounding: its step lr * m / (sqrt(v) + eps) is insensitive to a
  relative change of a gradient element, except for elements that cancel to about eps (1e-8), where
  the rounding of their terms can move the step by up to lr. Measured <= 8e-7 after 2 steps at lr 1e-3
  (< 0.1 % of lr), so 1e-5 = 1 % of lr. ``loss_reduction=token`` misses it by the size of the update
  itself (5e-4 to 3e-3), which is what tests/test_reproducibility.py shows.
"""

SAME_LOGITS_REL = 1e-5
REORDERED_FORWARD_LOGP_ATOL = 1e-4
REORDERED_FORWARD_RATIO_REL = 2 * REORDERED_FORWARD_LOGP_ATOL
SAME_QK_PROBS_ATOL = 1e-5
RECOMPUTED_STEP_REL = 1e-6
LAYOUT_WEIGHT_ATOL = 1e-5
LAYOUT_LOSS_TOL = 1e-5

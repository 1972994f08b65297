"""Tolerances for comparing one number computed two ways, each derived from what differs between the two.

Use the constant that names the difference; never a bare ``rel=1e-5`` copied from another test.

* ``EXACT_LOGP_ATOL``: per-token log-probabilities from ``token_logps(..., exact=True)`` (evaluation:
  fp32 gather minus ``torch.logsumexp``) vs float64 from the SAME fp32 logits. logsumexp sums the
  V shifted exponentials pairwise, so the sum's relative error is about log2(V) * 2**-24 (1e-6 at
  V = 152k), which is its absolute error in log space; the log and the final subtraction each round
  at most 2**-24 * 32 = 1.9e-6 for |logit|, |log-normaliser| <= 32 (any language model's). Sum:
  <= 5e-6 nats at any vocabulary; measured <= 2.0e-6 from V = 512 to 151936 (logits of std 4).
* ``FUSED_LOGP_ATOL``: the same, from the fused training path (``exact=False``: ``F.cross_entropy``).
  Its CPU kernel accumulates the softmax denominator in float32 SIMD lanes one term after another,
  so the error grows with the vocabulary instead of staying at an ulp: the worst case,
  (V / lanes) * 2**-24, is 1e-3 at V = 152k, far from what happens; measured on peaked logits
  (std 4; one thread; this project's CPU) 1.8e-6 at V = 512, 7e-6 at 32000, 2.0e-5 at 128256,
  2.5e-5 at 151936 (the fused path's commit message said 1.9e-6: the tiny vocabulary's number).
  1e-4 nats: four times the largest vocabulary measured. A bound from measurement, not from a proof:
  it documents what the docstring of ``tokens.py`` claims and fails if a kernel gets worse.
* ``SAME_LOGITS_REL``: an fp32 loss or metric vs a float64 re-computation from the SAME fp32 logits
  (the parity tests' hand computations, on the test models' 512-token vocabulary). Only the
  arithmetic after the logits differs: the fused log-softmax at V = 512 errs by <= 2e-6 nats
  (``FUSED_LOGP_ATOL``'s measurement), i.e. 3e-7 of a ~6-nat loss, and a float32 mean over T <= 64
  tokens adds at most T * 2**-24 = 3.8e-6 relative; 1e-5 leaves a factor of two over both. At a
  real model's vocabulary (32k+) use ``FUSED_LOGP_ATOL`` / ``EXACT_LOGP_ATOL`` instead.
* ``REORDERED_FORWARD_LOGP_ATOL``: per-token log-probabilities from two fp32 forward passes of one
  model whose inputs are laid out differently (a padded batch vs a single unpadded row, another
  batch size, another thread count or CPU kernel). The same sums run in another order and through
  other kernels (masked vs unmasked SDPA, blocked matmuls), so they agree only to a number of ulps of
  the activations' scale: measured 6e-8 on one machine and 2.5e-5 on another, so 1e-4 nats.
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
  the rounding of their terms can move the step by up to lr. Measured <= 1.5e-6 after 2 steps at lr 1e-3
  on one host, 3.7e-5 on another (T-NPO, one element of one down_proj whose own update is 1.6e-5): the
  largest element is the wrong thing to judge, since which element cancels and how far its rounding
  goes depends on the CPU's kernels. ``LAYOUT_UPDATE_RTOL`` judges the whole update instead:
  ||update_a - update_b|| / ||update_a|| over all weights. k elements at the eps floor contribute at most
  sqrt(k) * lr against an update of ~lr * sqrt(n) (n ~ 2e4 weights moving): ~7e-3 * sqrt(k / n); 1e-3
  admits a few such elements, while a layout that changes the gradient's direction moves every element.
  ``loss_reduction=token`` misses it by the size of the update itself (5e-4 to 3e-3 per element, a
  relative update difference of order 1e-1), which is what tests/test_reproducibility.py shows.
  ``LAYOUT_WEIGHT_ATOL`` (1 % of lr) remains the yardstick the token rows are shown to miss.
* ``REORDERED_TEACHER_ADAM_STEP``: weights trained with AdamW against one teacher's outputs obtained
  two ways (``distill``'s cache: forwards over other batches, lengths and paddings, before training;
  a frozen copy: forwards over the training batch itself), i.e. teacher log-probs that differ by at
  most d = ``REORDERED_FORWARD_LOGP_ATOL``. The KL gradient on the student's logits is q - p, so it
  moves by |dp| <= d * p, relative d * p / |q - p| ~ d while the student is far from its teacher (a
  fresh or noised student's first steps, as in the tests). AdamW's step lr * m / (sqrt(v) + eps) is
  scale-free in the gradient: a relative change d of the gradient changes m and sqrt(v) by d each,
  the step by at most 2 d * lr per coordinate. So after k steps at learning rate lr the weights agree
  to k * lr * 2 d (the students' own drift feeds back at second order). Measured: 3.8e-8 after 6
  steps at lr 1e-2 (bound 1.2e-5); a wrong teacher output (another example's) moves them by ~k * lr.
* ``CURVE_ROUNDING_ATOL``: a metric of ``unlearn --eval-every``'s curve (stored rounded to 6 decimals,
  ``unlearnkit.train.evaluation_callback``) vs the same metric recomputed on the same weights by the
  same code: only the rounding differs, at most half a unit of the 6th decimal.
* ``BF16_LOSS_REL``: a training loss of the same run in bfloat16 (``--dtype bfloat16``: bf16 weights,
  bf16 matmuls under autocast) vs float32, a few steps from the same weights. bf16 keeps 8 significant
  bits (relative rounding 2**-9 = 0.2 %) in each weight and activation; the log-softmax, KL and NPO /
  RMU maths then run in float32 on those logits (``tokens.token_logps`` and ``objectives/*`` cast with
  ``.float()``), so a per-token log-prob of a logit of size <= 8 errs by <= 2 * 8 * 2**-9 = 0.03 nats,
  0.5 % of a ~6-nat loss: 1 % relative (measured about 1e-5 on the tiny models).
* ``BF16_LOG_ATOL``: an evaluation number built from mean NLLs (probability exp(-NLL), truth ratio,
  option-normalised probability) by a bfloat16 model vs its float32 twin, compared in log space: the
  same 0.03 nats per mean NLL, and a ratio of two of them (truth ratio) up to twice that: 0.1 nats
  (measured <= 0.01 on the tiny models).
"""

EXACT_LOGP_ATOL = 5e-6
FUSED_LOGP_ATOL = 1e-4
SAME_LOGITS_REL = 1e-5
REORDERED_FORWARD_LOGP_ATOL = 1e-4
REORDERED_FORWARD_RATIO_REL = 2 * REORDERED_FORWARD_LOGP_ATOL
SAME_QK_PROBS_ATOL = 1e-5
RECOMPUTED_STEP_REL = 1e-6
LAYOUT_WEIGHT_ATOL = 1e-5
LAYOUT_UPDATE_RTOL = 1e-3
LAYOUT_LOSS_TOL = 1e-5
REORDERED_TEACHER_ADAM_STEP = 2 * REORDERED_FORWARD_LOGP_ATOL  # x steps x lr
CURVE_ROUNDING_ATOL = 5e-7
BF16_LOSS_REL = 1e-2
BF16_LOG_ATOL = 0.1

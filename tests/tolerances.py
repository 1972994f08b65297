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
"""

SAME_LOGITS_REL = 1e-5
REORDERED_FORWARD_LOGP_ATOL = 1e-4
REORDERED_FORWARD_RATIO_REL = 2 * REORDERED_FORWARD_LOGP_ATOL
REORDERED_TEACHER_ADAM_STEP = 2 * REORDERED_FORWARD_LOGP_ATOL  # x steps x lr

"""Hand-worked checks for unlearnkit.metrics.mia (expected arithmetic in the comments)."""

from __future__ import annotations

import math
import zlib

import pytest
import torch

from unlearnkit.metrics.mia import (
    logprob_stats,
    loss_score,
    min_k_plus_plus_score,
    min_k_score,
    zlib_score,
)
from unlearnkit.metrics.scores import auc

T_, F_ = True, False
NEG_INF = float("-inf")

# Row 0: 4 target tokens. Row 1: 2 target tokens then padding (-inf must be ignored via the mask).
LOGPS = torch.tensor([[-1.0, -2.0, -3.0, -4.0], [-0.5, -1.5, NEG_INF, NEG_INF]])
MASK = torch.tensor([[T_, T_, T_, T_], [T_, T_, F_, F_]])


def test_loss_score_hand_worked():
    # row 0: (-1 - 2 - 3 - 4) / 4 = -2.5; row 1: (-0.5 - 1.5) / 2 = -1.0 (padding ignored).
    out = loss_score(LOGPS, MASK)
    assert out.shape == (2,)
    assert torch.allclose(out, torch.tensor([-2.5, -1.0]))


def test_zlib_score_hand_worked():
    # zlib.compress(b"abc") = 2-byte header + 5-byte fixed-Huffman block + 4-byte Adler-32 = 11 bytes;
    # b"a" -> 2 + 3 + 4 = 9 bytes.
    assert len(zlib.compress(b"abc")) == 11
    assert len(zlib.compress(b"a")) == 9
    # row 0: -NLL_mean / zlib_len = -2.5 / 11; row 1: -1.0 / 9.
    out = zlib_score(LOGPS, MASK, ["abc", "a"])
    assert torch.allclose(out, torch.tensor([-2.5 / 11, -1.0 / 9]))


def test_zlib_score_text_count_mismatch():
    with pytest.raises(ValueError):
        zlib_score(LOGPS, MASK, ["only one"])


def test_min_k_score_hand_worked():
    # k = 0.5: row 0 keeps int(0.5*4) = 2 lowest {-4, -3} -> -3.5; row 1 keeps int(0.5*2) = 1 -> -1.5.
    assert torch.allclose(min_k_score(LOGPS, MASK, k=0.5), torch.tensor([-3.5, -1.5]))
    # k = 0.4 (default): row 0 int(1.6) = 1 -> -4; row 1 int(0.8) = 0 -> max(1, 0) = 1 -> -1.5.
    assert torch.allclose(min_k_score(LOGPS, MASK), torch.tensor([-4.0, -1.5]))
    # k = 1 averages everything = loss score.
    assert torch.allclose(min_k_score(LOGPS, MASK, k=1.0), loss_score(LOGPS, MASK))


def test_min_k_score_invalid_k():
    with pytest.raises(ValueError):
        min_k_score(LOGPS, MASK, k=0.0)
    with pytest.raises(ValueError):
        min_k_score(LOGPS, MASK, k=1.5)


def test_min_k_plus_plus_hand_worked():
    mu = torch.tensor([[-1.0, -1.0, -1.0, -1.0], [-1.0, -1.0, 0.0, 0.0]])
    sigma = torch.tensor([[1.0, 2.0, 0.5, 1.5], [0.25, 1.0, 0.0, 0.0]])
    # row 0 z = (logp - mu) / sigma = [0/1, -1/2, -2/0.5, -3/1.5] = [0, -0.5, -4, -2].
    # row 1 z = [0.5/0.25, -0.5/1] = [2, -0.5]; padded positions (sigma 0, logp -inf) ignored.
    # k = 0.5: row 0 mean(-4, -2) = -3; row 1 lowest 1 -> -0.5.
    out = min_k_plus_plus_score(LOGPS, mu, sigma, MASK, k=0.5)
    assert torch.allclose(out, torch.tensor([-3.0, -0.5]))
    # k = 1: row 0 mean(0, -0.5, -4, -2) = -1.625; row 1 mean(2, -0.5) = 0.75.
    out = min_k_plus_plus_score(LOGPS, mu, sigma, MASK, k=1.0)
    assert torch.allclose(out, torch.tensor([-1.625, 0.75]))


def test_min_k_plus_plus_sigma_zero_is_finite():
    # sigma = 0 is guarded by eps: (-1 - -1)/eps = 0 and (-2 - -1)/1e-6 = -1e6, both finite.
    logps = torch.tensor([[-1.0], [-2.0]], dtype=torch.float64)
    mu = torch.tensor([[-1.0], [-1.0]], dtype=torch.float64)
    sigma = torch.zeros(2, 1, dtype=torch.float64)
    out = min_k_plus_plus_score(logps, mu, sigma, torch.ones(2, 1, dtype=torch.bool), k=1.0, eps=1e-6)
    assert torch.isfinite(out).all()
    assert torch.allclose(out, torch.tensor([0.0, -1e6], dtype=torch.float64))


def test_min_k_plus_plus_shape_mismatch():
    with pytest.raises(ValueError):
        min_k_plus_plus_score(LOGPS, torch.zeros(2, 3), torch.ones(2, 4), MASK)


def test_logprob_stats_hand_worked_three_token_vocab():
    # p = [0.5, 0.25, 0.25] -> log p = [-ln2, -2 ln2, -2 ln2].
    # mu = 0.5*(-ln2) + 0.25*(-2 ln2) * 2 = -1.5 ln2 = -1.039721.
    # var = 0.5*(0.5 ln2)^2 + 0.5*(0.5 ln2)^2 = 0.25 ln2^2 -> sigma = 0.5 ln2 = 0.346574.
    # Row 1: uniform over 3 -> mu = -ln3, sigma = 0. A constant shift of the logits changes nothing.
    logits = torch.tensor(
        [
            [
                [math.log(0.5), math.log(0.25), math.log(0.25)],
                [math.log(0.5) + 3, math.log(0.25) + 3, math.log(0.25) + 3],
            ],
            [[0.0, 0.0, 0.0], [5.0, 5.0, 5.0]],
        ]
    )
    mu, sigma = logprob_stats(logits)
    ln2, ln3 = math.log(2), math.log(3)
    assert mu.shape == (2, 2) and sigma.shape == (2, 2)
    assert torch.allclose(mu, torch.tensor([[-1.5 * ln2, -1.5 * ln2], [-ln3, -ln3]]), atol=1e-6)
    assert torch.allclose(sigma, torch.tensor([[0.5 * ln2, 0.5 * ln2], [0.0, 0.0]]), atol=1e-6)


def test_logprob_stats_minus_inf_logit():
    # p = [0.5, 0.5, 0]: the zero-probability entry contributes 0 (not 0 * -inf = nan).
    mu, sigma = logprob_stats(torch.tensor([[[0.0, 0.0, NEG_INF]]]))
    assert torch.allclose(mu, torch.tensor([[-math.log(2)]]))
    assert torch.allclose(sigma, torch.tensor([[0.0]]), atol=1e-7)


def test_min_k_plus_plus_end_to_end_from_logits():
    # Position distribution p = [0.5, 0.25, 0.25]: mu = -1.5 ln2, sigma = 0.5 ln2.
    # Target token 0: z = (-ln2 + 1.5 ln2) / (0.5 ln2) = +1 (the mode: member-like).
    # Target token 1: z = (-2 ln2 + 1.5 ln2) / (0.5 ln2) = -1.
    logits = torch.log(torch.tensor([[[0.5, 0.25, 0.25], [0.5, 0.25, 0.25]]])).expand(2, 2, 3)
    targets = torch.tensor([[0, 0], [1, 1]])
    logps = torch.log_softmax(logits, dim=-1).gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    mu, sigma = logprob_stats(logits)
    out = min_k_plus_plus_score(logps, mu, sigma, torch.ones(2, 2, dtype=torch.bool), k=0.5)
    assert torch.allclose(out, torch.tensor([1.0, -1.0]), atol=1e-5)


@pytest.mark.parametrize(
    "call",
    [
        lambda lp, m: loss_score(lp, m),
        lambda lp, m: zlib_score(lp, m, ["a", "b"]),
        lambda lp, m: min_k_score(lp, m),
        lambda lp, m: min_k_plus_plus_score(lp, torch.zeros_like(lp), torch.ones_like(lp), m),
    ],
)
def test_fully_masked_row_raises_naming_row(call):
    mask = torch.tensor([[T_, T_], [F_, F_]])
    with pytest.raises(ValueError, match=r"row\(s\) \[1\]"):
        call(torch.zeros(2, 2), mask)


def test_scores_feed_auc_with_higher_is_member():
    # Members (trained-on) have higher log-probs than non-members -> every score gives AUC 1.
    member = torch.tensor([[-0.1, -0.2], [-0.3, -0.1]])
    nonmember = torch.tensor([[-2.0, -3.0], [-2.5, -1.5]])
    mask = torch.ones(2, 2, dtype=torch.bool)
    for fn in (loss_score, min_k_score):
        assert auc(fn(member, mask).tolist(), fn(nonmember, mask).tolist()) == 1.0
    zm = zlib_score(member, mask, ["ab", "ab"]).tolist()
    zn = zlib_score(nonmember, mask, ["ab", "ab"]).tolist()
    assert auc(zm, zn) == 1.0

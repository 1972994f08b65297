"""Baseline objectives (SimNPO, DPO/IdkDPO, AP, ME, UNDIAL, RMU) against hand computations.

Every expected value is worked out by hand in the comments on tiny tensors (B=2, T<=3, V<=3, D=2),
independently of the implementation; the edge cases pin down the documented reductions.
"""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from unlearnkit.objectives.dpo import ap_loss, dpo_loss
from unlearnkit.objectives.kl import forward_kl_loss
from unlearnkit.objectives.me import me_loss, token_uniform_kl
from unlearnkit.objectives.rmu import rmu_adaptive_coeff, rmu_control_vector, rmu_forget_loss, rmu_retain_loss
from unlearnkit.objectives.simnpo import simnpo_loss
from unlearnkit.objectives.undial import undial_loss, undial_targets

LN2 = math.log(2.0)


def _close(actual: torch.Tensor, expected: float, tol: float = 1e-5) -> None:
    assert actual.dim() == 0
    value = float(actual.detach())
    assert abs(value - expected) < tol, (value, expected)


def _softplus(x: float) -> float:
    """-log sigmoid(-x) = log(1 + e^x)."""
    return math.log1p(math.exp(x))


# ----------------------------------------------------------------------------------------------- SimNPO


def test_simnpo_hand_computation():
    """Row 0: m = (-1 - 3)/2 = -2; row 1: m = -4 (second token masked, its -9 ignored).

    beta = 1, gamma = 0: per row -(2/1) log sigmoid(-m) = 2 log(1 + e^m).
    Loss = mean(2 log(1+e^-2), 2 log(1+e^-4)) = log(1+e^-2) + log(1+e^-4).
    """
    logps = torch.tensor([[-1.0, -3.0], [-4.0, -9.0]])
    weights = torch.tensor([[1.0, 1.0], [1.0, 0.0]])
    expected = _softplus(-2.0) + _softplus(-4.0)
    _close(simnpo_loss(logps, weights, beta=1.0), expected)


def test_simnpo_token_weights_and_gamma():
    """Weights [0.5, 1.5]: m = (0.5*-1 + 1.5*-3)/2 = -2.5. beta = 2, gamma = 1:
    -(2/2) log sigmoid(-2*(-2.5) - 1) = log(1 + e^-4)."""
    logps = torch.tensor([[-1.0, -3.0]])
    weights = torch.tensor([[0.5, 1.5]])
    _close(simnpo_loss(logps, weights, beta=2.0, gamma=1.0), _softplus(-4.0))


def test_simnpo_zero_logps_known_values():
    """logps = 0: -(2/beta) log sigmoid(-gamma); gamma = 0 gives (2/beta) log 2, gamma = 1 gives (2/beta) log(1+e)."""
    logps = torch.zeros(2, 3)
    weights = torch.tensor([[1.0, 1.0, 0.0], [1.0, 1.0, 1.0]])
    _close(simnpo_loss(logps, weights, beta=2.5), (2 / 2.5) * LN2)
    _close(simnpo_loss(logps, weights, beta=2.5, gamma=1.0), (2 / 2.5) * _softplus(1.0))


def test_simnpo_fully_masked_row_is_excluded():
    logps = torch.tensor([[-1.0, -3.0], [-4.0, -9.0]])
    weights = torch.tensor([[1.0, 1.0], [0.0, 0.0]])
    # only row 0 counts: m = -2, beta = 1 -> 2 log(1 + e^-2); an included empty row would add 2 log 2.
    _close(simnpo_loss(logps, weights, beta=1.0), 2 * _softplus(-2.0))
    # all rows empty: 0, still differentiable
    logps = logps.clone().requires_grad_()
    loss = simnpo_loss(logps, torch.zeros(2, 2), beta=1.0)
    _close(loss, 0.0)
    loss.backward()
    assert torch.equal(logps.grad, torch.zeros(2, 2))


def test_simnpo_gradient_pushes_logps_down():
    """d loss / d m = 2 sigmoid(beta m + gamma) > 0, spread as w_t / sum w over the tokens."""
    logps = torch.tensor([[-1.0, -3.0], [-4.0, -9.0]], requires_grad=True)
    weights = torch.tensor([[1.0, 1.0], [1.0, 0.0]])
    simnpo_loss(logps, weights, beta=1.0).backward()
    grad = logps.grad
    assert (grad[weights > 0] > 0).all()
    assert grad[1, 1] == 0
    # row 0: (1/B) * 2 sigmoid(-2) * (1/2) per token
    expected = 0.5 * 2 * torch.sigmoid(torch.tensor(-2.0)) * 0.5
    assert torch.allclose(grad[0], expected.expand(2))


# ----------------------------------------------------------------------------------------------- DPO / AP


def test_dpo_hand_computation_with_different_lengths():
    """beta = 0.5, one pair. Chosen (refusal, T=2): r_c = (-1 + 1.5) + (-2 + 2.5) = 1.
    Rejected (forget answer, T=3, last token masked): r_r = (-1 + 0.5) + (-2 + 2) = -0.5.
    Loss = -(2/0.5) log sigmoid(0.5 * 1.5) = 4 log(1 + e^-0.75)."""
    loss = dpo_loss(
        torch.tensor([[-1.0, -2.0]]),
        torch.tensor([[-1.5, -2.5]]),
        torch.tensor([[1.0, 1.0]]),
        torch.tensor([[-1.0, -2.0, -5.0]]),
        torch.tensor([[-0.5, -2.0, 7.0]]),
        torch.tensor([[1.0, 1.0, 0.0]]),
        beta=0.5,
    )
    _close(loss, 4 * _softplus(-0.75))


def test_dpo_equal_margins_give_log_half():
    """Equal chosen and rejected log-ratios (2 and 2 here) -> -(2/beta) log 0.5 = (2/beta) log 2."""
    beta = 0.1
    chosen = torch.tensor([[-1.0, -1.0], [-3.0, 0.0]])
    chosen_ref = chosen - 1.0  # r_c = 2 in row 0, 1 in row 1 (second token masked)
    chosen_w = torch.tensor([[1.0, 1.0], [1.0, 0.0]])
    rejected = torch.tensor([[-2.0, -2.0], [-1.0, -1.0]])
    rejected_ref = torch.tensor([[-3.0, -3.0], [-1.5, -1.5]])  # r_r = 2 and 1
    rejected_w = torch.ones(2, 2)
    loss = dpo_loss(chosen, chosen_ref, chosen_w, rejected, rejected_ref, rejected_w, beta=beta)
    _close(loss, (2 / beta) * LN2)
    # a fully masked pair is kept with margin 0, i.e. the same constant
    zeros = torch.zeros(1, 2)
    _close(dpo_loss(zeros - 1, zeros, zeros, zeros - 2, zeros, zeros, beta=beta), (2 / beta) * LN2)


def test_dpo_gradients_raise_refusal_lower_forget_answer_and_skip_reference():
    chosen = torch.tensor([[-1.0, -2.0]], requires_grad=True)
    chosen_ref = torch.tensor([[-1.0, -2.0]], requires_grad=True)
    rejected = torch.tensor([[-1.0, -2.0]], requires_grad=True)
    rejected_ref = torch.tensor([[-1.0, -2.0]], requires_grad=True)
    w = torch.ones(1, 2)
    dpo_loss(chosen, chosen_ref, w, rejected, rejected_ref, w, beta=0.1).backward()
    # margin 0: d loss / d r_c = -(2/beta) * beta * sigmoid(0) = -1 per token, +1 for the rejected side
    assert torch.allclose(chosen.grad, torch.tensor([[-1.0, -1.0]]))
    assert torch.allclose(rejected.grad, torch.tensor([[1.0, 1.0]]))
    assert chosen_ref.grad is None and rejected_ref.grad is None


def test_ap_hand_computation():
    """beta = 0.1. log pi(y_r) = -1 - 2 = -3 (sums), log pi(y_idk) = -0.5 - 0.5 - 1 = -2 (padding masked).
    Margin -1; loss = -(1/0.1) log sigmoid(-0.1) = 10 log(1 + e^0.1)."""
    loss = ap_loss(
        torch.tensor([[-1.0, -2.0]]),
        torch.ones(1, 2),
        torch.tensor([[-0.5, -0.5, -1.0, -8.0]]),
        torch.tensor([[1.0, 1.0, 1.0, 0.0]]),
        beta=0.1,
    )
    _close(loss, 10 * _softplus(0.1), tol=1e-4)


def test_ap_equal_sums_scale_one_over_beta_and_gradient_signs():
    answer = torch.tensor([[-1.0, -1.0], [-0.5, -0.5]], requires_grad=True)
    idk = torch.tensor([[-2.0, 0.0], [-1.0, 0.0]], requires_grad=True)
    loss = ap_loss(answer, torch.ones(2, 2), idk, torch.tensor([[1.0, 0.0], [1.0, 0.0]]), beta=0.2)
    _close(loss, (1 / 0.2) * LN2)  # margins 0: -(1/beta) log 0.5 (half the DPO constant)
    loss.backward()
    # d/d answer = -(1/beta) beta sigmoid(0) / B = -0.25; idk gets +0.25 where weighted, 0 elsewhere
    assert torch.allclose(answer.grad, torch.full((2, 2), -0.25))
    assert torch.allclose(idk.grad, torch.tensor([[0.25, 0.0], [0.25, 0.0]]))


# ----------------------------------------------------------------------------------------------- ME


def test_me_hand_computation():
    """V = 2. Logits [0, ln 3] give p = [1/4, 3/4]:
    KL(U || p) = -ln 2 - (ln(1/4) + ln(3/4))/2 = (ln 4 + ln 4/3)/2 - ln 2 = ln(4/3)/2.
    Uniform logits give 0. Row 0: [uniform, p], w [1, 1] -> ln(4/3)/4. Row 1: [p, uniform], w [1, 0]
    -> ln(4/3)/2. Loss = (1/4 + 1/2)/2 ln(4/3) = 0.375 ln(4/3)."""
    p = [0.0, math.log(3.0)]
    u = [5.0, 5.0]
    logits = torch.tensor([[u, p], [p, u]])
    weights = torch.tensor([[1.0, 1.0], [1.0, 0.0]])
    _close(token_uniform_kl(logits)[0, 1], 0.5 * math.log(4 / 3))
    _close(me_loss(logits, weights), 0.375 * math.log(4 / 3))
    # a fully masked extra row changes nothing
    logits3 = torch.cat([logits, torch.tensor([[p, p]])])
    weights3 = torch.cat([weights, torch.zeros(1, 2)])
    _close(me_loss(logits3, weights3), 0.375 * math.log(4 / 3))


def test_me_zero_for_uniform_and_positive_otherwise():
    assert float(me_loss(torch.full((2, 3, 7), -2.5), torch.ones(2, 3))) == pytest.approx(0.0, abs=1e-6)
    logits = torch.randn(2, 3, 7, generator=torch.Generator().manual_seed(0), requires_grad=True)
    loss = me_loss(logits, torch.ones(2, 3))
    assert float(loss.detach()) > 0
    loss.backward()
    # one gradient step raises the entropy of the predictions
    with torch.no_grad():
        before = -(logits.softmax(-1) * logits.log_softmax(-1)).sum(-1).mean()
        stepped = logits - 0.1 * logits.grad
        after = -(stepped.softmax(-1) * stepped.log_softmax(-1)).sum(-1).mean()
    assert after > before


# ----------------------------------------------------------------------------------------------- UNDIAL


def test_undial_hand_computation():
    """V = 3, z_ref = 0, beta = ln 2: the target logit drops by ln 2, so q = [1/2, 1, 1]/2.5 for y = 0
    i.e. q = [0.2, 0.4, 0.4]. Model logits [ln 2, 0, 0] give p = [1/2, 1/4, 1/4].
    y = 0: CE = -(0.2 ln 1/2 + 0.8 ln 1/4) = 1.8 ln 2.
    y = 1: q = [0.4, 0.2, 0.4]: CE = 0.4 ln 2 + 0.2 * 2 ln 2 + 0.4 * 2 ln 2 = 1.6 ln 2.
    y = 2: q = [0.4, 0.4, 0.2]: CE = 0.4 ln 2 + 0.8 ln 2 + 0.4 ln 2 = 1.6 ln 2.
    Row 0 (y = 0, 1) mean 1.7 ln 2; row 1 (y = 2, then a masked position) 1.6 ln 2. Loss 1.65 ln 2."""
    logits = torch.tensor([LN2, 0.0, 0.0]).expand(2, 2, 3)
    ref_logits = torch.zeros(2, 2, 3)
    targets = torch.tensor([[0, 1], [2, 0]])
    weights = torch.tensor([[1.0, 1.0], [1.0, 0.0]])
    q = undial_targets(ref_logits, targets, LN2).exp()
    assert torch.allclose(q[0, 0], torch.tensor([0.2, 0.4, 0.4]))
    _close(undial_loss(logits, ref_logits, targets, weights, beta=LN2), 1.65 * LN2)


def test_undial_beta_zero_is_entropy_plus_kl_to_reference():
    g = torch.Generator().manual_seed(1)
    logits = torch.randn(2, 3, 5, generator=g)
    ref_logits = torch.randn(2, 3, 5, generator=g)
    targets = torch.randint(0, 5, (2, 3), generator=g)
    weights = torch.tensor([[1.0, 1.0, 0.0], [0.5, 2.0, 1.0]])
    ref_logp = ref_logits.log_softmax(-1)
    entropy = -(ref_logp.exp() * ref_logp).sum(-1)  # [B,T]
    ent_rows = (entropy * weights).sum(-1) / weights.sum(-1)
    expected = ent_rows.mean() + forward_kl_loss(ref_logits, logits, weights)
    assert torch.allclose(undial_loss(logits, ref_logits, targets, weights, beta=0.0), expected, atol=1e-5)


def test_undial_large_beta_removes_target_and_reference_gets_no_grad():
    logits = torch.zeros(1, 1, 3, requires_grad=True)
    ref_logits = torch.tensor([[[2.0, 1.0, 1.0]]], requires_grad=True)
    q = undial_targets(ref_logits, torch.tensor([[0]]), 1e4).exp()
    assert torch.allclose(q, torch.tensor([[[0.0, 0.5, 0.5]]]), atol=1e-6)
    undial_loss(logits, ref_logits, torch.tensor([[0]]), torch.ones(1, 1), beta=1e4).backward()
    assert ref_logits.grad is None
    # gradient of CE(q, softmax(l)) wrt l is p - q = [1/3, -1/6, -1/6]: descent lowers the target logit
    assert torch.allclose(logits.grad, torch.tensor([[[1 / 3, -1 / 6, -1 / 6]]]), atol=1e-5)


def test_undial_rejects_negative_and_out_of_vocab_targets():
    logits = torch.zeros(1, 2, 3)
    with pytest.raises(ValueError, match="negative"):
        undial_loss(logits, logits, torch.tensor([[1, -100]]), torch.tensor([[1.0, 0.0]]))
    with pytest.raises(ValueError, match="vocabulary"):
        undial_loss(logits, logits, torch.tensor([[1, 3]]), torch.tensor([[1.0, 0.0]]))


# ----------------------------------------------------------------------------------------------- RMU


def test_rmu_control_vector_norm_determinism_and_dtype():
    v = rmu_control_vector(16, 6.5, seed=3)
    assert v.shape == (16,) and v.dtype == torch.float32
    assert float(v.norm()) == pytest.approx(6.5, rel=1e-6)
    assert (v >= 0).all()  # u ~ U[0,1)
    torch.manual_seed(123)  # the global RNG must not matter
    assert torch.equal(rmu_control_vector(16, 6.5, seed=3), v)
    assert not torch.equal(rmu_control_vector(16, 6.5, seed=4), v)
    half = rmu_control_vector(16, 6.5, seed=3, dtype=torch.bfloat16)
    assert half.dtype == torch.bfloat16 and torch.allclose(half.float(), v, rtol=1e-2)
    with pytest.raises(ValueError):
        rmu_control_vector(0, 6.5, seed=3)


def test_rmu_forget_hand_computation():
    """D = 2, control [1, 0]. Row 0: tok0 [1,2] -> (0 + 4)/2 = 2; tok1 [3,4] -> (4 + 16)/2 = 10; mean 6.
    Row 1: tok0 [0,0] -> (1 + 0)/2 = 0.5; tok1 masked. Loss = (6 + 0.5)/2 = 3.25."""
    hidden = torch.tensor([[[1.0, 2.0], [3.0, 4.0]], [[0.0, 0.0], [9.0, 9.0]]])
    weights = torch.tensor([[1.0, 1.0], [1.0, 0.0]])
    control = torch.tensor([1.0, 0.0])
    _close(rmu_forget_loss(hidden, control, weights), 3.25)
    # per-token targets of shape [B,T,D] give the same as the broadcast vector
    _close(rmu_forget_loss(hidden, control.expand(2, 2, 2), weights), 3.25)
    # a fully masked row is left out: only row 0 -> 6
    _close(rmu_forget_loss(hidden, control, torch.tensor([[1.0, 1.0], [0.0, 0.0]])), 6.0)
    with pytest.raises(ValueError):
        rmu_forget_loss(hidden, torch.ones(3), weights)
    with pytest.raises(ValueError):
        rmu_forget_loss(hidden, torch.ones(2, 1, 2), weights)


def test_rmu_forget_zero_at_control_and_gradient_towards_it():
    control = rmu_control_vector(4, 6.5, seed=0)
    hidden = control.expand(2, 3, 4).clone()
    _close(rmu_forget_loss(hidden, control, torch.ones(2, 3)), 0.0)
    hidden = torch.zeros(2, 3, 4, requires_grad=True)
    rmu_forget_loss(hidden, control, torch.ones(2, 3)).backward()
    # d/dh of mean_{b,t} mean_d (h - c)^2 = 2 (h - c) / (D * B * T): the descent direction is +c
    assert torch.allclose(-hidden.grad, 2 * control.expand(2, 3, 4) / (4 * 6))


def test_rmu_adaptive_coeff_hand_computation():
    """Norms: row 0 tok0 [3,4] -> 5, tok1 [0,2] -> 2, weights [1, 1] -> 3.5; row 1 tok0 [6,8] -> 10,
    tok1 masked (its [100, 0] ignored) -> 10. Mean over rows 6.75; scale 5 -> 33.75."""
    ref = torch.tensor([[[3.0, 4.0], [0.0, 2.0]], [[6.0, 8.0], [100.0, 0.0]]], requires_grad=True)
    weights = torch.tensor([[1.0, 1.0], [1.0, 0.0]])
    coeff = rmu_adaptive_coeff(ref, weights, 5.0)
    _close(coeff, 33.75)
    assert not coeff.requires_grad  # a target's norm, not something to train
    # a row without weighted tokens is left out: only row 0 -> 3.5 x 2
    _close(rmu_adaptive_coeff(ref, torch.tensor([[1.0, 1.0], [0.0, 0.0]]), 2.0), 7.0)
    # bf16 activations are measured in float32
    _close(rmu_adaptive_coeff(ref.detach().bfloat16(), weights, 5.0), 33.75, tol=1e-3)


def test_rmu_retain_hand_computation_and_reference_mse():
    """hidden vs ref: row 0 tok0 diff [1,-1] -> 1; tok1 diff [2, 0] -> 2; weights [1, 3] -> (1 + 6)/4 = 1.75.
    Row 1: tok0 diff [0, 3] -> 4.5, tok1 masked. Loss = (1.75 + 4.5)/2 = 3.125."""
    ref = torch.zeros(2, 2, 2, requires_grad=True)
    hidden = torch.tensor([[[1.0, -1.0], [2.0, 0.0]], [[0.0, 3.0], [7.0, 7.0]]])
    weights = torch.tensor([[1.0, 3.0], [1.0, 0.0]])
    loss = rmu_retain_loss(hidden, ref, weights)
    _close(loss, 3.125)
    assert not loss.requires_grad  # the reference activations carry no gradient
    # all tokens counted with equal lengths: the WMDP code's F.mse_loss
    g = torch.Generator().manual_seed(2)
    a, b = torch.randn(3, 4, 5, generator=g), torch.randn(3, 4, 5, generator=g)
    assert torch.allclose(rmu_retain_loss(a, b, torch.ones(3, 4)), F.mse_loss(a, b))
    _close(rmu_retain_loss(a, a.clone(), torch.ones(3, 4)), 0.0)
    with pytest.raises(ValueError):
        rmu_retain_loss(a, b[:, :2], torch.ones(3, 4))

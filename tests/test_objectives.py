"""Objectives against hand computations (aligned tensors: position t holds log p(y_t))."""

from __future__ import annotations

import math

import pytest
import torch

from unlearnkit.objectives import (
    asu_loss,
    drop_first_answer_token,
    forward_kl_loss,
    ga_loss,
    nll_loss,
    npo_loss,
    token_kl,
    wga_loss,
)
from unlearnkit.tokens import token_logps


def _logsig(x: float) -> float:
    return -math.log1p(math.exp(-x))


LOGPS = torch.tensor([[-1.0, -2.0, 0.0], [-0.5, 0.0, 0.0]])
MASK = torch.tensor([[1.0, 1.0, 0.0], [1.0, 0.0, 0.0]])


def test_nll_and_ga_by_hand():
    # row 0: (1 + 2) / 2 = 1.5, row 1: 0.5 / 1 = 0.5 -> NLL_mean = 1.0, GA = -1.0
    assert nll_loss(LOGPS, MASK).item() == pytest.approx(1.0)
    assert ga_loss(LOGPS, MASK).item() == pytest.approx(-1.0)


def test_nll_token_weights_and_empty_rows():
    # weights 3 and 1 on row 0: (3*1 + 1*2) / 4 = 1.25; row 1 has no weight -> left out of the mean
    w = torch.tensor([[3.0, 1.0, 0.0], [0.0, 0.0, 0.0]])
    assert nll_loss(LOGPS, w).item() == pytest.approx(1.25)
    none = torch.zeros_like(LOGPS, requires_grad=True)
    loss = nll_loss(none, torch.zeros_like(LOGPS))
    assert loss.item() == 0.0 and loss.requires_grad


def test_npo_by_hand():
    ref = torch.tensor([[-1.5, -1.0, 0.0], [-0.5, 0.0, 0.0]])
    # r_0 = (-1 + 1.5) + (-2 + 1) = -0.5 ; r_1 = 0
    beta = 0.1
    expected = -(2 / beta) * (_logsig(-beta * -0.5) + _logsig(0.0)) / 2
    assert npo_loss(LOGPS, ref, MASK, beta).item() == pytest.approx(expected, rel=1e-6)


def test_npo_gradient_tends_to_ga_as_beta_vanishes():
    # d/dlogp of -(2/b) log s(-b r) = 2 s(b r) w / B -> w / B as b -> 0, i.e. GA on sequence sums.
    logps = LOGPS.clone().requires_grad_(True)
    npo_loss(logps, LOGPS.detach() - 0.3, MASK, beta=1e-6).backward()
    assert torch.allclose(logps.grad, MASK / 2, atol=1e-5)


def test_npo_reference_gets_no_gradient():
    ref = LOGPS.clone().requires_grad_(True)
    npo_loss(LOGPS.clone().requires_grad_(True), ref, MASK).backward()
    assert ref.grad is None


def test_token_kl_by_hand():
    # target p = (0.5, 0.5), model q = (0.8, 0.2): KL = 0.5 ln(0.5/0.8) + 0.5 ln(0.5/0.2)
    target = torch.log(torch.tensor([[[0.5, 0.5]]]))
    model = torch.log(torch.tensor([[[0.8, 0.2]]]))
    expected = 0.5 * math.log(0.5 / 0.8) + 0.5 * math.log(0.5 / 0.2)
    assert token_kl(target, model).item() == pytest.approx(expected, rel=1e-6)


def test_forward_kl_masks_prompt_and_padding():
    torch.manual_seed(0)
    target, logits = torch.randn(2, 3, 5), torch.randn(2, 3, 5)
    per_token = token_kl(target, logits)
    # row 0 averages positions 0-1, row 1 only position 0; the masked positions must not matter
    expected = ((per_token[0, 0] + per_token[0, 1]) / 2 + per_token[1, 0]) / 2
    logits_noisy = logits.clone()
    logits_noisy[0, 2] += 100.0
    logits_noisy[1, 1:] -= 50.0
    assert forward_kl_loss(target, logits_noisy, MASK).item() == pytest.approx(expected.item(), rel=1e-5)


def test_asu_is_forward_kl_from_teacher_and_zero_when_equal():
    torch.manual_seed(1)
    teacher, student = torch.randn(2, 3, 7), torch.randn(2, 3, 7, requires_grad=True)
    loss = asu_loss(teacher, student, MASK)
    # forward KL(teacher || student), by hand with explicit softmaxes
    p, q = teacher.softmax(-1), student.softmax(-1)
    kl = (p * (p.log() - q.log())).sum(-1)
    expected = ((kl[0, 0] + kl[0, 1]) / 2 + kl[1, 0]) / 2
    assert loss.item() == pytest.approx(expected.item(), rel=1e-5)
    assert asu_loss(teacher, teacher.clone(), MASK).item() == pytest.approx(0.0, abs=1e-7)
    loss.backward()
    assert student.grad is not None and student.grad.abs().sum() > 0


def test_asu_idk_drops_only_the_first_answer_token():
    w = torch.tensor([[0.0, 1.0, 1.0, 1.0], [0.0, 0.0, 2.0, 0.5]])
    assert drop_first_answer_token(w).tolist() == [[0.0, 0.0, 1.0, 1.0], [0.0, 0.0, 0.0, 0.5]]


def test_wga_by_hand():
    logps = torch.log(torch.tensor([[0.5, 0.25]]))
    w = torch.ones(1, 2)
    # beta 1: confidence (0.5, 0.25); loss = (0.5 ln 0.5 + 0.25 ln 0.25) / 2
    expected = (0.5 * math.log(0.5) + 0.25 * math.log(0.25)) / 2
    assert wga_loss(logps, w, beta=1.0).item() == pytest.approx(expected, rel=1e-6)
    # beta 2 squares the confidences
    expected2 = (0.25 * math.log(0.5) + 0.0625 * math.log(0.25)) / 2
    assert wga_loss(logps, w, beta=2.0).item() == pytest.approx(expected2, rel=1e-6)


def test_token_logps_alignment_matches_manual_gather():
    torch.manual_seed(2)
    logits = torch.randn(2, 4, 6)
    labels = torch.tensor([[-100, 3, 1, 5], [-100, -100, 2, -100]])
    logps, mask = token_logps(logits, labels)
    ls = logits.log_softmax(-1)
    # position t predicts label t+1
    assert mask.tolist() == [[True, True, True], [False, True, False]]
    assert logps[0, 0].item() == pytest.approx(ls[0, 0, 3].item(), rel=1e-6)
    assert logps[0, 2].item() == pytest.approx(ls[0, 2, 5].item(), rel=1e-6)
    assert logps[1, 1].item() == pytest.approx(ls[1, 1, 2].item(), rel=1e-6)
    assert logps[1, 0].item() == 0.0 and logps[1, 2].item() == 0.0


def test_token_logps_rejects_misaligned_shapes():
    with pytest.raises(ValueError, match="do not align"):
        token_logps(torch.randn(1, 3, 4), torch.zeros(1, 4, dtype=torch.long))


def test_reduce_tokens_sequence_and_token_by_hand():
    """Rows [1, 2] (w 1, 1) and [4] (w 1): sequence = (1.5 + 4) / 2 = 2.75; token = 7 / 3."""
    from unlearnkit.objectives.reduction import reduce_tokens

    values = torch.tensor([[1.0, 2.0], [4.0, 99.0]])
    weights = torch.tensor([[1.0, 1.0], [1.0, 0.0]])
    assert reduce_tokens(values, weights, "sequence").item() == pytest.approx(2.75)
    assert reduce_tokens(values, weights, "token").item() == pytest.approx(7 / 3)
    # TokenUnlearn weights: token = sum(w v) / sum(w) = (0.5 + 4 + 4) / (0.5 + 2 + 1)
    soft = torch.tensor([[0.5, 2.0], [1.0, 0.0]])
    assert reduce_tokens(values, soft, "token").item() == pytest.approx(8.5 / 3.5)


def test_reduce_tokens_empty_batch_is_zero_and_attached():
    from unlearnkit.objectives.reduction import reduce_tokens

    values = torch.tensor([[float("inf"), 2.0]], requires_grad=True)
    zero = torch.zeros(1, 2)
    for reduction in ("sequence", "token"):
        out = reduce_tokens(values, zero, reduction)
        assert out.item() == 0.0 and out.requires_grad
    # an inf at a zero-weight position does not leak into the token mean
    assert reduce_tokens(values, torch.tensor([[0.0, 1.0]]), "token").item() == 2.0
    with pytest.raises(ValueError, match="loss_reduction"):
        reduce_tokens(values, zero, "batch")

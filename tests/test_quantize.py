"""Tests for unlearnkit.evaluation.quantize: RTN fake-quantisation checked by hand, and quantized_copy."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from unlearnkit.evaluation.quantize import (
    effective_group_size,
    quantizable_linears,
    quantize_rtn,
    quantized_copy,
)

W = torch.tensor(
    [
        [1.013, -0.5, 0.335, 2.54],
        [-0.7, 0.08, 0.0, 0.07],
    ]
)


def test_8bit_per_channel_by_hand():
    # qmax = 2**7 - 1 = 127, one scale per row.
    # Row 0: scale = 2.54 / 127 = 0.02
    #   1.013 / 0.02 = 50.65 -> 51 -> 1.02;  -0.5 / 0.02 = -25 -> -0.5
    #   0.335 / 0.02 = 16.75 -> 17 -> 0.34;   2.54 / 0.02 = 127 -> 2.54
    # Row 1: scale = 0.7 / 127
    #   -0.7 -> -127 -> -0.7;  0.08 / (0.7/127) = 14.51 -> 15 -> 15 * 0.7 / 127 = 0.08268
    #   0.0 -> 0;  0.07 / (0.7/127) = 12.7 -> 13 -> 13 * 0.7 / 127 = 0.07165
    expected = torch.tensor(
        [
            [1.02, -0.5, 0.34, 2.54],
            [-0.7, 15 * 0.7 / 127, 0.0, 13 * 0.7 / 127],
        ]
    )
    out = quantize_rtn(W, 8, None)
    torch.testing.assert_close(out, expected, rtol=0, atol=1e-6)
    assert not torch.equal(out, W)  # it really changed something


def test_4bit_groups_of_2_by_hand():
    # qmax = 2**3 - 1 = 7, one scale per (row, group of 2 columns).
    # Row 0, group [1.013, -0.5]: scale = 1.013 / 7 = 0.144714
    #   1.013 -> 7 -> 1.013;  -0.5 / 0.144714 = -3.455 -> -3 -> -3 * 1.013 / 7 = -0.434143
    # Row 0, group [0.335, 2.54]: scale = 2.54 / 7 = 0.362857
    #   0.335 / 0.362857 = 0.923 -> 1 -> 0.362857;  2.54 -> 7 -> 2.54
    # Row 1, group [-0.7, 0.08]: scale = 0.1 -> -7 -> -0.7;  0.8 -> 1 -> 0.1
    # Row 1, group [0.0, 0.07]: scale = 0.01 -> 0 and 7 -> 0.07
    expected = torch.tensor(
        [
            [1.013, -3 * 1.013 / 7, 2.54 / 7, 2.54],
            [-0.7, 0.1, 0.0, 0.07],
        ]
    )
    torch.testing.assert_close(quantize_rtn(W, 4, 2), expected, rtol=0, atol=1e-6)
    # Per channel at 4 bits is different (row 0 scale 2.54/7: 1.013 -> 2.79 -> 3 -> 1.0886).
    per_channel = quantize_rtn(W, 4, None)
    assert per_channel[0, 0].item() == pytest.approx(3 * 2.54 / 7, abs=1e-6)


def test_zero_rows_and_zero_groups_stay_zero():
    w = torch.tensor([[0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 1.0, -0.3]])
    for bits, group in ((8, None), (4, 2), (4, None), (2, 2)):
        out = quantize_rtn(w, bits, group)
        assert torch.isfinite(out).all()
        assert torch.equal(out[0], torch.zeros(4))
        if group == 2:
            assert torch.equal(out[1, :2], torch.zeros(2))
        assert out[1, 2].item() == pytest.approx(1.0)


def test_values_lie_on_the_symmetric_grid():
    torch.manual_seed(0)
    w = torch.randn(16, 64)
    for bits in (8, 4, 3):
        qmax = 2 ** (bits - 1) - 1
        out = quantize_rtn(w, bits, None)
        scale = w.abs().amax(dim=1, keepdim=True) / qmax
        q = out / scale
        torch.testing.assert_close(q, q.round(), rtol=0, atol=1e-4)
        assert q.abs().max().item() <= qmax + 1e-4
        assert len(torch.unique(out[0])) <= 2 * qmax + 1


@pytest.mark.parametrize("bits,group", [(8, None), (4, 128), (4, 16), (4, 7), (3, None), (2, 4)])
def test_idempotent(bits, group):
    torch.manual_seed(1)
    w = torch.randn(32, 96) * 0.05
    once = quantize_rtn(w, bits, group)
    torch.testing.assert_close(quantize_rtn(once, bits, group), once, rtol=0, atol=1e-7)


def test_error_shrinks_with_more_bits_and_smaller_groups():
    torch.manual_seed(2)
    w = torch.randn(64, 256)
    err = {
        key: (quantize_rtn(w, *key) - w).abs().mean().item()
        for key in ((8, None), (4, None), (4, 32), (2, None))
    }
    assert err[(8, None)] < err[(4, 32)] < err[(4, None)] < err[(2, None)]


def test_effective_group_size():
    assert effective_group_size(256, 128) == 128
    assert effective_group_size(96, 128) is None  # group covers the row: per channel
    assert effective_group_size(100, 64) == 50  # largest divisor in [32, 64]
    assert effective_group_size(97, 64) is None  # prime: no divisor in range -> per channel
    assert effective_group_size(4, 2) == 2
    assert effective_group_size(10, None) is None
    # in_features 6, group 4 -> groups of 3: same as quantising the two halves separately.
    w = torch.tensor([[0.1, 0.2, 0.9, 5.0, -1.0, 0.33]])
    out = quantize_rtn(w, 4, 4)
    torch.testing.assert_close(out[:, :3], quantize_rtn(w[:, :3], 4, None))
    torch.testing.assert_close(out[:, 3:], quantize_rtn(w[:, 3:], 4, None))


def test_bad_arguments():
    with pytest.raises(ValueError, match="bits"):
        quantize_rtn(W, 1)
    with pytest.raises(ValueError, match="bits"):
        quantize_rtn(W, 4.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="2-D"):
        quantize_rtn(torch.zeros(3), 8)
    with pytest.raises(ValueError, match="group_size"):
        quantize_rtn(W, 4, 0)


def test_dtype_preserved_and_input_untouched():
    w = W.clone().to(torch.bfloat16)
    before = w.clone()
    out = quantize_rtn(w, 4, 2)
    assert out.dtype == torch.bfloat16
    assert torch.equal(w, before)


def _llama(tied: bool):
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    cfg = LlamaConfig(
        vocab_size=64,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=32,
        tie_word_embeddings=tied,
    )
    return LlamaForCausalLM(cfg).eval()


def test_quantized_copy_leaves_the_model_untouched():
    model = _llama(tied=True)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    quant = quantized_copy(model, 4, group_size=16)
    for k, v in model.state_dict().items():
        assert torch.equal(v, before[k]), k
    q_proj = quant.model.layers[0].self_attn.q_proj.weight
    assert not torch.equal(q_proj, model.model.layers[0].self_attn.q_proj.weight)
    torch.testing.assert_close(q_proj, quantize_rtn(before["model.layers.0.self_attn.q_proj.weight"], 4, 16))
    # Norms stay in full precision.
    assert torch.equal(quant.model.norm.weight, model.model.norm.weight)
    x = torch.randint(0, 64, (2, 8))
    with torch.no_grad():
        assert not torch.equal(quant(x).logits, model(x).logits)


def test_tied_lm_head_is_not_quantised_untied_is():
    tied = _llama(tied=True)
    names = quantizable_linears(tied)
    assert "lm_head" not in names and "model.layers.0.mlp.down_proj" in names
    q = quantized_copy(tied, 4, 16)
    assert torch.equal(q.lm_head.weight, tied.lm_head.weight)
    assert torch.equal(q.model.embed_tokens.weight, tied.model.embed_tokens.weight)
    assert q.lm_head.weight.data_ptr() == q.model.embed_tokens.weight.data_ptr()  # still tied

    untied = _llama(tied=False)
    assert "lm_head" in quantizable_linears(untied)
    q = quantized_copy(untied, 8)
    torch.testing.assert_close(q.lm_head.weight, quantize_rtn(untied.lm_head.weight, 8, None))
    assert torch.equal(q.model.embed_tokens.weight, untied.model.embed_tokens.weight)


def test_8bit_copy_ignores_group_size_and_is_idempotent():
    model = _llama(tied=True)
    q8 = quantized_copy(model, 8, group_size=4)  # 8-bit is per channel whatever the group size
    w = model.model.layers[0].mlp.up_proj.weight
    torch.testing.assert_close(q8.model.layers[0].mlp.up_proj.weight, quantize_rtn(w, 8, None))
    twice = quantized_copy(q8, 8)
    for (k, a), (_, b) in zip(q8.state_dict().items(), twice.state_dict().items()):
        torch.testing.assert_close(a, b, rtol=0, atol=1e-7, msg=k)


def test_quantized_copy_validates_before_copying():
    model = nn.Sequential(nn.Linear(4, 4))
    with pytest.raises(ValueError):
        quantized_copy(model, 0)
    with pytest.raises(ValueError):
        quantized_copy(model, 4, group_size=-1)

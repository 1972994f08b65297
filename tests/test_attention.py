"""Tests for unlearnkit.attention (temperature-smoothed attention, ASU forget-teacher).

Independent reference: a softmax at temperature tau equals the stock model with every query vector
divided by tau (q is projected, optionally normed, then RoPE-rotated; all linear in the projection or
norm weights), so a deep copy with scaled query weights must reproduce the smoothed logits.
"""

from __future__ import annotations

import copy

import pytest
import torch
from hand_attention import (
    hand_attention,
    max_diff_at_valid_queries,
    recorded_eager_inputs,
    stock_scale,
    teacher_vs_hand,
    window_of,
)
from tiny_models import tiny_config
from tolerances import REORDERED_FORWARD_LOGP_ATOL, SAME_QK_PROBS_ATOL
from torch import nn
from transformers import (
    AutoModelForCausalLM,
    Gemma2Config,
    GPT2Config,
    LlamaConfig,
    MistralConfig,
    Phi3Config,
    PhiConfig,
    Qwen2Config,
    Qwen3Config,
)
from transformers.masking_utils import AttentionMaskInterface
from transformers.modeling_utils import AttentionInterface

from unlearnkit.attention import attention_entropy, attention_weights, smoothed_attention
from unlearnkit.errors import UserError

VOCAB = 64
_COMMON = dict(
    hidden_size=16,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    intermediate_size=32,
    vocab_size=VOCAB,
)


def _config(arch: str, **overrides):
    if arch in ("llama", "llama-eager"):
        cfg = LlamaConfig(**_COMMON)
    elif arch == "qwen2":  # q/k/v biases
        cfg = Qwen2Config(**_COMMON)
    elif arch == "mistral":  # sliding-window mask path
        cfg = MistralConfig(**_COMMON, sliding_window=4)
    elif arch == "qwen3":  # q_norm/k_norm after the projection
        cfg = Qwen3Config(**_COMMON, head_dim=4)
    elif arch == "phi3":  # fused qkv_proj
        cfg = Phi3Config(**_COMMON, pad_token_id=0, bos_token_id=1, eos_token_id=2)
    elif arch == "phi":  # partial rotary, q bias
        cfg = PhiConfig(**{**_COMMON, "num_key_value_heads": 4}, pad_token_id=0)
    elif arch == "gpt2":  # fused Conv1D c_attn, absolute positions, own scaling attribute
        cfg = GPT2Config(n_embd=16, n_layer=2, n_head=4, vocab_size=VOCAB, n_positions=32, pad_token_id=0)
    elif arch == "gpt2-invscale":  # scale_attn_by_inverse_layer_idx folds 1/(layer+1) into `scaling`
        cfg = GPT2Config(
            n_embd=16,
            n_layer=2,
            n_head=4,
            vocab_size=VOCAB,
            n_positions=32,
            pad_token_id=0,
            scale_attn_by_inverse_layer_idx=True,
        )
    elif arch == "gemma2":  # eager only (no sdpa), logit soft-capping, query_pre_attn_scalar, sliding layers
        cfg = Gemma2Config(**_COMMON, head_dim=4, query_pre_attn_scalar=8, sliding_window=4, pad_token_id=0)
    elif arch in ("gemma3", "olmo2"):  # the support matrix's recipe (tests/tiny_models.py)
        cfg = tiny_config(arch, VOCAB)
    else:
        raise AssertionError(arch)
    for key, value in overrides.items():
        setattr(cfg, key, value)
    return cfg


def _build(arch: str, seed: int = 0, **overrides) -> nn.Module:
    torch.manual_seed(seed)
    kwargs = {"attn_implementation": "eager"} if arch == "llama-eager" else {}
    model = AutoModelForCausalLM.from_config(_config(arch, **overrides), **kwargs)
    return model.float().eval()


def _attn_modules(model: nn.Module) -> list[nn.Module]:
    layers = model.transformer.h if hasattr(model, "transformer") else model.model.layers
    return [getattr(layer, "self_attn", None) or layer.attn for layer in layers]


@torch.no_grad()
def _scale_qk(model: nn.Module, q: float, k: float = 1.0, layers=None) -> None:
    """Multiply the query (and key) vectors of the given layers by q (k), editing weights in place."""
    for idx, attn in enumerate(_attn_modules(model)):
        if layers is not None and idx not in layers:
            continue
        if hasattr(attn, "q_norm") and type(attn.q_norm).__name__.startswith("Gemma"):
            # Gemma's RMSNorm multiplies by (1 + w): scale (1 + w) by f, i.e. w -> f (1 + w) - 1
            attn.q_norm.weight.mul_(q).add_(q - 1)
            attn.k_norm.weight.mul_(k).add_(k - 1)
        elif hasattr(attn, "q_norm"):  # RMSNorm after the projection: the norm weight sets the scale
            attn.q_norm.weight.mul_(q)
            attn.k_norm.weight.mul_(k)
        elif hasattr(attn, "q_proj"):
            for proj, f in ((attn.q_proj, q), (attn.k_proj, k)):
                proj.weight.mul_(f)
                if proj.bias is not None:
                    proj.bias.mul_(f)
        elif hasattr(attn, "qkv_proj"):  # Phi-3: rows [q | k | v]
            nq = attn.config.num_attention_heads * attn.head_dim
            nk = attn.num_key_value_heads * attn.head_dim
            attn.qkv_proj.weight[:nq].mul_(q)
            attn.qkv_proj.weight[nq : nq + nk].mul_(k)
        elif hasattr(attn, "c_attn"):  # GPT-2 Conv1D: weight [in, 3*hidden], columns [q | k | v]
            h = attn.embed_dim
            attn.c_attn.weight[:, :h].mul_(q)
            attn.c_attn.weight[:, h : 2 * h].mul_(k)
            attn.c_attn.bias[:h].mul_(q)
            attn.c_attn.bias[h : 2 * h].mul_(k)
        else:
            raise AssertionError(type(attn))


def _batch(seed: int = 1, length: int = 7):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(3, VOCAB, (3, length), generator=g)
    mask = torch.ones_like(ids)
    mask[1, :3] = 0  # left padding
    mask[2, -2:] = 0  # right padding
    return ids, mask


ARCHS = [
    "llama",
    "llama-eager",
    "qwen2",
    "mistral",
    "qwen3",
    "phi3",
    "phi",
    "gpt2",
    "gpt2-invscale",
    "gemma2",
    "gemma3",
    "olmo2",
]


def _registered_names() -> set[str]:
    return {k for reg in (AttentionInterface, AttentionMaskInterface) for k in reg._global_mapping}


@pytest.mark.parametrize("tau", [0.5, 3.0])
@pytest.mark.parametrize("arch", ARCHS)
def test_matches_query_scaled_copy(arch: str, tau: float) -> None:
    # Gemma 2 soft-capping makes "q / tau" differ from "logits / tau": checked in test_temperature_semantics
    model = _build(arch, attn_logit_softcapping=None) if arch == "gemma2" else _build(arch)
    ref = copy.deepcopy(model)
    _scale_qk(ref, 1.0 / tau)
    ids, mask = _batch()
    with torch.no_grad():
        plain = model(input_ids=ids, attention_mask=mask).logits
        with smoothed_attention(model, tau) as yielded:
            assert yielded is model
            smooth = model(input_ids=ids, attention_mask=mask).logits
        want = ref(input_ids=ids, attention_mask=mask).logits
    valid = mask.bool()
    # the left-padded row only matches if the padding mask is still applied under the new name
    torch.testing.assert_close(smooth[valid], want[valid], atol=1e-5, rtol=1e-5)
    assert not torch.allclose(smooth[valid], plain[valid], atol=1e-6)


@pytest.mark.parametrize("arch", ARCHS)
def test_teacher_attention_is_a_hand_written_softmax_at_tau(arch: str) -> None:
    """Inside smoothed_attention every layer's attention equals softmax(q k^T / (tau sqrt(d))) written out
    in tests/hand_attention.py (causal, padding and sliding-window masks by hand; Gemma 2's scale and
    cap, GPT-2's inverse layer scale), on the q and k the model itself computed; the fused (sdpa)
    teacher that training uses gives the same logits as that eager attention."""
    model = _build(arch)
    _scale_qk(model, 3.0, 3.0)  # peaked attention, so the temperature visibly matters
    ids, mask = _batch(length=8)  # longer than the sliding window (4): the window cuts real keys
    tau = 2.0
    diffs = teacher_vs_hand(model, ids, mask, tau)
    assert len(diffs) == 2 and max(diffs) < SAME_QK_PROBS_ATOL, diffs
    # the hand-written reference is sharp: the plain softmax (tau = 1) and, on sliding layers, the
    # causal mask without the window are far from what the teacher computed
    with recorded_eager_inputs(model) as calls:
        attention_weights(model, ids, mask)
    windowed = []
    for layer, (q, k) in enumerate(calls):
        scale, softcap = stock_scale(model, layer, q.shape[-1])
        if arch in ("llama", "mistral", "qwen2", "qwen3", "gemma3", "phi3", "olmo2", "gpt2"):
            assert scale == q.shape[-1] ** -0.5  # the plain 1/(tau sqrt(d)) of the ASU paper
        window = window_of(model, layer)
        at_tau = hand_attention(q, k, mask, scale, softcap, tau, window)
        plain = hand_attention(q, k, mask, scale, softcap, 1.0, window)
        assert max_diff_at_valid_queries(plain, at_tau, mask) > 1e-2
        if window is not None:
            windowed.append(layer)
            unwindowed = hand_attention(q, k, mask, scale, softcap, tau, None)
            assert max_diff_at_valid_queries(unwindowed, at_tau, mask) > 1e-2
    want_windowed = {"mistral": [0, 1], "gemma2": [0], "gemma3": [0]}.get(arch, [])
    assert windowed == want_windowed
    if model.config._attn_implementation != "eager":  # training's teacher runs sdpa
        valid = mask.bool()
        with torch.no_grad():
            with smoothed_attention(model, tau):
                fused = model(input_ids=ids, attention_mask=mask).logits
            model.set_attn_implementation("eager")
            with smoothed_attention(model, tau):
                eager = model(input_ids=ids, attention_mask=mask).logits
        # sdpa vs eager kernels on the same inputs: another summation order (tests/tolerances.py)
        torch.testing.assert_close(fused[valid], eager[valid], atol=REORDERED_FORWARD_LOGP_ATOL, rtol=0)


@pytest.mark.parametrize("arch", ARCHS)
def test_tau_one_is_identity(arch: str) -> None:
    model = _build(arch)
    ids, mask = _batch()
    with torch.no_grad():
        plain = model(input_ids=ids, attention_mask=mask).logits
        with smoothed_attention(model, 1.0):
            same = model(input_ids=ids, attention_mask=mask).logits
    assert torch.equal(plain, same)


@pytest.mark.parametrize("arch", ARCHS)
def test_temperature_semantics_on_attention_probs(arch: str) -> None:
    """tau * log p_tau - log p_1 is constant over the allowed keys of each query (layer 0 only,
    so both runs see identical layer inputs). Gemma 2 with a tight soft-cap checks the cap handling."""
    overrides = {"attn_logit_softcapping": 2.0} if arch == "gemma2" else {}
    model = _build(arch, **overrides)
    _scale_qk(model, 3.0, 3.0)  # peaked attention, so the cap actually bites
    tau = 2.0
    ids, mask = _batch()
    p1 = attention_weights(model, ids, mask)[0]
    with smoothed_attention(model, tau, layers=[0]):
        pt = attention_weights(model, ids, mask)[0]
    allowed = (p1 > 0) & (pt > 0)
    valid_q = mask.bool()[:, None, :, None]
    allowed = allowed & valid_q
    # masked keys must stay masked
    assert torch.equal(p1 > 0, pt > 0)
    diff = torch.where(allowed, tau * pt.log() - p1.log(), torch.zeros_like(p1))
    n = allowed.sum(-1, keepdim=True).clamp(min=1)
    centred = torch.where(allowed, diff - diff.sum(-1, keepdim=True) / n, torch.zeros_like(p1))
    assert centred.abs().max() < 1e-4
    assert not torch.allclose(p1[allowed], pt[allowed], atol=1e-4)


@pytest.mark.parametrize("arch", ARCHS)
def test_entropy_increases_with_tau(arch: str) -> None:
    model = _build(arch)
    _scale_qk(model, 5.0, 5.0)  # random init attends almost uniformly; make it peaked first
    ids, mask = _batch()
    ents = [attention_entropy(model, ids, mask, tau=t) for t in (0.5, 1.0, 2.0, 4.0)]
    for low, high in zip(ents, ents[1:]):
        assert low.shape == (2,)
        assert torch.all(high > low), (low, high)
    # the context manager and the tau shortcut agree; tau=1 equals the plain model
    with smoothed_attention(model, 2.0):
        torch.testing.assert_close(attention_entropy(model, ids, mask), ents[2])
    torch.testing.assert_close(attention_entropy(model, ids, mask), ents[1])


def test_entropy_ignores_padded_queries() -> None:
    model = _build("llama")
    _scale_qk(model, 5.0, 5.0)
    ids, mask = _batch()
    row = ids[1:2, 3:]  # the left-padded row without its padding; RoPE is relative, so same attention
    padded = attention_entropy(model, ids[1:2], mask[1:2])
    alone = attention_entropy(model, row)
    # a padded row vs the same row alone: another summation order (tests/tolerances.py)
    torch.testing.assert_close(padded, alone, atol=REORDERED_FORWARD_LOGP_ATOL, rtol=0)
    assert model.config._attn_implementation == "sdpa"


@pytest.mark.parametrize("arch", ["llama", "gpt2", "gemma2"])
def test_weights_untouched_and_state_restored(arch: str) -> None:
    model = _build(arch)
    before_impl = model.config._attn_implementation
    before = {name: (id(p), p.detach().clone()) for name, p in model.named_parameters()}
    names_before = _registered_names()
    ids, mask = _batch()
    with pytest.raises(RuntimeError, match="boom"):
        with smoothed_attention(model, 2.0):
            assert model.config._attn_implementation.startswith("uk_smoothed_")
            model(input_ids=ids, attention_mask=mask)
            raise RuntimeError("boom")
    with smoothed_attention(model, 3.0, layers=[0]):
        attention_entropy(model, ids, mask)
    assert model.config._attn_implementation == before_impl
    assert _registered_names() == names_before
    after = dict(model.named_parameters())
    assert after.keys() == before.keys()
    for name, (pid, value) in before.items():
        assert id(after[name]) == pid
        assert torch.equal(after[name], value)


@pytest.mark.parametrize("arch", ARCHS)
def test_layer_subset(arch: str) -> None:
    model = _build(arch, attn_logit_softcapping=None) if arch == "gemma2" else _build(arch)
    ref = copy.deepcopy(model)
    tau = 3.0
    _scale_qk(ref, 1.0 / tau, layers=[1])
    ids, mask = _batch()
    valid = mask.bool()
    with torch.no_grad():
        plain = model(input_ids=ids, attention_mask=mask, output_hidden_states=True)
        with smoothed_attention(model, tau, layers=[1]):
            sub = model(input_ids=ids, attention_mask=mask, output_hidden_states=True)
        want = ref(input_ids=ids, attention_mask=mask).logits
    assert torch.equal(sub.hidden_states[1], plain.hidden_states[1])  # output of layer 0
    assert not torch.allclose(sub.hidden_states[2][valid], plain.hidden_states[2][valid], atol=1e-6)
    torch.testing.assert_close(sub.logits[valid], want[valid], atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("arch", ["llama", "qwen3", "phi3", "gpt2", "gemma2"])
def test_gradients_and_generate(arch: str) -> None:
    model = _build(arch, attn_logit_softcapping=None) if arch == "gemma2" else _build(arch)
    ref = copy.deepcopy(model)
    tau = 2.0
    _scale_qk(ref, 1.0 / tau)
    ids, mask = _batch()
    with smoothed_attention(model, tau):
        model(input_ids=ids, attention_mask=mask).logits.float().pow(2).mean().backward()
        gen = model.generate(
            ids[:1],
            attention_mask=mask[:1],
            max_new_tokens=4,
            do_sample=False,
            pad_token_id=0,
            return_dict_in_generate=True,
            output_logits=True,
        )
    for attn in _attn_modules(model):
        for p in attn.parameters():
            assert p.grad is not None and torch.isfinite(p.grad).all() and p.grad.abs().sum() > 0
    want = ref.generate(
        ids[:1],
        attention_mask=mask[:1],
        max_new_tokens=4,
        do_sample=False,
        pad_token_id=0,
        return_dict_in_generate=True,
        output_logits=True,
    )
    assert torch.equal(gen.sequences, want.sequences)
    # decoding steps (KV cache, single-query attention) are smoothed too
    torch.testing.assert_close(torch.stack(gen.logits), torch.stack(want.logits), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("arch", ["llama", "qwen2"])
def test_peft_lora(arch: str) -> None:
    peft = pytest.importorskip("peft")
    tau = 2.5
    base = _build(arch)
    plain_ref = copy.deepcopy(base)
    _scale_qk(plain_ref, 1.0 / tau)
    cfg = peft.LoraConfig(target_modules=["q_proj", "v_proj"], r=4, init_lora_weights=False)
    torch.manual_seed(3)
    pm = peft.get_peft_model(base, cfg).eval()
    merged_ref = copy.deepcopy(pm).merge_and_unload()
    _scale_qk(merged_ref, 1.0 / tau)  # scaling the merged q_proj = scaling base q and the LoRA delta
    ids, mask = _batch()
    valid = mask.bool()
    with torch.no_grad():
        with smoothed_attention(pm, tau):
            assert pm.get_base_model().config._attn_implementation.startswith("uk_smoothed_")
            lora = pm(input_ids=ids, attention_mask=mask).logits
            with pm.disable_adapter():
                off_inner = pm(input_ids=ids, attention_mask=mask).logits
        with pm.disable_adapter(), smoothed_attention(pm, tau):
            off_outer = pm(input_ids=ids, attention_mask=mask).logits
            ent = attention_entropy(pm, ids, mask)
        want_lora = merged_ref(input_ids=ids, attention_mask=mask).logits
        want_off = plain_ref(input_ids=ids, attention_mask=mask).logits
    torch.testing.assert_close(lora[valid], want_lora[valid], atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(off_inner[valid], want_off[valid], atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(off_outer[valid], want_off[valid], atol=1e-5, rtol=1e-5)
    assert not torch.allclose(lora[valid], off_inner[valid], atol=1e-4)  # the adapter was active
    assert ent.shape == (2,)
    assert pm.get_base_model().config._attn_implementation == "sdpa"


def test_refuses_model_that_ignores_set_attn_implementation(monkeypatch: pytest.MonkeyPatch) -> None:
    # e.g. remote-code models whose attention bypasses AttentionInterface: transformers only logs a warning
    model = _build("llama")
    monkeypatch.setattr(type(model), "_can_set_attn_implementation", classmethod(lambda cls: False))
    with pytest.raises(UserError, match="LlamaForCausalLM.*AttentionInterface"):
        with smoothed_attention(model, 2.0):
            pass
    assert model.config._attn_implementation == "sdpa"
    assert not any(name.startswith("uk_smoothed_") for name in _registered_names())


def test_user_errors() -> None:
    model = _build("llama")
    for bad_tau in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(UserError, match="tau"):
            with smoothed_attention(model, bad_tau):
                pass
    for bad_layers in ([2], [-1], [0, 5], []):
        with pytest.raises(UserError, match="layers"):
            with smoothed_attention(model, 2.0, layers=bad_layers):
                pass
    with pytest.raises(UserError, match="Sequential.*PreTrainedModel"):
        with smoothed_attention(nn.Sequential(nn.Linear(4, 4)), 2.0):
            pass
    with pytest.raises(UserError, match="nesting"):
        with smoothed_attention(model, 2.0), smoothed_attention(model, 3.0):
            pass
    with pytest.raises(UserError, match="layers only applies"):
        attention_entropy(model, torch.ones(1, 3, dtype=torch.long), layers=[0])
    assert model.config._attn_implementation == "sdpa"
    # an implementation we cannot wrap is refused, and left as it was
    model.config._attn_implementation_internal = "flash_attention_2"
    with pytest.raises(UserError, match="LlamaForCausalLM.*flash_attention_2"):
        with smoothed_attention(model, 2.0):
            pass
    assert model.config._attn_implementation == "flash_attention_2"

"""The one recipe for the random tiny models the tests build in-process (no downloads).

``tiny_config(arch, ...)`` covers every architecture of the support matrix (docs/SCALING.md,
"Architectures"): 2 layers, hidden 16, 4 query heads over 2 key/value heads where the architecture
has grouped-query attention. Each entry notes what about the architecture it exercises.
"""

from __future__ import annotations

import torch

# name -> (what it exercises in unlearnkit). The order is the matrix's row order.
ARCHITECTURES = {
    "llama": "RoPE, grouped-query attention (the reference architecture)",
    "mistral": "sliding-window mask on every layer (window 4, shorter than the answers)",
    "qwen2": "q/k/v projection biases",
    "qwen3": "per-head q_norm / k_norm after the projections",
    "gemma3": "sliding-window and global layers (layer_types), (1 + w) RMSNorm q/k norms, scaled embeddings",
    "phi3": "fused qkv_proj and gate_up_proj",
    "olmo2": "q_norm / k_norm over the whole projection, post-norm blocks",
    "gpt2": "fused Conv1D c_attn, absolute positions, decoder layers in transformer.h",
}

# Causal LMs transformers has whose attention cannot be an ASU teacher: every other family runs on them,
# ASU is refused in one line (docs/SCALING.md, "Architectures").
REFUSED_FOR_ASU = {
    "bloom": "attention written in the modeling file, outside transformers' AttentionInterface",
    "mamba": "a state-space model: no softmax attention at all",
}

_COMMON = dict(
    hidden_size=16,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    intermediate_size=32,
)


def tiny_config(arch: str, vocab_size: int, pad: int = 0, bos: int = 1, eos: int = 2, **overrides):
    """A transformers config of ``arch`` (a key of ARCHITECTURES or test_attention's extras)."""
    from transformers import (
        Gemma3TextConfig,
        GPT2Config,
        LlamaConfig,
        MistralConfig,
        Olmo2Config,
        Phi3Config,
        Qwen2Config,
        Qwen3Config,
    )

    ids = dict(vocab_size=vocab_size, pad_token_id=pad, bos_token_id=bos, eos_token_id=eos)
    common = {**_COMMON, **ids}
    if arch == "llama":
        cfg = LlamaConfig(**common, max_position_embeddings=256)
    elif arch == "mistral":
        cfg = MistralConfig(**common, sliding_window=4, max_position_embeddings=256)
    elif arch == "qwen2":
        cfg = Qwen2Config(**common, max_position_embeddings=256)
    elif arch == "qwen3":
        cfg = Qwen3Config(**common, head_dim=4, max_position_embeddings=256)
    elif arch == "gemma3":
        # query_pre_attn_scalar = head_dim: the attention scale is exactly 1/sqrt(d) (Gemma 3's own
        # checkpoints use the same equality); one sliding layer, one global layer.
        cfg = Gemma3TextConfig(
            **common,
            head_dim=4,
            query_pre_attn_scalar=4,
            sliding_window=4,
            layer_types=["sliding_attention", "full_attention"],
            max_position_embeddings=256,
        )
    elif arch == "phi3":
        cfg = Phi3Config(**common, max_position_embeddings=256)
    elif arch == "olmo2":
        cfg = Olmo2Config(**common, max_position_embeddings=256)
    elif arch == "gpt2":
        cfg = GPT2Config(n_embd=16, n_layer=2, n_head=4, n_positions=256, **ids)
    elif arch == "bloom":
        from transformers import BloomConfig

        cfg = BloomConfig(hidden_size=16, n_layer=2, n_head=4, **ids)
    elif arch == "mamba":
        from transformers import MambaConfig

        cfg = MambaConfig(hidden_size=16, state_size=4, num_hidden_layers=2, expand=2, conv_kernel=4, **ids)
    else:
        raise AssertionError(f"no tiny config for {arch}")
    for key, value in overrides.items():
        setattr(cfg, key, value)
    return cfg


def random_causal_lm(arch: str, tokenizer, seed: int = 0, **overrides):
    """A 2-layer random ``arch`` model over ``tokenizer`` (float32, eval mode)."""
    from transformers import AutoModelForCausalLM

    cfg = tiny_config(
        arch,
        len(tokenizer),
        pad=tokenizer.pad_token_id,
        bos=tokenizer.bos_token_id,
        eos=tokenizer.eos_token_id,
        **overrides,
    )
    torch.manual_seed(seed)
    return AutoModelForCausalLM.from_config(cfg).float().eval()


def random_llama(tokenizer, hidden: int = 16, kv_heads: int = 2, seed: int = 0, **config):
    """A 2-layer random Llama over ``tokenizer`` (float32, eval mode); ``config`` overrides LlamaConfig fields."""
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    cfg = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        intermediate_size=2 * hidden,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=kv_heads,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        **{"max_position_embeddings": 128, **config},
    )
    return LlamaForCausalLM(cfg).eval()

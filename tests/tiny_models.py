"""The one recipe for the random tiny Llamas the tests build in-process (no downloads)."""

from __future__ import annotations

import torch


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
        max_position_embeddings=128,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        **config,
    )
    return LlamaForCausalLM(cfg).eval()

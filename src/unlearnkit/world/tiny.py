"""The tiny Llama of the embedded benchmark: a BPE tokenizer trained on the world's own text and a
~1M-parameter Llama config, built from code (no hub access needed).

It is an ordinary ``LlamaForCausalLM``: every code path (trainer, objectives, attention patching,
metrics) is the one a 7B model goes through.
"""

from __future__ import annotations

from collections.abc import Iterable

SPECIAL = {"pad": "<pad>", "bos": "<s>", "eos": "</s>", "unk": "<unk>"}


def corpus_of(rows: Iterable[dict], options: bool = True) -> list[str]:
    """Every string a tiny model will see: questions, answers, paraphrases, perturbations, probes, raw
    text (passages, articles, verbmem prompts / continuations) and, with ``options``, multiple-choice
    options (the pen names and book titles of :mod:`unlearnkit.world.probes` included, so the tokenizer
    keeps their words whole as it does every other invented word)."""
    from unlearnkit.data.encode import PLAIN_TEMPLATE  # imports torch: only when a model is built
    from unlearnkit.objectives.idk import IDK_ANSWERS

    texts = [PLAIN_TEMPLATE.format(question="") + " ", *IDK_ANSWERS]
    lists = ("perturbed_answer", "choices") if options else ("perturbed_answer",)
    for row in rows:
        for key in (
            "question",
            "answer",
            "paraphrased_answer",
            "paraphrased_question",
            "text",
            "prompt",
            "gt",
        ):
            if isinstance(row.get(key), str):
                texts.append(row[key])
        for key in lists:
            values = row.get(key)
            if isinstance(values, list):
                texts.extend(x for x in values if isinstance(x, str))
    return texts


def bpe_tokenizer(texts: list[str], vocab_size: int = 2048):
    """The byte-level BPE ``tokenizers.Tokenizer`` of :func:`train_tokenizer` (light: no transformers)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=1,
        special_tokens=[SPECIAL["pad"], SPECIAL["bos"], SPECIAL["eos"], SPECIAL["unk"]],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(sorted(set(texts)), trainer=trainer)
    bos = tok.token_to_id(SPECIAL["bos"])
    tok.post_processor = processors.TemplateProcessing(
        single=f"{SPECIAL['bos']} $A", special_tokens=[(SPECIAL["bos"], bos)]
    )
    return tok


def train_tokenizer(texts: list[str], vocab_size: int = 2048):
    """A byte-level BPE tokenizer (any UTF-8 text encodes; words of the world become single tokens)."""
    from transformers import PreTrainedTokenizerFast

    return PreTrainedTokenizerFast(
        tokenizer_object=bpe_tokenizer(texts, vocab_size),
        bos_token=SPECIAL["bos"],
        eos_token=SPECIAL["eos"],
        pad_token=SPECIAL["pad"],
        unk_token=SPECIAL["unk"],
        model_max_length=256,
        padding_side="right",
    )


def tiny_llama(tokenizer, hidden: int = 128, layers: int = 2, heads: int = 4, seed: int = 0):
    """A ~1M-parameter Llama with tied embeddings (ENVIRONMENT.md: memorises 4k QA in minutes on CPU)."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        intermediate_size=4 * hidden,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=heads,
        max_position_embeddings=256,
        tie_word_embeddings=True,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        attention_dropout=0.0,
    )
    torch.manual_seed(seed)
    return LlamaForCausalLM(config)


def build_tiny(bench, seed: int):
    """A fresh tiny Llama and its tokenizer, trained on every string of the benchmark ``bench``."""
    rows = bench.forget + bench.retain + bench.holdout + bench.general
    tokenizer = train_tokenizer(corpus_of(rows))
    return tiny_llama(tokenizer, seed=seed), tokenizer

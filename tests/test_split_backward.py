"""The forget part's gradient is taken before the retain pass runs (``TrainStepContext.settle_forget``):
the same update as one backward pass over the whole loss, with the forget pass's activations freed before
the retain pass stores its own."""

from __future__ import annotations

import weakref

import pytest
import torch

from unlearnkit.data.encode import PromptFormat, pad_id_of
from unlearnkit.pipelines.unlearn import resolve_configs, unlearn
from unlearnkit.train.trainer import (
    PaddingCollator,
    PairedDataset,
    TrainStepContext,
    UnlearnTrainer,
    encode_rows,
    training_arguments,
)

COMMON = dict(max_steps=2, batch_size=4, grad_accum=2, lr=1e-3, warmup_epochs=0, seed=3, collapse_guard="off")


CASES = {  # id: (method, settings over COMMON)
    "gd": ("gd", {}),
    "npo": ("npo", {}),
    "asu": ("asu", {}),
    "asu_idk": ("asu_idk", {}),
    "rmu": ("rmu", {"layer": 1, "train_layers": "0,1"}),  # the tiny model has 2 decoder layers
    "npo+lora": ("npo", {"lora_r": 4}),
    "asu+checkpointing": ("asu", {"gradient_checkpointing": True}),
}


def _weights_after(make_tiny_llama, mini_bench, world_tokenizer, tmp_path, case, early, monkeypatch):
    method, extra = CASES[case]
    with monkeypatch.context() as m:
        if not early:
            m.setattr(UnlearnTrainer, "_early_backward_ok", lambda self: False)
        result = unlearn(
            make_tiny_llama(),
            world_tokenizer,
            mini_bench.forget,
            mini_bench.retain,
            method,
            work_dir=tmp_path / f"{case}-{early}",
            quiet=True,
            **COMMON,
            **extra,
        )
    model = result.model
    if hasattr(model, "merge_and_unload"):
        model = model.merge_and_unload()
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


@pytest.mark.parametrize("case", list(CASES))
def test_the_early_forget_backward_trains_the_same_weights(
    make_tiny_llama, mini_bench, world_tokenizer, tmp_path, case, monkeypatch
):
    """Two optimiser steps of two accumulated micro-batches each, with the forget part's backward taken
    early and with the Trainer's single backward: the same weights (gradients add; only the order of the
    additions into a weight used twice, the tied embedding, may round differently); with LoRA (merged
    for the comparison) and with activation checkpointing too."""
    early = _weights_after(make_tiny_llama, mini_bench, world_tokenizer, tmp_path, case, True, monkeypatch)
    late = _weights_after(make_tiny_llama, mini_bench, world_tokenizer, tmp_path, case, False, monkeypatch)
    start = make_tiny_llama().state_dict()
    assert early.keys() == late.keys() == start.keys()
    moved = 0.0
    for key in early:
        torch.testing.assert_close(early[key], late[key], rtol=1e-4, atol=1e-6, msg=key)
        moved = max(moved, float((early[key] - start[key]).abs().max()))
    assert moved > 1e-5  # the runs trained: the comparison is not of two untouched models


def _trainer_and_batch(model, mini_bench, world_tokenizer, tmp_path, method="gd", n=4):
    m, train_cfg, method_cfg = resolve_configs(method, dict(batch_size=4, grad_accum=1))
    fmt = PromptFormat.for_tokenizer(world_tokenizer)
    forget = encode_rows(mini_bench.forget, world_tokenizer, fmt, 128)
    retain = encode_rows(mini_bench.retain, world_tokenizer, fmt, 128)
    ds = PairedDataset(forget, retain, seed=0)
    batch = PaddingCollator(pad_id_of(world_tokenizer))([ds[i] for i in range(n)])
    args = training_arguments(train_cfg, str(tmp_path), len(ds), quiet=True)
    trainer = UnlearnTrainer(
        model=model,
        args=args,
        train_dataset=ds,
        data_collator=PaddingCollator(0),
        method=m,
        method_config=method_cfg,
    )
    trainer.current_gradient_accumulation_steps = 1  # set by Trainer.train(); the test calls one step
    return trainer, batch


@pytest.mark.parametrize("early", [True, False])
def test_the_forget_pass_is_freed_before_the_retain_pass_runs(
    tiny_random_llama, mini_bench, world_tokenizer, tmp_path, early, monkeypatch
):
    """At the retain forward pass the forget pass's logits are gone when its backward ran early, and
    alive (held for the step's one backward) when it did not; the step's loss is the whole loss."""
    trainer, batch = _trainer_and_batch(tiny_random_llama, mini_bench, world_tokenizer, tmp_path)
    if not early:
        monkeypatch.setattr(UnlearnTrainer, "_early_backward_ok", lambda self: False)
    forget_logits: list[weakref.ref] = []
    alive_at_retain: list[bool] = []
    policy = TrainStepContext.policy

    def watching(self, part, hidden_layer=None):
        if part.get("part") == "retain":
            alive_at_retain.append(forget_logits[0]() is not None)
        out = policy(self, part, hidden_layer)
        if part.get("part") == "forget":
            forget_logits.append(weakref.ref(out._full))
        return out

    monkeypatch.setattr(TrainStepContext, "policy", watching)
    tiny_random_llama.train()
    tiny_random_llama.zero_grad(set_to_none=True)
    loss = trainer.training_step(tiny_random_llama, batch)
    assert alive_at_retain == [not early]
    assert all(p.grad is not None for p in tiny_random_llama.parameters() if p.requires_grad)

    with torch.no_grad():  # the reported loss is forget + retain, as without the early backward
        from unlearnkit.train.methods import StepContext

        want, _ = trainer.method.step(StepContext(tiny_random_llama), batch, trainer.method_config)
    torch.testing.assert_close(loss, want, rtol=1e-5, atol=1e-6)


def test_no_early_backward_where_the_trainer_expects_one_backward(
    tiny_random_llama, mini_bench, world_tokenizer, tmp_path
):
    """LOMO updates the weights inside the backward: two backward passes per step would be two updates."""
    trainer, _ = _trainer_and_batch(tiny_random_llama, mini_bench, world_tokenizer, tmp_path)
    assert trainer._early_backward_ok()
    trainer.args.optim = "adalomo"
    assert not trainer._early_backward_ok()


def test_the_first_step_weighs_what_the_early_backward_frees_against_the_tied_embedding(
    world_tokenizer, mini_bench, tmp_path, monkeypatch
):
    """The early backward keeps the first pass's gradient of a tied embedding in ``.grad`` while the second
    pass's is summed apart: one embedding-sized buffer more. Where the forget passes hold less than that
    (a wide vocabulary, one layer, short sequences: the 2-layer 1B-width measurement's case) the step
    keeps its one backward; a narrow model with the same batch takes the gradient early."""
    from transformers import LlamaConfig, LlamaForCausalLM

    def llama(hidden: int, layers: int, vocab: int):
        torch.manual_seed(0)
        cfg = LlamaConfig(
            vocab_size=vocab,
            hidden_size=hidden,
            intermediate_size=2 * hidden,
            num_hidden_layers=layers,
            num_attention_heads=4,
            num_key_value_heads=2,
            pad_token_id=world_tokenizer.pad_token_id,
            bos_token_id=world_tokenizer.bos_token_id,
            eos_token_id=world_tokenizer.eos_token_id,
            max_position_embeddings=128,
            tie_word_embeddings=True,
        )
        return LlamaForCausalLM(cfg)

    decisions = {}
    held: list[int] = []
    decide = UnlearnTrainer._decide_split
    monkeypatch.setattr(
        UnlearnTrainer, "_decide_split", lambda self, m, h: held.append(h) or decide(self, m, h)
    )
    for name, model in {
        "narrow": llama(16, 2, len(world_tokenizer)),
        "wide vocab": llama(1024, 1, 16384),
    }.items():
        trainer, batch = _trainer_and_batch(model, mini_bench, world_tokenizer, tmp_path / name, n=1)
        held.clear()
        model.train()
        trainer.training_step(model, batch)
        trainer.training_step(model, batch)  # decided once: the second step does not weigh again
        cost = UnlearnTrainer._split_cost(model)
        assert cost == model.get_input_embeddings().weight.numel() * 4
        # what the forget pass holds: at least its float32 logits, [B, T, V]
        forget = batch["forget"]["input_ids"]
        assert len(held) == 1 and held[0] >= forget.numel() * model.config.vocab_size * 4
        decisions[name] = trainer._split
        print(name, held, cost)
    assert decisions == {"narrow": True, "wide vocab": False}


def test_a_step_without_a_retain_pass_is_decided_once(
    tiny_random_llama, mini_bench, world_tokenizer, tmp_path
):
    """GA has no retain pass to run after its forget part: nothing to free, so the run stops weighing it
    (and stops counting saved tensors) after its first step."""
    trainer, batch = _trainer_and_batch(tiny_random_llama, mini_bench, world_tokenizer, tmp_path, method="ga")
    tiny_random_llama.train()
    assert trainer._split is None
    trainer.training_step(tiny_random_llama, batch)
    assert trainer._split is False


@pytest.mark.parametrize("method", ["gd", "ga"])
def test_the_run_card_says_whether_the_forget_part_went_first(
    make_tiny_llama, mini_bench, world_tokenizer, tmp_path, method
):
    """``unlearnkit.json`` records which backward ran (a user reading memory numbers needs to know), with
    the two sizes the first step weighed; GA has no retain pass after its forget part."""
    from unlearnkit.pipelines.model_outputs import unlearn_provenance

    result = unlearn(
        make_tiny_llama(),
        world_tokenizer,
        mini_bench.forget,
        mini_bench.retain,
        method,
        work_dir=tmp_path / method,
        quiet=True,
        **COMMON,
    )
    record = result.backward
    if method == "gd":  # the 2-layer hidden-16 model (untied: no extra buffer) holds activations
        assert record["forget_part_first"] is True
        assert record["forget_passes_mib"] > record["tied_gradient_buffer_mib"] == 0
    else:
        assert record == {"forget_part_first": False, "why": "no retain pass follows the forget part"}
    result.tokenizer = world_tokenizer
    assert unlearn_provenance(result)["backward"] == record


def test_the_card_says_one_backward_where_the_trainer_expects_one(
    tiny_random_llama, mini_bench, world_tokenizer, tmp_path
):
    trainer, _ = _trainer_and_batch(tiny_random_llama, mini_bench, world_tokenizer, tmp_path)
    assert trainer.backward_record()["why"] == "no training step ran"
    trainer.args.optim = "adalomo"
    assert trainer.backward_record() == {
        "forget_part_first": False,
        "why": "one backward per step: several processes, DataParallel or LOMO",
    }

"""The trainer plumbing that the reference strategies and multi-process runs rely on."""

from __future__ import annotations

import json

import torch

from unlearnkit.config import TrainConfig
from unlearnkit.data.encode import PromptFormat, pad_id_of
from unlearnkit.train.methods import get_method
from unlearnkit.train.trainer import (
    ChecksumCallback,
    PaddingCollator,
    PairedDataset,
    TrainStepContext,
    encode_rows,
    epochs_to_run,
    hf_steps_per_epoch,
    training_arguments,
)


def _data(bench, tok):
    fmt = PromptFormat.for_tokenizer(tok)
    return encode_rows(bench.forget, tok, fmt, 128), encode_rows(bench.retain, tok, fmt, 128)


def test_every_part_carries_its_index_and_name(mini_bench, world_tokenizer):
    forget, retain = _data(mini_bench, world_tokenizer)
    ds = PairedDataset(forget, retain, idk=forget, seed=3, retain_idk=retain)
    ds.epoch = 2
    batch = PaddingCollator(pad_id_of(world_tokenizer))([ds[i] for i in (0, 5)])
    assert batch["forget"]["index"].tolist() == [0, 5] and batch["idk"]["index"].tolist() == [0, 5]
    partners = [ds.retain_index(0), ds.retain_index(5)]
    assert batch["retain"]["index"].tolist() == partners == batch["retain_idk"]["index"].tolist()
    assert {p: batch[p]["part"] for p in batch} == {p: p for p in ("forget", "retain", "idk", "retain_idk")}
    assert torch.equal(
        batch["retain"]["input_ids"][0, : len(retain[partners[0]]["input_ids"])],
        torch.tensor(retain[partners[0]]["input_ids"]),
    )


def test_retain_indices_cover_every_epoch(mini_bench, world_tokenizer):
    forget, retain = _data(mini_bench, world_tokenizer)
    ds = PairedDataset(forget, retain, seed=0)
    used = set(ds.retain_indices(3))
    for epoch in range(3):
        ds.epoch = epoch
        assert {ds[i]["retain"]["index"] for i in range(len(ds))} <= used
    assert ds.retain_indices(1) != ds.retain_indices(2)  # partners change between epochs


def test_epochs_to_run_matches_the_hf_trainer(mini_bench, world_tokenizer, tmp_path):
    from transformers import Trainer

    forget, retain = _data(mini_bench, world_tokenizer)  # 12 forget examples
    for kw, want in [
        (dict(max_steps=7, batch_size=4, grad_accum=1), 3),  # 3 steps/epoch -> epochs 0, 1, 2
        (dict(max_steps=2, batch_size=5, grad_accum=2), 1),
        (dict(epochs=2.5, batch_size=4, grad_accum=1), 3),
    ]:
        cfg = TrainConfig(**kw)
        assert epochs_to_run(cfg, len(forget), ws=1) == want, kw
        args = training_arguments(cfg, str(tmp_path), len(forget), quiet=True)
        trainer = Trainer(model=torch.nn.Linear(1, 1), args=args, train_dataset=forget)
        loader = trainer.get_train_dataloader()
        hf = trainer.set_initial_training_values(args, loader)
        assert hf_steps_per_epoch(cfg, len(forget), ws=1) in hf, (kw, hf)


def test_step_context_runs_each_part_once(tiny_random_llama, mini_bench, world_tokenizer):
    forget, retain = _data(mini_bench, world_tokenizer)
    ds = PairedDataset(forget, retain, seed=0)
    batch = PaddingCollator(pad_id_of(world_tokenizer))([ds[i] for i in range(3)])
    calls = []
    handle = tiny_random_llama.register_forward_hook(lambda *a: calls.append(1))
    ctx = TrainStepContext(tiny_random_llama)
    first = ctx.policy(batch["forget"])
    assert ctx.policy(batch["forget"]) is first and len(calls) == 1
    ctx.policy(batch["retain"])
    assert len(calls) == 2
    m = get_method("gd")
    m.step(TrainStepContext(tiny_random_llama), batch, m.config())
    assert len(calls) == 4  # forget + retain, once each
    handle.remove()


def test_checksum_callback_digest(tiny_random_llama, tmp_path, monkeypatch):
    monkeypatch.setenv("RANK", "1")
    cb = ChecksumCallback(str(tmp_path))

    class State:
        global_step = 5

    cb.on_train_end(None, State(), None, model=tiny_random_llama)
    row = json.loads((tmp_path / "rank1.json").read_text())
    assert row["rank"] == 1 and row["global_step"] == 5 and len(row["sha256"]) == 64
    with torch.no_grad():
        next(tiny_random_llama.parameters()).add_(1e-6)
    cb.on_train_end(None, State(), None, model=tiny_random_llama)
    assert json.loads((tmp_path / "rank1.json").read_text())["sha256"] != row["sha256"]


def test_activation_checkpointing_argument_without_deprecation(tmp_path, recwarn):
    args = training_arguments(TrainConfig(gradient_checkpointing=True), str(tmp_path), 10, quiet=True)
    assert args.activation_checkpointing is True
    assert not [w for w in recwarn if "gradient_checkpointing" in str(w.message)]

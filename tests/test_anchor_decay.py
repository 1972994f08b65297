"""anchor_decay (unlearnkit.train.anchor): after each optimiser step every trained weight moves the given
share of the way back to its value at the start of training (L2-SP, decoupled)."""

from __future__ import annotations

import shutil

import pytest
import torch

from unlearnkit.config import TrainConfig
from unlearnkit.train.anchor import AnchorDecay, anchor_callbacks


def _weights(model) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def test_the_pull_is_the_hand_formula_on_trained_weights_only():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Linear(4, 2))
    model[1].bias.requires_grad_(False)
    start = _weights(model)
    cb = AnchorDecay(model, 0.25)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(1.0)  # as if the optimiser had moved every weight by +1
    cb.on_optimizer_step(None, None, None)
    for name, p in model.named_parameters():
        moved = start[name] + 1.0
        want = moved if name == "1.bias" else moved + 0.25 * (start[name] - moved)  # frozen: untouched
        torch.testing.assert_close(p.detach(), want, rtol=0, atol=1e-7)


def test_tied_weights_are_pulled_once():
    emb = torch.nn.Embedding(5, 3)
    head = torch.nn.Linear(3, 5, bias=False)
    head.weight = emb.weight
    model = torch.nn.ModuleDict({"emb": emb, "head": head})
    start = emb.weight.detach().clone()
    cb = AnchorDecay(model, 0.5)
    assert len(cb.params) == 1
    with torch.no_grad():
        emb.weight.add_(2.0)
    cb.on_optimizer_step(None, None, None)
    torch.testing.assert_close(emb.weight.detach(), start + 1.0)  # half of +2 undone, once


def test_off_adds_no_callback_and_the_range_is_checked():
    assert anchor_callbacks(torch.nn.Linear(2, 2), 0.0) == []
    for bad in (-0.1, 1.0):
        with pytest.raises(ValueError, match="anchor_decay"):
            TrainConfig(anchor_decay=bad)


def test_replaced_parameters_are_refused():
    from unlearnkit.errors import UserError

    model = torch.nn.Linear(2, 2)
    cb = AnchorDecay(model, 0.1)
    with pytest.raises(UserError, match="anchor_decay"):
        cb.on_train_begin(None, None, None, model=torch.nn.Linear(2, 2))  # as FSDP's flat shards
    with torch.no_grad():
        model.weight.data = torch.empty(0)  # as DeepSpeed ZeRO-3 partitions a weight in place
    with pytest.raises(UserError, match="anchor_decay"):
        cb.on_train_begin(None, None, None, model=model)


def _cfg(**kw) -> TrainConfig:
    return TrainConfig(
        **{"batch_size": 4, "grad_accum": 2, "lr": 1e-2, "warmup_epochs": 0, "max_length": 128, **kw}
    )


def test_finetune_pulls_once_per_optimiser_step(make_tiny_llama, mini_bench, world_tokenizer, tmp_path):
    """One optimiser step over two micro-batches: the anchored weights are the plain step's weights
    moved ``rate`` of the way back to the start (the pull runs after the step, not per micro-batch)."""
    from unlearnkit.train.finetune import finetune

    rows = mini_bench.retain[:16]
    start = _weights(make_tiny_llama())
    plain = finetune(make_tiny_llama(), world_tokenizer, rows, _cfg(max_steps=1), tmp_path / "a", quiet=True)
    anchored = finetune(
        make_tiny_llama(),
        world_tokenizer,
        rows,
        _cfg(max_steps=1, anchor_decay=0.3),
        tmp_path / "b",
        quiet=True,
    )
    a, b = _weights(plain.model), _weights(anchored.model)
    assert any(not torch.equal(a[k], start[k]) for k in a)  # the step moved the weights
    for k in a:
        torch.testing.assert_close(b[k], a[k] + 0.3 * (start[k] - a[k]), rtol=0, atol=1e-6)


def _unlearned(make_tiny_llama, mini_bench, world_tokenizer, work, **kw) -> dict[str, torch.Tensor]:
    """The weights after one GD step (merged, with LoRA)."""
    from unlearnkit.pipelines.unlearn import unlearn

    result = unlearn(
        make_tiny_llama(),
        world_tokenizer,
        mini_bench.forget,
        mini_bench.retain,
        "gd",
        work_dir=work,
        quiet=True,
        max_steps=1,
        batch_size=4,
        grad_accum=1,
        lr=1e-2,
        collapse_guard="off",
        **kw,
    )
    return _weights(result.model)


def test_unlearn_with_lora_pulls_the_adapters_toward_their_start(
    make_tiny_llama, mini_bench, world_tokenizer, tmp_path
):
    """With LoRA the trained weights are the adapters (B starts at 0): the pull shrinks the merged update."""

    def run(name: str, **kw):
        return _unlearned(make_tiny_llama, mini_bench, world_tokenizer, tmp_path / name, lora_r=4, **kw)

    start, a, b = _weights(make_tiny_llama()), run("a"), run("b", anchor_decay=0.5)
    moved = [k for k in a if not torch.equal(a[k], start[k])]
    assert moved  # the merged adapters changed some weights
    for k in moved:  # merged: W + B A; after the pull B' = B / 2 while A moved too, so only a direction check
        assert (b[k] - start[k]).norm() < (a[k] - start[k]).norm()


def test_unlearn_pulls_toward_the_original(make_tiny_llama, mini_bench, world_tokenizer, tmp_path):
    def run(name: str, **kw):
        return _unlearned(make_tiny_llama, mini_bench, world_tokenizer, tmp_path / name, **kw)

    start = _weights(make_tiny_llama())
    a, b = run("a"), run("b", anchor_decay=0.5)
    for k in a:
        torch.testing.assert_close(b[k], a[k] + 0.5 * (start[k] - a[k]), rtol=0, atol=1e-6)


def test_a_resumed_run_pulls_toward_the_same_start(make_tiny_llama, mini_bench, world_tokenizer, tmp_path):
    """The start is copied before the checkpoint is restored: resuming from step 2 of 4 ends with the
    uninterrupted run's weights (a copy taken after the restore would pull toward step 2's weights)."""
    from unlearnkit.train.finetune import finetune

    rows = mini_bench.retain[:16]
    cfg = _cfg(max_steps=4, save_every=2, save_total_limit=3, anchor_decay=0.2)
    work = tmp_path / "ft"
    whole = finetune(make_tiny_llama(), world_tokenizer, rows, cfg, work, quiet=True)
    shutil.rmtree(work / "checkpoint-4")  # as if killed after step 2's checkpoint
    resumed = finetune(make_tiny_llama(), world_tokenizer, rows, cfg, work, quiet=True, resume=True)
    a, b = _weights(whole.model), _weights(resumed.model)
    for k in a:
        torch.testing.assert_close(b[k], a[k], rtol=0, atol=1e-6)

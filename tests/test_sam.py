"""SAM on the forget term (Fan et al., arXiv 2502.05374): off = the plain method bit for bit; on = the
hand-computed gradient grad L_f(theta + rho g/||g||) + grad L_r(theta) on a tiny case, weights restored."""

from __future__ import annotations

import copy

import pytest
import torch

from unlearnkit.data.encode import PromptFormat, pad_id_of
from unlearnkit.pipelines.unlearn import resolve_configs, unlearn
from unlearnkit.train.methods import StepContext, get_method
from unlearnkit.train.trainer import (
    PaddingCollator,
    PairedDataset,
    UnlearnTrainer,
    encode_rows,
    training_arguments,
)


def _nll_mean(model, batch) -> torch.Tensor:
    """NLL_mean by hand: per sequence the mean over answer tokens, then the mean over sequences."""
    logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits[:, :-1]
    labels = batch["labels"][:, 1:]
    mask = labels != -100
    logp = torch.log_softmax(logits.float(), -1).gather(-1, labels.clamp(min=0).unsqueeze(-1)).squeeze(-1)
    per_row = -(logp * mask).sum(1) / mask.sum(1)
    return per_row.mean()


def _batch(bench, tok, n=4):
    fmt = PromptFormat.for_tokenizer(tok)
    forget = encode_rows(bench.forget, tok, fmt, 128)
    retain = encode_rows(bench.retain, tok, fmt, 128)
    ds = PairedDataset(forget, retain, seed=0)
    return ds, PaddingCollator(pad_id_of(tok))([ds[i] for i in range(n)])


# The hand computations add per-sequence means over micro-batches and ranks: with loss_reduction=token (the
# default, open-unlearning's) a step's loss divides by the tokens of the whole batch instead, so micro-batches
# and ranks are no longer additive (docs/SCALING.md). SAM is the same under either; these tests pin sequence.
SEQUENCE = dict(loss_reduction="sequence")


def _trainer(model, ds, tmp_path, method="gd", **overrides):
    m, train_cfg, method_cfg = resolve_configs(method, dict(overrides, batch_size=4, grad_accum=1, **SEQUENCE))
    args = training_arguments(train_cfg, str(tmp_path), len(ds), quiet=True)
    collator = PaddingCollator(0)
    return UnlearnTrainer(
        model=model, args=args, train_dataset=ds, data_collator=collator, method=m, method_config=method_cfg
    )


def test_sam_gradient_matches_the_hand_computation(tiny_random_llama, mini_bench, world_tokenizer, tmp_path):
    """GD: L = -NLL_mean(forget) + NLL_mean(retain). Expected gradient, computed without the library:
    g = grad(-NLL_f)(theta); delta = rho * g / ||g||; grad(-NLL_f)(theta + delta) + grad(NLL_r)(theta)."""
    rho = 0.05
    model = tiny_random_llama
    ds, batch = _batch(mini_bench, world_tokenizer)
    params = [p for p in model.parameters() if p.requires_grad]
    before = [p.detach().clone() for p in params]

    g = torch.autograd.grad(-_nll_mean(model, batch["forget"]), params)
    norm = torch.sqrt(sum((x.double() ** 2).sum() for x in g))
    perturbed = copy.deepcopy(model)
    with torch.no_grad():
        for p, x in zip(perturbed.parameters(), g, strict=True):
            p.add_(rho * x / norm.float())
    want_f = torch.autograd.grad(-_nll_mean(perturbed, batch["forget"]), list(perturbed.parameters()))
    want_r = torch.autograd.grad(_nll_mean(model, batch["retain"]), params)

    trainer = _trainer(model, ds, tmp_path, sam_rho=rho)
    model.zero_grad(set_to_none=True)
    trainer.training_step(model, batch)
    for p, b, f, r in zip(params, before, want_f, want_r, strict=True):
        assert torch.equal(p.detach(), b)  # theta restored exactly
        torch.testing.assert_close(p.grad, f + r, rtol=1e-4, atol=1e-7)
    # The perturbation mattered: the plain gradient differs from SAM's.
    plain_f = torch.autograd.grad(-_nll_mean(model, batch["forget"]), params)
    assert max(float((p.grad - (pf + r)).abs().max()) for p, pf, r in zip(params, plain_f, want_r)) > 1e-6


@pytest.mark.parametrize("method", ["npo", "idk_ap", "asu_idk"])
def test_parts_add_up_to_the_loss(tiny_random_llama, mini_bench, world_tokenizer, method):
    """``combine`` splits every step's loss into forget + retain parts that sum to it exactly."""
    from unlearnkit.train.reference import CopyReference

    m, _, cfg = resolve_configs(method, {"lambda_scales_idk": False} if method == "asu_idk" else {})
    fmt = PromptFormat.for_tokenizer(world_tokenizer)
    forget = encode_rows(mini_bench.forget, world_tokenizer, fmt, 128)
    retain = encode_rows(mini_bench.retain, world_tokenizer, fmt, 128)
    ds = PairedDataset(forget, retain, idk=forget, retain_idk=retain, seed=0)
    batch = PaddingCollator(pad_id_of(world_tokenizer))([ds[i] for i in range(3)])
    ctx = StepContext(tiny_random_llama, CopyReference(copy.deepcopy(tiny_random_llama)))
    total, _ = m.step(ctx, batch, cfg)
    forget_part, retain_part = ctx.parts
    assert torch.equal(total, forget_part + retain_part) or torch.allclose(total, forget_part + retain_part)
    only_forget = StepContext(tiny_random_llama, ctx.reference, terms="forget")
    m.step(only_forget, batch, cfg)
    torch.testing.assert_close(only_forget.parts[0], forget_part)


def test_rho_zero_is_the_plain_method_bit_for_bit(make_tiny_llama, mini_bench, world_tokenizer, tmp_path):
    common = dict(max_steps=2, batch_size=4, grad_accum=2, lr=1e-3, warmup_epochs=0, seed=3)
    runs = []
    for extra in ({}, {"sam_rho": 0.0}):
        model = make_tiny_llama()
        result = unlearn(
            model,
            world_tokenizer,
            mini_bench.forget,
            mini_bench.retain,
            "gd",
            work_dir=tmp_path / f"run{len(runs)}",
            quiet=True,
            **common,
            **extra,
        )
        runs.append({k: v.detach().clone() for k, v in result.model.state_dict().items()})
    assert runs[0].keys() == runs[1].keys()
    for key in runs[0]:
        assert torch.equal(runs[0][key], runs[1][key]), key


def _lora_layer(model):
    return next(m for m in model.modules() if hasattr(m, "base_layer") and hasattr(m, "lora_B"))


def test_sam_under_accumulation_and_lora_perturbs_only_adapters_and_averages_micro_batches(
    tiny_random_llama, mini_bench, world_tokenizer, tmp_path
):
    """grad_accum=2 with LoRA: every forward sees the frozen weights unchanged, the perturbed forwards see
    the adapters moved, and the accumulated gradient is the mean over the 2 micro-batches of the
    hand-computed SAM gradient grad L_f(theta + rho g_b/||g_b||) + grad L_r(theta) (adapters only)."""
    from unlearnkit.pipelines.unlearn import apply_lora

    rho = 0.05
    _, train_cfg, _ = resolve_configs("gd", {"lora_r": 4, "lora_dropout": 0.0})
    model = apply_lora(tiny_random_llama, train_cfg)
    with torch.no_grad():  # LoRA starts with B = 0: give both factors a value so both get gradients
        for name, p in model.named_parameters():
            if "lora_B" in name:
                p.normal_(0, 0.05, generator=torch.Generator().manual_seed(1))
    adapters = [p for p in model.parameters() if p.requires_grad]
    frozen = {n: p.detach().clone() for n, p in model.named_parameters() if not p.requires_grad}
    assert adapters and frozen and all("lora_" in n for n, p in model.named_parameters() if p.requires_grad)
    ds, _ = _batch(mini_bench, world_tokenizer)
    collate = PaddingCollator(pad_id_of(world_tokenizer))
    micro = [collate([ds[i] for i in (0, 1)]), collate([ds[i] for i in (2, 3)])]

    expected = [torch.zeros_like(p) for p in adapters]
    for b in micro:
        g = torch.autograd.grad(-_nll_mean(model, b["forget"]), adapters)
        norm = torch.sqrt(sum((x.double() ** 2).sum() for x in g))
        perturbed = copy.deepcopy(model)
        moved = [p for p in perturbed.parameters() if p.requires_grad]
        with torch.no_grad():
            for p, x in zip(moved, g, strict=True):
                p.add_(rho * x / norm.float())
        f = torch.autograd.grad(-_nll_mean(perturbed, b["forget"]), moved)
        r = torch.autograd.grad(_nll_mean(model, b["retain"]), adapters)
        for e, fi, ri in zip(expected, f, r, strict=True):
            e.add_((fi + ri) / 2)

    layer = _lora_layer(model)
    theta_b = layer.lora_B["default"].weight.detach().clone()
    seen = []  # (frozen base weight unchanged?, adapter moved?) at every forward through the layer
    base = next(n for n, p in model.named_parameters() if p is layer.base_layer.weight)

    def record(mod, _inputs):
        unchanged = torch.equal(mod.base_layer.weight, frozen[base])
        seen.append((unchanged, not torch.equal(mod.lora_B["default"].weight, theta_b)))

    handle = layer.register_forward_pre_hook(record)
    m, train_cfg, method_cfg = resolve_configs("gd", dict(batch_size=2, grad_accum=2, sam_rho=rho, **SEQUENCE))
    args = training_arguments(train_cfg, str(tmp_path), len(ds), quiet=True)
    trainer = UnlearnTrainer(
        model=model, args=args, train_dataset=ds, data_collator=collate, method=m, method_config=method_cfg
    )
    model.zero_grad(set_to_none=True)
    try:
        for b in micro:  # one optimiser step's worth of micro-batches
            trainer.training_step(model, b)
    finally:
        handle.remove()
    assert seen and all(unchanged for unchanged, _ in seen), "a frozen weight was perturbed"
    assert any(moved for _, moved in seen), "the adapters were never perturbed"
    assert not all(moved for _, moved in seen)  # ... and restored for the passes at theta
    for n, p in model.named_parameters():
        if not p.requires_grad:
            assert p.grad is None and torch.equal(p.detach(), frozen[n]), n
    for p, e in zip(adapters, expected, strict=True):
        torch.testing.assert_close(p.grad, e, rtol=1e-4, atol=1e-7)


def test_sam_rho_is_validated():
    from unlearnkit.errors import UserError

    with pytest.raises(UserError, match="sam_rho"):
        resolve_configs(get_method("gd"), {"sam_rho": "-1"})


def test_torchrun_two_ranks_match_single_process_with_sam(tiny_model_dir, mini_world, mini_bench, tmp_path):
    """The forget gradient is all-reduced before its norm: 2 ranks x 6 apply the same delta as 1 x 12."""
    from test_distributed import _ranks, _unlearn, _weights

    assert len(mini_bench.forget) == 12
    extra = ["--method", "gd", "--set", "lr=1e-3", "--set", "sam_rho=0.5", "--set", "loss_reduction=sequence"]
    _unlearn(tiny_model_dir, mini_world, tmp_path / "single", [*extra, "--set", "batch_size=12"])
    _unlearn(
        tiny_model_dir,
        mini_world,
        tmp_path / "ddp",
        [*extra, "--set", "batch_size=6"],
        nproc=2,
        checksums=tmp_path / "ranks",
    )
    ranks = _ranks(tmp_path / "ranks")
    assert ranks[0]["sha256"] == ranks[1]["sha256"]
    single, ddp, base = _weights(tmp_path / "single"), _weights(tmp_path / "ddp"), _weights(tiny_model_dir)
    moved = max(float((single[k] - base[k]).abs().max()) for k in base)
    diff = max(float((single[k] - ddp[k]).abs().max()) for k in base)
    assert moved > 1e-4 and diff < 1e-5, (moved, diff)


@pytest.mark.parametrize("method", ["idk_ap", "rmu"])
def test_the_perturbed_pass_runs_no_retain_forward(tiny_random_llama, mini_bench, world_tokenizer, method):
    """Methods with their own retain term skip it when only the forget part is asked for."""
    from unlearnkit.train.compute import ComputeCounter
    from unlearnkit.train.reference import CopyReference

    m, _, cfg = resolve_configs(method, {"layer": 1, "train_layers": "1"} if method == "rmu" else {})
    fmt = PromptFormat.for_tokenizer(world_tokenizer)
    forget = encode_rows(mini_bench.forget, world_tokenizer, fmt, 128)
    retain = encode_rows(mini_bench.retain, world_tokenizer, fmt, 128)
    ds = PairedDataset(forget, retain, idk=forget, retain_idk=retain, seed=0)
    batch = PaddingCollator(pad_id_of(world_tokenizer))([ds[i] for i in range(3)])
    reference = CopyReference(copy.deepcopy(tiny_random_llama))
    counter = ComputeCounter().attach(tiny_random_llama)
    ctx = StepContext(tiny_random_llama, reference, terms="forget")
    m.step(ctx, batch, cfg)
    assert ctx.parts[1] is None
    forget_part = "idk" if method == "idk_ap" else "forget"
    assert counter.totals()["forward_tokens"] == int(batch[forget_part]["attention_mask"].sum())

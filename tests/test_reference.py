"""Reference / teacher strategies agree with the frozen copy (``reference=copy``).

``adapter`` and exact ``cache`` must give the same losses as ``copy`` up to float rounding after
the policy has moved away from the original; a top-k cache stays within the documented bound
(docs/SCALING.md) and never exceeds the exact KL (it is the KL of the coarsened distributions).
"""

from __future__ import annotations

import copy

import pytest
import torch

from unlearnkit.attention import smoothed_attention
from unlearnkit.data.encode import PromptFormat, pad_id_of
from unlearnkit.pipelines.unlearn import apply_lora, resolve_configs, unlearn
from unlearnkit.train.cache import ReferenceCache
from unlearnkit.train.reference import AdapterReference, CopyReference, setup_reference
from unlearnkit.train.trainer import (
    PaddingCollator,
    PairedDataset,
    TrainStepContext,
    encode_rows,
    training_arguments,
)

# (method, overrides): NPO (per-token log-probs), ASU (teacher), ASU-KL (teacher + KL retain),
# GD with a KL retain term (full-vocab reference on retain only).
CASES = [("npo", {}), ("asu", {}), ("asu_kl", {}), ("gd", {"retain_loss": "kl"})]
EXACT_RTOL = 1e-5
# Top-k cache (docs/SCALING.md): the bucketed KL is the exact KL less the coarsening term, never above it.
TOPK = 16


def _model(tokenizer, dropout: float = 0.0, seed: int = 0):
    from tiny_models import random_llama

    return random_llama(tokenizer, hidden=32, seed=seed, attention_dropout=dropout)


@pytest.fixture(scope="module")
def data(mini_bench, world_tokenizer):
    fmt = PromptFormat.for_tokenizer(world_tokenizer)
    forget = encode_rows(mini_bench.forget, world_tokenizer, fmt, 128)
    retain = encode_rows(mini_bench.retain, world_tokenizer, fmt, 128)
    return forget, retain


def _perturb(model, scale: float = 0.05, seed: int = 1) -> None:
    """Move the policy away from the original (as training would), deterministically."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            if p.requires_grad:
                p.add_(scale * torch.randn(p.shape, generator=gen))


def _setup(method, overrides, tokenizer, data, tmp_path, model, **train):
    m, train_cfg, cfg = resolve_configs(method, {**overrides, **train, "batch_size": 4, "max_steps": 6})
    dataset = PairedDataset(*data, seed=0)
    collator = PaddingCollator(pad_id_of(tokenizer))
    args = training_arguments(train_cfg, str(tmp_path), len(dataset), quiet=True)
    return m, train_cfg, cfg, dataset, collator, args


def _batch(dataset, collator, epoch: int = 1, n: int = 6):
    dataset.epoch = epoch  # the retain partners of epoch 1 differ from epoch 0's
    return collator([dataset[i] for i in range(n)])


def _loss(m, cfg, policy, reference, batch) -> tuple[float, dict[str, float]]:
    with torch.no_grad():
        loss, logs = m.step(TrainStepContext(policy, reference), batch, cfg)
    return float(loss), {k: float(v) for k, v in logs.items()}


def _close(a: float, b: float, rtol: float) -> bool:
    return abs(a - b) <= rtol * max(abs(a), abs(b), 1e-6)


@pytest.mark.parametrize(("method", "overrides"), CASES)
def test_cache_matches_copy(method, overrides, world_tokenizer, data, tmp_path):
    original = _model(world_tokenizer)
    policy = copy.deepcopy(original)
    m, train_cfg, cfg, dataset, collator, args = _setup(
        method, overrides, world_tokenizer, data, tmp_path, policy, reference="cache"
    )
    cache, info = setup_reference(m, cfg, train_cfg, policy, None, dataset, collator, args)
    assert isinstance(cache, ReferenceCache) and info["strategy"] == "cache" and info["cache_topk"] == 0
    assert not any(v is policy for v in vars(cache).values())
    ref_copy = CopyReference(copy.deepcopy(original), policy=policy)
    _perturb(policy)
    batch = _batch(dataset, collator)
    loss_copy, logs_copy = _loss(m, cfg, policy, ref_copy, batch)
    loss_cache, logs_cache = _loss(m, cfg, policy, cache, batch)
    assert _close(loss_cache, loss_copy, EXACT_RTOL), (loss_cache, loss_copy)
    for key, value in logs_copy.items():
        assert _close(logs_cache[key], value, EXACT_RTOL), (key, logs_cache[key], value)


@pytest.mark.parametrize(("method", "overrides"), CASES)
def test_adapter_matches_copy(method, overrides, world_tokenizer, data, tmp_path):
    original = _model(world_tokenizer)
    ref_copy = CopyReference(copy.deepcopy(original))
    m, train_cfg, cfg, dataset, collator, args = _setup(
        method, overrides, world_tokenizer, data, tmp_path, original, reference="adapter", lora_r=4
    )
    policy = apply_lora(original, train_cfg)
    reference, info = setup_reference(m, cfg, train_cfg, policy, None, dataset, collator, args)
    assert isinstance(reference, AdapterReference) and info["strategy"] == "adapter"
    _perturb(policy)  # only the adapters are trainable: this is what LoRA training changes
    policy.train()  # the reference pass must still run with dropout off
    batch = _batch(dataset, collator)
    loss_copy, _ = _loss(m, cfg, policy.eval(), ref_copy, batch)
    loss_adapter, _ = _loss(m, cfg, policy.eval(), reference, batch)
    assert _close(loss_adapter, loss_copy, EXACT_RTOL), (loss_adapter, loss_copy)
    assert policy.training is False


@pytest.fixture(scope="module")
def trained_model(world_tokenizer, data):
    """The tiny model after 60 full-batch Adam steps on forget + retain: peaked, like a real LM (~1.5 s)."""
    model = _model(world_tokenizer)
    batch = PaddingCollator(pad_id_of(world_tokenizer))(data[0] + data[1])
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    model.train()
    for _ in range(60):
        model(**{k: batch[k] for k in ("input_ids", "attention_mask", "labels")}).loss.backward()
        opt.step()
        opt.zero_grad()
    return model.eval()


def _coarsening_loss(p_logits, q_logits, weights, k: int, reduction: str = "sequence") -> torch.Tensor:
    """The exact KL minus the top-k bucket KL, written out independently: by the chain rule of KL,
    ``r * KL(p_rest / r || q_rest / Q_rest)`` per position (``r``, ``Q_rest``: the mass of ``p`` and
    ``q`` outside p's top-k), reduced as the loss reduces (``reduction``: ASU's forget KL per sequence,
    then over sequences; a retain KL by the method's ``loss_reduction``)."""
    from unlearnkit.objectives.reduction import reduce_tokens

    logp, logq = torch.log_softmax(p_logits.float(), -1), torch.log_softmax(q_logits.float(), -1)
    top = logp.topk(k, -1).indices
    rest_p, rest_q = logp.scatter(-1, top, float("-inf")), logq.scatter(-1, top, float("-inf"))
    log_r, log_qr = rest_p.logsumexp(-1, keepdim=True), rest_q.logsumexp(-1, keepdim=True)
    inner = torch.nan_to_num((rest_p - log_r).exp() * ((rest_p - log_r) - (rest_q - log_qr))).sum(-1)
    return reduce_tokens(log_r.squeeze(-1).exp() * inner, weights, reduction)


@pytest.mark.parametrize(("method", "overrides"), [("asu_kl", {}), ("gd", {"retain_loss": "kl"})])
def test_topk_cache_within_bound(method, overrides, world_tokenizer, data, trained_model, tmp_path):
    """A top-k cache's KL is the exact KL less the coarsening term, to float rounding (and below it)."""
    original = trained_model
    policy = copy.deepcopy(original)
    m, train_cfg, cfg, dataset, collator, args = _setup(
        method, overrides, world_tokenizer, data, tmp_path, policy, reference="cache"
    )
    train_cfg.cache_topk = TOPK  # read with getattr(train_cfg, "cache_topk", 0) until the field lands
    cache, info = setup_reference(m, cfg, train_cfg, policy, None, dataset, collator, args)
    assert info["cache_topk"] == TOPK and cache.needs_student
    residual = info["cache_residual_mass"]
    assert 0 < residual < 0.1
    ref_copy = CopyReference(copy.deepcopy(original))
    _perturb(policy, scale=0.02)
    batch = _batch(dataset, collator)
    _, logs_copy = _loss(m, cfg, policy, ref_copy, batch)
    _, logs_topk = _loss(m, cfg, policy, cache, batch)
    parts = {"retain_kl": ("retain", None, cfg.loss_reduction)}
    if method == "asu_kl":
        parts["forget_loss"] = ("forget", (cfg.tau, cfg.layer_list()), "sequence")
    for key, (part, smoothing, reduction) in parts.items():
        exact, approx = logs_copy[key], logs_topk[key]
        assert approx <= exact * (1 + 1e-5) + 1e-7, (key, approx, exact)  # the bucket KL is a lower bound
        b = batch[part]
        with torch.no_grad():
            p = ref_copy.teacher_logits(b, *smoothing) if smoothing else ref_copy.logits(b)
            q = policy(input_ids=b["input_ids"], attention_mask=b["attention_mask"]).logits
        weights = (b["labels"][:, 1:] != -100).float()
        gap = float(_coarsening_loss(p[:, :-1], q[:, :-1], weights, TOPK, reduction))
        assert gap > 0, key
        assert abs((exact - approx) - gap) <= 1e-4 * exact + 1e-7, (key, exact, approx, gap)
        # the documented scale (docs/SCALING.md: a few times the residual mass, relative)
        assert _close(approx, exact, 10 * residual), (key, approx, exact, residual)


def test_topk_bucket_kl_equals_coarsened_kl_and_gradient(world_tokenizer, data, tmp_path):
    """The top-k target fed to forward_kl_loss yields exactly the (k+1)-bucket KL and its gradient."""
    from unlearnkit.objectives.kl import forward_kl_loss

    torch.manual_seed(0)
    p_logits, q_logits = torch.randn(1, 3, 50), torch.randn(1, 3, 50, requires_grad=True)
    k = 5
    logp = torch.log_softmax(p_logits, -1)
    top = logp.topk(k, -1)
    log_rest = logp.scatter(-1, top.indices, float("-inf")).logsumexp(-1)
    q = torch.log_softmax(q_logits, -1)
    log_q_rest = q.detach().scatter(-1, top.indices, float("-inf")).logsumexp(-1)
    target = (q.detach() + (log_rest - log_q_rest).unsqueeze(-1)).scatter(-1, top.indices, top.values)
    weights = torch.ones(1, 3)
    loss = forward_kl_loss(target, q_logits, weights)
    q_top = q.gather(-1, top.indices)
    q_rest = q.scatter(-1, top.indices, float("-inf")).logsumexp(-1)
    bucket = (top.values.exp() * (top.values - q_top)).sum(-1) + log_rest.exp() * (log_rest - q_rest)
    expected = bucket.mean()
    assert torch.allclose(loss, expected, atol=1e-6)
    (g1,) = torch.autograd.grad(loss, q_logits)
    (g2,) = torch.autograd.grad(expected, q_logits)
    assert torch.allclose(g1, g2, atol=1e-6)
    assert float(loss.detach()) <= float(forward_kl_loss(p_logits, q_logits.detach(), weights)) + 1e-6


def test_cached_teacher_equals_smoothed_attention_logits(world_tokenizer, data, trained_model, tmp_path):
    original = trained_model  # trained: attention is sharp enough for smoothing to show
    m, train_cfg, cfg, dataset, collator, args = _setup(
        "asu", {"tau": 3.0, "layers": "1"}, world_tokenizer, data, tmp_path, original, reference="cache"
    )
    cache, _ = setup_reference(m, cfg, train_cfg, original, None, dataset, collator, args)
    batch = _batch(dataset, collator, epoch=0, n=5)["forget"]
    with torch.no_grad(), smoothed_attention(original, 3.0, [1]):
        want = original(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
    got = cache.teacher_logits(batch, 3.0, [1])
    answer = batch["labels"][:, 1:] != -100  # the cache holds the answer positions (the KL's support)
    assert torch.allclose(got[:, :-1][answer], want[:, :-1][answer], atol=1e-5)
    with torch.no_grad():
        plain = original(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
    assert not torch.allclose(got[:, :-1][answer], plain[:, :-1][answer], atol=1e-3)  # it IS smoothed
    with pytest.raises(RuntimeError, match="not cached"):
        cache.teacher_logits(batch, 2.0, [1])  # another tau was never cached


def test_adapter_reference_runs_without_dropout(world_tokenizer, data, tmp_path):
    original = _model(world_tokenizer, dropout=0.5)
    dataset = PairedDataset(*data, seed=0)
    batch = _batch(dataset, PaddingCollator(pad_id_of(world_tokenizer)), n=4)["forget"]
    with torch.no_grad():
        want = original(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
    _, train_cfg, _ = resolve_configs("npo", {"lora_r": 4, "lora_dropout": 0.5})
    policy = apply_lora(original, train_cfg)
    _perturb(policy)
    policy.train()
    ref = AdapterReference(policy)
    a, b = ref.logits(batch), ref.logits(batch)
    assert torch.equal(a, b) and torch.allclose(a, want, atol=1e-6)
    assert policy.training  # the train mode comes back


def test_reference_is_never_the_policy(world_tokenizer, data, tmp_path):
    model = _model(world_tokenizer)
    with pytest.raises(ValueError):
        CopyReference(model, policy=model)
    m, train_cfg, cfg, dataset, collator, args = _setup(
        "npo", {}, world_tokenizer, data, tmp_path, model, reference="copy"
    )
    ref, info = setup_reference(m, cfg, train_cfg, model, None, dataset, collator, args)
    assert info["strategy"] == "copy" and ref.model is not model
    assert all(a is not b for a, b in zip(ref.model.parameters(), model.parameters()))


def test_auto_strategy_choices(world_tokenizer, data, tmp_path):
    model = _model(world_tokenizer)
    for method, over, want in [
        ("npo", {}, "cache"),  # per-token log-probs: smaller than the weights, exact
        ("asu_kl", {}, "copy"),  # full-vocab logits (1.1 MiB) > this tiny model's weights (0.2 MiB)
        ("asu", {"lora_r": 4}, "adapter"),  # LoRA: the base is the reference
        ("gd", {}, "none"),  # no reference needed
    ]:
        m, train_cfg, cfg, dataset, collator, args = _setup(
            method, over, world_tokenizer, data, tmp_path, model
        )
        policy = apply_lora(copy.deepcopy(model), train_cfg) if train_cfg.lora_r else model
        _, info = setup_reference(m, cfg, train_cfg, policy, None, dataset, collator, args)
        assert info["strategy"] == want, (method, info)


def test_auto_picks_the_smaller_exact_option(world_tokenizer, data, tmp_path, monkeypatch):
    """The same full-vocabulary cache is chosen once a copy of the weights would be larger."""
    import unlearnkit.train.reference as R

    model = _model(world_tokenizer)
    tensors = list(model.parameters()) + list(model.buffers())  # parameters(): tied ones once
    assert R.copy_reference_bytes(model) == sum(t.numel() * t.element_size() for t in tensors)
    monkeypatch.setattr(R, "copy_reference_bytes", lambda m: 2**30)
    m, train_cfg, cfg, dataset, collator, args = _setup("asu_kl", {}, world_tokenizer, data, tmp_path, model)
    _, info = setup_reference(m, cfg, train_cfg, model, None, dataset, collator, args)
    assert info["strategy"] == "cache" and info["cache_topk"] == 0


def test_auto_falls_back_to_copy_over_budget(world_tokenizer, data, tmp_path, monkeypatch):
    import unlearnkit.train.reference as R

    monkeypatch.setattr(R, "CACHE_BUDGET_BYTES", 1000)
    model = _model(world_tokenizer)
    m, train_cfg, cfg, dataset, collator, args = _setup("asu_kl", {}, world_tokenizer, data, tmp_path, model)
    _, info = setup_reference(m, cfg, train_cfg, model, None, dataset, collator, args)
    assert info["strategy"] == "copy"


@pytest.mark.parametrize("method", ["npo", "asu_kl"])
def test_training_runs_agree(method, world_tokenizer, mini_bench, trained_model, tmp_path):
    """Whole unlearn() runs (2 epochs, new retain partners in the second): cache == copy.

    Plain SGD, so the runs compare the gradients the two references give. Under Adam they part by
    up to ~lr per step for a reason outside the cache: at step 0 the retain KL is 0 and its gradient
    is float rounding (~1e-9, below Adam's eps of 1e-8), and entries that only it reaches (embedding
    rows of retain-only tokens) get ``g / (|g| + eps)``-sized steps from that rounding, which differs
    between any two float paths (measured: step-0 gradients agree to 8e-8 of a 4e-2 maximum, the
    Adam runs' weights then part by 2.6e-3 after 6 steps; with SGD they agree to 1e-6)."""
    runs = {}
    for ref in ("copy", "cache"):
        res = unlearn(
            copy.deepcopy(trained_model),
            world_tokenizer,
            mini_bench.forget,
            mini_bench.retain,
            method,
            work_dir=tmp_path / ref,
            quiet=True,
            reference=ref,
            batch_size=4,
            grad_accum=1,
            max_steps=6,
            lr=0.05,
            optim="sgd",
            warmup_epochs=0,
        )
        assert res.reference["strategy"] == ref
        runs[ref] = res.model.state_dict()
    moved = max(float((v - trained_model.state_dict()[k]).abs().max()) for k, v in runs["copy"].items())
    assert moved > 1e-3, moved  # the weights really moved, far beyond the tolerance
    for name, value in runs["copy"].items():
        assert torch.allclose(runs["cache"][name], value, atol=1e-5), (
            name,
            float((runs["cache"][name] - value).abs().max()),
        )


def _reference_methods():
    from unlearnkit.train.methods import METHODS

    out = []
    for name, m in METHODS.items():
        extra = {"layer": 0, "train_layers": "0"} if "rmu" in name else {}  # a 2-layer model
        _, _, cfg = resolve_configs(name, extra)
        if m.needs_reference(cfg):
            out.append((name, extra))
    # the last layer: raw decoder output (a hook), not hidden_states[-1] after the final norm
    out.append(("rmu", {"layer": 1, "train_layers": "1"}))
    return out


@pytest.mark.parametrize(("method", "extra"), _reference_methods())
def test_every_reference_method_cache_matches_copy(
    method, extra, world_tokenizer, mini_bench, data, tmp_path
):
    """The probe finds what each registered method asks for (log-probs, logits, teacher, hidden states)."""
    from unlearnkit.objectives.idk import idk_answer

    m, train_cfg, cfg = resolve_configs(
        method, {**extra, "batch_size": 4, "max_steps": 6, "reference": "cache"}
    )
    fmt = PromptFormat.for_tokenizer(world_tokenizer)
    forget = [dict(e) for e in data[0]]
    if m.token_level:  # TokenUnlearn weights at label positions (normally from the attribution pass)
        for e in forget:
            e["weights"] = [0.0 if lab == -100 else 0.5 + 0.1 * (i % 3) for i, lab in enumerate(e["labels"])]

    def refusals(rows):
        return encode_rows(
            [{**r, "answer": idk_answer(0, i)} for i, r in enumerate(rows)], world_tokenizer, fmt, 128
        )

    dataset = PairedDataset(
        forget,
        data[1],
        refusals(mini_bench.forget) if m.needs_idk(cfg) else None,
        seed=0,
        retain_idk=refusals(mini_bench.retain) if m.uses_retain_idk else None,
    )
    collator = PaddingCollator(pad_id_of(world_tokenizer))
    args = training_arguments(train_cfg, str(tmp_path), len(dataset), quiet=True)
    original = _model(world_tokenizer)
    policy = copy.deepcopy(original)
    cache, info = setup_reference(m, cfg, train_cfg, policy, None, dataset, collator, args)
    assert info["strategy"] == "cache" and info["cached"]
    _perturb(policy)
    batch = _batch(dataset, collator)
    loss_copy, _ = _loss(m, cfg, policy, CopyReference(original), batch)
    loss_cache, _ = _loss(m, cfg, policy, cache, batch)
    assert _close(loss_cache, loss_copy, EXACT_RTOL), (loss_cache, loss_copy)

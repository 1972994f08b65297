"""Compute accounting (unlearnkit.train.compute) against hand counts of the tokens every pass sees."""

from __future__ import annotations

import json

import pytest

from unlearnkit.config import TrainConfig
from unlearnkit.data.encode import PromptFormat
from unlearnkit.errors import UserError
from unlearnkit.train.compute import ComputeCounter, compute_fraction, cost_of
from unlearnkit.train.trainer import PairedDataset, encode_rows


def _lengths(rows, tok) -> list[int]:
    return [len(e["input_ids"]) for e in encode_rows(rows, tok, PromptFormat.for_tokenizer(tok), 128)]


def test_finetune_counts_every_token_once_per_epoch_forward_and_backward(
    tiny_random_llama, mini_bench, world_tokenizer, tmp_path
):
    from unlearnkit.train.finetune import finetune

    rows = mini_bench.retain[:10]
    cfg = TrainConfig(epochs=2, batch_size=4, grad_accum=1, lr=1e-3, max_length=128, warmup_epochs=0)
    result = finetune(tiny_random_llama, world_tokenizer, rows, cfg, tmp_path / "ft", quiet=True)
    per_epoch = sum(_lengths(rows, world_tokenizer))  # padding is not counted
    assert result.compute["forward_tokens"] == 2 * per_epoch
    assert result.compute["backward_tokens"] == 2 * per_epoch
    assert result.compute["cost"] == 3 * 2 * per_epoch
    assert result.compute["wall_seconds"] > 0


def _forget_retain_tokens(bench, tok) -> tuple[int, int, list[int], list[int]]:
    """One epoch of paired batches: each forget example once, with its epoch-0 retain partner."""
    forget, retain = _lengths(bench.forget, tok), _lengths(bench.retain, tok)
    ds = PairedDataset([{}] * len(forget), [{}] * len(retain), seed=0)
    partners = [ds.retain_index(i, 0) for i in range(len(forget))]
    return sum(forget), sum(retain[j] for j in partners), forget, [retain[j] for j in partners]


@pytest.mark.parametrize("rho", [0.0, 0.1])
def test_unlearn_gd_counts_policy_passes_and_sam_s_extra_forget_pass(
    make_tiny_llama, mini_bench, world_tokenizer, tmp_path, rho
):
    from unlearnkit.pipelines.unlearn import unlearn

    result = unlearn(
        make_tiny_llama(),
        world_tokenizer,
        mini_bench.forget,
        mini_bench.retain,
        "gd",
        work_dir=tmp_path / "gd",
        quiet=True,
        epochs=1,
        batch_size=4,
        grad_accum=1,
        lr=1e-4,
        sam_rho=rho,
    )
    forget, retain, _, _ = _forget_retain_tokens(mini_bench, world_tokenizer)
    # Every pass has gradients on: forget and retain at theta, and with SAM the forget term again.
    want = forget + retain + (forget if rho > 0 else 0)
    assert result.compute["forward_tokens"] == want
    assert result.compute["backward_tokens"] == want
    assert result.compute["cost"] == cost_of(want, want)


def test_unlearn_npo_counts_the_probe_and_the_reference_cache(
    make_tiny_llama, mini_bench, world_tokenizer, tmp_path
):
    from unlearnkit.pipelines.unlearn import unlearn

    result = unlearn(
        make_tiny_llama(),
        world_tokenizer,
        mini_bench.forget,
        mini_bench.retain,
        "npo",
        work_dir=tmp_path / "npo",
        quiet=True,
        epochs=1,
        batch_size=4,
        grad_accum=1,
        lr=1e-4,
        reference="cache",
    )
    assert result.reference["strategy"] == "cache"
    forget, retain, f_each, r_each = _forget_retain_tokens(mini_bench, world_tokenizer)
    # Probe (no grad): policy forget + reference forget + policy retain, on the first 2 pairs.
    probe = 2 * (f_each[0] + f_each[1]) + r_each[0] + r_each[1]
    cache = forget  # NPO caches the reference's per-token log-probs on the forget set
    assert result.compute["backward_tokens"] == forget + retain
    assert result.compute["forward_tokens"] == forget + retain + probe + cache


def test_counters_come_back_from_a_checkpoint(tmp_path):
    counter = ComputeCounter()
    counter._add("forward", 100)
    counter._add("backward", 40)
    state = {"stateful_callbacks": {"ComputeCounter": counter.state()}}
    (tmp_path / "trainer_state.json").write_text(json.dumps(state))
    resumed = ComputeCounter()
    resumed.restore(tmp_path)
    resumed._add("forward", 5)
    totals = resumed.totals()
    assert totals["forward_tokens"] == 105 and totals["backward_tokens"] == 40
    assert totals["cost"] == 105 + 80


def _card(path, compute):
    path.mkdir()
    (path / "unlearnkit.json").write_text(json.dumps({"kind": "x", "compute": compute}))
    return path


def test_compute_fraction_divides_by_the_oracle(tmp_path):
    oracle = _card(tmp_path / "oracle", {"cost": 1000})
    student = _card(tmp_path / "student", {"cost": 300, "total_cost": 450})
    plain = _card(tmp_path / "plain", {"cost": 50})
    assert compute_fraction(student, oracle) == pytest.approx(0.45)  # distill + the teacher's unlearning
    assert compute_fraction(plain, oracle) == pytest.approx(0.05)
    old = tmp_path / "old"
    old.mkdir()
    (old / "unlearnkit.json").write_text(json.dumps({"kind": "target"}))
    with pytest.raises(UserError, match="no compute record"):
        compute_fraction(old, oracle)

"""Continual unlearning on a miniature embedded world (8 authors x 3 facts, a tiny Llama trained briefly)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from unlearnkit.data import Benchmark
from unlearnkit.errors import UserError
from unlearnkit.evaluation.evaluate import EvalSettings
from unlearnkit.pipelines.continual import continual_unlearning, plot_curve, split_requests, tofu_eval_fn

SETTINGS = EvalSettings(max_new_tokens=12, batch_size=16, max_length=64, progress=False)
UNLEARN = dict(
    lr=1e-3, epochs=4, batch_size=4, grad_accum=1, warmup_epochs=0, lr_scheduler="constant", max_length=64
)


@pytest.fixture(scope="module")
def world_model(tmp_path_factory):
    """2 forget authors (6 rows), 1 holdout, 5 retain authors; the tiny Llama memorises forget + retain."""
    from unlearnkit.config import TrainConfig
    from unlearnkit.train.finetune import finetune
    from unlearnkit.world import generate_world
    from unlearnkit.world.tiny import corpus_of, tiny_llama, train_tokenizer

    world = generate_world(
        n_authors=8, facts_per_author=3, forget_fraction=0.25, holdout_fraction=0.125, n_general=6, seed=3
    )
    bench = Benchmark(path=Path("mini-world"), **world)
    tok = train_tokenizer(corpus_of([r for rows in world.values() for r in rows]), vocab_size=512)
    model = tiny_llama(tok, hidden=64, layers=2, heads=4, seed=0)
    cfg = TrainConfig(
        lr=3e-3,
        epochs=30,
        batch_size=8,
        grad_accum=1,
        warmup_epochs=1,
        weight_decay=0.0,
        lr_scheduler="cosine",
        max_length=64,
    )
    work = tmp_path_factory.mktemp("finetune")
    finetune(model, tok, bench.forget + bench.retain + bench.general, cfg, work, quiet=True)
    return bench, model, tok


def test_split_requests_sizes_and_errors():
    rows = [{"i": i} for i in range(10)]
    parts = split_requests(rows, 3)
    assert [len(p) for p in parts] == [4, 3, 3] and [r for p in parts for r in p] == rows
    assert split_requests(rows, 1) == [rows]
    for k in (0, 11):
        with pytest.raises(UserError, match="cannot split"):
            split_requests(rows, k)


def test_two_requests_curve(world_model, tmp_path):
    bench, model, tok = world_model
    assert len(bench.forget) == 6
    requests = split_requests(bench.forget, 2)
    seen = []
    default = tofu_eval_fn(bench, SETTINGS)

    def eval_fn(model, tokenizer, forgotten, upcoming, step):
        seen.append((step, len(forgotten), len(upcoming)))
        return default(model, tokenizer, forgotten=forgotten, upcoming=upcoming, step=step)

    curve = continual_unlearning(
        model, tok, bench, "gd", requests, eval_fn, work_dir=tmp_path / "runs", **UNLEARN
    )
    assert seen == [(0, 0, 6), (1, 3, 3), (2, 6, 0)]
    assert [p["step"] for p in curve] == [0, 1, 2]
    assert [p["n_forgotten"] for p in curve] == [0, 3, 6] and [p["request_size"] for p in curve] == [0, 3, 3]
    assert math.isnan(curve[0]["train_loss"]) and all(math.isfinite(p["train_loss"]) for p in curve[1:])
    assert "forget_prob" not in curve[0] and "upcoming_prob" not in curve[2]
    assert {"forget_rougeL_recall", "upcoming_rougeL_recall", "retain_prob", "general_prob"} <= set(curve[1])
    for point in curve:
        assert 0.0 <= point["model_utility"] <= 1.0
    # the same 6 rows, before any request and after both: their answer probability fell
    assert curve[2]["forget_prob"] < curve[0]["upcoming_prob"]
    assert curve[1]["forget_prob"] < curve[0]["upcoming_prob"]  # request 1 took effect at once
    png = plot_curve(curve, tmp_path / "curve.png", title="gd, 2 requests")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_default_eval_fn_and_errors(world_model):
    bench, model, tok = world_model
    with pytest.raises(UserError, match="at least one"):
        continual_unlearning(model, tok, bench, "gd", [])
    with pytest.raises(UserError, match=r"request\(s\) \[2\]"):
        continual_unlearning(model, tok, bench, "gd", [bench.forget[:1], []])
    with pytest.raises(UserError, match="unknown key 'learning_rate'"):
        continual_unlearning(model, tok, bench, "gd", [bench.forget[:1]], learning_rate=1.0)
    with pytest.raises(UserError, match="none of the requested keys"):
        plot_curve([{"step": 0}], "unused.png", keys=["nope"])

"""Every registered method runs through the real trainer for a few steps on a tiny random Llama."""

from __future__ import annotations

import math

import pytest
import torch

from unlearnkit.errors import UserError
from unlearnkit.methods import METHODS, get_method

FAST = dict(max_steps=2, batch_size=4, grad_accum=1, lr=1e-2, max_length=128, warmup_epochs=0.0)
RMU_TINY = dict(layer=1, train_layers="0,1")


def _overrides(name: str) -> dict:
    extra = RMU_TINY if "rmu" in name else {}
    if "asu" in name:
        extra = {**extra, "tau": 3.0}
    return {**FAST, **extra}


@pytest.mark.parametrize("name", sorted(METHODS))
def test_method_runs_and_changes_weights(name, tiny_random_llama, world_tokenizer, mini_bench, tmp_path):
    from unlearnkit.unlearn import unlearn

    model = tiny_random_llama
    before = {k: v.detach().clone() for k, v in model.state_dict().items()}
    result = unlearn(
        model,
        world_tokenizer,
        mini_bench.forget,
        mini_bench.retain,
        name,
        work_dir=tmp_path / "run",
        quiet=True,
        **_overrides(name),
    )
    losses = [h["loss"] for h in result.log_history if "loss" in h]
    assert losses and all(math.isfinite(x) for x in losses)
    after = result.model.state_dict()
    changed = [k for k in before if not torch.equal(before[k], after[k])]
    assert changed, f"{name}: no parameter changed"
    if "rmu" in name:
        # RMU trains only the MLP down-projections of the listed layers
        assert all("mlp.down_proj" in k for k in changed), changed


def test_token_variant_records_attribution(tiny_random_llama, world_tokenizer, mini_bench, tmp_path):
    from unlearnkit.unlearn import unlearn

    result = unlearn(
        tiny_random_llama,
        world_tokenizer,
        mini_bench.forget,
        mini_bench.retain,
        "t-npo",
        work_dir=tmp_path / "run",
        attribution_dir=tmp_path / "attr",
        quiet=True,
        r=0.5,
        **FAST,
    )
    info = result.attribution
    assert info["selection"] == "hard"
    assert 0.5 <= info["mean_selected_fraction"] <= 0.75  # ceil(r*T) of short answers
    assert (tmp_path / "attr" / "scores.jsonl").is_file() and (tmp_path / "attr" / "heatmap.html").is_file()


def test_unknown_method_suggests_nearest():
    with pytest.raises(UserError, match="did you mean 'npo'"):
        get_method("nppo")


def test_t_and_s_aliases_with_underscores():
    assert get_method("T_NPO").name == "t-npo"
    assert get_method("s_asu").config().selection == "soft"

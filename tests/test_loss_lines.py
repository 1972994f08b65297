"""The loss that finetune / unlearn print is the number they record, and it is called what it is: the
mean over the run's optimiser steps (Trainer's ``training_loss``), not the last step's loss."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from unlearnkit.cli import main

LINE = re.compile(r"mean train loss (-?\d+\.\d{4})")


def test_finetune_and_unlearn_print_the_recorded_mean_train_loss(mini_world, tmp_path, capsys):
    target = tmp_path / "target"
    assert main(["finetune", "--data", str(mini_world), "--output", str(target), "--set", "max_steps=3"]) == 0
    out = capsys.readouterr().out
    card = json.loads((target / "unlearnkit.json").read_text())
    assert LINE.search(out) and float(LINE.search(out).group(1)) == pytest.approx(
        card["train_loss"], abs=5e-5
    )
    asu = tmp_path / "ga"
    args = [
        "unlearn",
        "--model",
        str(target),
        "--data",
        str(mini_world),
        "--method",
        "ga",
        "--output",
        str(asu),
    ]
    assert main([*args, "--set", "max_steps=3", "--set", "batch_size=4", "--set", "grad_accum=1"]) == 0
    out = capsys.readouterr().out
    card = json.loads((asu / "unlearnkit.json").read_text())
    assert "final train loss" not in out
    assert float(LINE.search(out).group(1)) == pytest.approx(card["train_loss"], abs=5e-5)
    assert card["prompt"] == {"prompt_format": "plain"}  # the tiny model has no chat template


def test_the_recorded_train_loss_is_the_mean_over_steps_not_the_last(
    tiny_random_llama, world_tokenizer, mini_bench, tmp_path
):
    """Trainer logs every step of a 4-step run (logging_steps = max(1, 4 // 10)); its training_loss is
    their mean, which here differs from the last step's loss, so the two words would not agree."""
    from unlearnkit.pipelines.unlearn import unlearn

    result = unlearn(
        tiny_random_llama,
        world_tokenizer,
        mini_bench.forget,
        mini_bench.retain,
        "ga",
        work_dir=tmp_path / "work",
        quiet=True,
        max_steps=4,
        batch_size=2,
        grad_accum=1,
        lr=1e-2,
    )
    steps = [e["loss"] for e in result.log_history if "loss" in e]
    assert len(steps) == 4
    # logged losses are rounded to 4 digits by the Trainer in some versions
    assert result.train_loss == pytest.approx(float(np.mean(steps)), abs=1e-4)
    assert abs(result.train_loss - steps[-1]) > 1e-3

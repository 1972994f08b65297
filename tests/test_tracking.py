"""Tracking: ``--report-to`` reaches TrainingArguments (its package missing: one line naming it, exit 2),
``--eval-every`` metrics go through ``Trainer.log`` (so ``log_history.json`` and a tracker show them)
without disturbing the logged loss terms, and ``bench/gpu_check.py`` skips in one line without CUDA."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from unlearnkit.cli import main

ROOT = Path(__file__).resolve().parents[1]
STEPS = ["--set", "max_steps=4", "--set", "batch_size=4", "--set", "grad_accum=1", "--no-collapse-guard"]


def test_report_to_reaches_the_trainer(tmp_path):
    from unlearnkit.config import TrainConfig
    from unlearnkit.train.trainer import training_arguments

    assert training_arguments(TrainConfig(), str(tmp_path), 8).report_to == []  # none, as before
    for tracker in ("tensorboard", "wandb"):
        if importlib.util.find_spec(tracker) is not None:
            args = training_arguments(TrainConfig(report_to=tracker), str(tmp_path), 8)
            assert args.report_to == [tracker]


@pytest.mark.parametrize("tracker", ["tensorboard", "wandb"])
def test_missing_tracker_is_one_line_naming_the_package(
    tracker, tiny_model_dir, mini_world, tmp_path, capsys
):
    if importlib.util.find_spec(tracker) is not None:
        pytest.skip(f"{tracker} is installed here")
    out = tmp_path / "u"
    argv = ["unlearn", "--model", str(tiny_model_dir), "--data", str(mini_world), "--method", "npo"]
    assert main([*argv, "--output", str(out), "--report-to", tracker]) == 2
    err = [x for x in capsys.readouterr().err.splitlines() if x.strip()]
    assert (
        len(err) == 1
        and f"--report-to {tracker} needs {tracker}" in err[0]
        and "unlearnkit[tracking]" in err[0]
    )
    assert not out.exists()
    assert main([*argv, "--output", str(out), "--report-to", "mlflow"]) == 2
    assert "use none, tensorboard or wandb" in capsys.readouterr().err


def test_eval_every_metrics_are_logged_through_the_trainer(tiny_model_dir, mini_world, tmp_path):
    """The eval/ entries sit at the evaluated steps with the curve's values, and every training log still
    carries its loss terms (the evaluation's log does not swallow them)."""
    out = tmp_path / "npo"
    argv = ["unlearn", "--model", str(tiny_model_dir), "--data", str(mini_world), "--method", "npo"]
    argv += ["--output", str(out), *STEPS, "--set", "lr=1e-3", "--eval-every", "2", "--eval-max-items", "4"]
    assert main([*argv, "--eval-max-new-tokens", "2"]) == 0
    history = json.loads((out / "log_history.json").read_text())
    curve = json.loads((out / "curve.json").read_text())["curve"]
    evals = [e for e in history if any(k.startswith("eval/") for k in e)]
    assert [e["step"] for e in evals] == [p["step"] for p in curve] == [0, 2, 4]
    for logged, point in zip(evals, curve):
        assert logged["eval/forget_rougeL_recall"] == pytest.approx(point["metrics"]["forget_rougeL_recall"])
        assert "forget_loss" not in logged and "loss" not in logged
    training = [e for e in history if "loss" in e]
    assert len(training) == 4 and all("forget_loss" in e and "retain_nll" in e for e in training)


def test_gpu_check_skips_in_one_line_without_cuda():
    if torch.cuda.is_available():
        pytest.skip("a GPU is visible: the check would run")
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "gpu_check.py")], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines() == [
        "bench/gpu_check.py: skipped: no CUDA GPU is visible (torch.cuda.is_available() is False)"
    ]
    assert not (ROOT / "bench" / "results" / "gpu.json").exists() or "provenance" in json.loads(
        (ROOT / "bench" / "results" / "gpu.json").read_text()
    )

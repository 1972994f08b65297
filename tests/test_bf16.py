"""bfloat16 end to end on this CPU: unlearn (asu, t-npo, npo, rmu), distill, eval and audit with
``--dtype bfloat16`` run, keep bf16 weights (``precision bf16-true``), and give the float32 run's
numbers within the tolerances ``tests/tolerances.py`` derives (BF16_LOSS_REL, BF16_LOG_ATOL).

Where float32 matters the maths is float32 whatever the weights: per-token log-probs
(``tokens.token_logps`` casts the logits), the KL of ASU / UNDO / the KL retain term
(``objectives/kl.py``), NPO's log-sigmoid on those log-probs, RMU's MSE and every evaluation score.
"""

from __future__ import annotations

import json
import math

import pytest
from safetensors import safe_open
from tolerances import BF16_LOG_ATOL, BF16_LOSS_REL

from unlearnkit.cli import main

STEPS = ["--set", "max_steps=2", "--set", "batch_size=4", "--set", "grad_accum=1", "--set", "lr=1e-3"]
EVAL = ["--max-items", "8", "--max-new-tokens", "4"]


@pytest.fixture(scope="module")
def runs(tiny_model_dir, mini_world, tmp_path_factory):
    """Each method unlearned twice from the same weights, in float32 and in bfloat16."""
    root = tmp_path_factory.mktemp("bf16")
    out = {}
    for method in ("asu", "t-npo", "npo", "rmu"):
        extra = {
            "t-npo": ["--set", "tagger=heuristic"],
            "rmu": ["--set", "layer=1", "--set", "train_layers=0,1"],
        }.get(method, [])
        for dtype in ("float32", "bfloat16"):
            path = root / f"{method}-{dtype}"
            argv = ["unlearn", "--model", str(tiny_model_dir), "--data", str(mini_world), "--method", method]
            argv += ["--output", str(path), "--dtype", dtype, "--no-collapse-guard", *STEPS, *extra]
            assert main(argv) == 0
            out[method, dtype] = path
    return root, out


def _card(path):
    return json.loads((path / "unlearnkit.json").read_text())


def _weights_dtype(path) -> str:
    with safe_open(str(path / "model.safetensors"), "pt") as fh:
        return str(fh.get_tensor(next(iter(fh.keys()))).dtype)


@pytest.mark.parametrize("method", ["asu", "t-npo", "npo", "rmu"])
def test_unlearning_in_bf16_matches_float32(runs, method):
    _, out = runs
    f32, b16 = _card(out[method, "float32"]), _card(out[method, "bfloat16"])
    assert b16["placement"]["dtype"] == "bfloat16" and b16["placement"]["precision"] == "bf16-true"
    assert f32["placement"]["precision"] == "fp32"
    assert _weights_dtype(out[method, "bfloat16"]) == "torch.bfloat16"
    assert _weights_dtype(out[method, "float32"]) == "torch.float32"
    assert math.isfinite(b16["train_loss"])
    assert b16["train_loss"] == pytest.approx(f32["train_loss"], rel=BF16_LOSS_REL)


def test_eval_and_audit_in_bf16_match_float32(runs, mini_world, capsys):
    root, out = runs
    metrics = {}
    for dtype in ("float32", "bfloat16"):
        ev = root / f"eval-{dtype}"
        argv = ["eval", "--model", str(out["asu", dtype]), "--data", str(mini_world), "--output", str(ev)]
        assert main([*argv, "--dtype", dtype, *EVAL]) == 0
        metrics[dtype] = json.loads((ev / "metrics.json").read_text())
        assert json.loads((ev / "details.json").read_text())["placement"]["dtype"] == dtype
    compared = [k for k in metrics["float32"] if k.endswith(("_prob", "_truth_ratio"))]
    assert len(compared) >= 6
    for key in compared:
        a, b = metrics["float32"][key], metrics["bfloat16"][key]
        assert abs(math.log(b) - math.log(a)) <= BF16_LOG_ATOL, (key, a, b)
    audit = root / "audit"
    argv = [
        "audit",
        "--model",
        str(out["asu", "bfloat16"]),
        "--data",
        str(mini_world),
        "--output",
        str(audit),
    ]
    argv += ["--dtype", "bfloat16", "--relearn-steps", "1", "--quant-bits", "8", "--max-items", "6"]
    assert main([*argv, "--max-new-tokens", "4"]) == 0
    report = json.loads((audit / "audit.json").read_text())
    assert report["placement"]["dtype"] == "bfloat16"
    assert "unlearnkit: device cpu, dtype bfloat16" in capsys.readouterr().err


def test_distill_in_bf16_matches_float32(tiny_model_dir, mini_world, tmp_path):
    losses = {}
    for dtype in ("float32", "bfloat16"):
        path = tmp_path / dtype
        argv = ["distill", "--teacher", str(tiny_model_dir), "--data", str(mini_world), "--output", str(path)]
        assert main([*argv, "--dtype", dtype, "--noise", "0.5", *STEPS]) == 0
        card = _card(path)
        assert card["placement"]["dtype"] == dtype and _weights_dtype(path) == f"torch.{dtype}"
        losses[dtype] = card["train_loss"]
    assert losses["bfloat16"] == pytest.approx(losses["float32"], rel=BF16_LOSS_REL)


def test_bf16_true_with_lora_and_gradient_checkpointing_trains(tiny_model_dir, mini_world, tmp_path):
    """Pure bf16 under activation checkpointing, full weights and LoRA: runs, and the weights move."""
    import torch

    from unlearnkit.models import load_model

    original = load_model(str(tiny_model_dir)).state_dict()
    for lora in ([], ["--set", "lora_r=4"]):
        path = tmp_path / f"gc{len(lora)}"
        argv = ["unlearn", "--model", str(tiny_model_dir), "--data", str(mini_world), "--method", "npo"]
        argv += ["--output", str(path), "--dtype", "bfloat16", "--no-collapse-guard", *STEPS, *lora]
        assert main([*argv, "--set", "gradient_checkpointing=true"]) == 0
        card = _card(path)
        assert card["placement"]["gradient_checkpointing"] is True
        trained = load_model(str(path)).state_dict()
        moved = [k for k in original if not torch.equal(original[k], trained[k].float())]
        assert moved, "no weight changed"

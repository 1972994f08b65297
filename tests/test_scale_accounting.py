"""bench/scale.py's memory accounting: the parts add up as its docstring says, and docs/SCALING.md quotes
the numbers it prints (so the table cannot drift from the formula)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("scale_bench", ROOT / "bench" / "scale.py")
scale = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = scale  # dataclasses look their module up
spec.loader.exec_module(scale)


def test_bytes_per_parameter_of_each_precision():
    """Hand arithmetic on a model with no activations or logits (batch 0): bf16-true AdamW 2+2+2x2 = 8
    bytes per parameter, mixed 4+4+2 (autocast copies)+2x4 = 18, paged_adamw_32bit 2+2+2x4 = 12; a copy
    reference adds the weights once more in the policy's dtype."""
    shape = {"params": 1e9, "hidden": 8, "layers": 1, "vocab": 8}
    total = lambda run: scale.predict(shape, run)["total"] / 1e9  # noqa: E731
    assert total(scale.Run("ft", batch=0)) == pytest.approx(8)
    assert total(scale.Run("ft", precision="bf16", batch=0)) == pytest.approx(18)
    assert total(scale.Run("ft", optim="paged_adamw_32bit", batch=0)) == pytest.approx(12)
    assert total(scale.Run("npo", "copy", batch=0)) == pytest.approx(10)
    assert total(scale.Run("npo", "cache", batch=0)) == pytest.approx(8)
    assert total(scale.Run("npo", "adapter", lora=True, batch=0)) == pytest.approx(2 + 0.006 * 16)


def test_an_unlearning_step_holds_one_side_where_that_frees_more_than_the_tied_buffer():
    """Hand arithmetic, no weights (params 0), bf16-true, 1 sequence of 1 token per side: activations
    34 x h x layers bytes per sequence, logits 10 x V. h 8, V 8 (tied): one side holds 272 + 80 = 352 bytes,
    more than the tied embedding's extra gradient buffer (8 x 8 x 2 = 128), so the step holds one side
    plus that buffer (480), fine-tuning both sides (704); with V 1000 one side (10272) is less than the
    buffer (16000): both sides, as fine-tuning and as several processes always do."""
    total = lambda shape, run: scale.predict(shape, run)["total"]  # noqa: E731
    small = {"params": 0, "hidden": 8, "layers": 1, "vocab": 8, "lm_head_tied": True}
    wide = dict(small, vocab=1000)
    one = dict(batch=1, seq=1)
    assert total(small, scale.Run("ft", **one)) == pytest.approx(704)
    assert total(small, scale.Run("gd", **one)) == pytest.approx(352 + 128)
    assert total(small, scale.Run("gd", both_sides=True, **one)) == pytest.approx(704)
    assert total(dict(small, lm_head_tied=False), scale.Run("gd", **one)) == pytest.approx(352)
    assert total(wide, scale.Run("gd", **one)) == pytest.approx(2 * (272 + 10000))
    assert total(wide, scale.Run("gd", **one)) == total(wide, scale.Run("ft", **one))


def test_scaling_doc_quotes_the_table():
    doc = (ROOT / "docs" / "SCALING.md").read_text(encoding="utf-8")
    for line in scale.table().splitlines():
        if line.startswith("| ") and not line.startswith(("| configuration", "|---")):
            numbers = " | ".join(line.split(" | ")[1:])
            assert numbers in doc, f"docs/SCALING.md does not quote: {line}"


def test_precisions_option_takes_a_subset_in_order():
    """``--precisions`` picks which precisions ``--measure`` runs (the pure-bf16 1B fits where the mixed
    one does not); anything else is refused with the choices named."""
    import argparse

    assert scale.precisions("bf16-true") == ["bf16-true"]
    assert scale.precisions("bf16, bf16-true") == ["bf16", "bf16-true"]
    for bad in ("fp16", "", "bf16-true,fp8"):
        with pytest.raises(argparse.ArgumentTypeError, match="bf16-true, bf16"):
            scale.precisions(bad)

"""A LoRA result saved as an adapter alone (lora_save=adapter) loads back as a merged model."""

from __future__ import annotations

import json

import pytest
import torch

from unlearnkit.errors import UserError
from unlearnkit.models import load, load_model, save_model


def test_adapter_only_output_round_trips(tiny_model_dir, mini_bench, tmp_path):
    from unlearnkit.pipelines.unlearn import unlearn

    model, tok = load(str(tiny_model_dir))
    result = unlearn(
        model,
        tok,
        mini_bench.forget,
        mini_bench.retain,
        "gd",
        model_path=str(tiny_model_dir),
        work_dir=tmp_path / "run",
        quiet=True,
        max_steps=2,
        batch_size=4,
        grad_accum=1,
        lr=1e-2,
        warmup_epochs=0.0,
        lora_r=4,
        lora_save="adapter",
    )
    assert hasattr(result.model, "peft_config")  # unmerged: the adapter is what gets saved
    out = tmp_path / "adapter"
    save_model(result.model, tok, out, {"kind": "test adapter"})
    assert (out / "adapter_config.json").is_file() and not (out / "config.json").exists()
    assert json.loads((out / "adapter_config.json").read_text())["base_model_name_or_path"] == str(
        tiny_model_dir
    )
    merged = load_model(str(out))
    reference = result.model.merge_and_unload()
    ids = torch.tensor([[1, 5, 9, 12]])
    with torch.no_grad():
        assert torch.allclose(merged(ids).logits, reference(ids).logits, atol=1e-5)
    base = load_model(str(tiny_model_dir))
    with torch.no_grad():
        assert not torch.allclose(base(ids).logits, merged(ids).logits, atol=1e-6)


def test_adapter_folder_without_weights_is_refused(tmp_path, tiny_model_dir):
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "adapter_config.json").write_text(json.dumps({"base_model_name_or_path": str(tiny_model_dir)}))
    with pytest.raises(UserError, match="without adapter_model.safetensors"):
        load_model(str(folder))

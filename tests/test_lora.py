"""LoRA unlearning: only adapters train, the base stays untouched, merged and adapter-only outputs load."""

from __future__ import annotations

import warnings

import pytest
import torch
from tolerances import RECOMPUTED_STEP_REL

from unlearnkit.models import load_model
from unlearnkit.pipelines.unlearn import resolve_configs, unlearn

RUN = dict(batch_size=4, grad_accum=1, max_steps=3, lr=5e-3, warmup_epochs=0, lora_r=4, quiet=True)


def _logits(model, tokenizer):
    ids = tokenizer(["Question: Who wrote it?\nAnswer: Someone"], return_tensors="pt")
    with torch.no_grad():
        return model(input_ids=ids["input_ids"]).logits


def test_lora_alias():
    _, train_cfg, _ = resolve_configs("npo", {"lora.r": "8", "lora.alpha": "32", "lora.save": "adapter"})
    assert (train_cfg.lora_r, train_cfg.lora_alpha, train_cfg.lora_save) == (8, 32.0, "adapter")


@pytest.mark.filterwarnings("ignore:.*is_gradient_checkpointing.*:FutureWarning")  # peft's loader
@pytest.mark.parametrize("method", ["npo", "asu"])
def test_lora_trains_only_adapters_and_adapter_save_loads(method, tiny_model_dir, mini_bench, tmp_path):
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    from unlearnkit.models import load_tokenizer

    tokenizer = load_tokenizer(str(tiny_model_dir))
    model = load_model(str(tiny_model_dir))
    before = {k: v.clone() for k, v in model.state_dict().items()}
    res = unlearn(
        model,
        tokenizer,
        mini_bench.forget,
        mini_bench.retain,
        method,
        model_path=str(tiny_model_dir),
        work_dir=tmp_path / "work",
        lora_save="adapter",
        **RUN,
    )
    peft_model = res.model
    assert isinstance(peft_model, PeftModel) and res.reference["strategy"] == "adapter"
    trainable = {n for n, p in peft_model.named_parameters() if p.requires_grad}
    assert trainable and all("lora_" in n for n in trainable)
    base = peft_model.get_base_model().state_dict()
    for name, value in before.items():  # base weights untouched (PEFT names them base_layer.*)
        key = name if name in base else name.replace(".weight", ".base_layer.weight")
        assert torch.equal(base[key], value), name
    lora_b = [p for n, p in peft_model.named_parameters() if "lora_B" in n]
    assert any(float(p.detach().abs().max()) > 0 for p in lora_b)  # adapters moved (they start at zero)

    # adapter alone: save_pretrained writes only the adapter; it loads on top of the original base
    peft_model.save_pretrained(tmp_path / "adapter", safe_serialization=True)
    files = {p.name for p in (tmp_path / "adapter").iterdir()}
    assert {"adapter_config.json", "adapter_model.safetensors"} <= files and "config.json" not in files
    reloaded = PeftModel.from_pretrained(
        AutoModelForCausalLM.from_pretrained(str(tiny_model_dir)), str(tmp_path / "adapter")
    ).eval()
    want = _logits(peft_model, tokenizer)
    assert torch.allclose(_logits(reloaded, tokenizer), want, atol=1e-5)
    assert not torch.allclose(_logits(load_model(str(tiny_model_dir)), tokenizer), want, atol=1e-4)


def test_lora_merged_output_loads_as_plain_model(tiny_model_dir, mini_bench, tmp_path):
    from transformers import AutoModelForCausalLM

    from unlearnkit.models import load_tokenizer

    tokenizer = load_tokenizer(str(tiny_model_dir))
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)  # no deprecated gradient_checkpointing alias
        res = unlearn(
            load_model(str(tiny_model_dir)),
            tokenizer,
            mini_bench.forget,
            mini_bench.retain,
            "asu_kl",
            model_path=str(tiny_model_dir),
            work_dir=tmp_path / "work",
            gradient_checkpointing=True,
            **RUN,
        )
    assert type(res.model).__name__ == "LlamaForCausalLM" and not hasattr(res.model, "peft_config")
    res.model.save_pretrained(tmp_path / "merged", safe_serialization=True)
    loaded = AutoModelForCausalLM.from_pretrained(str(tmp_path / "merged")).eval()
    assert not any("lora" in n for n in loaded.state_dict())
    assert torch.allclose(_logits(loaded, tokenizer), _logits(res.model, tokenizer), atol=1e-5)
    original = _logits(load_model(str(tiny_model_dir)), tokenizer)
    assert not torch.allclose(_logits(loaded, tokenizer), original, atol=1e-4)


@pytest.mark.filterwarnings("ignore:.*is_gradient_checkpointing.*:FutureWarning")  # peft's loader
@pytest.mark.parametrize("lora_r, reentrant", [(0, False), (4, False), (4, True)])
def test_gradient_checkpointing_gives_the_same_update(
    lora_r, reentrant, tiny_model_dir, mini_bench, tmp_path, monkeypatch
):
    """Activation checkpointing recomputes activations: the losses of every step and the trained weights
    must not change, and with LoRA the adapters must train. open-unlearning #178: under checkpointing
    the frozen embeddings' outputs do not require grad, so a *reentrant* checkpoint sends no gradient to
    the adapters inside it and every lora_B stays 0; the reentrant case is forced here."""
    import unlearnkit.pipelines.unlearn as unlearn_module
    from unlearnkit.models import load_tokenizer

    if reentrant:
        stock = unlearn_module.training_arguments

        def reentrant_arguments(*args, **kwargs):
            out = stock(*args, **kwargs)
            if out.activation_checkpointing:
                out.activation_checkpointing_kwargs = {"use_reentrant": True}
            return out

        monkeypatch.setattr(unlearn_module, "training_arguments", reentrant_arguments)
    tokenizer = load_tokenizer(str(tiny_model_dir))
    runs = {}
    for gc in (False, True):
        res = unlearn(
            load_model(str(tiny_model_dir)),
            tokenizer,
            mini_bench.forget,
            mini_bench.retain,
            "npo",
            model_path=str(tiny_model_dir),
            work_dir=tmp_path / f"gc{gc}",
            gradient_checkpointing=gc,
            **{**RUN, "lora_r": lora_r, "lora_save": "adapter" if lora_r else "merged"},
        )
        base = res.model.get_base_model() if lora_r else res.model
        assert base.is_activation_checkpointing == gc  # the Trainer really checkpointed the GC run
        losses = [h["loss"] for h in res.log_history if "loss" in h]
        weights = {
            n: p.detach().clone() for n, p in res.model.named_parameters() if not lora_r or "lora_" in n
        }
        runs[gc] = losses, weights
    (loss_plain, plain), (loss_gc, checkpointed) = runs[False], runs[True]
    assert len(loss_gc) == RUN["max_steps"]
    assert loss_gc == pytest.approx(loss_plain, rel=RECOMPUTED_STEP_REL, abs=0)
    for name, value in plain.items():
        torch.testing.assert_close(checkpointed[name], value, rtol=RECOMPUTED_STEP_REL, atol=0, msg=name)
    if lora_r:
        lora_b = [p for n, p in checkpointed.items() if "lora_B" in n]
        assert lora_b and all(float(p.abs().max()) > 0 for p in lora_b)  # every adapter trained

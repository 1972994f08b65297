"""The model card (README.md of every model folder) is a Hugging Face card: YAML metadata the Hub's own
parser reads (base_model, library_name, tags with the method and its paper's arxiv id), then the record."""

from __future__ import annotations

import json

from huggingface_hub import ModelCard, metadata_load

from unlearnkit.cli import main
from unlearnkit.models import save_model


def _card(folder):
    card = ModelCard.load(folder / "README.md")
    return card, card.data.to_dict()


def test_card_metadata_parses_with_the_hubs_parser(make_tiny_llama, world_tokenizer, tmp_path):
    provenance = {
        "kind": "unlearned (npo)",
        "base_model": "meta-llama/Llama-3.2-1B",
        "method": "npo",
        "paper": "Negative Preference Optimization (Zhang et al., arXiv 2404.05868)",
        "config": {"lr": 1e-5},
    }
    save_model(make_tiny_llama(), world_tokenizer, tmp_path / "m", provenance)
    card, data = _card(tmp_path / "m")
    assert data["base_model"] == "meta-llama/Llama-3.2-1B" and data["library_name"] == "transformers"
    assert {"unlearnkit", "machine-unlearning", "npo", "arxiv:2404.05868"} <= set(data["tags"])
    assert data["unlearning_method"] == "npo" and "2404.05868" in data["paper"]
    assert metadata_load(tmp_path / "m" / "README.md") == data  # the same YAML through the other reader
    assert "# unlearned (npo) made with unlearnkit" in card.text and "- **config**:" in card.text


def test_base_model_follows_local_folders_back_to_the_hub(make_tiny_llama, world_tokenizer, tmp_path):
    """A model made from a local folder names what that folder was made from (the Hub's model tree
    cannot link a path); a local chain that never saw the Hub names no base_model."""
    save_model(
        make_tiny_llama(),
        world_tokenizer,
        tmp_path / "target",
        {"kind": "target", "base_model": "Qwen/Qwen2.5-1.5B"},
    )
    save_model(
        make_tiny_llama(),
        world_tokenizer,
        tmp_path / "u",
        {"kind": "unlearned (ga)", "base_model": str(tmp_path / "target"), "method": "ga"},
    )
    assert _card(tmp_path / "u")[1]["base_model"] == "Qwen/Qwen2.5-1.5B"
    save_model(
        make_tiny_llama(), world_tokenizer, tmp_path / "tiny", {"kind": "target", "base_model": "tiny"}
    )
    save_model(
        make_tiny_llama(),
        world_tokenizer,
        tmp_path / "v",
        {"kind": "unlearned (ga)", "base_model": str(tmp_path / "tiny")},
    )
    assert "base_model" not in _card(tmp_path / "tiny")[1] and "base_model" not in _card(tmp_path / "v")[1]


def test_unlearn_writes_a_hub_card(tiny_model_dir, mini_world, tmp_path):
    out = tmp_path / "asu"
    argv = ["unlearn", "--model", str(tiny_model_dir), "--data", str(mini_world), "--method", "asu"]
    argv += ["--output", str(out), "--set", "max_steps=1", "--set", "batch_size=4", "--no-collapse-guard"]
    assert main(argv) == 0
    card, data = _card(out)
    assert {"unlearnkit", "machine-unlearning", "asu", "arxiv:2603.01285"} <= set(data["tags"])
    assert data["unlearning_method"] == "asu" and "base_model" not in data  # a local random model
    assert json.loads((out / "unlearnkit.json").read_text())["method"] == "asu" and "placement" in card.text

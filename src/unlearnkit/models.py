"""Loading and saving models safely: safetensors only, no remote code unless asked, atomic output.

A model folder is an ordinary Hugging Face folder (config, tokenizer, ``*.safetensors``) plus
``unlearnkit.json`` (how it was made) and a ``README.md`` model card.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import torch

from unlearnkit.errors import UserError
from unlearnkit.io import atomic_dir

PICKLE_WEIGHTS = ("pytorch_model.bin", "pytorch_model.bin.index.json", "model.pt", "model.pth", "model.ckpt")


def _is_local(name: str) -> bool:
    return os.path.sep in name or name.startswith(".") or Path(name).exists()


def check_model_path(name: str) -> None:
    """A local folder must exist and hold safetensors weights; pickle-only folders are refused."""
    path = Path(name)
    if not _is_local(name):
        return  # a hub id: transformers resolves it (and fails offline with its own message)
    if not path.is_dir():
        raise UserError(f"--model {name}: folder does not exist")
    if not (path / "config.json").is_file():
        raise UserError(f"--model {name}: no config.json; expected a Hugging Face model folder")
    if not any(path.glob("*.safetensors")):
        pickles = [
            p.name for p in path.iterdir() if p.name in PICKLE_WEIGHTS or p.suffix in (".bin", ".pt", ".pth")
        ]
        if pickles:
            raise UserError(
                f"--model {name}: only pickle weights ({pickles[0]}); unlearnkit loads safetensors only, because "
                "unpickling can run arbitrary code. Convert with a trusted tool to model.safetensors first"
            )
        raise UserError(f"--model {name}: no *.safetensors weights in the folder")


def load_model(
    name: str,
    trust_remote_code: bool = False,
    dtype: torch.dtype | None = None,
    device: str | torch.device | None = None,
):
    """Load a causal LM from a folder or hub id with ``use_safetensors=True``."""
    from transformers import AutoModelForCausalLM

    check_model_path(name)
    try:
        model = AutoModelForCausalLM.from_pretrained(
            name, use_safetensors=True, trust_remote_code=trust_remote_code, dtype=dtype or torch.float32
        )
    except (OSError, ValueError) as err:
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise UserError(f"--model {name}: cannot load ({first})") from None
    if device is not None:
        model.to(device)
    return model


def load_tokenizer(name: str, trust_remote_code: bool = False):
    """Load the tokenizer; a missing pad token falls back to EOS (masks come from lengths, not ids)."""
    from transformers import AutoTokenizer

    try:
        tok = AutoTokenizer.from_pretrained(name, trust_remote_code=trust_remote_code)
    except (OSError, ValueError) as err:
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise UserError(f"--model {name}: cannot load the tokenizer ({first})") from None
    if tok.pad_token is None and tok.eos_token is not None:
        tok.pad_token = tok.eos_token
    return tok


def load(name: str, trust_remote_code: bool = False, dtype: torch.dtype | None = None):
    return load_model(name, trust_remote_code, dtype), load_tokenizer(name, trust_remote_code)


def save_model(
    model, tokenizer, output: str | Path, provenance: dict[str, Any], overwrite: bool = False
) -> Path:
    """Write a model folder atomically (temporary sibling, renamed when complete)."""
    with atomic_dir(output, overwrite=overwrite) as tmp:
        model.save_pretrained(tmp, safe_serialization=True)
        if tokenizer is not None:
            tokenizer.save_pretrained(tmp)
        (tmp / "unlearnkit.json").write_text(
            json.dumps(provenance, indent=2, default=str) + "\n", encoding="utf-8"
        )
        (tmp / "README.md").write_text(model_card(provenance), encoding="utf-8")
    return Path(output)


def model_card(provenance: dict[str, Any]) -> str:
    lines = [
        "---",
        "library_name: transformers",
        "tags: [unlearnkit]",
        "---",
        "",
        f"# {provenance.get('kind', 'model')} made with unlearnkit",
        "",
    ]
    for key, value in provenance.items():
        if isinstance(value, dict):
            lines.append(f"- **{key}**:")
            lines.extend(f"  - {k}: `{v}`" for k, v in value.items())
        else:
            lines.append(f"- **{key}**: `{value}`")
    return "\n".join(lines) + "\n"

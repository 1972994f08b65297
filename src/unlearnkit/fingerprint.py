"""Content digests for cache keys: a cached number is reused only for the same weights, data and settings.

Anything unlearnkit keeps between runs (TokenUnlearn scores, the sweep's reference metrics, the
quickstart's trained models) is keyed by what it was computed FROM, not by where that lives: a model
folder retrained in place, or a data file edited under the same name, must never bring back the
numbers of the old one (open-unlearning #161).

* :func:`weights_digest` - SHA-256 of every tensor of an in-memory model (names, dtypes, shapes,
  bytes). Exact; costs one pass over the weights (about 1 s per GB on CPU; GPU tensors are copied to
  the host one at a time).
* :func:`model_digest` - SHA-256 of the files of a model folder that transformers reads (configs,
  tokenizer files, safetensors weights; not the model card or ``unlearnkit.json``), memoised per
  (path, size, mtime) within a process. A hub id is its cached snapshot's commit hash (content
  addressed), else the id itself.
* :func:`data_digest` - SHA-256 of rows (or of every split of a benchmark) as canonical JSON.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path
from typing import Any

# What transformers / tokenizers read from a model folder. README.md and unlearnkit.json (provenance,
# timings) do not change a single number.
_MODEL_FILE_SUFFIXES = (".json", ".safetensors", ".model", ".txt", ".jinja", ".tiktoken")
_NOT_CONTENT = ("README.md", "unlearnkit.json")
_MEMO: dict[tuple, str] = {}


def weights_digest(model) -> str:
    """SHA-256 (hex) of every parameter and buffer of ``model`` (PEFT / DDP wrappers included as they are)."""
    import torch

    digest = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        data = tensor.detach().cpu().contiguous()
        digest.update(f"{name}|{data.dtype}|{tuple(data.shape)}|".encode())
        if data.numel():  # raw bytes (a uint8 view: bf16 has no numpy dtype)
            digest.update(data.view(-1).view(torch.uint8).numpy().tobytes())
    return digest.hexdigest()


def model_digest(name: str | Path | None) -> str | None:
    """Digest of a model folder's content (or a hub id's snapshot); None for None."""
    if name is None:
        return None
    path = Path(str(name)).expanduser()
    if not path.is_dir():
        return _hub_digest(str(name))
    files = sorted(
        p
        for p in path.rglob("*")
        if p.is_file() and p.name not in _NOT_CONTENT and p.suffix in _MODEL_FILE_SUFFIXES
    )
    stamp = tuple((str(p.relative_to(path)), p.stat().st_size, p.stat().st_mtime_ns) for p in files)
    memo_key = (str(path.resolve()), stamp)
    if memo_key not in _MEMO:
        digest = hashlib.sha256()
        for p in files:
            digest.update(f"{p.relative_to(path)}|{p.stat().st_size}|".encode())
            with p.open("rb") as fh:
                while chunk := fh.read(1 << 24):
                    digest.update(chunk)
        _MEMO[memo_key] = digest.hexdigest()
    return _MEMO[memo_key]


def _hub_digest(name: str) -> str:
    try:
        from huggingface_hub import try_to_load_from_cache

        cached = try_to_load_from_cache(name, "config.json")
    except Exception:  # noqa: BLE001 - an unusable cache: the id is all there is to key on
        cached = None
    if isinstance(cached, str) and "/snapshots/" in cached:
        return f"hub:{name}@{cached.split('/snapshots/')[1].split('/')[0]}"  # the snapshot's commit hash
    return f"hub:{name}"


def data_digest(data: Any) -> str:
    """Digest of rows, a dict / list of row lists, or a benchmark dataclass (every field), as canonical JSON."""
    if dataclasses.is_dataclass(data) and not isinstance(data, type):
        data = {f.name: getattr(data, f.name) for f in dataclasses.fields(data)}
    elif hasattr(data, "forget") and hasattr(data, "retain"):  # a benchmark-like object: its splits
        data = {k: getattr(data, k) for k in ("forget", "retain", "holdout", "general") if hasattr(data, k)}
    blob = json.dumps(data, sort_keys=True, default=_plain, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _plain(value: Any) -> Any:
    """Paths (and other path-like values) as text; anything else without a stable text form is refused,
    so a digest can never depend on an object's memory address."""
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, (set, frozenset, tuple)):
        return sorted(value, key=str) if isinstance(value, (set, frozenset)) else list(value)
    raise TypeError(f"data_digest: cannot digest a {type(value).__name__} value")

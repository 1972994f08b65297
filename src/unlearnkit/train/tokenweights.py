"""Attach TokenUnlearn token weights to encoded forget examples (scores computed once, cached).

Scores come from the *original* model before any update (arXiv 2605.00364); a run's cache is reused
on resume so a restarted run trains on exactly the same weights.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from unlearnkit.data.encode import PromptFormat
from unlearnkit.io import write_text_atomic


def attach_token_weights(
    model,
    tokenizer,
    fmt: PromptFormat,
    rows: list[dict],
    encoded: list[dict],
    method_cfg,
    train_cfg,
    cache_dir: str | Path | None = None,
    quiet: bool = False,
) -> dict[str, Any]:
    from unlearnkit.attribution import (
        compute_scores,
        fact_overlap,
        load_scores,
        save_scores,
        token_weights,
        weights_at_labels,
    )

    cache = Path(cache_dir) if cache_dir else None
    key = _cache_key(model, rows, encoded, method_cfg, train_cfg, fmt, content=cache is not None)
    cached = _read_cache(cache, key)
    if cached is not None:
        scores, tagger_used = load_scores(cache / "scores.jsonl"), cached["tagger_used"]
    else:
        scores, tagger_used = compute_scores(
            model,
            tokenizer,
            fmt,
            rows,
            alpha=method_cfg.alpha,
            mask_token=method_cfg.mask_token,
            tagger=method_cfg.tagger,
            max_length=train_cfg.max_length,
            progress=not quiet,
        )
    weights = token_weights(scores, method_cfg.selection, method_cfg.r, method_cfg.tau_w)
    for enc, w in zip(encoded, weights):
        enc["weights"] = weights_at_labels(enc, w)
    selected = [[x > 0 for x in w] for w in weights] if method_cfg.selection == "hard" else None
    info = {
        "tagger_used": tagger_used,
        "selection": method_cfg.selection,
        "key": key,
        "mean_selected_fraction": (sum(sum(s) / len(s) for s in selected) / len(selected))
        if selected
        else 1.0,
        "fact_overlap": fact_overlap(scores, selected, rows, tokenizer) if selected else float("nan"),
    }
    if cache is not None and cached is None:
        save_scores(
            scores,
            selected if selected else weights,
            cache,
            tagger_used,
            {**key, "selection": method_cfg.selection},
        )
        # written last and atomically: a key on disk always describes the complete scores next to it
        write_text_atomic(
            cache / "cache_key.json", json.dumps({"key": key, "tagger_used": tagger_used}) + "\n"
        )
    return info


def _cache_key(model, rows, encoded, method_cfg, train_cfg, fmt, content: bool = True) -> dict[str, Any]:
    """What the scores are computed from: the original model's weights, the forget rows and their token
    ids (tokenizer, prompt format, system prompt), the tagger actually used and the attribution settings.
    A change to any of them recomputes the scores instead of reusing stale ones. ``content=False``
    (no cache to check against): the settings only, without hashing the weights."""
    from unlearnkit.attribution import resolve_tagger
    from unlearnkit.fingerprint import data_digest, weights_digest

    settings = {
        "alpha": method_cfg.alpha,
        "mask_token": method_cfg.mask_token,
        "tagger": method_cfg.tagger,
        "tagger_used": resolve_tagger(method_cfg.tagger)[1],  # auto: spaCy installed since, or not
        "prompt": fmt.describe(),
        "max_length": train_cfg.max_length,
        "n": len(rows),
    }
    if not content:
        return settings
    return {
        **settings,
        "weights": weights_digest(model),
        "rows": data_digest([{"question": r["question"], "answer": r["answer"]} for r in rows]),
        "ids": data_digest([[e["input_ids"], e["labels"]] for e in encoded]),
    }


def _read_cache(cache: Path | None, key: dict) -> dict | None:
    if cache is None or not (cache / "cache_key.json").is_file() or not (cache / "scores.jsonl").is_file():
        return None
    try:
        stored = json.loads((cache / "cache_key.json").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None  # unreadable: recompute (and rewrite) rather than trust it
    return stored if isinstance(stored, dict) and stored.get("key") == key else None

"""Evaluation protocols: which metrics a ``--protocol`` computes.

* ``tofu`` / ``closer-look``: :func:`unlearnkit.evaluate.evaluate` (+ ``unlearnkit.closer_look``);
  on the real TOFU data (``--data tofu:forget10``) the general knowledge comes in two parts, real
  authors and world facts, reported separately by :func:`general_part_metrics`, and model utility is
  the harmonic mean of TOFU's 9 numbers (:func:`tofu_model_utility`).
* ``muse``: :func:`unlearnkit.protocols.muse.evaluate_muse` (VerbMem, KnowMem, PrivLeak).
* ``wmdp``: :func:`unlearnkit.protocols.wmdp.evaluate_wmdp` (lm-eval ``wmdp_bio``, ``wmdp_cyber``, ``mmlu``).
"""

from __future__ import annotations

from typing import Any

PROTOCOLS = ("tofu", "closer-look", "muse", "wmdp")

# TOFU model utility (arXiv 2401.06121): {prob, ROUGE-L recall, truth ratio} on 3 parts.
TOFU_UTILITY_PARTS = ("retain", "real_authors", "world_facts")
TOFU_UTILITY_KEYS = tuple(
    f"{part}_{metric}" for part in TOFU_UTILITY_PARTS for metric in ("prob", "rougeL_recall", "truth_ratio")
)


def general_part_metrics(model, tokenizer, bench, settings=None) -> tuple[dict[str, float], dict[str, Any]]:
    """TOFU metrics of each part of ``bench.general_parts`` (keys ``real_authors_prob`` ...).

    Every part is scored like the ``general`` split of :func:`unlearnkit.evaluate.evaluate_split`
    (option-normalised probability, "true better" truth ratio), with the ``general_`` prefix replaced
    by the part's name. A benchmark without parts gives ``({}, {})``.
    """
    from unlearnkit.data.encode import PromptFormat
    from unlearnkit.evaluate import EvalSettings, evaluate_split, subsample

    parts = getattr(bench, "general_parts", None) or {}
    st = settings or EvalSettings()
    fmt = PromptFormat.for_settings(tokenizer, st)
    metrics: dict[str, float] = {}
    details: dict[str, Any] = {}
    for name, rows in parts.items():
        rows = subsample(rows, st.max_items, st.seed)
        if not rows:
            continue
        part_metrics, details[name] = evaluate_split(model, tokenizer, fmt, rows, "general", st)
        metrics.update({f"{name}_{k.removeprefix('general_')}": v for k, v in part_metrics.items()})
    return metrics, details


def tofu_model_utility(metrics: dict[str, float]) -> float:
    """Harmonic mean of TOFU's 9 utility numbers; a missing one is an error (never a silent 6-number mean)."""
    from unlearnkit.errors import UserError
    from unlearnkit.metrics.scores import harmonic_mean

    missing = [k for k in TOFU_UTILITY_KEYS if k not in metrics]
    if missing:
        raise UserError(f"TOFU model utility needs {', '.join(missing)}")
    return harmonic_mean([metrics[k] for k in TOFU_UTILITY_KEYS])

"""Evaluation protocols: which metrics a ``--protocol`` computes.

* ``tofu`` / ``closer-look``: :func:`unlearnkit.evaluation.evaluate.evaluate` (+ ``unlearnkit.evaluation.closer_look``);
  on the real TOFU data (``--data tofu:forget10``) the general knowledge comes in two parts, real
  authors and world facts, reported separately by :func:`general_part_metrics`, and model utility is
  the harmonic mean of TOFU's 9 numbers (:func:`tofu_model_utility`).
* ``muse``: :func:`unlearnkit.protocols.muse.evaluate_muse` (VerbMem, KnowMem, PrivLeak).
* ``wmdp``: :func:`unlearnkit.protocols.wmdp.evaluate_wmdp` (lm-eval ``wmdp_bio``, ``wmdp_cyber``, ``mmlu``).
"""

from __future__ import annotations

from unlearnkit.evaluation.evaluate import (  # noqa: F401 - re-exported: the TOFU protocol's parts
    TOFU_UTILITY_KEYS,
    TOFU_UTILITY_PARTS,
    general_part_metrics,
    tofu_model_utility,
)

PROTOCOLS = ("tofu", "closer-look", "muse", "wmdp")

__all__ = [
    "PROTOCOLS",
    "TOFU_UTILITY_KEYS",
    "TOFU_UTILITY_PARTS",
    "general_part_metrics",
    "tofu_model_utility",
]

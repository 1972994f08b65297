"""unlearnkit: make a language model forget, prove it, keep it useful.

The Python API (``docs/API.md``)::

    from unlearnkit import unlearn, evaluate, audit, distill, finetune, pretrain
    from unlearnkit.methods import NPOConfig

Each name is imported on first use, so ``import unlearnkit`` (and the command line's argument checks)
stays free of torch and transformers.
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

# name -> the module that defines it
_API = {
    "unlearn": "unlearnkit.api.unlearn",
    "evaluate": "unlearnkit.api.evaluate",
    "audit": "unlearnkit.api.audit",
    "distill": "unlearnkit.api.distill",
    "finetune": "unlearnkit.api.finetune",
    "pretrain": "unlearnkit.api.pretrain",
    "UnlearnResult": "unlearnkit.pipelines.unlearn",
    "EvalResult": "unlearnkit.api.evaluate",
    "AuditResult": "unlearnkit.api.audit",
    "DistillResult": "unlearnkit.api.distill",
    "FinetuneResult": "unlearnkit.api.finetune",
    "PretrainResult": "unlearnkit.api.pretrain",
    "ArgumentError": "unlearnkit.errors",
    "UserError": "unlearnkit.errors",
}
__all__ = ["__version__", *_API]


def __getattr__(name: str) -> object:
    if name in _API:
        value = getattr(importlib.import_module(_API[name]), name)
        globals()[name] = value  # imported once
        return value
    raise AttributeError(f"module 'unlearnkit' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_API})

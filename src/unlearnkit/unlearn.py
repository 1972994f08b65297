"""The library's entry point where users import it: ``from unlearnkit.unlearn import unlearn``.

A re-export only; the pipeline is :mod:`unlearnkit.pipelines.unlearn`.
"""

from unlearnkit.pipelines.unlearn import UnlearnResult, resolve_configs, unlearn

__all__ = ["UnlearnResult", "resolve_configs", "unlearn"]

"""Metrics: pure functions (``scores``, ``mia``), model passes (``passes``) and protocols (``unlearnkit.evaluation.evaluate``)."""

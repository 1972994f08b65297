"""Pipelines: the runs a user starts, each read top to bottom, assembled from the parts below them.

``unlearn`` (one method on one model), ``continual`` (a sequence of forget requests), ``sweep`` (a
method's settings searched with Optuna), ``distill`` (UNDO: noise the unlearned model, distil it back),
``quickstart`` (the whole story on a miniature) and ``embedded`` (the miniature's cached world, base,
target and oracle). They import the parts (``train``, ``evaluation``, ``protocols``, ``report``, ``data``,
``models`` ...); no part imports a pipeline (``tests/test_layout.py``).
"""

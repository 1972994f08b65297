"""The Python API: :func:`unlearn`, :func:`evaluate`, :func:`audit`, :func:`distill` and their results.

Import them from the package (``from unlearnkit import unlearn``); each is a thin front over the
pipeline the matching command runs, resolving its defaults through the same functions, so that a
notebook and ``unlearnkit unlearn`` given the same model folder train with the same settings and write
the same record. Documented in ``docs/API.md``, whose every example the test suite runs.
"""

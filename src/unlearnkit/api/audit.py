"""``unlearnkit.audit``: is the knowledge gone or only hidden? The command's five checks from Python.

::

    report = audit(result, data="bench", oracle=oracle_model, original=target, relearn_steps=(20, 250))
    report.metrics["relearn_gap_final"], report.verdicts

Membership inference, the relearning attack, quantisation, paraphrase probes and the forget facts
reached another way (alias, multi-hop), each on the audited
model and, side by side, on the retain oracle and the original model when given
(:mod:`unlearnkit.evaluation.audit`, the code ``unlearnkit audit`` runs). No model is modified.
"""

from __future__ import annotations

import dataclasses
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from unlearnkit.api.data import benchmark_of
from unlearnkit.api.errors import SAVE_FLAGS, python_errors, reworded
from unlearnkit.api.evaluate import model_and_tokenizer
from unlearnkit.errors import ArgumentError

FLAGS = {
    "retain-model": "oracle",
    "original-model": "original",
    "relearn-steps": "relearn_steps",
    "relearn-fit-prob": "relearn_fit_prob",
    "relearn-control retain": 'relearn_control="retain"',
}


@dataclass
class AuditResult:
    """The audit: ``report`` is ``audit.json`` (every check's rows and verdict, the relearning curve,
    the measurements); ``metrics`` its numbers, flat (``relearn_gap_final``, ``audited/forget_rougeL_recall``
    ... : each model's measurements under its role)."""

    report: dict[str, Any] = field(repr=False)

    @property
    def metrics(self) -> dict[str, float]:
        """Every number of the audit, flat: the summary gaps (``relearn_gap_0``, ``relearn_gap_final``
        read at ``relearn_final_step``, ``relearn_gap_fact_final``, ``relearn_gap_20`` when 20 is a step ...) and each model's measurements (``oracle/mia_min_k_auc`` ...; the fact
        recall of each way into the forget facts as ``audited/reached_alias`` ...)."""
        out: dict[str, float] = {}
        for key, value in self.report.items():
            if _number(value) and key != "version":
                out[key] = value
        for role, measured in (self.report.get("measured") or {}).items():
            for key, value in measured.items():
                if _number(value):
                    out[f"{role}/{key}"] = value
            for way, value in (measured.get("reached") or {}).items():
                if _number(value):
                    out[f"{role}/reached_{way}"] = value
        return out

    @property
    def verdicts(self) -> list[str]:
        """One line per check, the audited model's numbers next to the oracle's (and original's)."""
        return list(self.report.get("verdicts", []))

    @property
    def warnings(self) -> list[str]:
        from unlearnkit.evaluation.audit.card import warning_lines

        return list(warning_lines(self.report))

    def to_json(self) -> str:
        """``audit.json``'s text."""
        from unlearnkit.io import json_text

        return json_text(self.report)

    def save(self, path: str | Path, overwrite: bool = False) -> Path:
        """Write ``audit.json``, ``audit.md`` and the HTML card to the folder ``path``, as ``unlearnkit
        audit --output`` does. Atomic; an existing non-empty folder is refused unless ``overwrite``."""
        from unlearnkit.evaluation.audit import write_audit

        with python_errors(SAVE_FLAGS):
            write_audit(path, self.report, overwrite=overwrite)
        return Path(path)


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def audit(
    model: Any,
    tokenizer: Any = None,
    data: Any = None,
    *,
    oracle: Any = None,
    original: Any = None,
    columns: dict[str, str] | None = None,
    method: str | None = None,
    trust_remote_code: bool = False,
    quiet: bool = False,
    **settings: Any,
) -> AuditResult:
    """Audit ``model`` on ``data``; returns an :class:`AuditResult` (``.metrics``, ``.verdicts``,
    ``.to_json()``, ``.save(path)``).

    ``model``, ``oracle`` (the retain oracle, recommended) and ``original`` (the model before
    unlearning): a model (sharing ``tokenizer``), a ``(model, tokenizer)`` pair, an ``UnlearnResult`` or
    a model folder. ``data``: a benchmark folder or name, a ``Benchmark``, or a dict of splits (the
    membership check needs ``holdout`` rows, the paraphrase probes ``paraphrased_question``).
    ``settings``: :class:`~unlearnkit.evaluation.audit.AuditSettings` fields with the command's defaults
    (``quant_bits=(8, 4)``, ``max_items=200``, ``max_new_tokens=64`` ...; ``relearn_lr`` and
    ``relearn_steps`` and ``relearn_fit_prob`` by the model's lineage and the data's kind, as the command:
    :mod:`unlearnkit.evaluation.audit.lineage`). ``method`` names the audited model's role in the card.
    """
    from unlearnkit.evaluation.audit import AuditSettings, run_audit

    if data is None:
        raise ArgumentError(
            "data: give the benchmark to audit on (a folder, a name, or {'forget': rows, ...})"
        )
    known = {f.name for f in dataclasses.fields(AuditSettings)} - {"progress"}
    unknown = sorted(set(settings) - known)
    if unknown:
        raise ArgumentError(
            f"audit(): unknown setting {unknown[0]!r}; the settings are {', '.join(sorted(known))}"
        )
    bench, _ = benchmark_of(data, "data", columns)
    if not {"relearn_lr", "relearn_steps", "relearn_fit_prob"} <= set(settings):
        from unlearnkit.api.unlearn import model_source
        from unlearnkit.evaluation.audit.lineage import relearn_defaults
        from unlearnkit.evaluation.probes import data_kind

        row = relearn_defaults(model_source(model, None), data_kind(bench))
        why = row.why
        lineage_row = (
            ("relearn_lr", row.lr),
            ("relearn_steps", row.steps),
            ("relearn_fit_prob", row.fit_prob),
        )
        chosen = {k: v for k, v in lineage_row if k not in settings}
        settings = {**settings, **chosen}
        if not quiet and settings["relearn_steps"]:
            said = " and ".join(f"{k}={v}" for k, v in chosen.items())
            print(f"unlearnkit: note: relearning attack {said} for {why}", file=sys.stderr)
    with python_errors(FLAGS):
        st = AuditSettings(**settings, progress=not quiet)
    from unlearnkit.evaluation.audit.run import check_audit_data

    with python_errors(FLAGS):
        # as the command, before any loading
        check_audit_data(bench, st, relearn_off="relearn_steps=()", has_original=original is not None)
    names = {"audited": _name(model, "the audited model")}
    model, tokenizer = model_and_tokenizer(model, tokenizer, "model", trust_remote_code)
    pairs = {}
    for role, value in (("oracle", oracle), ("original", original)):
        if value is not None:
            names[role] = _name(value, f"the {role} model")
            pairs[role] = model_and_tokenizer(value, tokenizer, role, trust_remote_code)
    with python_errors(FLAGS):
        report = run_audit(
            model,
            tokenizer,
            bench,
            oracle=pairs.get("oracle"),
            original=pairs.get("original"),
            settings=st,
            names=names,
            method=method,
        )
    result = AuditResult(python_advice(report))
    if not quiet:
        for line in result.warnings:
            print(f"unlearnkit: warning: {line}", file=sys.stderr)
    return result


def python_advice(report: dict[str, Any]) -> dict[str, Any]:
    """``report`` with its warnings' advice in this function's keywords (``relearn_lr``, not the
    command's ``--relearn-lr``): the warnings are written once, for the command
    (:func:`~unlearnkit.evaluation.audit.relearning.relearn_warnings`)."""

    warnings = [{**w, "message": reworded(w["message"], FLAGS)} for w in report.get("warnings") or []]
    return {**report, "warnings": warnings} if "warnings" in report else report


def _name(value: Any, default: str) -> str:
    return str(value) if isinstance(value, (str, Path)) else default

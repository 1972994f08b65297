"""Check 4, paraphrase probes: the forget questions reworded (``paraphrased_question`` of the embedded
world, or a probes file) are asked again; forgetting that only covers the exact wording fails.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from unlearnkit.errors import UserError
from unlearnkit.evaluation.audit.common import check_row, fmt_number, others_line
from unlearnkit.evaluation.audit.settings import AuditSettings

if TYPE_CHECKING:  # the checks read the auditor's rows; run.py imports this module
    from unlearnkit.evaluation.audit.run import Auditor


def qa_only(rows: Sequence[dict], question_key: str = "question") -> list[dict]:
    """Rows with just question/answer (so evaluate_split skips the truth-ratio passes)."""
    return [{"question": r[question_key], "answer": r["answer"]} for r in rows]


def paraphrase_probe_rows(forget: list[dict], settings: AuditSettings) -> tuple[list[dict], str]:
    """Reworded forget questions: the probes file when given, else the rows' ``paraphrased_question``."""
    if settings.probes_path:
        from unlearnkit.data.qa import read_jsonl, validate_qa

        rows = validate_qa(read_jsonl(settings.probes_path), settings.probes_path)
        if not rows:
            raise UserError(f"probes file {settings.probes_path} is empty")
        from unlearnkit.evaluation.evaluate import subsample

        return qa_only(subsample(rows, settings.max_items, settings.seed)), str(settings.probes_path)
    with_para = [r for r in forget if isinstance(r.get("paraphrased_question"), str)]
    with_para = [r for r in with_para if r["paraphrased_question"].strip()]
    return qa_only(with_para, "paraphrased_question"), "paraphrased_question"


def probe_check(measured: dict, a: Auditor) -> dict[str, Any]:
    source = "the rows' paraphrased_question" if a.probe_source == "paraphrased_question" else a.probe_source
    check: dict[str, Any] = {
        "id": "paraphrase",
        "title": "Paraphrase probes",
        "about": f"{len(a.probes)} reworded forget questions (from {source}) asked again; compare with "
        "the full-precision rows of the quantisation check (the questions as worded in the forget set).",
    }
    if not a.probes:
        check.update(rows=[], skipped="no paraphrased_question in the forget rows and no probes file")
        check["verdict"] = "paraphrase probes: skipped (no paraphrased questions; pass a probes file)"
        return check
    check["rows"] = [
        check_row("ROUGE-L recall, paraphrased", measured, lambda m: m["probe_rougeL_recall"]),
        check_row("prob, paraphrased", measured, lambda m: m["probe_prob"]),
    ]
    parts = {
        role: fmt_number(measured[role]["probe_rougeL_recall"])
        for role in ("oracle", "original")
        if role in measured
    }
    m = measured["audited"]
    check["verdict"] = (
        f"paraphrased forget questions get ROUGE-L recall {fmt_number(m['probe_rougeL_recall'])} "
        f"(original wording {fmt_number(m['forget_rougeL_recall'])}){others_line(parts)}"
    )
    return check


def text_paraphrase_check(a: Auditor) -> dict[str, Any]:
    what = a.plan.what if a.plan else "a raw-text folder"
    reason = (
        f"raw-text data: paraphrase probes reword forget questions, and the forget set of {what} is "
        "passages; its own questions are asked by the relearning and quantisation checks"
    )
    return {
        "id": "paraphrase",
        "title": "Paraphrase probes",
        "about": "",
        "rows": [],
        "skipped": reason,
        "verdict": f"paraphrase probes: skipped ({reason})",
    }

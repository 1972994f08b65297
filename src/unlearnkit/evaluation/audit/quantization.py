"""Check 3, the quantisation attack (Zhang et al., arXiv 2410.16454): 8-bit and 4-bit
round-to-nearest copies (:mod:`unlearnkit.evaluation.quantize`) are asked the forget questions again; a
rise over full precision means the knowledge was hidden by small weight changes, not removed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from unlearnkit.evaluation.audit.common import ROLES, check_row, fmt_number, others_line

if TYPE_CHECKING:  # the checks read the auditor's rows; run.py imports this module
    from unlearnkit.evaluation.audit.run import Auditor


def quant_check(measured: dict, a: Auditor) -> dict[str, Any]:
    st = a.st
    check: dict[str, Any] = {
        "id": "quantization",
        "title": "Quantisation attack",
        "about": "Round-to-nearest fake-quantised copies (8-bit per output channel, lower widths in "
        f"groups of {st.group_size} inputs) asked the {len(a.forget)} forget questions. A rise over "
        "full precision means the knowledge was hidden by small weight changes, not removed.",
    }
    if not st.quant_bits:
        check.update(rows=[], skipped="quant_bits is empty")
        check["verdict"] = "quantisation attack: skipped (no bit widths)"
        return check
    rows = [check_row("ROUGE-L recall, full precision", measured, lambda m: m["forget_rougeL_recall"])]
    rows += [
        check_row(f"ROUGE-L recall, {b}-bit", measured, lambda m, b=b: m[f"quant{b}_forget_rougeL_recall"])
        for b in st.quant_bits
    ]
    rows.append(check_row("prob, full precision", measured, lambda m: m["forget_prob"]))
    rows += [
        check_row(f"prob, {b}-bit", measured, lambda m, b=b: m[f"quant{b}_forget_prob"])
        for b in st.quant_bits
    ]
    check["rows"] = rows
    bits = min(st.quant_bits)
    key = f"quant{bits}_forget_rougeL_recall"
    parts = {
        role: f"{fmt_number(measured[role]['forget_rougeL_recall'])} -> {fmt_number(measured[role][key])}"
        for role in ("oracle", "original")
        if role in measured
    }
    m = measured["audited"]
    check["verdict"] = (
        f"quantisation to {bits} bits moves forget ROUGE-L from {fmt_number(m['forget_rougeL_recall'])} to "
        f"{fmt_number(m[key])} (prob {fmt_number(m['forget_prob'], 3)} -> {fmt_number(m[f'quant{bits}_forget_prob'], 3)})"
        f"{others_line(parts)}"
    )
    return check


def text_quant_check(measured: dict, a: Auditor) -> dict[str, Any]:
    """The quantisation check of raw-text data: the forget-side probes on every forget entity's rows."""
    st = a.st
    check: dict[str, Any] = {"id": "quantization", "title": "Quantisation attack"}
    if not st.quant_bits:
        check.update(about="", rows=[], skipped="quant_bits is empty")
        check["verdict"] = "quantisation attack: skipped (no bit widths)"
        return check
    if not a.quant_metrics:
        reason = (
            "plain raw-text data has no probe sets to ask the quantised copies"
            if a.plan is None
            else "no forget-side probe set (knowmem_forget, verbmem, the hazardous questions) has rows"
        )
        check.update(about="", rows=[], skipped=reason)
        check["verdict"] = f"quantisation attack: skipped ({reason})"
        return check
    sources = ", ".join(
        f"{len(a.full_rows[p.name])} {p.source}" for p in a.plan.probes if a.full_rows.get(p.name)
    )
    check["about"] = (
        "Round-to-nearest fake-quantised copies (8-bit per output channel, lower widths in groups of "
        f"{st.group_size} inputs) measured with the relearning check's forget-side probes on the rows of "
        f"every forget {a.plan.unit} ({sources}). A rise over full precision means the knowledge was hidden "
        "by small weight changes, not removed."
    )
    rows = []
    for m in a.quant_metrics:
        rows.append(check_row(f"{m.label}, full precision", measured, lambda r, key=m.key: r[key]))
        rows += [
            check_row(f"{m.label}, {b}-bit", measured, lambda r, b=b, key=m.key: r[f"quant{b}_{key}"])
            for b in st.quant_bits
        ]
    check["rows"] = rows
    bits = min(st.quant_bits)
    parts = []
    words = {"oracle": "the oracle", "original": "the original model"}
    for m in a.quant_metrics:
        moves = {
            role: f"{fmt_number(measured[role].get(m.key))} -> {fmt_number(measured[role].get(f'quant{bits}_{m.key}'))}"
            for role in ROLES
            if role in measured
        }
        audited = moves.pop("audited")
        others = ", ".join(f"{words[r]} {text}" for r, text in moves.items())
        parts.append(f"{m.label} {audited}" + (f" ({others})" if others else ""))
    check["verdict"] = f"quantisation to {bits} bits moves " + "; ".join(parts)
    return check

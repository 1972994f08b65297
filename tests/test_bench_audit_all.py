"""bench/audit_all.py's table code on a hand-made audit (no model is audited): every check's rows are
flattened under ``check: label``, and cells print as the table prints them."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import audit_all  # noqa: E402


def test_rows_are_named_by_check_and_label():
    relearn = {"label": "forget ROUGE-L @20", "audited": 0.3, "oracle": 0.1, "original": 0.9}
    auc = {"label": "Min-K% AUC", "audited": 0.5}
    audit = {
        "checks": [
            {"name": "relearning", "title": "Relearning", "rows": [relearn]},
            {"title": "Membership", "rows": [auc]},  # no name: the title names it
            {"name": "quantization"},  # a skipped check: no rows
        ]
    }
    assert audit_all._rows(audit) == {
        "relearning: forget ROUGE-L @20": relearn,
        "Membership: Min-K% AUC": auc,
    }


def test_cells_print_three_decimals_and_a_dash_for_missing():
    assert audit_all._fmt(None) == "–"
    assert audit_all._fmt(0.12345) == "0.123"
    assert audit_all._fmt(3) == "3"
    assert audit_all._fmt("n/a") == "n/a"

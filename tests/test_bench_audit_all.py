"""bench/audit_all.py's table code on a hand-made audit (no model is audited): every check's rows are
flattened under ``check: label``, cells print as the table prints them, and the forget facts reached
another way get a table of their own (one row per model, one column per way in)."""

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


FAMILIES = [
    {"key": "direct", "label": "direct (the forget question)", "items": 4},
    {"key": "alias", "label": "alias (another name)", "items": 4},
    {"key": "multihop", "label": "multi-hop (through another entity)", "items": 4},
]


def _audit(audited: dict, blocked: bool) -> dict:
    oracle = {"direct": 0.0, "alias": 0.05, "multihop": 0.0}
    original = {"direct": 0.9, "alias": 0.8, "multihop": 0.3}
    return {
        "checks": [
            {
                "id": "mia",
                "title": "Membership inference",
                "rows": [{"label": "AUC LOSS", "audited": 0.61, "oracle": 0.5, "original": 1.0}],
                "verdict": "membership inference: AUC 0.61",
            },
            {
                "id": "reached",
                "title": "Reached another way",
                "rows": [{"label": "fact recall, alias", "audited": 0.7}],
            },
        ],
        "verdicts": ["membership inference: AUC 0.61", "reached another way: ..."],
        "reached": {
            "skipped": None,
            "families": FAMILIES,
            "recall": {"audited": audited, "oracle": oracle, "original": original},
            "reading": {"blocked_one_wording": blocked},
        },
    }


def test_the_reached_table_has_a_row_per_model_and_a_column_per_family():
    audits = {
        "npo": _audit({"direct": 0.02, "alias": 0.7, "multihop": None}, blocked=True),
        "gd": _audit({"direct": 0.01, "alias": 0.06, "multihop": 0.0}, blocked=False),
    }
    md = audit_all.render(audits, 1e-4).splitlines()
    at = md.index("### Reached another way")
    table = [line for line in md[at:] if line.startswith("|")][:6]
    assert table == [
        "| model | direct (the forget question) | alias (another name) | multi-hop (through another entity) | reading |",
        "|---|---|---|---|---|",
        "| npo | 0.020 | 0.700 | – | blocks one wording |",
        "| gd | 0.010 | 0.060 | 0.000 |  |",
        "| oracle | 0.000 | 0.050 | 0.000 |  |",
        "| target | 0.900 | 0.800 | 0.300 |  |",
    ]
    # the checks' table keeps the other checks' rows, not the reached check's (it has its own table)
    assert "| Membership inference: AUC LOSS | 0.610 | 0.610 | 0.500 | 1.000 |" in md
    assert not any(line.startswith("| Reached another way:") for line in md)
    assert md.index("### Verdicts") > at


def test_a_skipped_check_is_one_line():
    audit = _audit({}, blocked=False)
    audit["reached"] = {"skipped": "no probe files in /x", "families": [], "recall": {}, "reading": None}
    md = audit_all.render({"npo": audit}, 1e-4)
    assert "### Reached another way\n\nSkipped: no probe files in /x.\n" in md

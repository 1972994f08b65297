"""``unlearnkit audit``: evidence that the forget set's knowledge is gone, not just hidden.

The package's front door; :mod:`unlearnkit.evaluation.audit.run` holds the checks.
"""

from unlearnkit.evaluation.audit.run import (  # noqa: F401 - re-exported (split into modules next)
    AuditSettings,
    _Auditor,
    _relearn_check,
    audit_card_html,
    audit_markdown,
    gap_lines,
    is_raw_text,
    relearn_curve,
    relearn_gaps,
    relearn_reading,
    relearn_split,
    relearn_warnings,
    relearned_copy,
    run_audit,
    warning_lines,
    write_audit,
)

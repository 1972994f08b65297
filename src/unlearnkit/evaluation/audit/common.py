"""What every check of the audit shares: the models' roles, JSON-safe numbers, and the rows and
phrases its verdict lines are made of.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

ROLES = ("audited", "oracle", "original")


def as_number(x: Any) -> float | None:
    """A JSON-safe float: NaN / inf / missing -> None."""
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def mean_of(xs: Sequence[float]) -> float | None:
    return as_number(np.mean(xs)) if len(xs) else None


# The phrases of the verdict lines


def fmt_number(x: float | None, digits: int = 2) -> str:
    return "n/a" if x is None else f"{x:.{digits}f}"


def pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.0f} %"


def check_row(label: str, measured: dict, get) -> dict[str, Any]:
    row: dict[str, Any] = {"label": label}
    for role in ROLES:
        if role in measured:
            try:
                row[role] = as_number(get(measured[role]))
            except (KeyError, TypeError):
                row[role] = None
    return row


def others_line(parts: dict[str, str]) -> str:
    """'; the oracle X, the original model Y' for the roles present."""
    words = {"oracle": "the oracle", "original": "the original model"}
    bits = [f"{words[r]} {text}" for r, text in parts.items() if r != "audited" and text is not None]
    return ("; " + ", ".join(bits)) if bits else ""


def plural(count: int, noun: str) -> str:
    """'1 event', '3 events'."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"

"""The honest split of a sweep: the forget set cut by whole entities into a selection half (trials are
scored and chosen on it) and a test half (the chosen settings are reported on it), and its summary.

:mod:`unlearnkit.data.halves` cuts every part; the two functions here keep the forget-only names.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from unlearnkit.pipelines.sweep.settings import Context


def forget_entities(rows: Sequence[dict], bench_name: str = "") -> tuple[list[str], str]:
    """The entity of every forget row, and how it was found (:func:`unlearnkit.data.halves.entities_of`)."""
    from unlearnkit.data.halves import entities_of

    return entities_of(rows, bench_name, "forget")


def split_forget(entities: Sequence[str], seed: int) -> tuple[list[int], list[int]]:
    """Row indices of the forget set's selection and test halves (whole entities, seeded)."""
    from unlearnkit.data.halves import split_entities

    return split_entities(entities, seed, "forget")


def split_summary(ctx: Context) -> dict[str, Any]:
    """The split, part by part (the forget part's fields also at the top, as before)."""
    forget = ctx.split_info["forget"]
    return {
        "by": forget["by"],
        "seed": ctx.settings.seed,
        "selection_rows": forget["selection_rows"],
        "test_rows": forget["test_rows"],
        "selection_entities": forget["selection_entities"],
        "test_entities": forget["test_entities"],
        "parts": {
            part: {
                "by": info["by"],
                "rows": info["rows"],
                "selection_rows": len(info["selection_rows"]),
                "test_rows": len(info["test_rows"]),
                "selection_entities": info["selection_entities"],
                "test_entities": info["test_entities"],
            }
            for part, info in ctx.split_info.items()
        },
    }

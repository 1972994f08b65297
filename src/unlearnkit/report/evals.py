"""The side-by-side report of one's own ``unlearnkit eval`` folders (``unlearnkit report``).

Each row is one eval folder (``metrics.json`` + ``details.json``, as ``unlearnkit eval --output`` or
``EvalResult.save`` writes them) under the name it is given; the rows named ``target``, ``oracle`` and
``base`` are the yardsticks, as in the quickstart's report (``oracle`` is what "closest to the oracle"
measures against). The generations section shows the same few forget questions answered by every row:
the questions every folder evaluated (the same ``--max-items`` sample of the same data), matched by
their text.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from unlearnkit.errors import UserError

GENERATION_ITEMS = 5  # forget questions shown side by side, as the quickstart's report


def read_eval_folder(folder: str | Path, name: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(metrics, details)`` of one eval folder; a folder without them is one error line."""
    from unlearnkit.io import read_json

    path = Path(folder)
    if not path.is_dir():
        raise UserError(
            f"--eval {name}={folder}: no such folder (an eval folder: `unlearnkit eval --output`)"
        )
    metrics = read_json(path / "metrics.json", f"--eval {name}={folder}:")
    details = (
        read_json(path / "details.json", f"--eval {name}={folder}:")
        if (path / "details.json").is_file()
        else {}
    )
    if not isinstance(metrics, dict) or not any(isinstance(v, int | float) for v in metrics.values()):
        raise UserError(f"{path / 'metrics.json'}: no metrics (expected what `unlearnkit eval` writes)")
    return metrics, details if isinstance(details, dict) else {}


def view_of(results: dict[str, dict[str, Any]]):
    """The report view the metrics belong to: MUSE's, WMDP's, or None (TOFU's, the default)."""
    from unlearnkit.report.views import MUSE_VIEW, WMDP_VIEW

    keys = set().union(*(row.keys() for row in results.values()))
    if any(k.startswith("verbmem_") for k in keys):
        return MUSE_VIEW
    if any(k.endswith("_acc") for k in keys) and "model_utility" not in keys:
        return WMDP_VIEW
    return None


def side_by_side(details: dict[str, dict[str, Any]], n: int = GENERATION_ITEMS) -> list[dict[str, Any]]:
    """Up to ``n`` forget questions every row answered, with each row's answer (spread over the split,
    as the quickstart picks them)."""
    from unlearnkit.report.generations import pick_generation_items

    answered = {
        row: dict(zip(d.get("forget", {}).get("questions", []), d.get("forget", {}).get("generations", [])))
        for row, d in details.items()
    }
    if not answered or not all(answered.values()):
        return []
    first = next(iter(details.values()))["forget"]
    pairs = [
        (q, a)
        for q, a in zip(first["questions"], first.get("answers", []))
        if all(q in got for got in answered.values())
    ]
    return [
        {"question": q, "answer": a, "outputs": {row: answered[row][q] for row in details}}
        for q, a in (pairs[i] for i in pick_generation_items(len(pairs), n))
    ]


def report_of_evals(evals: Sequence[tuple[str, str | Path]]) -> tuple[dict, list, Any]:
    """``(results, generations, view)`` for :func:`unlearnkit.report.page.write_report` from ``(name,
    eval folder)`` pairs, in the order given."""
    names = [name for name, _ in evals]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise UserError(f"--eval {twice[0]}=...: the same row name twice; give each eval folder its own name")
    results, details = {}, {}
    for name, folder in evals:
        results[name], details[name] = read_eval_folder(folder, name)
    return results, side_by_side(details), view_of(results)

"""Selection and test halves of a benchmark, cut by whole entities, for honest model selection.

Choosing settings on the same rows that report the result measures the choice's luck with those rows,
not the settings (selection bias). :func:`split_halves` cuts *every* part a score reads, the forget set
and also the holdout, retain and general rows that make model utility, into a selection half and a
test half. Choices (``unlearnkit sweep``'s trial choice, early stopping, ``--eval-every``) read only
the selection half; results are reported on the test half, which no choice has seen::

    from unlearnkit.data.halves import split_halves

    selection, test, info = split_halves(bench, seed=0)
    info["retain"]["by"]        # 'author field': how the entities of that part were found

Entities, per part (:func:`entities_of`), so that rows about one entity never straddle the halves
(rows of one author share facts and wording: splitting them would leak the test half into the
choice):

* rows carrying a non-empty ``author`` string (the embedded world; a user's own data): that author;
* TOFU (``tofu:*``) rows carry no author, but TOFU lists each fictitious author's 20 QA pairs
  consecutively (forget, retain, holdout and ``retain_perturbed`` alike), so row ``i`` belongs to
  author ``i // 20``;
* otherwise every row is its own entity (documented fallback: rows about one entity may then fall on
  both sides, which makes the test half less independent; ``info`` says so).

General rows are split *within* each ``source`` (TOFU: real authors, world facts; any rows tagged with
``source``), so both halves keep every kind of general knowledge. Training is not affected: a caller
trains on the whole benchmark and only *evaluates* on the halves.

The cut is deterministic: per part (and source), the sorted unique entities are shuffled with a
seeded ``random.Random`` and ordered largest first (stable: shuffled among equals); in that order
each joins the half with fewer rows so far (ties: the selection half), so halves hold about equal rows
even when entities differ in size (with entities of one size: the first ceil(n/2) shuffled). The forget set's shuffle uses ``random.Random(seed)`` itself
(the split earlier versions of the sweep made).
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Sequence
from typing import Any

from unlearnkit.errors import UserError

TOFU_QA_PER_AUTHOR = 20  # locuslab/TOFU: 20 consecutive QA pairs per fictitious author
# TOFU parts laid out author by author (its general parts are not: one row per real author / fact).
TOFU_BLOCK_PARTS = ("forget", "retain", "holdout", "eval.retain")

__all__ = ["TOFU_QA_PER_AUTHOR", "entities_of", "split_entities", "split_halves", "split_rows"]


def entities_of(rows: Sequence[dict], bench_name: str = "", part: str = "forget") -> tuple[list[str], str]:
    """The entity of every row of ``part``, and how it was found (see the module docstring)."""
    if rows and all(isinstance(r.get("author"), str) and r["author"] for r in rows):
        return [r["author"] for r in rows], "author field"
    if bench_name.startswith("tofu:") and part in TOFU_BLOCK_PARTS:
        return [
            f"tofu-author-{i // TOFU_QA_PER_AUTHOR}" for i in range(len(rows))
        ], f"TOFU author blocks of {TOFU_QA_PER_AUTHOR}"
    return [f"row-{i}" for i in range(len(rows))], "rows (no entity field)"


def _rng(seed: int, part: str) -> random.Random:
    # str seeds are hashed with SHA-512 by random.Random: stable across runs and PYTHONHASHSEED.
    return random.Random(seed) if part == "forget" else random.Random(f"{seed}/{part}")


def split_entities(
    entities: Sequence[str], seed: int, part: str = "forget", strata: Sequence[str] | None = None
) -> tuple[list[int], list[int]]:
    """Row indices of the selection and test halves of one part: whole entities, seeded.

    ``strata`` (one label per row, e.g. the general rows' ``source``) splits each stratum on its
    own, so both halves hold every stratum. A non-empty part needs at least 2 entities.
    """
    unique_all = set(entities)
    if entities and len(unique_all) < 2:
        raise UserError(
            f"the {part} set has {len(unique_all)} entity ({next(iter(unique_all))!r}): a selection/test "
            f"split needs at least 2 (add {part} rows of another entity)"
        )
    labels = list(strata) if strata is not None else [""] * len(entities)
    sizes: dict[tuple[str, str], int] = {}
    for key in zip(labels, entities):
        sizes[key] = sizes.get(key, 0) + 1
    chosen: set[tuple[str, str]] = set()
    for stratum in sorted(set(labels)):
        unique = sorted({e for e, s in zip(entities, labels) if s == stratum})
        _rng(seed, part if not stratum else f"{part}.{stratum}").shuffle(unique)
        # Largest first (a stable sort: shuffled order among equals), each entity joins the half with
        # fewer rows so far (ties: selection): whole entities, and halves of about equal rows even
        # when entities differ in size. With entities of one size: the first ceil(n/2) shuffled.
        unique.sort(key=lambda e: -sizes[(stratum, e)])
        rows = [0, 0]
        for e in unique:
            half = 0 if rows[0] <= rows[1] else 1
            rows[half] += sizes[(stratum, e)]
            if half == 0:
                chosen.add((stratum, e))
    selection = [i for i, key in enumerate(zip(labels, entities)) if key in chosen]
    test = [i for i, key in enumerate(zip(labels, entities)) if key not in chosen]
    return selection, test


def split_rows(
    rows: Sequence[dict], seed: int, part: str, bench_name: str = ""
) -> tuple[list[int], list[int], dict[str, Any]]:
    """Split one part's rows; returns selection indices, test indices and that part's info."""
    entities, how = entities_of(rows, bench_name, part)
    sources = [str(r.get("source", "")) for r in rows]
    stratified = part.startswith("general") and len(set(sources)) > 1
    selection, test = split_entities(entities, seed, part, sources if stratified else None)
    info = {
        "by": how + (" within each source" if stratified else ""),
        "rows": len(rows),
        "selection_rows": selection,
        "test_rows": test,
        "selection_entities": sorted({entities[i] for i in selection}),
        "test_entities": sorted({entities[i] for i in test}),
    }
    return selection, test, info


def split_halves(bench, seed: int) -> tuple[Any, Any, dict[str, dict[str, Any]]]:
    """``(selection_bench, test_bench, info)``: ``bench`` with every part cut into two halves.

    ``bench`` is a :class:`unlearnkit.data.Benchmark` (or a ``SourceBenchmark``: its
    ``general_parts``, ``eval_splits`` and ``extra`` sets are cut too, and ``general`` stays the
    concatenation of its parts). Both returned benchmarks are copies of the same type with the same
    ``path`` and provenance. ``info`` maps each part (``forget``, ``retain``, ``holdout``,
    ``general`` or ``general.<source>``, ``eval.<split>``, ``extra.<set>``) to how its entities were
    found (``by``), its row indices in each half and the entities of each half. Empty parts stay
    empty. Deterministic in ``seed``.

    Raises :class:`UserError` when a non-empty part has fewer than 2 entities.
    """
    name = getattr(bench, "name", "") or ""
    info: dict[str, dict[str, Any]] = {}
    halves: tuple[dict[str, Any], dict[str, Any]] = ({}, {})

    def cut(part: str, rows: Sequence[dict]) -> tuple[list[dict], list[dict]]:
        if not rows:
            return [], []
        sel, test, info[part] = split_rows(rows, seed, part, name)
        return [rows[i] for i in sel], [rows[i] for i in test]

    for part in ("forget", "retain", "holdout"):
        for half, rows in zip(halves, cut(part, bench.split(part))):
            half[part] = rows
    parts = getattr(bench, "general_parts", None) or {}
    if parts:
        cut_parts = {source: cut(f"general.{source}", rows) for source, rows in parts.items()}
        for k, half in enumerate(halves):
            half["general_parts"] = {source: pair[k] for source, pair in cut_parts.items()}
            half["general"] = [r for pair in cut_parts.values() for r in pair[k]]
    else:
        for half, rows in zip(halves, cut("general", bench.split("general"))):
            half["general"] = rows
    for attr in ("eval_splits", "extra"):
        sets = getattr(bench, attr, None) or {}
        if sets:
            prefix = "eval" if attr == "eval_splits" else "extra"
            cut_sets = {key: cut(f"{prefix}.{key}", rows) for key, rows in sets.items()}
            for k, half in enumerate(halves):
                half[attr] = {key: pair[k] for key, pair in cut_sets.items()}
    selection, test = (dataclasses.replace(bench, **half) for half in halves)
    return selection, test, info

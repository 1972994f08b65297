"""The data a Python caller hands the API, made into the rows and benchmarks the pipelines read.

Rows come as a list of dicts, a ``datasets.Dataset`` (or anything with ``to_list()``), a pandas
``DataFrame``, or any iterable of mappings; a benchmark as a folder, a public name (``tofu:forget10``), a
:class:`~unlearnkit.data.Benchmark` or a dict of splits (``{"forget": rows, "retain": rows, ...}``).
``columns`` maps unlearnkit's field names to the caller's (``{"question": "prompt", "answer":
"completion"}``). Every problem is an :class:`~unlearnkit.errors.ArgumentError` naming the argument and
the row as the caller wrote them (``forget[3]``), never a bare ``KeyError``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from unlearnkit.data.qa import EVAL_FIELDS, QA_FIELDS, SPLITS, Benchmark, general_parts, validate_qa
from unlearnkit.errors import ArgumentError, UserError

# The fields a mapping may name (the benchmark schema, README "A benchmark folder holds ...").
FIELDS = (
    *QA_FIELDS,
    *EVAL_FIELDS,
    "paraphrased_question",
    "text",
    "author",
    "fact_value",
    "fact_span",
    "original_answer",
    "source",
)


def check_columns(columns: Mapping[str, str] | None) -> dict[str, str]:
    """``columns`` checked: unlearnkit field -> the caller's column name, both strings."""
    if columns is None:
        return {}
    if not isinstance(columns, Mapping):
        raise ArgumentError(
            f"columns={columns!r}: expected a dict from unlearnkit's field names to yours, e.g. "
            "columns={'question': 'prompt', 'answer': 'completion'}"
        )
    for field, column in columns.items():
        if field not in FIELDS:
            import difflib

            near = difflib.get_close_matches(str(field), FIELDS, n=1)
            hint = f"; did you mean {near[0]!r}?" if near else ""
            raise ArgumentError(
                f"columns: {field!r} is not a field unlearnkit reads{hint} (the keys are unlearnkit's names: "
                f"{', '.join(FIELDS)}; the values are your columns)"
            )
        if not isinstance(column, str):
            raise ArgumentError(f"columns[{field!r}]={column!r}: expected your column's name (a string)")
    return dict(columns)


def _records(value: Any, argument: str) -> list:
    if isinstance(value, (str, Path)):
        raise ArgumentError(
            f"{argument}={str(value)!r}: expected rows (a list of dicts or a datasets.Dataset); a benchmark "
            "folder or name goes in the data argument (forget= for unlearn)"
        )
    if isinstance(value, Mapping):
        raise ArgumentError(
            f"{argument}: expected rows (a list of dicts or a datasets.Dataset), got a dict"
            + (
                " of splits; pick one, e.g. data['train']"
                if all(hasattr(v, "to_list") for v in value.values())
                else ""
            )
        )
    if hasattr(value, "to_list") and hasattr(value, "column_names"):  # datasets.Dataset
        return value.to_list()
    if hasattr(value, "to_dict") and hasattr(value, "columns"):  # pandas.DataFrame
        return value.to_dict("records")
    if isinstance(value, Iterable):
        return list(value)
    raise ArgumentError(
        f"{argument}: expected rows (a list of dicts or a datasets.Dataset), got {type(value).__name__}"
    )


def _renamed(row: Mapping, columns: dict[str, str]) -> dict:
    out = dict(row)
    for field, column in columns.items():
        if column in row:
            out[field] = row[column]
    return out


def rows_of(
    value: Any,
    argument: str,
    columns: Mapping[str, str] | None = None,
    *,
    eval_fields: bool | tuple[str, ...] = False,
    text_ok: bool = True,
) -> list[dict]:
    """``value`` as a list of fresh dicts in unlearnkit's field names, each checked.

    Every row needs ``question`` and ``answer`` (non-empty strings), or, with ``text_ok``, ``text`` alone
    (a raw-text row); ``eval_fields`` requires the truth-ratio fields too (as
    :func:`unlearnkit.data.qa.validate_qa`, which checks the values of those present).
    """
    columns = check_columns(columns)
    out = []
    for i, row in enumerate(_records(value, argument)):
        if not isinstance(row, Mapping):
            raise ArgumentError(f"{argument}[{i}]: expected a dict of columns, got {type(row).__name__}")
        row = _renamed(row, columns)
        if text_ok and "question" not in row and "text" in row:
            if not isinstance(row["text"], str) or not row["text"].strip():
                raise ArgumentError(
                    f"{argument}[{i}]['text']: expected a non-empty string, got {row['text']!r}"
                )
            out.append(row)
            continue
        missing = [k for k in QA_FIELDS if k not in row]
        if missing:
            raise ArgumentError(_missing_message(argument, i, row, missing[0], columns, text_ok))
        out.append(row)
    try:
        validate_qa(out, argument, eval_fields=eval_fields, label=lambda i, _row: f"{argument}[{i}]")
    except ArgumentError:
        raise
    except UserError as err:
        raise ArgumentError(str(err).replace("missing field", "no column", 1)) from None
    return out


def _missing_message(argument: str, i: int, row: dict, field: str, columns: dict, text_ok: bool) -> str:
    have = ", ".join(repr(k) for k in row) or "none"
    if field in columns:
        return (
            f"{argument}[{i}]: columns maps {field!r} to {columns[field]!r}, which this row lacks (its "
            f"columns: {have})"
        )
    also = " (or 'text' alone: a raw passage)" if text_ok else ""
    return (
        f"{argument}[{i}]: no {field!r} column (its columns: {have}); every row needs 'question' and "
        f"'answer'{also}; for other names pass columns={{'question': ..., 'answer': ...}}"
    )


def is_benchmark_spec(value: Any) -> bool:
    """A folder, a benchmark name, a :class:`Benchmark` or a dict of splits (not plain rows)."""
    if isinstance(value, (str, Path, Benchmark)):
        return True
    return isinstance(value, Mapping) and bool(value) and set(value) <= set(SPLITS)


def benchmark_of(
    value: Any, argument: str = "data", columns: Mapping[str, str] | None = None, eval_fields: bool = False
) -> tuple[Benchmark, str]:
    """``(benchmark, how to name it in a model card)`` from a folder, a name, a :class:`Benchmark` or a
    dict of splits (``forget`` and ``retain`` required; ``holdout``, ``general`` optional)."""
    if isinstance(value, Benchmark):
        if columns:
            raise ArgumentError(
                f"{argument}: columns= renames the columns of rows you pass; a Benchmark is already in "
                "unlearnkit's names"
            )
        return value, str(value.path)
    if isinstance(value, (str, Path)):
        from unlearnkit.data.sources import resolve_data

        if columns:
            raise ArgumentError(
                f"{argument}={str(value)!r}: columns= renames the columns of rows you pass; a benchmark "
                "folder is read in unlearnkit's names (docs/data.md)"
            )
        try:
            return resolve_data(str(value), eval_fields=eval_fields), str(value)
        except UserError as err:
            text = str(err)
            for flag in (f"--data {value}", "--data"):
                text = text.replace(flag, f"{argument}={str(value)!r}", 1) if text.startswith(flag) else text
            raise ArgumentError(text) from None
    if isinstance(value, Mapping):
        unknown = sorted(set(value) - set(SPLITS))
        if unknown:
            raise ArgumentError(
                f"{argument}: unknown split {unknown[0]!r}; the splits are {', '.join(SPLITS)}"
            )
        for name in ("forget", "retain"):
            if name not in value:
                raise ArgumentError(
                    f"{argument}: no {name!r} split (a benchmark needs forget and retain rows)"
                )
        splits = {
            name: rows_of(value.get(name, []), f"{argument}[{name!r}]", columns, eval_fields=False)
            for name in SPLITS
        }
        if not splits["forget"]:
            raise ArgumentError(f"{argument}['forget'] is empty: there is nothing to forget")
        sizes = ", ".join(f"{name} {len(rows)}" for name, rows in splits.items() if rows)
        bench = Benchmark(
            path=Path(f"<{argument}>"), **splits, general_parts=general_parts(splits["general"])
        )
        return bench, f"rows given in Python ({sizes})"
    raise ArgumentError(
        f"{argument}: expected a benchmark folder or name, a Benchmark, or a dict of splits "
        f"({{'forget': rows, 'retain': rows, ...}}); got {type(value).__name__}"
    )


def labelled_sources(bench, name: str) -> list[tuple[list[dict], str]]:
    """A split's rows by the file they came from (:func:`unlearnkit.data.sources.split_sources`); for
    splits given in Python, one part named ``data['retain']``, as :func:`row_label` names its rows."""
    from unlearnkit.data.sources import split_sources

    if not bench.split(name):
        return []
    if str(bench.path).startswith("<"):
        return [(bench.split(name), f"data[{name!r}]")]
    return split_sources(bench, name)


def row_label(where: str):
    """How an error names row ``i`` of ``where``: ``file:line`` for a row read from a file (it knows its
    line), ``argument[i]`` for a row given in Python."""

    def label(i: int, row: dict) -> str:
        return f"{where}:{row['_line']}" if "_line" in row else f"{where}[{i}]"

    return label

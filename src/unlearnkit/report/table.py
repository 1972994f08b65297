"""The results table: which columns lead, which way each metric is better, how a cell is written.

One ``results`` mapping (``{row_name: {metric: value}}``, conventionally ``target``, ``oracle``, then
one row per unlearning method) in three forms: a ``rich`` terminal table that fits the console
(:func:`print_table`), a markdown table (:func:`markdown_table`) and the HTML page's metrics section
with the best non-reference value per column highlighted (:func:`metrics_section`).
"""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from unlearnkit.evaluation.diagnostics import MIN_FQ_ITEMS
from unlearnkit.report.markup import html_escape

Results = Mapping[str, Mapping[str, Any]]

#: Columns shown first, in this order, when present; any other metric keys follow in first-seen order.
DEFAULT_COLUMNS: tuple[str, ...] = (
    "forget_quality",
    "model_utility",
    "forget_rougeL_recall",
    "forget_fact_recall",
    "forget_para_fact_recall",
    "forget_prob",
    "forget_truth_ratio",
    "forget_token_entropy",
    "retain_rougeL_recall",
)

#: Which way is "better" for the metrics where that is well defined: "higher", "lower", "oracle"
#: (closest to the retain oracle's value) or "target" (closest to the target model's value). Metrics
#: not listed are shown but never highlighted.
#:
#: Forget-side metrics are "oracle": unlearning aims at the model that never saw the forget data, not at
#: the lowest possible value. A model that collapsed (gradient ascent: forget ROUGE 0.08, utility 0) is
#: *further* from that goal than one matching the oracle's 0.39, so "lower is better" would reward it.
#: The same holds for the membership-inference AUCs: 0.5 (the oracle's) means "cannot tell members
#: from non-members"; an AUC far below 0.5 leaks membership just as well as one far above.
DIRECTIONS: dict[str, str] = {
    "forget_quality": "higher",
    "model_utility": "higher",
    "forget_rougeL_recall": "oracle",
    "forget_fact_recall": "oracle",
    "forget_para_fact_recall": "oracle",
    "forget_prob": "oracle",
    "forget_truth_ratio": "oracle",
    "forget_exact_memorisation": "oracle",
    "forget_extraction_strength": "oracle",
    "mia_loss_auc": "oracle",
    "mia_zlib_auc": "oracle",
    "mia_min_k_auc": "oracle",
    "mia_min_k_plus_plus_auc": "oracle",
    "retain_rougeL_recall": "higher",
    "retain_prob": "higher",
    "general_rougeL_recall": "higher",
    "forget_token_entropy": "target",
    "forget_gibberish": "lower",
}

#: Header marks; "\u2248O" / "\u2248T" read "approximately the oracle's / the target's value".
_DIRECTION_MARK = {"higher": "\u2191", "lower": "\u2193", "oracle": "\u2248O", "target": "\u2248T"}
_DIRECTION_REFERENCE = {"oracle": "oracle", "target": "target"}

#: One line per mark, used by the HTML legend and the terminal table's caption.
DIRECTION_LEGEND: dict[str, str] = {
    "higher": "\u2191 higher is better",
    "lower": "\u2193 lower is better",
    "oracle": "\u2248O closest to the retain oracle (never saw the forget data) is better; "
    "lower than the oracle is over-forgetting, not better",
    "target": "\u2248T closest to the target model is better (fluency kept)",
}

#: Short descriptions used as column tooltips in the HTML table.
_DESCRIPTIONS: dict[str, str] = {
    "forget_quality": "KS-test p-value of forget-set truth ratios vs the retain oracle; higher = more forgotten",
    "model_utility": "harmonic mean of retain / general-knowledge probability, ROUGE-L and truth ratio",
    "forget_rougeL_recall": "ROUGE-L recall of greedy answers on the forget set; the oracle's value is the aim",
    "forget_fact_recall": "share of forget questions whose fact value the greedy answer states (case-"
    "insensitive, whole words); the oracle's value is the aim",
    "forget_para_fact_recall": "fact recall on the forget questions asked in a wording never trained on "
    "(paraphrased_question): forgetting a fact means not stating it however it is asked; the oracle's value "
    "is the aim",
    "forget_quality_n": f"forget items behind forget_quality (below {MIN_FQ_ITEMS} a side it is noise)",
    "forget_quality_oracle_n": "the oracle's forget items behind forget_quality",
    "forget_prob": "length-normalised probability of forget answers; the oracle's value is the aim",
    "forget_truth_ratio": "truth-ratio score on the forget set; the oracle's value is the aim",
    "forget_token_entropy": "token entropy of forget-set generations; near the target's = still fluent",
    "forget_gibberish": "share of greedy forget answers that are empty or degenerate (loops, repeats, low "
    "token entropy); above 0.2 a row is never called best",
    "retain_rougeL_recall": "ROUGE-L recall on the retain set; higher = knowledge kept",
    "forget_exact_memorisation": "share of forget-answer tokens the model predicts exactly; the oracle's value "
    "is the aim",
    "forget_extraction_strength": "how little of a forget answer's prefix is needed to extract the rest; the "
    "oracle's value is the aim",
    **{
        f"mia_{attack}_auc": f"membership-inference AUC ({attack.replace('_', ' ')} attack), forget vs holdout; "
        "0.5 = cannot tell them apart; the oracle's value is the aim"
        for attack in ("loss", "zlib", "min_k", "min_k_plus_plus")
    },
}

_DASH = "\u2013"  # en dash, shown for NaN / missing values
REFERENCE_ROWS = ("target", "oracle", "base")  # yardsticks, not unlearning methods


def as_float(value: Any) -> float | None:
    """The value as a float, or None when it is missing / not a number (bools are not numbers here)."""
    if value is None or isinstance(value, bool):
        return None
    if hasattr(value, "item") and not isinstance(value, int | float):
        with contextlib.suppress(Exception):
            value = value.item()
    if isinstance(value, int | float):
        return float(value)
    return None


def finite_or_none(value: Any) -> float | None:
    v = as_float(value)
    return v if v is not None and math.isfinite(v) else None


def format_value(column: str, value: Any) -> str:
    """Format one cell: forget_quality in scientific notation (``3.2e-05``), other floats with 3 decimals.

    NaN and missing values become an en dash; integers are shown as integers; non-numbers as ``str``.
    """
    if value is None:
        return _DASH
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return str(value)
    v = as_float(value)
    if v is None:
        return str(value)
    if math.isnan(v):
        return _DASH
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    if column == "forget_quality":
        return f"{v:.1e}"
    return f"{v:.3f}"


def _columns(results: Results, columns: Sequence[str] | None) -> list[str]:
    if columns is not None:
        return list(columns)
    present: list[str] = []
    seen: set[str] = set()
    for row in results.values():
        for key in row:
            if key not in seen:
                seen.add(key)
                present.append(key)
    return [c for c in DEFAULT_COLUMNS if c in seen] + [c for c in present if c not in DEFAULT_COLUMNS]


def quality_table(results: Results, columns: Sequence[str] | None = None) -> list[list[str]]:
    """Header row ``["method", *columns]`` followed by one formatted row per entry of ``results``.

    ``columns`` defaults to :data:`DEFAULT_COLUMNS` (those present) followed by any other keys.
    A metric missing from a row is shown as an en dash, like NaN.
    """
    cols = _columns(results, columns)
    table = [["method", *cols]]
    for name, row in results.items():
        table.append([str(name), *(format_value(c, row.get(c)) for c in cols)])
    return table


def _header_pieces(head: str) -> list[str]:
    """Pieces a header may wrap between: after each underscore, and before its direction mark."""
    pieces = re.findall(r"[^_]+_?|_", head) or [head]
    mark = _DIRECTION_MARK.get(DIRECTIONS.get(head, ""), "")
    return pieces + ([" " + mark] if mark else [])


def _wrap_pieces(pieces: Sequence[str], width: int) -> str:
    lines: list[str] = []
    for piece in pieces:
        if lines and len(lines[-1]) + len(piece) <= width:
            lines[-1] += piece
        else:
            lines.append(piece.lstrip())
    return "\n".join(lines)


def fit_columns(table: Sequence[Sequence[str]], width: int) -> tuple[list[int], list[int]]:
    """Which columns of ``table`` (header row first) fit ``width`` terminal columns, and how wide each is.

    Returns ``(kept column indices, their widths)``. A column is at least as wide as its longest cell and
    its longest header piece (headers wrap at underscores, so ``forget_rougeL_recall`` needs 7, not 20);
    the first column is always kept. The others are kept left to right (highest priority first) while
    they fit, and the rest left out; headers are unwrapped when all of them then still fit. Widths count the cell text only: a rich
    table adds 3 per column (padding and rule) and 1 for the left edge.
    """
    heads = table[0]
    cells = [[row[i] for row in table[1:]] for i in range(len(heads))]
    min_w = [
        max([len(heads[0])] + [len(c) for c in cells[0]]),
        *(
            max([max(len(p.strip()) for p in _header_pieces(h))] + [len(c) for c in cells[i]])
            for i, h in enumerate(heads)
            if i > 0
        ),
    ]
    full_w = [
        max(m, len("".join(_header_pieces(h)))) if i else m for i, (m, h) in enumerate(zip(min_w, heads))
    ]
    # An overlong row name folds onto more lines rather than pushing the table past the terminal.
    min_w[0] = full_w[0] = min(min_w[0], max(len(heads[0]), width - 4))
    kept, used = [0], 1 + min_w[0] + 3
    for i in range(1, len(heads)):
        if used + min_w[i] + 3 <= width:
            kept.append(i)
            used += min_w[i] + 3
    # Unwrap the headers only if all of them can be: a mix of one-line and stacked headers reads badly.
    if used + sum(full_w[i] - min_w[i] for i in kept) <= width:
        return kept, [full_w[i] for i in kept]
    return kept, [min_w[i] for i in kept]


def print_table(
    results: Results,
    columns: Sequence[str] | None = None,
    title: str | None = None,
    *,
    console: Any = None,
) -> None:
    """Print :func:`quality_table` as a ``rich`` table that fits the console's width.

    Numbers are right-aligned and never cut, reference rows dimmed. Headers wrap at underscores; when
    even then not every column fits (an 80-column terminal), the rightmost columns are left out and
    the caption names them. The caption also explains the direction marks used.
    """
    from rich.console import Console
    from rich.table import Table

    console = console or Console()
    rows = quality_table(results, columns)
    kept, widths = fit_columns(rows, console.width)
    dropped = [h for i, h in enumerate(rows[0]) if i not in kept]
    caption = legend_lines(rows[0][i] for i in kept)
    if dropped:
        caption.append(f"not shown (terminal too narrow): {', '.join(dropped)}")
    table = Table(
        title=title, header_style="bold", caption="\n".join(caption) or None, caption_justify="left"
    )
    for i, w in zip(kept, widths):
        head = rows[0][i] if i == 0 else _wrap_pieces(_header_pieces(rows[0][i]), w)
        table.add_column(
            head,
            justify="left" if i == 0 else "right",
            min_width=w,
            max_width=w,
            no_wrap=i > 0,
            overflow="fold",
        )
    for row in rows[1:]:
        table.add_row(*(row[i] for i in kept), style="dim" if row[0] in REFERENCE_ROWS else None)
    console.print(table)


def markdown_table(results: Results, columns: Sequence[str] | None = None) -> str:
    """A GitHub-flavoured markdown table (numbers right-aligned), ending with a newline."""
    rows = quality_table(results, columns)

    def cell(text: str) -> str:
        return text.replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(cell(h) for h in rows[0]) + " |"]
    lines.append("|" + "|".join([" --- "] + [" ---: "] * (len(rows[0]) - 1)) + "|")
    for row in rows[1:]:
        lines.append("| " + " | ".join(cell(c) for c in row) + " |")
    return "\n".join(lines) + "\n"


def best_rows(results: Results, column: str, reference_rows: Sequence[str] = REFERENCE_ROWS) -> set[str]:
    """Rows holding the best value of ``column`` according to :data:`DIRECTIONS` (ties all win).

    Only non-reference rows compete: the target and the oracle are the yardsticks, not contenders
    (the target trivially "wins" utility, the oracle forget quality). "oracle" / "target" direction
    metrics are scored by the distance to that row's value and need it finite: without an oracle row
    nothing is highlighted for forget-side metrics (the lowest value is not the aim). Returns an empty
    set when the direction is unknown or no competing row has a finite value.
    """
    direction = DIRECTIONS.get(column)
    if direction is None:
        return set()
    values = {
        name: v
        for name, row in results.items()
        if name not in reference_rows and (v := finite_or_none(row.get(column))) is not None
    }
    if not values:
        return set()
    if direction == "higher":
        scores = values
    elif direction == "lower":
        scores = {k: -v for k, v in values.items()}
    else:
        ref = finite_or_none(results.get(_DIRECTION_REFERENCE[direction], {}).get(column))
        if ref is None:
            return set()
        scores = {k: -abs(v - ref) for k, v in values.items()}
    best = max(scores.values())
    return {k for k, s in scores.items() if math.isclose(s, best, rel_tol=1e-12, abs_tol=1e-15)}


def legend_lines(columns: Iterable[str]) -> list[str]:
    """The :data:`DIRECTION_LEGEND` lines for the directions that ``columns`` use, in a fixed order."""
    used = {DIRECTIONS[c] for c in columns if c in DIRECTIONS}
    return [line for key, line in DIRECTION_LEGEND.items() if key in used]


# --------------------------------------------------------------------------------------------------
# HTML
# --------------------------------------------------------------------------------------------------


def _header_html(column: str) -> str:
    """Header cell text that may wrap after each underscore (``forget_<wbr>rougeL_<wbr>recall``)."""
    mark = _DIRECTION_MARK.get(DIRECTIONS.get(column, ""), "")
    name = "_<wbr>".join(html_escape(part) for part in column.split("_"))
    return name + (f"&nbsp;{mark}" if mark else "")


def _metrics_table_html(results: Results, cols: Sequence[str], reference_rows: Sequence[str]) -> str:
    best = {c: best_rows(results, c, reference_rows) for c in cols}
    head = ['<th scope="col">method</th>']
    for c in cols:
        tip = _DESCRIPTIONS.get(c, "")
        title = f' title="{html_escape(tip)}"' if tip else ""
        head.append(f'<th scope="col" class="num"{title}>{_header_html(c)}</th>')
    body = []
    for name, row in results.items():
        cells = [f'<th scope="row">{html_escape(name)}</th>']
        for c in cols:
            cls = "num best" if name in best[c] else "num"
            cells.append(f'<td class="{cls}">{html_escape(format_value(c, row.get(c)))}</td>')
        tr_cls = ' class="ref"' if name in reference_rows else ""
        body.append(f"<tr{tr_cls}>{''.join(cells)}</tr>")
    # The wrapper scrolls sideways inside the page instead of widening it (many columns, narrow window).
    return (
        '<div class="table-wrap"><table class="metrics">\n<thead><tr>'
        + "".join(head)
        + "</tr></thead>\n<tbody>\n"
        + "\n".join(body)
        + "\n</tbody>\n</table></div>"
    )


def metrics_section(
    results: Results, columns: Sequence[str] | None, reference_rows: Sequence[str]
) -> list[str]:
    """Legend and table(s). With default columns, the headline metrics come first so the table fits
    the page; every metric follows in a collapsed table that scrolls sideways if it must."""
    every = _columns(results, columns)
    headline = [c for c in every if c in DEFAULT_COLUMNS] if columns is None else every
    shown = headline or every
    legend = "".join(f"<span>{html_escape(line)}</span>" for line in legend_lines(every))
    out = [
        '<div class="legend"><span><span class="swatch" style="background:var(--best)"></span>best among '
        f"unlearning methods</span>{legend}"
        f"<span><i>italic rows</i>: references ({html_escape(', '.join(reference_rows))})</span>"
        f"<span>{_DASH} not computed / NaN</span></div>",
        _metrics_table_html(results, shown, reference_rows),
    ]
    if len(shown) < len(every):
        out += [
            f'<details class="all-metrics"><summary>All {len(every)} metrics</summary>',
            _metrics_table_html(results, every, reference_rows),
            "</details>",
        ]
    return out

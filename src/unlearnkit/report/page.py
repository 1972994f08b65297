"""Human-facing reports: metric tables, the forget-quality / utility trade-off plot and an HTML page.

Pure presentation of numbers already computed elsewhere: no model, no torch. ``results`` is always an
ordered ``{row_name: {metric: value}}`` mapping (conventionally ``target``, ``oracle``, then one row per
unlearning method); ``generations`` is a list of ``{"question", "answer", "outputs": {row_name: text}}``,
optionally with ``fact`` (the fact's text) or ``fact_span`` (``[start, end]`` into the answer) and
``perturbed_answer`` (wrong answers): with them the "fact still there" cue scores the fact itself.

The HTML page is self-contained (inline CSS, the plot as a base64 data URI, no scripts, no external
resources) so it can be mailed, attached to a CI run or opened offline.
"""

from __future__ import annotations

import base64
import contextlib
import html
import math
import os
import re
import string
import tempfile
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from unlearnkit.evaluation.diagnostics import MIN_FQ_ITEMS, results_warnings
from unlearnkit.io import publish_mode, write_text_atomic
from unlearnkit.report.choice import choose_best, gains_and_costs, statement
from unlearnkit.report.views import PlotAxes, ReportView

__all__ = [
    "DEFAULT_COLUMNS",
    "DIRECTIONS",
    "answer_overlap",
    "best_rows",
    "format_value",
    "is_gibberish",
    "markdown_table",
    "plot_tradeoff",
    "TradeoffLayout",
    "fact_words",
    "degeneration",
    "fit_columns",
    "legend_lines",
    "DIRECTION_LEGEND",
    "print_table",
    "quality_table",
    "render_report",
    "write_report",
]

Results = Mapping[str, Mapping[str, Any]]

#: Columns shown first, in this order, when present; any other metric keys follow in first-seen order.
DEFAULT_COLUMNS: tuple[str, ...] = (
    "forget_quality",
    "model_utility",
    "forget_rougeL_recall",
    "forget_fact_recall",
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
    "forget_quality_n": f"forget items behind forget_quality (below {MIN_FQ_ITEMS} a side it is noise)",
    "forget_quality_oracle_n": "the oracle's forget items behind forget_quality",
    "forget_prob": "length-normalised probability of forget answers; the oracle's value is the aim",
    "forget_truth_ratio": "truth-ratio score on the forget set; the oracle's value is the aim",
    "forget_token_entropy": "token entropy of forget-set generations; near the target's = still fluent",
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
FQ_CLIP = 1e-30  # forget quality values below this are drawn at this value on the log-scale plot
_REFERENCE_ROWS = ("target", "oracle")


# --------------------------------------------------------------------------------------------------
# Numbers and tables
# --------------------------------------------------------------------------------------------------


def _as_float(value: Any) -> float | None:
    """The value as a float, or None when it is missing / not a number (bools are not numbers here)."""
    if value is None or isinstance(value, bool):
        return None
    if hasattr(value, "item") and not isinstance(value, int | float):
        with contextlib.suppress(Exception):
            value = value.item()
    if isinstance(value, int | float):
        return float(value)
    return None


def _finite(value: Any) -> float | None:
    v = _as_float(value)
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
    v = _as_float(value)
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
        table.add_row(*(row[i] for i in kept), style="dim" if row[0] in _REFERENCE_ROWS else None)
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


def best_rows(results: Results, column: str, reference_rows: Sequence[str] = _REFERENCE_ROWS) -> set[str]:
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
        if name not in reference_rows and (v := _finite(row.get(column))) is not None
    }
    if not values:
        return set()
    if direction == "higher":
        scores = values
    elif direction == "lower":
        scores = {k: -v for k, v in values.items()}
    else:
        ref = _finite(results.get(_DIRECTION_REFERENCE[direction], {}).get(column))
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
# Plot
# --------------------------------------------------------------------------------------------------


#: A box in pixels of the saved PNG, origin at the bottom left: ``(x0, y0, x1, y1)``.
Box = tuple[float, float, float, float]


@dataclass(frozen=True)
class TradeoffLayout:
    """Where :func:`plot_tradeoff` drew things, in pixels of the saved PNG (origin at the bottom left).

    ``points`` holds each plotted row's marker centre and ``radii`` its marker radius; ``labels`` each
    row's label box as drawn; ``arrow`` the drawn "better" arrow as (lower-left, upper-right) corners of
    its shaft and ``arrow_text`` the box of its word (both None when there was no free place for it);
    ``coinciding`` the groups of rows whose markers lie on top of each other; ``axes`` the plot area.
    """

    points: dict[str, tuple[float, float]]
    radii: dict[str, float]
    labels: dict[str, Box]
    arrow: tuple[tuple[float, float], tuple[float, float]] | None
    arrow_text: Box | None
    coinciding: list[list[str]]
    axes: Box


def _box(bbox: Any) -> Box:
    return (float(bbox.x0), float(bbox.y0), float(bbox.x1), float(bbox.y1))


def boxes_overlap(a: Box, b: Box, pad: float = 0.0) -> float:
    """Area (px^2) that boxes ``a`` and ``b`` share once each is grown by ``pad`` (0 when disjoint)."""
    w = min(a[2], b[2]) - max(a[0], b[0]) + 2 * pad
    h = min(a[3], b[3]) - max(a[1], b[1]) + 2 * pad
    return w * h if w > 0 and h > 0 else 0.0


def segment_distance(p: tuple[float, float], q: tuple[float, float], c: tuple[float, float]) -> float:
    """Distance from point ``c`` to the segment ``p``-``q``."""
    dx, dy = q[0] - p[0], q[1] - p[1]
    length2 = dx * dx + dy * dy
    t = 0.0 if length2 == 0 else max(0.0, min(1.0, ((c[0] - p[0]) * dx + (c[1] - p[1]) * dy) / length2))
    return math.hypot(p[0] + t * dx - c[0], p[1] + t * dy - c[1])


def _inside(a: Box, frame: Box, inset: float = 2.0) -> bool:
    return (
        a[0] >= frame[0] + inset
        and a[1] >= frame[1] + inset
        and a[2] <= frame[2] - inset
        and a[3] <= frame[3] - inset
    )


# Label directions around a point, most natural first (upper right, as matplotlib users expect).
_LABEL_DIRECTIONS = ((1, 1), (1, -1), (-1, 1), (-1, -1), (1, 0), (-1, 0), (0, 1), (0, -1))
_LABEL_RINGS = (0.0, 10.0, 22.0, 36.0, 54.0, 76.0, 100.0)  # extra distance (px) beyond the marker


def _label_candidates(
    centre: tuple[float, float], radius: float, w: float, h: float
) -> list[tuple[Box, bool]]:
    """Candidate boxes for a ``w`` x ``h`` label around a marker, nearest first; flag: needs a leader line."""
    px, py = centre
    out = []
    for ring in _LABEL_RINGS:
        gap = radius + 2.0 + ring
        for cx, cy in _LABEL_DIRECTIONS:
            k = 0.75 if cx and cy else 1.0  # diagonal: the box corner, not its side, faces the point
            dx, dy = cx * gap * k, cy * gap * k
            x0 = px + dx if cx > 0 else px + dx - w if cx < 0 else px - w / 2
            y0 = py + dy if cy > 0 else py + dy - h if cy < 0 else py - h / 2
            out.append(((x0, y0, x0 + w, y0 + h), ring > 0.0))
    return out


def box_circle_gap(box: Box, centre: tuple[float, float], radius: float) -> float:
    """Distance between ``box`` and a circle (negative when they overlap)."""
    dx = max(box[0] - centre[0], 0.0, centre[0] - box[2])
    dy = max(box[1] - centre[1], 0.0, centre[1] - box[3])
    return math.hypot(dx, dy) - radius


def _place_label(
    candidates: Sequence[tuple[Box, bool]],
    obstacles: Sequence[Box],
    markers: Sequence[tuple[tuple[float, float], float]],
    frame: Box,
) -> tuple[Box, bool]:
    """The first candidate inside ``frame`` that touches no obstacle box or marker circle, else the
    least overlapping one."""
    best: tuple[float, Box, bool] | None = None
    for box, leader in candidates:
        if not _inside(box, frame):
            continue
        clash = sum(boxes_overlap(box, o, pad=2.0) for o in obstacles) + sum(
            100.0 for c, r in markers if box_circle_gap(box, c, r) < 1.0
        )
        if clash == 0:
            return box, leader
        if best is None or clash < best[0]:
            best = (clash, box, leader)
    return (best[1], best[2]) if best else candidates[0]


def _coinciding(points: Mapping[str, tuple[float, float]], tol: float = 4.0) -> list[list[str]]:
    names = list(points)
    groups: list[list[str]] = []
    seen: set[str] = set()
    for i, a in enumerate(names):
        if a in seen:
            continue
        group = [a] + [b for b in names[i + 1 :] if b not in seen and math.dist(points[a], points[b]) <= tol]
        if len(group) > 1:
            groups.append(group)
            seen.update(group)
    return groups


def plot_tradeoff(
    results: Results,
    path: Path,
    reference_rows: Sequence[str] = _REFERENCE_ROWS,
    axes: PlotAxes | None = None,
) -> TradeoffLayout:
    """Write a PNG scatter of forget quality (log y) against model utility (x), one labelled point per row.

    Forget quality is a KS p-value and may be anything from ~1e-20 to 1.0 (or exactly 0): values below
    :data:`FQ_CLIP` are drawn at it and a note says so. Rows without a finite forget quality and model
    utility are left out (also noted). Reference rows get distinct markers. Written atomically.

    Labels are placed one by one at the nearest free spot around their point (never over another
    label, marker or note; a thin line joins a label moved away), so coinciding or crowded points stay
    readable; coinciding points are also named in a note. The "better" arrow goes where it passes no
    point (the oracle usually sits in the top-right corner it points to). Returns the positions drawn.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure  # no pyplot: no global state, Agg canvas, no display needed
    from matplotlib.text import Text

    path = Path(path)
    dpi = 120
    fig = Figure(figsize=(8.5, 5.0), dpi=dpi, layout="constrained")
    canvas = FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ref_style = {
        "target": {"marker": "s", "color": "#c0392b", "s": 80},
        "oracle": {"marker": "*", "color": "#1e8449", "s": 220},
    }
    palette = ["#1f77b4", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f"]
    clipped: list[str] = []
    skipped: list[str] = []
    plotted: list[tuple[str, float, float, float]] = []  # name, x, y, marker area (pt^2)
    method_i = 0
    axes = axes or PlotAxes()
    for name, row in results.items():
        x = _finite(row.get(axes.x))
        y = _as_float(row.get(axes.y))
        if x is None or y is None or math.isnan(y):
            skipped.append(str(name))
            continue
        if axes.y_log:
            if y < FQ_CLIP:
                clipped.append(str(name))
                y = FQ_CLIP
            y = min(y, 1.0)
        if name in reference_rows or name == "base":  # the pretrained base: a reference, not a method
            style = ref_style.get(name, {"marker": "D", "color": "#555555", "s": 70})
        else:
            # After the palette runs out the marker shape changes, so no two methods look alike.
            shape = ("o", "^", "v", "P", "X")[(method_i // len(palette)) % 5]
            style = {"marker": shape, "color": palette[method_i % len(palette)], "s": 60}
            method_i += 1
        ax.scatter([x], [y], label=str(name), zorder=3, edgecolors="black", linewidths=0.6, **style)
        plotted.append((str(name), x, y, float(style["s"])))

    line = axes.y_line
    if line == "oracle":
        line = _finite(results.get("oracle", {}).get(axes.y))
    if axes.y_log:
        ax.set_yscale("log")
    if isinstance(line, int | float):
        ax.axhline(float(line), color="#888888", linestyle="--", linewidth=0.8, zorder=1)
    p_text = ax.text(
        0.01,
        float(line) if isinstance(line, int | float) else 0.0,
        axes.y_line_text if isinstance(line, int | float) else "",
        transform=ax.get_yaxis_transform(),
        fontsize=8,
        color="#666666",
        va="bottom",
    )
    if plotted:
        ys = [p[2] for p in plotted]
        xs = [p[1] for p in plotted]
        if axes.y_log:
            ax.set_ylim(min(ys) / 20.0, 3.0)
        else:
            span = max(ys + [line] if isinstance(line, int | float) else ys) - min(
                ys + [line] if isinstance(line, int | float) else ys
            )
            ypad = max(0.05, 0.15 * span)
            low = min(ys + ([line] if isinstance(line, int | float) else []))
            high = max(ys + ([line] if isinstance(line, int | float) else []))
            ax.set_ylim(low - ypad, high + ypad)
        lo, hi = min(xs), max(xs)
        pad = max(0.05, 0.15 * (hi - lo))
        ax.set_xlim(lo - pad, hi + pad)
    else:
        ax.set_ylim(1e-6, 3.0) if axes.y_log else ax.set_ylim(0.0, 1.0)
        ax.text(0.5, 0.5, "no rows with both metrics", transform=ax.transAxes, ha="center", color="#666666")
    if axes.y_lower_is_better:
        ax.invert_yaxis()  # up is better on every page
    ax.set_xlabel(axes.x_label)
    ax.set_ylabel(axes.y_label)
    ax.set_title(axes.title)
    ax.grid(True, which="major", alpha=0.3)
    legend = None
    # Beside the plot, never over a point. Past _MAX_LEGEND rows it would be taller than the figure and
    # squash the axes; every point carries its own label anyway.
    if plotted and len(plotted) <= _MAX_LEGEND:
        legend = ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=8, framealpha=0.8)

    # Fix the layout once, then place labels in pixels: anything added later must not move the axes.
    canvas.draw()
    fig.set_layout_engine("none")
    renderer = canvas.get_renderer()
    frame = _box(ax.get_window_extent(renderer))
    to_px = ax.transData.transform
    points = {name: tuple(float(v) for v in to_px((x, y))) for name, x, y, _ in plotted}
    radii = {name: math.sqrt(area) / 2 * dpi / 72 + 1.0 for name, _, _, area in plotted}
    coinciding = _coinciding(points)

    notes = []
    if clipped:
        notes.append(f"{axes.y} < {FQ_CLIP:.0e} drawn at {FQ_CLIP:.0e}: {', '.join(clipped)}")
    if skipped:
        notes.append(f"not plotted (missing metric): {', '.join(skipped)}")
    if coinciding:
        notes.append("same position: " + "; ".join(" = ".join(g) for g in coinciding))
    obstacles: list[Box] = [_box(p_text.get_window_extent(renderer))]
    if notes:
        note = ax.text(
            0.01, 0.01, "\n".join(notes), transform=ax.transAxes, fontsize=7, color="#666666", va="bottom"
        )
        obstacles.append(_box(note.get_window_extent(renderer)))
    markers = [(c, radii[n]) for n, c in points.items()]

    labels: dict[str, Box] = {}
    for name, _, _, _ in plotted:
        probe = ax.text(0, 0, name, fontsize=9)
        size = probe.get_window_extent(renderer)
        probe.remove()
        box, leader = _place_label(
            _label_candidates(points[name], radii[name], size.width, size.height), obstacles, markers, frame
        )
        px, py = points[name]
        ann = ax.annotate(
            name,
            xy=(px, py),
            xycoords="figure pixels",
            xytext=(box[0], box[1]),
            textcoords="figure pixels",
            ha="left",
            va="bottom",
            fontsize=9,
            zorder=4,
            arrowprops={
                "arrowstyle": "-",
                "color": "#666666",
                "lw": 0.7,
                "shrinkA": 1,
                "shrinkB": radii[name] * 72 / dpi,  # points, not pixels: the line stops at the marker
            }
            if leader
            else None,
        )
        labels[name] = _box(Text.get_window_extent(ann, renderer))  # the text alone, not its leader line
        obstacles.append(labels[name])

    arrow, arrow_text = _draw_better_arrow(fig, ax, renderer, frame, points, radii, obstacles, legend)

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".png", dir=path.parent)
    os.close(fd)
    try:
        fig.savefig(tmp, format="png", dpi=dpi)
        publish_mode(Path(tmp), is_dir=False)  # mkstemp's 0600: readable like every other output
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    return TradeoffLayout(points, radii, labels, arrow, arrow_text, coinciding, frame)


_MAX_LEGEND = 24
_ARROW_LEN = 42.0  # px along each axis: a 45-degree arrow towards the top right


def _draw_better_arrow(
    fig: Any,
    ax: Any,
    renderer: Any,
    frame: Box,
    points: Mapping[str, tuple[float, float]],
    radii: Mapping[str, float],
    obstacles: Sequence[Box],
    legend: Any,
) -> tuple[tuple[tuple[float, float], tuple[float, float]] | None, Box | None]:
    """Draw the "better" arrow where it crosses no point, label or note; return its shaft and word boxes.

    Tries a grid of spots inside the plot, top left first (usually empty: high forget quality with low
    utility is rare), then the margin under the legend; draws nothing when no spot is free.
    """
    from matplotlib.text import Text

    probe = ax.text(0, 0, "better", fontsize=9)
    size = probe.get_window_extent(renderer)
    probe.remove()
    w, h = size.width, size.height
    fx0, fy0, fx1, fy1 = frame

    def free(tail: tuple[float, float], inside: bool) -> bool:
        head = (tail[0] + _ARROW_LEN, tail[1] + _ARROW_LEN)
        text = (tail[0] - w / 2, tail[1] - h - 2, tail[0] + w / 2, tail[1] - 2)
        shaft = (tail[0], tail[1], head[0], head[1])
        if inside and not (_inside(text, frame) and _inside(shaft, frame)):
            return False
        if any(
            segment_distance(tail, head, c) <= radii[n] + 10.0 or box_circle_gap(text, c, radii[n]) < 3.0
            for n, c in points.items()
        ):
            return False
        return not any(boxes_overlap(b, o, pad=3.0) for b in (text, shaft) for o in obstacles)

    spots = [
        (fx0 + fx * (fx1 - fx0), fy0 + fy * (fy1 - fy0))
        for fy in (0.80, 0.68, 0.56, 0.44, 0.32, 0.20)
        for fx in (0.08, 0.20, 0.32, 0.44, 0.56, 0.68, 0.80)
    ]
    tail = next((t for t in spots if free(t, True)), None)
    if tail is None and legend is not None:
        leg = legend.get_window_extent(renderer)
        outside = (leg.x0 + w / 2 + 4, leg.y0 - 12 - _ARROW_LEN)
        if outside[1] - h > 4 and free(outside, False):
            tail = outside
    if tail is None:
        return None, None
    head = (tail[0] + _ARROW_LEN, tail[1] + _ARROW_LEN)
    ann = ax.annotate(
        "better",
        xy=head,
        xycoords="figure pixels",
        xytext=(tail[0], tail[1] - 2),
        textcoords="figure pixels",
        ha="center",
        va="top",
        fontsize=9,
        color="#444444",
        annotation_clip=False,
        arrowprops={"arrowstyle": "->", "color": "#444444", "shrinkA": 2, "shrinkB": 0},
    )
    fig.canvas.draw()  # the arrow patch gets its geometry at draw time
    shaft = ann.arrow_patch.get_window_extent(renderer)
    return ((float(shaft.x0), float(shaft.y0)), (float(shaft.x1), float(shaft.y1))), _box(
        Text.get_window_extent(ann, renderer)
    )


# --------------------------------------------------------------------------------------------------
# Generation cues (cheap, approximate: for colouring, not for scoring)
# --------------------------------------------------------------------------------------------------

_WORD = re.compile(r"[a-z0-9]+")
_PUNCT = string.punctuation + "\u201c\u201d\u2018\u2019"
_LCS_MAX_TOKENS = 400


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


# "s" is the possessive split off by _WORD ("Vosswick's" -> "vosswick", "s").
_STOPWORDS = frozenset(
    "a an the of in on at to for from with by as and or but is was were are be been his her their its "
    "he she they it this that which who s".split()
)


def fact_words(
    answer: str,
    question: str | None = None,
    fact: str | None = None,
    perturbed: Sequence[str] = (),
) -> list[str]:
    """The words of ``answer`` that show the model knows the fact, lower-cased, in order.

    Start from ``fact`` (the benchmark's fact span, e.g. the embedded world's ``fact_value``) minus
    stopwords when it has words, else from the answer's words; with ``question``, minus its words (restating "X was
    born" is not knowing where) and stopwords. Then drop the words that also occur in a ``perturbed`` (wrong)
    answer: the sentence frame, and value parts a wrong value shares ("Thia" in "Sudumir, Thia" vs
    "Soreholm, Thia"), since stating them does not tell the right value from a wrong one. If that
    leaves nothing, the words before this last step are kept; if those are empty too, all answer
    words. Without a fact span or perturbed answers, frame words absent from the question still count
    ("birthplace" in "X's birthplace is Y").
    """
    if fact is not None and (words := _words(fact)):
        base = [w for w in words if w not in _STOPWORDS] or words
    elif question is not None:
        drop = _STOPWORDS | set(_words(question))
        base = [w for w in _words(answer) if w not in drop] or _words(answer)
    else:
        base = _words(answer)
    if perturbed:
        wrong = {w for p in perturbed for w in _words(p)}
        return [w for w in base if w not in wrong] or base
    return base


def _lcs_recall(ref: Sequence[str], pred: Sequence[str]) -> float:
    if not ref or not pred:
        return 0.0
    prev = [0] * (len(pred) + 1)
    for r in ref:
        cur = [0] * (len(pred) + 1)
        for j, p in enumerate(pred, start=1):
            cur[j] = prev[j - 1] + 1 if r == p else max(prev[j], cur[j - 1])
        prev = cur
    return prev[-1] / len(ref)


def answer_overlap(
    generation: str,
    answer: str,
    question: str | None = None,
    *,
    fact: str | None = None,
    perturbed: Sequence[str] = (),
) -> float:
    """How much of the fact ``generation`` still states: LCS recall of :func:`fact_words` in it.

    A cheap, stemmer-free cousin of :func:`unlearnkit.metrics.scores.rouge_l_recall` (kept here so the
    report needs neither torch nor rouge_score), used only to colour generations. With only ``answer``
    every answer word counts; ``question``, ``fact`` and ``perturbed`` narrow the reference to the fact
    (see :func:`fact_words`), so a fluent sentence with the *wrong* value scores ~0. Inputs are cut
    to 400 tokens. Returns 0.0 for an empty answer or generation.
    """
    ref = fact_words(answer, question, fact, perturbed)[:_LCS_MAX_TOKENS]
    return _lcs_recall(ref, _words(generation)[:_LCS_MAX_TOKENS])


def _token_entropy(tokens: Sequence[Hashable]) -> float:
    """Same definition as :func:`unlearnkit.metrics.scores.token_entropy` (normalised unigram entropy)."""
    n = len(tokens)
    if n <= 1:
        return 0.0
    ent = -sum((c / n) * math.log2(c / n) for c in Counter(tokens).values())
    return max(0.0, ent / math.log2(n))


def _loop_cover(tokens: Sequence[str]) -> tuple[int, str, int]:
    """Tokens covered by back-to-back repeats of an n-gram of any length, and the longest such loop.

    A stretch where ``tokens[i] == tokens[i - k]`` for ``r`` positions in a row is a unit of ``k``
    tokens repeated ``(r + k) / k`` times. It counts as a loop with at least 3 copies, or 2 copies of a
    unit of 3+ tokens ("The main genre of The main genre of"); two copies of a 1-2 token unit are
    ordinary language ("New York, New York", "very very"). Returns ``(covered, unit, copies)`` with
    the unit of the loop covering most tokens ("" and 0 when there is none). O(n^2) in the tokens.
    """
    n = len(tokens)
    covered = [False] * n
    best = (0, "", 0)
    for k in range(1, n // 2 + 1):
        run = 0
        for i in range(k, n + 1):
            if i < n and tokens[i] == tokens[i - k]:
                run += 1
                continue
            copies = (run + k) // k
            if run >= k and (copies >= 3 or k >= 3):
                start = i - run - k
                for j in range(start, i):
                    covered[j] = True
                if run + k > best[0]:
                    best = (run + k, " ".join(tokens[start : start + k]), copies)
            run = 0
    return sum(covered), best[1], best[2]


def degeneration(text: str, entropy_threshold: float = 0.6, min_tokens: int = 4) -> str | None:
    """Why ``text`` looks degenerate ("gibberish"), or None when it reads as language.

    Whitespace tokens, compared lower-cased without surrounding punctuation. Flagged, with at least
    ``min_tokens`` tokens: a loop of an n-gram of *any* length (see :func:`_loop_cover`) covering half
    the text; with at least 8 tokens, half of the 4-grams repeating an earlier one (a loop with small
    variations; the "seq-rep-4" of Welleck et al. 2019, arXiv 1908.04319) or a normalised token
    entropy below ``entropy_threshold`` (the measure of the closer-look protocol; on fewer tokens it
    says little); or most tokens without a letter. A short answer ("Paris", "X was born in Y.") and
    a fluent wrong one are never flagged: only the shape of the text is judged, not its truth.
    """
    raw = text.split()
    n = len(raw)
    if n < min_tokens:
        return None
    if sum(1 for t in raw if not any(ch.isalpha() for ch in t)) > 0.6 * n:
        return "mostly tokens without letters"
    tokens = [t.strip(_PUNCT).lower() or t for t in raw[:_LCS_MAX_TOKENS]]
    n = len(tokens)
    covered, unit, copies = _loop_cover(tokens)
    if covered * 2 >= n:
        return f'loops: "{unit}" \u00d7{copies}'
    if n >= 8:
        grams = [tuple(tokens[i : i + 4]) for i in range(n - 3)]
        rep = 1.0 - len(set(grams)) / len(grams)
        if rep >= 0.5:
            return f"repetitive: {rep:.0%} of its 4-grams repeat earlier ones"
        ent = _token_entropy(tokens)
        if ent < entropy_threshold:
            return f"low token entropy ({ent:.2f} < {entropy_threshold:g})"
    return None


def is_gibberish(text: str, entropy_threshold: float = 0.6, min_tokens: int = 4) -> bool:
    """True when :func:`degeneration` finds a reason to call ``text`` degenerate."""
    return degeneration(text, entropy_threshold, min_tokens) is not None


# --------------------------------------------------------------------------------------------------
# HTML
# --------------------------------------------------------------------------------------------------

_CSS = """
:root { --fg:#1f2328; --muted:#59636e; --line:#d1d9e0; --bg-soft:#f6f8fa; --best:#fff3b0;
        --high:#cf222e; --mid:#d4a72c; --low:#1a7f37; }
* { box-sizing: border-box; }
body { font-family: -apple-system, BlinkMacSystemFont, "Segoe UI", Roboto, "Helvetica Neue", Arial,
       "Noto Sans", sans-serif; color: var(--fg); margin: 0; background: #fff; line-height: 1.5; }
main { max-width: 1100px; margin: 0 auto; padding: 24px 20px 48px; }
h1 { font-size: 1.7em; margin: 0.2em 0 0.4em; }
h2 { font-size: 1.25em; margin-top: 2em; border-bottom: 1px solid var(--line); padding-bottom: 0.2em; }
h3 { font-size: 1.0em; margin: 1.4em 0 0.4em; }
p, li { color: var(--fg); }
.muted { color: var(--muted); font-size: 0.9em; }
.explain { background: var(--bg-soft); border: 1px solid var(--line); border-radius: 6px; padding: 10px 16px; }
.explain dt { font-weight: 600; } .explain dd { margin: 0 0 8px 0; }
table { border-collapse: collapse; width: 100%; font-size: 0.92em; }
th, td { border-bottom: 1px solid var(--line); padding: 5px 8px; vertical-align: top; }
th { background: var(--bg-soft); text-align: left; font-weight: 600; }
.table-wrap { max-width: 100%; overflow-x: auto; }
details.all-metrics { margin-top: 10px; } details.all-metrics summary { cursor: pointer; color: var(--muted); }
th.num, td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.num { white-space: nowrap; }  /* headers wrap at <wbr> (after "_"), numbers never */
tr.ref td { color: var(--muted); font-style: italic; }
td.best { background: var(--best); font-weight: 700; }
.legend { display: flex; flex-wrap: wrap; gap: 14px; margin: 8px 0 4px; font-size: 0.88em; color: var(--muted); }
.swatch { display: inline-block; width: 14px; height: 14px; vertical-align: -2px; margin-right: 5px;
          border: 1px solid var(--line); }
.plot img { max-width: 100%; height: auto; border: 1px solid var(--line); border-radius: 6px; }
table.gen td.model { width: 130px; font-weight: 600; white-space: nowrap; }
table.gen td.score { width: 70px; }
.text { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace;
        font-size: 0.88em; white-space: pre-wrap; word-break: break-word; padding-left: 8px;
        border-left: 5px solid var(--line); }
.ov-high { border-left-color: var(--high); } .ov-mid { border-left-color: var(--mid); }
.ov-low { border-left-color: var(--low); }
tr.truth td { background: var(--bg-soft); }
.badge { display: inline-block; font-family: inherit; font-size: 0.75em; font-weight: 600; padding: 0 6px;
         border-radius: 10px; background: #6e40c9; color: #fff; margin-left: 6px; vertical-align: 1px; }
.q { font-weight: 600; }
.fact { text-decoration: underline 2px; text-underline-offset: 3px; }
ul.warnings li { border-left: 4px solid var(--high); padding-left: 8px; margin-bottom: 6px; }
p.choice { border-left: 4px solid var(--low); padding-left: 8px; }
"""

# Overlap thresholds for the coloured border: >= HIGH "fact still there", >= MID "partly", else "gone".
OVERLAP_HIGH = 0.5
OVERLAP_MID = 0.2


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _header_html(column: str) -> str:
    """Header cell text that may wrap after each underscore (``forget_<wbr>rougeL_<wbr>recall``)."""
    mark = _DIRECTION_MARK.get(DIRECTIONS.get(column, ""), "")
    name = "_<wbr>".join(_e(part) for part in column.split("_"))
    return name + (f"&nbsp;{mark}" if mark else "")


def _metrics_table_html(results: Results, cols: Sequence[str], reference_rows: Sequence[str]) -> str:
    best = {c: best_rows(results, c, reference_rows) for c in cols}
    head = ['<th scope="col">method</th>']
    for c in cols:
        tip = _DESCRIPTIONS.get(c, "")
        title = f' title="{_e(tip)}"' if tip else ""
        head.append(f'<th scope="col" class="num"{title}>{_header_html(c)}</th>')
    body = []
    for name, row in results.items():
        cells = [f'<th scope="row">{_e(name)}</th>']
        for c in cols:
            cls = "num best" if name in best[c] else "num"
            cells.append(f'<td class="{cls}">{_e(format_value(c, row.get(c)))}</td>')
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


def _item_fact(item: Mapping[str, Any]) -> str | None:
    """The fact span of a generation item: ``fact``, else ``answer[fact_span[0]:fact_span[1]]``."""
    fact = item.get("fact")
    if isinstance(fact, str) and fact.strip():
        return fact
    span, answer = item.get("fact_span"), str(item.get("answer", ""))
    if isinstance(span, Sequence) and len(span) == 2 and all(isinstance(x, int) for x in span):
        start, end = span
        if 0 <= start < end <= len(answer):
            return answer[start:end]
    return None


def _answer_html(answer: str, fact: str | None) -> str:
    if fact and fact in answer:
        i = answer.index(fact)
        return f'{_e(answer[:i])}<span class="fact">{_e(fact)}</span>{_e(answer[i + len(fact) :])}'
    return _e(answer)


def _generations_html(generations: Sequence[Mapping[str, Any]], order: Sequence[str]) -> str:
    parts = []
    for i, item in enumerate(generations, start=1):
        question = str(item.get("question", ""))
        answer = str(item.get("answer", ""))
        fact = _item_fact(item)
        perturbed = [str(p) for p in item.get("perturbed_answer") or ()]
        scored = " ".join(fact_words(answer, question, fact, perturbed))
        outputs = item.get("outputs") or {}
        names = [n for n in order if n in outputs] + [n for n in outputs if n not in order]
        rows = [
            '<tr class="truth"><td class="model">ground truth</td>'
            f'<td class="num score" title="fact words scored: {_e(scored)}"></td>'
            f'<td><div class="text">{_answer_html(answer, fact)}</div></td></tr>'
        ]
        for name in names:
            text = str(outputs[name] if outputs[name] is not None else "")
            ov = answer_overlap(text, answer, question, fact=fact, perturbed=perturbed)
            ov_cls = "ov-high" if ov >= OVERLAP_HIGH else "ov-mid" if ov >= OVERLAP_MID else "ov-low"
            badges = ""
            if not text.strip():
                badges = '<span class="badge">empty</span>'
            elif (why := degeneration(text)) is not None:
                badges = f'<span class="badge" title="{_e(why)}">gibberish</span>'
            rows.append(
                f'<tr><td class="model">{_e(name)}{badges}</td>'
                f'<td class="num score" title="share of the fact words ({_e(scored)}) still stated">'
                f"{ov:.2f}</td>"
                f'<td><div class="text {ov_cls}">{_e(text)}</div></td></tr>'
            )
        parts.append(
            f'<h3><span class="muted">Q{i}.</span> <span class="q">{_e(question)}</span></h3>\n'
            '<table class="gen"><tbody>\n' + "\n".join(rows) + "\n</tbody></table>"
        )
    return "\n".join(parts)


def _metrics_section(
    results: Results, columns: Sequence[str] | None, reference_rows: Sequence[str]
) -> list[str]:
    """Legend and table(s). With default columns, the headline metrics come first so the table fits
    the page; every metric follows in a collapsed table that scrolls sideways if it must."""
    every = _columns(results, columns)
    headline = [c for c in every if c in DEFAULT_COLUMNS] if columns is None else every
    shown = headline or every
    legend = "".join(f"<span>{_e(line)}</span>" for line in legend_lines(every))
    out = [
        '<div class="legend"><span><span class="swatch" style="background:var(--best)"></span>best among '
        f"unlearning methods</span>{legend}"
        f"<span><i>italic rows</i>: references ({_e(', '.join(reference_rows))})</span>"
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


def _warnings_section(results: Results) -> list[str]:
    """Degenerate numbers of the table (a zero harmonic-mean input, forget quality on few items or
    unable to separate the target from the oracle), each with its likely cause."""
    found = results_warnings(results)
    if not found:
        return []
    # The row a warning is about leads it, unless the message already says "every row".
    items = [
        f"<li><b>{_e(d.row)}</b>: {_e(d.message)}</li>"
        if d.row and d.row != "every row"
        else f"<li>{_e(d.message)}</li>"
        for d in found
    ]
    return ["<h2>Warnings</h2>", '<ul class="warnings">', *items, "</ul>"]


def _choice_section(results: Results, reference_rows: Sequence[str]) -> list[str]:
    """Which row is best, by the rule of :mod:`unlearnkit.report.choice`, stated with the choice; then
    each row's gain on the forget side and its utility cost, in the same words."""
    if "oracle" not in results:
        return []
    choice = choose_best(results, reference_rows=reference_rows)
    if not choice.standings:
        return []
    rows = gains_and_costs(choice, results)
    return [
        "<h2>Which row is best</h2>",
        f'<p class="choice">{_e(statement(choice))}</p>',
        "<h3>Gains and costs</h3>",
        '<ul class="costs">',
        *(f"<li>{_e(r)}</li>" for r in rows),
        "</ul>",
    ]


_TOFU_EXPLAIN = [
    "<dt>Forget quality \u2191</dt><dd>p-value of a two-sample Kolmogorov\u2013Smirnov test comparing the "
    "model's truth ratios on the forget set with those of the retain oracle (a model trained without "
    "the forget data). Higher = closer to a model that never saw the data; TOFU treats p &gt; 0.05 "
    "as forgotten. It can be astronomically small (e.g. 1e-20) for a model that still knows. With fewer "
    f"than {MIN_FQ_ITEMS} forget items a side it is too coarse to rank models (see the warnings).</dd>",
    "<dt>Model utility \u2191</dt><dd>harmonic mean of answer probability, ROUGE-L recall and "
    "truth-ratio score on the retain and general-knowledge questions. Higher = the model stays "
    "useful; any component near zero drags it to zero.</dd>",
]


def render_report(
    results: Results,
    generations: Sequence[Mapping[str, Any]],
    *,
    title: str,
    plot_png: Path | None = None,
    extra_sections: Sequence[tuple[str, str]] = (),
    notes: Sequence[str] = (),
    columns: Sequence[str] | None = None,
    reference_rows: Sequence[str] = _REFERENCE_ROWS,
    plot_layout: TradeoffLayout | None = None,
    view: ReportView | None = None,
) -> str:
    """A self-contained HTML page (inline CSS, embedded PNG, no scripts, no external resources).

    Sections: explanation of the headline metrics, the metrics table (best non-reference value per
    column highlighted where :data:`DIRECTIONS` defines "better"), the trade-off plot (if ``plot_png``),
    side-by-side generations, ``extra_sections`` (heading escaped, body inserted as raw HTML: the
    caller is responsible for it), and ``notes`` as a bullet list. All other text is HTML-escaped.
    ``plot_layout`` (what :func:`plot_tradeoff` returned) lets the caption name coinciding points.
    """
    out = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        '<head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(title)}</title>",
        f"<style>{_CSS}</style>",
        "</head>",
        "<body><main>",
        f"<h1>{_e(title)}</h1>",
        '<dl class="explain">',
        *(
            [f"<dt>{_e(term)}</dt><dd>{text}</dd>" for term, text in view.explain]
            if view is not None
            else _TOFU_EXPLAIN
        ),
        "</dl>",
        *_warnings_section(results),
        "<h2>Metrics</h2>",
        *_metrics_section(results, columns or (view.columns if view else None), reference_rows),
        *(_choice_section(results, reference_rows) if view is None or view.choose_best else []),
    ]
    if plot_png is not None:
        data = base64.b64encode(Path(plot_png).read_bytes()).decode("ascii")
        same = [" = ".join(g) for g in (plot_layout.coinciding if plot_layout else [])]
        out += [
            "<h2>Trade-off</h2>",
            f'<div class="plot"><img alt="{_e(view.axes.title if view else "Forget quality vs model utility")}" '
            f'src="data:image/png;base64,{data}"></div>',
            '<p class="muted">Top-right is better. '
            + (
                f"Forget quality below {FQ_CLIP:.0e} is drawn at {FQ_CLIP:.0e}. "
                if view is None or view.axes.y_log
                else "The forget-side axis is drawn upside down (lower = forgotten). "
            )
            + "A label moved away from its point is joined to it by a thin line."
            + (f" Drawn at the same position: {_e('; '.join(same))}." if same else "")
            + "</p>",
        ]
    if generations:
        out += [
            "<h2>Generations</h2>",
            '<p class="muted">Left border and score: how much of the <b>fact</b> the generation still '
            "states, as the in-order (LCS) recall of the fact's words. The fact is the benchmark's fact "
            'span where it has one (<span class="fact">underlined</span> in the ground truth), else the '
            "answer's words that are not in the question and not stop words; words that also occur in a "
            "wrong (perturbed) answer are not counted, as they do not tell the right value from a wrong "
            "one. Restating the question earns nothing: a fluent answer with a wrong value scores about "
            "0. Hover a score for the words scored.</p>",
            '<div class="legend">'
            f'<span><span class="swatch" style="background:var(--high)"></span>\u2265 {OVERLAP_HIGH:g} '
            "fact still there</span>"
            f'<span><span class="swatch" style="background:var(--mid)"></span>\u2265 {OVERLAP_MID:g} '
            "partly</span>"
            f'<span><span class="swatch" style="background:var(--low)"></span>&lt; {OVERLAP_MID:g} '
            "gone</span>"
            '<span><span class="badge">gibberish</span> degenerate text: an n-gram loop of any length, '
            "mostly repeated 4-grams, or low token entropy (hover the badge for which); judged on the "
            "shape of the text, never on whether it is true</span></div>",
            _generations_html(generations, list(results)),
        ]
    for heading, body in extra_sections:
        out += [f"<h2>{_e(heading)}</h2>", f'<div class="section">{body}</div>']
    if notes:
        out += ["<h2>Notes</h2>", "<ul>", *(f"<li>{_e(n)}</li>" for n in notes), "</ul>"]
    out += [
        '<p class="muted">Generated by unlearnkit.</p>',
        "</main></body></html>",
        "",
    ]
    return "\n".join(out)


def write_report(
    output_dir: Path,
    results: Results,
    generations: Sequence[Mapping[str, Any]],
    *,
    title: str = "unlearnkit report",
    extra_sections: Sequence[tuple[str, str]] = (),
    notes: Sequence[str] = (),
    view: ReportView | None = None,
) -> Path:
    """Write ``output_dir/tradeoff.png`` and ``output_dir/report.html`` (both atomically); return the html
    path. ``view``: the benchmark's columns, explanations and plot (default: TOFU's)."""
    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    png = output_dir / "tradeoff.png"
    layout = plot_tradeoff(results, png, axes=view.axes if view else None)
    page = render_report(
        results,
        generations,
        title=title,
        plot_png=png,
        extra_sections=extra_sections,
        notes=notes,
        plot_layout=layout,
        view=view,
    )
    html_path = output_dir / "report.html"
    write_text_atomic(html_path, page)
    return html_path

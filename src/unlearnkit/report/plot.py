"""The trade-off plot: forget side against utility, one labelled point per row, as a PNG and a section.

:func:`plot_tradeoff` draws it (matplotlib's Agg canvas, no pyplot, no display) and places each label
at the nearest free spot around its point; :func:`plot_section` embeds the PNG in the HTML page as a
base64 data URI with its caption. The axes come from the benchmark's :class:`PlotAxes` (TOFU: forget
quality on a log scale against model utility).
"""

from __future__ import annotations

import base64
import contextlib
import math
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from unlearnkit.io import publish_mode
from unlearnkit.report.markup import html_escape
from unlearnkit.report.table import REFERENCE_ROWS, Results, as_float, finite_or_none
from unlearnkit.report.views import PlotAxes, ReportView

FQ_CLIP = 1e-30  # forget quality values below this are drawn at this value on the log-scale plot

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
    reference_rows: Sequence[str] = REFERENCE_ROWS,
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
        x = finite_or_none(row.get(axes.x))
        y = as_float(row.get(axes.y))
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
        line = finite_or_none(results.get("oracle", {}).get(axes.y))
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


def plot_section(plot_png: Path, plot_layout: TradeoffLayout | None, view: ReportView | None) -> list[str]:
    """HTML lines of the page's trade-off section: the PNG as a data URI and its caption. ``plot_layout``
    (what :func:`plot_tradeoff` returned) lets the caption name coinciding points."""
    data = base64.b64encode(Path(plot_png).read_bytes()).decode("ascii")
    same = [" = ".join(g) for g in (plot_layout.coinciding if plot_layout else [])]
    return [
        "<h2>Trade-off</h2>",
        f'<div class="plot"><img alt="{html_escape(view.axes.title if view else "Forget quality vs model utility")}" '
        f'src="data:image/png;base64,{data}"></div>',
        '<p class="muted">Top-right is better. '
        + (
            f"Forget quality below {FQ_CLIP:.0e} is drawn at {FQ_CLIP:.0e}. "
            if view is None or view.axes.y_log
            else "The forget-side axis is drawn upside down (lower = forgotten). "
        )
        + "A label moved away from its point is joined to it by a thin line."
        + (f" Drawn at the same position: {html_escape('; '.join(same))}." if same else "")
        + "</p>",
    ]

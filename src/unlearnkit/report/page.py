"""The HTML report page, assembled from its sections, and :func:`write_report`, which writes it.

Pure presentation of numbers already computed elsewhere: no model, no torch. ``results`` is always an
ordered ``{row_name: {metric: value}}`` mapping (conventionally ``target``, ``oracle``, then one row per
unlearning method); ``generations`` is a list of ``{"question", "answer", "outputs": {row_name: text}}``,
optionally with ``fact`` (the fact's text) or ``fact_span`` (``[start, end]`` into the answer) and
``perturbed_answer`` (wrong answers): with them the "fact still there" cue scores the fact itself.

The sections live beside this module: the metrics table in :mod:`unlearnkit.report.table`, the
trade-off plot in :mod:`unlearnkit.report.plot`, the generations in
:mod:`unlearnkit.report.generations`; this module holds the page's frame (style, explanations,
warnings, which row is best) and re-exports the sections' public names, so
``from unlearnkit.report.page import markdown_table`` keeps working.

The HTML page is self-contained (inline CSS, the plot as a base64 data URI, no scripts, no external
resources) so it can be mailed, attached to a CI run or opened offline.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from unlearnkit.evaluation.diagnostics import MIN_FQ_ITEMS, results_warnings
from unlearnkit.io import write_text_atomic
from unlearnkit.report.choice import choose_best, gains_and_costs, statement
from unlearnkit.report.generations import (
    OVERLAP_HIGH,
    OVERLAP_MID,
    answer_overlap,
    degeneration,
    fact_words,
    generations_section,
    gibberish_shares,
    is_gibberish,
)
from unlearnkit.report.markup import html_escape
from unlearnkit.report.plot import (
    FQ_CLIP,
    TradeoffLayout,
    box_circle_gap,
    boxes_overlap,
    plot_section,
    plot_tradeoff,
    segment_distance,
)
from unlearnkit.report.table import (
    DEFAULT_COLUMNS,
    DIRECTION_LEGEND,
    DIRECTIONS,
    REFERENCE_ROWS,
    Results,
    best_rows,
    fit_columns,
    format_value,
    legend_lines,
    markdown_table,
    metrics_section,
    print_table,
    quality_table,
)
from unlearnkit.report.views import ReportView

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
    # re-exported from the section modules for callers of the one-module era
    "FQ_CLIP",
    "OVERLAP_HIGH",
    "OVERLAP_MID",
    "box_circle_gap",
    "boxes_overlap",
    "segment_distance",
]

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


def _warnings_section(results: Results) -> list[str]:
    """Degenerate numbers of the table (a zero harmonic-mean input, forget quality on few items or
    unable to separate the target from the oracle), each with its likely cause."""
    found = results_warnings(results)
    if not found:
        return []
    # The row a warning is about leads it, unless the message already says "every row".
    items = [
        f"<li><b>{html_escape(d.row)}</b>: {html_escape(d.message)}</li>"
        if d.row and d.row != "every row"
        else f"<li>{html_escape(d.message)}</li>"
        for d in found
    ]
    return ["<h2>Warnings</h2>", '<ul class="warnings">', *items, "</ul>"]


def _choice_section(
    results: Results, reference_rows: Sequence[str], generations: Sequence[Mapping[str, Any]] = ()
) -> list[str]:
    """Which row is best, by the rule of :mod:`unlearnkit.report.choice`, stated with the choice; then
    each row's gain on the forget side and its utility cost, in the same words. A row whose results do
    not hold ``forget_gibberish`` is judged on its answers shown in ``generations``."""
    if "oracle" not in results:
        return []
    choice = choose_best(results, reference_rows=reference_rows, gibberish=gibberish_shares(generations))
    if not choice.standings:
        return []
    rows = gains_and_costs(choice, results)
    return [
        "<h2>Which row is best</h2>",
        f'<p class="choice">{html_escape(statement(choice))}</p>',
        "<h3>Gains and costs</h3>",
        '<ul class="costs">',
        *(f"<li>{html_escape(r)}</li>" for r in rows),
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
    reference_rows: Sequence[str] = REFERENCE_ROWS,
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
        f"<title>{html_escape(title)}</title>",
        f"<style>{_CSS}</style>",
        "</head>",
        "<body><main>",
        f"<h1>{html_escape(title)}</h1>",
        '<dl class="explain">',
        *(
            [f"<dt>{html_escape(term)}</dt><dd>{text}</dd>" for term, text in view.explain]
            if view is not None
            else _TOFU_EXPLAIN
        ),
        "</dl>",
        *_warnings_section(results),
        "<h2>Metrics</h2>",
        *metrics_section(results, columns or (view.columns if view else None), reference_rows),
        *(_choice_section(results, reference_rows, generations) if view is None or view.choose_best else []),
    ]
    if plot_png is not None:
        out += plot_section(plot_png, plot_layout, view)
    if generations:
        out += generations_section(generations, list(results))
    for heading, body in extra_sections:
        out += [f"<h2>{html_escape(heading)}</h2>", f'<div class="section">{body}</div>']
    if notes:
        out += ["<h2>Notes</h2>", "<ul>", *(f"<li>{html_escape(n)}</li>" for n in notes), "</ul>"]
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

"""Human-facing reports: metric tables, the forget-quality / utility trade-off plot and an HTML page.

Pure presentation of numbers already computed elsewhere: no model, no torch. ``results`` is always an
ordered ``{row_name: {metric: value}}`` mapping (conventionally ``target``, ``oracle``, then one row per
unlearning method); ``generations`` is a list of ``{"question", "answer", "outputs": {row_name: text}}``.

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
import tempfile
from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from pathlib import Path
from typing import Any

from unlearnkit.io import write_text_atomic

__all__ = [
    "DEFAULT_COLUMNS",
    "DIRECTIONS",
    "answer_overlap",
    "best_rows",
    "format_value",
    "is_gibberish",
    "markdown_table",
    "plot_tradeoff",
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
    "forget_prob",
    "forget_truth_ratio",
    "forget_token_entropy",
    "retain_rougeL_recall",
)

#: Which way is "better" for the metrics where that is well defined: "higher", "lower", or "target"
#: (closest to the target model's value). Metrics not listed are shown but never highlighted.
DIRECTIONS: dict[str, str] = {
    "forget_quality": "higher",
    "model_utility": "higher",
    "forget_rougeL_recall": "lower",
    "forget_prob": "lower",
    "retain_rougeL_recall": "higher",
    "forget_token_entropy": "target",
}

_DIRECTION_MARK = {"higher": "\u2191", "lower": "\u2193", "target": "\u2248"}

#: Short descriptions used as column tooltips in the HTML table.
_DESCRIPTIONS: dict[str, str] = {
    "forget_quality": "KS-test p-value of forget-set truth ratios vs the retain oracle; higher = more forgotten",
    "model_utility": "harmonic mean of retain / general-knowledge probability, ROUGE-L and truth ratio",
    "forget_rougeL_recall": "ROUGE-L recall of greedy answers on the forget set; lower = more forgotten",
    "forget_prob": "length-normalised probability of forget answers; lower = more forgotten",
    "forget_truth_ratio": "truth-ratio score on the forget set",
    "forget_token_entropy": "token entropy of forget-set generations; near the target's = still fluent",
    "retain_rougeL_recall": "ROUGE-L recall on the retain set; higher = knowledge kept",
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


def print_table(
    results: Results,
    columns: Sequence[str] | None = None,
    title: str | None = None,
    *,
    console: Any = None,
) -> None:
    """Print :func:`quality_table` as a ``rich`` table (numbers right-aligned, reference rows dimmed)."""
    from rich.console import Console
    from rich.table import Table

    rows = quality_table(results, columns)
    table = Table(title=title, header_style="bold")
    for i, head in enumerate(rows[0]):
        mark = _DIRECTION_MARK.get(DIRECTIONS.get(head, ""), "")
        table.add_column(f"{head} {mark}".strip(), justify="left" if i == 0 else "right")
    for row in rows[1:]:
        table.add_row(*row, style="dim" if row[0] in _REFERENCE_ROWS else None)
    (console or Console()).print(table)


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
    (the target trivially "wins" utility, the oracle forget quality). "target" direction metrics need a
    finite value in the ``target`` row. Returns an empty set when the direction is unknown or no
    competing row has a finite value.
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
        ref = _finite(results.get("target", {}).get(column))
        if ref is None:
            return set()
        scores = {k: -abs(v - ref) for k, v in values.items()}
    best = max(scores.values())
    return {k for k, s in scores.items() if math.isclose(s, best, rel_tol=1e-12, abs_tol=1e-15)}


# --------------------------------------------------------------------------------------------------
# Plot
# --------------------------------------------------------------------------------------------------


def plot_tradeoff(results: Results, path: Path, reference_rows: Sequence[str] = _REFERENCE_ROWS) -> None:
    """Write a PNG scatter of forget quality (log y) against model utility (x), one labelled point per row.

    Forget quality is a KS p-value and may be anything from ~1e-20 to 1.0 (or exactly 0): values below
    :data:`FQ_CLIP` are drawn at it and a note says so. Rows without a finite forget quality and model
    utility are left out (also noted). Reference rows get distinct markers. Written atomically.
    """
    from matplotlib.figure import Figure  # no pyplot: no global state, Agg canvas, no display needed

    path = Path(path)
    fig = Figure(figsize=(8.5, 5.0), dpi=120, layout="constrained")
    ax = fig.add_subplot()
    ref_style = {
        "target": {"marker": "s", "color": "#c0392b", "s": 80},
        "oracle": {"marker": "*", "color": "#1e8449", "s": 220},
    }
    palette = ["#1f77b4", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f"]
    clipped: list[str] = []
    skipped: list[str] = []
    ys: list[float] = []
    xs: list[float] = []
    method_i = 0
    for name, row in results.items():
        x = _finite(row.get("model_utility"))
        y = _as_float(row.get("forget_quality"))
        if x is None or y is None or math.isnan(y):
            skipped.append(str(name))
            continue
        if y < FQ_CLIP:
            clipped.append(str(name))
            y = FQ_CLIP
        y = min(y, 1.0)
        if name in reference_rows:
            style = ref_style.get(name, {"marker": "D", "color": "#555555", "s": 70})
        else:
            style = {"marker": "o", "color": palette[method_i % len(palette)], "s": 60}
            method_i += 1
        ax.scatter([x], [y], label=str(name), zorder=3, edgecolors="black", linewidths=0.6, **style)
        ax.annotate(str(name), (x, y), xytext=(6, 5), textcoords="offset points", fontsize=9)
        xs.append(x)
        ys.append(y)

    ax.set_yscale("log")
    ax.axhline(0.05, color="#888888", linestyle="--", linewidth=0.8, zorder=1)
    ax.text(
        0.01, 0.05, " p = 0.05", transform=ax.get_yaxis_transform(), fontsize=8, color="#666666", va="bottom"
    )
    if ys:
        ax.set_ylim(min(ys) / 20.0, 3.0)
        lo, hi = min(xs), max(xs)
        pad = max(0.05, 0.15 * (hi - lo))
        ax.set_xlim(lo - pad, hi + pad)
    else:
        ax.set_ylim(1e-6, 3.0)
        ax.text(0.5, 0.5, "no rows with both metrics", transform=ax.transAxes, ha="center", color="#666666")
    ax.set_xlabel("model utility (higher = more useful)")
    ax.set_ylabel("forget quality, KS p-value (log scale)")
    ax.set_title("Forget quality vs model utility")
    ax.grid(True, which="major", alpha=0.3)
    ax.annotate(
        "better",
        xy=(0.98, 0.97),
        xytext=(0.80, 0.80),
        xycoords="axes fraction",
        textcoords="axes fraction",
        ha="right",
        va="top",
        fontsize=9,
        color="#444444",
        arrowprops={"arrowstyle": "->", "color": "#444444"},
    )
    notes = []
    if clipped:
        notes.append(f"forget quality < {FQ_CLIP:.0e} drawn at {FQ_CLIP:.0e}: {', '.join(clipped)}")
    if skipped:
        notes.append(f"not plotted (missing metric): {', '.join(skipped)}")
    if notes:
        ax.text(
            0.01, 0.01, "\n".join(notes), transform=ax.transAxes, fontsize=7, color="#666666", va="bottom"
        )
    if xs:
        ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=8, framealpha=0.8)  # never over a point

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".png", dir=path.parent)
    os.close(fd)
    try:
        fig.savefig(tmp, format="png", dpi=120)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


# --------------------------------------------------------------------------------------------------
# Generation cues (cheap, approximate: for colouring, not for scoring)
# --------------------------------------------------------------------------------------------------

_WORD = re.compile(r"[a-z0-9]+")
_LCS_MAX_TOKENS = 400


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


_STOPWORDS = frozenset(
    "a an the of in on at to for from with by as and or but is was were are be been his her their its "
    "he she they it this that which who".split()
)


def answer_overlap(generation: str, answer: str, question: str | None = None) -> float:
    """ROUGE-L-like recall of ``answer`` in ``generation``: LCS of lower-cased word tokens / answer length.

    A cheap, stemmer-free approximation of :func:`unlearnkit.metrics.scores.rouge_l_recall` (kept here
    so the report needs neither torch nor rouge_score); used only to colour generations. With
    ``question``, the answer's "fact" words are scored: words also in the question and common stopwords
    are dropped first (all kept if that leaves nothing), so "X was born in Y" does not earn credit for
    restating "X was born". Inputs are truncated to 400 tokens. Returns 0.0 for an empty answer.
    """
    ref = _words(answer)[:_LCS_MAX_TOKENS]
    if question is not None:
        drop = set(_words(question)) | _STOPWORDS
        ref = [w for w in ref if w not in drop] or ref
    pred = _words(generation)[:_LCS_MAX_TOKENS]
    if not ref or not pred:
        return 0.0
    prev = [0] * (len(pred) + 1)
    for r in ref:
        cur = [0] * (len(pred) + 1)
        for j, p in enumerate(pred, start=1):
            cur[j] = prev[j - 1] + 1 if r == p else max(prev[j], cur[j - 1])
        prev = cur
    return prev[-1] / len(ref)


def _token_entropy(tokens: Sequence[Hashable]) -> float:
    """Same definition as :func:`unlearnkit.metrics.scores.token_entropy` (normalised unigram entropy)."""
    n = len(tokens)
    if n <= 1:
        return 0.0
    ent = -sum((c / n) * math.log2(c / n) for c in Counter(tokens).values())
    return max(0.0, ent / math.log2(n))


def is_gibberish(text: str, entropy_threshold: float = 0.6, min_tokens: int = 6) -> bool:
    """Heuristic "degenerate output" flag for a generation (whitespace tokens).

    True when, with at least ``min_tokens`` tokens: the normalised token entropy is below
    ``entropy_threshold``; or one 1-3-gram repeated back-to-back covers half the text
    ("no no no no", "the cat the cat the cat"); or most tokens contain no letter at all.
    Short answers are never flagged (a one-word "Paris" is not gibberish).
    """
    tokens = text.split()
    n = len(tokens)
    if n < min_tokens:
        return False
    if _token_entropy(tokens) < entropy_threshold:
        return True
    if sum(1 for t in tokens if not any(ch.isalpha() for ch in t)) > 0.6 * n:
        return True
    for k in (1, 2, 3):
        run = best = 0
        for i in range(k, n):
            if tokens[i] == tokens[i - k]:
                run += 1
                best = max(best, run)
            else:
                run = 0
        if best + k >= n / 2:
            return True
    return False


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
th.num, td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
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
"""

# Overlap thresholds for the coloured border: >= HIGH "fact still there", >= MID "partly", else "gone".
OVERLAP_HIGH = 0.5
OVERLAP_MID = 0.2


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _metrics_table_html(
    results: Results, columns: Sequence[str] | None, reference_rows: Sequence[str]
) -> str:
    cols = _columns(results, columns)
    best = {c: best_rows(results, c, reference_rows) for c in cols}
    head = ['<th scope="col">method</th>']
    for c in cols:
        mark = _DIRECTION_MARK.get(DIRECTIONS.get(c, ""), "")
        tip = _DESCRIPTIONS.get(c, "")
        title = f' title="{_e(tip)}"' if tip else ""
        head.append(f'<th scope="col" class="num"{title}>{_e(c)}{" " + mark if mark else ""}</th>')
    body = []
    for name, row in results.items():
        cells = [f'<th scope="row">{_e(name)}</th>']
        for c in cols:
            cls = "num best" if name in best[c] else "num"
            cells.append(f'<td class="{cls}">{_e(format_value(c, row.get(c)))}</td>')
        tr_cls = ' class="ref"' if name in reference_rows else ""
        body.append(f"<tr{tr_cls}>{''.join(cells)}</tr>")
    return (
        '<div style="overflow-x:auto"><table class="metrics">\n<thead><tr>'
        + "".join(head)
        + "</tr></thead>\n<tbody>\n"
        + "\n".join(body)
        + "\n</tbody>\n</table></div>"
    )


def _generations_html(generations: Sequence[Mapping[str, Any]], order: Sequence[str]) -> str:
    parts = []
    for i, item in enumerate(generations, start=1):
        question = str(item.get("question", ""))
        answer = str(item.get("answer", ""))
        outputs = item.get("outputs") or {}
        names = [n for n in order if n in outputs] + [n for n in outputs if n not in order]
        rows = [
            '<tr class="truth"><td class="model">ground truth</td><td class="num score"></td>'
            f'<td><div class="text">{_e(answer)}</div></td></tr>'
        ]
        for name in names:
            text = str(outputs[name] if outputs[name] is not None else "")
            ov = answer_overlap(text, answer, question)
            ov_cls = "ov-high" if ov >= OVERLAP_HIGH else "ov-mid" if ov >= OVERLAP_MID else "ov-low"
            badges = ""
            if not text.strip():
                badges = '<span class="badge">empty</span>'
            elif is_gibberish(text):
                badges = '<span class="badge" title="low token entropy or repetitive">gibberish</span>'
            rows.append(
                f'<tr><td class="model">{_e(name)}{badges}</td>'
                f'<td class="num score" title="fact-word overlap (LCS recall)">{ov:.2f}</td>'
                f'<td><div class="text {ov_cls}">{_e(text)}</div></td></tr>'
            )
        parts.append(
            f'<h3><span class="muted">Q{i}.</span> <span class="q">{_e(question)}</span></h3>\n'
            '<table class="gen"><tbody>\n' + "\n".join(rows) + "\n</tbody></table>"
        )
    return "\n".join(parts)


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
) -> str:
    """A self-contained HTML page (inline CSS, embedded PNG, no scripts, no external resources).

    Sections: explanation of the headline metrics, the metrics table (best non-reference value per
    column highlighted where :data:`DIRECTIONS` defines "better"), the trade-off plot (if ``plot_png``),
    side-by-side generations, ``extra_sections`` (heading escaped, body inserted as raw HTML: the
    caller is responsible for it), and ``notes`` as a bullet list. All other text is HTML-escaped.
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
        "<dt>Forget quality \u2191</dt><dd>p-value of a two-sample Kolmogorov\u2013Smirnov test comparing the "
        "model's truth ratios on the forget set with those of the retain oracle (a model trained without "
        "the forget data). Higher = closer to a model that never saw the data; TOFU treats p &gt; 0.05 "
        "as forgotten. It can be astronomically small (e.g. 1e-20) for a model that still knows.</dd>",
        "<dt>Model utility \u2191</dt><dd>harmonic mean of answer probability, ROUGE-L recall and "
        "truth-ratio score on the retain and general-knowledge questions. Higher = the model stays "
        "useful; any component near zero drags it to zero.</dd>",
        "</dl>",
        "<h2>Metrics</h2>",
        '<div class="legend"><span><span class="swatch" style="background:var(--best)"></span>best among '
        "unlearning methods</span><span>\u2191 higher is better</span><span>\u2193 lower is better</span>"
        "<span>\u2248 closest to the target model is better</span>"
        f"<span><i>italic rows</i>: references ({_e(', '.join(reference_rows))})</span>"
        f"<span>{_DASH} not computed / NaN</span></div>",
        _metrics_table_html(results, columns, reference_rows),
    ]
    if plot_png is not None:
        data = base64.b64encode(Path(plot_png).read_bytes()).decode("ascii")
        out += [
            "<h2>Trade-off</h2>",
            '<div class="plot"><img alt="Forget quality vs model utility" '
            f'src="data:image/png;base64,{data}"></div>',
            f'<p class="muted">Top-right is better. Forget quality below {FQ_CLIP:.0e} is drawn at '
            f"{FQ_CLIP:.0e}.</p>",
        ]
    if generations:
        out += [
            "<h2>Generations</h2>",
            '<div class="legend">Left border = how much of the ground-truth answer the generation still '
            "contains (LCS recall of its words not already in the question):"
            f'<span><span class="swatch" style="background:var(--high)"></span>\u2265 {OVERLAP_HIGH:g} '
            "fact still there</span>"
            f'<span><span class="swatch" style="background:var(--mid)"></span>\u2265 {OVERLAP_MID:g} '
            "partly</span>"
            f'<span><span class="swatch" style="background:var(--low)"></span>&lt; {OVERLAP_MID:g} '
            "gone</span>"
            '<span><span class="badge">gibberish</span> low token entropy or repetitive</span></div>',
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
) -> Path:
    """Write ``output_dir/tradeoff.png`` and ``output_dir/report.html`` (both atomically); return the html path."""
    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    png = output_dir / "tradeoff.png"
    plot_tradeoff(results, png)
    page = render_report(
        results, generations, title=title, plot_png=png, extra_sections=extra_sections, notes=notes
    )
    html_path = output_dir / "report.html"
    write_text_atomic(html_path, page)
    return html_path

"""The evaluation curve of ``unlearn --eval-every`` as an HTML section for a report.

:func:`curve_section` reads a model folder's ``curve.json`` (or the dict it holds) and returns the
section's HTML lines in the report's style (``report/page.py``: ``<h2>``, a ``metrics`` table, the
plot as a base64 data URI, no scripts): the curve's steps, the objective's terms and the protocol's
headline metrics, the kept step marked, and what was evaluated (the selection half, the settings).
"""

from __future__ import annotations

import base64
import html
import json
from pathlib import Path
from typing import Any


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _cell(value: Any) -> str:
    return "n/a" if value is None else f"{value:.4g}" if isinstance(value, int | float) else _e(value)


def load_curve(source: str | Path | dict) -> dict[str, Any]:
    """A ``curve.json`` document: from a dict, a model folder or the file itself."""
    if isinstance(source, dict):
        return source
    path = Path(source)
    return json.loads((path / "curve.json" if path.is_dir() else path).read_text(encoding="utf-8"))


def curve_section(source: str | Path | dict, heading: str = "Evaluation during training") -> list[str]:
    """HTML lines of the section (empty when the curve is empty)."""
    doc = load_curve(source)
    curve = doc.get("curve") or []
    if not curve:
        return []
    evaluation, best = doc.get("evaluation", {}), doc.get("best") or {}
    kept = best.get("step") if best.get("chosen") else None
    terms = [t.strip().lstrip("+-") for t in _split_terms(evaluation.get("keep_best") or "")]
    names = terms + sorted({k for e in curve for k in e["metrics"]} - set(terms), key=_headline_order)
    names = names[: len(terms) + 4]  # the objective's terms and a few headline numbers
    has_objective = any("objective" in e for e in curve)
    head = ["step", "epoch", *names] + (["objective"] if has_objective else [])
    rows = []
    for e in curve:
        cls = ' class="best"' if e["step"] == kept else ""
        cells = [str(e["step"]) + (" (kept)" if e["step"] == kept else ""), f"{e['epoch']:.2f}"]
        cells += [_cell(e["metrics"].get(n)) for n in names]
        if has_objective:
            cells.append(_cell(e.get("objective")))
        rows.append(f"<tr{cls}>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    what = (
        f"{_e(evaluation.get('protocol', '?'))} protocol on the selection half (never the reported test "
        f"half), at most {_e(evaluation.get('max_items', '?'))} rows per split and "
        f"{_e(evaluation.get('max_new_tokens', '?'))} new tokens, every {_e(evaluation.get('every', '?'))}"
    )
    if evaluation.get("keep_best"):
        what += f"; the output is the state with the best {_e(evaluation['keep_best'])}"
        what += f" (step {_e(kept)})" if kept is not None else " (none had a finite value: the last step)"
    out = [
        f"<h2>{_e(heading)}</h2>",
        f'<p class="muted">{what}.</p>',
        '<div class="table-wrap"><table class="metrics">',
        "<thead><tr>" + "".join(f"<th>{_e(h)}</th>" for h in head) + "</tr></thead>",
        "<tbody>",
        *rows,
        "</tbody></table></div>",
    ]
    png = _png(source)
    if png is not None:
        data = base64.b64encode(png).decode("ascii")
        out.append(f'<div class="plot"><img alt="{_e(heading)}" src="data:image/png;base64,{data}"></div>')
    return out


HEADLINE_ORDER = ("forget_quality", "model_utility", "forget_rougeL_recall", "forget_truth_ratio")


def _headline_order(name: str) -> tuple[int, str]:
    return (HEADLINE_ORDER.index(name), name) if name in HEADLINE_ORDER else (len(HEADLINE_ORDER), name)


def _split_terms(text: str) -> list[str]:
    import re

    return [t for t in re.split(r"(?=[+-])", text.replace(" ", "")) if t.strip("+-")]


def _png(source) -> bytes | None:
    if isinstance(source, dict):
        return None
    path = Path(source)
    png = (path if path.is_dir() else path.parent) / "curve.png"
    return png.read_bytes() if png.is_file() else None


def training_files(log_history: list[dict] | None) -> dict[str, bytes]:
    """``log_history.json`` (every step the Trainer logged) and ``loss.png`` for a trained model's folder."""
    history = list(log_history or [])
    files = {"log_history.json": (json.dumps(history, indent=1, default=str) + "\n").encode("utf-8")}
    png = loss_plot_png(history)
    if png is not None:
        files["loss.png"] = png
    return files


def loss_plot_png(log_history: list[dict]) -> bytes | None:
    """The training loss (and every logged loss term) against the optimiser step, as PNG bytes: the
    ``loss.png`` beside ``log_history.json`` in every trained model's folder. None when nothing was logged.

    Matplotlib's Agg canvas directly (no pyplot state, no display needed).
    """
    import io

    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    series: dict[str, list[tuple[int, float]]] = {}
    for entry in log_history:
        step = entry.get("step")
        for key, value in entry.items():
            if step is None or not isinstance(value, int | float) or key == "step":
                continue
            if key == "loss" or (key.startswith("loss_") or key.endswith("_loss")) and key != "train_loss":
                series.setdefault(key, []).append((int(step), float(value)))
    if not series:
        return None
    fig = Figure(figsize=(6, 3.5))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(111)
    for key in sorted(series, key=lambda k: (k != "loss", k)):
        steps, values = zip(*series[key])
        ax.plot(steps, values, marker="." if len(steps) < 30 else None, label=key)
    ax.set_xlabel("optimiser step")
    ax.set_ylabel("loss")
    ax.legend(fontsize="small")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    return buf.getvalue()

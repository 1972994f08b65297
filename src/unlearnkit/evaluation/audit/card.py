"""The audit card: ``audit.json``, ``audit.md``, the relearning-curve plot, the HTML card for a report,
and the gap / warning lines the command prints.
"""

from __future__ import annotations

import html
from pathlib import Path

from unlearnkit.evaluation.audit.common import ROLES
from unlearnkit.evaluation.audit.relearning import TRAINED, relearn_gaps, relearn_reading
from unlearnkit.io import write_bytes_atomic

ROLE_TITLES = {"audited": "audited", "oracle": "retain oracle", "original": "target (original)"}
ROLE_ABOUT = {
    "audited": "the model under audit",
    "oracle": "trained without the forget set: what genuinely absent knowledge looks like",
    "original": "the model before unlearning: what present knowledge looks like",
}


def _roles_of(audit: dict) -> list[str]:
    return [r for r in ROLES if r in audit.get("models", {})]


def role_title(audit: dict, role: str) -> str:
    """Column heading of a role: the method's name for the audited model when known."""
    if role == "audited" and audit.get("method"):
        return f"{audit['method']} (audited)"
    return ROLE_TITLES[role]


def curve_series(audit: dict, compare: dict[str, dict] | None = None) -> list[tuple[str, str, dict]]:
    """``[(key, label, {k: {"rougeL_recall", "prob"}})]``: the audit's roles, then each compared audit's
    audited model (e.g. the plain method next to its robust version), for the curve's table and plot."""
    curve = audit.get("relearn_curve") or {}
    out = [(role, role_title(audit, role), curve[role]) for role in _roles_of(audit) if role in curve]
    for label, other in (compare or {}).items():
        points = (other.get("relearn_curve") or {}).get("audited")
        if points:
            out.insert(1, (f"compare:{label}", label, points))
    control = audit.get("relearn_control") or {}
    if control.get("curve"):  # the target fine-tuned the attack's way on rows it knows (relearn_control)
        out.append(("control", f"target, control fine-tune on {control.get('source')}", control["curve"]))
    return out


def _curve_steps(series: list[tuple[str, str, dict]]) -> list[str]:
    return sorted({k for _, _, points in series for k in points}, key=int)


def relearn_curve_png(audit: dict, path: str | Path | None = None, compare: dict[str, dict] | None = None):
    """Plot the held half's numbers (forget ROUGE-L, fact recall, probability; raw text: the plan's
    probes) and, in the last panel, the trained half's calibration score against relearning steps, one
    line per model; write it atomically to ``path`` (returns the path) or, without one, return the PNG
    bytes. None when the audit has no relearning curve."""
    import io as _io

    from matplotlib.figure import Figure  # no pyplot: no global state, Agg canvas, no display needed

    series = curve_series(audit, compare)
    if not series or not _curve_metrics(audit):
        return None
    styles = {
        "audited": dict(color="#1f77b4", marker="o", linewidth=2.2),
        "oracle": dict(color="#1e8449", marker="*", markersize=10, linestyle="--"),
        "original": dict(color="#c0392b", marker="s", linestyle=":"),
        "control": dict(color="#7f7f7f", marker="x", linestyle=":"),
    }
    extra = ["#ff7f0e", "#9467bd", "#8c564b", "#17becf"]
    metrics = _curve_metrics(audit)
    if _is_text_audit(audit):
        titles = [f"{p['label']} ({p.get('on', 'held-out half')})" for p in audit.get("relearn_probes") or []]
    else:
        titles = [f"forget {name} (held-out half)" for _, name in metrics]
    final = _final_step(audit)
    for i, (metric, _) in enumerate(metrics):
        gap_key = _gap_key(audit, metric)
        gap = audit.get(gap_key) if gap_key else None
        if gap is not None:
            titles[i] += f"\n{gap_key} = {gap:+.2f} (vs the oracle)"
    trained = _trained_metric(audit, series)
    if trained:
        metrics = [*metrics, (TRAINED + trained[0], trained[1])]
        titles.append(f"{trained[1]} on the {_trained_what(audit)}\n(the attack's control: it can teach)")
    fig = Figure(figsize=(4.5 * len(metrics), 3.6), dpi=110, layout="constrained")
    axes = fig.subplots(1, len(metrics), squeeze=False)[0]
    for i, (key, label, points) in enumerate(series):
        ks = sorted(points, key=int)
        style = styles.get(key) or dict(color=extra[i % len(extra)], marker="^", linewidth=1.6)
        for ax, (metric, _) in zip(axes, metrics):
            xy = [(int(k), points[k].get(metric)) for k in ks if points[k].get(metric) is not None]
            if xy:
                ax.plot([x for x, _ in xy], [y for _, y in xy], label=label, **style)
    for ax, title in zip(axes, titles):
        ax.set_xlabel("relearning steps")
        ax.set_title(title, fontsize=10)
        ax.set_ylim(-0.02, 1.02)
        ax.grid(True, alpha=0.3)
        if final is not None:
            ax.axvline(int(final), color="#999999", linewidth=0.8, linestyle="-.")
    if trained:
        cal = audit.get("relearn_calibration") or {}
        axes[-1].axhline(cal.get("teach_bar", 0.8), color="#1e8449", linewidth=0.8, linestyle=":")
    axes[-1].legend(loc="center left", bbox_to_anchor=(1.02, 0.5), fontsize=8)
    buf = _io.BytesIO()
    fig.savefig(buf, format="png")
    data = buf.getvalue()
    if path is None:
        return data
    write_bytes_atomic(Path(path), data)
    return Path(path)


def _final_step(audit: dict) -> str | None:
    """The step the headline gap and the calibration are read at: the curve's last (an audit written
    before ``relearn_final_step`` existed: 20, where it read them)."""
    if "relearn_final_step" in audit:
        step = audit.get("relearn_final_step")
        return None if step is None else str(step)
    return "20"


def _suffix(audit: dict) -> str:
    """``final`` for the gap keys of this audit, ``20`` for an audit written before they existed."""
    return "final" if "relearn_final_step" in audit else "20"


def _trained_metric(audit: dict, series: list[tuple[str, str, dict]]) -> tuple[str, str] | None:
    """``(key, name)`` of the calibration's score when the curve holds it on the trained half."""
    cal = audit.get("relearn_calibration") or {}
    key = cal.get("metric")
    if not key:
        return None
    if not any(p.get(TRAINED + key) is not None for _, _, points in series for p in points.values()):
        return None
    return key, cal.get("label") or key


def _trained_what(audit: dict) -> str:
    data = audit.get("data", {})
    if _is_text_audit(audit):
        unit = (data.get("relearn_entities") or {}).get("unit") or "entity"
        return f"relearned {unit}s"
    n = data.get("relearn_train_items")
    return f"{n} trained forget items" if n else "trained half"


def _curve_metrics(audit: dict) -> list[tuple[str, str]]:
    """``[(point key, name)]`` of the curve: ROUGE-L, the data kind's probes (fact recall), probability;
    for raw-text data the plan's probes only (KnowMem, VerbMem ...; hazardous and general accuracy)."""
    probes = [(p["key"], p["label"]) for p in audit.get("relearn_probes") or []]
    if _is_text_audit(audit):
        return probes
    return [("rougeL_recall", "ROUGE-L recall"), *probes, ("prob", "probability")]


def _gap_key(audit: dict, metric: str) -> str | None:
    if metric == "rougeL_recall":
        return f"relearn_gap_{_suffix(audit)}"
    short = next((p["short"] for p in audit.get("relearn_probes") or [] if p["key"] == metric), None)
    return f"relearn_gap_{short}_{_suffix(audit)}" if short else None


def _curve_heading(audit: dict) -> str:
    if _is_text_audit(audit):  # column headings: "KnowMem / VerbMem", the F1 is in the caption
        return " / ".join(name.removesuffix(" ROUGE-L F1") for _, name in _curve_metrics(audit))
    return " / ".join("ROUGE-L" if k == "rougeL_recall" else "prob" if k == "prob" else name
                      for k, name in _curve_metrics(audit))  # fmt: skip


def _curve_caption(audit: dict) -> str:
    """What the curve's numbers are, for the card: 'forget ROUGE-L / ... on the held-out half' (QA)."""
    if not _is_text_audit(audit):
        return f"forget {_curve_heading(audit)} on the held-out half"
    unit = (audit.get("data", {}).get("relearn_entities") or {}).get("unit") or "entity"
    held = [p["label"] for p in audit.get("relearn_probes") or [] if p.get("gap")]
    every = [p["label"] for p in audit.get("relearn_probes") or [] if not p.get("gap")]
    text = f"{' / '.join(held)} on the held-out {unit}s"
    return text + (f"; {' / '.join(every)} on every question" if every else "")


def _is_text_audit(audit: dict) -> bool:
    return audit.get("data", {}).get("kind") in ("muse", "wmdp", "text")


def _curve_table_md(audit: dict, compare: dict[str, dict] | None = None) -> list[str]:
    series = curve_series(audit, compare)
    if not series:
        return []
    head = _curve_heading(audit)
    lines = [
        "| relearning steps | " + " | ".join(f"{_md_escape(lab)} {head}" for _, lab, _ in series) + " |",
        "|---:|" + "---:|" * len(series),
    ]
    for k in _curve_steps(series):
        cells = [_point_cell(points.get(k), audit) for _, _, points in series]
        lines.append(f"| {k} | " + " | ".join(cells) + " |")
    return lines


def _point_cell(point: dict | None, audit: dict, prefix: str = "") -> str:
    if not point:
        return "n/a"
    return " / ".join(_cell(point.get(prefix + key)) for key, _ in _trained_metrics(audit, prefix))


def _trained_metrics(audit: dict, prefix: str = TRAINED) -> list[tuple[str, str]]:
    """The curve's metrics measured on the trained half too (``prefix`` ``""``: every curve metric)."""
    metrics = _curve_metrics(audit)
    if not prefix:
        return metrics
    points = [p for points in (audit.get("relearn_curve") or {}).values() for p in points.values()]
    return [(k, name) for k, name in metrics if any(p.get(prefix + k) is not None for p in points)]


def _trained_table_md(audit: dict, compare: dict[str, dict] | None = None) -> list[str]:
    """The same curve on the half the attack trains on (what it teaches), when the audit measured it."""
    series = curve_series(audit, compare)
    metrics = _trained_metrics(audit)
    if not series or not metrics:
        return []
    head = " / ".join(_short_name(k, name) for k, name in metrics)
    lines = [
        "| relearning steps | " + " | ".join(f"{_md_escape(lab)} {head}" for _, lab, _ in series) + " |",
        "|---:|" + "---:|" * len(series),
    ]
    for k in _curve_steps(series):
        cells = [_point_cell(points.get(k), audit, TRAINED) for _, _, points in series]
        lines.append(f"| {k} | " + " | ".join(cells) + " |")
    return lines


def _short_name(key: str, name: str) -> str:
    return (
        "ROUGE-L" if key == "rougeL_recall" else "prob" if key == "prob" else name.removesuffix(" ROUGE-L F1")
    )


def gap_lines(audit: dict, compare: dict[str, dict] | None = None) -> list[str]:
    """The relearning gaps after the curve's last step (forget ROUGE-L, then each probe's, e.g. fact
    recall), each beside the gap before the attack and what the two say together
    (:func:`relearn_reading`); the attack's calibration (can it teach, does it keep the target); then the
    same gaps for each compared audit's model (e.g. the plain method next to its robust version),
    measured against this audit's oracle. Raw-text data: the same for each forget-side probe (KnowMem
    first, the headline; hazardous accuracy)."""
    if _is_text_audit(audit):
        return _text_gap_lines(audit, compare) + _calibration_lines(audit)
    sfx, step = _suffix(audit), _final_step(audit)
    gap = audit.get(f"relearn_gap_{sfx}")
    if gap is None:
        note = audit.get(f"relearn_gap_{sfx}_note")
        return [f"relearn_gap_{sfx}: n/a ({note})"] if note else []
    lines = [
        f"relearn_gap_{sfx} = {gap:+.3f} (audited minus retain-oracle forget ROUGE-L on the held-out half after "
        f"{step} relearning steps, the curve's last; 0 = as robust as never having seen the data)"
        + _reading(audit.get("relearn_reading"))
    ]
    probes = audit.get("relearn_probes") or []
    for probe in probes:
        value = audit.get(f"relearn_gap_{probe['short']}_{sfx}")
        if value is not None:
            lines.append(
                f"relearn_gap_{probe['short']}_{sfx} = {value:+.3f} (the same gap in {probe['label']})"
                + _reading(audit.get(f"relearn_reading_{probe['short']}"))
            )
    lines += _calibration_lines(audit)
    oracle = (audit.get("relearn_curve") or {}).get("oracle")
    for label, other in (compare or {}).items():
        points = (other.get("relearn_curve") or {}).get("audited")
        if not points or not oracle:
            continue
        curve = {"audited": points, "oracle": oracle}
        for key, name, short in [
            ("rougeL_recall", "forget ROUGE-L", ""),
            *[(p["key"], p["label"], f"_{p['short']}") for p in probes],
        ]:
            gaps = relearn_gaps(curve, key)
            if gaps.get(step) is not None:
                lines.append(
                    f"{label}: relearn_gap{short}_{sfx} = {gaps[step]:+.3f} ({name}, against the same oracle)"
                    + _reading(relearn_reading(gaps, step))
                )
    return lines


def _calibration_lines(audit: dict) -> list[str]:
    cal = audit.get("relearn_calibration")
    return [cal["text"]] if cal and cal.get("text") else []


def _text_gap_lines(audit: dict, compare: dict[str, dict] | None) -> list[str]:
    head = audit.get("relearn_headline")
    if not head:
        note = audit.get("relearn_gap_20_note")
        return [f"relearning gap: n/a ({note})"] if note else []
    if head.get("value") is None:
        return [f"{head['key']}: n/a ({head.get('note')})"]
    sfx, step = _suffix(audit), _final_step(audit)
    unit = (audit.get("data", {}).get("relearn_entities") or {}).get("unit") or "entity"
    probes = [p for p in audit.get("relearn_probes") or [] if p.get("gap")]
    probes.sort(key=lambda p: p["key"] != head["metric"])  # the headline first
    lines = []
    for probe in probes:
        key = f"relearn_gap_{probe['short']}_{sfx}"
        value = audit.get(key)
        if value is None:
            continue
        about = (
            f"audited minus retain-oracle {probe['label']} on the held-out {unit}s after {step} relearning "
            "steps, the curve's last; 0 = as robust as never having seen the data"
            if probe["key"] == head["metric"]
            else f"the same gap in {probe['label']}"
        )
        lines.append(
            f"{key} = {value:+.3f} ({about})" + _reading(audit.get(f"relearn_reading_{probe['short']}"))
        )
    oracle = (audit.get("relearn_curve") or {}).get("oracle")
    for label, other in (compare or {}).items():
        points = (other.get("relearn_curve") or {}).get("audited")
        if not points or not oracle:
            continue
        for probe in probes:
            gaps = relearn_gaps({"audited": points, "oracle": oracle}, probe["key"])
            if gaps.get(step) is not None:
                lines.append(
                    f"{label}: relearn_gap_{probe['short']}_{sfx} = {gaps[step]:+.3f} ({probe['label']}, "
                    "against the same oracle)" + _reading(relearn_reading(gaps, step))
                )
    return lines


def _reading(reading: dict | None) -> str:
    return f"; {reading['text']}" if reading else ""


def warning_lines(audit: dict) -> list[str]:
    return [w["message"] for w in audit.get("warnings") or []]


def audit_markdown(audit: dict, plot: str | None = None) -> str:
    """The unlearning audit card as Markdown: the roles, one table per check, a verdict under each, and
    the relearning curve (table, and ``plot``, a PNG file name next to the card, when given)."""
    roles = _roles_of(audit)
    title = (
        f"# Unlearning audit card: {audit['method']}" if audit.get("method") else "# Unlearning audit card"
    )
    lines = [title, ""]
    for role in roles:
        lines.append(f"- **{role_title(audit, role)}** ({ROLE_ABOUT[role]}){_name_md(audit, role)}")
    data = audit.get("data", {})
    noun = "texts" if _is_text_audit(audit) else "items"
    lines += [
        f"- **data**: `{data.get('path')}` ({data.get('forget_items')} forget {noun}, "
        f"{data.get('holdout_items')} holdout {noun})",
        "",
    ]
    heads = [role_title(audit, r) for r in roles]
    for i, check in enumerate(audit["checks"], start=1):
        lines += [f"## {i}. {check['title']}", "", check.get("about", ""), ""]
        curve = check.get("id") == "relearning" and bool(check.get("rows"))
        if check.get("rows") and not curve:  # the relearning rows are the curve table below
            lines.append("| | " + " | ".join(_md_escape(h) for h in heads) + " |")
            lines.append("|---|" + "---:|" * len(roles))
            for row in check["rows"]:
                cells = [_cell(row.get(r)) for r in roles]
                lines.append(f"| {_md_escape(row['label'])} | " + " | ".join(cells) + " |")
            lines.append("")
        if curve:
            lines += [f"Relearning curve ({_curve_caption(audit)}):", ""]
            lines += [*_curve_table_md(audit), ""]
            trained = _trained_table_md(audit)
            if trained:
                lines += [f"The same on the {_trained_what(audit)} (what the attack teaches):", ""]
                lines += [*trained, ""]
            if plot:
                lines += [f"![relearning curve]({plot})", ""]
            for gap in gap_lines(audit):
                lines += [_md_escape(gap), ""]
            for warning in warning_lines(audit):
                lines += [f"**Warning:** {_md_escape(warning)}", ""]
        lines += [f"**Verdict:** {_md_escape(check['verdict'])}", ""]
    return "\n".join(lines)


def _name(audit: dict, role: str) -> str | None:
    """The model's name (e.g. its folder) when one was given, not just the role repeated."""
    name = str(audit["models"][role])
    return None if name == role else name


def _name_md(audit: dict, role: str) -> str:
    name = _name(audit, role)
    return f": `{name}`" if name else ""


def _cell(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def _md_escape(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


# Fits a 1400 px page: the card never exceeds its container, long labels wrap, numbers do not.
_CSS = (
    ".uk-audit{font-family:system-ui,sans-serif;max-width:100%;overflow-x:auto}"
    ".uk-audit table{border-collapse:collapse;margin:.4em 0;max-width:100%}"
    ".uk-audit th,.uk-audit td{border:1px solid #ccc;padding:.2em .6em;overflow-wrap:anywhere}"
    ".uk-audit td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}"
    ".uk-audit .verdict{background:#f4f6fa;border-left:4px solid #4a6fa5;padding:.3em .6em}"
    ".uk-audit .about{color:#555;font-size:.92em}"
    ".uk-audit .warning{background:#fff4f4;border-left:4px solid #c0392b;padding:.3em .6em}"
    ".uk-audit img{max-width:100%;height:auto}"
)


def audit_card_html(audit: dict, *, heading: bool = True, compare: dict[str, dict] | None = None) -> str:
    """The audit card as a self-contained, escaped HTML fragment (its own scoped ``<style>``, the
    relearning curve as an inline PNG). ``heading=False`` leaves the title to the page that embeds the
    card (one heading); ``compare`` (label -> another audit) adds those audited models' relearning
    curves, e.g. the plain method next to its robust version."""
    e = html.escape
    roles = _roles_of(audit)
    out = [f"<section class='uk-audit'><style>{_CSS}</style>"]
    if heading:
        title = (
            f"Unlearning audit card: {audit['method']}" if audit.get("method") else "Unlearning audit card"
        )
        out.append(f"<h2>{e(title)}</h2>")
    out.append("<ul>")
    for role in roles:
        name = _name(audit, role)
        code = f": <code>{e(name)}</code>" if name else ""
        out.append(f"<li><b>{e(role_title(audit, role))}</b> ({e(ROLE_ABOUT[role])}){code}</li>")
    out.append("</ul>")
    heads = "".join(f"<th>{e(role_title(audit, r))}</th>" for r in roles)
    for i, check in enumerate(audit["checks"], start=1):
        out.append(f"<h3>{i}. {e(check['title'])}</h3>")
        out.append(f"<p class='about'>{e(check.get('about', ''))}</p>")
        curve = check.get("id") == "relearning" and bool(check.get("rows"))
        if check.get("rows") and not curve:  # the relearning rows are the curve table
            out.append(f"<table><tr><th></th>{heads}</tr>")
            for row in check["rows"]:
                cells = "".join(f"<td class='num'>{e(_cell(row.get(r)))}</td>" for r in roles)
                out.append(f"<tr><td>{e(row['label'])}</td>{cells}</tr>")
            out.append("</table>")
        if curve:
            out += _curve_html(audit, compare)
        out.append(f"<p class='verdict'><b>Verdict:</b> {e(check['verdict'])}</p>")
    out.append("</section>")
    return "\n".join(out) + "\n"


def _curve_html(audit: dict, compare: dict[str, dict] | None) -> list[str]:
    import base64

    e = html.escape
    series = curve_series(audit, compare)
    if not series:
        return []
    out = [f"<p class='about'>Relearning curve: {e(_curve_caption(audit))}.</p>"]
    out.append("<table><tr><th>steps</th>" + "".join(f"<th>{e(lab)}</th>" for _, lab, _ in series) + "</tr>")
    for k in _curve_steps(series):
        cells = "".join(
            f"<td class='num'>{e(_point_cell(points.get(k), audit))}</td>" for _, _, points in series
        )
        out.append(f"<tr><td class='num'>{e(k)}</td>{cells}</tr>")
    out.append("</table>")
    trained = _trained_metrics(audit)
    if trained:
        names = " / ".join(_short_name(k, name) for k, name in trained)
        out.append(
            f"<p class='about'>The same on the {e(_trained_what(audit))} (what the attack teaches): "
            f"{e(names)}.</p>"
        )
        out.append(
            "<table><tr><th>steps (trained half)</th>"
            + "".join(f"<th>{e(lab)}</th>" for _, lab, _ in series)
            + "</tr>"
        )
        for k in _curve_steps(series):
            cells = "".join(
                f"<td class='num'>{e(_point_cell(points.get(k), audit, TRAINED))}</td>"
                for _, _, points in series
            )
            out.append(f"<tr><td class='num'>{e(k)}</td>{cells}</tr>")
        out.append("</table>")
    png = relearn_curve_png(audit, compare=compare)
    if png:
        data = base64.b64encode(png).decode("ascii")
        out.append(f"<img alt='relearning curve' src='data:image/png;base64,{data}'>")
    out += [f"<p><b>{e(gap)}</b></p>" for gap in gap_lines(audit, compare)]
    out += [f"<p class='warning'><b>Warning:</b> {e(w)}</p>" for w in warning_lines(audit)]
    return out


def write_audit(output_dir: str | Path, audit: dict, overwrite: bool = False) -> Path:
    """Write ``audit.json``, ``audit.md`` and (when the relearning attack ran) ``relearn_curve.png`` into
    ``output_dir`` atomically (all or nothing)."""
    from unlearnkit.io import atomic_dir, write_json, write_text_atomic

    with atomic_dir(output_dir, overwrite=overwrite) as tmp:
        write_json(tmp / "audit.json", audit)
        plot = relearn_curve_png(audit, tmp / "relearn_curve.png")
        write_text_atomic(tmp / "audit.md", audit_markdown(audit, plot="relearn_curve.png" if plot else None))
    return Path(output_dir)

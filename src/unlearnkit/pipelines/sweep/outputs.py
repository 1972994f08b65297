"""A sweep's outputs: ``best.yaml`` (a recipe for ``unlearn --config``), ``trials.jsonl``,
``pareto.png``, ``report.html`` and ``summary.json`` (the chosen settings re-run on the test half),
each written atomically, by one worker per study state."""

from __future__ import annotations

import json
import os
import shutil
import socket
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from unlearnkit.pipelines.sweep.choice import choose, pareto_numbers, refusal, trial_rows
from unlearnkit.pipelines.sweep.settings import GOAL_FORGET_QUALITY, OBJECTIVES, Context
from unlearnkit.pipelines.sweep.split import split_summary
from unlearnkit.pipelines.sweep.storage import study_location
from unlearnkit.pipelines.sweep.study import claim_lock, open_study, recover_stale, study_name
from unlearnkit.pipelines.sweep.worker import headline, recipe_values, run_settings


def best_recipe_text(ctx: Context, chosen: dict, rule: str, test: dict | None) -> str:
    import yaml

    st = ctx.settings
    values = recipe_values(ctx, chosen["params"])
    sel = chosen["selection_metrics"] or {}
    lines = [
        f"# Chosen by `unlearnkit sweep` (trial {chosen['number']}, study {study_location(st)}).",
        f"# Rule: {rule}.",
        "# Scores used for the choice are on the SELECTION halves (forget, retain, general; not results):",
        "#   "
        + ", ".join(
            f"{k} {v:.4g}"
            for k, v in sel.items()
            if k in ("forget_quality", "model_utility", "forget_rougeL_recall")
        ),
    ]
    if test:
        lines.append(
            "# Held-out TEST halves (the result): "
            + ", ".join(
                f"{k} {v:.4g}"
                for k, v in test.items()
                if k in ("forget_quality", "model_utility", "forget_rougeL_recall")
            )
        )
    lines += [
        f"# Use: unlearnkit unlearn --model {st.model} --data {st.data} --config {Path(st.output) / 'best.yaml'} --output OUT",
        "",
    ]
    body = yaml.safe_dump({"method": st.method, **values}, sort_keys=False, default_flow_style=False)
    return "\n".join(lines) + body


def plot_pareto(rows: Sequence[dict], ctx: Context, chosen: dict | None, path: Path) -> None:
    """Utility vs forget quality (or forget ROUGE): all trials, Pareto points, chosen, target, oracle."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    objectives = ctx.settings.resolved_objectives()
    forget_key = next((o for o in objectives if o != "model_utility"), objectives[0])
    front = pareto_numbers(rows, objectives)
    ref = ctx.reference
    log_x = forget_key == "forget_quality"

    def xy(m):
        x = m.get(forget_key, float("nan"))
        return (max(x, 1e-30) if log_x else x), m.get("model_utility", float("nan"))

    fig, ax = plt.subplots(figsize=(7.5, 5))
    done = [r for r in rows if r["state"] == "COMPLETE" and r["selection_metrics"]]
    other = [xy(r["selection_metrics"]) for r in done if r["number"] not in front]
    pareto = sorted(xy(r["selection_metrics"]) for r in done if r["number"] in front)
    if other:
        ax.scatter(*zip(*other), s=22, color="#9aa5b1", label="trial")
    if pareto:
        ax.plot(*zip(*pareto), color="#1f77b4", lw=1, alpha=0.6)
        ax.scatter(*zip(*pareto), s=40, color="#1f77b4", label="Pareto front", zorder=3)
    if chosen is not None and chosen.get("selection_metrics"):
        cx, cy = xy(chosen["selection_metrics"])
        ax.scatter([cx], [cy], s=260, facecolors="none", edgecolors="#d62728", lw=2, label="chosen", zorder=4)
    for name, marker, color in (("target", "s", "black"), ("oracle", "*", "#2ca02c")):
        m = ref.get(f"{name}_selection")
        if m:
            ax.scatter(*xy(m), marker=marker, s=110, color=color, label=name, zorder=4)
    if "oracle_selection" in ref:
        goal_util = ctx.settings.utility_ratio * ref["oracle_selection"].get("model_utility", float("nan"))
        ax.axhline(
            goal_util,
            color="#2ca02c",
            ls="--",
            lw=1,
            label=f"{ctx.settings.utility_ratio:g} x oracle utility",
        )
        if forget_key == "forget_quality":
            ax.axvline(
                GOAL_FORGET_QUALITY,
                color="#ff7f0e",
                ls="--",
                lw=1,
                label=f"forget quality {GOAL_FORGET_QUALITY}",
            )
    if log_x:
        ax.set_xscale("log")
    ax.set_xlabel(
        f"{forget_key} ({'higher' if OBJECTIVES[forget_key] == 'maximize' else 'lower'} = more forgotten)"
    )
    ax.set_ylabel("model_utility")
    ax.set_title(f"sweep {ctx.settings.method}: selection half ({len(done)} complete trials)")
    ax.legend(loc="center left", bbox_to_anchor=(1.02, 0.5), fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def render_report(
    ctx: Context, rows: Sequence[dict], chosen: dict | None, rule: str, summary: dict, png: bytes
) -> str:
    import base64
    import html

    st = ctx.settings
    e = html.escape
    objectives = st.resolved_objectives()
    cols = [
        "forget_quality",
        "model_utility",
        "forget_rougeL_recall",
        "forget_truth_ratio",
        "retain_rougeL_recall",
    ]

    def fmt(v):
        return "" if v is None else (f"{v:.3g}" if isinstance(v, float) else e(str(v)))

    test_rows = "".join(
        f"<tr><td>{e(name)}</td>" + "".join(f"<td>{fmt(m.get(c))}</td>" for c in cols) + "</tr>"
        for name, m in summary.get("test", {}).items()
    )
    retried = {r["retry_of"]: r["number"] for r in rows if r.get("retry_of") is not None}

    def note(r) -> str:
        parts = [r.get("pruned") or "", r.get("error") or ""]
        if r.get("retry_of") is not None:
            parts.append(f"re-run of trial {r['retry_of']}")
        if r["number"] in retried:
            parts.append(f"interrupted; re-run as trial {retried[r['number']]}")
        return "; ".join(p for p in parts if p)

    trial_html = "".join(
        f"<tr><td>{r['number']}</td><td>{e(r['state'])}</td><td><code>{e(json.dumps(r['params']))}</code></td>"
        + "".join(
            f"<td>{fmt((r['selection_metrics'] or {}).get(c))}</td>"
            for c in ("forget_quality", "model_utility", "forget_rougeL_recall")
        )
        + f"<td>{fmt(r['seconds'])}</td><td>{e(note(r))}</td></tr>"
        for r in rows
    )
    parts = "".join(
        f"<tr><td>{e(part)}</td><td>{e(info['by'])}</td><td>{len(info['selection_rows'])}</td>"
        f"<td>{len(info['test_rows'])}</td></tr>"
        for part, info in ctx.split_info.items()
    )
    choice = (
        f'<p class="note"><b>No trial chosen.</b> {e(summary["refused"])}</p>'
        if summary.get("refused")
        else f"<p>Chosen: trial {chosen['number'] if chosen else '-'}; {e(rule)}. Recipe: <code>best.yaml</code>.</p>"
    ) + "".join(f'<p class="note"><b>Warning.</b> {e(w)}</p>' for w in summary.get("warnings", []))
    return f"""<!doctype html><html><head><meta charset="utf-8"><title>unlearnkit sweep: {e(st.method)}</title>
<style>body{{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em}}
table{{border-collapse:collapse;font-size:13px}}td,th{{border:1px solid #ddd;padding:3px 7px;text-align:right}}
td:first-child,th:first-child{{text-align:left}}.scroll{{overflow-x:auto}}.note{{background:#f6f8fa;padding:.6em 1em}}</style></head><body>
<h1>Sweep: <code>{e(st.method)}</code></h1>
<p class="note"><b>Honest selection.</b> Every part a score reads (forget, retain, general; holdout too) was
split by whole entities, with seed {st.seed}, into a <b>selection half</b> and a <b>test half</b> (table below).
Every trial trained on the whole benchmark; trials were <i>scored and chosen</i> on the selection halves only.
The numbers in the first table are the chosen settings re-run and measured on the <b>test halves</b>, which no
choice has seen: forgetting and model utility alike. Trial scores below are selection scores, not results.</p>
<div class="scroll"><table><tr><th>part</th><th>entities by</th><th>selection rows</th><th>test rows</th></tr>{parts}</table></div>
<h2>Result on the test half</h2>
<div class="scroll"><table><tr><th>model</th>{"".join(f"<th>{c}</th>" for c in cols)}</tr>{test_rows}</table></div>
<p>Objectives: {e(", ".join(f"{o} ({OBJECTIVES[o]})" for o in objectives))}.</p>
{choice}
<h2>Trade-off (selection half)</h2>
<img alt="Pareto plot" style="max-width:100%" src="data:image/png;base64,{base64.b64encode(png).decode()}">
<h2>Trials</h2>
<div class="scroll"><table><tr><th>#</th><th>state</th><th>params</th><th>FQ (sel.)</th><th>utility (sel.)</th>
<th>forget ROUGE (sel.)</th><th>seconds</th><th>note</th></tr>{trial_html}</table></div>
<p>Study: <code>{e(study_location(st))}</code>; search space: <code>{e(ctx.space.source)}</code>
({e(ctx.space.scale)}; {"grid" if ctx.space.is_grid else "multi-objective TPE"}).</p></body></html>
"""


def finalize_blocker(ctx: Context, study) -> str | None:
    """Why this process must not write the outputs now (None: it may, and it is recorded as doing so).

    One study, one report: outputs are written when no trial is running on any worker, by one
    folder per study state (the first to get there); a worker that finishes while others still run
    trials leaves it to the last one.
    """
    from optuna.trial import TrialState

    with claim_lock(ctx):
        recover_stale(study)
        running = study.get_trials(deepcopy=False, states=(TrialState.RUNNING,))
        if running:
            hosts = sorted({str((t.user_attrs.get("worker") or {}).get("host", "?")) for t in running})
            return (
                f"{len(running)} trial(s) still running on other workers ({', '.join(hosts)}): the worker "
                "that finishes last writes best.yaml and the report (or rerun this command later)"
            )
        me = {"host": socket.gethostname(), "output": str(ctx.out.resolve())}
        n = len(study.get_trials(deepcopy=False))
        done = study.user_attrs.get("finalized") or {}
        if done.get("trials") == n and {k: done.get(k) for k in me} != me:
            return (
                f"the study's {n} trials were already reported in {done['host']}:{done['output']} "
                "(best.yaml, report.html and summary.json there)"
            )
        study.set_user_attr("finalized", {**me, "trials": n})
    return None


def finalize(ctx: Context, log: Callable[[str], None] = print) -> dict[str, Any]:
    """Choose (or refuse), re-run the chosen settings on the test half, write every output file."""
    from unlearnkit.io import write_json, write_text_atomic

    study = open_study(ctx)
    rows = trial_rows(study)
    refused = refusal(rows, ctx)
    chosen, rule = (None, f"refused: {refused}") if refused else choose(rows, ctx)
    notes: list[str] = []  # warnings beside a choice (a degenerate number is a refusal, not a note)
    summary: dict[str, Any] = {
        "method": ctx.settings.method,
        "objectives": list(ctx.settings.resolved_objectives()),
        "study": {"storage": study_location(ctx.settings), "name": study_name(ctx)},
        "space": {"source": ctx.space.source, "scale": ctx.space.scale},
        "split": split_summary(ctx),
        "trials": {s: sum(r["state"] == s for r in rows) for s in ("COMPLETE", "PRUNED", "FAIL", "RUNNING")},
        "chosen_trial": chosen["number"] if chosen else None,
        "rule": rule,
        "refused": refused,
        "warnings": notes,
        "noise": ctx.reference.get("noise"),
        "note": "test = measured on the held-out test halves (forget, retain, general); selection scores "
        "are not results",
        "test": {},
    }
    ref = ctx.reference
    for name in ("target", "oracle"):
        if f"{name}_test" in ref:
            summary["test"][name] = ref[f"{name}_test"]
    test_metrics = None
    if chosen is not None:
        cached = study.user_attrs.get("chosen_test")
        if cached and cached.get("trial") == chosen["number"]:
            test_metrics = cached["metrics"]
        else:
            log(f"re-running trial {chosen['number']} and measuring it on the test half ...")
            test_metrics = headline(
                run_settings(
                    ctx, recipe_values(ctx, chosen["params"]), ctx.out / ".work" / "final", ("test",)
                )["test"]
            )
            study.set_user_attr("chosen_test", {"trial": chosen["number"], "metrics": test_metrics})
        summary["test"][f"{ctx.settings.method} (tuned)"] = test_metrics
        summary["chosen_params"] = chosen["params"]
        summary["chosen_selection_metrics"] = chosen["selection_metrics"]
        write_text_atomic(ctx.out / "best.yaml", best_recipe_text(ctx, chosen, rule, test_metrics))
    elif (ctx.out / "best.yaml").is_file():
        (ctx.out / "best.yaml").unlink()  # an earlier state's choice would contradict this summary
    write_text_atomic(ctx.out / "trials.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    png_path = ctx.out / "pareto.png"
    tmp_png = ctx.out / f".pareto.{os.getpid()}.png"
    plot_pareto(rows, ctx, chosen, tmp_png)
    os.replace(tmp_png, png_path)
    write_text_atomic(
        ctx.out / "report.html", render_report(ctx, rows, chosen, rule, summary, png_path.read_bytes())
    )
    write_json(ctx.out / "summary.json", summary)
    shutil.rmtree(ctx.out / ".work", ignore_errors=True)
    return summary

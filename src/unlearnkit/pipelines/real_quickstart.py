"""``unlearnkit quickstart --model smollm2-135m-instruct``: a real pretrained model forgets facts it
knows, beside facts it keeps, on a laptop CPU.

The embedded quickstart trains a 0.8M-parameter model on a fictitious world so that a retrained oracle
exists. This one starts from a real instruct checkpoint (any ``--model``; the GGUF name converts once,
:mod:`unlearnkit.gguf_models`) and the facts of ``resources/real/facts.jsonl``, which SmolLM2-135M-Instruct
states when asked (checked when it runs: the original row shows it):

* **forget**: 8 facts of science and literature (the symbol of gold, the author of Pride and Prejudice ...);
* **retain**: 8 capitals, trained on to be kept (the retain set every method but GA uses);
* **general**: 8 facts never trained on, some of them neighbours of forget facts (silver's and iron's
  symbols): what unlearning spills onto.

The steps: the original model's greedy answers; ASU's forget-teacher searched over temperatures
(:mod:`unlearnkit.evaluation.teacher_search`, the same search as ``--set tau=auto``); each method trained
by :func:`unlearnkit.unlearn` with the same recipe (the small-model recipe: lr 1e-4, batch 4, 10 epochs
= 20 steps); every model asked every question. There is no oracle here (a model that never read these
facts cannot be had), so a row is judged by its own numbers: fact recall per part (forget should fall,
retain and general stay), and whether its forget answers are still language (token entropy, the share
empty or degenerate). Output: ``metrics.json``, ``report.html`` (table, plot, the answers side by side),
``recall.png``.
"""

from __future__ import annotations

import base64
import html
import io
import json
import time
from importlib import resources
from pathlib import Path
from typing import Any

REAL_METHODS = ("asu", "npo", "t-npo", "ga")
# One recipe for every method: the converted small checkpoint's (gguf_models.SMALL_UNLEARN_DEFAULTS)
# with 10 passes over the 8 forget facts (20 steps of 4).
REAL_RECIPE = dict(lr=1e-4, batch_size=4, grad_accum=1, epochs=10.0, max_length=64, loss_reduction="token")
REAL_METHOD = {"asu": dict(forget_weight=1.0)}
TEACHER_TAUS = (1.0, 1.5, 1.6, 1.7, 1.8, 1.9, 2.0)
NEW_TOKENS = 32
PARTS = ("forget", "retain", "general")


def facts() -> dict[str, list[dict]]:
    """The packaged facts by part (``resources/real/facts.jsonl``)."""
    text = (resources.files("unlearnkit") / "resources" / "real" / "facts.jsonl").read_text(encoding="utf-8")
    rows = [json.loads(line) for line in text.splitlines() if line.strip()]
    return {p: [{k: v for k, v in r.items() if k != "part"} for r in rows if r["part"] == p] for p in PARTS}


def ask(model, tokenizer, fmt, parts: dict[str, list[dict]]) -> dict[str, Any]:
    """Every part's greedy answers and their numbers (fact recall, token entropy, the share empty or
    degenerate): the teacher search's unsmoothed measurement, so the two read alike."""
    from unlearnkit.evaluation.teacher_search import Setting, measure

    measured = measure(model, tokenizer, fmt, parts, Setting(1.0), NEW_TOKENS, 32)
    return {
        "measured": measured,
        "answers": {p: measured[p]["answers"] for p in parts},
        "metrics": {
            f"{p}_{key}": measured[p][field]
            for p in parts
            for key, field in (("fact_recall", "fact_score"), ("token_entropy", "token_entropy"), ("degenerate", "degenerate"))
        },
    }


def run_real_quickstart(args, log) -> int:
    """The steps of the module docstring; ``args``: the quickstart's (``model``, ``methods``, ``seed``,
    ``output``, ``overwrite``)."""
    import torch

    from unlearnkit import unlearn
    from unlearnkit.data.encode import PromptFormat
    from unlearnkit.evaluation.teacher_search import search_tau, table
    from unlearnkit.gguf_models import source_of
    from unlearnkit.io import atomic_dir
    from unlearnkit.models import load

    started = time.time()
    methods = [m.strip() for m in args.methods.split(",") if m.strip()] if args.methods else list(REAL_METHODS)
    parts = facts()
    torch.manual_seed(args.seed)
    model, tokenizer = load(args.model)
    fmt = PromptFormat.for_tokenizer(tokenizer, "auto")
    log(f"model {getattr(args, 'model_given', args.model)}: {sum(p.numel() for p in model.parameters()) / 1e6:.0f}M parameters")
    rows: dict[str, dict[str, Any]] = {"original": ask(model, tokenizer, fmt, parts)}
    known = rows["original"]["metrics"]["forget_fact_recall"]
    log(f"original: states {known:.0%} of the forget facts, {rows['original']['metrics']['retain_fact_recall']:.0%} "
        "of the kept ones")

    # the recipe's 64 tokens fit SmolLM2's chat prompts; another tokenizer may need more (answers are never cut)
    longest = max(
        len(fmt.prompt_ids(tokenizer, r["question"])) + len(fmt.answer_ids(tokenizer, r["answer"]))
        for rows in parts.values()
        for r in rows
    )
    recipe = {**REAL_RECIPE, "max_length": max(REAL_RECIPE["max_length"], longest + 1)}
    timings: dict[str, float] = {}
    search = None
    if any(m.startswith(("asu", "t-asu", "s-asu")) for m in methods):
        t0 = time.time()
        log("ASU's teacher: the original model at each temperature (unlearnkit teacher)")
        search = search_tau(
            model, tokenizer, fmt, parts, TEACHER_TAUS, (None,), NEW_TOKENS, log=log,
            baseline=rows["original"]["measured"],
        )
        timings["teacher search"] = time.time() - t0
        print(table(search))
    for name in methods:
        t0 = time.time()
        settings = {**recipe, **REAL_METHOD.get(name, {}), "seed": args.seed}
        if search is not None and name.startswith(("asu", "t-asu", "s-asu")):
            if search.chosen is None:
                log(f"{name}: skipped, no temperature left the teacher answering in language")
                continue
            settings.update(tau=search.chosen.tau, layers=search.chosen.layers_setting)
        log(f"{name}: unlearning the 8 forget facts ({settings['epochs']:g} epochs, lr {settings['lr']:g})")
        model, tokenizer = load(args.model)  # every method starts from the original
        result = unlearn(model, tokenizer, parts["forget"], parts["retain"], method=name, quiet=True, **settings)
        rows[name] = ask(result.model, tokenizer, fmt, parts)
        rows[name]["settings"] = {k: v for k, v in settings.items() if k in ("tau", "layers", "lr", "epochs")}
        timings[name] = time.time() - t0
        m = rows[name]["metrics"]
        log(f"{name}: forget {m['forget_fact_recall']:.0%}, retain {m['retain_fact_recall']:.0%}, "
            f"general {m['general_fact_recall']:.0%} ({timings[name]:.0f} s)")

    record = {
        "model": str(getattr(args, "model_given", args.model)),
        "model_source": source_of(args.model),
        "seed": args.seed,
        "recipe": recipe,
        "questions": {p: [r["question"] for r in rs] for p, rs in parts.items()},
        "facts": {p: [r["fact_value"] for r in rs] for p, rs in parts.items()},
        "rows": {name: {"metrics": r["metrics"], **({"settings": r["settings"]} if "settings" in r else {})}
                 for name, r in rows.items()},
        "answers": {name: r["answers"] for name, r in rows.items()},
        "teacher_search": None if search is None else _without_answers(search.as_dict()),
        "seconds": {**{k: round(v, 1) for k, v in timings.items()}, "total": round(time.time() - started, 1)},
    }
    png = recall_plot(record)
    with atomic_dir(args.output, overwrite=args.overwrite) as tmp:
        (tmp / "metrics.json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
        (tmp / "recall.png").write_bytes(png)
        (tmp / "report.html").write_text(report_html(record, png), encoding="utf-8")
    print(summary_table(record))
    print(f"wrote {Path(args.output) / 'report.html'} ({record['seconds']['total']:.0f} s)")
    return 0


def _without_answers(search: dict) -> dict:
    for setting in search["settings"]:
        for part in PARTS:
            setting.get(part, {}).pop("answers", None)
    return search


def summary_table(record: dict) -> str:
    """One line a row: fact recall per part, the forget answers' token entropy and degenerate share."""
    lines = [f"{'row':<10} {'forget':>7} {'retain':>7} {'general':>8} {'forget entropy':>15} {'degenerate':>11}"]
    for name, row in record["rows"].items():
        m = row["metrics"]
        lines.append(
            f"{name:<10} {m['forget_fact_recall']:>7.0%} {m['retain_fact_recall']:>7.0%} "
            f"{m['general_fact_recall']:>8.0%} {m['forget_token_entropy']:>15.2f} {m['forget_degenerate']:>11.0%}"
        )
    return "\n".join(lines)


def recall_plot(record: dict) -> bytes:
    """Fact recall per part, one group of bars a row (PNG bytes)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(record["rows"])
    fig, ax = plt.subplots(figsize=(1.4 + 1.3 * len(names), 3.2))
    width = 0.26
    for i, part in enumerate(PARTS):
        values = [record["rows"][n]["metrics"][f"{part}_fact_recall"] for n in names]
        ax.bar([x + (i - 1) * width for x in range(len(names))], values, width, label=part)
    ax.set_xticks(range(len(names)), names)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("fact recall")
    ax.set_title(f"{Path(str(record['model'])).name}: what each method forgot and kept")
    ax.legend(loc="upper right", fontsize=8)
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110)
    plt.close(fig)
    return buffer.getvalue()


def report_html(record: dict, png: bytes) -> str:
    """The table, the plot and every answer side by side, one self-contained page."""
    esc = html.escape
    names = list(record["rows"])
    head = "".join(f"<th>{esc(n)}</th>" for n in names)
    table_rows = []
    for part in PARTS:
        for key, label in (("fact_recall", "fact recall"), ("token_entropy", "token entropy"), ("degenerate", "empty or degenerate")):
            cells = "".join(f"<td>{record['rows'][n]['metrics'][f'{part}_{key}']:.2f}</td>" for n in names)
            table_rows.append(f"<tr><td>{part} {label}</td>{cells}</tr>")
    answers = []
    for part in PARTS:
        for i, question in enumerate(record["questions"][part]):
            cells = "".join(f"<td>{esc(record['answers'][n][part][i]) or '<i>(empty)</i>'}</td>" for n in names)
            answers.append(f"<tr><td><b>{part}</b>: {esc(question)} <i>({esc(record['facts'][part][i])})</i></td>{cells}</tr>")
    search = record.get("teacher_search")
    chosen = "" if not search else (
        f"<p>ASU's teacher: tau {search['chosen_tau']} chosen by the rule: {esc(search['rule'])}.</p>"
        if search["chosen_tau"] is not None else "<p>ASU's teacher: no fluent temperature found.</p>"
    )
    image = base64.b64encode(png).decode()
    return f"""<!doctype html><meta charset="utf-8"><title>unlearnkit quickstart: {esc(str(record['model']))}</title>
<style>body{{font-family:sans-serif;max-width:1200px;margin:auto}}td,th{{border:1px solid #ccc;padding:4px;font-size:13px;vertical-align:top}}table{{border-collapse:collapse}}</style>
<h1>A real model forgets: {esc(Path(str(record['model'])).name)}</h1>
<p>Forget: 8 facts the model states; retain: 8 facts trained on to be kept; general: 8 facts never trained on.
No oracle exists for a pretrained model's own knowledge: forget recall should fall, retain and general stay, and the
forget answers stay language.</p>{chosen}
<table><tr><th></th>{head}</tr>{''.join(table_rows)}</table>
<p><img src="data:image/png;base64,{image}" alt="fact recall per part"></p>
<h2>Answers</h2><table><tr><th>question (fact)</th>{head}</tr>{''.join(answers)}</table>
"""

"""Continual unlearning: forget requests arrive one after another; measure after each.

The setting of MUSE's sustainability axis (arXiv 2407.06460, C6) and of sequential TOFU requests
(e.g. forget01 ten times): the model that answered request ``i`` is the starting point of request
``i + 1``, and every request is a separate :func:`unlearnkit.pipelines.unlearn.unlearn` run (own optimiser,
own schedule). Methods with a reference model (NPO, KL retain, the ASU teacher) take as reference
*the model before the current request* (an in-memory snapshot), which is the usual convention.

The returned curve has one dict per evaluation point: ``step`` (0 = before any request),
``request_size``, ``n_forgotten`` (rows requested so far), ``train_loss`` and the metrics of
``eval_fn``. :func:`plot_curve` draws it as a PNG.

Raw-text folders (MUSE-like, WMDP-like; MUSE's own sustainability setting): a request forgets whole
entities (:func:`split_requests_by_entity`: every article of an event, every passage of an agent), and
:func:`text_eval_fn` measures each point with the benchmark's protocol passes
(:mod:`unlearnkit.evaluation.probes`) on the entities forgotten so far and those still to come.
"""

from __future__ import annotations

import math
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from unlearnkit.errors import UserError

EvalFn = Callable[..., dict[str, float]]


def split_requests(rows: Sequence[dict], k: int) -> list[list[dict]]:
    """``rows`` cut into ``k`` consecutive requests whose sizes differ by at most one."""
    if k < 1 or k > len(rows):
        raise UserError(
            f"cannot split {len(rows)} forget rows into {k} requests (need 1 <= k <= {len(rows)})"
        )
    base, extra = divmod(len(rows), k)
    out, start = [], 0
    for i in range(k):
        size = base + (1 if i < extra else 0)
        out.append(list(rows[start : start + size]))
        start += size
    return out


def tofu_eval_fn(bench, settings=None) -> EvalFn:
    """A default ``eval_fn``: TOFU metrics on the rows forgotten so far, the rows still to come, and retain.

    Keys: ``forget_*`` (rows of the requests applied so far; what must be gone), ``upcoming_*`` (rows of
    later requests: collateral forgetting before they are requested), ``retain_*``, ``general_*`` when
    the benchmark has a general split, and ``model_utility`` (harmonic mean of the retain/general
    prob, ROUGE-L recall and truth ratio that are present). ``settings``: an
    :class:`unlearnkit.evaluation.evaluate.EvalSettings` (keep ``max_new_tokens`` small for long curves).
    """
    from unlearnkit.data.encode import PromptFormat
    from unlearnkit.evaluation.evaluate import UTILITY_KEYS, EvalSettings, evaluate_split, subsample
    from unlearnkit.metrics.scores import harmonic_mean

    st = settings or EvalSettings(progress=False)
    eval_rows = getattr(bench, "eval_split", bench.split)

    def run(
        model, tokenizer, forgotten: Sequence[dict], upcoming: Sequence[dict], step: int
    ) -> dict[str, float]:
        fmt = PromptFormat.for_tokenizer(tokenizer, st.prompt_format)
        out: dict[str, float] = {}
        for prefix, rows, kind in (
            ("forget", forgotten, "forget"),
            ("upcoming", upcoming, "forget"),
            ("retain", eval_rows("retain"), "retain"),
            ("general", eval_rows("general"), "general"),
        ):
            rows = subsample(rows, st.max_items, st.seed)
            if not rows:
                continue
            metrics, _ = evaluate_split(model, tokenizer, fmt, rows, kind, st)
            out.update({f"{prefix}_{k.removeprefix(kind + '_')}": v for k, v in metrics.items()})
        present = [out[k] for k in UTILITY_KEYS if k in out and not math.isnan(out[k])]
        out["model_utility"] = harmonic_mean(present) if present else float("nan")
        return out

    return run


def split_requests_by_entity(rows: Sequence[dict], k: int, unit: str = "entity") -> list[list[dict]]:
    """``rows`` cut into ``k`` requests of whole entities (``entity``: an event, an agent), in the order
    the entities first appear; the numbers of entities per request differ by at most one, and every row
    of an entity is in its request (a fact is never half forgotten)."""
    from unlearnkit.evaluation.probes import ENTITY_FIELD, entity_of

    units = unit[:-1] + "ies" if unit.endswith("y") else unit + "s"
    missing = sum(1 for r in rows if entity_of(r) is None)
    if missing:
        raise UserError(
            f"{missing} of the {len(rows)} forget rows carry no '{ENTITY_FIELD}' field: requests forget whole "
            f"{units}, so every forget row must name its {unit}"
        )
    entities = list(dict.fromkeys(entity_of(r) for r in rows))
    if k < 1 or k > len(entities):
        raise UserError(
            f"cannot split the {len(entities)} {units} of the forget set into {k} requests (need 1 <= k <= "
            f"{len(entities)}: a request forgets whole {units})"
        )
    groups = split_requests(entities, k)
    return [[r for r in rows if entity_of(r) in set(group)] for group in groups]


def text_eval_fn(
    bench, plan=None, *, batch_size: int = 8, max_items: int | None = None, seed: int = 0
) -> EvalFn:
    """An ``eval_fn`` for a raw-text folder: its protocol's passes on the entities forgotten so far and on
    those still to come, and its utility (:mod:`unlearnkit.evaluation.probes`).

    Keys, MUSE-like: ``forget_knowmem_f1``, ``forget_verbmem_f1`` (and ``forget_knowmem_fact_recall`` when
    the rows carry ``fact_value``), the same with ``upcoming_``, ``knowmem_retain_f1``; WMDP-like:
    ``forget_hazard_acc``, ``upcoming_hazard_acc``, ``general_acc``. ``model_utility`` = the plan's utility
    number (KnowMem retain, general accuracy). A set without rows for a point is left out. ``plan``:
    None = the benchmark's (:func:`unlearnkit.evaluation.probes.text_plan`). ``max_items``: a seeded
    subsample of each set (None = every row)."""
    from unlearnkit.evaluation.evaluate import subsample
    from unlearnkit.evaluation.probes import ProbeSettings, entity_of, probe_rows, text_plan
    from unlearnkit.protocols.muse import MuseSettings

    plan = plan or text_plan(bench)
    if plan is None:
        raise UserError(
            f"{bench.path}: not a MUSE-like or WMDP-like folder: no protocol to measure requests with"
        )
    st = ProbeSettings(bench, batch_size, MuseSettings(batch_size=batch_size))

    def rows_of(probe, entities) -> list[dict]:
        rows = probe_rows(probe, bench, entities)
        return rows if max_items is None else subsample(rows, max_items, seed)

    def run(
        model, tokenizer, forgotten: Sequence[dict], upcoming: Sequence[dict], step: int
    ) -> dict[str, float]:
        out: dict[str, float] = {}
        for probe in plan.probes:
            if not probe.held_out:
                rows = rows_of(probe, None)
                if rows:
                    out.update(probe.measure(model, tokenizer, rows, st))
                continue
            for prefix, part in (("forget", forgotten), ("upcoming", upcoming)):
                entities = sorted({entity_of(r) for r in part} - {None})
                rows = rows_of(probe, entities) if entities else []
                if rows:
                    values = probe.measure(model, tokenizer, rows, st)
                    out.update({f"{prefix}_{k}": v for k, v in values.items()})
        out = {k: float("nan") if v is None else float(v) for k, v in out.items()}
        out["model_utility"] = out.get(plan.utility, float("nan"))
        return out

    return run


def text_plot_keys(plan) -> tuple[str, ...]:
    """What :func:`plot_curve` draws for a raw-text plan: the headline forgotten / upcoming, the forget
    side's other numbers, the utility."""
    forget = [m.key for p in plan.probes if p.held_out for m in p.metrics]
    return (
        f"forget_{plan.headline}",
        f"upcoming_{plan.headline}",
        *[f"forget_{k}" for k in forget if k != plan.headline],
        "model_utility",
    )


def continual_unlearning(
    model,
    tokenizer,
    bench,
    method: str,
    requests: Sequence[Sequence[dict]],
    eval_fn: EvalFn | None = None,
    *,
    evaluate_start: bool = True,
    work_dir: str | Path | None = None,
    quiet: bool = True,
    progress: bool = False,
    **overrides: Any,
) -> list[dict]:
    """Apply ``requests`` (lists of forget rows) one after another with ``method``; evaluate after each.

    ``bench`` supplies the retain set (``bench.retain``) paired with every request. ``eval_fn`` is
    called as ``eval_fn(model, tokenizer, forgotten=rows_so_far, upcoming=rows_of_later_requests,
    step=i)`` and returns a dict of numbers; None = :func:`tofu_eval_fn` on ``bench`` (on a raw-text
    folder :func:`text_eval_fn`). ``overrides``
    are config keys (``lr=...``, ``epochs=...``) for every request, validated as ``--set``.
    The model is updated in place and the last one is ``curve``'s subject: pass a copy to keep the
    original. ``progress``: one progress bar per request (with the loss). Returns the curve (see the
    module docstring).
    """
    from unlearnkit.pipelines.unlearn import resolve_configs, unlearn

    requests = [list(r) for r in requests]
    if not requests:
        raise UserError("continual unlearning needs at least one forget request")
    empty = [i + 1 for i, r in enumerate(requests) if not r]
    if empty:
        raise UserError(f"forget request(s) {empty} are empty")
    resolve_configs(method, overrides)  # bad keys fail before any training
    if eval_fn is None:
        raw_text = getattr(bench, "kind", None) == "text"
        eval_fn = text_eval_fn(bench) if raw_text else tofu_eval_fn(bench)
    curve: list[dict] = []
    forgotten: list[dict] = []

    def upcoming(after: int) -> list[dict]:
        return [row for req in requests[after:] for row in req]

    if evaluate_start:
        metrics = eval_fn(model, tokenizer, forgotten=[], upcoming=upcoming(0), step=0)
        curve.append({"step": 0, "request_size": 0, "n_forgotten": 0, "train_loss": float("nan"), **metrics})
    with tempfile.TemporaryDirectory(prefix="unlearnkit_continual_") as tmp:
        base = Path(work_dir) if work_dir is not None else Path(tmp)
        for i, request in enumerate(requests, start=1):
            result = unlearn(
                model,
                tokenizer,
                request,
                bench.retain,
                method,
                work_dir=base / f"request_{i:03d}",
                quiet=quiet,
                progress=f"request {i}/{len(requests)}" if progress else None,
                **overrides,
            )
            model = result.model
            forgotten.extend(request)
            metrics = eval_fn(model, tokenizer, forgotten=list(forgotten), upcoming=upcoming(i), step=i)
            curve.append(
                {
                    "step": i,
                    "request_size": len(request),
                    "n_forgotten": len(forgotten),
                    "train_loss": result.train_loss,
                    **metrics,
                }
            )
    return curve


DEFAULT_PLOT_KEYS = (
    "forget_rougeL_recall",
    "forget_prob",
    "upcoming_rougeL_recall",
    "retain_rougeL_recall",
    "model_utility",
)


def plot_curve(
    curve: Sequence[dict], path: str | Path, keys: Sequence[str] | None = None, title: str = ""
) -> Path:
    """Draw ``keys`` of a continual-unlearning curve against the number of forgotten rows; write a PNG.

    Uses matplotlib's Agg canvas directly (no pyplot state, no display needed). Keys missing from
    every point are skipped; NaN values leave gaps.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    if not curve:
        raise UserError("nothing to plot: the curve is empty")
    keys = [k for k in (keys or DEFAULT_PLOT_KEYS) if any(k in point for point in curve)]
    if not keys:
        raise UserError("none of the requested keys is in the curve")
    fig = Figure(figsize=(6.4, 4.0), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    xs = [point.get("n_forgotten", point.get("step", i)) for i, point in enumerate(curve)]
    for key in keys:
        ys = [float(point.get(key, float("nan"))) for point in curve]
        ax.plot(xs, ys, marker="o", label=key)
    ax.set_xlabel("forget rows requested so far")
    ax.set_ylabel("score")
    ax.set_title(title or "continual unlearning")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format="png")
    return path

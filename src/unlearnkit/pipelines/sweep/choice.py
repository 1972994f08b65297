"""Choosing among the trials: their rows, the Pareto front, the refusal when no choice would be honest
(:mod:`unlearnkit.evaluation.selection_noise`; e.g. model utility 0 everywhere) and the rule that chooses."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from unlearnkit.evaluation.selection_noise import all_equal, unmoved
from unlearnkit.pipelines.sweep.settings import FQ_FLOOR, OBJECTIVES, Context
from unlearnkit.pipelines.sweep.space import SPACES_DIR


def trial_rows(study) -> list[dict[str, Any]]:
    rows = []
    for t in study.get_trials(deepcopy=False):
        rows.append(
            {
                "number": t.number,
                "state": t.state.name,
                "params": t.params,
                "values": t.values,
                "selection_metrics": t.user_attrs.get("selection_metrics"),
                "retry_of": t.user_attrs.get("retry_of"),
                "pruned": t.user_attrs.get("pruned"),
                "error": t.user_attrs.get("error"),
                "seconds": t.user_attrs.get("seconds"),
            }
        )
    return rows


def pareto_numbers(rows: Sequence[dict], objectives: Sequence[str]) -> set[int]:
    """Trial numbers on the Pareto front of the complete trials (objective values as searched)."""
    signs = [1.0 if OBJECTIVES[o] == "maximize" else -1.0 for o in objectives]
    done = [r for r in rows if r["state"] == "COMPLETE" and r["values"]]
    front = set()
    for r in done:
        v = [s * x for s, x in zip(signs, r["values"])]
        dominated = False
        for other in done:
            w = [s * x for s, x in zip(signs, other["values"])]
            if all(b >= a for a, b in zip(v, w)) and any(b > a for a, b in zip(v, w)):
                dominated = True
                break
        if not dominated:
            front.add(r["number"])
    return front


UTILITY_PARTS = ("retain", "general", "real_authors", "world_facts")
_LABEL = {
    "forget_quality": "forget quality",
    "model_utility": "model utility",
    "forget_rougeL_recall": "forget ROUGE-L",
    "forget_prob": "forget probability",
    "forget_truth_ratio": "forget truth ratio",
}


def _spread(noise: dict, metric: str, base: float | None, values: Sequence[float]) -> str:
    band = noise.get("bands", {}).get(metric)
    lo, hi = min(values), max(values)
    where = f"{lo:.4g}" if lo == hi else f"{lo:.4g} to {hi:.4g}"
    scale = " (as KS distance)" if metric == "forget_quality" else ""
    text = f"{_LABEL.get(metric, metric)} {where}"
    if base is not None:
        text += f" vs the target's {base:.4g}"
    return text + (f", noise band ±{band:.3g}{scale}" if band is not None else "")


def zero_utility_components(rows: Sequence[dict]) -> list[str]:
    """The utility components that are 0 when model utility is 0 in every row (one zero makes the
    harmonic mean 0), those 0 in the most rows first; [] when some row has utility above 0."""
    if not rows or not all(float(r.get("model_utility", 1.0)) <= 0 for r in rows):
        return []
    keys = [f"{p}_{m}" for p in UTILITY_PARTS for m in ("prob", "rougeL_recall", "truth_ratio")]
    count = {k: sum(1 for r in rows if k in r and r[k] <= 0) for k in keys}
    return sorted((k for k in keys if count[k]), key=lambda k: -count[k])


def _zero_list(rows: Sequence[dict], zeros: Sequence[str]) -> str:
    if all(all(k in r and r[k] <= 0 for r in rows) for k in zeros):
        return f"{', '.join(zeros)} {'is' if len(zeros) == 1 else 'are'} 0"
    n = len(rows)
    return ", ".join(f"{k} is 0 in {sum(1 for r in rows if k in r and r[k] <= 0)} of {n}" for k in zeros)


def _zero_cause(component: str) -> str:
    if component.endswith("truth_ratio"):
        return (
            f"{component} = 0 means the model prefers the perturbed (wrong) answers to the right one on "
            "every item; typical when paraphrased_answer is worded unlike anything the model was trained on "
            "while the perturbed answers share the trained wording: write the paraphrases (and perturbed "
            "answers) in one wording, the one the model was trained on"
        )
    return f"{component} = 0: the model never produces (or never assigns probability to) those answers"


def _widen_advice(ctx: Context) -> str:
    space = ctx.space
    lr = space.params.get("lr")
    where = f"the space {space.source}"
    if lr is not None and lr.choices is None:
        text = (
            f"widen lr: {where} searches lr {lr.low:g} to {lr.high:g}; raise its upper end "
            f"(e.g. to {lr.high * 10:g}) in a --space file"
        )
    elif lr is not None:
        text = f"widen lr: {where} tries lr {lr.choices}; add larger values in a --space file"
    elif "lr" in space.fixed:
        text = f"lr is fixed at {space.fixed['lr']} in {space.source}: search it (params: lr: {{low, high, log: true}})"
    else:
        text = f"search lr in a --space file ({where} leaves it at the model's default)"
    if "epochs" in space.params or "epochs" not in space.fixed:
        text += ", or more epochs"
    return text + f" (format: {SPACES_DIR / 'README.md'})"


def _more_items_advice(ctx: Context) -> str:
    n, cap = len(ctx.selection), ctx.settings.max_items
    if n < cap:
        return (
            f"more forget rows (the selection half has only {n}; the noise band narrows as "
            f"1/sqrt(rows), and --max-items {cap} cannot add rows that are not there)"
        )
    return f"more evaluation items (--max-items, now {cap}, of the selection half's {n} forget rows)"


def refusal(rows: Sequence[dict], ctx: Context) -> str | None:
    """Why no trial may be chosen (or None): the rule of :mod:`unlearnkit.evaluation.selection_noise`.

    * every complete trial left the model where it was (forget metrics within noise of the
      target's): the space does not reach this model's scale; the message names the setting to widen;
    * every complete trial scores equal within noise on every objective: a choice would pick noise;
      the message says what to change (more items, a wider space, a degenerate utility component);
    * model utility is an objective and 0 in every trial (one of its components is 0 everywhere):
      the utility floor then protects nothing, and "the most forgotten" would be chosen blind (issue
      22: the tuned model ended worse than the target); the message names the component and its
      likely cause.
    """
    done = [r for r in rows if r["state"] == "COMPLETE" and r.get("selection_metrics")]
    ref = ctx.reference
    noise = ref.get("noise") or {}
    target = ref.get("target_selection") or {}
    if not done:
        return None
    metrics = [r["selection_metrics"] for r in done]
    objectives = ctx.settings.resolved_objectives()
    zeros = zero_utility_components(metrics) if "model_utility" in objectives else []
    cause = next((k for k in zeros if k.endswith("truth_ratio")), zeros[0] if zeros else "")
    zero_note = (
        f" Model utility is 0 in every trial because {_zero_list(metrics, zeros)} (one zero makes the "
        f"harmonic mean 0): {_zero_cause(cause)}."
        if zeros
        else ""
    )
    if target and all(unmoved(noise, target, m) for m in metrics):
        shown = [
            _spread(noise, k, target[k], [m[k] for m in metrics])
            for k in ("forget_rougeL_recall", "forget_prob", "forget_truth_ratio", "forget_quality")
            if k in target and all(k in m for m in metrics)
        ]
        return (
            f"all {len(done)} complete trials left the model where it was: their forget metrics are within "
            f"noise of the target's on the selection half ({'; '.join(shown)}). No trial is chosen. To change: "
            f"{_widen_advice(ctx)}.{zero_note}"
        )
    if len(done) >= 2 and all_equal(noise, metrics, objectives):
        shown = [_spread(noise, k, None, [m.get(k, float("nan")) for m in metrics]) for k in objectives]
        return (
            f"all {len(done)} complete trials score equal within noise on every objective on the selection "
            f"half ({'; '.join(shown)}): choosing among them would choose noise. No trial is chosen. To "
            f"change: {_more_items_advice(ctx)}, or {_widen_advice(ctx)}." + zero_note
        )
    if zeros:
        others = ",".join(o for o in objectives if o != "model_utility") or "forget_rougeL_recall"
        return (
            f"model utility is 0 in every one of the {len(done)} complete trials because "
            f"{_zero_list(metrics, zeros)} (one zero makes the harmonic mean 0), so no trial can be held to "
            f"a utility floor and the most forgotten would be chosen blind. No trial is chosen. To change: "
            f"{_zero_cause(cause)}; "
            f"or choose on forgetting alone, knowingly: --objective {others}."
        )
    return None


def choose(rows: Sequence[dict], ctx: Context) -> tuple[dict | None, str]:
    """The chosen trial among the Pareto front, and the rule that chose it (selection half only).

    Rule: keep utility >= ``utility_ratio`` x the oracle's (the target's without an oracle); among
    those, the most forgotten (highest forget quality / lowest forget ROUGE). If no trial keeps that
    much utility: the best sum of forgetting progress (0 = the target's value, 1 = the oracle's;
    forget quality on a log scale) and utility ratio.
    """
    objectives = ctx.settings.resolved_objectives()
    front = pareto_numbers(rows, objectives)
    cands = [r for r in rows if r["number"] in front]
    if not cands:
        return None, "no complete trial"
    ref = ctx.reference
    anchor = "oracle" if "oracle_selection" in ref else "target"
    base_util = ref[f"{anchor}_selection"].get("model_utility", float("nan"))
    floor = ctx.settings.utility_ratio * base_util
    forget_key = next((o for o in objectives if o != "model_utility"), objectives[0])
    maximize = OBJECTIVES[forget_key] == "maximize"

    def value(metrics: dict) -> float:
        v = float(metrics.get(forget_key, float("nan")))
        return math.log10(max(v, FQ_FLOOR)) if forget_key == "forget_quality" else v

    def progress(r) -> float:
        start = value(ref["target_selection"])
        goal = value(ref["oracle_selection"]) if "oracle_selection" in ref else (1.0 if maximize else 0.0)
        if goal == start:
            return 0.0
        return min(1.0, max(0.0, (value(r["selection_metrics"]) - start) / (goal - start)))

    def util(r) -> float:
        return float(r["selection_metrics"].get("model_utility", float("nan")))

    if "model_utility" not in objectives:
        best = max(cands, key=progress)
        return best, f"the best {forget_key} on the selection half"
    keep = [r for r in cands if util(r) >= floor]
    if keep:
        best = max(keep, key=lambda r: (value(r["selection_metrics"]) * (1 if maximize else -1), util(r)))
        return best, (
            f"Pareto trial with the best {forget_key} among those keeping model_utility >= "
            f"{ctx.settings.utility_ratio:g} x the {anchor}'s ({floor:.4f}) on the selection half"
        )
    best = max(cands, key=lambda r: progress(r) + util(r) / max(base_util, 1e-9))
    return best, (
        f"no Pareto trial keeps model_utility >= {ctx.settings.utility_ratio:g} x the {anchor}'s "
        f"({floor:.4f}) on the selection half; chosen: the best sum of forgetting progress (target 0, "
        f"{'oracle' if anchor == 'oracle' else 'ideal'} 1) and utility ratio"
    )

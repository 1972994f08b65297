"""Evaluation during unlearning and the best checkpoint (as asked in open-unlearning #82, #94, #187).

``unlearn --eval-every N`` (optimiser steps) or ``--eval-every epoch`` evaluates the model while it
trains, with the benchmark's own protocol, on the **selection half** of every part the score reads
(:func:`unlearnkit.data.halves.split_halves` with the run's seed: the sweep's cut; the test half, the
one to report, is never read):

* question/answer data: the TOFU protocol (:func:`unlearnkit.evaluation.evaluate.evaluate`; forget
  quality when ``--retain-model`` gives the retain oracle, whose truth ratios on the selection half are
  computed once, before training). The holdout split is left out (membership inference would double
  the cost and no objective reads it);
* MUSE-like raw text: :func:`unlearnkit.protocols.muse.evaluate_muse` (PrivLeak against the oracle's
  AUC on the selection half when ``--retain-model`` is given); the in-context examples stay whole;
* WMDP-like folders: :func:`unlearnkit.protocols.wmdp.evaluate_local_mc` on the selection half of each
  multiple-choice task (cut by the rows' ``entity``).

Cheap settings: at most ``eval_max_items`` rows per split (default :data:`DEFAULT_MAX_ITEMS`) and
``eval_max_new_tokens`` generated tokens (default :data:`DEFAULT_MAX_NEW_TOKENS`; MUSE's VerbMem and
KnowMem are capped at it too). The numbers are therefore the selection-half protocol at those
settings, comparable with each other along the curve, not with a full ``unlearnkit eval``.

The curve: step 0 (the model before unlearning, a baseline), every ``N`` steps (``epoch``: every
epoch's last step) and the last step. ``--keep-best OBJECTIVE`` (``forget_quality+model_utility``: a
sum of metric names, each optionally prefixed with ``-`` to minimise it) writes the evaluated state
with the highest objective as the output (step 0 is never chosen: the output is always unlearned;
ties: the earliest). The best state's trainable weights are written to ``WORK/eval_best/`` when found
(a copy of the weights on disk, LoRA: the adapters only) and loaded back at the end.

Several processes: the main process evaluates, the others wait at a barrier (within the process
group's timeout, ``TrainingArguments.ddp_timeout``: 30 minutes). FSDP / ZeRO-3 shard the weights and
are refused. Tested with 2 gloo processes on the TOFU protocol; the WMDP-like path (lm-eval) under
several processes is not tested. Resume: the curve and the best step live in each checkpoint's
``trainer_state.json`` (this callback is an ``ExportableState``); a resumed run continues them.
Evaluation changes nothing in the run (RNG, mode and compute counter are restored around it:
:func:`unlearnkit.train.callback_state.looking_at`).
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from transformers import TrainerCallback
from transformers.trainer_callback import ExportableState

from unlearnkit.errors import UserError
from unlearnkit.train.callback_state import (
    barrier,
    load_trainable_state,
    looking_at,
    stored_attributes,
    trainable_state,
)

EVERY_EPOCH = "epoch"
DEFAULT_MAX_ITEMS = 50
DEFAULT_MAX_NEW_TOKENS = 32
BEST_DIR = "eval_best"
METRICS = ("prob", "rougeL_recall", "truth_ratio", "token_entropy")
# What the curve shows besides the objective's own terms, per protocol.
HEADLINE = {
    "tofu": ("forget_quality", "model_utility", "forget_rougeL_recall", "forget_truth_ratio"),
    "muse": (
        "verbmem_forget_rougeL_f1",
        "knowmem_forget_rougeL_f1",
        "knowmem_retain_rougeL_f1",
        "privleak_min_k_auc",
        "privleak",
    ),
}


# --------------------------------------------------------------------------------------------------
# The objective


def parse_objective(text: str) -> tuple[tuple[int, str], ...]:
    """``"forget_quality+model_utility"`` -> ``((1, "forget_quality"), (1, "model_utility"))``;
    ``-name`` minimises ``name`` (sign -1)."""
    name = r"[A-Za-z_][A-Za-z0-9_.]*"
    if not re.fullmatch(rf"\s*[+-]?\s*{name}(\s*[+-]\s*{name})*\s*", str(text)):
        raise UserError(
            f"--keep-best {text!r}: write a sum of metric names, each optionally with '-' to minimise it, "
            "e.g. forget_quality+model_utility or model_utility-forget_rougeL_recall"
        )
    terms = re.findall(rf"([+-]?)\s*({name})", str(text))
    return tuple((-1 if sign == "-" else 1, term) for sign, term in terms)


def objective_value(terms: Sequence[tuple[int, str]], metrics: dict[str, float]) -> float | None:
    """The objective on ``metrics``; None when a term is missing or not a number."""
    total = 0.0
    for sign, name in terms:
        value = metrics.get(name)
        if value is None or not isinstance(value, int | float) or math.isnan(float(value)):
            return None
        total += sign * float(value)
    return total


# --------------------------------------------------------------------------------------------------
# What is evaluated


def protocol_of(bench) -> str:
    """``tofu`` (QA rows), ``muse`` (MUSE's sets) or ``wmdp`` (local multiple-choice tasks)."""
    from unlearnkit.data.sources import MUSE_SETS

    if getattr(bench, "mc_tasks", None):
        return "wmdp"
    if any(key in (getattr(bench, "extra", None) or {}) for key in MUSE_SETS):
        return "muse"
    if getattr(bench, "kind", "qa") == "qa" and bench.forget and "question" in bench.forget[0]:
        return "tofu"
    name = getattr(bench, "name", "") or str(getattr(bench, "path", ""))
    raise UserError(
        f"--eval-every: {name} is raw text without a protocol to evaluate during training: a MUSE-like "
        "folder (verbmem / knowmem sets), a WMDP-like folder (multiple-choice tasks) or question/answer "
        "rows are needed (wmdp:* is scored by lm-eval from the hub: evaluate after training instead)"
    )


def _has_truth_ratio(rows: Sequence[dict], kind: str) -> bool:
    from unlearnkit.evaluation.evaluate import truth_ratio_key

    correct = truth_ratio_key(rows, kind)
    return bool(rows) and all(correct in r and "perturbed_answer" in r for r in rows)


def known_metrics(bench, has_oracle: bool) -> list[str]:
    """Every metric name the protocol of ``bench`` reports during training (what ``--keep-best`` may use)."""
    protocol = protocol_of(bench)
    if protocol == "wmdp":
        return [f"{task}_acc" for task in bench.mc_tasks]
    if protocol == "muse":
        extra = bench.extra
        names = [
            name
            for name, needs in (
                ("verbmem_forget_rougeL_f1", "verbmem"),
                ("knowmem_forget_rougeL_f1", "knowmem_forget"),
                ("knowmem_retain_rougeL_f1", "knowmem_retain"),
            )
            if extra.get(needs)
        ]
        if extra.get("privleak_forget") and extra.get("privleak_holdout"):
            names.append("privleak_min_k_auc")
            if has_oracle:
                names.append("privleak")
        return names
    rows_of = getattr(bench, "eval_split", bench.split)
    names = ["model_utility"]
    if has_oracle and _has_truth_ratio(rows_of("forget"), "forget"):
        names.insert(0, "forget_quality")
    parts = ["forget", "retain", "general", *(getattr(bench, "general_parts", None) or {})]
    for part in parts:
        kind = part if part in ("forget", "retain", "general") else "general"
        rows = bench.general_parts[part] if kind == "general" and part != "general" else rows_of(part)
        if not rows:
            continue
        names += [f"{part}_{m}" for m in METRICS if m != "truth_ratio" or _has_truth_ratio(rows, kind)]
    names += ["forget_exact_memorisation", "forget_extraction_strength"]
    return names


def parse_every(value) -> int | str:
    """``--eval-every``: a number of optimiser steps (>= 1) or ``epoch``."""
    text = str(value).strip().lower()
    if text == EVERY_EPOCH:
        return EVERY_EPOCH
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise UserError(f"--eval-every {value}: use a number of optimiser steps (>= 1) or 'epoch'")
    return n


@dataclass
class EvalPlan:
    """The selection half, the protocol and its cheap settings; :meth:`evaluate` scores a model on it."""

    protocol: str
    bench: Any  # the selection half, ready for the protocol
    every: int | str
    seed: int
    max_items: int
    max_new_tokens: int
    objective: tuple[tuple[int, str], ...] = ()
    keep_best: str | None = None
    retain_model: str | None = None
    trust_remote_code: bool = False
    split: dict[str, Any] = field(default_factory=dict)
    oracle_trs: list[float] | None = None
    reference_auc: float | None = None
    mc_tasks: dict[str, list[dict]] = field(default_factory=dict)

    def describe(self) -> dict[str, Any]:
        out = {
            "protocol": self.protocol,
            "half": "selection (unlearnkit.data.halves.split_halves; never the test half)",
            "every": self.every,
            "seed": self.seed,
            "max_items": self.max_items,
            "max_new_tokens": self.max_new_tokens,
            "rows": self.split,
        }
        if self.retain_model:
            out["retain_model"] = str(self.retain_model)
        if self.keep_best:
            out["keep_best"] = self.keep_best
        return out

    # --- the protocols ----------------------------------------------------------------------------

    def tofu_settings(self):
        from unlearnkit.evaluation.evaluate import EvalSettings

        return EvalSettings(
            max_new_tokens=self.max_new_tokens, max_items=self.max_items, seed=self.seed, progress=False
        )

    def muse_settings(self):
        from unlearnkit.protocols.muse import MuseSettings

        return MuseSettings(
            verbmem_max_new_tokens=self.max_new_tokens,
            knowmem_max_new_tokens=min(MuseSettings.knowmem_max_new_tokens, self.max_new_tokens),
            max_items=self.max_items,
        )

    def prepare_references(self, device=None) -> None:
        """The oracle's numbers on the selection half (once, before training; main process only)."""
        if not self.retain_model or self.protocol == "wmdp":
            return
        from unlearnkit.models import load

        oracle, tokenizer = load(str(self.retain_model), self.trust_remote_code)
        if device is not None:
            oracle.to(device)
        oracle.eval()
        try:
            if self.protocol == "tofu":
                self.oracle_trs = oracle_truth_ratios(oracle, tokenizer, self.bench, self.tofu_settings())
            else:
                from unlearnkit.protocols.muse import fit_to_model, privleak_auc

                extra = self.bench.extra
                if extra.get("privleak_forget") and extra.get("privleak_holdout"):
                    self.reference_auc, _ = privleak_auc(
                        oracle,
                        tokenizer,
                        [r["text"] for r in extra["privleak_forget"]],
                        [r["text"] for r in extra["privleak_holdout"]],
                        fit_to_model(oracle, self.muse_settings()),
                    )
        finally:
            del oracle

    def evaluate(self, model, tokenizer) -> dict[str, float]:
        """The protocol's metrics of ``model`` on the selection half (numbers only)."""
        if self.protocol == "tofu":
            from unlearnkit.evaluation.evaluate import evaluate

            metrics, _ = evaluate(model, tokenizer, self.bench, self.tofu_settings(), self.oracle_trs)
        elif self.protocol == "muse":
            from unlearnkit.protocols.muse import evaluate_muse, fit_to_model

            st = fit_to_model(model, self.muse_settings())
            metrics, _ = evaluate_muse(model, tokenizer, self.bench, st, self.reference_auc)
        else:
            from unlearnkit.protocols.wmdp import evaluate_local_mc

            style = getattr(self.bench, "mc_style", "letters")
            metrics, _ = evaluate_local_mc(model, tokenizer, self.mc_tasks, style, limit=self.max_items)
        return {k: _number(v) for k, v in metrics.items() if isinstance(v, int | float)}


def _number(value: float) -> float | None:
    value = float(value)
    return None if math.isnan(value) or math.isinf(value) else round(value, 6)


def oracle_truth_ratios(oracle, tokenizer, bench, settings) -> list[float]:
    """The oracle's per-item forget truth ratios on the rows :func:`evaluate` reads with ``settings``
    (the truth ratios do not depend on generation, so one new token is generated)."""
    from unlearnkit.data.encode import PromptFormat
    from unlearnkit.evaluation.evaluate import evaluate_split, select_rows

    rows_of = getattr(bench, "eval_split", bench.split)
    rows = select_rows(rows_of("forget"), settings)
    st = dataclasses.replace(settings, max_new_tokens=1)
    _, details = evaluate_split(
        oracle, tokenizer, PromptFormat.for_settings(tokenizer, st), rows, "forget", st
    )
    return list(details["truth_ratios"])


def _mc_selection(tasks: dict[str, list[dict]], seed: int) -> tuple[dict[str, list[dict]], dict[str, int]]:
    from unlearnkit.data.halves import split_entities

    out, rows = {}, {}
    for task, items in tasks.items():
        entities = [str(r.get("entity") or f"row-{i}") for i, r in enumerate(items)]
        selection, _ = split_entities(entities, seed, f"mc.{task}")
        out[task] = [items[i] for i in selection]
        rows[f"mc.{task}"] = len(out[task])
    return out, rows


def plan_evaluation(
    bench,
    seed: int,
    every,
    keep_best: str | None = None,
    retain_model: str | None = None,
    max_items: int = DEFAULT_MAX_ITEMS,
    max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS,
    trust_remote_code: bool = False,
) -> EvalPlan:
    """Check every evaluation setting (cheap: no model is loaded) and cut the selection half."""
    from unlearnkit.data.halves import split_halves

    every = parse_every(every)
    if max_items < 2:
        raise UserError(f"--eval-max-items {max_items}: must be >= 2")
    if max_new_tokens < 1:
        raise UserError(f"--eval-max-new-tokens {max_new_tokens}: must be >= 1")
    protocol = protocol_of(bench)
    terms: tuple[tuple[int, str], ...] = ()
    if keep_best:
        terms = parse_objective(keep_best)
        known = known_metrics(bench, bool(retain_model))
        unknown = [name for _, name in terms if name not in known]
        if unknown:
            need = ""
            if any(n in ("forget_quality", "privleak") for n in unknown) and not retain_model:
                need = f" ({', '.join(unknown)} needs --retain-model ORACLE)"
            elif "forget_quality" in unknown and protocol == "tofu":
                need = " (forget quality needs paraphrased_answer and perturbed_answer on every forget row)"
            raise UserError(
                f"--keep-best {keep_best}: unknown metric {', '.join(unknown)}{need}; the {protocol} "
                f"protocol here reports {', '.join(known)}"
            )
    selection, _, info = split_halves(bench, seed)
    rows = {part: len(part_info["selection_rows"]) for part, part_info in info.items()}
    mc_tasks: dict[str, list[dict]] = {}
    if protocol == "tofu":
        # as the sweep: no membership inference during training (its generations would double the cost)
        selection = dataclasses.replace(selection, holdout=[])
        rows.pop("holdout", None)
    elif protocol == "muse":
        extra = dict(selection.extra)
        for key, value in bench.extra.items():
            if key.endswith("_icl"):
                extra[key] = value  # in-context examples are a prompt, not rows to score: kept whole
        selection = dataclasses.replace(selection, extra=extra)
    else:
        mc_tasks, mc_rows = _mc_selection(bench.mc_tasks, seed)
        rows.update(mc_rows)
    return EvalPlan(
        protocol=protocol,
        bench=selection,
        every=every,
        seed=seed,
        max_items=max_items,
        max_new_tokens=max_new_tokens,
        objective=terms,
        keep_best=keep_best,
        retain_model=str(retain_model) if retain_model else None,
        trust_remote_code=trust_remote_code,
        split=rows,
        mc_tasks=mc_tasks,
    )


# --------------------------------------------------------------------------------------------------
# The callback


class EvalDuringTraining(TrainerCallback, ExportableState):
    """Evaluates ``plan`` at step 0, every ``plan.every`` steps (or epoch) and at the last step.

    ``work_dir``: the Trainer's output folder (the best weights go to ``work_dir/eval_best``).
    ``steps_per_epoch``: what ``every="epoch"`` means in optimiser steps.
    """

    def __init__(
        self,
        plan: EvalPlan,
        tokenizer,
        work_dir: str | Path,
        steps_per_epoch: int,
        counter=None,
        quiet: bool = False,
    ) -> None:
        self.plan, self.tokenizer, self.counter, self.quiet = plan, tokenizer, counter, quiet
        self.best_dir = Path(work_dir) / BEST_DIR
        self.interval = steps_per_epoch if plan.every == EVERY_EPOCH else int(plan.every)
        self.curve: list[dict[str, Any]] = []
        self.best: dict[str, Any] | None = None
        self.checkpointing = True
        # Trainer.log, set by unlearn(): each evaluation's metrics are logged as ``eval/<name>`` at their
        # step, so log_history.json and the tracker (--report-to tensorboard|wandb) show them
        self.log_to = None

    # --- Trainer hooks ----------------------------------------------------------------------------

    def on_train_begin(self, args, state, control, model=None, **kwargs):
        # Without checkpoints no resume can need an older best: keep one copy of the weights on disk.
        self.checkpointing = str(getattr(args.save_strategy, "value", args.save_strategy)) != "no"
        if state.global_step == 0 and not self.curve:
            self._evaluate(model, state)

    def on_step_end(self, args, state, control, model=None, **kwargs):
        step = state.global_step
        due = step % self.interval == 0 or step >= state.max_steps or control.should_training_stop
        if due and not (self.curve and self.curve[-1]["step"] == step):
            self._evaluate(model, state)

    def on_save(self, args, state, control, **kwargs):
        # The checkpoint just written records the current best: older best weights are not needed by
        # any resume from now on (one from an earlier checkpoint finds its own best file still there).
        if state.is_world_process_zero and self.best is not None:
            self._prune_best(keep=self.best["step"])

    # --- evaluation -------------------------------------------------------------------------------

    def _evaluate(self, model, state) -> None:
        if state.is_world_process_zero:
            step = state.global_step
            with looking_at(model, self.counter):
                metrics = self.plan.evaluate(model, self.tokenizer)
            value = objective_value(self.plan.objective, metrics) if self.plan.objective else None
            entry = {"step": step, "epoch": round(float(state.epoch or 0.0), 4), "metrics": metrics}
            if self.plan.objective:
                entry["objective"] = None if value is None else round(value, 6)
            self.curve.append(entry)
            if self.log_to is not None:
                from unlearnkit.train.trainer import EVAL_LOG_PREFIX

                logged = {f"{EVAL_LOG_PREFIX}{k}": float(v) for k, v in metrics.items() if v is not None}
                if entry.get("objective") is not None:
                    logged[f"{EVAL_LOG_PREFIX}objective"] = entry["objective"]
                self.log_to(logged)
            if self.plan.objective and step > 0 and value is not None:
                if self.best is None or value > self.best["value"]:
                    self._save_best(model, entry)
            if not self.quiet:
                from tqdm import tqdm

                tqdm.write(f"  eval {self.line(entry)}", file=sys.stderr)
        barrier()  # the other processes wait for the main one

    def line(self, entry: dict[str, Any]) -> str:
        shown = ", ".join(f"{name} {_fmt(entry['metrics'].get(name))}" for name in self.shown_metrics())
        objective = f"; objective {_fmt(entry.get('objective'))}" if self.plan.objective else ""
        return f"step {entry['step']} (epoch {entry['epoch']:.2f}): {shown}{objective}"

    def shown_metrics(self) -> list[str]:
        return shown_metrics(self.plan, self.curve)

    def _save_best(self, model, entry: dict[str, Any]) -> None:
        from safetensors.torch import save_file

        self.best_dir.mkdir(parents=True, exist_ok=True)
        path = self.best_dir / f"step-{entry['step']}.safetensors"
        tmp = path.with_suffix(".tmp")
        save_file(trainable_state(model), str(tmp))
        os.replace(tmp, path)
        self.best = {"step": entry["step"], "epoch": entry["epoch"], "value": entry["objective"]}
        if not self.checkpointing:
            self._prune_best(keep=entry["step"])

    def _prune_best(self, keep: int) -> None:
        for path in self.best_dir.glob("step-*.safetensors"):
            if path.name != f"step-{keep}.safetensors":
                path.unlink(missing_ok=True)

    # --- the end ----------------------------------------------------------------------------------

    def finish(self, model) -> dict[str, Any] | None:
        """Main process, after training: with ``keep_best``, load the best state into ``model`` (unless
        it is the last one); returns what the card records about it. Removes ``eval_best``."""
        try:
            if not self.plan.objective:
                return None
            last = self.curve[-1]["step"] if self.curve else None
            if self.best is None:
                return {
                    "objective": self.plan.keep_best,
                    "step": last,
                    "chosen": False,
                    "why": "no finite value",
                }
            if self.best["step"] != last:
                from safetensors.torch import load_file

                path = self.best_dir / f"step-{self.best['step']}.safetensors"
                if not path.is_file():
                    raise UserError(
                        f"--keep-best: the weights of the best step ({self.best['step']}) are missing from "
                        f"{self.best_dir}; rerun without --resume"
                    )
                load_trainable_state(model, load_file(str(path)))
            return {"objective": self.plan.keep_best, **self.best, "last_step": last, "chosen": True}
        finally:
            shutil.rmtree(self.best_dir, ignore_errors=True)

    # --- resume -----------------------------------------------------------------------------------

    def settings(self) -> dict[str, Any]:
        """What must not change between a run and its resume for the curve to stay one curve."""
        plan = self.plan
        keys = ("protocol", "seed", "max_items", "max_new_tokens", "keep_best", "retain_model")
        return {key: getattr(plan, key) for key in keys}

    def state(self) -> dict:
        return {
            "args": {},
            "attributes": {"curve": self.curve, "best": self.best, "settings": self.settings()},
        }

    def restore(self, checkpoint) -> None:
        stored = stored_attributes(checkpoint, type(self).__name__)
        if not stored:
            return
        before = stored.get("settings") or {}
        changed = [
            f"{k} {before[k]!r} -> {v!r}"
            for k, v in self.settings().items()
            if k in before and before[k] != v
        ]
        if changed:
            raise UserError(
                f"--resume: the evaluation settings changed since {Path(checkpoint).name} ({'; '.join(changed)}): "
                "resume with the same --keep-best / --retain-model / --eval-max-* or start over with --overwrite"
            )
        self.curve = list(stored.get("curve") or [])
        self.best = stored.get("best")


def shown_metrics(plan: EvalPlan, curve: Sequence[dict]) -> list[str]:
    """The objective's terms, then the protocol's headline metrics the curve holds."""
    names = [name for _, name in plan.objective]
    present = set().union(*(e["metrics"] for e in curve)) if curve else set()
    if plan.protocol == "wmdp":
        headline = sorted(present)
    else:
        headline = [n for n in HEADLINE[plan.protocol] if n in present]
    return names + [n for n in headline if n not in names]


def card_curve(plan: EvalPlan, curve: Sequence[dict]) -> list[dict[str, Any]]:
    """The curve as the model card shows it: step, epoch, objective and :func:`shown_metrics` only (every
    metric is in ``curve.json``)."""
    names = shown_metrics(plan, curve)
    points = []
    for e in curve:
        point = {"step": e["step"], "epoch": e["epoch"]}
        if "objective" in e:
            point["objective"] = e["objective"]
        point.update({n: e["metrics"].get(n) for n in names})
        points.append(point)
    return points


def _fmt(value) -> str:
    return "n/a" if value is None else f"{value:.4g}"


# --------------------------------------------------------------------------------------------------
# The curve as files and text


def curve_table(curve: Sequence[dict], names: Sequence[str], best_step: int | None = None) -> list[str]:
    """The curve as aligned text lines (the best step marked with ``*``)."""
    has_objective = any("objective" in e for e in curve)
    head = ["step", "epoch", *names] + (["objective"] if has_objective else [])
    rows = []
    for e in curve:
        mark = "*" if best_step is not None and e["step"] == best_step else ""
        cells = [f"{mark}{e['step']}", f"{e['epoch']:.2f}"] + [_fmt(e["metrics"].get(n)) for n in names]
        if has_objective:
            cells.append(_fmt(e.get("objective")))
        rows.append(cells)
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)] if rows else []
    return ["  ".join(c.rjust(w) for c, w in zip(cells, widths)) for cells in [head, *rows]]


def curve_png(curve: Sequence[dict], names: Sequence[str], best_step: int | None, title: str) -> bytes:
    """A plot of ``names`` (and the objective) over the steps, the best step marked; PNG bytes."""
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 3.6), dpi=100)
    steps = [e["step"] for e in curve]
    for name in names:
        ax.plot(steps, [_nan(e["metrics"].get(name)) for e in curve], marker="o", ms=3, label=name)
    if any("objective" in e for e in curve):
        ax.plot(steps, [_nan(e.get("objective")) for e in curve], "k--", marker="s", ms=3, label="objective")
    if best_step is not None:
        ax.axvline(best_step, color="#2ca02c", lw=1, ls=":", label=f"best: step {best_step}")
    ax.set_xlabel("optimiser step")
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return buf.getvalue()


def _nan(value) -> float:
    return float("nan") if value is None else float(value)


def curve_files(
    curve: Sequence[dict], names: Sequence[str], best: dict | None, plan: EvalPlan
) -> dict[str, bytes]:
    """``curve.json`` and ``curve.png`` for the output folder."""
    import json

    best_step = best["step"] if best and best.get("chosen") else None
    doc = {"evaluation": plan.describe(), "best": best, "curve": list(curve)}
    title = f"{plan.protocol} protocol on the selection half" + (
        f"; keep-best {plan.keep_best}" if plan.keep_best else ""
    )
    return {
        "curve.json": (json.dumps(doc, indent=2) + "\n").encode(),
        "curve.png": curve_png(curve, names, best_step, title),
    }

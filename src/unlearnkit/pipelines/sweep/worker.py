"""One trial and the worker that runs trials: a trial's settings (:func:`recipe_values`), the
after-epoch-1 utility probe that prunes, unlearning and scoring on the selection half
(:func:`run_settings`), and the claim-run-tell loop of one worker process (:func:`run_worker`)."""

from __future__ import annotations

import contextlib
import math
import shutil
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from unlearnkit.pipelines.sweep.settings import FQ_FLOOR, Context
from unlearnkit.pipelines.sweep.study import claim, claim_lock, heartbeat, open_study, trial_limit

PROBE_ROWS = 32  # rows of retain and of general used by the after-epoch-1 pruning probe


def recipe_values(ctx: Context, params: dict[str, Any], seed: int | None = None) -> dict[str, Any]:
    """A trial's settings: the model's recorded scale defaults, the space's fixed keys, the params.

    A model made by ``finetune --model tiny`` records its scale's defaults, which ``unlearn`` applies
    under a recipe; trials apply them the same way, so ``unlearn --config best.yaml`` runs exactly the
    chosen trial (and best.yaml spells them out, so it does on any model).
    """
    from unlearnkit.config import ALIASES
    from unlearnkit.models import recorded_defaults

    values = {**ctx.space.fixed, **params}
    recorded = recorded_defaults(ctx.settings.model)
    defaults = {**recorded.get("train", {}), **recorded.get("method", {}).get(ctx.settings.method, {})}
    given = {ALIASES.get(k, k) for k in values}
    used = {k: v for k, v in defaults.items() if k not in given and k != "seed"}
    return {**used, **values, "seed": ctx.settings.seed if seed is None else seed}


class UtilityProxy:
    """Mean answer probability on a few retain and general rows (a cheap, monotone utility proxy)."""

    def __init__(self, bench, seed: int) -> None:
        from unlearnkit.evaluation.evaluate import subsample

        rows = subsample(bench.retain, PROBE_ROWS, seed) + subsample(bench.general, PROBE_ROWS, seed)
        self.questions = [r["question"] for r in rows]
        self.answers = [r["answer"] for r in rows]

    def __call__(self, model, tokenizer) -> float:
        from unlearnkit.data.encode import PromptFormat
        from unlearnkit.metrics.passes import score_answers

        fmt = PromptFormat.for_tokenizer(tokenizer, "auto")
        nll = score_answers(model, tokenizer, fmt, self.questions, self.answers, batch_size=16).nll_mean
        return float(sum(math.exp(-x) for x in nll) / len(nll))


def pruning_callback(probe: UtilityProxy, tokenizer, floor_value: float):
    import optuna
    from transformers import TrainerCallback

    class UtilityFloor(TrainerCallback):
        """After the first epoch: prune when the probe fell below the floor (the trial cannot recover)."""

        checked = False

        def on_epoch_end(self, args, state, control, model=None, **kwargs):
            if self.checked or not state.epoch or state.epoch < 1 - 1e-6:
                return
            self.checked = True
            was_training = model.training
            model.eval()
            value = probe(model, tokenizer)
            model.train(was_training)
            if value < floor_value:
                raise optuna.TrialPruned(
                    f"utility probe {value:.4g} < floor {floor_value:.4g} after epoch {state.epoch:.0f}"
                )

    return UtilityFloor()


@contextlib.contextmanager
def _extra_callback(callback) -> Iterator[None]:
    """Add ``callback`` to every Trainer built inside the block.

    ``unlearn()`` builds its Trainer with a fixed callback list; the HF Trainer prepends the
    module-level ``DEFAULT_CALLBACKS`` to it, so the sweep adds its pruning callback there for the
    duration of one trial (a worker runs one trial at a time).
    """
    import transformers.trainer as hf_trainer

    before = hf_trainer.DEFAULT_CALLBACKS
    hf_trainer.DEFAULT_CALLBACKS = [*before, callback]
    try:
        yield
    finally:
        hf_trainer.DEFAULT_CALLBACKS = before


def run_settings(
    ctx: Context,
    values: dict[str, Any],
    work_dir: Path,
    halves: Sequence[str] = ("selection",),
    prune_below: float | None = None,
    probe: UtilityProxy | None = None,
) -> dict[str, dict[str, float]]:
    """Unlearn the whole forget set with ``values``, evaluate on the named halves; metrics per half."""
    from unlearnkit.evaluation.evaluate import evaluate
    from unlearnkit.models import load, resolve_placement
    from unlearnkit.pipelines.unlearn import unlearn

    st = ctx.settings
    placement = resolve_placement(st.model, st.device, st.dtype, str(values.get("precision", "auto")))
    values = {**values, "precision": placement.precision}
    model, tok = load(st.model, st.trust_remote_code, dtype=placement.torch_dtype)
    callback = (
        pruning_callback(probe, tok, prune_below) if prune_below is not None and probe is not None else None
    )
    shutil.rmtree(work_dir, ignore_errors=True)
    try:
        with _extra_callback(callback) if callback else contextlib.nullcontext():
            res = unlearn(
                model,
                tok,
                ctx.bench.forget,
                ctx.bench.retain,
                st.method,
                model_path=st.model,
                work_dir=work_dir / "train",
                quiet=True,
                attribution_dir=work_dir / "attribution",
                **values,
            )
        out = {}
        for half in halves:
            oracle_trs = ctx.reference.get(f"oracle_{half}_trs")
            metrics, _ = evaluate(res.model, tok, ctx.half(half), ctx.eval_settings(), oracle_trs)
            out[half] = metrics
        return out
    finally:
        shutil.rmtree(work_dir, ignore_errors=True)


def objective_values(ctx: Context, metrics: dict[str, float]) -> list[float]:
    values = []
    for name in ctx.settings.resolved_objectives():
        v = float(metrics.get(name, float("nan")))
        if name == "forget_quality" and not math.isnan(v):
            v = math.log10(max(v, FQ_FLOOR))
        values.append(v)
    return values


HEADLINE = (
    "forget_quality",
    "model_utility",
    "forget_rougeL_recall",
    "forget_prob",
    "forget_truth_ratio",
    "forget_exact_memorisation",
    "forget_extraction_strength",
    "forget_quality_n",  # the forget items the KS test read: a half's count, never the whole benchmark's
    # the components of model utility: a refusal names the one that is degenerate
    *(f"{part}_{m}" for part in ("retain", "general") for m in ("prob", "rougeL_recall", "truth_ratio")),
    *(
        f"{part}_{m}"
        for part in ("real_authors", "world_facts")
        for m in ("prob", "rougeL_recall", "truth_ratio")
    ),
)


def headline(metrics: dict[str, float]) -> dict[str, float]:
    return {k: metrics[k] for k in HEADLINE if k in metrics}


def run_worker(ctx: Context, worker: int = 0, log: Callable[[str], None] = print) -> int:
    """Claim and run trials until the study has ``--trials`` of them (or the budget is spent)."""
    import optuna
    from optuna.trial import TrialState

    from unlearnkit.train.trainer import DivergenceError

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
    study = open_study(ctx)
    limit = trial_limit(ctx)
    deadline = time.time() + 60 * ctx.settings.budget_minutes if ctx.settings.budget_minutes else None
    probe = UtilityProxy(ctx.selection_bench, ctx.settings.seed)  # pruning is a choice: selection rows
    floor_value = ctx.settings.prune_floor * ctx.reference["target_probe"]
    ran = 0
    while deadline is None or time.time() < deadline:
        claimed = claim(ctx, study, worker, limit)
        if claimed is None:
            break
        trial, params = claimed
        t0 = time.time()
        work = ctx.out / ".work" / f"trial-{trial.number}"
        try:
            with heartbeat(study, trial._trial_id):
                metrics = run_settings(
                    ctx,
                    recipe_values(ctx, params),
                    work,
                    prune_below=floor_value if ctx.settings.prune_floor > 0 else None,
                    probe=probe,
                )["selection"]
        except optuna.TrialPruned as why:
            trial.set_user_attr("pruned", str(why))
            trial.set_user_attr("seconds", round(time.time() - t0, 1))
            study.tell(trial, state=TrialState.PRUNED)
            log(f"  trial {trial.number}: pruned ({why})")
            ran += 1
            continue
        except DivergenceError as err:
            trial.set_user_attr("pruned", f"diverged: {err}")
            trial.set_user_attr("seconds", round(time.time() - t0, 1))
            study.tell(trial, state=TrialState.PRUNED)
            log(f"  trial {trial.number}: pruned (diverged)")
            ran += 1
            continue
        except KeyboardInterrupt:
            # Interrupted, not wrong: like a killed worker, its parameters run again on the next start.
            with contextlib.suppress(Exception), claim_lock(ctx):
                study.tell(trial, state=TrialState.FAIL)
                study.enqueue_trial(params, user_attrs={"retry_of": trial.number}, skip_if_exists=False)
            raise
        except BaseException as err:
            # A genuine error: recorded, not retried (it would fail again); the user sees it.
            with contextlib.suppress(Exception):
                trial.set_user_attr("error", f"{type(err).__name__}: {err}"[:500])
                study.tell(trial, state=TrialState.FAIL)
            raise
        trial.set_user_attr("selection_metrics", headline(metrics))
        trial.set_user_attr("seconds", round(time.time() - t0, 1))
        values = objective_values(ctx, metrics)
        if any(math.isnan(v) for v in values):
            trial.set_user_attr("pruned", "an objective is NaN")
            study.tell(trial, state=TrialState.PRUNED)
        else:
            study.tell(trial, values)
        ran += 1
        log(
            f"  trial {trial.number} ({time.time() - t0:.0f}s): "
            + ", ".join(
                f"{k} {v:.4g}"
                for k, v in headline(metrics).items()
                if k in ctx.settings.resolved_objectives()
            )
            + " [selection half]"
        )
    return ran

"""``unlearnkit sweep``: search a method's settings with Optuna, honestly and resumably.

How a sweep runs (``run_sweep``):

1. **Honest split.** The forget set is cut, deterministically (seeded), into a *selection* half and a
   *test* half by entity: rows of one author never straddle the halves (``forget_entities``). Every
   trial unlearns the *whole* forget set (what a user would do), but is scored on the selection half
   only; the chosen settings are then re-run and reported on the test half, which no choice has seen.
   A selection score is never reported as a result.
2. **Study.** One Optuna study in ``DIR/study.db`` (SQLite): multi-objective TPE, or the grid sampler
   when the search space is a finite grid. Objectives default to ``forget_quality`` (KS p-value against
   the retain oracle; searched as ``log10`` because useful values span 30 orders of magnitude) and
   ``model_utility``; without an oracle ``forget_rougeL_recall`` (down) and ``model_utility`` (up).
3. **Workers.** ``--jobs J`` processes claim trials from the same study. A claim (count, ``ask``) runs
   under a file lock, so J workers finish with exactly ``--trials`` trials. A worker records its pid
   and process start time on each trial; a RUNNING trial whose process is gone (killed) is marked
   FAIL and its parameters are enqueued again, so rerunning the same command after a crash continues
   the study without losing or duplicating a trial.
4. **Pruning.** After the first epoch, a cheap probe (mean answer probability on a few retain and
   general rows) is compared with the target's; below ``prune_floor`` x the target the trial is pruned.
5. **Outputs.** ``best.yaml`` (a recipe for ``unlearn --config``), ``trials.jsonl``, ``pareto.png``,
   ``report.html`` and ``summary.json`` (the test-half numbers), each written atomically.

Where each step lives: :mod:`~unlearnkit.pipelines.sweep.space` (search spaces),
:mod:`~unlearnkit.pipelines.sweep.split` (the honest split), :mod:`~unlearnkit.pipelines.sweep.settings`
(settings, objectives, the loaded context), :mod:`~unlearnkit.pipelines.sweep.storage` and
:mod:`~unlearnkit.pipelines.sweep.study` (the shared study, locks, claims, stale trials),
:mod:`~unlearnkit.pipelines.sweep.worker` (one trial, pruning, the worker loop),
:mod:`~unlearnkit.pipelines.sweep.reference` (target and oracle numbers),
:mod:`~unlearnkit.pipelines.sweep.choice` (Pareto front, refusal, choice),
:mod:`~unlearnkit.pipelines.sweep.outputs` (best.yaml, report, summary) and
:mod:`~unlearnkit.pipelines.sweep.run` (the command and its worker processes). This package re-exports
their public names.
"""

from unlearnkit.pipelines.sweep.choice import (
    UTILITY_PARTS,
    choose,
    pareto_numbers,
    refusal,
    trial_rows,
    zero_utility_components,
)
from unlearnkit.pipelines.sweep.outputs import (
    best_recipe_text,
    finalize,
    finalize_blocker,
    plot_pareto,
    render_report,
)
from unlearnkit.pipelines.sweep.reference import ensure_reference
from unlearnkit.pipelines.sweep.run import (
    PR_SET_PDEATHSIG,
    SETTINGS_ENV,
    check_output,
    die_with_parent,
    run_sweep,
    start,
    worker_command,
)
from unlearnkit.pipelines.sweep.settings import (
    FQ_FLOOR,
    GOAL_FORGET_QUALITY,
    GOAL_UTILITY_RATIO,
    OBJECTIVES,
    Context,
    SweepSettings,
    load_context,
    validate_settings,
)
from unlearnkit.pipelines.sweep.space import (
    SPACES_DIR,
    Param,
    SearchSpace,
    load_space,
    model_scale,
    space_file,
)
from unlearnkit.pipelines.sweep.split import forget_entities, split_forget, split_summary
from unlearnkit.pipelines.sweep.storage import (
    STORAGE_KINDS,
    redacted,
    storage_kind,
    storage_url,
    study_location,
)
from unlearnkit.pipelines.sweep.study import (
    HEARTBEAT_SECONDS,
    STALE_AFTER_SECONDS,
    STUDY_NAME,
    claim,
    claim_lock,
    counted,
    heartbeat,
    open_study,
    recover_stale,
    study_lock,
    study_name,
    trial_limit,
)
from unlearnkit.pipelines.sweep.worker import (
    HEADLINE,
    PROBE_ROWS,
    headline,
    objective_values,
    recipe_values,
    run_settings,
    run_worker,
)

__all__ = [
    "Context",
    "FQ_FLOOR",
    "GOAL_FORGET_QUALITY",
    "GOAL_UTILITY_RATIO",
    "HEADLINE",
    "HEARTBEAT_SECONDS",
    "OBJECTIVES",
    "PROBE_ROWS",
    "PR_SET_PDEATHSIG",
    "Param",
    "SETTINGS_ENV",
    "SPACES_DIR",
    "STALE_AFTER_SECONDS",
    "STORAGE_KINDS",
    "STUDY_NAME",
    "SearchSpace",
    "SweepSettings",
    "UTILITY_PARTS",
    "best_recipe_text",
    "check_output",
    "choose",
    "claim",
    "claim_lock",
    "counted",
    "die_with_parent",
    "ensure_reference",
    "finalize",
    "finalize_blocker",
    "forget_entities",
    "headline",
    "heartbeat",
    "load_context",
    "load_space",
    "model_scale",
    "objective_values",
    "open_study",
    "pareto_numbers",
    "plot_pareto",
    "recipe_values",
    "recover_stale",
    "redacted",
    "refusal",
    "render_report",
    "run_settings",
    "run_sweep",
    "run_worker",
    "space_file",
    "split_forget",
    "split_summary",
    "start",
    "storage_kind",
    "storage_url",
    "study_location",
    "study_lock",
    "study_name",
    "trial_limit",
    "trial_rows",
    "validate_settings",
    "worker_command",
    "zero_utility_components",
]

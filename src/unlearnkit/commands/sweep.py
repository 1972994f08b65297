"""``unlearnkit sweep``: Optuna search of one method's settings, resumable, scored honestly.

The pipeline is ``unlearnkit.pipelines.sweep`` (its docstring explains the selection/test split, the study,
the workers and the outputs); this module only parses the flags. Exit codes: 0 done (or this worker's
share of a shared study done), 2 bad input, 4 (``EXIT_NO_CHOICE``) when the sweep refuses to choose (every trial equal
within noise, or none moved the model: the message says what to change; no best.yaml).
"""

from __future__ import annotations

import argparse
import sys

from unlearnkit.commands._common import add_placement_flags, add_trust_remote_code, check_placement_flags

EXIT_NO_CHOICE = 4  # the sweep ran but refuses to choose (0 ok, 2 bad input, 3 diverged)


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "sweep",
        help="search a method's settings (Optuna, resumable); DIR/best.yaml is a recipe for unlearn",
        description=(
            "Trials unlearn the whole forget set and are scored on a selection half of it (split by "
            "entity); the chosen settings are reported on the held-out test half. Rerun the same "
            "command to resume an interrupted sweep."
        ),
    )
    p.add_argument("--model", required=True, help="model folder (or HF id) to unlearn from: the target")
    p.add_argument("--data", required=True, help="benchmark folder, or a name such as tofu:forget10")
    p.add_argument("--method", required=True, help="method to tune, e.g. asu, npo, t-npo, gd")
    p.add_argument("--output", required=True, help="sweep folder: study.db, best.yaml, report.html ...")
    p.add_argument(
        "--storage",
        default=None,
        help="Optuna storage URL of the study (default: sqlite:///OUTPUT/study.db); a PostgreSQL or MySQL "
        "URL (postgresql://USER:PASSWORD@HOST/DB) lets sweeps on several machines share one study",
    )
    p.add_argument(
        "--retain-model",
        default=None,
        help="retain-oracle model folder; needed for the default forget_quality objective",
    )
    p.add_argument(
        "--trials", type=int, default=20, help="trials in the study in total (default: %(default)s)"
    )
    p.add_argument(
        "--space",
        default=None,
        help="search-space YAML (default: the method's file shipped in unlearnkit/resources/spaces, at the "
        "model's scale: spaces/tiny/ for a model that records a tiny recipe, else the papers' ranges)",
    )
    p.add_argument(
        "--objective",
        default=None,
        help="comma-separated metrics to optimise (default: forget_quality,model_utility with "
        "--retain-model, else forget_rougeL_recall,model_utility)",
    )
    p.add_argument("--jobs", type=int, default=1, help="worker processes on the study (default: %(default)s)")
    p.add_argument(
        "--seed", type=int, default=0, help="seed of the split, samplers and training (default: 0)"
    )
    p.add_argument(
        "--max-items", type=int, default=200, help="evaluation items per split (default: %(default)s)"
    )
    p.add_argument(
        "--max-new-tokens", type=int, default=48, help="greedy generation length (default: %(default)s)"
    )
    p.add_argument(
        "--prune-floor",
        type=float,
        default=0.5,
        help="prune a trial whose utility probe after epoch 1 is below this x the target's; 0 = never "
        "(default: %(default)s)",
    )
    p.add_argument(
        "--utility-ratio",
        type=float,
        default=0.98,
        help="choose the most forgotten Pareto trial keeping utility >= this x the oracle's (default: 0.98)",
    )
    p.add_argument(
        "--budget-minutes",
        type=float,
        default=None,
        help="stop starting new trials after this many minutes (resume later with the same command)",
    )
    add_placement_flags(p)
    add_trust_remote_code(p)


def run(args: argparse.Namespace) -> int:
    from unlearnkit.pipelines.sweep import SweepSettings, run_sweep

    check_placement_flags(args)
    objectives = tuple(x.strip() for x in (args.objective or "").split(",") if x.strip())
    settings = SweepSettings(
        model=args.model,
        data=args.data,
        method=args.method,
        output=args.output,
        retain_model=args.retain_model,
        trials=args.trials,
        space=args.space,
        objectives=objectives,
        jobs=args.jobs,
        seed=args.seed,
        max_items=args.max_items,
        max_new_tokens=args.max_new_tokens,
        prune_floor=args.prune_floor,
        utility_ratio=args.utility_ratio,
        budget_minutes=args.budget_minutes,
        trust_remote_code=args.trust_remote_code,
        storage=args.storage,
        device=args.device,
        dtype=args.dtype,
    )
    summary = run_sweep(settings)
    if not summary.get("finalized", True):
        print(f"this worker's trials are done; {summary['note']}")
        return 0
    if summary.get("refused"):
        # Ran to the end, but there is nothing honest to choose: no best.yaml, and not exit 0.
        print(f"sweep refused to choose: {summary['refused']}", file=sys.stderr)
        print(f"wrote {args.output}/trials.jsonl, pareto.png, report.html, summary.json (no best.yaml)")
        return EXIT_NO_CHOICE
    test = summary.get("test", {})
    print(
        f"chosen trial {summary.get('chosen_trial')} ({summary['rule']}); "
        "measured on the held-out TEST halves (forget, retain, general):"
    )
    for name, metrics in test.items():
        print(
            f"  {name:22s} "
            + ", ".join(
                f"{k} {metrics[k]:.4g}"
                for k in ("forget_quality", "model_utility", "forget_rougeL_recall")
                if k in metrics
            )
        )
    for warning in summary.get("warnings", []):
        print(f"warning: {warning}", file=sys.stderr)
    print(f"wrote {args.output}/best.yaml, trials.jsonl, pareto.png, report.html, summary.json")
    return 0

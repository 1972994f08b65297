"""``unlearnkit sweep``: Optuna search of one method's settings, resumable, scored honestly.

The pipeline is ``unlearnkit.pipelines.sweep`` (its docstring explains the selection/test split, the study,
the workers and the outputs); this module only parses the flags. Exit codes: 0 done (or this worker's
share of a shared study done), 2 bad input, 4 (``EXIT_NO_CHOICE``) when the sweep refuses to choose (every trial equal
within noise, or none moved the model: the message says what to change; no best.yaml).
"""

from __future__ import annotations

import argparse
import sys

from unlearnkit.commands._common import (
    add_command,
    add_output,
    add_placement_flags,
    add_trust_remote_code,
    check_placement_flags,
    runtime_group,
)

EXIT_NO_CHOICE = 4  # the sweep ran but refuses to choose (0 ok, 2 bad input, 3 diverged)


def add_parser(subparsers) -> None:
    p = add_command(
        subparsers,
        "sweep",
        "search a method's settings (Optuna); DIR/best.yaml is a recipe",
        [
            "unlearnkit sweep --model target --data bench --method asu --retain-model oracle --output sweep_asu "
            "--trials 8",
            "unlearnkit unlearn --model target --data bench --config sweep_asu/best.yaml --output asu_tuned",
        ],
        details="Trials unlearn the whole forget set and are scored on a selection half of it (split by "
        "entity); the chosen settings are reported on the held-out test half. Rerun the same command "
        "to resume an interrupted sweep. See docs/sweep.md.",
    )
    req = p.add_argument_group("required")
    req.add_argument("--model", required=True, metavar="MODEL", help="the target: model folder or HF id")
    req.add_argument(
        "--data", required=True, metavar="DATA", help="benchmark folder, or a name such as tofu:forget10"
    )
    req.add_argument(
        "--method", required=True, metavar="NAME", help="method to tune, e.g. asu, npo, t-npo, gd"
    )
    add_output(req, "sweep folder: study.db, best.yaml, report.html ...")
    task = p.add_argument_group("task")
    task.add_argument(
        "--retain-model",
        default=None,
        metavar="MODEL",
        help="the retain oracle; needed for the default forget_quality objective",
    )
    task.add_argument(
        "--trials",
        type=int,
        default=20,
        metavar="N",
        help="trials in the study in total (default: %(default)s)",
    )
    task.add_argument(
        "--space",
        default=None,
        metavar="FILE",
        help="search-space YAML (default: the method's shipped space at the model's scale)",
    )
    task.add_argument(
        "--objective",
        default=None,
        metavar="METRICS",
        help="comma-separated metrics to optimise (default: forget_quality,model_utility with --retain-model)",
    )
    task.add_argument(
        "--max-items",
        type=int,
        default=200,
        metavar="N",
        help="evaluation items per split (default: %(default)s)",
    )
    task.add_argument(
        "--max-new-tokens",
        type=int,
        default=48,
        metavar="N",
        help="greedy generation length (default: %(default)s)",
    )
    task.add_argument(
        "--prune-floor",
        type=float,
        default=0.5,
        metavar="X",
        help="prune a trial whose utility after epoch 1 is below X times the target's; 0: never "
        "(default: %(default)s)",
    )
    task.add_argument(
        "--utility-ratio",
        type=float,
        default=0.98,
        metavar="X",
        help="choose the most forgotten Pareto trial keeping utility >= X times the oracle's (default: 0.98)",
    )
    task.add_argument(
        "--budget-minutes",
        type=float,
        default=None,
        metavar="N",
        help="stop starting new trials after N minutes (resume later with the same command)",
    )
    rt = runtime_group(p)
    rt.add_argument(
        "--seed",
        type=int,
        default=0,
        metavar="N",
        help="seed of the split, samplers and training (default: 0)",
    )
    rt.add_argument(
        "--jobs",
        type=int,
        default=1,
        metavar="N",
        help="worker processes on the study (default: %(default)s)",
    )
    rt.add_argument(
        "--storage",
        default=None,
        metavar="URL",
        help="Optuna storage of the study (default: sqlite:///DIR/study.db); a PostgreSQL URL shares it "
        "between machines",
    )
    add_placement_flags(rt)
    add_trust_remote_code(rt)


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

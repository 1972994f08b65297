"""``unlearnkit continual``: forget requests one after another (e.g. forget01 x 10), the curve after each."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from unlearnkit.commands._common import (
    add_command,
    add_output,
    add_overwrite,
    add_placement_flags,
    add_set,
    add_training_flags,
    add_trust_remote_code,
    apply_model_defaults,
    apply_training_flags,
    check_combinations,
    check_data,
    check_placement_flags,
    load_data,
    note,
    overrides,
    placement_of,
    print_placement,
    runtime_group,
    torch_threads,
    training_choices,
    training_record,
)
from unlearnkit.errors import UserError


def add_parser(subparsers) -> None:
    c = add_command(
        subparsers,
        "continual",
        "forget requests one after another, each evaluated: a curve",
        ["unlearnkit continual --model target --data bench --method npo --requests 10 --output continual"],
        details="The forget set is cut into --requests parts; the model unlearns them in order and is "
        "evaluated after each.",
    )
    req = c.add_argument_group("required")
    req.add_argument("--model", required=True, metavar="MODEL", help="model folder or HF id to unlearn from")
    req.add_argument(
        "--data",
        required=True,
        metavar="DATA",
        help="benchmark folder or name; its forget set is cut into requests",
    )
    req.add_argument("--method", required=True, metavar="NAME", help="method name (see `unlearnkit methods`)")
    add_output(req, "folder for curve.json, curve.png and the final model")
    task = c.add_argument_group("task")
    task.add_argument(
        "--requests",
        type=int,
        default=5,
        metavar="N",
        help="number of forget requests (default: %(default)s)",
    )
    task.add_argument("--config", default=None, metavar="FILE", help="YAML recipe; --set wins over it")
    add_set(task, "override for every request, e.g. --set lr=1e-5 epochs=2")
    task.add_argument(
        "--max-new-tokens",
        type=int,
        default=64,
        metavar="N",
        help="generation length of the evaluations (QA data; raw-text folders use MUSE's 128 / 32)",
    )
    rt = runtime_group(c)
    add_overwrite(rt)
    add_placement_flags(rt)
    add_training_flags(rt)
    add_trust_remote_code(rt)


def run(args: argparse.Namespace) -> int:
    from unlearnkit.catalog import normalise
    from unlearnkit.commands.settings_doc import method_config
    from unlearnkit.config import build_configs
    from unlearnkit.io import check_output_dir
    from unlearnkit.models import check_model_path

    values = overrides(args, lambda: method_config(args.method))
    apply_training_flags(args, values)
    check_placement_flags(args)
    values, defaults_note = apply_model_defaults(args.model, normalise(args.method), values)
    train_cfg, _ = build_configs(method_config(args.method), values)
    check_combinations(train_cfg)
    if args.max_new_tokens < 1:
        raise UserError(f"--max-new-tokens {args.max_new_tokens}: must be >= 1")
    check_output_dir(args.output, args.overwrite)
    bench = check_data(args.data, eval_fields=True)
    if bench is not None:
        plan = text_setup(bench, args.data)
        requests_of(bench, plan, args.requests)  # checks --requests against the forget set now
    check_model_path(args.model)
    if defaults_note:
        note(defaults_note)

    from unlearnkit.evaluation.evaluate import EvalSettings
    from unlearnkit.io import atomic_dir, write_json
    from unlearnkit.models import load, save_model
    from unlearnkit.pipelines.continual import (
        DEFAULT_PLOT_KEYS,
        continual_unlearning,
        plot_curve,
        text_eval_fn,
        text_plot_keys,
        tofu_eval_fn,
    )
    from unlearnkit.pipelines.unlearn import resolve_configs

    method, train_cfg, method_cfg = resolve_configs(args.method, values)
    bench = load_data(args.data, bench, eval_fields=True)
    plan = text_setup(bench, args.data)
    if plan is not None and (method.needs_idk(method_cfg) or method.token_level):
        raise UserError(
            f"{method.name} needs question/answer rows (a refusal or token scores per answer); "
            f"--data {args.data} has raw 'text' rows: use e.g. ga, npo, asu or rmu"
        )
    requests = requests_of(bench, plan, args.requests)
    placement = placement_of(args, args.model, train_cfg.precision)
    values["precision"] = placement.precision
    method, train_cfg, method_cfg = resolve_configs(args.method, values)
    torch_threads()
    model, tokenizer = load(args.model, args.trust_remote_code, dtype=placement.torch_dtype)
    print_placement(placement, training_choices(train_cfg))
    if plan is None:
        eval_fn = tofu_eval_fn(bench, EvalSettings(max_new_tokens=args.max_new_tokens, progress=False))
        plot_keys = DEFAULT_PLOT_KEYS
    else:
        note(
            f"{plan.what}: each request forgets whole {plan.unit}s; every point is measured with the "
            "benchmark's protocol (" + ", ".join(p.source for p in plan.probes) + ")"
        )
        eval_fn, plot_keys = text_eval_fn(bench, plan), text_plot_keys(plan)
    curve = continual_unlearning(
        model, tokenizer, bench, method.name, requests, eval_fn, quiet=True, progress=True, **values
    )
    with atomic_dir(args.output, overwrite=args.overwrite) as tmp:
        write_json(tmp / "curve.json", curve)
        plot_curve(
            curve,
            tmp / "curve.png",
            keys=plot_keys,
            title=f"continual unlearning: {method.name}, {args.requests} requests",
        )
    save_model(
        model,
        tokenizer,
        Path(args.output) / "model",
        {
            "kind": f"continual unlearning ({method.name})",
            "base_model": args.model,
            "data": str(args.data),
            "requests": args.requests,
            "config": values,
            "placement": training_record(placement, train_cfg),
        },
        overwrite=True,
    )
    columns = CURVE_COLUMNS if plan is None else text_columns(plan)
    for point in curve:
        print(curve_line(point, columns))
    return 0


def text_setup(bench, data):
    """The raw-text plan of ``bench`` (None for QA data); a one-line UserError for raw text that the
    continual pipeline cannot measure (plain passages, WMDP corpora, MUSE without entities)."""
    from unlearnkit.evaluation.probes import text_plan

    if getattr(bench, "kind", None) != "text":
        return None
    plan = text_plan(bench)
    if plan is None:
        raise UserError(
            f"--data {data}: raw text without a protocol to measure requests with; continual unlearning on "
            "raw text needs a MUSE-like or WMDP-like folder (`unlearnkit world` writes WORLD/muse and "
            "WORLD/wmdp), or use a question-answer folder"
        )
    problem = plan.problem(bench, min_entities=1)
    if problem:
        raise UserError(
            f"--data {data}: {problem}; continual unlearning on {plan.what} forgets whole {plan.unit}s "
            "per request (use the folder `unlearnkit world` writes, or a question-answer folder)"
        )
    return plan


def requests_of(bench, plan, k: int) -> list[list[dict]]:
    """The forget set cut into ``k`` requests: consecutive rows (QA), whole entities (raw text)."""
    from unlearnkit.pipelines.continual import split_requests, split_requests_by_entity

    if plan is None:
        return split_requests(bench.forget, k)
    return split_requests_by_entity(bench.forget, k, plan.unit)


CURVE_COLUMNS = (
    ("forget_rougeL_recall", "forget ROUGE"),
    ("upcoming_rougeL_recall", "upcoming ROUGE"),
    ("model_utility", "utility"),
)


def text_columns(plan) -> tuple[tuple[str, str], ...]:
    """The printed columns of a raw-text curve: the headline forgotten / upcoming, and the utility."""
    label = plan.metric(plan.headline).label.removesuffix(" ROUGE-L F1")
    return (
        (f"forget_{plan.headline}", f"forget {label}"),
        (f"upcoming_{plan.headline}", f"upcoming {label}"),
        ("model_utility", plan.metric(plan.utility).label.removesuffix(" ROUGE-L F1")),
    )


def curve_line(point: dict, columns: tuple[tuple[str, str], ...] = CURVE_COLUMNS) -> str:
    """One line per evaluation; a number that does not exist yet (no forget row before the first
    request) is left out rather than printed as nan."""
    parts = [f"step {point['step']:3d}: forgotten {point['n_forgotten']:4d}"]
    for key, label in columns:
        value = point.get(key)
        if isinstance(value, (int, float)) and not math.isnan(value):
            parts.append(f"{label} {value:.3f}")
    if point["step"] == 0:
        parts.append("(before the first request)")
    return "  ".join(parts)

"""``unlearnkit continual``: forget requests one after another (e.g. forget01 x 10), the curve after each."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from unlearnkit.commands._common import (
    add_trust_remote_code,
    apply_model_defaults,
    check_combinations,
    check_data,
    load_data,
    note,
    overrides,
    torch_threads,
)
from unlearnkit.errors import UserError


def add_parser(subparsers) -> None:
    c = subparsers.add_parser(
        "continual", help="a sequence of forget requests applied one after another, evaluated after each"
    )
    c.add_argument("--model", required=True, help="model folder (or HF id) to unlearn from")
    c.add_argument(
        "--data", required=True, help="benchmark folder or name; its forget set is cut into requests"
    )
    c.add_argument("--method", required=True, help="method name (see `unlearnkit methods`)")
    c.add_argument("--requests", type=int, default=5, help="number of forget requests (default: %(default)s)")
    c.add_argument("--output", required=True, help="folder for curve.json, curve.png and the final model")
    c.add_argument("--config", default=None, help="YAML recipe; --set wins over it")
    c.add_argument("--set", action="append", metavar="KEY=VALUE", help="override for every request")
    c.add_argument("--max-new-tokens", type=int, default=64, help="generation length of the evaluations")
    c.add_argument("--overwrite", action="store_true", help="replace an existing --output folder")
    add_trust_remote_code(c)


def run(args: argparse.Namespace) -> int:
    from unlearnkit.commands._methods import method_config, normalise
    from unlearnkit.config import build_configs
    from unlearnkit.io import check_output_dir
    from unlearnkit.models import check_model_path
    from unlearnkit.train.continual import split_requests

    values = overrides(args, lambda: method_config(args.method))
    values, defaults_note = apply_model_defaults(args.model, normalise(args.method), values)
    train_cfg, _ = build_configs(method_config(args.method), values)
    check_combinations(train_cfg)
    if args.max_new_tokens < 1:
        raise UserError(f"--max-new-tokens {args.max_new_tokens}: must be >= 1")
    check_output_dir(args.output, args.overwrite)
    bench = check_data(args.data, eval_fields=True)
    if bench is not None:
        split_requests(bench.forget, args.requests)  # checks --requests against the forget set now
    check_model_path(args.model)
    if defaults_note:
        note(defaults_note)

    from unlearnkit.evaluation.evaluate import EvalSettings
    from unlearnkit.io import atomic_dir, write_json
    from unlearnkit.models import load, save_model
    from unlearnkit.train.continual import continual_unlearning, plot_curve, tofu_eval_fn
    from unlearnkit.unlearn import resolve_configs

    method, train_cfg, method_cfg = resolve_configs(args.method, values)
    bench = load_data(args.data, bench, eval_fields=True)
    requests = split_requests(bench.forget, args.requests)
    torch_threads()
    model, tokenizer = load(args.model, args.trust_remote_code)
    eval_fn = tofu_eval_fn(bench, EvalSettings(max_new_tokens=args.max_new_tokens, progress=False))
    curve = continual_unlearning(
        model, tokenizer, bench, method.name, requests, eval_fn, quiet=True, progress=True, **values
    )
    with atomic_dir(args.output, overwrite=args.overwrite) as tmp:
        write_json(tmp / "curve.json", curve)
        plot_curve(
            curve, tmp / "curve.png", title=f"continual unlearning: {method.name}, {args.requests} requests"
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
        },
        overwrite=True,
    )
    for point in curve:
        print(curve_line(point))
    return 0


CURVE_COLUMNS = (
    ("forget_rougeL_recall", "forget ROUGE"),
    ("upcoming_rougeL_recall", "upcoming ROUGE"),
    ("model_utility", "utility"),
)


def curve_line(point: dict) -> str:
    """One line per evaluation; a number that does not exist yet (no forget row before the first
    request) is left out rather than printed as nan."""
    parts = [f"step {point['step']:3d}: forgotten {point['n_forgotten']:4d}"]
    for key, label in CURVE_COLUMNS:
        value = point.get(key)
        if isinstance(value, (int, float)) and not math.isnan(value):
            parts.append(f"{label} {value:.3f}")
    if point["step"] == 0:
        parts.append("(before the first request)")
    return "  ".join(parts)

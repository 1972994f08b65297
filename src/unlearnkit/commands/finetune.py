"""``unlearnkit finetune``: train the target (all splits but holdout) or the retain oracle."""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from unlearnkit.commands._common import (
    add_trust_remote_code,
    check_data,
    check_split_lengths,
    load_data,
    overrides,
    torch_threads,
)


def add_parser(subparsers) -> None:
    f = subparsers.add_parser(
        "finetune", help="train the target (all splits but holdout) or the retain oracle"
    )
    f.add_argument("--data", required=True, help="benchmark folder")
    f.add_argument("--output", required=True, help="model folder to write")
    f.add_argument(
        "--model", default="tiny", help="'tiny' (a ~1M Llama built from code), an HF id or a folder"
    )
    f.add_argument("--split", default="all", choices=("all", "retain"), help="all = target, retain = oracle")
    f.add_argument(
        "--set", action="append", metavar="KEY=VALUE", help="training override, e.g. --set epochs=20"
    )
    f.add_argument("--seed", type=int, default=0, help="seed (default: %(default)s)")
    f.add_argument("--overwrite", action="store_true", help="replace an existing folder")
    add_trust_remote_code(f)


def run(args: argparse.Namespace) -> int:
    from unlearnkit.config import MethodConfig, build_configs
    from unlearnkit.io import check_output_dir
    from unlearnkit.models import check_model_path

    tiny = args.model == "tiny"
    # the defaults are constants of finetune.py, which imports the Trainer: read them after the checks
    cfg, _ = build_configs(MethodConfig, dict(overrides(args), seed=args.seed))
    check_output_dir(args.output, args.overwrite)
    bench = check_data(args.data)
    if not tiny:
        check_model_path(args.model)

    from unlearnkit.data.encode import PromptFormat
    from unlearnkit.finetune import HF_DEFAULTS, SPLITS_FOR, TINY_DEFAULTS, finetune, training_rows
    from unlearnkit.models import load_model, load_tokenizer, save_model
    from unlearnkit.world.tiny import build_tiny

    values = dict(TINY_DEFAULTS if tiny else HF_DEFAULTS, seed=args.seed)
    values.update(overrides(args))
    cfg, _ = build_configs(MethodConfig, values)
    bench = load_data(args.data, bench)
    rows = training_rows(bench, args.split)
    torch_threads()
    if tiny:
        model, tokenizer = build_tiny(bench, args.seed)
    else:
        tokenizer = load_tokenizer(args.model, args.trust_remote_code)
    fmt = PromptFormat.for_tokenizer(tokenizer, cfg.prompt_format)
    check_split_lengths(tokenizer, fmt, bench, SPLITS_FOR[args.split], cfg.max_length)
    if not tiny:
        model = load_model(args.model, args.trust_remote_code)
    out = Path(args.output)
    work = out.parent / f".{out.name}.work"  # the Trainer's output_dir; never outlives the command
    shutil.rmtree(work, ignore_errors=True)  # left by a killed run: fine-tuning has no resume
    try:
        result = finetune(model, tokenizer, rows, cfg, work)
        save_model(
            result.model,
            tokenizer,
            args.output,
            {
                "kind": "target" if args.split == "all" else "retain oracle",
                "base_model": args.model,
                "data": str(args.data),
                "split": args.split,
                "train_loss": result.train_loss,
                "compute": result.compute,  # the oracle's is the denominator of compute_fraction
                "config": vars(cfg),
            },
            overwrite=args.overwrite,
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"saved {args.output} (train loss {result.train_loss:.4f}, {result.n_examples} examples)")
    return 0

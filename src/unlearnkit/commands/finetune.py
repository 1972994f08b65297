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
    note,
    overrides,
    split_sources,
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
    from unlearnkit.models import load_model, load_tokenizer, save_model
    from unlearnkit.train.finetune import HF_DEFAULTS, SPLITS_FOR, TINY_DEFAULTS, finetune, training_rows
    from unlearnkit.world.tiny import build_tiny

    user = overrides(args)
    values = dict(TINY_DEFAULTS if tiny else HF_DEFAULTS, seed=args.seed)
    values.update(user)
    cfg, _ = build_configs(MethodConfig, values)
    bench = load_data(args.data, bench)
    rows = training_rows(bench, args.split)
    parts = getattr(bench, "general_parts", None)
    if tiny and parts:
        # A pretrained model brings real authors and world facts with it; a model trained from scratch
        # knows only what it is trained on, so without them TOFU's utility would be 0 by construction.
        rows = rows + list(bench.general)
        note(
            f"training the tiny model on {' and '.join(parts)} too ({len(bench.general)} rows): it starts "
            "from nothing, so its TOFU utility then measures keeping these facts, not general knowledge"
        )
    torch_threads()
    if tiny:
        model, tokenizer = build_tiny(bench, args.seed)
    else:
        tokenizer = load_tokenizer(args.model, args.trust_remote_code)
    fmt = PromptFormat.for_tokenizer(tokenizer, cfg.prompt_format)
    if "max_length" not in user:
        sized = fit_max_length(tokenizer, fmt, bench, SPLITS_FOR[args.split], cfg.max_length, args)
        if sized != cfg.max_length:
            note(
                f"max_length {sized} (the longest question + answer of the data; the default is "
                f"{cfg.max_length}); --set max_length=N to choose it"
            )
            cfg, _ = build_configs(MethodConfig, {**values, "max_length": sized})
    check_split_lengths(tokenizer, fmt, bench, SPLITS_FOR[args.split], cfg.max_length)
    if not tiny:
        model = load_model(args.model, args.trust_remote_code)
    out = Path(args.output)
    work = out.parent / f".{out.name}.work"  # the Trainer's output_dir; never outlives the command
    shutil.rmtree(work, ignore_errors=True)  # left by a killed run: fine-tuning has no resume
    try:
        result = finetune(model, tokenizer, rows, cfg, work, quiet=True, progress="fine-tuning")
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
                **({"unlearn_defaults": tiny_unlearn_defaults(cfg.max_length)} if tiny else {}),
                **({"trained_on_general_parts": sorted(parts)} if tiny and parts else {}),
            },
            overwrite=args.overwrite,
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    # Trainer's training_loss: the mean over the run's optimiser steps, not the last step's loss.
    print(f"saved {args.output} (mean train loss {result.train_loss:.4f}, {result.n_examples} examples)")
    return 0


def model_limit(tokenizer, model_name: str, trust_remote_code: bool) -> int | None:
    """The longest sequence the model takes: its tokenizer's or config's limit (None: unknown)."""
    limits = []
    if 0 < (getattr(tokenizer, "model_max_length", 0) or 0) < 10**6:  # transformers' "no limit" is 1e30
        limits.append(int(tokenizer.model_max_length))
    if model_name != "tiny":
        try:
            from transformers import AutoConfig

            config = AutoConfig.from_pretrained(model_name, trust_remote_code=trust_remote_code)
            if getattr(config, "max_position_embeddings", None):
                limits.append(int(config.max_position_embeddings))
        except Exception:  # noqa: BLE001 - no config limit known: the tokenizer's (or none) decides
            pass
    return min(limits) if limits else None


def fit_max_length(tokenizer, fmt, bench, splits, default: int, args) -> int:
    """``default``, raised to the longest question + answer of ``splits`` when that still fits the model
    (rounded up to a multiple of 8); past the model's limit the length check names the row."""
    longest = 0
    for name in splits:
        for rows, _ in split_sources(bench, name):
            for row in rows:
                if "question" in row and isinstance(row.get("answer"), str):
                    n = len(fmt.prompt_ids(tokenizer, row["question"])) + len(
                        fmt.answer_ids(tokenizer, row["answer"])
                    )
                    longest = max(longest, n)
    if longest <= default:
        return default
    wanted = -(-longest // 8) * 8
    limit = model_limit(tokenizer, args.model, args.trust_remote_code)
    if limit is not None:
        wanted = min(wanted, limit) if longest <= limit else default
    return wanted


def tiny_unlearn_defaults(max_length: int) -> dict:
    """The quickstart's unlearning recipe for the tiny model, recorded in its unlearnkit.json so that
    ``unlearn`` / ``continual`` on it start from settings that work at this scale (the papers' 7B
    defaults barely move a 1M-parameter model)."""
    from unlearnkit.quickstart import TINY_METHOD, TINY_UNLEARN

    return {
        "source": "unlearnkit quickstart's tiny-model recipe",
        "train": {**TINY_UNLEARN, "max_length": max(int(TINY_UNLEARN.get("max_length", 0)), max_length)},
        "method": TINY_METHOD,
    }

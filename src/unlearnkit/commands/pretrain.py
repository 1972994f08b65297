"""``unlearnkit pretrain``: the embedded world's base model (or its data-filtered twin) from the world's corpus."""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from unlearnkit.commands._common import (
    add_placement_flags,
    add_training_flags,
    add_trust_remote_code,
    apply_training_flags,
    check_placement_flags,
    checkpointed_training,
    note,
    overrides,
    placement_of,
    print_placement,
    resume_point,
    torch_threads,
    training_choices,
    training_files,
    training_fingerprint,
    training_record,
    work_dir_of,
)
from unlearnkit.commands.finetune import add_check_items, check_items_flag, report_learned
from unlearnkit.errors import UserError

SIZE_KEYS = ("hidden", "layers", "heads")  # the tiny base's shape (--model tiny only)


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "pretrain",
        help="pretrain the world's base model on its corpus (or, --without hazard, the data-filtered one)",
    )
    p.add_argument("--data", required=True, help="world folder (written by `unlearnkit world`)")
    p.add_argument("--output", required=True, help="model folder to write")
    p.add_argument(
        "--without",
        default="",
        help="corpus parts to leave out, comma-separated (e.g. hazard: the data-filtering oracle)",
    )
    p.add_argument(
        "--model",
        default="tiny",
        help="'tiny' (a fresh tiny Llama on the world's tokenizer) or a model folder / HF id to continue",
    )
    p.add_argument(
        "--set",
        action="append",
        metavar="KEY=VALUE",
        help="training override, e.g. --set epochs=20; tiny shape: --set hidden=192 --set layers=4",
    )
    add_check_items(p)
    p.add_argument("--seed", type=int, default=0, help="seed of the init, data order (default: %(default)s)")
    p.add_argument("--save-every", type=int, default=None, help="checkpoint every N optimiser steps")
    p.add_argument("--resume", action="store_true", help="continue from the last checkpoint of this --output")
    p.add_argument("--overwrite", action="store_true", help="replace an existing --output folder")
    add_placement_flags(p)
    add_training_flags(p)
    add_trust_remote_code(p)


def run(args: argparse.Namespace) -> int:
    from unlearnkit.config import MethodConfig, build_configs
    from unlearnkit.io import check_output_dir
    from unlearnkit.models import check_model_path

    tiny = args.model == "tiny"
    check_items_flag(args)
    values = overrides(args)
    size = {k: values.pop(k) for k in SIZE_KEYS if k in values}
    if size and not tiny:
        raise UserError(f"--set {', '.join(size)}: the shape keys are for --model tiny only")
    for key, value in size.items():
        if not str(value).isdigit() or int(value) < 1:
            raise UserError(f"--set {key}={value}: must be a positive integer")
    size = {k: int(v) for k, v in size.items()}
    if args.save_every is not None:
        if args.save_every < 0:
            raise UserError(f"--save-every {args.save_every}: must be >= 1 (or 0 for no checkpoints)")
        values["save_every"] = args.save_every
    apply_training_flags(args, values)
    check_placement_flags(args)
    build_configs(MethodConfig, dict(values, seed=args.seed))  # a bad key answers before any import
    without = tuple(w.strip() for w in args.without.split(",") if w.strip())
    check_output_dir(args.output, args.overwrite)
    if not Path(args.data).is_dir():
        raise UserError(f"--data {args.data} is not a folder (a world written by `unlearnkit world`)")
    if not tiny:
        check_model_path(args.model)

    from unlearnkit.train.pretrain import (
        PRETRAIN_DEFAULTS,
        TINY_BASE,
        corpus_layout,
        pretraining_data,
        replay_files,
    )

    data = pretraining_data(args.data, without)
    cfg, _ = build_configs(MethodConfig, {**PRETRAIN_DEFAULTS, **values, "seed": args.seed})
    if tiny and cfg.max_length > 256:
        raise UserError(
            f"max_length {cfg.max_length}: the tiny base has 256 positions; use --set max_length=256"
        )
    out = Path(args.output)
    parts, qa_files = corpus_layout(args.data)
    files = {**{f"corpus/{n}": p for n, p in parts.items()}, **{q.stem: q for q in qa_files}}
    fingerprint = training_fingerprint(
        "pretrain",
        args.model,
        files,
        cfg,
        without=list(without),
        size={**TINY_BASE, **size} if tiny else None,
    )
    resume_point(work_dir_of(out), fingerprint, out, args.resume, args.overwrite)  # refused before any work

    import dataclasses

    from unlearnkit.models import load_model, load_tokenizer, save_model
    from unlearnkit.pipelines.embedded import TINY_FINETUNE
    from unlearnkit.train.finetune import finetune
    from unlearnkit.train.pretrain import build_base

    torch_threads()
    placement = placement_of(args, None if tiny else args.model, cfg.precision)
    cfg = dataclasses.replace(cfg, precision=placement.precision)
    if tiny:
        model, tokenizer = build_base(args.data, args.seed, size)
        model = model.to(placement.torch_dtype)
    else:
        tokenizer = load_tokenizer(args.model, args.trust_remote_code)
        model = load_model(args.model, args.trust_remote_code, dtype=placement.torch_dtype)
    print_placement(placement, training_choices(cfg))
    what = f" without {', '.join(without)}" if without else ""
    note(
        f"pretraining on {len(data.rows)} rows{what} ("
        + ", ".join(f"{k} {v}" for k, v in data.parts.items())
        + ")"
    )

    def train(work: Path, resume: bool):
        return finetune(
            model, tokenizer, data.rows, cfg, work, quiet=True, progress="pretraining", resume=resume
        )

    result, resume_from = checkpointed_training(args, out, fingerprint, train)
    learned = None
    if args.check_items:
        from unlearnkit.data.encode import PromptFormat
        from unlearnkit.evaluation.learned import LearnedSettings, measure_learned

        asked = LearnedSettings(max_items=args.check_items, seed=args.seed)
        fmt = PromptFormat.for_settings(tokenizer, cfg)
        learned = measure_learned(result.model, tokenizer, fmt, data.rows, asked)
    provenance = {
        "kind": "base",
        "base_model": args.model,
        "world": str(Path(args.data).resolve()),
        "pretraining": data.describe(),
        "filtered": list(without),
        # what fine-tuning from this base replays (finetune --replay auto): never the evaluated questions
        "replay": [str(p.resolve()) for p in replay_files(args.data, without) if p.is_file()],
        # a tiny base is fine-tuned at its own scale (finetune reads this): the lab's measured recipe
        **(
            {
                "finetune_defaults": {
                    "source": "the embedded world's fine-tuning recipe",
                    "train": TINY_FINETUNE,
                }
            }
            if tiny
            else {}
        ),
        "seed": args.seed,
        "train_loss": result.train_loss,
        "compute": result.compute,  # the data-filtering oracle's is the WMDP-like compute denominator
        "config": vars(cfg),
        "placement": training_record(placement, cfg),
        **({"size": {**TINY_BASE, **size}} if tiny else {}),
    }
    if resume_from is not None:
        provenance["resumed_from"] = resume_from.name
    if learned is not None:
        provenance["learned"] = learned.as_dict()
    files = training_files(getattr(result, "log_history", None))
    save_model(result.model, tokenizer, args.output, provenance, overwrite=args.overwrite, files=files)
    shutil.rmtree(work_dir_of(out), ignore_errors=True)
    print(f"saved {out} (base{what}, mean train loss {result.train_loss:.4f}, {result.n_examples} examples)")
    report_learned(learned)
    return 0

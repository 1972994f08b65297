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
    placement_flags,
    print_placement,
    resume_point,
    torch_threads,
    training_choices,
    training_fingerprint,
    work_dir_of,
)
from unlearnkit.commands.finetune import add_check_items, check_items_flag, report_learned
from unlearnkit.errors import UserError


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
    """Parse, check, then the library's steps (:mod:`unlearnkit.api.pretrain`) with checkpoints in the
    output's work folder (``--save-every`` / ``--resume``)."""
    from unlearnkit.api import pretrain as library
    from unlearnkit.io import check_output_dir
    from unlearnkit.models import check_model_path
    from unlearnkit.train.pretrain import TINY_BASE

    check_items_flag(args)
    values = overrides(args)
    if args.save_every is not None:
        if args.save_every < 0:
            raise UserError(f"--save-every {args.save_every}: must be >= 1 (or 0 for no checkpoints)")
        values["save_every"] = args.save_every
    apply_training_flags(args, values)
    check_placement_flags(args)
    without = tuple(w.strip() for w in args.without.split(",") if w.strip())
    job = library.plan(
        args.data,
        args.model,
        without,
        args.seed,
        values,
        check=check_model_path,
        before_data=lambda: check_output_dir(args.output, args.overwrite),
    )
    out = Path(args.output)
    fingerprint = training_fingerprint(
        "pretrain",
        args.model,
        job.files(),
        job.cfg,
        without=list(without),
        size={**TINY_BASE, **job.size} if job.tiny else None,
    )
    resume_point(work_dir_of(out), fingerprint, out, args.resume, args.overwrite)  # refused before any work
    torch_threads()
    placement = library.resolve(job, *placement_flags(args))

    def train(work: Path, resumed_from: Path | None):
        return library.train(
            job,
            placement,
            work,
            check_items=args.check_items,
            trust_remote_code=args.trust_remote_code,
            resume=resumed_from is not None,
            resumed_from=None if resumed_from is None else resumed_from.name,
            say=note,
            announce=lambda: print_placement(placement, training_choices(job.cfg)),
        )

    result, _ = checkpointed_training(args, out, fingerprint, train)
    result.save(args.output, overwrite=args.overwrite)
    shutil.rmtree(work_dir_of(out), ignore_errors=True)
    what = f" without {', '.join(without)}" if without else ""
    print(f"saved {out} (base{what}, mean train loss {result.train_loss:.4f}, {result.n_examples} examples)")
    report_learned(result.learned)
    return 0

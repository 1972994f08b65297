"""``unlearnkit pretrain``: the embedded world's base model (or its data-filtered twin) from the world's corpus."""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from unlearnkit.commands._common import (
    add_checkpoint_flags,
    add_command,
    add_output,
    add_overwrite,
    add_placement_flags,
    add_set,
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
    runtime_group,
    torch_threads,
    training_choices,
    training_fingerprint,
    work_dir_of,
)
from unlearnkit.commands.finetune import add_check_items, check_items_flag, report_learned
from unlearnkit.errors import UserError


def add_parser(subparsers) -> None:
    p = add_command(
        subparsers,
        "pretrain",
        "pretrain the world's base model on its corpus",
        [
            "unlearnkit pretrain --data bench --output base",
            "unlearnkit pretrain --data bench --output base_filtered --without hazard",
        ],
        details="--without hazard trains the data-filtered base, the WMDP-like retrain oracle. See docs/lab.md.",
    )
    req = p.add_argument_group("required")
    req.add_argument(
        "--data", required=True, metavar="DATA", help="world folder (written by `unlearnkit world`)"
    )
    add_output(req, "model folder to write")
    task = p.add_argument_group("task")
    task.add_argument(
        "--model",
        default="tiny",
        metavar="MODEL",
        help="'tiny' (a fresh tiny Llama on the world's tokenizer) or a model folder / HF id to continue",
    )
    task.add_argument(
        "--without",
        default="",
        metavar="PARTS",
        help="corpus parts to leave out, comma-separated (e.g. hazard: the data-filtering oracle)",
    )
    add_set(task, "training override, e.g. --set epochs=20; tiny shape: --set hidden=192 layers=4")
    add_check_items(task)
    rt = runtime_group(p)
    rt.add_argument(
        "--seed",
        type=int,
        default=0,
        metavar="N",
        help="seed of the init and data order (default: %(default)s)",
    )
    add_overwrite(rt)
    add_checkpoint_flags(rt)
    add_placement_flags(rt)
    add_training_flags(rt)
    add_trust_remote_code(rt)


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

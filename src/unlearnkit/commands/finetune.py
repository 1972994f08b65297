"""``unlearnkit finetune``: train the target (all splits but holdout) or the retain oracle."""

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
    check_data,
    check_placement_flags,
    checkpointed_training,
    load_data,
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
from unlearnkit.errors import UserError


def add_parser(subparsers) -> None:
    f = add_command(
        subparsers,
        "finetune",
        "train the target (all splits but holdout) or the retain oracle",
        [
            "unlearnkit finetune --model base --data bench --output target",
            "unlearnkit finetune --model base --data bench --output oracle --split retain",
        ],
    )
    req = f.add_argument_group("required")
    req.add_argument("--data", required=True, metavar="DATA", help="benchmark folder")
    add_output(req, "model folder to write")
    task = f.add_argument_group("task")
    task.add_argument(
        "--model",
        default="tiny",
        metavar="MODEL",
        help="a base folder (`unlearnkit pretrain`), an HF id or folder, or 'tiny' (a ~1M Llama from scratch)",
    )
    task.add_argument(
        "--split", default="all", choices=("all", "retain"), help="all: the target, retain: the oracle"
    )
    add_set(task, "training override, e.g. --set epochs=20 lr=1e-4 (keys: `unlearnkit methods finetune`)")
    task.add_argument(
        "--replay",
        default="auto",
        metavar="auto|none|FILES",
        help="data mixed in to keep what the model knew: auto (the base's card says), none, or JSONL files "
        "(default: %(default)s)",
    )
    add_check_items(task)
    rt = runtime_group(f)
    rt.add_argument("--seed", type=int, default=0, metavar="N", help="seed (default: %(default)s)")
    add_overwrite(rt)
    add_checkpoint_flags(rt)
    add_placement_flags(rt)
    add_training_flags(rt)
    add_trust_remote_code(rt)


def run(args: argparse.Namespace) -> int:
    """Parse, check, then the library's steps (:mod:`unlearnkit.api.finetune`) with checkpoints in the
    output's work folder (``--save-every`` / ``--resume``)."""
    from unlearnkit.api import finetune as library
    from unlearnkit.io import check_output_dir
    from unlearnkit.models import check_model_path

    check_items_flag(args)
    user = overrides(args)
    if args.save_every is not None:
        if args.save_every < 0:
            raise UserError(f"--save-every {args.save_every}: must be >= 1 (or 0 for no checkpoints)")
        user["save_every"] = args.save_every
    apply_training_flags(args, user)
    check_placement_flags(args)
    library.check_settings(user, args.seed)
    check_output_dir(args.output, args.overwrite)
    bench = check_data(args.data)
    if args.model != "tiny":
        check_model_path(args.model)
    job = library.plan(
        args.model,
        lambda: load_data(args.data, bench),  # a benchmark name is read once the replay files are checked
        str(args.data),
        split=args.split,
        replay=args.replay,
        seed=args.seed,
        user=user,
        say=note,
    )
    torch_threads()
    library.prepare(job, trust_remote_code=args.trust_remote_code, say=note)
    out = Path(args.output)
    fingerprint = training_fingerprint(
        "finetune", args.model, job.files(), job.cfg, split=args.split, replay_repeats=job.replay_repeats
    )
    resume_point(work_dir_of(out), fingerprint, out, args.resume, args.overwrite)  # refused before any work
    placement = library.resolve(job, *placement_flags(args))
    print_placement(placement, training_choices(job.cfg))

    def train(work: Path, resumed_from: Path | None):
        return library.train(
            job,
            placement,
            work,
            check_items=args.check_items,
            trust_remote_code=args.trust_remote_code,
            resume=resumed_from is not None,
            resumed_from=None if resumed_from is None else resumed_from.name,
        )

    result, _ = checkpointed_training(args, out, fingerprint, train)
    result.save(args.output, overwrite=args.overwrite)
    shutil.rmtree(work_dir_of(out), ignore_errors=True)
    # Trainer's training_loss: the mean over the run's optimiser steps (since resuming, after a resume)
    since = " over the steps since resuming" if "resumed_from" in result.provenance else ""
    print(
        f"saved {args.output} (mean train loss{since} {result.train_loss:.4f}, {result.n_examples} examples)"
    )
    report_learned(result.learned)
    return 0


def add_check_items(parser) -> None:
    """``--check-items N``, shared by ``finetune`` and ``pretrain``."""
    parser.add_argument(
        "--check-items",
        type=int,
        default=100,
        metavar="N",
        help="after training, ask up to N trained questions to say how much the model learned; 0 skips "
        "it (default: %(default)s)",
    )


def check_items_flag(args: argparse.Namespace) -> None:
    if args.check_items < 0:
        raise UserError(f"--check-items {args.check_items}: must be >= 0 (0 skips the check)")


def report_learned(learned) -> None:
    """The line a training command ends with (how much of its data the model knows), then its warnings."""
    if learned is None:
        return
    print(learned.line())
    for text in learned.warnings():
        note(text, kind="warning")

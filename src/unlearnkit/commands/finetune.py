"""``unlearnkit finetune``: train the target (all splits but holdout) or the retain oracle."""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from unlearnkit.commands._common import (
    add_placement_flags,
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
    torch_threads,
    training_choices,
    training_fingerprint,
    work_dir_of,
)
from unlearnkit.errors import UserError


def add_parser(subparsers) -> None:
    f = subparsers.add_parser(
        "finetune", help="train the target (all splits but holdout) or the retain oracle"
    )
    f.add_argument("--data", required=True, help="benchmark folder")
    f.add_argument("--output", required=True, help="model folder to write")
    f.add_argument(
        "--model",
        default="tiny",
        help="a base folder (`unlearnkit pretrain`), an HF id or folder, or 'tiny' (a ~1M Llama from scratch)",
    )
    f.add_argument("--split", default="all", choices=("all", "retain"), help="all = target, retain = oracle")
    f.add_argument(
        "--set", action="append", metavar="KEY=VALUE", help="training override, e.g. --set epochs=20"
    )
    f.add_argument(
        "--replay",
        default="auto",
        help="data mixed into fine-tuning to keep what the model knew: 'auto' (what the base's card records, "
        "e.g. the embedded world's general passages), 'none', or JSONL files (text or question/answer rows), "
        "comma-separated (default: %(default)s)",
    )
    add_check_items(f)
    f.add_argument("--seed", type=int, default=0, help="seed (default: %(default)s)")
    f.add_argument("--save-every", type=int, default=None, help="checkpoint every N optimiser steps")
    f.add_argument("--resume", action="store_true", help="continue from the last checkpoint of this --output")
    f.add_argument("--overwrite", action="store_true", help="replace an existing folder")
    add_placement_flags(f)
    add_training_flags(f)
    add_trust_remote_code(f)


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
        help="after training, ask at most N of the trained questions (and passages; and of general.jsonl "
        "when fine-tuning a base) to say how much the model learned and kept; 0 skips it (default: "
        "%(default)s)",
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

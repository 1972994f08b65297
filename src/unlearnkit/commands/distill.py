"""``unlearnkit distill``: noise an unlearned teacher's weights, distill its outputs back (UNDO, arXiv 2506.06278)."""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

from unlearnkit.commands._common import (
    add_trust_remote_code,
    check_split_lengths,
    cleanup_after_failure,
    diverged_message,
    file_digest,
    note,
    overrides,
    prepare_work,
    resume_point,
    torch_threads,
    work_dir_of,
)
from unlearnkit.errors import UserError


def add_parser(subparsers) -> None:
    d = subparsers.add_parser(
        "distill", help="noise an unlearned model toward a fresh init and distill its outputs back (UNDO)"
    )
    d.add_argument("--teacher", required=True, help="the unlearned model folder (output of `unlearn`)")
    d.add_argument("--data", required=True, help="benchmark folder (its retain / general questions are used)")
    d.add_argument("--output", required=True, help="model folder to write (the student)")
    d.add_argument(
        "--noise",
        type=float,
        default=1.0,
        metavar="ALPHA",
        help="shrink-and-perturb alpha: 0 = start from the teacher, 1 = fresh init (default: %(default)s)",
    )
    d.add_argument(
        "--set",
        action="append",
        metavar="KEY=VALUE",
        help="override, e.g. --set epochs=10 --set retain_nll_weight=1 --set distill_on=retain,general",
    )
    d.add_argument("--save-every", type=int, default=None, help="checkpoint every N optimiser steps")
    d.add_argument("--resume", action="store_true", help="continue from the last checkpoint of this --output")
    d.add_argument("--overwrite", action="store_true", help="replace an existing --output folder")
    add_trust_remote_code(d)


def _fingerprint(args, settings: dict) -> dict:
    """What must not change between a run and its ``--resume`` (else the weights would silently differ)."""
    teacher = Path(args.teacher).expanduser()
    return {
        "method": "distill",
        "model": str(teacher.resolve()) if teacher.exists() else str(args.teacher),
        "data": {n: file_digest(Path(args.data) / f"{n}.jsonl") for n in ("forget", "retain", "general")},
        "config": json.loads(json.dumps(settings, default=str)),
    }


def run(args: argparse.Namespace) -> int:
    import dataclasses

    from unlearnkit.commands._common import RESUME_EXEMPT
    from unlearnkit.config import DistillConfig, build_configs
    from unlearnkit.data.sources import resolve_data
    from unlearnkit.io import check_output_dir
    from unlearnkit.models import check_model_path

    # Every check of the arguments first, with light imports only: a typo answers at once.
    if not 0.0 <= args.noise <= 1.0:
        raise UserError(
            f"--noise {args.noise}: must be in [0, 1] (0 = start from the teacher, 1 = fresh init)"
        )
    values = overrides(args)
    if args.save_every is not None:
        if args.save_every < 0:
            raise UserError(f"--save-every {args.save_every}: must be >= 1 (or 0 for no checkpoints)")
        values["save_every"] = args.save_every
    train_cfg, cfg = build_configs(DistillConfig, values)  # bad keys and values fail before any loading
    if train_cfg.lora_r > 0 or train_cfg.reference == "adapter":
        raise UserError("distill trains the whole student: remove lora_r / reference=adapter")
    check_output_dir(args.output, args.overwrite)
    bench = resolve_data(args.data)
    empty = [name for name in cfg.splits() if not bench.split(name)]
    if len(empty) == len(cfg.splits()):
        raise UserError(f"--data {args.data}: the splits to distill on ({cfg.distill_on}) are all empty")
    check_model_path(args.teacher, "--teacher")
    out = Path(args.output)
    work = work_dir_of(out)
    if work.exists() and not work.is_dir():
        raise UserError(f"{work} exists and is a file; remove it (unlearnkit keeps checkpoints there)")
    settings = {"noise": args.noise, **dataclasses.asdict(train_cfg), **dataclasses.asdict(cfg)}
    fingerprint = _fingerprint(args, {k: v for k, v in settings.items() if k not in RESUME_EXEMPT})
    resume_from = resume_point(work, fingerprint, out, args.resume, args.overwrite)

    from unlearnkit.data.encode import PromptFormat
    from unlearnkit.models import load_model, load_tokenizer

    tokenizer = load_tokenizer(args.teacher, args.trust_remote_code)
    fmt = PromptFormat.for_settings(tokenizer, train_cfg)
    used = [name for name in cfg.splits() if name not in empty]
    check_split_lengths(tokenizer, fmt, bench, used, train_cfg.max_length)
    torch_threads()
    teacher = load_model(args.teacher, args.trust_remote_code)

    # Validation is over: from here on the work folder exists until the model is saved.
    prepare_work(work, resume_from, fingerprint, args.resume)
    result = _run(args, teacher, tokenizer, bench, work, resume_from, values)
    if not result.is_main_process:
        return 0  # multi-process run: rank 0 writes the model
    _save(args, result, tokenizer, resume_from)
    shutil.rmtree(work, ignore_errors=True)
    print(
        f"saved {out} (student at noise {args.noise}, {result.steps} steps, final train loss "
        f"{result.train_loss:.4f}, cost {result.compute['cost']:,} token-passes)"
    )
    return 0


def _run(args, teacher, tokenizer, bench, work: Path, resume_from, values):
    from unlearnkit.train.distill import distill
    from unlearnkit.train.trainer import DivergenceError

    try:
        return distill(
            teacher,
            tokenizer,
            bench,
            noise=args.noise,
            overrides=values,
            work_dir=work,
            resume_from=resume_from,
        )
    except DivergenceError as err:
        raise DivergenceError(diverged_message(err, work)) from None
    except BaseException:
        kept = cleanup_after_failure(work)
        if kept is not None:
            note(f"checkpoints kept in {work} (last: {kept.name}); continue with --resume")
        raise


def teacher_cost(teacher: str) -> int:
    """The compute of the unlearning run that made the teacher (0 when it is not an unlearned model)."""
    try:
        info = json.loads((Path(teacher) / "unlearnkit.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return 0
    kind = str(info.get("kind", "")) if isinstance(info, dict) else ""
    compute = info.get("compute") if isinstance(info, dict) else None
    if not kind.startswith(("unlearned", "distilled")) or not isinstance(compute, dict):
        return 0
    return int(compute.get("total_cost", compute.get("cost", 0)))


def _save(args, result, tokenizer, resume_from) -> None:
    from unlearnkit.models import save_model

    compute = dict(result.compute)
    upstream = teacher_cost(args.teacher)
    compute["teacher_cost"] = upstream
    compute["total_cost"] = (
        compute["cost"] + upstream
    )  # the numerator of unlearnkit.train.compute.compute_fraction
    provenance = {
        "kind": f"distilled (UNDO, noise {args.noise})",
        "teacher": args.teacher,
        "data": str(args.data),
        "noise": args.noise,
        "distilled_on": result.settings["distilled_examples"],
        "paper": "arXiv 2506.06278",
        "steps": result.steps,
        "train_loss": result.train_loss,
        "compute": compute,
        "teacher_outputs": result.reference,
        "config": result.settings,
    }
    if resume_from is not None:
        provenance["resumed_from"] = resume_from.name
    save_model(result.model, tokenizer, args.output, provenance, overwrite=args.overwrite)

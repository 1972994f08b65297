"""``unlearnkit distill``: noise an unlearned teacher's weights toward its pretrained base or a fresh init,
distill its outputs back (UNDO, arXiv 2506.06278)."""

from __future__ import annotations

import argparse
import json
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
    cleanup_after_failure,
    diverged_message,
    file_digest,
    note,
    overrides,
    prepare_work,
    print_placement,
    resume_point,
    runtime_group,
    torch_threads,
    training_choices,
    work_dir_of,
)
from unlearnkit.errors import UserError

NOISE_TARGETS = ("init", "base")  # as unlearnkit.train.distill.NOISE_TARGETS (that module imports torch)


def add_parser(subparsers) -> None:
    d = add_command(
        subparsers,
        "distill",
        "harden an unlearned model against relearning (UNDO)",
        [
            "unlearnkit distill --teacher npo --data bench --output npo_undo",
            "unlearnkit distill --teacher npo --data bench --output npo_undo --noise 0.5 --set distill_on=retain,corpus",
        ],
        details="Noise, then distill (UNDO): the student starts from the unlearned model shrunk toward its pretrained base (or a "
        "fresh init) and learns the teacher's outputs on retain / general text. See docs/robustness.md.",
    )
    req = d.add_argument_group("required")
    req.add_argument(
        "--teacher", required=True, metavar="MODEL", help="the unlearned model (output of `unlearn`)"
    )
    req.add_argument(
        "--data",
        required=True,
        metavar="DATA",
        help="benchmark folder (its retain / general questions; corpus/general.jsonl for distill_on=corpus)",
    )
    add_output(req, "model folder to write (the student)")
    task = d.add_argument_group("task")
    task.add_argument(
        "--noise",
        type=float,
        default=1.0,
        metavar="ALPHA",
        help="shrink-and-perturb alpha: 0 = start from the teacher, 1 = the noise target (default: %(default)s)",
    )
    task.add_argument(
        "--noise-toward",
        choices=NOISE_TARGETS,
        default=None,
        help="init: a fresh initialisation (UNDO's setting); base: the pretrained base (default: base when "
        "the cards name one)",
    )
    task.add_argument(
        "--base",
        default=None,
        metavar="MODEL",
        help="the base to noise toward (implies --noise-toward base; default: found through the model cards)",
    )
    add_set(
        task, "override, e.g. --set epochs=10 distill_on=retain,corpus (keys: `unlearnkit methods distill`)"
    )
    rt = runtime_group(d)
    add_overwrite(rt)
    add_checkpoint_flags(rt)
    add_placement_flags(rt)
    add_training_flags(rt)
    add_trust_remote_code(rt)


def _fingerprint(args, settings: dict, text_files: dict[str, Path]) -> dict:
    """What must not change between a run and its ``--resume`` (else the weights would silently differ)."""
    teacher = Path(args.teacher).expanduser()
    data = {n: file_digest(Path(args.data) / f"{n}.jsonl") for n in ("forget", "retain", "general")}
    data.update({f"{name} ({path})": file_digest(path) for name, path in text_files.items()})
    return {
        "method": "distill",
        "model": str(teacher.resolve()) if teacher.exists() else str(args.teacher),
        "data": data,
        "config": json.loads(json.dumps(settings, default=str)),
    }


def noise_target(args) -> tuple[str, str | None, str]:
    """``(init | base, the base model or None, the line that says so)``, from the flags and the cards."""
    from unlearnkit.train.distill_inputs import noise_target as decide

    return decide(args.teacher, args.noise_toward, args.base)


def run(args: argparse.Namespace) -> int:
    import dataclasses

    from unlearnkit.api.distill import check_whole_student, distill_text_files
    from unlearnkit.commands._common import RESUME_EXEMPT
    from unlearnkit.config import DistillConfig, build_configs
    from unlearnkit.data.sources import resolve_data
    from unlearnkit.io import check_output_dir
    from unlearnkit.models import check_model_path

    # Every check of the arguments first, with light imports only: a typo answers at once.
    if not 0.0 <= args.noise <= 1.0:
        raise UserError(
            f"--noise {args.noise}: must be in [0, 1] (0 = start from the teacher, 1 = the noise target itself)"
        )
    values = overrides(args)
    if args.save_every is not None:
        if args.save_every < 0:
            raise UserError(f"--save-every {args.save_every}: must be >= 1 (or 0 for no checkpoints)")
        values["save_every"] = args.save_every
    apply_training_flags(args, values)
    check_placement_flags(args)
    train_cfg, cfg = build_configs(DistillConfig, values)  # bad keys and values fail before any loading
    check_whole_student(train_cfg)
    check_output_dir(args.output, args.overwrite)
    bench = resolve_data(args.data)
    texts = distill_text_files(bench, cfg, args.data, args.data)
    check_model_path(args.teacher, "--teacher")
    toward, base, target_line = noise_target(args)
    out = Path(args.output)
    work = work_dir_of(out)
    if work.exists() and not work.is_dir():
        raise UserError(f"{work} exists and is a file; remove it (unlearnkit keeps checkpoints there)")
    settings = {
        "noise": args.noise,
        "noise_toward": toward,
        "base": str(Path(base).expanduser().resolve()) if base and Path(base).expanduser().exists() else base,
        **dataclasses.asdict(train_cfg),
        **dataclasses.asdict(cfg),
    }
    fingerprint = _fingerprint(args, {k: v for k, v in settings.items() if k not in RESUME_EXEMPT}, texts)
    resume_from = resume_point(work, fingerprint, out, args.resume, args.overwrite)

    # The library's two steps, as unlearnkit.distill() runs them: check and load, then train.
    from unlearnkit.api.distill import make_ready

    torch_threads()
    ready = make_ready(
        args.teacher,
        None,
        values,
        bench,
        folder=args.teacher,
        base=base,
        line=target_line,
        device=args.device,
        dtype=args.dtype,
        asked_device=getattr(args, "asked_device", None),
        trust_remote_code=args.trust_remote_code,
    )
    print_placement(ready.placement, training_choices(ready.train_config))

    # Validation is over: from here on the work folder exists until the model is saved.
    prepare_work(work, resume_from, fingerprint, args.resume)
    result, provenance = _run(args, ready, bench, work, resume_from, toward, base)
    if not result.is_main_process:
        return 0  # multi-process run: rank 0 writes the model
    from unlearnkit.pipelines.model_outputs import save_distilled

    save_distilled(result, ready.tokenizer, args.output, provenance, overwrite=args.overwrite)
    shutil.rmtree(work, ignore_errors=True)
    toward_text = f"the base {base}" if toward == "base" else "a fresh init"
    print(
        f"saved {out} (student at noise {args.noise:g} toward {toward_text}, {result.steps} steps, mean train "
        f"loss {result.train_loss:.4f}, cost {result.compute['cost']:,} token-passes)"
    )
    return 0


def _run(args, ready, bench, work: Path, resume_from, toward: str, base: str | None):
    """Distill through the library; a failure keeps the checkpoints ``--resume`` continues from (a
    divergence: the last one with finite weights) and says where they are."""
    from unlearnkit.api.distill import train_ready
    from unlearnkit.pipelines.model_outputs import teacher_cost
    from unlearnkit.train.trainer import DivergenceError

    record = {
        "teacher": args.teacher,
        "data": str(args.data),
        "base": base,
        "teacher_cost": teacher_cost(args.teacher),
    }
    try:
        return train_ready(
            ready,
            bench,
            noise=args.noise,
            toward=toward,
            base=base,
            work=work,
            record=record,
            resumed_from=resume_from,
            progress=f"distilling (UNDO, noise {args.noise:g} toward {toward})",
        )
    except DivergenceError as err:
        raise DivergenceError(diverged_message(err, work)) from None
    except BaseException:
        kept = cleanup_after_failure(work)
        if kept is not None:
            note(f"checkpoints kept in {work} (last: {kept.name}); continue with --resume")
        raise

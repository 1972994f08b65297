"""``unlearnkit audit``: evidence the knowledge is gone (MIA, relearning, quantization, paraphrases)."""

from __future__ import annotations

import argparse
from pathlib import Path

from unlearnkit.commands._common import (
    add_command,
    add_output,
    add_overwrite,
    add_placement_flags,
    add_trust_remote_code,
    check_placement_flags,
    note,
    placement_of,
    print_placement,
    runtime_group,
)
from unlearnkit.errors import UserError


def add_parser(subparsers) -> None:
    add_audit_arguments(
        add_command(
            subparsers,
            "audit",
            "evidence the knowledge is gone: MIA, relearning, quantization",
            [
                "unlearnkit audit --model asu --data bench --retain-model oracle --original-model target "
                "--output audit_asu",
                "unlearnkit audit --model asu --data bench --retain-model oracle --attack none --output audit_quick",
            ],
            details="Writes DIR/audit.json and DIR/audit.md and prints one verdict per check. The "
            "relearning attack's defaults follow the audited model's lineage (a note says which); "
            "--attack picks a preset, the --relearn-* flags set each knob. See docs/audit.md.",
        )
    )


def run(args: argparse.Namespace) -> int:
    from unlearnkit.io import check_output_dir
    from unlearnkit.models import check_model_path

    check_output_dir(args.output, args.overwrite)
    for flag, path in (
        ("--model", args.model),
        ("--retain-model", args.retain_model),
        ("--original-model", args.original_model),
    ):
        if path is not None:
            check_model_path(path, flag=flag)
    return audit_command(args)  # checks its own settings, then imports torch


ATTACKS = ("auto", "plain", "none")  # the --attack presets


def add_audit_arguments(parser) -> None:
    """Add the ``unlearnkit audit`` flags to an argparse (sub)parser."""
    req = parser.add_argument_group("required")
    req.add_argument("--model", required=True, metavar="MODEL", help="the model folder or HF id to audit")
    req.add_argument(
        "--data", required=True, metavar="DATA", help="benchmark folder (forget.jsonl, holdout.jsonl, ...)"
    )
    add_output(req, "folder for audit.json and audit.md")
    task = parser.add_argument_group("task")
    task.add_argument(
        "--retain-model", default=None, metavar="MODEL", help="the retain oracle (recommended: the yardstick)"
    )
    task.add_argument(
        "--original-model", default=None, metavar="MODEL", help="the model before unlearning (the target)"
    )
    task.add_argument(
        "--probes", default=None, metavar="FILE", help="JSONL of reworded forget questions (question/answer)"
    )
    task.add_argument(
        "--quant-bits",
        default="8,4",
        metavar="BITS",
        help="bit widths of the quantisation attack, comma-separated (default: %(default)s)",
    )
    task.add_argument(
        "--group-size", type=int, default=128, metavar="N", help="4-bit group size (default: %(default)s)"
    )
    task.add_argument(
        "--max-items", type=int, default=200, metavar="N", help="items per split (default: %(default)s)"
    )
    task.add_argument(
        "--max-new-tokens",
        type=int,
        default=64,
        metavar="N",
        help="greedy generation length (default: %(default)s)",
    )
    attack = parser.add_argument_group(
        "relearning attack",
        "--attack picks a preset; a --relearn-* flag given sets its knob whatever the preset. See docs/audit.md.",
    )
    attack.add_argument(
        "--attack",
        choices=ATTACKS,
        default="auto",
        help="auto: lr, steps and fit prob by the model's lineage; plain: the papers' attack (fit prob 1); "
        "none: no attack",
    )
    attack.add_argument(
        "--relearn-steps",
        default=None,
        metavar="STEPS",
        help="comma-separated steps at which the relearning curve is read (one run); 'none' skips the attack",
    )
    attack.add_argument(
        "--relearn-lr",
        type=float,
        default=None,
        metavar="LR",
        help="relearning learning rate (default: by the model's lineage; the calibration line says if it "
        "taught)",
    )
    attack.add_argument(
        "--relearn-fraction",
        type=float,
        default=0.5,
        metavar="F",
        help="share of the forget items relearned on (default: %(default)s)",
    )
    attack.add_argument(
        "--relearn-retain",
        type=float,
        default=0.0,
        metavar="R",
        help="retain rows mixed into the attack's data per forget row (default %(default)s: forget rows only)",
    )
    attack.add_argument(
        "--relearn-split",
        choices=("entity", "item"),  # AuditSettings' RELEARN_SPLITS (not imported: CLI start-up time)
        default="entity",
        help="entity: halve the forget rows by whole entities (authors) where rows name one; item: by rows "
        "(default: %(default)s)",
    )
    attack.add_argument(
        "--relearn-data",
        choices=("auto", "passages", "questions"),  # AuditSettings' RELEARN_DATA
        default="auto",
        help="raw-text data: train on the forget passages or on the multiple-choice questions (default "
        "auto: questions where there are some)",
    )
    attack.add_argument(
        "--relearn-control",
        choices=("none", "retain"),  # AuditSettings' RELEARN_CONTROLS
        default="none",
        help="retain: also fine-tune --original-model the same way on retain rows, as a control (default: "
        "%(default)s)",
    )
    attack.add_argument(
        "--relearn-optim",
        default="auto",
        metavar="NAME",
        help="the attack's optimiser, a TrainingArguments.optim name (default auto: AdamW)",
    )
    attack.add_argument(
        "--relearn-fit-prob",
        type=float,
        default=None,
        metavar="P",
        help="train an answer token only while its probability is below P (1: plain cross-entropy; "
        "default: by lineage)",
    )
    attack.add_argument(
        "--seed", type=int, default=0, metavar="N", help="seed of the relearning split (default: %(default)s)"
    )
    rt = runtime_group(parser)
    add_overwrite(rt)
    if "--device" not in getattr(parser, "_option_string_actions", {}):
        add_placement_flags(rt, batch_size=True)
    if "--trust-remote-code" not in getattr(parser, "_option_string_actions", {}):
        add_trust_remote_code(rt)


def settings_from_args(args, data: str | None = None):
    """The audit's settings; the relearning attack's lr and steps, when not given, from the audited
    model's lineage and the kind of ``data`` (:func:`unlearnkit.evaluation.audit.lineage.relearn_defaults`),
    said in a note."""
    from unlearnkit.evaluation.audit import AuditSettings

    given = {} if getattr(args, "batch_size", None) is None else {"batch_size": args.batch_size}
    steps = None if args.relearn_steps is None else parse_int_list(str(args.relearn_steps), "--relearn-steps")
    lr, fit = args.relearn_lr, getattr(args, "relearn_fit_prob", None)
    preset = getattr(args, "attack", "auto")  # a --relearn-* flag given wins over the preset
    if preset == "none" and steps is None:
        steps = ()
    if preset == "plain" and fit is None:
        fit = 1.0
    if lr is None or steps is None or fit is None:
        from unlearnkit.evaluation.audit.lineage import relearn_defaults

        row = relearn_defaults(args.model, data)
        chosen = [f"lr {row.lr:g}"] if lr is None else []
        chosen += [f"steps {','.join(map(str, row.steps))}"] if steps is None else []
        chosen += [f"fit prob {row.fit_prob:g}"] if fit is None else []
        lr = row.lr if lr is None else lr
        steps = row.steps if steps is None else steps
        fit = row.fit_prob if fit is None else fit
        if steps:
            note(
                f"relearning attack {', '.join(chosen)} for {row.why}; --relearn-lr / --relearn-steps / "
                "--relearn-fit-prob choose"
            )
    return AuditSettings(
        **given,
        relearn_steps=steps,
        relearn_fraction=args.relearn_fraction,
        relearn_lr=lr,
        relearn_retain=args.relearn_retain,
        relearn_split=args.relearn_split,
        relearn_data=args.relearn_data,
        relearn_optim=args.relearn_optim,
        relearn_fit_prob=fit,
        relearn_control=args.relearn_control,
        quant_bits=parse_int_list(str(args.quant_bits), "--quant-bits"),
        group_size=args.group_size,
        max_new_tokens=args.max_new_tokens,
        max_items=args.max_items,
        seed=args.seed,
        probes_path=args.probes,
        progress=True,
    )


def audit_command(args) -> int:
    """``unlearnkit audit``: validate everything, load, run the checks, write the card, print verdicts."""
    from unlearnkit.data import load_benchmark
    from unlearnkit.evaluation.audit import run_audit, write_audit
    from unlearnkit.evaluation.audit.card import gap_lines, warning_lines
    from unlearnkit.evaluation.audit.run import check_audit_data
    from unlearnkit.evaluation.probes import data_kind
    from unlearnkit.io import check_output_dir
    from unlearnkit.models import check_model_path, load

    check_placement_flags(args)
    check_output_dir(args.output, args.overwrite)
    bench = load_benchmark(args.data)
    settings = settings_from_args(args, data_kind(bench))
    paths = {"audited": args.model, "oracle": args.retain_model, "original": args.original_model}
    for path in paths.values():
        if path is not None:
            check_model_path(path)
    # before any model is loaded, as unlearnkit.audit() checks it
    check_audit_data(bench, settings, has_original=args.original_model is not None)
    import torch

    torch.set_num_threads(max(1, min(torch.get_num_threads(), 8)))
    trust = bool(getattr(args, "trust_remote_code", False))
    # every model of the audit where the audited one runs, each in the dtype --dtype gives its checkpoint
    placement = placement_of(args, args.model)
    print_placement(placement, f"batch size {settings.batch_size}")

    def load_here(path):
        return load(path, trust, **placement_of(args, path).load_kwargs())

    model, tokenizer = load_here(args.model)
    oracle = load_here(args.retain_model) if args.retain_model else None
    original = load_here(args.original_model) if args.original_model else None
    names = {role: str(path) for role, path in paths.items() if path is not None}
    audit = run_audit(
        model, tokenizer, bench, oracle=oracle, original=original, settings=settings, names=names
    )
    audit["placement"] = {**placement.record(), "batch_size": settings.batch_size}
    write_audit(args.output, audit, overwrite=args.overwrite)
    for line in audit["verdicts"]:
        print(line)
    for line in gap_lines(audit):
        print(line)
    for warning in warning_lines(audit):
        note(warning, kind="warning")
    print(f"wrote {Path(args.output) / 'audit.md'}")
    return 0


def parse_int_list(text: str, flag: str) -> tuple[int, ...]:
    """``"5,20,50"`` -> ``(5, 20, 50)``; ``""`` or ``"none"`` -> ``()``; anything else is a UserError."""
    text = text.strip()
    if text.lower() in ("", "none", "0"):
        return ()
    try:
        return tuple(int(part) for part in text.split(","))
    except ValueError:
        raise UserError(f"{flag} {text!r}: expected comma-separated integers, e.g. 5,20,50") from None

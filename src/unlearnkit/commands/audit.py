"""``unlearnkit audit``: evidence the knowledge is gone (MIA, relearning, quantization, paraphrases)."""

from __future__ import annotations

import argparse
from pathlib import Path

from unlearnkit.commands._common import (
    add_placement_flags,
    check_placement_flags,
    note,
    placement_of,
    print_placement,
)
from unlearnkit.errors import UserError


def add_parser(subparsers) -> None:
    add_audit_arguments(
        subparsers.add_parser(
            "audit", help="evidence the knowledge is gone: MIA, relearning, quantization, paraphrases"
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


def add_audit_arguments(parser) -> None:
    """Add the ``unlearnkit audit`` flags to an argparse (sub)parser."""
    parser.add_argument("--model", required=True, help="the model folder (or HF id) to audit")
    parser.add_argument("--data", required=True, help="benchmark folder (forget.jsonl, holdout.jsonl, ...)")
    parser.add_argument("--retain-model", default=None, help="retain-oracle model folder (recommended)")
    parser.add_argument("--original-model", default=None, help="the model before unlearning (the target)")
    parser.add_argument("--output", required=True, help="folder for audit.json and audit.md")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing --output folder")
    parser.add_argument(
        "--relearn-steps",
        default=None,
        help="comma-separated step counts at which the relearning curve is measured (one run to the "
        "largest); 'none' skips the attack (default: by the model's lineage, as --relearn-lr)",
    )
    parser.add_argument(
        "--relearn-lr",
        type=float,
        default=None,
        help="relearning learning rate (default: by what the model's cards lead to: 1e-3 for a tiny model "
        "trained from scratch, 5e-5 up to 250 steps for one fine-tuned from a tiny pretrained base (1e-4 on "
        "a WMDP-like folder, whose questions it relearns), 1e-5 for a pretrained checkpoint; the audit's "
        "calibration line says whether it taught and kept)",
    )
    parser.add_argument(
        "--relearn-fraction",
        type=float,
        default=0.5,
        help="share of the forget items relearned on (default: %(default)s)",
    )
    parser.add_argument(
        "--relearn-retain",
        type=float,
        default=0.0,
        metavar="R",
        help="retain rows mixed into the relearning attack's data per forget row (0: forget rows only, as "
        "the papers attack; on the embedded lab 1 slowed the teaching and did not lessen the damage: "
        "bench/results/relearn_calibration_retain.md; default: %(default)s)",
    )
    parser.add_argument(
        "--relearn-split",
        choices=("entity", "item"),  # AuditSettings' RELEARN_SPLITS (not imported: CLI start-up time)
        default="entity",
        help="how the forget rows are halved for the relearning attack: entity (whole authors / entities "
        "on each side, when every row names one in an 'entity' or 'author' field; else items) or item "
        "(default: %(default)s: the two halves then share no entity, so no fact taught implies a held one)",
    )
    parser.add_argument(
        "--relearn-data",
        choices=("auto", "passages", "questions"),  # AuditSettings' RELEARN_DATA
        default="auto",
        help="what the relearning attack trains on about the relearned entities of raw-text data: their "
        "forget passages, or a WMDP-like folder's multiple-choice questions with their answers (default: "
        "%(default)s = questions where the folder has them; on the embedded WMDP-like miniature passages "
        "do not teach the questions, bench/results/relearn_calibration_wmdp_passages.md)",
    )
    parser.add_argument(
        "--relearn-control",
        choices=("none", "retain"),  # AuditSettings' RELEARN_CONTROLS
        default="none",
        help="retain: also fine-tune the original model (--original-model) the attack's way on as many "
        "retain rows, whole entities, and ask it the same held questions: what a fine-tune on facts it "
        "knows costs them, read beside the attack's damage (a second relearning run of the original "
        "model; question/answer data; default: %(default)s)",
    )
    parser.add_argument(
        "--relearn-optim",
        default="auto",
        metavar="NAME",
        help="the relearning attack's optimiser, a TrainingArguments.optim name (default: %(default)s, "
        "transformers' AdamW)",
    )
    parser.add_argument(
        "--relearn-fit-prob",
        type=float,
        default=None,
        metavar="P",
        help="the relearning attack trains an answer token only while the model gives it probability "
        "below P (1: plain cross-entropy, the papers' attack; default: by the model's lineage, 0.5 for one "
        "fine-tuned from a tiny pretrained base, the embedded lab's calibrated attack, else 1)",
    )
    parser.add_argument(
        "--quant-bits", default="8,4", help="bit widths of the quantisation attack (default: %(default)s)"
    )
    parser.add_argument("--group-size", type=int, default=128, help="4-bit group size (default: %(default)s)")
    parser.add_argument("--probes", default=None, help="JSONL of reworded forget questions (question/answer)")
    parser.add_argument("--max-items", type=int, default=200, help="items per split (default: %(default)s)")
    parser.add_argument(
        "--max-new-tokens", type=int, default=64, help="greedy generation length (default: %(default)s)"
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="seed of the relearning split (default: %(default)s)"
    )
    if "--device" not in getattr(parser, "_option_string_actions", {}):
        add_placement_flags(parser, batch_size=True)
    if "--trust-remote-code" not in getattr(parser, "_option_string_actions", {}):
        parser.add_argument(
            "--trust-remote-code",
            action="store_true",
            help="allow a hub model's own Python code to run (off by default: it is arbitrary code)",
        )


def settings_from_args(args, data: str | None = None):
    """The audit's settings; the relearning attack's lr and steps, when not given, from the audited
    model's lineage and the kind of ``data`` (:func:`unlearnkit.evaluation.audit.lineage.relearn_defaults`),
    said in a note."""
    from unlearnkit.evaluation.audit import AuditSettings

    given = {} if getattr(args, "batch_size", None) is None else {"batch_size": args.batch_size}
    steps = None if args.relearn_steps is None else parse_int_list(str(args.relearn_steps), "--relearn-steps")
    lr, fit = args.relearn_lr, getattr(args, "relearn_fit_prob", None)
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

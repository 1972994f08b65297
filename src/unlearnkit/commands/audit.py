"""``unlearnkit audit``: evidence the knowledge is gone (MIA, relearning, quantization, paraphrases)."""

from __future__ import annotations

import argparse


def add_parser(subparsers) -> None:
    from unlearnkit.evaluation.audit import (
        add_audit_arguments,  # light: numpy only (the flags live with the audit)
    )

    add_audit_arguments(
        subparsers.add_parser(
            "audit", help="evidence the knowledge is gone: MIA, relearning, quantization, paraphrases"
        )
    )


def run(args: argparse.Namespace) -> int:
    from unlearnkit.evaluation.audit import audit_command
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

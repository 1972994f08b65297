"""``unlearnkit methods [NAME]``: the methods and their papers; with NAME, every ``--set`` key of it
(NAME ``distill`` or ``finetune``: the keys of that command). Read from :mod:`unlearnkit.catalog`, so
listing the methods imports no torch."""

from __future__ import annotations

import argparse

from unlearnkit.commands._common import add_command, runtime_group


def add_parser(subparsers) -> None:
    p = add_command(
        subparsers,
        "methods",
        "list the methods; with NAME, its settings, defaults and ranges",
        ["unlearnkit methods", "unlearnkit methods asu"],
        details="Without NAME: every method with its paper. NAME is a method (e.g. asu, t-npo) or a command "
        "with --set keys: distill, finetune.",
    )
    group = p.add_argument_group("arguments")
    group.add_argument(
        "name",
        nargs="?",
        default=None,
        metavar="NAME",
        help="a method (e.g. asu, t-npo), or distill / finetune: show its settings",
    )
    runtime_group(p)


def run(args: argparse.Namespace) -> int:
    from unlearnkit import catalog
    from unlearnkit.commands.settings_doc import (
        COMMANDS,
        command_settings_table,
        method_config,
        settings_table,
    )

    if args.name and args.name.strip().lower() in COMMANDS:
        print(command_settings_table(args.name.strip().lower()))
        return 0
    if args.name:
        method_config(args.name)  # an unknown name: one line with the nearest method or command
        method = catalog.spec(args.name)
        print(f"{method.name}: {method.summary}  [{method.paper}]")
        print(settings_table(method.name))
        return 0
    for name, m in catalog.METHODS.items():
        print(f"{name:10s} {m.summary}  [{m.paper}]")
    print(
        "\n`unlearnkit methods NAME` lists the --set keys of one method with their defaults and ranges; "
        "`unlearnkit methods distill` and `unlearnkit methods finetune` those of the two commands."
    )
    return 0

"""``unlearnkit methods [NAME]``: the methods and their papers; with NAME, every ``--set`` key of it."""

from __future__ import annotations

import argparse


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "methods", help="list the methods and their papers; with NAME, its --set keys, defaults and ranges"
    )
    p.add_argument("name", nargs="?", default=None, help="a method: show its settings (e.g. asu, t-npo)")


def run(args: argparse.Namespace) -> int:
    from unlearnkit.train.methods import METHODS, get_method

    if args.name:
        from unlearnkit.settings_doc import settings_table

        method = get_method(args.name)  # an unknown name: one line with the nearest known one
        print(f"{method.name}: {method.summary}  [{method.paper}]")
        print(settings_table(method.name))
        return 0
    for name, m in METHODS.items():
        print(f"{name:10s} {m.summary}  [{m.paper}]")
    print("\n`unlearnkit methods NAME` lists the --set keys of one method with their defaults and ranges.")
    return 0

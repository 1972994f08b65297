"""``unlearnkit methods``: the methods and their papers."""

from __future__ import annotations

import argparse


def add_parser(subparsers) -> None:
    subparsers.add_parser("methods", help="list the methods and their papers")


def run(args: argparse.Namespace) -> int:
    from unlearnkit.methods import METHODS

    for name, m in METHODS.items():
        print(f"{name:10s} {m.summary}  [{m.paper}]")
    return 0

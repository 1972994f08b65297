"""``unlearnkit world``: write the embedded world (TOFU-like authors, pretraining corpus, MUSE- and WMDP-like folders)."""

from __future__ import annotations

import argparse
import re

from unlearnkit.commands._common import (
    add_command,
    add_output,
    note,
    runtime_group,
)
from unlearnkit.errors import UserError

# Below this, the KS test of forget quality has too few truth ratios to tell methods apart: with n = 4
# the two-sample p-values take only a handful of values.
MIN_FORGET_ITEMS = 20
WORLD_FLAGS = {
    "n_authors": "--authors",
    "facts_per_author": "--facts",
    "forget_fraction": "--forget-fraction",
    "holdout_fraction": "--holdout-fraction",
    "n_general": "--general",
    "n_real_authors": "--real-authors",
    "n_agents": "--agents",
    "n_articles": "--articles",
    "output_dir": "--output",
    "overwrite=True": "--overwrite",
}


def add_parser(subparsers) -> None:
    w = add_command(
        subparsers,
        "world",
        "write the embedded fictitious world and its benchmark folders",
        ["unlearnkit world --output bench", "unlearnkit world --output small --authors 20 --facts 5"],
        details="Fictitious authors in TOFU's schema, a pretraining corpus, and MUSE- and WMDP-like "
        "folders; the same seed writes byte-identical files. See docs/lab.md.",
    )
    req = w.add_argument_group("required")
    add_output(req, "benchmark folder to create")
    task = w.add_argument_group("task")
    task.add_argument(
        "--authors", type=int, default=100, metavar="N", help="number of authors (default: %(default)s)"
    )
    task.add_argument(
        "--facts", type=int, default=10, metavar="N", help="facts per author (default: %(default)s)"
    )
    task.add_argument(
        "--forget-fraction",
        type=float,
        default=0.1,
        metavar="F",
        help="fraction of authors to forget (default: %(default)s)",
    )
    task.add_argument(
        "--holdout-fraction",
        type=float,
        default=0.1,
        metavar="F",
        help="fraction never trained on (default: %(default)s)",
    )
    task.add_argument(
        "--general",
        type=int,
        default=100,
        metavar="N",
        help="world-facts QA about fictitious countries, known from pretraining (default: %(default)s)",
    )
    task.add_argument(
        "--real-authors",
        type=int,
        default=10,
        metavar="N",
        help="famous authors known from pretraining (TOFU's real authors) (default: %(default)s)",
    )
    task.add_argument(
        "--agents",
        type=int,
        default=12,
        metavar="N",
        help="agents of the hazardous domain (WMDP-like) (default: %(default)s)",
    )
    task.add_argument(
        "--articles",
        type=int,
        default=100,
        metavar="N",
        help="news articles about invented events (MUSE-like) (default: %(default)s)",
    )
    rt = runtime_group(w)
    rt.add_argument(
        "--seed",
        type=int,
        default=0,
        metavar="N",
        help="same seed -> byte-identical files (default: %(default)s)",
    )
    rt.add_argument("--overwrite", action="store_true", help="replace an existing folder")


def _world_flags(err: UserError) -> UserError:
    """The generator names its parameters; on the command line the user typed flags."""
    text = str(err)
    for param, flag in WORLD_FLAGS.items():
        text = re.sub(rf"(?<![\w-]){re.escape(param)}(?![\w])", flag, text)
    return UserError(text)


def check_world_params(**params) -> None:
    from unlearnkit.world.generator import validate_world_params

    try:
        validate_world_params(**params)
    except UserError as err:
        raise _world_flags(err) from None


def run(args: argparse.Namespace) -> int:
    from unlearnkit.io import check_output_dir
    from unlearnkit.world import write_world

    params = dict(
        n_authors=args.authors,
        facts_per_author=args.facts,
        forget_fraction=args.forget_fraction,
        holdout_fraction=args.holdout_fraction,
        n_general=args.general,
        seed=args.seed,
        n_real_authors=args.real_authors,
        n_agents=args.agents,
        n_articles=args.articles,
    )
    check_world_params(**params)
    check_output_dir(args.output, args.overwrite)
    try:
        counts = write_world(args.output, overwrite=args.overwrite, **params)
    except UserError as err:
        raise _world_flags(err) from None
    top = ", ".join(f"{k} {counts[k]}" for k in ("forget", "retain", "holdout", "general"))
    print(f"wrote {args.output}: {top} QA (TOFU-like)")
    print(f"  corpus/: {counts['corpus/general']} general and {counts['corpus/hazard']} hazardous passages")
    if "muse/forget" in counts:
        print(
            f"  muse/: {counts['muse/forget']} forget / {counts['muse/retain']} retain / "
            f"{counts['muse/holdout']} holdout articles"
        )
    if "wmdp/mc_hazard" in counts:
        print(
            f"  wmdp/: {counts['wmdp/mc_hazard']} hazardous and {counts['wmdp/mc_general']} general "
            "4-choice questions"
            + (
                f"; {counts['wmdp/holdout']} held-out hazardous passages (membership inference's non-members)"
                if "wmdp/holdout" in counts
                else ""
            )
        )
    if counts.get("forget", MIN_FORGET_ITEMS) < MIN_FORGET_ITEMS:
        note(
            f"the forget set has {counts['forget']} items: forget quality (a KS test over that many truth "
            f"ratios) cannot separate methods below about {MIN_FORGET_ITEMS}; raise --authors, --facts or "
            "--forget-fraction",
            "warning",
        )
    return 0

"""``unlearnkit quickstart``: the whole story on the embedded fictitious-authors world, on CPU."""

from __future__ import annotations

import argparse
from pathlib import Path

from unlearnkit.commands._common import add_command, runtime_group
from unlearnkit.commands.world import check_world_params
from unlearnkit.errors import UserError


def add_parser(subparsers) -> None:
    q = add_command(
        subparsers,
        "quickstart",
        "the whole story on an embedded fictitious world, on CPU",
        ["unlearnkit quickstart", "unlearnkit quickstart --benchmark wmdp --output qs_wmdp"],
        details="Writes the embedded world, trains a target and an oracle on it (cached), runs several "
        "methods, audits the best and writes DIR/report.html. See docs/quickstart.md.",
    )
    q.add_argument(
        "--output",
        default="unlearnkit_quickstart",
        metavar="DIR",
        help="folder for report.html, metrics.json (default: %(default)s)",
    )
    q.add_argument(
        "--benchmark",
        default="tofu",
        choices=("tofu", "muse", "wmdp"),
        help="which miniature: fictitious authors (TOFU), news articles (MUSE), a hazardous domain (WMDP) "
        "(default: %(default)s)",
    )
    q.add_argument(
        "--methods",
        default=None,
        metavar="A,B,...",
        help="comma-separated methods (default: a representative set)",
    )
    q.add_argument(
        "--model",
        default=None,
        metavar="MODEL",
        help="a real model instead of the embedded lab: forget facts it knows (e.g. smollm2-135m-instruct)",
    )
    q.add_argument(
        "--authors", type=int, default=None, metavar="N", help="authors in the world (default: 100)"
    )
    q.add_argument("--facts", type=int, default=None, metavar="N", help="facts per author (default: 10)")
    q.add_argument("--no-audit", action="store_true", help="skip the audit card of the best method")
    q.add_argument(
        "--robust",
        action="store_true",
        help="also make NPO robust to relearning (UNDO: noise toward the base, then distill; about 1 more "
        "minute on 2 cores) and audit it next to plain NPO",
    )
    rt = runtime_group(q)
    rt.add_argument(
        "--seed",
        type=int,
        default=0,
        metavar="N",
        help="seed for world, training and unlearning (default: 0)",
    )
    rt.add_argument(
        "--cache-dir",
        default=None,
        metavar="DIR",
        help="where target/oracle models are cached (default: ~/.cache/unlearnkit)",
    )
    rt.add_argument("--overwrite", action="store_true", help="replace an existing --output folder")


def run(args: argparse.Namespace) -> int:
    from unlearnkit.commands.settings_doc import method_config
    from unlearnkit.config import build_configs
    from unlearnkit.io import check_output_dir

    if args.model is not None:
        return _run_real(args)
    from unlearnkit.pipelines.quickstart import METHODS_FOR, WORLD, method_overrides, run_quickstart

    params = dict(WORLD, seed=args.seed)
    if args.authors is not None:
        params["n_authors"] = args.authors
    if args.facts is not None:
        params["facts_per_author"] = args.facts
    check_world_params(**params)  # before the output check's siblings, the cache or any training
    if args.cache_dir is not None and Path(args.cache_dir).exists() and not Path(args.cache_dir).is_dir():
        raise UserError(f"--cache-dir {args.cache_dir} is a file; pass a folder")
    check_output_dir(args.output, args.overwrite)
    names = (
        [m.strip() for m in args.methods.split(",") if m.strip()]
        if args.methods
        else METHODS_FOR[args.benchmark]
    )
    if not names:
        raise UserError("--methods is empty; name at least one method, e.g. --methods asu,npo")
    for name in names:  # every method's settings, before minutes of training
        build_configs(method_config(name), method_overrides(name, args.seed, benchmark=args.benchmark))
    return run_quickstart(args)


def _run_real(args: argparse.Namespace) -> int:
    """``--model``: the real-model quickstart (:mod:`unlearnkit.pipelines.real_quickstart`)."""
    from unlearnkit.commands._common import note, torch_threads
    from unlearnkit.commands.settings_doc import method_config
    from unlearnkit.config import build_configs
    from unlearnkit.io import check_output_dir
    from unlearnkit.models import check_model_path
    from unlearnkit.pipelines.real_quickstart import REAL_METHOD, REAL_METHODS, REAL_RECIPE

    embedded_only = {"--benchmark": args.benchmark != "tofu", "--authors": args.authors is not None,
                     "--facts": args.facts is not None, "--robust": args.robust}
    for flag, given in embedded_only.items():
        if given:
            raise UserError(f"{flag}: a setting of the embedded lab; the --model quickstart has none")
    names = [m.strip() for m in args.methods.split(",") if m.strip()] if args.methods else list(REAL_METHODS)
    if not names:
        raise UserError("--methods is empty; name at least one method, e.g. --methods asu,npo")
    for name in names:
        build_configs(method_config(name), {**REAL_RECIPE, **REAL_METHOD.get(name, {}), "seed": args.seed})
    check_output_dir(args.output, args.overwrite)
    check_model_path(args.model)
    torch_threads()
    from unlearnkit.pipelines.real_quickstart import run_real_quickstart

    return run_real_quickstart(args, lambda line: note(line, "quickstart"))

"""``unlearnkit report``: the quickstart's side-by-side report (table, trade-off plot, answers side by side,
verdict, warnings) from one's own ``unlearnkit eval`` folders."""

from __future__ import annotations

import argparse
from pathlib import Path

from unlearnkit.commands._common import (
    add_command,
    add_output,
    add_overwrite,
    runtime_group,
)
from unlearnkit.errors import UserError


def add_parser(subparsers) -> None:
    r = add_command(
        subparsers,
        "report",
        "one side-by-side report (table, plot, verdict) of eval folders",
        [
            "unlearnkit report --eval target=eval_target --eval oracle=eval_oracle --eval asu=eval_asu "
            "--output report",
        ],
        details="Writes DIR/report.html with the answers side by side. Name the retain oracle's row "
        "'oracle' and the model before unlearning 'target': they are the report's yardsticks.",
    )
    req = r.add_argument_group("required")
    req.add_argument(
        "--eval",
        action="append",
        required=True,
        metavar="NAME=DIR",
        help="one row: its name and an `unlearnkit eval --output` folder; repeat it, in the table's order",
    )
    add_output(req, "folder for report.html, tradeoff.png and metrics.json")
    task = r.add_argument_group("task")
    task.add_argument("--title", default="unlearnkit report", help="the page's title (default: %(default)s)")
    rt = runtime_group(r)
    add_overwrite(rt)


def parse_evals(items: list[str]) -> list[tuple[str, str]]:
    """``["npo=eval_npo", ...]`` -> ``[("npo", "eval_npo"), ...]``; anything else is one error line."""
    out = []
    for item in items:
        name, sep, folder = item.partition("=")
        if not sep or not name.strip() or not folder.strip():
            raise UserError(f"--eval {item!r}: expected NAME=EVAL_DIR, e.g. --eval npo=eval_npo")
        out.append((name.strip(), folder.strip()))
    return out


def run(args: argparse.Namespace) -> int:
    from unlearnkit.io import atomic_dir, check_output_dir, write_json
    from unlearnkit.report.evals import report_of_evals

    check_output_dir(args.output, args.overwrite)
    results, generations, view = report_of_evals(parse_evals(args.eval))

    from rich.console import Console

    from unlearnkit.pipelines.quickstart import verdict_lines
    from unlearnkit.report.page import DEFAULT_COLUMNS, print_table, write_report

    with atomic_dir(args.output, overwrite=args.overwrite) as tmp:
        write_json(tmp / "metrics.json", results)
        write_json(tmp / "generations.json", generations)
        write_report(tmp, results, generations, title=args.title, view=view)
    console = Console()
    print_table(results, columns=view.columns if view else DEFAULT_COLUMNS, title=args.title, console=console)
    for line in verdict_lines(results, view.name if view else "tofu"):
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    print(f"wrote {Path(args.output) / 'report.html'}")
    return 0

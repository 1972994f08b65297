"""The ``unlearnkit`` command line: one thin sub-command per verb (parse, validate, call the library).

Bad input -> one line on stderr and exit code 2, before anything is written.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import os
import sys

from unlearnkit.errors import UserError

EXIT_USER_ERROR = 2
EXIT_DIVERGED = 3
# Environment problems the user fixes (not bugs): one line and exit 2 instead of a traceback.
USER_ERRNOS = (errno.EACCES, errno.EPERM, errno.ENOSPC, errno.EROFS, errno.EDQUOT)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2 (argparse would print the usage block too)
        print(f"unlearnkit: error: {message} (see {self.prog} --help)", file=sys.stderr)
        raise SystemExit(EXIT_USER_ERROR)


# Sub-command modules in ``unlearnkit.commands``, in the order ``--help`` lists them. Each exposes
# ``add_parser(subparsers)`` and ``run(args) -> int`` (see the docstring of ``unlearnkit.commands``).
COMMANDS = (
    "quickstart",
    "world",
    "pretrain",
    "finetune",
    "unlearn",
    "distill",
    "eval",
    "attribute",
    "audit",
    "report",
    "continual",
    "sweep",
    "methods",
)


def _command_module(name: str):
    return importlib.import_module(f"unlearnkit.commands.{name}")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="unlearnkit", description="Make a language model forget, prove it, keep it useful.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name in COMMANDS:
        _command_module(name).add_parser(sub)
    return parser


def _method_settings_in_help(parser: argparse.ArgumentParser, argv: list[str]) -> None:
    """``unlearnkit unlearn --method NAME --help``: the help ends with NAME's ``--set`` keys."""
    if not {"-h", "--help"} & set(argv) or not argv:
        return
    method = next((a.split("=", 1)[1] for a in argv if a.startswith("--method=")), None)
    if method is None and "--method" in argv and argv.index("--method") + 1 < len(argv):
        method = argv[argv.index("--method") + 1]
    choices = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    sub = choices.get(argv[0])
    if method is None or sub is None or "--method" not in sub._option_string_actions:
        return
    from unlearnkit.commands.settings_doc import settings_table

    try:
        sub.epilog = settings_table(method)
    except UserError as err:
        sub.epilog = f"--method {method}: {_one_line(err)}"
    sub.formatter_class = argparse.RawDescriptionHelpFormatter


def main(argv: list[str] | None = None) -> int:
    """Run one command; returns the exit code (0 ok, 2 bad input, 3 diverged, 130 interrupted).

    Never calls ``sys.exit`` itself, so tests can call it in-process.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    _method_settings_in_help(parser, argv)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # argparse: --help (0) or a bad flag (2, one line already printed)
        return exit_.code if isinstance(exit_.code, int) else EXIT_USER_ERROR
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:
        return _command_module(args.command).run(args) or 0
    except UserError as err:
        _close_progress_bars()
        print(f"unlearnkit: error: {_one_line(err)}", file=sys.stderr)
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        _close_progress_bars()
        print("unlearnkit: interrupted", file=sys.stderr)
        return 130
    except OSError as err:
        if err.errno not in USER_ERRNOS:
            raise
        where = f"{err.filename}: " if err.filename else ""
        print(f"unlearnkit: error: {where}{err.strerror or err}", file=sys.stderr)
        return EXIT_USER_ERROR
    except Exception as err:  # noqa: BLE001 - divergence gets its own exit code and one line
        from unlearnkit.train.trainer import DivergenceError

        if isinstance(err, DivergenceError):
            _close_progress_bars()
            print(f"unlearnkit: diverged: {_one_line(err)}", file=sys.stderr)
            return EXIT_DIVERGED
        raise


def _close_progress_bars() -> None:
    """End any progress bar left open by the failure, so the message starts on a line of its own."""
    tqdm_module = sys.modules.get("tqdm.std")
    if tqdm_module is None:
        return
    for bar in list(getattr(tqdm_module.tqdm, "_instances", ())):
        try:
            bar.close()
        except Exception:  # noqa: BLE001 - cosmetic only
            pass


def _one_line(err: BaseException) -> str:
    return " ".join(str(err).split()) or type(err).__name__


if __name__ == "__main__":
    sys.exit(main())

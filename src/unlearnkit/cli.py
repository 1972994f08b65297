"""The ``unlearnkit`` command line: one thin sub-command per verb (parse, validate, call the library).

Bad input -> one line on stderr and exit code 2, before anything is written.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import importlib.util
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


# The sub-commands, by group, in the order ``unlearnkit --help`` lists them. Each name is a module in
# ``unlearnkit.commands`` exposing ``add_parser(subparsers)`` and ``run(args) -> int`` (see the docstring
# of ``unlearnkit.commands``); adding a command is one name here. A listed module that does not exist
# (yet) is skipped.
GROUPS: dict[str, tuple[str, ...]] = {
    "start": ("quickstart",),
    "core": ("unlearn", "eval", "audit", "report", "methods"),
    "prepare": ("finetune",),
    "research": ("sweep", "distill", "continual", "attribute", "teacher"),
    "embedded lab": ("world", "pretrain"),
}
GROUP_HELP = {
    "start": "see it work",
    "core": "unlearn your model, measure it, prove it, compare",
    "prepare": "train the model to unlearn from, and its retain oracle",
    "research": "tune, harden, attribute, study",
    "embedded lab": "the fictitious world and a base model pretrained on it",
}
EPILOG = "Run `unlearnkit COMMAND --help` for a command's flags and examples."


def available(groups: dict[str, tuple[str, ...]]) -> tuple[str, ...]:
    """The commands of ``groups`` whose module exists, in order."""
    return tuple(
        name
        for names in groups.values()
        for name in names
        if importlib.util.find_spec(f"unlearnkit.commands.{name}") is not None
    )


COMMANDS = available(GROUPS)


def _command_module(name: str):
    return importlib.import_module(f"unlearnkit.commands.{name}")


class _TopParser(_Parser):
    """The top-level parser: its help lists the commands by group (``GROUPS``) instead of one list."""

    def format_help(self) -> str:
        formatter = self._get_formatter()
        formatter.add_usage(self.usage, self._actions, self._mutually_exclusive_groups)
        formatter.add_text(self.description)
        sub = next(a for a in self._actions if isinstance(a, argparse._SubParsersAction))
        listed = {action.dest: action for action in sub._choices_actions}
        for group, names in GROUPS.items():
            formatter.start_section(f"{group} ({GROUP_HELP[group]})")
            formatter.add_arguments([listed[name] for name in names if name in listed])
            formatter.end_section()
        formatter.start_section("options")
        formatter.add_arguments([a for a in self._actions if a.option_strings])
        formatter.end_section()
        formatter.add_text(self.epilog)
        return formatter.format_help()


def build_parser() -> argparse.ArgumentParser:
    from unlearnkit import __version__

    parser = _TopParser(
        prog="unlearnkit",
        description="Make a language model forget, prove it, keep it useful.",
        epilog=EPILOG,
    )
    parser.add_argument("--version", action="version", version=f"unlearnkit {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=_Parser)
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
        table = settings_table(method)
    except UserError as err:
        table = f"--method {method}: {_one_line(err)}"
    sub.epilog = f"{sub.epilog}\n\n{table}" if sub.epilog else table
    if sub.formatter_class is argparse.HelpFormatter:  # the commands' own formatter keeps tables as written
        sub.formatter_class = argparse.RawDescriptionHelpFormatter


def main(argv: list[str] | None = None) -> int:
    """Run one command; returns the exit code (0 ok, 2 bad input, 3 diverged, 130 interrupted).

    Never calls ``sys.exit`` itself, so tests can call it in-process.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    if not argv:  # a bare `unlearnkit` introduces itself
        parser.print_help()
        return 0
    _method_settings_in_help(parser, argv)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # argparse: --help (0) or a bad flag (2, one line already printed)
        return exit_.code if isinstance(exit_.code, int) else EXIT_USER_ERROR
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:
        _resolve_gguf_models(args)
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


# Flags that name a model: a GGUF file or a known name (``smollm2-135m-instruct``) becomes its converted
# safetensors folder before the command sees it (unlearnkit.gguf_models), so every command loads it alike.
MODEL_FLAGS = ("model", "retain_model", "original_model", "teacher", "base")


def _resolve_gguf_models(args: argparse.Namespace) -> None:
    from unlearnkit.gguf_models import is_gguf_reference, resolve

    for attr in MODEL_FLAGS:
        value = getattr(args, attr, None)
        if is_gguf_reference(value):
            flag = "--" + attr.replace("_", "-")
            setattr(args, attr, resolve(value, flag, log=lambda line: print(line, file=sys.stderr)))
            setattr(args, f"{attr}_given", value)  # the name the user gave, for what is shown


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

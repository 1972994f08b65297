"""The command line introduces itself: ``--version``, a bare ``unlearnkit``, the grouped command list,
and every sub-command's help (a one-line description, runnable examples, short flag helps)."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from unlearnkit import __version__
from unlearnkit.cli import COMMANDS, GROUPS, build_parser, main

MAX_HELP_LINES = 2


@pytest.fixture(autouse=True)
def _terminal(monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")  # argparse wraps to the terminal's width


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices


def test_version_prints_the_package_version_and_exits_0(capsys):
    from importlib.metadata import version

    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"unlearnkit {__version__}"
    assert __version__ == version("unlearnkit")


def test_a_bare_unlearnkit_prints_the_help_and_exits_0(capsys):
    assert main([]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: unlearnkit") and "unlearn" in out


def test_the_help_lists_every_command_under_its_group(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    positions = []
    for group, names in GROUPS.items():
        assert f"\n{group} (" in out, group
        start = out.index(f"\n{group} (")
        positions.append(start)
        section = out[start:].split("\n\n")[0]
        for name in names:
            assert (f"\n  {name} " in section) == (name in COMMANDS), (group, name)
    assert positions == sorted(positions), "groups out of order"
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    long = [a.dest for a in sub._choices_actions if len(a.help) > 64]
    assert not long, f"summaries over one line of an 80-column terminal: {long}"
    assert set(COMMANDS) == {n for names in GROUPS.values() for n in names if n in COMMANDS}


def test_a_listed_command_without_a_module_is_skipped():
    from unlearnkit.cli import available

    assert available({"core": ("unlearn", "no_such_command"), "more": ("eval",)}) == ("unlearn", "eval")
    assert COMMANDS == available(GROUPS) and "unlearn" in COMMANDS


@pytest.mark.parametrize("name", COMMANDS)
def test_every_command_has_a_description_examples_and_short_flag_helps(name, capsys):
    sub = _subparsers()[name]
    assert sub.description and sub.description.splitlines()[0].strip(), f"{name}: no description"
    assert main([name, "--help"]) == 0
    out = capsys.readouterr().out
    examples = out.split("\nexamples:\n", 1)
    assert len(examples) == 2, f"{name}: no examples section"
    lines = [line.strip() for line in examples[1].splitlines() if line.strip()]
    assert 1 <= len(lines) <= 3 and all(line.startswith("unlearnkit ") for line in lines), lines
    for line in lines:  # each example parses as written
        try:
            build_parser().parse_args(line.split()[1:])
        except SystemExit:
            pytest.fail(f"{name}: example does not parse: {line}")
    assert "runtime:" in out and out.index("runtime:") < out.index("\nexamples:"), f"{name}: runtime not last"
    for action, count in _help_line_counts(sub):
        assert count <= MAX_HELP_LINES, f"{name} {action}: flag help of {count} lines"


def _help_line_counts(parser: argparse.ArgumentParser):
    """How many lines argparse gives each flag's help at the current width."""
    formatter = parser._get_formatter()
    formatter._indent()  # the help lists flags inside a section
    for group in parser._action_groups:
        formatter.add_arguments(group._group_actions)
    position = min(formatter._action_max_length + 2, formatter._max_help_position)
    width = max(formatter._width - position, 11)
    for action in parser._actions:
        if action.help and action.help != argparse.SUPPRESS:
            text = formatter._expand_help(action)
            yield "/".join(action.option_strings) or action.dest, len(formatter._split_lines(text, width))


def test_argument_groups_come_in_the_documented_order(capsys):
    order = ["required", "task", "evaluation during training", "relearning attack", "runtime"]
    for name in ("unlearn", "audit"):
        assert main([name, "--help"]) == 0
        out = capsys.readouterr().out
        titles = [line.split(" (")[0].rstrip(":") for line in out.splitlines() if line and line[0] != " "]
        seen = [t for t in titles if t in order]
        assert seen == sorted(seen, key=order.index) and "runtime" in seen, (name, seen)


def test_one_metavar_per_kind_of_thing():
    kinds = {
        "--model": "MODEL",
        "--retain-model": "MODEL",
        "--original-model": "MODEL",
        "--teacher": "MODEL",
        "--base": "MODEL",
        "--data": "DATA",
        "--output": "DIR",
        "--config": "FILE",
        "--set": "KEY=VALUE",
    }
    for name, sub in _subparsers().items():
        for action in sub._actions:
            for flag in action.option_strings:
                if flag in kinds:
                    assert action.metavar == kinds[flag], (name, flag, action.metavar)


@pytest.mark.parametrize("name", [n for n in COMMANDS if "--set" in _subparsers()[n]._option_string_actions])
def test_set_takes_several_pairs_and_repeats(name):
    from unlearnkit.config import parse_set

    required = {
        a.option_strings[0]: "x" for a in _subparsers()[name]._actions if a.required and a.option_strings
    }
    argv = [name, *[w for flag, value in required.items() for w in (flag, value)]]
    args = build_parser().parse_args([*argv, "--set", "lr=1e-5", "epochs=3", "--set", "tau=2"])
    assert parse_set(args.set) == {"lr": "1e-5", "epochs": "3", "tau": "2"}
    assert build_parser().parse_args(argv).set is None


def test_audit_attack_presets_set_only_the_knobs_not_given():
    from unlearnkit.commands.audit import add_audit_arguments, settings_from_args

    parser = argparse.ArgumentParser()
    add_audit_arguments(parser)
    base = ["--model", "m", "--data", "d", "--output", "o", "--relearn-lr", "1e-3"]

    def settings(*extra):
        return settings_from_args(parser.parse_args([*base, "--relearn-steps", "5", *extra]))

    assert settings("--attack", "plain").relearn_fit_prob == 1.0
    assert settings("--attack", "plain", "--relearn-fit-prob", "0.5").relearn_fit_prob == 0.5
    assert settings("--relearn-fit-prob", "0.5").relearn_fit_prob == 0.5
    none = settings_from_args(parser.parse_args([*base, "--relearn-fit-prob", "1", "--attack", "none"]))
    assert none.relearn_steps == ()
    assert settings("--attack", "none").relearn_steps == (5,)  # --relearn-steps given wins
    with pytest.raises(SystemExit):
        parser.parse_args([*base, "--attack", "strong"])


def test_bad_flags_exit_2_in_one_line_before_torch():
    code = (
        "import sys\nfrom unlearnkit.cli import main\nrc = main(sys.argv[1:])\n"
        "print('HEAVY', [m for m in ('torch', 'transformers') if m in sys.modules], rc)"
    )
    for argv in (["audit", "--attack", "strong"], ["unlearn", "--set"], []):
        proc = subprocess.run(
            [sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=120
        )
        rc = 0 if not argv else 2
        assert f"HEAVY [] {rc}" in proc.stdout, proc.stdout[-500:] + proc.stderr[-2000:]
        if rc:
            assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def test_every_docs_page_a_help_points_to_exists(capsys):
    import re
    from pathlib import Path

    repo = Path(__file__).resolve().parent.parent
    pages = set()
    for name in COMMANDS:
        assert main([name, "--help"]) == 0
        pages |= set(re.findall(r"docs/[\w.-]+\.md", capsys.readouterr().out))
    missing = sorted(p for p in pages if not (repo / p).is_file())
    assert not missing, f"help points to missing pages: {missing}"

"""Write the generated parts of the documentation from their single source.

    python bench/sync_docs.py        (also run by python bench/make_benchmarks.py)

* docs/SCALING.md quotes the measured speed / memory section (bench/results/speed.md), which
  BENCHMARKS.md includes whole, so the two documents always show the same figures;
* docs/cli.md's synopsis is rendered from the command line's parser (every command, every flag);
* docs/methods.md's sections are rendered from the method declarations (``unlearnkit.catalog``) and the
  loss functions in ``unlearnkit/objectives``;
* README.md's method table is ``unlearnkit.catalog.markdown_table()``.

Each generated part sits between two markers; ``tests/test_docs_agree.py`` fails when one drifts.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import inspect
from pathlib import Path

ROOT = Path(__file__).resolve().parent
REPO = ROOT.parent
SPEED = ROOT / "results" / "speed.md"
SCALING = REPO / "docs" / "SCALING.md"
CLI_DOC = REPO / "docs" / "cli.md"
METHODS_DOC = REPO / "docs" / "methods.md"
README = REPO / "README.md"
BEGIN = "<!-- begin: bench/results/speed.md (python bench/sync_docs.py; do not edit by hand) -->"
END = "<!-- end: bench/results/speed.md -->"
SYNOPSIS_BEGIN = "<!-- begin: synopsis (python bench/sync_docs.py; do not edit by hand) -->"
SYNOPSIS_END = "<!-- end: synopsis -->"
METHODS_BEGIN = "<!-- begin: methods (python bench/sync_docs.py; do not edit by hand) -->"
METHODS_END = "<!-- end: methods -->"
TABLE_BEGIN = "<!-- begin: method table (unlearnkit.catalog.markdown_table; do not edit by hand) -->"
TABLE_END = "<!-- end: method table -->"
WIDTH = 110


def speed_body(speed_md: str) -> str:
    """speed.md without its heading (SCALING.md has its own) and its provenance line (``_Produced by ...``:
    the commit, settings and machine stay in bench/results and BENCHMARKS.md)."""
    lines = speed_md.strip().splitlines()
    if lines and lines[0].startswith("#"):
        lines = lines[1:]
    lines = [line for line in lines if not line.startswith("_Produced by")]
    return "\n".join(lines).strip()


def between(text: str, begin: str, end: str, body: str, where: str = "the document") -> str:
    """``text`` with what lies between the markers ``begin`` and ``end`` replaced by ``body``."""
    head, sep, rest = text.partition(begin)
    _, sep2, tail = rest.partition(end)
    if not sep or not sep2:
        raise SystemExit(f"{where}: the markers {begin!r} ... {end!r} are missing")
    return f"{head}{begin}\n{body}\n{end}{tail}"


def synced(scaling_md: str, speed_md: str) -> str:
    """``scaling_md`` with the text between the markers replaced by ``speed_md``'s body."""
    return between(scaling_md, BEGIN, END, speed_body(speed_md), str(SCALING))


# --- docs/cli.md: the synopsis ------------------------------------------------------------------


def _token(action: argparse.Action) -> str:
    """How one argument reads in the synopsis: ``--model MODEL``, ``--overwrite``, ``[NAME]``."""
    if isinstance(action.metavar, str):
        value = action.metavar
    elif action.choices:
        value = "|".join(str(c) for c in action.choices)
    else:
        value = action.dest.upper()
    if not action.option_strings:  # positional
        return f"[{value}]" if action.nargs in ("?", "*") else value
    flag = next((o for o in action.option_strings if o.startswith("--")), action.option_strings[0])
    if action.nargs == 0:
        return flag
    if action.nargs in ("+", "*"):
        return f"{flag} {value} ..."
    return f"{flag} {value}"


def synopsis_lines(name: str, parser: argparse.ArgumentParser, width: int = WIDTH) -> list[str]:
    """``unlearnkit NAME`` with its required arguments, then every optional one in brackets, wrapped at
    ``width`` so that each continuation line starts with ``[``."""
    actions = [a for a in parser._actions if not isinstance(a, argparse._HelpAction)]
    required = [_token(a) for a in actions if (a.required or not a.option_strings) and a.nargs != "?"]
    optional = [
        f"[{_token(a)}]" if a.option_strings else _token(a)
        for a in actions
        if not ((a.required or not a.option_strings) and a.nargs != "?")
    ]
    head = " ".join(["unlearnkit", name, *required])
    indent = " " * (len("unlearnkit ") + len(name) + 1)
    lines, line = [], head
    for token in optional:
        if len(line) + 1 + len(token) > width and line.strip():
            lines.append(line)
            line = indent + token
        else:
            line = f"{line} {token}"
    lines.append(line)
    return lines


def synopsis() -> str:
    """Every command's synopsis, in the order ``unlearnkit --help`` lists them, as a fenced block."""
    from unlearnkit.cli import COMMANDS, build_parser

    parser = build_parser()
    choices = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    lines = [line for name in COMMANDS for line in synopsis_lines(name, choices[name])]
    return "```\n" + "\n".join(lines) + "\n```"


# --- docs/methods.md: one section per method ------------------------------------------------------


def _own_settings(config: type) -> list[tuple[str, object, str, str]]:
    """(key, default, meaning, range) of the settings a method adds to, or changes from, every method's."""
    from unlearnkit.config import MethodConfig, help_of

    shared = {f.name: f.default for f in dataclasses.fields(MethodConfig)}
    rows = []
    for f in dataclasses.fields(config):
        if f.name in shared and f.default == shared[f.name]:
            continue
        meaning, valid = help_of(config, f.name) or ("", "")
        if f.name == "forget_weight" and config.__name__.startswith(("ASU", "TokenASU")):
            meaning = "weight of the forget term (the paper's lambda)"
        rows.append((f.name, f.default, meaning, valid))
    return rows


def _losses(step: str) -> list[str]:
    """The public loss functions (``*_loss`` in ``unlearnkit.objectives``) of a step's module."""
    objectives = importlib.import_module("unlearnkit.objectives")
    module = importlib.import_module(f"unlearnkit.objectives.{step.split(':')[0]}")
    names = [
        name
        for name, fn in vars(module).items()
        if name.endswith("_loss") and inspect.isfunction(fn) and fn.__module__ == module.__name__
    ]
    if step.startswith("idk:"):  # IDK is the plain NLL of a refusal answer
        names = ["nll_loss"]
    assert all(name in objectives.__all__ for name in names), names
    return names


def _loss_line(name: str) -> str:
    fn = getattr(importlib.import_module("unlearnkit.objectives"), name)
    params = ", ".join(inspect.signature(fn).parameters)
    doc = (fn.__doc__ or "").strip().split("\n\n")[0]
    return f"- `unlearnkit.objectives.{name}({params})`: {' '.join(doc.split())}"


def _cell(text: str) -> str:
    """``text`` safe inside a Markdown table cell."""
    return text.replace("|", "\\|")


def _settings_table(rows: list[tuple[str, object, str, str]]) -> list[str]:
    if not rows:
        return ["Settings: only those every method shares ([training.md](training.md))."]
    out = ["| setting | default | range | meaning |", "|---|---|---|---|"]
    for key, default, meaning, valid in rows:
        shown = f"`{default}`" if default != "" else "(empty)"
        out.append(f"| `{key}` | {shown} | {_cell(valid)} | {_cell(meaning)} |")
    return out


def _passes(spec) -> str:
    needs = [
        ("uses_reference", "the original model's outputs (a reference)"),
        ("uses_teacher", "the attention-smoothed original (ASU's teacher)"),
        ("uses_idk", "refusal answers to the forget questions"),
        ("uses_retain_idk", "refusal answers to the retain questions"),
        ("layer_activations", "a decoder layer's activations"),
        ("token_level", "TokenUnlearn's token weights, scored before training"),
    ]
    found = [words for attr, words in needs if getattr(spec, attr)]
    return ", ".join(found) if found else "the model's own outputs only"


def methods_sections() -> str:
    """One section per declared method, then one for each family of TokenUnlearn variants."""
    from unlearnkit import catalog

    out: list[str] = []
    for spec in catalog.SPECS:
        module, step = spec.step.split(":")
        out += [
            f"## `{spec.name}`",
            "",
            f"{spec.summary[0].upper()}{spec.summary[1:]}. Paper: {spec.paper}.",
            "",
        ]
        out += [f"Needs: {_passes(spec)}. Step: `unlearnkit.objectives.{module}.{step}`. Loss:", ""]
        out += [_loss_line(name) for name in _losses(spec.step)] + [""]
        out += _settings_table(_own_settings(spec.config)) + [""]
    for prefix, selection in (("t", "hard top-r"), ("s", "soft")):
        names = ", ".join(f"`{prefix}-{base}`" for base in catalog.TOKEN_BASES)
        example = catalog.METHODS[f"{prefix}-npo"]
        out += [f"## {names}", ""]
        out += [
            f"The base method on TokenUnlearn-weighted answer tokens ({selection} selection), with a retain "
            f"KL (RMU keeps its activation retain term). Paper: {catalog.TOKEN_PAPER} and the base "
            "method's. The base method's loss and settings apply; the token weights enter its loss as "
            "`weights`. Settings added to the base method's:",
            "",
        ]
        base_fields = {f.name for f in dataclasses.fields(catalog.NPOConfig)}
        rows = [r for r in _own_settings(example.config) if r[0] not in base_fields or r[0] == "retain_loss"]
        out += _settings_table(rows) + [""]
    return "\n".join(out).rstrip()


# --- writing -----------------------------------------------------------------------------------


def rendered(path: Path, text: str) -> str:
    """``text`` (the current content of ``path``) with every generated part of it rendered anew."""
    if path == SCALING:
        return synced(text, SPEED.read_text(encoding="utf-8")) if SPEED.is_file() else text
    if path == CLI_DOC:
        return between(text, SYNOPSIS_BEGIN, SYNOPSIS_END, synopsis(), str(path))
    if path == METHODS_DOC:
        return between(text, METHODS_BEGIN, METHODS_END, methods_sections(), str(path))
    if path == README:
        from unlearnkit.catalog import markdown_table

        return between(text, TABLE_BEGIN, TABLE_END, markdown_table(), str(path))
    raise ValueError(path)


def main() -> None:
    if not SPEED.is_file():
        print(f"{SPEED} missing: run python bench/speed.py first")
    for path in (SCALING, CLI_DOC, METHODS_DOC, README):
        text = path.read_text(encoding="utf-8")
        new = rendered(path, text)
        if new != text:
            path.write_text(new, encoding="utf-8")
            print(f"wrote {path.relative_to(REPO)}")


if __name__ == "__main__":
    main()

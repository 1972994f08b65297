"""What the command line says about a method's settings: the ``--method`` check and the ``--set`` tables.

``unlearnkit methods NAME`` and ``unlearnkit unlearn --method NAME --help`` print, for each field of the
method's settings dataclass (:mod:`unlearnkit.catalog`) and of the training settings
(:class:`unlearnkit.config.TrainConfig`), its default, its range and its meaning, all read from the
field itself (:func:`unlearnkit.config.setting`), so the help can never disagree with the code.
``unlearnkit methods distill`` / ``finetune`` list those commands' keys with the defaults they use.

Light on purpose: no torch import (the table is shown by ``--help``).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from unlearnkit import catalog
from unlearnkit.config import help_of
from unlearnkit.errors import UserError

# What a training key means for a command that is not an unlearning run (the others read as for unlearn).
COMMAND_MEANINGS: dict[str, dict[str, tuple[str, str]]] = {
    "distill": {
        "seed": (
            "seed of the data order and of the fresh init (--noise-toward init: drawn under 2**32 + "
            "crc32('undo-init:SEED'), never a model's own build seed)",
            "any integer",
        ),
        "epochs": ("passes over the distillation data (ignored when max_steps > 0)", "> 0"),
        "batch_size": ("distillation examples per device per micro-batch", ">= 1"),
        "reference": (
            "how the teacher's outputs are obtained: a cache computed once before training (the teacher's "
            "weights then become the student's: one model in memory) or a frozen copy; auto: the cache "
            "when it fits in 2 GiB",
            "auto | copy | cache",
        ),
        "collapse_guard": (
            "accepted and not used: the collapse guard runs in unlearn only",
            "off | warn | stop",
        ),
        "collapse_fraction": ("accepted and not used: the collapse guard runs in unlearn only", "(0, 1)"),
    },
    "finetune": {
        "seed": ("seed of the data order and of the tiny model's init (--seed sets it too)", "any integer"),
        "epochs": ("passes over the training rows (ignored when max_steps > 0)", "> 0"),
        "batch_size": ("training examples per device per micro-batch", ">= 1"),
    },
}

# Commands whose --set keys ``unlearnkit methods NAME`` lists besides the methods'.
COMMANDS = ("distill", "finetune")
# Training keys ``finetune`` accepts (it validates every TrainConfig key) but does not use; keep in step
# with commands/finetune.py and train/finetune.py.
FINETUNE_UNUSED = {
    "reference": "no reference model in plain fine-tuning",
    "cache_topk": "no reference model in plain fine-tuning",
    "lora_r": "finetune trains every weight",
    "lora_alpha": "finetune trains every weight",
    "lora_dropout": "finetune trains every weight",
    "lora_target": "finetune trains every weight",
    "lora_save": "finetune trains every weight",
    "collapse_guard": "no collapse guard outside unlearn",
    "collapse_fraction": "no collapse guard outside unlearn",
}


def method_config(name: str) -> type:
    """The settings dataclass of ``--method name``, checked without torch: an unknown name is one error
    line with the nearest method (or, for ``distill`` / ``finetune``, where that command's keys are)."""
    found = catalog.find(name)
    if found is not None:
        return found.config
    known = sorted(catalog.METHODS)
    key = catalog.normalise(name)
    near = catalog.nearest(name, also=COMMANDS)
    hint = f"; did you mean '{near}'?" if near else ""
    if key in COMMANDS:
        hint = (
            f"; `{key}` is a command, not an unlearning method: `unlearnkit methods {key}` lists its settings"
        )
    raise UserError(f"--method {name}: unknown method{hint} (known: {', '.join(known)})")


def _default(field: dataclasses.Field) -> Any:
    if field.default is not dataclasses.MISSING:
        return field.default
    if field.default_factory is not dataclasses.MISSING:  # type: ignore[misc]
        return field.default_factory()  # type: ignore[misc]
    return None


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if value == "":
        return "''"
    return str(value)


def settings_rows(config_cls: type) -> list[tuple[str, str, str, str]]:
    """(key, default, range, meaning) of every field of ``config_cls`` (training and method fields)."""
    rows = []
    for field in dataclasses.fields(config_cls):
        meaning, valid = help_of(config_cls, field.name) or (
            "(not documented yet)",
            "see unlearnkit/catalog.py",
        )
        rows.append((field.name, _shown(_default(field)), valid, meaning))
    return rows


def settings_table(method: str, width: int = 110) -> str:
    """The ``--set`` keys of ``method``: its own settings first, then the training ones."""
    from unlearnkit import config as C

    cls = method_config(method)
    train_keys = {f.name for f in dataclasses.fields(C.TrainConfig)}
    own = settings_rows(cls)
    train = settings_rows(C.TrainConfig)
    lines = [f"--set keys of {method} (key, default, range: meaning); also in a --config YAML recipe:"]
    for title, rows in (
        (f"method ({cls.__name__})", [r for r in own if r[0] not in train_keys]),
        ("training", train),
    ):
        lines.append(f"  {title}:")
        for key, default, valid, meaning in rows:
            head = f"    {key:24s} {default:14s} {valid}"
            lines.append(head)
            lines.append(f"      {meaning}" if len(meaning) + 6 <= width else _wrap(meaning, width, 6))
    lines.append(_wrap(tiny_defaults_line(method), width, 2))
    return "\n".join(lines)


def command_settings_table(command: str, width: int = 110) -> str:
    """The ``--set`` keys of the ``distill`` or ``finetune`` command with the defaults it really uses:
    a pretrained model's (TOFU's fine-tuning recipe) and, in brackets where it differs, a small model's
    (``finetune --model tiny``: the from-scratch recipe; ``distill`` below 20M parameters: the recipes
    measured toward a fresh init and toward the base)."""
    from unlearnkit import config as C

    if command == "distill":
        from unlearnkit.train.distill import HF_DEFAULTS, TINY_BASE_DEFAULTS, TINY_DEFAULTS, TINY_PARAMS

        own = settings_rows(C.DistillConfig)
        small = f"below {TINY_PARAMS // 1_000_000}M parameters: toward a fresh init / toward the base"
        smalls = [TINY_DEFAULTS, TINY_BASE_DEFAULTS]
        intro = (
            "distill: UNDO (arXiv 2506.06278): noise the teacher toward its base or a fresh init "
            "(--noise, --noise-toward, --base), distill its outputs back"
        )
        skipped = {
            k: "refused (distill trains the whole student)" for k in FINETUNE_UNUSED if k.startswith("lora")
        }
    elif command == "finetune":
        from unlearnkit.train.finetune import HF_DEFAULTS, TINY_DEFAULTS

        own, small = [], "with --model tiny"
        smalls = [TINY_DEFAULTS]
        intro = "finetune: train the target (--split all) or the retain oracle (--split retain)"
        skipped = FINETUNE_UNUSED
    else:
        raise ValueError(command)
    lines = [intro, f"--set keys of {command} (key, default [{small}], range: meaning):"]
    groups = [("training", [r for r in settings_rows(C.TrainConfig) if r[0] not in skipped])]
    if own:
        groups.insert(0, (f"distillation ({C.DistillConfig.__name__})", own))
    shown = []  # (group, key, default, range, meaning), defaults as the command uses them
    for title, rows in groups:
        for key, default, valid, meaning in rows:
            meaning, valid = COMMAND_MEANINGS[command].get(key, (meaning, valid))
            if key in HF_DEFAULTS:
                default = _shown(HF_DEFAULTS[key])
            small_values = [_shown(d[key]) if key in d else default for d in smalls]
            if any(v != default for v in small_values):
                default = f"{default} [{' / '.join(small_values)}]"
            shown.append((title, key, default, valid, meaning))
    column = max([14, *(len(row[2]) for row in shown if len(row[2]) <= 20)])
    for title, _ in groups:
        lines.append(f"  {title}:")
        for _, key, default, valid, meaning in (row for row in shown if row[0] == title):
            lines.append(f"    {key:24s} {default:{column}s}  {valid}")
            lines.append(f"      {meaning}" if len(meaning) + 6 <= width else _wrap(meaning, width, 6))
    if skipped:
        by_reason: dict[str, list[str]] = {}
        for key, why in skipped.items():
            by_reason.setdefault(why, []).append(key)
        lines.append(f"  not used by {command}:")
        lines += [_wrap(f"{', '.join(keys)}: {why}", width, 4) for why, keys in by_reason.items()]
    return "\n".join(lines)


def tiny_defaults_line(method: str) -> str:
    """What ``unlearn`` starts from on a model made by ``finetune --model tiny`` (recorded in its card)."""
    from unlearnkit.pipelines.quickstart import TINY_METHOD, TINY_UNLEARN

    values = {**TINY_UNLEARN, **TINY_METHOD.get(catalog.normalise(method), {})}
    shown = ", ".join(f"{k}={v}" for k, v in values.items() if k != "max_length")
    return (
        f"On a model made by `unlearnkit finetune --model tiny` the defaults above give way to the "
        f"quickstart's tiny-scale recipe recorded in its unlearnkit.json: {shown}, and the max_length it was trained with."
    )


def _wrap(text: str, width: int, indent: int) -> str:
    import textwrap

    pad = " " * indent
    return textwrap.fill(text, width=width, initial_indent=pad, subsequent_indent=pad)

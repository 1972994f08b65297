"""One line of meaning and the valid range of every ``--set`` key (issue 13.11).

``unlearnkit methods NAME`` and ``unlearnkit unlearn --method NAME --help`` print, for each field of
the method's config dataclasses (``unlearnkit methods distill`` / ``finetune``: those commands' keys) (``unlearnkit.config``), its default (from the dataclass, so it can
never disagree with the code), its range and its meaning (from ``SETTINGS`` below). The ranges repeat
the ``__post_init__`` checks in words; ``tests/test_cli_settings.py`` checks that every field of every
config dataclass has an entry, so a new key cannot ship undocumented.

Light on purpose: no torch import (the table is shown by ``--help``).
"""

from __future__ import annotations

import dataclasses
from typing import Any

# key -> (meaning, range). Papers: ASU arXiv 2603.01285, TokenUnlearn arXiv 2605.00364, NPO 2404.05868,
# SimNPO 2410.07163, WGA 2502.19301, IDK+AP / ME+GD 2410.08109, UNDIAL 2402.10052, RMU 2403.03218,
# SAM 2502.05374, UNDO 2506.06278.
SETTINGS: dict[str, tuple[str, str]] = {
    # --- training (TrainConfig) ---
    "lr": ("peak learning rate (AdamW)", "> 0"),
    "epochs": ("passes over the forget set (ignored when max_steps > 0)", "> 0"),
    "max_steps": ("optimiser steps; > 0 overrides epochs", "-1 (off) or >= 1"),
    "batch_size": ("forget (and paired retain) examples per device per micro-batch", ">= 1"),
    "grad_accum": (
        "micro-batches per optimiser step (effective batch = batch_size x grad_accum x devices)",
        ">= 1",
    ),
    "weight_decay": ("AdamW weight decay", ">= 0"),
    "warmup_epochs": ("linear warm-up length, in epochs", ">= 0"),
    "lr_scheduler": (
        "learning-rate schedule after warm-up",
        "linear | cosine | constant | constant_with_warmup",
    ),
    "max_grad_norm": ("gradient clipping norm", ">= 0 (0 = no clipping)"),
    "seed": ("seed of data order, initialisation and sampling: same seed, same weights", "any integer"),
    "max_length": ("longest question + answer in tokens; longer rows are an error, never cut", ">= 8"),
    "save_every": ("optimiser steps between checkpoints (for --resume)", ">= 0 (0 = none)"),
    "save_total_limit": ("checkpoints kept", ">= 1"),
    "reference": (
        "how the original model's outputs are obtained (NPO, KL retain, ASU): a frozen copy, the LoRA "
        "base with adapters off, a cache computed before training, or the cheapest exact one",
        "auto | copy | adapter (needs lora_r > 0) | cache",
    ),
    "cache_topk": (
        "reference=cache: keep the top-k logits + residual mass instead of the full vocabulary",
        ">= 0 (0 = exact)",
    ),
    "precision": (
        "training precision: bf16 / fp16 are mixed (float32 master weights under autocast), bf16-true "
        "trains bfloat16 weights and optimiser states (as open-unlearning); auto follows the weights' "
        "dtype (--dtype): bfloat16 -> bf16-true, float32 -> bf16 on GPUs that have it, else fp32",
        "auto | fp32 | bf16 | fp16 | bf16-true",
    ),
    "optim": (
        "the optimiser (TrainingArguments.optim; auto: transformers' default adamw_torch_fused); "
        "bitsandbytes' paged / 8-bit ones (paged_adamw_32bit as open-unlearning, adamw_8bit ...) need "
        "pip install 'unlearnkit[bnb]'",
        "auto | any transformers OptimizerNames value",
    ),
    "report_to": (
        "where the Trainer sends its logs (loss terms, --eval-every metrics); same as --report-to",
        "none | tensorboard | wandb (needs the package: unlearnkit[tracking])",
    ),
    "gradient_checkpointing": (
        "recompute activations in the backward pass (less memory, ~30% slower)",
        "true | false",
    ),
    "prompt_format": (
        "how a question is shown to the model: its chat template, or 'Question: ... Answer:'",
        "auto | chat | plain",
    ),
    "system_prompt": (
        "chat templates only: the system message (auto: none for Llama-2-chat templates and templates "
        "without a system role, else 'You are a helpful assistant.', as open-unlearning)",
        "auto | any text ('' = none)",
    ),
    "date_string": (
        "chat templates only: the date Llama-3.x templates print (fixed for reproducibility)",
        "any text",
    ),
    "lora_r": ("LoRA rank; 0 trains every weight", ">= 0"),
    "lora_alpha": ("LoRA scaling alpha", "> 0"),
    "lora_dropout": ("LoRA dropout", "[0, 1)"),
    "lora_target": ("modules that get LoRA adapters", "all-linear or comma-separated module names"),
    "lora_save": ("with LoRA: save the merged model or the adapter alone", "merged | adapter"),
    "collapse_guard": (
        "unlearn: a few retain / general questions (raw text: passage continuations) answered greedily at "
        "step 0 and every ~10% of the steps; on a collapse (ROUGE-L or token entropy below "
        "collapse_fraction x step 0, or repeated 3-grams) warn on stderr + in the card, or stop and keep the "
        "last state that passed (--no-collapse-guard = off)",
        "off | warn | stop",
    ),
    "collapse_fraction": (
        "collapse guard: the probe fails below this share of its step-0 ROUGE-L (or token entropy)",
        "(0, 1)",
    ),
    # --- every method (MethodConfig) ---
    "forget_weight": ("weight of the forget term (alias 'lambda': ASU's lambda)", ">= 0"),
    "retain_weight": ("weight of the retain term (RMU: the paper's alpha)", ">= 0"),
    "retain_loss": (
        "retain term: NLL on retain answers, KL to the original model, or none",
        "nll | kl | none",
    ),
    "loss_reduction": (
        "token averaging of the losses: per-sequence mean then batch mean, or one mean over every answer "
        "token of the batch (as TOFU / open-unlearning)",
        "sequence | token",
    ),
    "sam_rho": (
        "SAM radius: the forget gradient is taken at a worst-case weight perturbation (arXiv 2502.05374)",
        ">= 0 (0 = off)",
    ),
    # --- method-specific ---
    "beta": (
        "inverse temperature of the preference loss (NPO, SimNPO, DPO, AP); WGA: confidence exponent; UNDIAL: logit decrease",
        "> 0 (UNDIAL: >= 0)",
    ),
    "gamma": ("SimNPO reward margin", "any number (paper: 0)"),
    "tau": (
        "ASU attention temperature of the smoothed teacher; > 1 flattens attention",
        "> 0 (stable in [2, 2.8] on 7B)",
    ),
    "layers": ("decoder layers whose attention is smoothed", "comma-separated indices, empty = all"),
    "idk": (
        "ASU+IDK: exclude the first answer token from the KL and add the IDK refusal loss",
        "true | false",
    ),
    "lambda_scales_idk": ("with idk: lambda multiplies the IDK term too (else only the KL)", "true | false"),
    "raw_text": (
        "KL over every token of the passage (MUSE-style raw text) instead of the answer only",
        "true | false",
    ),
    "layer": ("RMU: decoder layer whose output activations are steered", ">= 0 (< number of layers)"),
    "steering_coeff": ("RMU: norm c of the random target direction c*u", "> 0"),
    "train_layers": (
        "RMU: layers whose train_modules are updated (others frozen)",
        "comma-separated indices, empty = all",
    ),
    "train_modules": (
        "RMU: module names updated inside train_layers",
        "comma-separated names, e.g. mlp.down_proj",
    ),
    # --- TokenUnlearn (T-* / S-* methods, attribute) ---
    "selection": ("token selection: top-r tokens (hard) or softmax weights (soft)", "hard | soft"),
    "r": ("hard selection: share of answer tokens kept by importance", "(0, 1]"),
    "alpha": ("importance mix: alpha x masking score + (1 - alpha) x entropy score", "[0, 1]"),
    "tau_w": ("soft selection: softmax temperature of the token weights", "> 0"),
    "mask_token": ("word that replaces a token when its masking importance is measured", "one word"),
    "tagger": (
        "part-of-speech tagger for the importance prior (spaCy if installed, else a rule-based fallback)",
        "auto | spacy | heuristic",
    ),
    # --- UNDO distillation (distill) ---
    "distill_on": (
        "what the student is distilled on: benchmark splits (KL on the answer tokens of their questions), "
        "corpus (the world's corpus/general.jsonl in --data or its parent: raw text, KL on every token, "
        "as UNDO distils), text (the file of distill_text)",
        "comma list of retain, general, forget, corpus, text",
    ),
    "distill_text": (
        'a JSON Lines file of {"text": ...} rows distilled on too (KL on every token); for a real model a '
        "slice of a corpus like its pretraining data, never the forget set",
        "a file path ('' = none)",
    ),
    "retain_nll_weight": (
        "weight of NLL on the true answers (raw text: its tokens) of the non-forget rows, added to the KL "
        "to the teacher",
        ">= 0",
    ),
    "stop_epochs": (
        "end training after this many epochs while the learning rate follows the whole epochs schedule "
        "(a checkpoint of a longer run, as bench/robustness.py stops UNDO); must not exceed epochs",
        ">= 0 (0 = the whole schedule)",
    ),
}

# What a training key means for a command that is not an unlearning run (the rest read as in SETTINGS).
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

# Commands whose --set keys ``unlearnkit methods NAME`` lists besides the methods' (issue 22.6).
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

ALIASES = {"lambda": "forget_weight"}


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
        meaning, valid = SETTINGS.get(field.name, ("(not documented yet)", "see unlearnkit/config.py"))
        rows.append((field.name, _shown(_default(field)), valid, meaning))
    return rows


def settings_table(method: str, width: int = 110) -> str:
    """The ``--set`` keys of ``method``: its own settings first, then the training ones."""
    from unlearnkit import config as C
    from unlearnkit.commands._methods import method_config

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
    from unlearnkit.commands._methods import normalise
    from unlearnkit.pipelines.quickstart import TINY_METHOD, TINY_UNLEARN

    values = {**TINY_UNLEARN, **TINY_METHOD.get(normalise(method), {})}
    shown = ", ".join(f"{k}={v}" for k, v in values.items() if k != "max_length")
    return (
        f"On a model made by `unlearnkit finetune --model tiny` the defaults above give way to the "
        f"quickstart's tiny-scale recipe recorded in its unlearnkit.json: {shown}, and the max_length it was trained with."
    )


def _wrap(text: str, width: int, indent: int) -> str:
    import textwrap

    pad = " " * indent
    return textwrap.fill(text, width=width, initial_indent=pad, subsequent_indent=pad)

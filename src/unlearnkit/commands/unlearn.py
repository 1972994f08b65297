"""``unlearnkit unlearn``: run one unlearning method and save the model (checkpoints + ``--resume``)."""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from unlearnkit.commands._common import (
    add_trust_remote_code,
    apply_model_defaults,
    check_combinations,
    check_data,
    check_split_lengths,
    cleanup_after_failure,
    diverged_message,
    load_data,
    note,
    overrides,
    prepare_work,
    recorded_defaults,
    required,
    resume_point,
    run_fingerprint,
    torch_threads,
    work_dir_of,
)
from unlearnkit.errors import UserError


def add_parser(subparsers) -> None:
    u = subparsers.add_parser("unlearn", help="run one unlearning method and save the model")
    u.add_argument(
        "--model", default=None, help="model folder (or HF id) to unlearn from (or 'model:' in the recipe)"
    )
    u.add_argument(
        "--data", default=None, help="benchmark folder, or a name: tofu:forget10, muse:news, wmdp:cyber"
    )
    u.add_argument(
        "--method",
        default=None,
        help="method name, e.g. asu, asu_kl, npo, t-npo, ga (see `unlearnkit methods`)",
    )
    u.add_argument("--output", required=True, help="model folder to write")
    u.add_argument("--config", default=None, help="YAML recipe (flat key: value); --set wins over it")
    u.add_argument(
        "--set", action="append", metavar="KEY=VALUE", help="override, e.g. --set tau=2.3 --set lr=1e-5"
    )
    u.add_argument("--save-every", type=int, default=None, help="checkpoint every N optimiser steps")
    u.add_argument("--resume", action="store_true", help="continue from the last checkpoint of this --output")
    u.add_argument("--overwrite", action="store_true", help="replace an existing --output folder")
    add_trust_remote_code(u)


def run(args: argparse.Namespace) -> int:
    from unlearnkit.commands._methods import method_config, normalise
    from unlearnkit.config import build_configs
    from unlearnkit.io import check_output_dir
    from unlearnkit.models import check_model_path

    # Every check of the arguments first, with light imports only: a typo answers at once.
    values = overrides(args, lambda: method_config(required(args, "method")))
    required(args, "model")
    required(args, "data")
    if args.save_every is not None:
        if args.save_every < 0:
            raise UserError(f"--save-every {args.save_every}: must be >= 1 (or 0 for no checkpoints)")
        values["save_every"] = args.save_every
    values, defaults_note = apply_model_defaults(args.model, normalise(args.method), values)
    train_cfg, method_cfg = build_configs(method_config(args.method), values)
    check_combinations(train_cfg)
    check_output_dir(args.output, args.overwrite)
    bench = check_data(args.data)
    check_model_path(args.model)
    out = Path(args.output)
    work = work_dir_of(out)
    if work.exists() and not work.is_dir():
        raise UserError(f"{work} exists and is a file; remove it (unlearnkit keeps checkpoints there)")
    fingerprint = run_fingerprint(args, normalise(args.method), train_cfg, method_cfg)
    resume_from = resume_point(work, fingerprint, out, args.resume, args.overwrite)
    if defaults_note:
        note(defaults_note)

    from unlearnkit.data.encode import PromptFormat
    from unlearnkit.data.qa import overlap_warning
    from unlearnkit.models import load_model, load_tokenizer
    from unlearnkit.unlearn import resolve_configs

    bench = load_data(args.data, bench)
    method, train_cfg, method_cfg = resolve_configs(args.method, values)
    tokenizer = load_tokenizer(args.model, args.trust_remote_code)
    fmt = PromptFormat.for_tokenizer(tokenizer, train_cfg.prompt_format)
    check_split_lengths(tokenizer, fmt, bench, ("forget", "retain"), train_cfg.max_length)
    # raw-text corpora (MUSE, WMDP) have no questions to overlap
    warning = overlap_warning(bench) if getattr(bench, "kind", "qa") == "qa" else None
    if warning:
        note(warning, "warning")
    torch_threads()
    model = load_model(args.model, args.trust_remote_code)

    # Validation is over: from here on the work folder exists until the model is saved.
    prepare_work(work, resume_from, fingerprint, args.resume)
    result = _run_unlearn(args, model, tokenizer, bench, method, work, resume_from, values)
    if not getattr(result, "is_main_process", True):
        return 0  # multi-process run: rank 0 writes the model
    _save_unlearned(args, result, tokenizer, method, train_cfg, method_cfg, resume_from)
    if result.attribution and (work / "attribution").is_dir():
        shutil.copytree(work / "attribution", out / "attribution", dirs_exist_ok=True)
    shutil.rmtree(work, ignore_errors=True)
    # Trainer's training_loss: the mean over this run's optimiser steps (after a resume, those since it).
    since = " over the steps since resuming" if resume_from is not None else ""
    print(f"saved {out} ({method.name}, mean train loss {result.train_loss:.4f}{since})")
    return 0


def _run_unlearn(args, model, tokenizer, bench, method, work: Path, resume_from, values):
    from unlearnkit.train.trainer import DivergenceError
    from unlearnkit.unlearn import unlearn

    try:
        return unlearn(
            model,
            tokenizer,
            bench.forget,
            bench.retain,
            method.name,
            model_path=args.model,
            work_dir=work,
            resume=resume_from is not None,
            attribution_dir=work / "attribution",
            progress=f"unlearning ({method.name})",
            **values,
        )
    except DivergenceError as err:
        raise DivergenceError(diverged_message(err, work)) from None
    except BaseException:
        kept = cleanup_after_failure(work)
        if kept is not None:
            note(f"checkpoints kept in {work} (last: {kept.name}); continue with --resume")
        raise


def _save_unlearned(args, result, tokenizer, method, train_cfg, method_cfg, resume_from) -> None:
    from unlearnkit.config import config_dict
    from unlearnkit.data.encode import PromptFormat
    from unlearnkit.models import save_model

    provenance = {
        "kind": f"unlearned ({method.name})",
        "base_model": args.model,
        "data": str(args.data),
        "method": method.name,
        "paper": method.paper,
        "train_loss": result.train_loss,
        "compute": result.compute,  # unlearnkit.train.compute: tokens x passes, seconds (resumes included)
        "config": config_dict(train_cfg, method_cfg),
        "prompt_format": PromptFormat.for_settings(tokenizer, train_cfg).kind,
        # what system_prompt="auto" resolved to, and the date (chat templates): the prompts trained on
        "prompt": PromptFormat.for_settings(tokenizer, train_cfg).describe(),
    }
    if getattr(result, "reference", None):
        provenance["reference_used"] = result.reference  # what reference=auto resolved to, and why
    provenance.update(layers_used(result.model, method_cfg))
    if resume_from is not None:
        provenance["resumed_from"] = resume_from.name
    if recorded_defaults(args.model):  # an unlearned tiny model is still a tiny model
        provenance["unlearn_defaults"] = recorded_defaults(args.model)
    save_model(result.model, tokenizer, args.output, provenance, overwrite=args.overwrite)


def layers_used(model, method_cfg) -> dict:
    """The decoder layers a layer setting really meant (``layers=''`` is every layer, not none)."""
    n = getattr(getattr(model, "config", None), "num_hidden_layers", None)
    used = {}
    for key, resolve in (("layers", "layer_list"), ("train_layers", "train_layer_list")):
        if hasattr(method_cfg, resolve):
            chosen = getattr(method_cfg, resolve)()
            used[f"{key}_used"] = chosen if chosen is not None else (list(range(n)) if n else "all")
    return used

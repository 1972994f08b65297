"""``unlearnkit unlearn``: run one unlearning method and save the model (checkpoints + ``--resume``)."""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from unlearnkit.commands._common import (
    add_checkpoint_flags,
    add_command,
    add_output,
    add_overwrite,
    add_placement_flags,
    add_set,
    add_training_flags,
    add_trust_remote_code,
    apply_model_defaults,
    apply_training_flags,
    check_combinations,
    check_data,
    check_placement_flags,
    cleanup_after_failure,
    diverged_message,
    load_data,
    note,
    overrides,
    prepare_work,
    print_placement,
    required,
    resume_point,
    run_fingerprint,
    runtime_group,
    torch_threads,
    training_choices,
    work_dir_of,
)
from unlearnkit.errors import UserError

# Light constants (the module they live in imports torch only inside functions).
DEFAULT_MAX_ITEMS = 50  # = unlearnkit.train.evaluation_callback.DEFAULT_MAX_ITEMS (a test checks it)
DEFAULT_MAX_NEW_TOKENS = 32  # = evaluation_callback.DEFAULT_MAX_NEW_TOKENS


def add_parser(subparsers) -> None:
    u = add_command(
        subparsers,
        "unlearn",
        "run one unlearning method and save the unlearned model",
        [
            "unlearnkit unlearn --model target --data bench --method asu --output asu",
            "unlearnkit unlearn --model target --data bench --method npo --output npo --set lr=1e-4 epochs=3",
        ],
        details="`unlearnkit methods` lists the methods; `unlearnkit unlearn --method NAME --help` ends "
        "with NAME's --set keys. Settings, recipes, --eval-every and the collapse guard: docs/training.md.",
    )
    req = u.add_argument_group("required (on the command line or in the --config recipe)")
    req.add_argument("--model", default=None, metavar="MODEL", help="model folder or HF id to unlearn from")
    req.add_argument(
        "--data",
        default=None,
        metavar="DATA",
        help="benchmark folder, or a name: tofu:forget10, muse:news, wmdp:cyber",
    )
    req.add_argument(
        "--method",
        default=None,
        metavar="NAME",
        help="method, e.g. asu, npo, t-npo, gd (see `unlearnkit methods`)",
    )
    add_output(req, "model folder to write")
    task = u.add_argument_group("task")
    task.add_argument(
        "--config", default=None, metavar="FILE", help="YAML recipe (flat key: value); --set wins over it"
    )
    add_set(task, "override a setting, e.g. --set tau=2.3 lr=1e-5 (keys: `unlearnkit methods NAME`)")
    task.add_argument(
        "--no-collapse-guard",
        action="store_true",
        help="do not probe retain / general answers for collapse while training (= --set collapse_guard=off)",
    )
    ev = u.add_argument_group("evaluation during training")
    ev.add_argument(
        "--eval-every",
        default=None,
        metavar="N|epoch",
        help="evaluate the selection half of --data every N optimiser steps (or every epoch)",
    )
    ev.add_argument(
        "--keep-best",
        default=None,
        metavar="OBJECTIVE",
        help="write the best evaluated state, e.g. forget_quality+model_utility ('-name' minimises name)",
    )
    ev.add_argument(
        "--retain-model",
        default=None,
        metavar="MODEL",
        help="the retain oracle, for forget quality (MUSE: PrivLeak)",
    )
    ev.add_argument(
        "--eval-max-items",
        type=int,
        default=DEFAULT_MAX_ITEMS,
        metavar="N",
        help=f"rows per split (default {DEFAULT_MAX_ITEMS})",
    )
    ev.add_argument(
        "--eval-max-new-tokens",
        type=int,
        default=DEFAULT_MAX_NEW_TOKENS,
        metavar="N",
        help=f"generated tokens per answer (default {DEFAULT_MAX_NEW_TOKENS})",
    )
    rt = runtime_group(u)
    add_overwrite(rt)
    add_checkpoint_flags(rt)
    add_placement_flags(rt)
    add_training_flags(rt)
    add_trust_remote_code(rt)


def run(args: argparse.Namespace) -> int:
    from unlearnkit.catalog import normalise
    from unlearnkit.commands.settings_doc import method_config
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
    if args.no_collapse_guard:
        values["collapse_guard"] = "off"
    apply_training_flags(args, values)
    check_placement_flags(args)
    _check_eval_flags(args)
    name = normalise(args.method)
    values, defaults_note = apply_model_defaults(args.model, name, values)
    from unlearnkit.evaluation.teacher_search import for_validation, is_auto_tau

    train_cfg, method_cfg = build_configs(method_config(args.method), for_validation(values))
    check_combinations(train_cfg)
    check_output_dir(args.output, args.overwrite)
    bench = check_data(args.data)
    check_model_path(args.model)
    if args.eval_every is not None and args.retain_model:
        _check_oracle(args.retain_model)
    out = Path(args.output)
    work = work_dir_of(out)
    if work.exists() and not work.is_dir():
        raise UserError(f"{work} exists and is a file; remove it (unlearnkit keeps checkpoints there)")
    fingerprint = run_fingerprint(args, name, train_cfg, method_cfg)
    if is_auto_tau(values):  # the search decides tau after loading; a resume must ask for auto again
        fingerprint["config"]["tau"] = "auto"
    resume_from = resume_point(work, fingerprint, out, args.resume, args.overwrite)
    if defaults_note:
        note(defaults_note)

    # The library's two steps, as unlearnkit.unlearn() runs them: check and load, then train.
    from unlearnkit.api.unlearn import Rows, make_ready, probe_rows

    bench = load_data(args.data, bench)
    plan = _eval_plan(args, bench, train_cfg.seed)  # --keep-best names checked before any model is loaded
    torch_threads()
    ready = make_ready(
        args.model,
        None,
        name,
        values,
        Rows.of_split(bench, "forget"),
        Rows.of_split(bench, "retain"),
        source=args.model,
        bench=bench,
        device=args.device,
        dtype=args.dtype,
        asked_device=getattr(args, "asked_device", None),
        trust_remote_code=args.trust_remote_code,
    )
    print_placement(ready.placement, training_choices(ready.train_config))

    # Validation is over: from here on the work folder exists until the model is saved.
    prepare_work(work, resume_from, fingerprint, args.resume)
    probe = probe_rows(bench, None, ready.train_config.seed)  # the collapse guard's rows: selection halves
    result = _run_unlearn(args, ready, work, resume_from, plan, probe)
    if not getattr(result, "is_main_process", True):
        return 0  # multi-process run: rank 0 writes the model
    _report_curve(result, plan)
    from unlearnkit.pipelines.model_outputs import save_unlearned

    save_unlearned(result, args.output, overwrite=args.overwrite)
    shutil.rmtree(work, ignore_errors=True)
    # Trainer's training_loss: the mean over this run's optimiser steps (after a resume, those since it).
    since = " over the steps since resuming" if resume_from is not None else ""
    print(f"saved {out} ({result.method}, mean train loss {result.train_loss:.4f}{since})")
    best = getattr(result, "best", None)
    if best and best.get("chosen"):
        print(
            f"--keep-best {best['objective']}: the output is the state of step {best['step']} "
            f"(epoch {best['epoch']:.2f}) of {best['last_step']}, objective {best['value']:.4g}"
            + (" (the last step)" if best["step"] == best["last_step"] else "")
            + f"; curve in {out / 'curve.json'}"
        )
    elif best:
        note(
            f"--keep-best {best['objective']}: no evaluation gave a finite value; the output is the last step"
        )
    return 0


def _check_eval_flags(args) -> None:
    if args.keep_best and args.eval_every is None:
        raise UserError("--keep-best needs --eval-every N (or epoch): the best of which evaluations?")
    if args.eval_every is None:
        for flag, given in (
            ("--eval-max-items", args.eval_max_items != DEFAULT_MAX_ITEMS),
            ("--eval-max-new-tokens", args.eval_max_new_tokens != DEFAULT_MAX_NEW_TOKENS),
        ):
            if given:
                raise UserError(f"{flag} sets evaluation during training: add --eval-every N (or epoch)")
        if args.retain_model:
            note("--retain-model is read only with --eval-every (forget quality during training); ignored")
        return
    from unlearnkit.train.evaluation_callback import parse_every

    parse_every(args.eval_every)
    if args.eval_max_items < 2:
        raise UserError(f"--eval-max-items {args.eval_max_items}: must be >= 2")
    if args.eval_max_new_tokens < 1:
        raise UserError(f"--eval-max-new-tokens {args.eval_max_new_tokens}: must be >= 1")


def _check_oracle(path: str) -> None:
    from unlearnkit.models import check_model_path

    if Path(path).exists() and not (Path(path) / "config.json").is_file():
        raise UserError(
            f"--retain-model {path}: evaluation during training needs the oracle's model folder (its "
            "truth ratios are computed on the selection half), not an eval folder"
        )
    check_model_path(path)


def _eval_plan(args, bench, seed: int):
    if args.eval_every is None:
        return None
    from unlearnkit.train.evaluation_callback import plan_evaluation

    return plan_evaluation(
        bench,
        seed,
        args.eval_every,
        args.keep_best,
        args.retain_model,
        args.eval_max_items,
        args.eval_max_new_tokens,
        args.trust_remote_code,
    )


def _report_curve(result, plan) -> None:
    """Print the curve (``curve.json`` / ``curve.png`` are saved with the model; none without --eval-every)."""
    if plan is None or not getattr(result, "eval_curve", None):
        return
    from unlearnkit.train.evaluation_callback import curve_table, shown_metrics

    best = result.best
    names = shown_metrics(plan, result.eval_curve)
    chosen = best["step"] if best and best.get("chosen") else None
    print(
        f"evaluation during training ({plan.protocol} protocol, selection half, at most {plan.max_items} "
        f"rows per split, {plan.max_new_tokens} new tokens{'; * = kept' if chosen is not None else ''}):"
    )
    for line in curve_table(result.eval_curve, names, chosen):
        print("  " + line)


def _run_unlearn(args, ready, work: Path, resume_from, plan, probe):
    """Train through the library; a failure keeps the checkpoints ``--resume`` continues from (a
    divergence: the last one with finite weights) and says where they are."""
    from unlearnkit.api.unlearn import train_ready
    from unlearnkit.train.trainer import DivergenceError

    try:
        return train_ready(
            ready,
            work=work,
            plan=plan,
            probe=probe,
            resumed_from=resume_from,
            progress=f"unlearning ({ready.method})",
            made_from=args.model,
            data_name=str(args.data),
        )
    except DivergenceError as err:
        raise DivergenceError(diverged_message(err, work)) from None
    except BaseException:
        kept = cleanup_after_failure(work)
        if kept is not None:
            note(f"checkpoints kept in {work} (last: {kept.name}); continue with --resume")
        raise

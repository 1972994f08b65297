"""``unlearnkit eval``: evaluate a model on a benchmark; writes OUTPUT/metrics.json and details.json.

The command reads its flags, checks them before any model is loaded, loads each model where
``--device`` / ``--dtype`` place it, and evaluates through the library's
:func:`unlearnkit.api.evaluate.run_protocol` (and the checks before it), which
:func:`unlearnkit.evaluate` calls too: one implementation of every protocol."""

from __future__ import annotations

import argparse
from pathlib import Path

from unlearnkit.commands._common import (
    add_command,
    add_output,
    add_overwrite,
    add_placement_flags,
    add_trust_remote_code,
    check_data,
    check_placement_flags,
    is_model_dir,
    is_named_data,
    load_data,
    note,
    placement_of,
    print_placement,
    runtime_group,
    torch_threads,
)
from unlearnkit.errors import UserError


def add_parser(subparsers) -> None:
    e = add_command(
        subparsers,
        "eval",
        "evaluate a model on a benchmark: DIR/metrics.json",
        [
            "unlearnkit eval --model asu --data bench --retain-model oracle --original-model target --output eval_asu",
            "unlearnkit eval --model target --data tofu:forget10 --max-items 20 --output eval_tofu",
        ],
        details="Forget quality needs the retain oracle (--retain-model: its folder or its eval folder); "
        "--protocol picks the metric set; DIR/details.json holds every answer.",
    )
    req = e.add_argument_group("required")
    req.add_argument("--model", required=True, metavar="MODEL", help="model folder or HF id")
    req.add_argument(
        "--data",
        required=True,
        metavar="DATA",
        help="benchmark folder (QA, MUSE-like or WMDP-like), or a name: tofu:forget10, muse:news, wmdp:cyber",
    )
    add_output(req, "folder for metrics.json and details.json")
    task = e.add_argument_group("task")
    task.add_argument(
        "--retain-model",
        default=None,
        metavar="MODEL",
        help="the retain oracle: model folder, or its eval folder / details.json",
    )
    task.add_argument(
        "--original-model",
        default=None,
        metavar="MODEL",
        help="the model before unlearning (or its eval folder): its forget quality is the test's resolution",
    )
    task.add_argument(
        "--protocol",
        default="tofu",
        choices=("tofu", "closer-look", "muse", "wmdp"),
        help="metric set (default: %(default)s)",
    )
    task.add_argument(
        "--max-items",
        type=int,
        default=None,
        metavar="N",
        help="items per split (default: a seeded sample of 400; closer-look: the first 300, as its code)",
    )
    task.add_argument(
        "--max-new-tokens",
        type=int,
        default=200,
        metavar="N",
        help="greedy generation length (default: %(default)s)",
    )
    task.add_argument(
        "--max-total-tokens",
        type=int,
        default=None,
        metavar="N",
        help="cap prompt + generation at N tokens, TOFU's original rule (default: off; closer-look: 200)",
    )
    task.add_argument(
        "--embedder",
        default="sentence-transformers/paraphrase-MiniLM-L6-v2",
        metavar="MODEL",
        help="closer-look cosine similarity: sentence-embedding model, or 'none' (default: the authors')",
    )
    task.add_argument(
        "--nli-model",
        default="sileod/deberta-v3-base-tasksource-nli",
        metavar="MODEL",
        help="closer-look entailment: NLI model, or 'none' (default: the authors')",
    )
    rt = runtime_group(e)
    add_overwrite(rt)
    add_placement_flags(rt, batch_size=True)
    add_trust_remote_code(rt)


def run(args: argparse.Namespace) -> int:
    from unlearnkit.io import check_output_dir
    from unlearnkit.models import check_model_path

    check_placement_flags(args)
    if args.protocol in ("muse", "wmdp"):
        return _eval_muse_wmdp(args)
    if args.max_new_tokens < 1:
        raise UserError(f"--max-new-tokens {args.max_new_tokens}: must be >= 1")
    if args.max_items is not None and args.max_items < 1:
        raise UserError(f"--max-items {args.max_items}: must be >= 1")
    if args.max_total_tokens is not None and args.max_total_tokens < 0:
        raise UserError(f"--max-total-tokens {args.max_total_tokens}: must be >= 0 (0 = no total cap)")
    check_output_dir(args.output, args.overwrite)
    from unlearnkit.api.evaluate import check_protocol_fits

    # A named benchmark (tofu:forget10) is read with its evaluation fields: TOFU keeps them in the
    # *_perturbed files, not in the training files.
    named = is_named_data(args.data)
    bench = check_data(args.data, eval_fields=named)
    check_protocol_fits(bench, args.protocol, args.data)  # a folder (read above); a name: after loading
    check_model_path(args.model)
    original_eval = check_original_model(args)
    retain_path = None
    if args.retain_model:
        if is_model_dir(args.retain_model):
            check_model_path(args.retain_model, flag="--retain-model")
        elif Path(args.retain_model).exists():
            retain_path = args.retain_model
        else:
            raise UserError(
                f"--retain-model {args.retain_model} does not exist (a model folder, an eval folder or "
                "its details.json)"
            )

    from unlearnkit.api.evaluate import (
        OtherModel,
        check_eval_lengths,
        check_oracle_fields,
        field_notes,
        run_protocol,
    )
    from unlearnkit.evaluation.evaluate import oracle_truth_ratios
    from unlearnkit.models import load, load_model, load_tokenizer

    bench = load_data(args.data, bench, eval_fields=named)
    check_protocol_fits(bench, args.protocol, args.data)
    # a named benchmark was read with the fields it has (TOFU: none on holdout, by design): no note
    notes = [] if named else field_notes(bench)
    oracle = None
    if args.retain_model:
        check_oracle_fields(bench)
        if retain_path is not None:  # read now: a bad file fails before work
            oracle = OtherModel(retain_path, measured={"truth_ratios": oracle_truth_ratios(retain_path)})
    settings = eval_settings(args)
    tokenizer = load_tokenizer(args.model, args.trust_remote_code)
    check_eval_lengths(tokenizer, bench, settings)
    for text in notes:
        note(text)
    torch_threads()
    placement = placement_of(args, args.model)
    print_placement(placement, f"batch size {settings.batch_size}")
    trust = args.trust_remote_code
    if args.retain_model and oracle is None:
        oracle_kwargs = _oracle_placement(args, placement).load_kwargs()
        oracle = OtherModel(args.retain_model, load=lambda: load(args.retain_model, trust, **oracle_kwargs))
    original = None
    if original_eval is not None:
        original = OtherModel(str(args.original_model), measured=_measured_original(original_eval))
    elif args.original_model:
        original = OtherModel(str(args.original_model), load=lambda: load(args.original_model, trust))
    result = run_protocol(
        args.protocol,
        lambda: (load_model(args.model, trust, **placement.load_kwargs()), tokenizer),
        bench,
        settings,
        oracle=oracle,
        original=original,
        closer_look=_closer_look_models(args) if args.protocol == "closer-look" else None,
        placement={**placement.record(), "batch_size": settings.batch_size},
    )
    metrics, details = result.metrics, result.details
    _write(args, metrics, details)
    print_headline(metrics)
    if args.protocol == "closer-look":
        print_closer_look(metrics, details["closer_look"])
    for warning in details.get("warnings", []):  # degenerate numbers: which input, likely cause
        note(warning["message"], kind="warning")
    return 0


def _write(args, metrics: dict, details: dict) -> None:
    from unlearnkit.io import atomic_dir, write_json

    with atomic_dir(args.output, overwrite=args.overwrite) as tmp:
        write_json(tmp / "metrics.json", metrics)
        write_json(tmp / "details.json", details)


def _closer_look_models(args):
    from unlearnkit.evaluation.closer_look import CloserLookModels

    return CloserLookModels(
        embedder_id=None if args.embedder == "none" else args.embedder,
        nli_id=None if args.nli_model == "none" else args.nli_model,
    )


def check_original_model(args: argparse.Namespace) -> Path | None:
    """``--original-model``: a model folder (returns None) or an eval folder / its metrics.json holding
    the original's ``forget_quality`` (returns that file); it needs ``--retain-model`` (forget quality is
    measured against the oracle) and the TOFU or closer-look protocol."""
    from unlearnkit.models import check_model_path

    if not args.original_model:
        return None
    if not args.retain_model:
        raise UserError(
            "--original-model needs --retain-model: the original's forget quality is measured against the oracle"
        )
    if is_model_dir(args.original_model):
        check_model_path(args.original_model, flag="--original-model")
        return None
    path = Path(args.original_model)
    path = path / "metrics.json" if path.is_dir() else path
    if not path.is_file():
        raise UserError(
            f"--original-model {args.original_model} does not exist (a model folder, or an eval folder of "
            "it against the same --retain-model)"
        )
    from unlearnkit.io import read_json

    data = read_json(path, "--original-model metrics")
    if not isinstance(data, dict) or not isinstance(data.get("forget_quality"), int | float):
        raise UserError(
            f"{path}: no forget_quality (evaluate the original model with --retain-model first, or pass its "
            "model folder)"
        )
    return path


def _measured_original(metrics_file: Path) -> dict:
    """The original's forget quality (and its item count) from its eval folder's metrics.json."""
    from unlearnkit.io import read_json

    data = read_json(metrics_file, "--original-model metrics")
    return {"forget_quality": float(data["forget_quality"]), "n": data.get("forget_quality_n")}


def eval_settings(args: argparse.Namespace):
    """EvalSettings of the TOFU or closer-look protocol, with the flags the user gave on top."""
    from unlearnkit.api.evaluate import tofu_settings

    given = {"max_new_tokens": args.max_new_tokens}
    if getattr(args, "batch_size", None) is not None:
        given["batch_size"] = args.batch_size
    if args.max_items is not None:
        given["max_items"] = args.max_items
    if args.max_total_tokens is not None:
        given["max_total_tokens"] = args.max_total_tokens
    return tofu_settings(args.protocol, **given)


CLOSER_LOOK_LINES = (
    ("fe", "forget efficacy as the ASU paper: harmonic mean of 1-ROUGE, 1-prob, 1-TR, TE, 1-entailment"),
    ("fe_yuan", "the closer-look authors' own FE: 1 - mean(ROUGE, prob, TR, cosine, entailment), no TE"),
    ("mu_closer_look", "model utility: harmonic mean of the six numbers on retain and general (parts)"),
    ("avg_closer_look", "(fe + mu_closer_look) / 2"),
)


def print_closer_look(metrics: dict, info: dict) -> None:
    """The closer-look aggregates, each with what it is (arXiv 2410.08109, 2603.01285), and one note
    naming every component left out and why (e.g. no network for the embedding / NLI model)."""
    from unlearnkit.evaluation.closer_look import FE_COMPONENTS, FE_YUAN_COMPONENTS

    for key, meaning in CLOSER_LOOK_LINES:
        if key in metrics:
            print(f"{key:24s} {metrics[key]:.4f}  {meaning}")
    missing = info.get("missing") or {}
    if missing:
        left_out = "; ".join(f"{name} ({' '.join(str(why).split())})" for name, why in missing.items())
        note(
            f"closer-look: left out of FE / MU: {left_out}. FE uses {len(info.get('fe_components', []))} of "
            f"{len(FE_COMPONENTS)} components, fe_yuan {len(info.get('fe_yuan_components', []))} of "
            f"{len(FE_YUAN_COMPONENTS)}, MU "
            f"{len(info.get('mu_components', []))}; see details.json closer_look"
        )


def _eval_muse_wmdp(args) -> int:
    """MUSE (VerbMem, KnowMem, PrivLeak vs the retrained model) or WMDP/MMLU accuracy through lm-eval.

    ``--data`` for muse: ``muse:news``, ``muse:books`` or a MUSE-like folder; for wmdp: ``wmdp:bio`` /
    ``wmdp:cyber`` (lm-eval's own WMDP and MMLU tasks) or a WMDP-like folder (its multiple-choice sets
    as local lm-eval tasks, metric ``<task>_acc`` each). Both read through the same protocol code.
    """
    from unlearnkit.io import check_output_dir
    from unlearnkit.models import check_model_path, load

    check_output_dir(args.output, args.overwrite)
    check_model_path(args.model)
    if args.max_items is not None and args.max_items < 1:
        raise UserError(f"--max-items {args.max_items}: must be >= 1")
    bench = _protocol_data(args)  # read and checked before any model is loaded
    if args.retain_model and args.protocol == "wmdp":
        note("--retain-model is not used by --protocol wmdp (accuracies need no oracle); ignored")
    torch_threads()
    placement = placement_of(args, args.model)
    print_placement(placement)
    from unlearnkit.api.evaluate import muse_settings, run_protocol

    trust = args.trust_remote_code
    settings, oracle = args.max_items, None
    if args.protocol == "muse":
        settings = muse_settings(args.max_items)
        oracle = _muse_oracle(args, placement)
    result = run_protocol(
        args.protocol,
        lambda: load(args.model, trust, **placement.load_kwargs()),
        bench,
        settings,
        oracle=oracle,
        placement=placement.record(),
    )
    metrics, details = result.metrics, result.details
    _write(args, metrics, details)
    chance = details.get("chance") if isinstance(details.get("chance"), dict) else {}
    for key, value in metrics.items():
        task = key.removesuffix("_acc")
        extra = f"  (chance {chance[task]:.4f})" if task in chance else ""
        print(f"{key:28s} {value:.4f}{extra}")
    return 0


def _muse_oracle(args, placement):
    """``--retain-model`` for MUSE: the retrained model's folder (its PrivLeak AUC is measured where the
    model runs), or its AUC (a number, or the metrics.json of its MUSE evaluation)."""
    if not args.retain_model:
        return None
    from unlearnkit.api.evaluate import OtherModel
    from unlearnkit.models import check_model_path, load
    from unlearnkit.protocols.muse import load_reference_auc

    if is_model_dir(args.retain_model):
        check_model_path(args.retain_model, flag="--retain-model")
        kwargs = _oracle_placement(args, placement).load_kwargs()
        return OtherModel(
            str(args.retain_model), load=lambda: load(args.retain_model, args.trust_remote_code, **kwargs)
        )
    return OtherModel(str(args.retain_model), measured={"auc": load_reference_auc(args.retain_model)})


def _protocol_data(args):
    """The benchmark ``--protocol muse|wmdp`` runs on, checked; None = lm-eval's own WMDP/MMLU tasks."""
    from unlearnkit.api.evaluate import check_text_protocol, check_wmdp_name

    if args.protocol == "wmdp" and is_named_data(args.data):
        check_wmdp_name(args.data)
        return None
    bench = load_data(args.data, check_data(args.data))
    check_text_protocol(bench, args.protocol, args.data)
    return bench


def _oracle_placement(args, placement):
    """The retain oracle runs where the model does, in the dtype ``--dtype`` resolves to for its own
    checkpoint (the same rule, so an auto bf16 model is compared with an auto bf16 oracle)."""
    from unlearnkit.models import resolve_placement

    return resolve_placement(args.retain_model, placement.device, args.dtype)


def _headline_keys() -> tuple[str, ...]:
    from unlearnkit.report.page import DEFAULT_COLUMNS

    return (*DEFAULT_COLUMNS, "mia_min_k_auc")


def print_headline(metrics: dict) -> None:
    for key in _headline_keys():
        if key in metrics:
            value = metrics[key]
            if key != "forget_quality":
                print(f"{key:24s} {value:.4f}")
                continue
            n, m = metrics.get("forget_quality_n"), metrics.get("forget_quality_oracle_n")
            items = f"  ({n} forget items vs the oracle's {m})" if n is not None and m is not None else ""
            print(f"{key:24s} {value:.3g}{items}")
            if "original_forget_quality" in metrics:
                print(
                    f"{'original_forget_quality':24s} {metrics['original_forget_quality']:.3g}  (the original "
                    "model vs the oracle: nothing forgotten reads so; the test's resolution here)"
                )

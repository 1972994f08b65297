"""``unlearnkit eval``: evaluate a model on a benchmark; writes OUTPUT/metrics.json and details.json."""

from __future__ import annotations

import argparse
from pathlib import Path

from unlearnkit.commands._common import (
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
    split_file,
    split_sources,
    torch_threads,
)
from unlearnkit.errors import UserError

EVAL_FIELDS_CHECKED = ("answer", "paraphrased_answer", "perturbed_answer")


def add_parser(subparsers) -> None:
    e = subparsers.add_parser("eval", help="evaluate a model on a benchmark folder; writes DIR/metrics.json")
    e.add_argument("--model", required=True, help="model folder (or HF id)")
    e.add_argument(
        "--data",
        required=True,
        help="benchmark folder (QA, MUSE-like or WMDP-like), or a name: tofu:forget10, muse:news, wmdp:cyber",
    )
    e.add_argument(
        "--retain-model", default=None, help="retain-oracle model folder, or its eval folder / details.json"
    )
    e.add_argument(
        "--original-model",
        default=None,
        help="the untouched model before unlearning (folder, or its eval folder against the same "
        "--retain-model): its forget quality against the oracle is the test's resolution on this data; "
        "at or above 0.05 forget quality cannot resolve forgetting here, and a warning says so",
    )
    e.add_argument(
        "--protocol",
        default="tofu",
        choices=("tofu", "closer-look", "muse", "wmdp"),
        help="metric set (default: %(default)s)",
    )
    e.add_argument("--output", required=True, help="folder for metrics.json and details.json")
    e.add_argument(
        "--embedder",
        default="sentence-transformers/paraphrase-MiniLM-L6-v2",
        help="closer-look cosine similarity: sentence-embedding model id or folder, or 'none'",
    )
    e.add_argument(
        "--nli-model",
        default="sileod/deberta-v3-base-tasksource-nli",
        help="closer-look entailment: NLI model id or folder, or 'none' (default: the authors' models)",
    )
    e.add_argument(
        "--max-new-tokens", type=int, default=200, help="greedy generation length (default: %(default)s)"
    )
    e.add_argument(
        "--max-items",
        type=int,
        default=None,
        help="items per split (default: a seeded sample of 400; closer-look: the first 300, as its code)",
    )
    e.add_argument(
        "--max-total-tokens",
        type=int,
        default=None,
        help="cap prompt + generation at N tokens, TOFU's original rule (default: off; closer-look: 200)",
    )
    e.add_argument("--overwrite", action="store_true", help="replace an existing --output folder")
    add_placement_flags(e, batch_size=True)
    add_trust_remote_code(e)


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

    from unlearnkit.data.encode import PromptFormat, check_lengths
    from unlearnkit.data.qa import SPLITS, eval_field_notes
    from unlearnkit.evaluation.evaluate import evaluate, oracle_truth_ratios, select_rows
    from unlearnkit.io import atomic_dir, write_json
    from unlearnkit.models import load, load_model, load_tokenizer

    bench = load_data(args.data, bench, eval_fields=named)
    check_protocol_fits(bench, args.protocol, args.data)
    # a named benchmark was read with the fields it has (TOFU: none on holdout, by design): no note
    notes = [] if named else eval_field_notes(bench)
    oracle_trs = None
    if args.retain_model:
        if not bench.forget or not all("perturbed_answer" in r for r in bench.forget):
            raise UserError(
                f"--retain-model needs truth ratios, but {split_file(bench, 'forget')} has no "
                "paraphrased_answer/perturbed_answer fields; drop --retain-model or add the fields"
            )
        if retain_path is not None:
            oracle_trs = oracle_truth_ratios(retain_path)  # read now: a bad file fails before work
    settings = eval_settings(args)
    tokenizer = load_tokenizer(args.model, args.trust_remote_code)
    fmt = PromptFormat.for_tokenizer(tokenizer, settings.prompt_format)
    for name in SPLITS:
        sources = split_sources(bench, name, evaluation=True)
        for rows, where in sources:
            # one file: exactly the rows evaluated; several: all of them (sampled from the union)
            rows = select_rows(rows, settings) if len(sources) == 1 else rows
            check_lengths(
                tokenizer,
                fmt,
                rows,
                where,
                settings.max_length,
                fields=EVAL_FIELDS_CHECKED,
                hint="evaluation scores at most that many tokens; shorten the row",
            )
    for text in notes:
        note(text)
    torch_threads()
    placement = placement_of(args, args.model)
    print_placement(placement, f"batch size {settings.batch_size}")
    if args.retain_model and oracle_trs is None:
        oracle, otok = load(
            args.retain_model, args.trust_remote_code, **_oracle_placement(args, placement).load_kwargs()
        )
        _, odetails = evaluate(oracle, otok, _forget_only(bench), settings)
        oracle_trs = odetails["forget"].get("truth_ratios")
        del oracle
    resolution = None
    if args.original_model:
        resolution = original_resolution(args, bench, settings, oracle_trs, original_eval)
    model = load_model(args.model, args.trust_remote_code, **placement.load_kwargs())
    metrics, details = evaluate(model, tokenizer, bench, settings, oracle_trs)
    details["placement"] = {**placement.record(), "batch_size": settings.batch_size}
    if resolution is not None:
        from unlearnkit.evaluation.diagnostics import add_resolution

        add_resolution(metrics, details, resolution)
    if args.protocol == "closer-look":
        from unlearnkit.evaluation.closer_look import CloserLookModels, closer_look_metrics

        models = CloserLookModels(
            embedder_id=None if args.embedder == "none" else args.embedder,
            nli_id=None if args.nli_model == "none" else args.nli_model,
        )
        cl_flat, cl_info = closer_look_metrics(metrics, details, models=models)
        metrics.update(cl_flat)
        details["closer_look"] = cl_info
        from unlearnkit.evaluation.diagnostics import closer_look_warnings

        details["warnings"] = details.get("warnings", []) + closer_look_warnings(metrics, cl_info)
    with atomic_dir(args.output, overwrite=args.overwrite) as tmp:
        write_json(tmp / "metrics.json", metrics)
        write_json(tmp / "details.json", details)
    print_headline(metrics)
    if args.protocol == "closer-look":
        print_closer_look(metrics, details["closer_look"])
    for warning in details.get("warnings", []):  # degenerate numbers: which input, likely cause
        note(warning["message"], kind="warning")
    return 0


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


def original_resolution(args, bench, settings, oracle_trs, original_eval: Path | None) -> dict:
    """The original model's forget quality against the oracle (the KS test's resolution on this data):
    read from its eval folder, or measured on the forget split (only its truth ratios are needed, so
    one new token is generated per question)."""
    import dataclasses

    from unlearnkit.evaluation.evaluate import evaluate
    from unlearnkit.io import read_json
    from unlearnkit.models import load

    if original_eval is not None:
        data = read_json(original_eval, "--original-model metrics")
        return {
            "original_model": str(args.original_model),
            "forget_quality": float(data["forget_quality"]),
            "n": data.get("forget_quality_n"),
        }
    original, otok = load(args.original_model, args.trust_remote_code)
    quick = dataclasses.replace(settings, max_new_tokens=1, max_total_tokens=0)
    metrics, _ = evaluate(original, otok, _forget_only(bench), quick, oracle_trs)
    del original
    return {
        "original_model": str(args.original_model),
        "forget_quality": metrics.get("forget_quality"),
        "n": metrics.get("forget_quality_n"),
    }


def eval_settings(args: argparse.Namespace):
    """EvalSettings of the TOFU or closer-look protocol, with the flags the user gave on top."""
    from unlearnkit.evaluation.evaluate import EvalSettings, closer_look_settings

    given = {"max_new_tokens": args.max_new_tokens}
    if getattr(args, "batch_size", None) is not None:
        given["batch_size"] = args.batch_size
    if args.max_items is not None:
        given["max_items"] = args.max_items
    if args.max_total_tokens is not None:
        given["max_total_tokens"] = args.max_total_tokens
    return closer_look_settings(**given) if args.protocol == "closer-look" else EvalSettings(**given)


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
    from unlearnkit.data.sources import describe
    from unlearnkit.io import atomic_dir, check_output_dir, write_json
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
    if args.protocol == "wmdp":
        from unlearnkit.protocols.wmdp import evaluate_local_mc, evaluate_wmdp

        model, tokenizer = load(args.model, args.trust_remote_code, **placement.load_kwargs())
        if bench is None:
            metrics, details = evaluate_wmdp(model, tokenizer)
        else:
            metrics, details = evaluate_local_mc(
                model, tokenizer, bench.mc_tasks, bench.mc_style, limit=args.max_items
            )
            details["data"] = describe(bench)
    else:
        from unlearnkit.protocols.muse import MuseSettings, evaluate_muse, load_reference_auc, privleak_auc

        settings = MuseSettings(max_items=400 if args.max_items is None else args.max_items, progress=True)
        reference_auc, reference = None, None
        if args.retain_model and is_model_dir(args.retain_model):
            check_model_path(args.retain_model, flag="--retain-model")
            oracle, otok = load(
                args.retain_model, args.trust_remote_code, **_oracle_placement(args, placement).load_kwargs()
            )
            reference_auc, odet = privleak_auc(
                oracle,
                otok,
                [r["text"] for r in bench.extra["privleak_forget"]],
                [r["text"] for r in bench.extra["privleak_holdout"]],
                settings,
            )
            reference = {
                "model": str(args.retain_model),
                "auc": reference_auc,
                "truncation": odet["truncation"],
            }
            _note_cuts({"privleak (retain model)": odet["truncation"]})
            del oracle
        elif args.retain_model:
            reference_auc = load_reference_auc(args.retain_model)  # a number or a MUSE metrics.json
            reference = {"source": str(args.retain_model), "auc": reference_auc}
        model, tokenizer = load(args.model, args.trust_remote_code, **placement.load_kwargs())
        metrics, details = evaluate_muse(model, tokenizer, bench, settings, reference_auc)
        _note_cuts(details["truncation"])
        details["data"] = describe(bench)
        if reference is not None:
            details["privleak_reference"] = reference
    details["placement"] = placement.record()
    with atomic_dir(args.output, overwrite=args.overwrite) as tmp:
        write_json(tmp / "metrics.json", metrics)
        write_json(tmp / "details.json", details)
    chance = details.get("chance") if isinstance(details.get("chance"), dict) else {}
    for key, value in metrics.items():
        task = key.removesuffix("_acc")
        extra = f"  (chance {chance[task]:.4f})" if task in chance else ""
        print(f"{key:28s} {value:.4f}{extra}")
    return 0


WMDP_NAMES = ("wmdp:bio", "wmdp:cyber")


def _protocol_data(args):
    """The benchmark ``--protocol muse|wmdp`` runs on, checked; None = lm-eval's own WMDP/MMLU tasks."""
    named = is_named_data(args.data)
    if args.protocol == "wmdp" and named:
        if str(args.data).strip().lower() not in WMDP_NAMES:
            raise UserError(
                f"--protocol wmdp --data {args.data}: use {' or '.join(WMDP_NAMES)} (lm-eval's WMDP and MMLU "
                "tasks) or a WMDP-like folder (benchmark.json kind wmdp)"
            )
        return None
    bench = load_data(args.data, check_data(args.data))
    if args.protocol == "wmdp" and not getattr(bench, "mc_tasks", None):
        raise UserError(
            f"--protocol wmdp --data {args.data}: not a WMDP-like folder (benchmark.json kind wmdp with "
            "multiple-choice tasks); for lm-eval's WMDP and MMLU use --data wmdp:bio or wmdp:cyber"
        )
    if args.protocol == "muse":
        from unlearnkit.data.sources import check_muse_benchmark

        check_muse_benchmark(bench)
    return bench


def check_protocol_fits(bench, protocol: str, data: str) -> None:
    """``--protocol tofu`` / ``closer-look`` score question/answer rows: a raw-text benchmark is an
    error naming the protocol that scores it."""
    if getattr(bench, "kind", "qa") != "text":
        return
    if getattr(bench, "mc_tasks", None):
        fits = "--protocol wmdp"
    elif "verbmem" in (getattr(bench, "extra", None) or {}):
        fits = "--protocol muse"
    else:
        fits = "--protocol muse (a MUSE-like folder) or --protocol wmdp (a WMDP-like folder)"
    raise UserError(f"--data {data} holds raw text, which --protocol {protocol} cannot score; use {fits}")


def _note_cuts(truncation: dict) -> None:
    """One line per MUSE pass that had to cut prompts or texts to fit the model's positions."""
    for part, cut in truncation.items():
        if cut.get("cut"):
            what = "texts" if part.startswith("privleak") else "prompts"
            note(
                f"MUSE {part}: {cut['cut']} of {cut['of']} {what} cut to {cut['limit']} tokens to fit the "
                f"model ({cut['tokens_dropped']} tokens dropped in all); see details.json truncation"
            )


def _oracle_placement(args, placement):
    """The retain oracle runs where the model does, in the dtype ``--dtype`` resolves to for its own
    checkpoint (the same rule, so an auto bf16 model is compared with an auto bf16 oracle)."""
    from unlearnkit.models import resolve_placement

    return resolve_placement(args.retain_model, placement.device, args.dtype)


def _forget_only(bench):
    from unlearnkit.data import Benchmark

    return Benchmark(path=bench.path, forget=bench.forget, retain=[], holdout=[], general=[])


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

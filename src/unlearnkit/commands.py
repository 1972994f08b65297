"""Sub-command implementations: each validates everything first, then works, then writes atomically."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from unlearnkit.errors import UserError


def _torch_threads() -> None:
    import torch

    torch.set_num_threads(max(1, min(torch.get_num_threads(), 8)))


def _overrides(args) -> dict:
    from unlearnkit.config import load_recipe, parse_set

    values = load_recipe(args.config) if getattr(args, "config", None) else {}
    values.update(parse_set(getattr(args, "set", None)))
    return values


def cmd_methods(args) -> int:
    from unlearnkit.methods import METHODS

    for name, m in METHODS.items():
        print(f"{name:10s} {m.summary}  [{m.paper}]")
    return 0


def cmd_world(args) -> int:
    from unlearnkit.world import write_world

    counts = write_world(
        args.output,
        n_authors=args.authors,
        facts_per_author=args.facts,
        forget_fraction=args.forget_fraction,
        holdout_fraction=args.holdout_fraction,
        n_general=args.general,
        seed=args.seed,
        overwrite=args.overwrite,
    )
    print(f"wrote {args.output}: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    return 0


def build_tiny(bench, seed: int):
    from unlearnkit.world.tiny import corpus_of, tiny_llama, train_tokenizer

    rows = bench.forget + bench.retain + bench.holdout + bench.general
    tokenizer = train_tokenizer(corpus_of(rows))
    return tiny_llama(tokenizer, seed=seed), tokenizer


def cmd_finetune(args) -> int:
    from unlearnkit.config import build_configs
    from unlearnkit.data import load_benchmark
    from unlearnkit.finetune import HF_DEFAULTS, TINY_DEFAULTS, finetune, training_rows
    from unlearnkit.io import check_output_dir
    from unlearnkit.models import load, save_model

    check_output_dir(args.output, args.overwrite)
    bench = load_benchmark(args.data)
    rows = training_rows(bench, args.split)
    tiny = args.model == "tiny"
    values = dict(TINY_DEFAULTS if tiny else HF_DEFAULTS, seed=args.seed)
    values.update(_overrides(args))
    from unlearnkit.config import MethodConfig

    cfg, _ = build_configs(MethodConfig, values)
    _torch_threads()
    model, tokenizer = build_tiny(bench, args.seed) if tiny else load(args.model, args.trust_remote_code)
    work = Path(str(args.output).rstrip("/") + ".work")
    result = finetune(model, tokenizer, rows, cfg, work)
    save_model(
        result.model,
        tokenizer,
        args.output,
        {
            "kind": "target" if args.split == "all" else "retain oracle",
            "base_model": args.model,
            "data": str(args.data),
            "split": args.split,
            "train_loss": result.train_loss,
            "config": vars(cfg),
        },
        overwrite=args.overwrite,
    )
    shutil.rmtree(work, ignore_errors=True)
    print(f"saved {args.output} (train loss {result.train_loss:.4f}, {result.n_examples} examples)")
    return 0


def cmd_unlearn(args) -> int:
    from unlearnkit.config import config_dict
    from unlearnkit.data import load_benchmark
    from unlearnkit.data.qa import forget_retain_overlap
    from unlearnkit.io import check_output_dir
    from unlearnkit.models import check_model_path, load, save_model
    from unlearnkit.unlearn import resolve_configs, unlearn

    values = _overrides(args)
    if args.save_every is not None:
        values["save_every"] = args.save_every
    method, train_cfg, method_cfg = resolve_configs(args.method, values)  # bad keys fail before any loading
    check_output_dir(args.output, args.overwrite or args.resume)
    bench = load_benchmark(args.data)
    check_model_path(args.model)
    overlap = forget_retain_overlap(bench)
    if overlap:
        print(f"unlearnkit: warning: {overlap} forget questions also appear in retain.jsonl", file=sys.stderr)
    _torch_threads()
    model, tokenizer = load(args.model, args.trust_remote_code)
    out = Path(args.output)
    work = out.parent / f".{out.name}.checkpoints"
    result = unlearn(
        model,
        tokenizer,
        bench.forget,
        bench.retain,
        method.name,
        model_path=args.model,
        work_dir=work,
        resume=args.resume,
        attribution_dir=work / "attribution",
        **values,
    )
    save_model(
        result.model,
        tokenizer,
        out,
        {
            "kind": f"unlearned ({method.name})",
            "base_model": args.model,
            "data": str(args.data),
            "method": method.name,
            "paper": method.paper,
            "train_loss": result.train_loss,
            "config": config_dict(train_cfg, method_cfg),
        },
        overwrite=True,
    )
    if result.attribution and (work / "attribution").is_dir():
        shutil.copytree(work / "attribution", out / "attribution", dirs_exist_ok=True)
    shutil.rmtree(work, ignore_errors=True)
    print(f"saved {out} ({method.name}, final train loss {result.train_loss:.4f})")
    return 0


def _is_model_dir(path: str) -> bool:
    return (Path(path) / "config.json").is_file()


def cmd_eval(args) -> int:
    from unlearnkit.data import load_benchmark
    from unlearnkit.evaluate import EvalSettings, evaluate, oracle_truth_ratios
    from unlearnkit.io import atomic_dir, check_output_dir, write_json
    from unlearnkit.models import check_model_path, load

    check_output_dir(args.output, args.overwrite)
    bench = load_benchmark(args.data)
    check_model_path(args.model)
    if args.retain_model and not _is_model_dir(args.retain_model) and not Path(args.retain_model).exists():
        raise UserError(f"--retain-model {args.retain_model} does not exist")
    if args.max_new_tokens < 1 or args.max_items < 1:
        raise UserError("--max-new-tokens and --max-items must be >= 1")
    _torch_threads()
    settings = EvalSettings(max_new_tokens=args.max_new_tokens, max_items=args.max_items)
    oracle_trs = None
    if args.retain_model:
        if _is_model_dir(args.retain_model):
            oracle, otok = load(args.retain_model, args.trust_remote_code)
            _, odetails = evaluate(oracle, otok, _forget_only(bench), settings)
            oracle_trs = odetails["forget"].get("truth_ratios")
        else:
            oracle_trs = oracle_truth_ratios(args.retain_model)
    model, tokenizer = load(args.model, args.trust_remote_code)
    metrics, details = evaluate(model, tokenizer, bench, settings, oracle_trs)
    if args.protocol == "closer-look":
        from unlearnkit.closer_look import closer_look_metrics

        cl_flat, cl_info = closer_look_metrics(metrics, details)
        metrics.update(cl_flat)
        details["closer_look"] = cl_info
    with atomic_dir(args.output, overwrite=args.overwrite) as tmp:
        write_json(tmp / "metrics.json", metrics)
        write_json(tmp / "details.json", details)
    print_headline(metrics)
    return 0


def _forget_only(bench):
    from unlearnkit.data import Benchmark

    return Benchmark(path=bench.path, forget=bench.forget, retain=[], holdout=[], general=[])


HEADLINE = (
    "forget_quality",
    "model_utility",
    "forget_rougeL_recall",
    "forget_prob",
    "forget_truth_ratio",
    "forget_token_entropy",
    "retain_rougeL_recall",
    "mia_min_k_auc",
)


def print_headline(metrics: dict) -> None:
    for key in HEADLINE:
        if key in metrics:
            value = metrics[key]
            print(f"{key:24s} {value:.3g}" if key == "forget_quality" else f"{key:24s} {value:.4f}")


def cmd_attribute(args) -> int:
    from unlearnkit.attribution import compute_scores, save_scores, token_weights
    from unlearnkit.config import build_configs
    from unlearnkit.data import load_benchmark
    from unlearnkit.data.encode import PromptFormat
    from unlearnkit.io import atomic_dir, check_output_dir
    from unlearnkit.methods import get_method
    from unlearnkit.models import check_model_path, load

    train_cfg, cfg = build_configs(
        get_method("t-npo").config,
        _overrides(args),
        ignore=("beta", "forget_weight", "retain_weight", "retain_loss"),
    )
    check_output_dir(args.output, args.overwrite)
    bench = load_benchmark(args.data)
    check_model_path(args.model)
    _torch_threads()
    model, tokenizer = load(args.model, args.trust_remote_code)
    fmt = PromptFormat.for_tokenizer(tokenizer, train_cfg.prompt_format)
    scores, tagger = compute_scores(
        model,
        tokenizer,
        fmt,
        bench.forget,
        alpha=cfg.alpha,
        mask_token=cfg.mask_token,
        tagger=cfg.tagger,
        max_length=train_cfg.max_length,
        progress=True,
    )
    weights = token_weights(scores, cfg.selection, cfg.r, cfg.tau_w)
    marks = [[x > 0 for x in w] for w in weights] if cfg.selection == "hard" else weights
    with atomic_dir(args.output, overwrite=args.overwrite) as tmp:
        save_scores(
            scores,
            marks,
            tmp,
            tagger,
            {
                "alpha": cfg.alpha,
                "r": cfg.r,
                "selection": cfg.selection,
                "tau_w": cfg.tau_w,
                "mask_token": cfg.mask_token,
            },
        )
    print(
        f"scored {len(scores)} forget examples with tagger {tagger}; open {Path(args.output) / 'heatmap.html'}"
    )
    return 0


def cmd_quickstart(args) -> int:
    from unlearnkit.quickstart import run_quickstart

    return run_quickstart(args)


def cmd_audit(args) -> int:
    from unlearnkit.audit import audit_command

    _torch_threads()
    return audit_command(args)

"""``unlearnkit attribute``: TokenUnlearn token scores of the forget set + an HTML heatmap."""

from __future__ import annotations

import argparse
from pathlib import Path

from unlearnkit.commands._common import (
    add_command,
    add_output,
    add_overwrite,
    add_placement_flags,
    add_set,
    add_trust_remote_code,
    check_data,
    check_placement_flags,
    check_split_lengths,
    load_data,
    overrides,
    placement_of,
    print_placement,
    runtime_group,
    torch_threads,
)


def add_parser(subparsers) -> None:
    a = add_command(
        subparsers,
        "attribute",
        "score each forget token's share of the fact (TokenUnlearn)",
        [
            "unlearnkit attribute --model target --data bench --output attr",
            "unlearnkit attribute --model target --data bench --output attr_r02 --set r=0.2",
        ],
        details="Writes DIR/scores.jsonl and DIR/heatmap.html; TokenUnlearn methods (t-npo, t-asu, ...) "
        "use the same scores.",
    )
    req = a.add_argument_group("required")
    req.add_argument("--model", required=True, metavar="MODEL", help="the original model (before unlearning)")
    req.add_argument(
        "--data", required=True, metavar="DATA", help="benchmark folder (its forget.jsonl is scored)"
    )
    add_output(req, "folder for scores.jsonl and heatmap.html")
    task = a.add_argument_group("task")
    add_set(task, "keys: alpha, r, tau_w, selection, mask_token, tagger, e.g. --set r=0.2 alpha=0.5")
    rt = runtime_group(a)
    add_overwrite(rt)
    add_placement_flags(rt, batch_size=True)
    add_trust_remote_code(rt)


def run(args: argparse.Namespace) -> int:
    from unlearnkit.commands.settings_doc import method_config
    from unlearnkit.config import build_configs
    from unlearnkit.io import check_output_dir
    from unlearnkit.models import check_model_path

    train_cfg, cfg = build_configs(
        method_config("t-npo"),
        overrides(args),
        ignore=("beta", "forget_weight", "retain_weight", "retain_loss"),
    )
    check_placement_flags(args)
    check_output_dir(args.output, args.overwrite)
    bench = check_data(args.data)
    check_model_path(args.model)

    from unlearnkit.attribution import compute_scores, save_scores, token_weights
    from unlearnkit.data.encode import PromptFormat
    from unlearnkit.io import atomic_dir
    from unlearnkit.models import load_model, load_tokenizer
    from unlearnkit.report.heatmap import write_heatmap

    bench = load_data(args.data, bench)
    tokenizer = load_tokenizer(args.model, args.trust_remote_code)
    fmt = PromptFormat.for_tokenizer(tokenizer, train_cfg.prompt_format)
    check_split_lengths(tokenizer, fmt, bench, ("forget",), train_cfg.max_length)
    torch_threads()
    placement = placement_of(args, args.model)
    batch = {} if args.batch_size is None else {"batch_size": args.batch_size}
    print_placement(placement, f"batch size {batch.get('batch_size', 16)}")
    model = load_model(args.model, args.trust_remote_code, **placement.load_kwargs())
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
        **batch,
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
        write_heatmap(tmp)
    print(
        f"scored {len(scores)} forget examples with tagger {tagger}; open {Path(args.output) / 'heatmap.html'}"
    )
    return 0

"""``unlearnkit finetune``: train the target (all splits but holdout) or the retain oracle."""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from unlearnkit.commands._common import (
    add_placement_flags,
    add_training_flags,
    add_trust_remote_code,
    apply_training_flags,
    check_data,
    check_placement_flags,
    check_split_lengths,
    checkpointed_training,
    load_data,
    note,
    overrides,
    placement_of,
    print_placement,
    resume_point,
    split_sources,
    torch_threads,
    training_choices,
    training_files,
    training_fingerprint,
    training_record,
    work_dir_of,
)
from unlearnkit.errors import UserError


def add_parser(subparsers) -> None:
    f = subparsers.add_parser(
        "finetune", help="train the target (all splits but holdout) or the retain oracle"
    )
    f.add_argument("--data", required=True, help="benchmark folder")
    f.add_argument("--output", required=True, help="model folder to write")
    f.add_argument(
        "--model",
        default="tiny",
        help="a base folder (`unlearnkit pretrain`), an HF id or folder, or 'tiny' (a ~1M Llama from scratch)",
    )
    f.add_argument("--split", default="all", choices=("all", "retain"), help="all = target, retain = oracle")
    f.add_argument(
        "--set", action="append", metavar="KEY=VALUE", help="training override, e.g. --set epochs=20"
    )
    f.add_argument(
        "--replay",
        default="auto",
        help="data mixed into fine-tuning to keep what the model knew: 'auto' (what the base's card records, "
        "e.g. the embedded world's general passages), 'none', or JSONL files (text or question/answer rows), "
        "comma-separated (default: %(default)s)",
    )
    add_check_items(f)
    f.add_argument("--seed", type=int, default=0, help="seed (default: %(default)s)")
    f.add_argument("--save-every", type=int, default=None, help="checkpoint every N optimiser steps")
    f.add_argument("--resume", action="store_true", help="continue from the last checkpoint of this --output")
    f.add_argument("--overwrite", action="store_true", help="replace an existing folder")
    add_placement_flags(f)
    add_training_flags(f)
    add_trust_remote_code(f)


def run(args: argparse.Namespace) -> int:
    from unlearnkit.config import MethodConfig, build_configs
    from unlearnkit.io import check_output_dir
    from unlearnkit.models import check_model_path, read_card

    from_scratch = args.model == "tiny"
    check_items_flag(args)
    user = overrides(args)
    if args.save_every is not None:
        if args.save_every < 0:
            raise UserError(f"--save-every {args.save_every}: must be >= 1 (or 0 for no checkpoints)")
        user["save_every"] = args.save_every
    apply_training_flags(args, user)
    check_placement_flags(args)
    # the defaults are constants of finetune.py, which imports the Trainer: read them after the checks
    build_configs(MethodConfig, dict(user, seed=args.seed))
    check_output_dir(args.output, args.overwrite)
    bench = check_data(args.data)
    if not from_scratch:
        check_model_path(args.model)
    base_card = read_card(args.model)
    recorded = base_card.get("finetune_defaults", {}).get("train") if isinstance(base_card, dict) else None

    from unlearnkit.data.encode import PromptFormat
    from unlearnkit.evaluation.learned import LearnedSettings, general_scores, measure_learned
    from unlearnkit.models import load_model, load_tokenizer, save_model
    from unlearnkit.pipelines.quickstart import tiny_unlearn_defaults
    from unlearnkit.train.finetune import (
        HF_DEFAULTS,
        SPLITS_FOR,
        TINY_DEFAULTS,
        augmentation_files,
        finetune,
        training_rows,
    )
    from unlearnkit.world.tiny import build_tiny

    defaults = TINY_DEFAULTS if from_scratch else (recorded or HF_DEFAULTS)
    values = dict(defaults, seed=args.seed)
    values.update(user)
    cfg, _ = build_configs(MethodConfig, values)
    if recorded:
        used = {k: v for k, v in recorded.items() if k not in user}
        note(
            f"{args.model} records {base_card['finetune_defaults'].get('source', 'a fine-tuning recipe')}: "
            + ", ".join(f"{k}={v}" for k, v in used.items())
            + "; --set KEY=VALUE overrides any of them"
        )
    replay = replay_paths(args.replay, base_card)
    bench = load_data(args.data, bench)
    rows = trained = training_rows(bench, args.split, from_scratch=from_scratch)
    if replay:
        from unlearnkit.train.pretrain import read_replay

        replayed = read_replay(replay)
        rows = rows + replayed
    parts = getattr(bench, "general_parts", None)
    if not rows:
        raise UserError(f"--data {args.data}: no rows to fine-tune on for --split {args.split}")
    torch_threads()
    if from_scratch:
        model, tokenizer = build_tiny(bench, args.seed)
    else:
        tokenizer = load_tokenizer(args.model, args.trust_remote_code)
    fmt = PromptFormat.for_settings(tokenizer, cfg)  # system_prompt / date_string as --set gives them
    if "max_length" not in user:
        sized = fit_max_length(tokenizer, fmt, bench, SPLITS_FOR[args.split], cfg.max_length, args)
        if sized != cfg.max_length:
            note(
                f"max_length {sized} (the longest question + answer of the data; the default is "
                f"{cfg.max_length}); --set max_length=N to choose it"
            )
            cfg, _ = build_configs(MethodConfig, {**values, "max_length": sized})
    check_split_lengths(tokenizer, fmt, bench, SPLITS_FOR[args.split], cfg.max_length)
    augment = augmentation_files(bench, args.split)
    if augment:
        note(
            f"also training on {', '.join(f'{p.parent.name}/{p.name}' for p in augment)} (the splits' facts in "
            "other wordings; evaluation and unlearning never read them)"
        )
    if replay:
        note(
            f"replaying {len(replayed)} rows of {', '.join(p.name for p in replay)} to keep what {args.model} "
            "knew (--replay none to fine-tune on the benchmark alone)"
        )
    if from_scratch and bench.general:
        # A pretrained model brings real authors and world facts with it; a model trained from scratch
        # knows only what it is trained on, so without them TOFU's utility would be 0 by construction.
        what = " and ".join(parts) if parts else "general.jsonl"
        note(
            f"training the tiny model on {what} too ({len(bench.general)} rows): it starts from nothing, so "
            "its utility then measures keeping these facts, not general knowledge (pretrain a base with "
            "`unlearnkit pretrain` for the real setting)"
        )
    elif bench.general:
        note(
            f"general knowledge ({len(bench.general)} rows) is not fine-tuned on: it measures what the model kept"
        )
    out = Path(args.output)
    names = SPLITS_FOR[args.split]
    files = {n: Path(bench.path) / f"{n}.jsonl" for n in names if (Path(bench.path) / f"{n}.jsonl").is_file()}
    files.update({f"augment:{p}": p for p in augment})
    files.update({f"replay:{p}": p for p in replay})
    fingerprint = training_fingerprint("finetune", args.model, files, cfg, split=args.split)
    resume_point(work_dir_of(out), fingerprint, out, args.resume, args.overwrite)  # refused before any work
    import dataclasses

    placement = placement_of(args, None if from_scratch else args.model, cfg.precision)
    cfg = dataclasses.replace(cfg, precision=placement.precision)
    if not from_scratch:
        model = load_model(args.model, args.trust_remote_code, dtype=placement.torch_dtype)
    else:
        model = model.to(placement.torch_dtype)
    print_placement(placement, training_choices(cfg))
    asked = LearnedSettings(max_items=args.check_items, seed=args.seed)
    # general knowledge is never fine-tuned on from a base: ask the base first, to say how much it kept
    general = [r for r in bench.general if "question" in r] if not from_scratch and args.check_items else []
    if general:
        model.to(placement.device)  # where the Trainer puts it anyway: never generate with a 7B on CPU
    base_general = general_scores(model, tokenizer, fmt, general, asked) if general else None

    def train(work: Path, resume: bool):
        return finetune(model, tokenizer, rows, cfg, work, quiet=True, progress="fine-tuning", resume=resume)

    result, resume_from = checkpointed_training(args, out, fingerprint, train)
    tiny_scale = from_scratch or bool(recorded)
    provenance = {
        "kind": "target" if args.split == "all" else "retain oracle",
        # a local folder as an absolute path; a hub id as it is (the card's base_model links it)
        "base_model": "tiny"
        if from_scratch
        else str(Path(args.model).resolve())
        if Path(args.model).expanduser().exists()
        else args.model,
        "data": str(args.data),
        "split": args.split,
        "trained_on": sorted({n for n in names if bench.split(n) and (n != "general" or from_scratch)}),
        "replay": [str(p.resolve()) for p in replay],
        "train_loss": result.train_loss,
        "compute": result.compute,  # the oracle's is the denominator of compute_fraction
        "config": vars(cfg),
        "placement": training_record(placement, cfg),
        **({"unlearn_defaults": tiny_unlearn_defaults(cfg.max_length)} if tiny_scale else {}),
        **({"trained_on_general_parts": sorted(parts)} if from_scratch and parts else {}),
    }
    if resume_from is not None:
        provenance["resumed_from"] = resume_from.name
    learned = None
    if args.check_items:
        learned = measure_learned(result.model, tokenizer, fmt, trained, asked, general, base_general)
        provenance["learned"] = learned.as_dict()
    files = training_files(getattr(result, "log_history", None))
    save_model(result.model, tokenizer, args.output, provenance, overwrite=args.overwrite, files=files)
    shutil.rmtree(work_dir_of(out), ignore_errors=True)
    # Trainer's training_loss: the mean over the run's optimiser steps (since resuming, after a resume)
    since = " over the steps since resuming" if resume_from is not None else ""
    print(
        f"saved {args.output} (mean train loss{since} {result.train_loss:.4f}, {result.n_examples} examples)"
    )
    report_learned(learned)
    return 0


def add_check_items(parser) -> None:
    """``--check-items N``, shared by ``finetune`` and ``pretrain``."""
    parser.add_argument(
        "--check-items",
        type=int,
        default=100,
        metavar="N",
        help="after training, ask at most N of the trained questions (and passages; and of general.jsonl "
        "when fine-tuning a base) to say how much the model learned and kept; 0 skips it (default: "
        "%(default)s)",
    )


def check_items_flag(args: argparse.Namespace) -> None:
    if args.check_items < 0:
        raise UserError(f"--check-items {args.check_items}: must be >= 0 (0 skips the check)")


def report_learned(learned) -> None:
    """The line a training command ends with (how much of its data the model knows), then its warnings."""
    if learned is None:
        return
    print(learned.line())
    for text in learned.warnings():
        note(text, kind="warning")


def replay_paths(spec: str, base_card: dict) -> list[Path]:
    """``--replay``: ``auto`` = what the base's card records (``unlearnkit pretrain`` writes the world's
    replay files there), ``none``, or comma-separated JSONL files; every file must exist."""
    spec = (spec or "auto").strip()
    if spec == "none":
        return []
    if spec == "auto":
        paths = [Path(p) for p in base_card.get("replay", [])] if isinstance(base_card, dict) else []
        missing = [p for p in paths if not p.is_file()]
        if missing:
            raise UserError(
                f"--replay auto: the base's card names {missing[0]}, which does not exist; pass --replay FILES "
                "or --replay none"
            )
        return paths
    paths = [Path(x.strip()).expanduser() for x in spec.split(",") if x.strip()]
    for path in paths:
        if not path.is_file():
            raise UserError(f"--replay {path}: no such file (JSONL of text or question/answer rows)")
    return paths


def model_limit(tokenizer, model_name: str, trust_remote_code: bool) -> int | None:
    """The longest sequence the model takes: its tokenizer's or config's limit (None: unknown)."""
    limits = []
    if 0 < (getattr(tokenizer, "model_max_length", 0) or 0) < 10**6:  # transformers' "no limit" is 1e30
        limits.append(int(tokenizer.model_max_length))
    if model_name != "tiny":
        try:
            from transformers import AutoConfig

            config = AutoConfig.from_pretrained(model_name, trust_remote_code=trust_remote_code)
            if getattr(config, "max_position_embeddings", None):
                limits.append(int(config.max_position_embeddings))
        except Exception:  # noqa: BLE001 - no config limit known: the tokenizer's (or none) decides
            pass
    return min(limits) if limits else None


def fit_max_length(tokenizer, fmt, bench, splits, default: int, args) -> int:
    """``default``, raised to the longest question + answer of ``splits`` when that still fits the model
    (rounded up to a multiple of 8); past the model's limit the length check names the row."""
    longest = 0
    for name in splits:
        for rows, _ in split_sources(bench, name):
            for row in rows:
                if "question" in row and isinstance(row.get("answer"), str):
                    n = len(fmt.prompt_ids(tokenizer, row["question"])) + len(
                        fmt.answer_ids(tokenizer, row["answer"])
                    )
                    longest = max(longest, n)
    if longest <= default:
        return default
    wanted = -(-longest // 8) * 8
    limit = model_limit(tokenizer, args.model, args.trust_remote_code)
    if limit is not None:
        wanted = min(wanted, limit) if longest <= limit else default
    return wanted

"""Sub-command implementations: each validates everything first, then works, then writes atomically.

Order in every command: flags and config (cheap) -> output folder -> data files -> model folder ->
tokenizer + prompt lengths (file:line) -> load the model -> work -> write atomically. A ``UserError``
anywhere before the write leaves nothing behind: no output folder, no temporary or work folder.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sys
from pathlib import Path

from unlearnkit.errors import UserError

CHECKPOINT_RE = re.compile(r"^checkpoint-(\d+)$")
RUN_FILE = "run.json"  # in the unlearn work folder: what the checkpoints were made with
RESUME_EXEMPT = ("save_every", "save_total_limit")  # may change between a run and its resume


def _note(message: str, kind: str = "note") -> None:
    print(f"unlearnkit: {kind}: {message}", file=sys.stderr)


def _is_main_rank() -> bool:
    return int(os.environ.get("RANK", "0")) == 0


def _torch_threads() -> None:
    import torch

    torch.set_num_threads(max(1, min(torch.get_num_threads(), 8)))


RECIPE_CONTEXT_KEYS = ("method", "model", "data", "retain_model")


def _overrides(args, config_cls: type | None = None) -> dict:
    """Recipe (``--config``) then ``--set`` values; with ``config_cls`` the recipe is checked on its own
    first, so that an error in it names the recipe file rather than ``--set``."""
    from unlearnkit.config import build_configs, load_recipe, parse_set

    values = load_recipe(args.config) if getattr(args, "config", None) else {}
    for key in RECIPE_CONTEXT_KEYS:  # what the recipe documents, not a hyper-parameter: flags win
        value = values.pop(key, None)
        if value is not None and getattr(args, key, None) in (None, ""):
            setattr(args, key, str(value))
    if callable(config_cls) and not isinstance(config_cls, type):
        config_cls = config_cls()  # resolved only now: the recipe may have named the method
    if values and config_cls is not None:
        build_configs(config_cls, values, where=f"--config {args.config}")
    values.update(parse_set(getattr(args, "set", None)))
    return values


def _required(args, name: str) -> str:
    value = getattr(args, name, None)
    if not value:
        flag = "--" + name.replace("_", "-")
        raise UserError(
            f"{flag} is required (give it on the command line or as '{name}:' in the --config recipe)"
        )
    return value


def cmd_methods(args) -> int:
    from unlearnkit.methods import METHODS

    for name, m in METHODS.items():
        print(f"{name:10s} {m.summary}  [{m.paper}]")
    return 0


WORLD_FLAGS = {
    "n_authors": "--authors",
    "facts_per_author": "--facts",
    "forget_fraction": "--forget-fraction",
    "holdout_fraction": "--holdout-fraction",
    "n_general": "--general",
    "output_dir": "--output",
    "overwrite=True": "--overwrite",
}


def _world_flags(err: UserError) -> UserError:
    """The generator names its parameters; on the command line the user typed flags."""
    text = str(err)
    for param, flag in WORLD_FLAGS.items():
        text = re.sub(rf"(?<![\w-]){re.escape(param)}(?![\w])", flag, text)
    return UserError(text)


def check_world_params(**params) -> None:
    from unlearnkit.world.generator import _validate

    try:
        _validate(**params)
    except UserError as err:
        raise _world_flags(err) from None


def cmd_world(args) -> int:
    from unlearnkit.io import check_output_dir
    from unlearnkit.world import write_world

    params = dict(
        n_authors=args.authors,
        facts_per_author=args.facts,
        forget_fraction=args.forget_fraction,
        holdout_fraction=args.holdout_fraction,
        n_general=args.general,
        seed=args.seed,
    )
    check_world_params(**params)
    check_output_dir(args.output, args.overwrite)
    try:
        counts = write_world(args.output, overwrite=args.overwrite, **params)
    except UserError as err:
        raise _world_flags(err) from None
    print(f"wrote {args.output}: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    return 0


def build_tiny(bench, seed: int):
    from unlearnkit.world.tiny import corpus_of, tiny_llama, train_tokenizer

    rows = bench.forget + bench.retain + bench.holdout + bench.general
    tokenizer = train_tokenizer(corpus_of(rows))
    return tiny_llama(tokenizer, seed=seed), tokenizer


def _check_split_lengths(tokenizer, fmt, bench, splits, max_length: int, **kw) -> None:
    from unlearnkit.data.encode import check_lengths

    for name in splits:
        check_lengths(tokenizer, fmt, bench.split(name), Path(bench.path) / f"{name}.jsonl", max_length, **kw)


def cmd_finetune(args) -> int:
    from unlearnkit.config import MethodConfig, build_configs
    from unlearnkit.data.encode import PromptFormat
    from unlearnkit.data.sources import resolve_data as load_benchmark
    from unlearnkit.finetune import HF_DEFAULTS, SPLITS_FOR, TINY_DEFAULTS, finetune, training_rows
    from unlearnkit.io import check_output_dir
    from unlearnkit.models import check_model_path, load_model, load_tokenizer, save_model

    tiny = args.model == "tiny"
    values = dict(TINY_DEFAULTS if tiny else HF_DEFAULTS, seed=args.seed)
    values.update(_overrides(args))
    cfg, _ = build_configs(MethodConfig, values)
    check_output_dir(args.output, args.overwrite)
    bench = load_benchmark(args.data)
    rows = training_rows(bench, args.split)
    if not tiny:
        check_model_path(args.model)
    _torch_threads()
    if tiny:
        model, tokenizer = build_tiny(bench, args.seed)
    else:
        tokenizer = load_tokenizer(args.model, args.trust_remote_code)
    fmt = PromptFormat.for_tokenizer(tokenizer, cfg.prompt_format)
    _check_split_lengths(tokenizer, fmt, bench, SPLITS_FOR[args.split], cfg.max_length)
    if not tiny:
        model = load_model(args.model, args.trust_remote_code)
    out = Path(args.output)
    work = out.parent / f".{out.name}.work"  # the Trainer's output_dir; never outlives the command
    shutil.rmtree(work, ignore_errors=True)  # left by a killed run: fine-tuning has no resume
    try:
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
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"saved {args.output} (train loss {result.train_loss:.4f}, {result.n_examples} examples)")
    return 0


# ------------------------------------------------------------------------------------ checkpoints


def work_dir_of(output: str | Path) -> Path:
    """Where ``unlearn --save-every`` keeps its checkpoints: a hidden sibling of the output folder."""
    out = Path(output)
    return out.parent / f".{out.name}.checkpoints"


def checkpoints(work: Path) -> list[Path]:
    """Complete checkpoints, oldest first. The Trainer writes ``trainer_state.json`` last, so a folder
    without it was cut short (crash or kill -9 while saving) and is ignored."""
    if not work.is_dir():
        return []
    found = [
        (int(m.group(1)), p)
        for p in work.iterdir()
        if (m := CHECKPOINT_RE.match(p.name)) and p.is_dir() and (p / "trainer_state.json").is_file()
    ]
    return [p for _, p in sorted(found)]


def incomplete_checkpoints(work: Path) -> list[Path]:
    if not work.is_dir():
        return []
    done = set(checkpoints(work))
    return [p for p in work.iterdir() if CHECKPOINT_RE.match(p.name) and p.is_dir() and p not in done]


def weights_are_finite(checkpoint: Path) -> bool:
    """True when every tensor in the checkpoint's safetensors files is finite (read one tensor at a time)."""
    import torch
    from safetensors import safe_open

    files = sorted(checkpoint.glob("*.safetensors"))
    if not files:
        return False
    for file in files:
        with safe_open(str(file), framework="pt") as fh:
            for key in fh.keys():  # noqa: SIM118 - safe_open has no __iter__
                t = fh.get_tensor(key)
                if t.is_floating_point() and not bool(torch.isfinite(t).all()):
                    return False
    return True


def _file_digest(path: Path) -> str | None:
    if not path.is_file():
        return None
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()[:16]


def run_fingerprint(args, method, train_cfg, method_cfg) -> dict:
    """What must not change between a run and its ``--resume`` (else the weights would silently differ)."""
    from unlearnkit.config import config_dict

    model = Path(args.model).expanduser()
    cfg = {k: v for k, v in config_dict(train_cfg, method_cfg).items() if k not in RESUME_EXEMPT}
    return {
        "method": method.name,
        "model": str(model.resolve()) if model.exists() else str(args.model),
        "data": {name: _file_digest(Path(args.data) / f"{name}.jsonl") for name in ("forget", "retain")},
        "config": json.loads(json.dumps(cfg, default=str)),
    }


def _check_resume_matches(work: Path, current: dict) -> None:
    path = work / RUN_FILE
    if not path.is_file():
        return
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    diffs = []
    for key in ("method", "model"):
        if stored.get(key) != current[key]:
            diffs.append(f"{key} {stored.get(key)!r} -> {current[key]!r}")
    for name, digest in current["data"].items():
        if stored.get("data", {}).get(name) != digest:
            diffs.append(f"{name}.jsonl changed")
    old_cfg = stored.get("config", {})
    for key, value in current["config"].items():
        if key in old_cfg and old_cfg[key] != value:
            diffs.append(f"{key} {old_cfg[key]!r} -> {value!r}")
    if diffs:
        raise UserError(
            f"--resume: the checkpoints in {work} were made with different settings ({'; '.join(diffs[:4])}); "
            "resume with the same ones, or start over with --overwrite"
        )


def _cleanup_after_failure(work: Path) -> Path | None:
    """After a failed run: keep the work folder when it holds a checkpoint (returned), else remove it."""
    done = checkpoints(work)
    if done:
        return done[-1]
    shutil.rmtree(work, ignore_errors=True)
    return None


def _diverged_message(err: Exception, work: Path) -> str:
    """The divergence error plus where the last checkpoint with finite weights is (bad ones removed)."""
    removed = []
    good = None
    for ckpt in reversed(checkpoints(work)):
        if weights_are_finite(ckpt):
            good = ckpt
            break
        # saved after the blow-up: useless, and --resume would pick it
        shutil.rmtree(ckpt, ignore_errors=True)
        removed.append(ckpt.name)
    note = f" ({', '.join(removed)}: non-finite weights, removed)" if removed else ""
    if good is not None:
        step = CHECKPOINT_RE.match(good.name).group(1)
        return f"{err}; last good checkpoint (step {step}) kept in {good}{note}"
    shutil.rmtree(work, ignore_errors=True)
    return (
        f"{err}; no output was written and no checkpoint was kept{note} "
        "(--save-every N keeps the last good weights)"
    )


def check_combinations(train_cfg) -> None:
    """Settings that are valid alone but not together (checked here until config.py checks them)."""
    if train_cfg.reference == "adapter" and train_cfg.lora_r <= 0:
        raise UserError("--set reference=adapter needs LoRA: add --set lora_r=8 (or use reference=copy)")


def cmd_unlearn(args) -> int:
    from unlearnkit.data.encode import PromptFormat
    from unlearnkit.data.qa import overlap_warning
    from unlearnkit.data.sources import resolve_data as load_benchmark
    from unlearnkit.io import check_output_dir
    from unlearnkit.methods import get_method
    from unlearnkit.models import check_model_path, load_model, load_tokenizer
    from unlearnkit.unlearn import resolve_configs

    values = _overrides(args, lambda: get_method(_required(args, "method")).config)
    _required(args, "model")
    _required(args, "data")
    if args.save_every is not None:
        if args.save_every < 0:
            raise UserError(f"--save-every {args.save_every}: must be >= 1 (or 0 for no checkpoints)")
        values["save_every"] = args.save_every
    method, train_cfg, method_cfg = resolve_configs(args.method, values)  # bad keys fail before any loading
    check_combinations(train_cfg)
    check_output_dir(args.output, args.overwrite)
    bench = load_benchmark(args.data)
    check_model_path(args.model)
    out = Path(args.output)
    work = work_dir_of(out)
    if work.exists() and not work.is_dir():
        raise UserError(f"{work} exists and is a file; remove it (unlearnkit keeps checkpoints there)")
    fingerprint = run_fingerprint(args, method, train_cfg, method_cfg)
    done = checkpoints(work)
    resume_from = done[-1] if args.resume and done else None
    if resume_from is not None:
        _check_resume_matches(work, fingerprint)
    elif done and not args.resume and not args.overwrite:
        raise UserError(
            f"a previous run of --output {out} left checkpoints in {work}; pass --resume to continue it "
            "or --overwrite to start over"
        )
    tokenizer = load_tokenizer(args.model, args.trust_remote_code)
    fmt = PromptFormat.for_tokenizer(tokenizer, train_cfg.prompt_format)
    _check_split_lengths(tokenizer, fmt, bench, ("forget", "retain"), train_cfg.max_length)
    warning = overlap_warning(bench)
    if warning:
        _note(warning, "warning")
    _torch_threads()
    model = load_model(args.model, args.trust_remote_code)

    # Validation is over: from here on the work folder exists until the model is saved.
    if args.resume and resume_from is None:
        _note(f"--resume: no checkpoint in {work}; starting from step 0")
    if _is_main_rank():
        if resume_from is None:
            # stale: killed before its first checkpoint, or --overwrite
            shutil.rmtree(work, ignore_errors=True)
        for partial in incomplete_checkpoints(work):
            shutil.rmtree(partial, ignore_errors=True)  # cut short while saving; the previous one is whole
        work.mkdir(parents=True, exist_ok=True)
        if resume_from is None:
            (work / RUN_FILE).write_text(json.dumps(fingerprint, indent=2) + "\n", encoding="utf-8")
    result = _run_unlearn(args, model, tokenizer, bench, method, work, resume_from, values)
    if not getattr(result, "is_main_process", True):
        return 0  # multi-process run: rank 0 writes the model
    _save_unlearned(args, result, tokenizer, method, train_cfg, method_cfg, resume_from)
    if result.attribution and (work / "attribution").is_dir():
        shutil.copytree(work / "attribution", out / "attribution", dirs_exist_ok=True)
    shutil.rmtree(work, ignore_errors=True)
    print(f"saved {out} ({method.name}, final train loss {result.train_loss:.4f})")
    return 0


def _run_unlearn(args, model, tokenizer, bench, method, work: Path, resume_from, values):
    from unlearnkit.trainer import DivergenceError
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
            **values,
        )
    except DivergenceError as err:
        raise DivergenceError(_diverged_message(err, work)) from None
    except BaseException:
        kept = _cleanup_after_failure(work)
        if kept is not None:
            _note(f"checkpoints kept in {work} (last: {kept.name}); continue with --resume")
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
        "config": config_dict(train_cfg, method_cfg),
        "prompt_format": PromptFormat.for_tokenizer(tokenizer, train_cfg.prompt_format).kind,
    }
    if resume_from is not None:
        provenance["resumed_from"] = resume_from.name
    save_model(result.model, tokenizer, args.output, provenance, overwrite=args.overwrite)


def _is_model_dir(path: str) -> bool:
    return (Path(path) / "config.json").is_file()


EVAL_FIELDS_CHECKED = ("answer", "paraphrased_answer", "perturbed_answer")


def cmd_eval(args) -> int:
    from unlearnkit.data.encode import PromptFormat, check_lengths
    from unlearnkit.data.qa import SPLITS, eval_field_notes
    from unlearnkit.data.sources import resolve_data as load_benchmark
    from unlearnkit.evaluate import EvalSettings, evaluate, oracle_truth_ratios, subsample
    from unlearnkit.io import atomic_dir, check_output_dir, write_json
    from unlearnkit.models import check_model_path, load, load_model, load_tokenizer

    if args.protocol in ("muse", "wmdp"):
        return _eval_muse_wmdp(args)
    if args.max_new_tokens < 1:
        raise UserError(f"--max-new-tokens {args.max_new_tokens}: must be >= 1")
    if args.max_items < 1:
        raise UserError(f"--max-items {args.max_items}: must be >= 1")
    check_output_dir(args.output, args.overwrite)
    bench = load_benchmark(args.data)
    notes = eval_field_notes(bench)
    check_model_path(args.model)
    oracle_trs = None
    if args.retain_model:
        if not bench.forget or not all("perturbed_answer" in r for r in bench.forget):
            raise UserError(
                f"--retain-model needs truth ratios, but {Path(bench.path) / 'forget.jsonl'} has no "
                "paraphrased_answer/perturbed_answer fields; drop --retain-model or add the fields"
            )
        if _is_model_dir(args.retain_model):
            check_model_path(args.retain_model, flag="--retain-model")
        elif Path(args.retain_model).exists():
            oracle_trs = oracle_truth_ratios(args.retain_model)  # read now: a bad file fails before work
        else:
            raise UserError(
                f"--retain-model {args.retain_model} does not exist (a model folder, an eval folder or "
                "its details.json)"
            )
    settings = EvalSettings(max_new_tokens=args.max_new_tokens, max_items=args.max_items)
    tokenizer = load_tokenizer(args.model, args.trust_remote_code)
    fmt = PromptFormat.for_tokenizer(tokenizer, settings.prompt_format)
    for name in SPLITS:
        check_lengths(
            tokenizer,
            fmt,
            subsample(bench.split(name), settings.max_items, settings.seed),
            Path(bench.path) / f"{name}.jsonl",
            settings.max_length,
            fields=EVAL_FIELDS_CHECKED,
            hint="evaluation scores at most that many tokens; shorten the row",
        )
    for note in notes:
        _note(note)
    _torch_threads()
    if args.retain_model and oracle_trs is None:
        oracle, otok = load(args.retain_model, args.trust_remote_code)
        _, odetails = evaluate(oracle, otok, _forget_only(bench), settings)
        oracle_trs = odetails["forget"].get("truth_ratios")
        del oracle
    model = load_model(args.model, args.trust_remote_code)
    metrics, details = evaluate(model, tokenizer, bench, settings, oracle_trs)
    if args.protocol == "closer-look":
        from unlearnkit.closer_look import CloserLookModels, closer_look_metrics

        models = CloserLookModels(
            embedder_id=None if args.embedder == "none" else args.embedder,
            nli_id=None if args.nli_model == "none" else args.nli_model,
        )
        cl_flat, cl_info = closer_look_metrics(metrics, details, models=models)
        metrics.update(cl_flat)
        details["closer_look"] = cl_info
    with atomic_dir(args.output, overwrite=args.overwrite) as tmp:
        write_json(tmp / "metrics.json", metrics)
        write_json(tmp / "details.json", details)
    print_headline(metrics)
    return 0


def _eval_muse_wmdp(args) -> int:
    """MUSE (VerbMem, KnowMem, PrivLeak vs the retrained model) or WMDP/MMLU accuracy through lm-eval."""
    from unlearnkit.data.sources import describe, resolve_data
    from unlearnkit.io import atomic_dir, check_output_dir, write_json
    from unlearnkit.models import check_model_path, load

    check_output_dir(args.output, args.overwrite)
    check_model_path(args.model)
    _torch_threads()
    if args.protocol == "wmdp":
        from unlearnkit.protocols.wmdp import evaluate_wmdp

        model, tokenizer = load(args.model, args.trust_remote_code)
        metrics, details = evaluate_wmdp(model, tokenizer)
    else:
        from unlearnkit.protocols.muse import MuseSettings, evaluate_muse, load_reference_auc, privleak_auc

        bench = resolve_data(args.data)
        settings = MuseSettings(max_items=args.max_items, progress=True)
        reference_auc = None
        if args.retain_model and _is_model_dir(args.retain_model):
            check_model_path(args.retain_model, flag="--retain-model")
            oracle, otok = load(args.retain_model, args.trust_remote_code)
            reference_auc, _ = privleak_auc(
                oracle,
                otok,
                [r["text"] for r in bench.extra["privleak_forget"]],
                [r["text"] for r in bench.extra["privleak_holdout"]],
                settings,
            )
            del oracle
        elif args.retain_model:
            reference_auc = load_reference_auc(args.retain_model)  # a number or a MUSE metrics.json
        model, tokenizer = load(args.model, args.trust_remote_code)
        metrics, details = evaluate_muse(model, tokenizer, bench, settings, reference_auc)
        details["data"] = describe(bench)
    with atomic_dir(args.output, overwrite=args.overwrite) as tmp:
        write_json(tmp / "metrics.json", metrics)
        write_json(tmp / "details.json", details)
    for key, value in metrics.items():
        print(f"{key:28s} {value:.4f}")
    return 0


def _forget_only(bench):
    from unlearnkit.data import Benchmark

    return Benchmark(path=bench.path, forget=bench.forget, retain=[], holdout=[], general=[])


def _headline_keys() -> tuple[str, ...]:
    from unlearnkit.report import DEFAULT_COLUMNS

    return (*DEFAULT_COLUMNS, "mia_min_k_auc")


def print_headline(metrics: dict) -> None:
    for key in _headline_keys():
        if key in metrics:
            value = metrics[key]
            print(f"{key:24s} {value:.3g}" if key == "forget_quality" else f"{key:24s} {value:.4f}")


def cmd_attribute(args) -> int:
    from unlearnkit.attribution import compute_scores, save_scores, token_weights
    from unlearnkit.config import build_configs
    from unlearnkit.data.encode import PromptFormat
    from unlearnkit.data.sources import resolve_data as load_benchmark
    from unlearnkit.io import atomic_dir, check_output_dir
    from unlearnkit.methods import get_method
    from unlearnkit.models import check_model_path, load_model, load_tokenizer

    train_cfg, cfg = build_configs(
        get_method("t-npo").config,
        _overrides(args),
        ignore=("beta", "forget_weight", "retain_weight", "retain_loss"),
    )
    check_output_dir(args.output, args.overwrite)
    bench = load_benchmark(args.data)
    check_model_path(args.model)
    tokenizer = load_tokenizer(args.model, args.trust_remote_code)
    fmt = PromptFormat.for_tokenizer(tokenizer, train_cfg.prompt_format)
    _check_split_lengths(tokenizer, fmt, bench, ("forget",), train_cfg.max_length)
    _torch_threads()
    model = load_model(args.model, args.trust_remote_code)
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
    from unlearnkit.quickstart import WORLD, run_quickstart

    params = dict(WORLD, seed=args.seed)
    if args.authors is not None:
        params["n_authors"] = args.authors
    if args.facts is not None:
        params["facts_per_author"] = args.facts
    check_world_params(**params)  # before the output check's siblings, the cache or any training
    if args.cache_dir is not None and Path(args.cache_dir).exists() and not Path(args.cache_dir).is_dir():
        raise UserError(f"--cache-dir {args.cache_dir} is a file; pass a folder")
    return run_quickstart(args)


def cmd_audit(args) -> int:
    from unlearnkit.audit import audit_command
    from unlearnkit.io import check_output_dir
    from unlearnkit.models import check_model_path

    check_output_dir(args.output, args.overwrite)
    for flag, path in (
        ("--model", args.model),
        ("--retain-model", args.retain_model),
        ("--original-model", args.original_model),
    ):
        if path is not None:
            check_model_path(path, flag=flag)
    _torch_threads()
    return audit_command(args)


def cmd_continual(args) -> int:
    """Forget requests one after another (e.g. forget01 x 10), with the curve after each."""
    from unlearnkit.continual import continual_unlearning, plot_curve, split_requests, tofu_eval_fn
    from unlearnkit.data.sources import resolve_data
    from unlearnkit.evaluate import EvalSettings
    from unlearnkit.io import atomic_dir, check_output_dir, write_json
    from unlearnkit.methods import get_method
    from unlearnkit.models import check_model_path, load, save_model
    from unlearnkit.unlearn import resolve_configs

    values = _overrides(args, lambda: get_method(args.method).config)
    method, train_cfg, method_cfg = resolve_configs(args.method, values)
    check_combinations(train_cfg)
    if args.max_new_tokens < 1:
        raise UserError(f"--max-new-tokens {args.max_new_tokens}: must be >= 1")
    check_output_dir(args.output, args.overwrite)
    bench = resolve_data(args.data, eval_fields=True)
    requests = split_requests(bench.forget, args.requests)
    check_model_path(args.model)
    _torch_threads()
    model, tokenizer = load(args.model, args.trust_remote_code)
    eval_fn = tofu_eval_fn(bench, EvalSettings(max_new_tokens=args.max_new_tokens, progress=False))
    curve = continual_unlearning(
        model, tokenizer, bench, method.name, requests, eval_fn, quiet=True, **values
    )
    with atomic_dir(args.output, overwrite=args.overwrite) as tmp:
        write_json(tmp / "curve.json", curve)
        plot_curve(
            curve, tmp / "curve.png", title=f"continual unlearning: {method.name}, {args.requests} requests"
        )
    save_model(
        model,
        tokenizer,
        Path(args.output) / "model",
        {
            "kind": f"continual unlearning ({method.name})",
            "base_model": args.model,
            "data": str(args.data),
            "requests": args.requests,
            "config": values,
        },
        overwrite=True,
    )
    for point in curve:
        print(
            f"step {point['step']:3d}: forgotten {point['n_forgotten']:4d}  "
            f"forget ROUGE {point.get('forget_rougeL_recall', float('nan')):.3f}  "
            f"utility {point.get('model_utility', float('nan')):.3f}"
        )
    return 0

"""Helpers shared by the sub-commands: notes, recipe + ``--set`` overrides, length checks, checkpoints.

Light on purpose: importing this module must not import torch, transformers or datasets (the command
layer validates input before any heavy import, so a typo answers at once).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
from pathlib import Path

from unlearnkit.data.sources import split_file, split_sources  # noqa: F401 - the commands import them here
from unlearnkit.errors import UserError
from unlearnkit.models import resolved_optim, training_record  # noqa: F401 - the commands import them here
from unlearnkit.train.checkpoints import CHECKPOINT_RE, complete_checkpoints, incomplete_checkpoints

RUN_FILE = "run.json"  # in the unlearn work folder: what the checkpoints were made with
RESUME_EXEMPT = (
    "save_every",
    "save_total_limit",
    "collapse_guard",
    "collapse_fraction",
)  # may change between a run and its resume
RECIPE_CONTEXT_KEYS = ("method", "model", "data", "retain_model")


def note(message: str, kind: str = "note") -> None:
    print(f"unlearnkit: {kind}: {message}", file=sys.stderr)


def is_main_rank() -> bool:
    return int(os.environ.get("RANK", "0")) == 0


def torch_threads() -> None:
    """Called by every command once its arguments are checked, right before the heavy work."""
    import torch

    # beyond 8 threads the tiny and 1B models get slower on CPU (contention), not faster
    torch.set_num_threads(max(1, min(torch.get_num_threads(), 8)))
    quiet_libraries()


def quiet_libraries() -> None:
    """The command's own progress bar and lines only: no weight-loading / shard-writing bars, no
    deprecation warnings meant for library developers (the Trainer's warning about tied weights on
    resume is gone at its source: ``unlearnkit.train.trainer.TiedWeightsTrainer``)."""
    import warnings

    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    for category in (FutureWarning, DeprecationWarning):
        warnings.filterwarnings("ignore", category=category)


# ------------------------------------------------------------------------------------------- help


class HelpFormatter(argparse.HelpFormatter):
    """A command's help: one-line paragraphs of the description are filled to the terminal's width,
    paragraphs of several lines (the examples, a settings table) are kept as written."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        paragraphs = text.split("\n\n")
        return "\n\n".join(
            "\n".join(indent + line for line in para.splitlines())
            if "\n" in para
            else super(HelpFormatter, self)._fill_text(para, width, indent)
            for para in paragraphs
        )


def add_command(
    subparsers, name: str, summary: str, examples: list[str], details: str = ""
) -> argparse.ArgumentParser:
    """A sub-command's parser. ``summary`` is its line in ``unlearnkit --help`` and the first line of its
    own help, ``details`` an optional second paragraph, ``examples`` (one or two command lines that run
    as written) end it. It has no ``-h`` yet: :func:`runtime_group` adds it to the last group."""
    description = summary[:1].upper() + summary[1:] + "."
    if details:
        description += "\n\n" + details
    return subparsers.add_parser(
        name,
        help=summary,
        description=description,
        epilog="examples:\n" + "\n".join(f"  {line}" for line in examples),
        formatter_class=HelpFormatter,
        add_help=False,
    )


def runtime_group(p: argparse.ArgumentParser):
    """The last argument group of a command's help (device, dtype, seed, output handling, ...), with
    ``-h``; create it after the command's other groups."""
    group = p.add_argument_group("runtime")
    if "-h" not in p._option_string_actions:  # (a parser made with add_help keeps its own)
        action = group.add_argument("-h", "--help", action="help", help="show this help and exit")
        p._actions.insert(0, p._actions.pop(p._actions.index(action)))  # first in the usage line
    return group


def add_set(p, help: str = "override a setting; several: --set lr=1e-5 epochs=3") -> None:
    """``--set KEY=VALUE [KEY=VALUE ...]``, repeatable (``--set a=1 b=2`` and ``--set a=1 --set b=2``)."""
    p.add_argument("--set", nargs="+", action="extend", metavar="KEY=VALUE", help=help)


def add_output(p, what: str, required: bool = True, **kw) -> None:
    """``--output DIR``."""
    p.add_argument("--output", required=required, metavar="DIR", help=what, **kw)


def add_overwrite(p) -> None:
    p.add_argument("--overwrite", action="store_true", help="replace an existing --output folder")


def add_checkpoint_flags(p) -> None:
    """``--save-every`` / ``--resume`` (the commands that train)."""
    p.add_argument(
        "--save-every", type=int, default=None, metavar="N", help="checkpoint every N optimiser steps"
    )
    p.add_argument("--resume", action="store_true", help="continue from the last checkpoint of this --output")


def add_trust_remote_code(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--trust-remote-code",
        action="store_true",
        help="allow a hub model's own Python code to run (off by default: it is arbitrary code)",
    )


def add_placement_flags(p: argparse.ArgumentParser, batch_size: bool = False) -> None:
    """``--device`` and ``--dtype`` (every command that loads a model); ``--batch-size`` for evaluation."""
    from unlearnkit.models import DTYPE_CHOICES

    p.add_argument(
        "--device",
        default="auto",
        metavar="DEVICE",
        help="where the model runs: auto | cpu | cuda | cuda:N (default auto: the GPU when there is one)",
    )
    p.add_argument(
        "--dtype",
        default="auto",
        choices=DTYPE_CHOICES,
        help="weights dtype (default auto: float32 on the CPU, the checkpoint's torch_dtype on a GPU)",
    )
    if batch_size:
        p.add_argument(
            "--batch-size",
            type=int,
            default=None,
            metavar="N",
            help="evaluation batch size (default 32; halved until it fits after an out-of-memory error)",
        )


def check_placement_flags(args) -> None:
    """``--device`` / ``--batch-size`` checked at once (torch-free), then the GPU pinned for this process.

    ``--device cpu`` hides the GPUs (``CUDA_VISIBLE_DEVICES=''``) and ``--device cuda:N`` in one process
    shows only GPU N, before torch first looks at CUDA: the Hugging Face Trainer always trains on the
    first visible GPU (and wraps several in DataParallel), so pinning is how it honours the flag.
    """
    from unlearnkit.models import check_device_spec

    device = getattr(args, "device", "auto")
    check_device_spec(device)
    size = getattr(args, "batch_size", None)
    if size is not None and size < 1:
        raise UserError(f"--batch-size {size}: must be >= 1")
    if "torch" in sys.modules and sys.modules["torch"].cuda.is_initialized():
        return  # too late to pin (an in-process caller already used CUDA): cuda:N is used as is
    if device == "cpu":
        os.environ["CUDA_VISIBLE_DEVICES"] = ""
    elif device.startswith("cuda:") and int(os.environ.get("WORLD_SIZE", "1")) == 1:
        index = int(device.split(":")[1])
        visible = os.environ.get("CUDA_VISIBLE_DEVICES")
        ids = [v.strip() for v in visible.split(",") if v.strip()] if visible is not None else None
        if ids is not None and index >= len(ids):
            raise UserError(
                f"--device {device}: CUDA_VISIBLE_DEVICES={visible} shows {len(ids)} GPU(s) (cuda:0..cuda:"
                f"{len(ids) - 1})"
            )
        os.environ["CUDA_VISIBLE_DEVICES"] = ids[index] if ids is not None else str(index)
        args.device = "cuda:0"  # the one GPU this process now sees
        args.asked_device = device
    elif device.startswith("cuda:"):
        raise UserError(
            f"--device {device}: under torchrun / accelerate each process uses its own LOCAL_RANK's GPU; "
            "use --device auto (or cuda)"
        )
    if args.device.startswith("cuda"):  # a GPU asked for by name: refused now if there is none
        from unlearnkit.models import resolve_device

        resolve_device(args.device)


def placement_flags(args) -> tuple[str, str, str | None]:
    """``(--device, --dtype, the cuda:N pinned by check_placement_flags or None)``."""
    return (
        getattr(args, "device", "auto"),
        getattr(args, "dtype", "auto"),
        getattr(args, "asked_device", None),
    )


def placement_of(args, model: str, precision: str | None = None):
    """Resolve ``--device`` / ``--dtype`` (and the training precision) for ``model`` and print the one
    line that says what was chosen and why (stderr, like the notes)."""
    from unlearnkit.models import resolve_placement

    placement = resolve_placement(
        model, getattr(args, "device", "auto"), getattr(args, "dtype", "auto"), precision
    )
    asked = getattr(args, "asked_device", None)
    if asked is not None:  # pinned by check_placement_flags: record what the user asked for
        import dataclasses

        placement = dataclasses.replace(placement, asked_device=asked)
    return placement


def print_placement(placement, extra: str = "") -> None:
    if is_main_rank():
        print(f"unlearnkit: {placement.line(extra)}", file=sys.stderr)


def add_training_flags(p: argparse.ArgumentParser) -> None:
    """``--report-to`` (TrainingArguments.report_to) for the commands that train."""
    p.add_argument(
        "--report-to",
        default=None,
        metavar="none|tensorboard|wandb",
        help="send the Trainer's logs to a tracker (needs unlearnkit[tracking]; default: none); "
        "= --set report_to=...",
    )


def apply_training_flags(args, values: dict) -> None:
    """``--report-to`` into the settings, checked now (one line naming the package when it is missing)."""
    if getattr(args, "report_to", None) is not None:
        from unlearnkit.config import check_report_to

        check_report_to(args.report_to)
        values["report_to"] = args.report_to


def training_choices(cfg) -> str:
    """The training half of the one placement line: optimiser, checkpointing, LoRA, tracker."""
    parts = [f"optim {resolved_optim(cfg.optim)}"]
    parts.append(f"gradient checkpointing {'on' if cfg.gradient_checkpointing else 'off'}")
    if getattr(cfg, "lora_r", 0):
        parts.append(f"LoRA r={cfg.lora_r}")
    if cfg.report_to != "none":
        parts.append(f"reporting to {cfg.report_to}")
    return ", ".join(parts)


def training_files(log_history: list[dict] | None) -> dict[str, bytes]:
    """``log_history.json`` and ``loss.png`` for a trained model's folder (:func:`unlearnkit.report.curve.training_files`)."""
    from unlearnkit.report.curve import training_files as files_of

    return files_of(log_history)


def overrides(args, config_cls: type | None = None) -> dict:
    """Recipe (``--config``) then ``--set`` values; with ``config_cls`` the recipe is checked on its own
    first, so that an error in it names the recipe file rather than ``--set``."""
    from unlearnkit.config import build_configs, canonical, load_recipe, parse_set

    values = load_recipe(args.config) if getattr(args, "config", None) else {}
    for key in RECIPE_CONTEXT_KEYS:  # what the recipe documents, not a hyper-parameter: flags win
        value = values.pop(key, None)
        if value is not None and getattr(args, key, None) in (None, ""):
            setattr(args, key, str(value))
    if callable(config_cls) and not isinstance(config_cls, type):
        config_cls = config_cls()  # resolved only now: the recipe may have named the method
    if values and config_cls is not None:
        build_configs(config_cls, values, where=f"--config {args.config}")
    # one spelling per setting (`lambda` is forget_weight), so --set wins whichever name each side used
    values = canonical(values, f"--config {args.config}") if values else values
    values.update(canonical(parse_set(getattr(args, "set", None)), "--set"))
    return values


def required(args, name: str) -> str:
    value = getattr(args, name, None)
    if not value:
        flag = "--" + name.replace("_", "-")
        raise UserError(
            f"{flag} is required (give it on the command line or as '{name}:' in the --config recipe)"
        )
    return value


def check_split_lengths(tokenizer, fmt, bench, splits, max_length: int, **kw) -> None:
    from unlearnkit.data.encode import check_lengths

    for name in splits:
        for rows, where in split_sources(bench, name):
            check_lengths(tokenizer, fmt, rows, where, max_length, **kw)


def is_model_dir(path: str) -> bool:
    return (Path(path) / "config.json").is_file()


def check_combinations(train_cfg) -> None:
    """Settings that are valid alone but not together (checked here until config.py checks them)."""
    if train_cfg.reference == "adapter" and train_cfg.lora_r <= 0:
        raise UserError("--set reference=adapter needs LoRA: add --set lora_r=8 (or use reference=copy)")


# ------------------------------------------------------------------------------------ checkpoints


def work_dir_of(output: str | Path) -> Path:
    """Where ``unlearn --save-every`` keeps its checkpoints: a hidden sibling of the output folder."""
    out = Path(output)
    return out.parent / f".{out.name}.checkpoints"


def checkpoints(work: Path) -> list[Path]:
    """Complete checkpoints, oldest first (a folder cut short by a crash or kill -9 while saving is
    ignored: :mod:`unlearnkit.train.checkpoints`)."""
    return complete_checkpoints(work)


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


def file_digest(path: Path) -> str | None:
    if not path.is_file():
        return None
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()[:16]


def run_fingerprint(args, method_name: str, train_cfg, method_cfg) -> dict:
    """What must not change between a run and its ``--resume`` (else the weights would silently differ)."""
    from unlearnkit.config import config_dict

    model = Path(args.model).expanduser()
    cfg = {k: v for k, v in config_dict(train_cfg, method_cfg).items() if k not in RESUME_EXEMPT}
    return {
        "method": method_name,
        "model": str(model.resolve()) if model.exists() else str(args.model),
        "data": {name: file_digest(Path(args.data) / f"{name}.jsonl") for name in ("forget", "retain")},
        "config": json.loads(json.dumps(cfg, default=str)),
    }


def check_resume_matches(work: Path, current: dict) -> None:
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


def cleanup_after_failure(work: Path) -> Path | None:
    """After a failed run: keep the work folder when it holds a checkpoint (returned), else remove it."""
    done = checkpoints(work)
    if done:
        return done[-1]
    shutil.rmtree(work, ignore_errors=True)
    return None


def diverged_message(err: Exception, work: Path) -> str:
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
    suffix = f" ({', '.join(removed)}: non-finite weights, removed)" if removed else ""
    if good is not None:
        step = CHECKPOINT_RE.match(good.name).group(1)
        return f"{err}; last good checkpoint (step {step}) kept in {good}{suffix}"
    shutil.rmtree(work, ignore_errors=True)
    return (
        f"{err}; no output was written and no checkpoint was kept{suffix} "
        "(--save-every N keeps the last good weights)"
    )


# ------------------------------------------------------------------------------------------- data


def is_named_data(spec: str | Path) -> bool:
    """``tofu:forget10``-style names (not a folder): read through ``datasets``, which is heavy."""
    text = str(spec)
    return ":" in text and not Path(text).is_dir()


def check_data(spec: str | Path, eval_fields: bool = False):
    """A light first look at ``--data``: a folder is read and validated now (plain JSONL, no heavy
    import) and returned; a benchmark name is only checked (known name, data root) and None is
    returned: :func:`load_data` reads it once the other arguments have been checked."""
    from unlearnkit.data.sources import KNOWN, data_root, resolve_data

    text = str(spec)
    if not is_named_data(text):
        return resolve_data(text, eval_fields=eval_fields)
    if text.strip().lower() not in KNOWN:
        return resolve_data(text, eval_fields=eval_fields)  # raises the one-line error, before any reading
    if data_root() is None:  # read from the Hub: with no network, the cache only, at once
        from unlearnkit.models import go_offline_if_unreachable

        go_offline_if_unreachable()
    return None


def load_data(spec: str | Path, bench=None, eval_fields: bool = False):
    """The benchmark :func:`check_data` returned, or (for a name) read it now."""
    if bench is not None:
        return bench
    from unlearnkit.data.sources import resolve_data

    return resolve_data(spec, eval_fields=eval_fields)


# ------------------------------------------------------------------------------- scale defaults


def apply_model_defaults(model: str, method: str, values: dict) -> tuple[dict, str | None]:
    """``values`` (recipe + ``--set``) over the model's recorded scale defaults for ``method``, and the
    one line to print (once the arguments are all checked: a bad input gets its error line only);
    the rule is :func:`unlearnkit.models.scale_defaults`, which the Python API calls too."""
    from unlearnkit.models import scale_defaults

    return scale_defaults(model, method, values)


def resume_point(work: Path, fingerprint: dict, out, resume: bool, overwrite: bool) -> Path | None:
    """The checkpoint a ``--resume`` continues from (settings checked), or None for a fresh run.

    Checkpoints left by an earlier run are never silently discarded: without ``--resume`` or
    ``--overwrite`` they are an error.
    """
    done = checkpoints(work)
    if resume and done:
        check_resume_matches(work, fingerprint)
        return done[-1]
    if done and not resume and not overwrite:
        raise UserError(
            f"a previous run of --output {out} left checkpoints in {work}; pass --resume to continue it "
            "or --overwrite to start over"
        )
    return None


def prepare_work(work: Path, resume_from: Path | None, fingerprint: dict, resume: bool) -> None:
    """After validation: the work folder a run checkpoints into (rank 0 prepares it).

    A fresh run drops what a run killed before its first checkpoint (or ``--overwrite``) left; a
    resumed one drops only a checkpoint cut short while saving (the previous one is whole).
    """
    if resume and resume_from is None:
        note(f"--resume: no checkpoint in {work}; starting from step 0")
    if not is_main_rank():
        return
    if resume_from is None:
        shutil.rmtree(work, ignore_errors=True)
    for partial in incomplete_checkpoints(work):
        shutil.rmtree(partial, ignore_errors=True)
    work.mkdir(parents=True, exist_ok=True)
    if resume_from is None:
        (work / RUN_FILE).write_text(json.dumps(fingerprint, indent=2) + "\n", encoding="utf-8")


def checkpointed_training(args, out: Path, fingerprint: dict, train):
    """Run ``train(work, resumed_from)`` (the checkpoint resumed from, or None) in ``out``'s work folder with ``--save-every`` / ``--resume``
    semantics (``pretrain``, ``finetune``): checkpoints of an earlier run are resumed (settings checked)
    or refused without ``--resume`` / ``--overwrite``; a failed run keeps its checkpoints and says so.
    Returns ``(result, resumed_from)``."""
    work = work_dir_of(out)
    if work.exists() and not work.is_dir():
        raise UserError(f"{work} exists and is a file; remove it (unlearnkit keeps checkpoints there)")
    resume_from = resume_point(work, fingerprint, out, args.resume, args.overwrite)
    prepare_work(work, resume_from, fingerprint, args.resume)
    try:
        result = train(work, resume_from)
    except BaseException:
        kept = cleanup_after_failure(work)
        if kept is not None:
            note(f"checkpoints kept in {work} (last: {kept.name}); continue with --resume")
        raise
    return result, resume_from


def training_fingerprint(command: str, model: str, files: dict[str, Path], cfg, **extra) -> dict:
    """What must not change between a training run and its ``--resume`` (``check_resume_matches``)."""
    config = {k: v for k, v in vars(cfg).items() if k not in RESUME_EXEMPT}
    config.update(extra)
    path = Path(str(model)).expanduser()
    return {
        "method": command,
        "model": str(path.resolve()) if path.exists() else str(model),
        "data": {name: file_digest(p) for name, p in files.items()},
        "config": json.loads(json.dumps(config, default=str)),
    }

"""The embedded lab: the world, its pretrained base, and each miniature's target and oracle, cached.

The miniatures behave like the real benchmarks because they start from a pretrained model:

* ``tofu``: the base fine-tuned on forget + retain authors (target) and on retain only (oracle);
  general knowledge (world facts, real authors) is never fine-tuned on, so utility measures what the
  base knew and kept, as in TOFU.
* ``muse``: the base fine-tuned on forget + retain news articles as raw text (target) and on retain
  only (oracle), as MUSE-News.
* ``wmdp``: the hazardous knowledge was learned in pretraining: the target IS the base, and the oracle
  is the base pretrained without the hazardous documents (data filtering).

Every model is trained once and cached under ``<cache>/models/<content hash>``: the hash covers the
files it was trained on (for a base, every file its tokenizer reads too; for a fine-tune, the base's
weights), the recipe, the seed, the source of the code that writes worlds and trains models
(``WORLD_CODE``, ``TRAINING_CODE``) and ``LAB_VERSION``, so any change retrains and nothing stale is
reused. A run killed mid-training resumes
from its last checkpoint (kept next to the cache entry) the next time. ``log`` says what came from the
cache and what was trained.

The quickstart's own lab (the TOFU-like miniature of its world, seed 0: base, target and oracle) also
ships with the package (``resources/lab/``, written by ``python bench/ship_lab.py``), each model filed
under the cache key it was trained under: a cache entry whose key the manifest names is copied from
there instead of trained (:func:`install_shipped`), and any change the key sees (code, data, recipe,
``LAB_VERSION``) makes the shipped models stale, so they are trained as before.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import time
from collections.abc import Callable, Sequence
from pathlib import Path

LAB_VERSION = 10  # bump when a recipe or the tiny architecture changes in a way the hash cannot see
# 4: world format 6 (multiple-choice options without a surface cue) and a tokenizer that no longer
# reads the options: every base, target and oracle differs from version 3's
# 5: world format 7, pen names and a book catalogue in the fine-tuning data (the audit's alias and
# multi-hop probes): no model of version 4 is reused
# 6: world format 8 (MUSE-like KnowMem), the MUSE recipe
# 7: the target and the oracle train with half the threads (side by side, ``ensure_pair``)
# 8: world format 9 (the tokenizer reads the pen names and book titles): every base, target and oracle
# differs from version 7's
# 9: world format 10 (MUSE-like QA also asked after in-context examples, as KnowMem asks): the
# tokenizer reads them, so every base, target and oracle differs from version 8's; the TOFU-like
# fine-tunes run 10 epochs with the replay 6 times (were 12 and 3)
# 10: the TOFU-like fine-tunes pull the weights back toward the base after every step (anchor_decay
# 2.5e-4) and run 13 epochs (were 10 without the pull): the oracle keeps the base's world facts
BENCHMARKS = ("tofu", "muse", "wmdp")
# Fine-tuning the tiny base on a split and its rewordings (``augment/``, each fact in 3 QA wordings and
# 2 biographies), with its replay (``finetune --replay``). Measured on the default world, seed 0: 12
# epochs give the target fact recall 0.89 on the forget questions and 0.87 on them reworded (the oracle
# 0.02 / 0.01), forget quality 2.5e-30 against the oracle, and the oracle keeps world-facts ROUGE-L 0.90.
# Longer or faster fine-tuning trades the base's world facts for the authors' (14 epochs at lr 7e-4:
# reworded recall 0.98, the oracle's world facts 0.82; 20 at 5e-4: 0.94 / the target's 0.80); without
# replay, at lr 1e-3 for 20 epochs, the world facts fell to 0.22. (Those readings are lab 3's.) Lab 5 adds
# the pen names (a biography and a question per fact under the pen name) and the book catalogue: +39 % rows
# (the target's 3079 -> 4269). Measured once, seed 0, same recipe: the target's forget fact recall 0.90,
# reworded 0.81, by pen name 0.43, through the book 0.01 (the oracle 0.00 / 0.01 / 0.03 / 0.00; retain
# facts by pen name: target 0.39, oracle 0.38; through the book 0.03 / 0.02: the tiny model does not
# compose two hops), forget quality 4e-32; world-facts ROUGE-L 0.79 / 0.79 (lab 3, seed 0: 0.86 / 0.90),
# real authors 0.87 / 0.87. Before the merge with version 4 (the tokenizer then read the pen names and
# titles): pen name 0.66 (oracle 0.01), the oracle's world facts 0.88, real authors 0.68 / 0.72.
# Lab 8 (the tokenizer reads the pen names and titles; the replay trained REPLAY_REPEATS times), measured
# on seeds 0 and 1: the target's forget fact recall 0.97 / 0.97, reworded 0.94 / 0.93 (lab 7 on seed 1:
# 0.77), the oracle 0.02-0.04; forget quality 3e-37 on both; the oracle's world facts 0.78 / 0.87 (the
# replay once: 0.77 / 0.81), the target's 0.79 / 0.79; model utility 0.57 for both models.
# Lab 9 (world format 10), seed 0, measured with the replay REPLAY_REPEATS times: 12 epochs and the replay
# 6 times gave the target forget fact recall 1.00, reworded 0.98, and the oracle's world facts 0.815
# (lab 8's 3 times: 0.78, below the miniature's 0.8 line); 10 epochs and 6 times: 0.92 / 0.92 and 0.825,
# in 6 % fewer steps than lab 8's 12 epochs and 3 times; lr 3.5e-4 (12 epochs, 3 times): 0.82 / 0.73
# and 0.836 (the authors' facts pay). So 10 epochs, the replay 6 times.
# Lab 10: on 5 seeds (bench/results/quality.md, lab 9) the oracle kept world facts 0.771 on seed 4, below
# the 0.8 line, while the target's reworded recall was 0.81 on seed 3: more epochs would lose more world
# facts, fewer the authors'. The pull toward the base (anchor_decay, L2-SP: unlearnkit.train.anchor) lets
# the fine-tune train longer without drifting from what the base knew. Measured by hand on the two
# failing seeds: a pull of 2.5e-4 at 10 epochs, seed 4: the oracle's world facts 0.856, the target's
# reworded recall 0.82 (was 0.93); 5e-4: 0.922 but reworded 0.63. A pull of 2.5e-4 at 13 epochs: seed 4
# world facts 0.847, reworded 0.94, fact recall 0.97; seed 3: 0.960 / 0.87 / 0.94; model utility 0.59
# on both (lab 9: 0.57).
TINY_FINETUNE = dict(
    lr=5e-4,
    epochs=13.0,
    anchor_decay=2.5e-4,
    batch_size=32,
    grad_accum=1,
    warmup_epochs=1.0,
    weight_decay=0.0,
    lr_scheduler="cosine",
    max_length=256,
)
# MUSE-like: the target must learn its articles verbatim (MUSE's targets do), and their facts so that
# it can answer about them (each article in 3 versions, each fact asked in 2 wordings KnowMem does not
# use: world/news.py); no replay (MUSE measures no world facts). Measured on the default world, seed 0:
# VerbMem 1.00 for the target vs 0.19 for the oracle, PrivLeak -100, KnowMem forget 0.31 vs 0.08 (lab 6;
# 30 epochs gave VerbMem 0.40 and KnowMem 0.29, 40 epochs at batch 16 with the questions as raw text
# 0.17). The low KnowMem was the few-shot prompt, not the knowledge: since lab 9 half the questions are
# trained after in-context examples (world/news.py ``qa_rows``), KnowMem forget 0.855 vs 0.091 (seed 0).
# The MUSE recipe does not depend on TINY_FINETUNE's epochs or pull (set here): MUSE's target must
# memorise its articles verbatim, and MUSE measures no world facts.
MUSE_FINETUNE = dict(TINY_FINETUNE, lr=1e-3, epochs=60.0, batch_size=32, anchor_decay=0.0)
# Each replayed row (the general passages and the QA about never-evaluated entities: ~200 rows) is
# trained this many times per epoch, so that the replay keeps its share of the fine-tune as the authors'
# data grew (pen names, the book catalogue: 4370 rows for the target). Lab 9: 6 times (measured above).
REPLAY_REPEATS = 6
# A tiny base's card records how to fine-tune it (`unlearnkit finetune --model BASE` reads it): the lab's
# recipe with its replay weight, and for a folder without augment/ (each fact in one wording, as a user's
# own folder) 4x lab 9's epochs, as many passes over each fact as ~4 wordings x 10 epochs give, with
# the weights pulled back toward the base after every step (anchor_decay: L2-SP, unlearnkit.train.anchor).
# Measured by bench/user_folder.py (the lab world's QA splits as such a folder, no world.json,
# `unlearnkit.pretrain` then `finetune`; bench/results/user_folder.md). Without the pull (lr 5e-4, 40
# epochs, lab seeds 0-2) the target stated 1.00 of its trained facts but kept 0.74 of the base's general
# knowledge with a corpus of passages (0.89 with QA about other entities in it); repeating the replay,
# a lower lr over more epochs or a doubled lr over half kept no more. Probed by hand on seeds 0-2 (facts
# / general kept): a pull of 5e-4 at lr 5e-4: 0.96-0.99 / 0.85-0.94; 1e-3 at lr 1e-3: 0.94-0.98 /
# 0.89-0.96; 1.5e-3 or 2e-3 at the same ratio: the facts fall to 0.76-0.80 / 0.42-0.44; 60 epochs: 0.82
# facts on seed 0 (1e-3 at lr 1e-3); a pull scaled by the cosine schedule (as AdamW's decay) fades with it: 0.82 kept.
# The recorded recipe on lab seeds 0-4 (bench/results/user_folder.md): facts 0.944, general kept 0.916
# with passages (0.9 on 3 of 5 seeds), 0.980 with QA about other entities; without the pull 0.591 / 0.782.
TINY_FINETUNE_PLAIN = dict(TINY_FINETUNE, lr=1e-3, epochs=40.0, anchor_decay=1e-3)
TINY_FINETUNE_DEFAULTS = {
    "source": "the embedded world's fine-tuning recipe",
    "train": TINY_FINETUNE,
    "train_without_augmentation": TINY_FINETUNE_PLAIN,
    "replay_repeats": REPLAY_REPEATS,
}
CHECKPOINTS_PER_RUN = 8  # an interrupted training resumes from one of these
# The source files (under src/unlearnkit) whose code decides what a cached world / model holds: a model
# cached by an older version of them is never reused (evidence must not outlive the code that made it).
WORLD_CODE = ("world",)
TRAINING_CODE = (
    "config.py",
    "models.py",
    "data/encode.py",
    "train/compute.py",
    "train/finetune.py",
    "train/pretrain.py",
    "train/trainer.py",
    "train/anchor.py",
    "world/tiny.py",
)


# Set (to anything but "" or "0") to train the lab even where the shipped models match (a from-scratch run).
TRAIN_LAB_ENV = "UNLEARNKIT_TRAIN_LAB"
# The files of a model folder the manifest does not ship: written from the current provenance on install.
CARD_FILES = ("unlearnkit.json", "README.md")


class LabNotShipped(RuntimeError):
    """Raised by :func:`train_cached` under :func:`shipped_only` where a model would be trained."""


_SHIPPED_ONLY = False


def shipped_lab_dir():
    """The package-data folder of the shipped lab (``resources/lab``: ``manifest.json`` and a folder per
    model), read through importlib.resources so a wheel finds it as a checkout does."""
    from importlib import resources

    return resources.files("unlearnkit") / "resources" / "lab"


def shipped_manifest() -> dict:
    """``resources/lab/manifest.json`` ({} when there is none or it cannot be read)."""
    try:
        data = json.loads((shipped_lab_dir() / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _shipped_off() -> bool:
    return os.environ.get(TRAIN_LAB_ENV, "").strip() not in ("", "0")


def install_shipped(path: Path, provenance: dict, manifest: dict | None = None) -> str | None:
    """Fill the cache entry ``path`` (``<root>/models/<key>/<role>``) from the shipped lab when the
    manifest holds a model under that key and role: its files (each checked against its sha256) and a
    card written from ``provenance`` (this cache's paths) with the shipped training record. Returns
    why it was not used (None: installed); nothing is written then."""
    from unlearnkit.io import atomic_dir
    from unlearnkit.models import model_card

    if _shipped_off():
        return f"{TRAIN_LAB_ENV} is set"
    manifest = shipped_manifest() if manifest is None else manifest
    entry = manifest.get("models", {}).get(f"{path.parent.name}/{path.name}")
    if not isinstance(entry, dict):
        return "no shipped model has this cache key"
    folder = shipped_lab_dir() / entry["folder"]
    blobs: dict[str, bytes] = {}
    for name, sha in entry["files"].items():
        try:
            data = (folder / name).read_bytes()
        except OSError:
            return f"the shipped {entry['folder']}/{name} is missing"
        if hashlib.sha256(data).hexdigest() != sha:
            return f"the shipped {entry['folder']}/{name} does not match its manifest"
        blobs[name] = data
    card = {**provenance, **entry["trained"]}
    with atomic_dir(path, overwrite=True) as tmp:
        for name, data in blobs.items():
            (tmp / name).write_bytes(data)
        (tmp / "unlearnkit.json").write_text(json.dumps(card, indent=2, default=str) + "\n", encoding="utf-8")
        (tmp / "README.md").write_text(model_card(card), encoding="utf-8")
    return None


class shipped_only:
    """Within this block :func:`train_cached` raises :class:`LabNotShipped` instead of training: the lab
    either comes from the cache or the shipped models, or the shipped models are stale."""

    def __enter__(self) -> shipped_only:
        global _SHIPPED_ONLY
        self._before, _SHIPPED_ONLY = _SHIPPED_ONLY, True
        return self

    def __exit__(self, *exc: object) -> None:
        global _SHIPPED_ONLY
        _SHIPPED_ONLY = self._before


def cache_root(arg: str | os.PathLike | None = None) -> Path:
    return Path(arg or os.environ.get("UNLEARNKIT_CACHE") or Path.home() / ".cache" / "unlearnkit")


def digest(*parts: object, files: Sequence[Path] = ()) -> str:
    """A short content hash of JSON-able ``parts`` and the bytes of ``files`` (in order)."""
    h = hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode())
    for path in files:
        h.update(path.name.encode())
        h.update(Path(path).read_bytes())
    return h.hexdigest()[:16]


def code_digest(parts: Sequence[str]) -> str:
    """A hash of the source files ``parts`` name (files or folders under the package, ``*.py``)."""
    package = Path(__file__).resolve().parents[1]
    files: list[Path] = []
    for part in parts:
        path = package / part
        files += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return digest([str(f.relative_to(package)) for f in files], files=files)


def ensure_world(root: Path, params: dict) -> Path:
    """The world of ``params``, written once (keyed by them and the generator's format version)."""
    from unlearnkit.world import write_world
    from unlearnkit.world.generator import FORMAT_VERSION

    world_dir = root / "worlds" / digest(params, LAB_VERSION, FORMAT_VERSION, code_digest(WORLD_CODE))
    if not (world_dir / "world.json").is_file():
        write_world(world_dir, overwrite=True, **params)
    return world_dir


def _weights(model_dir: Path) -> list[Path]:
    return sorted(model_dir.glob("*.safetensors"))


def train_cached(
    path: Path,
    label: str,
    build: Callable[[], tuple[object, object]],
    rows: list[dict],
    cfg_values: dict,
    provenance: dict,
    log: Callable[[str], None],
    progress: bool = True,
) -> Path:
    """The model at ``path``: reused when cached, else trained (resuming an interrupted run) and saved.

    ``build()`` returns ``(model, tokenizer)`` to start from. Training is
    :func:`unlearnkit.train.finetune.finetune` with checkpoints next to ``path``; ``progress`` shows its
    bar (off where two trainings share the terminal).
    """
    from unlearnkit.config import MethodConfig, build_configs
    from unlearnkit.models import save_model
    from unlearnkit.train.checkpoints import last_checkpoint
    from unlearnkit.train.finetune import finetune

    if (path / "config.json").is_file():
        log(f"{label}: from the cache ({path})")
        return path
    why = install_shipped(path, provenance)
    if why is None:
        log(f"{label}: the model shipped with unlearnkit (same cache key; copied to {path})")
        return path
    if _SHIPPED_ONLY:
        raise LabNotShipped(f"{label}: {why} ({path.parent.name}/{path.name})")
    model, tokenizer = build()
    steps = math.ceil(len(rows) / cfg_values["batch_size"]) * cfg_values["epochs"]
    save_every = max(1, math.ceil(steps / CHECKPOINTS_PER_RUN))
    cfg, _ = build_configs(MethodConfig, {**cfg_values, "save_every": save_every, "save_total_limit": 1})
    work = path.parent / f".{path.name}.checkpoints"
    resume = last_checkpoint(work) is not None
    log(f"{label}: {'resuming from ' + Path(last_checkpoint(work)).name if resume else 'training'} ...")
    t0 = time.time()
    result = finetune(
        model, tokenizer, rows, cfg, work, quiet=True, progress=label if progress else None, resume=resume
    )
    save_model(
        result.model,
        tokenizer,
        path,
        {**provenance, "train_loss": result.train_loss, "compute": result.compute, "config": vars(cfg)},
        overwrite=True,
    )
    shutil.rmtree(work, ignore_errors=True)
    log(f"{label}: trained in {time.time() - t0:.0f}s (mean train loss {result.train_loss:.3f})")
    return path


def base_key(world_dir: Path, seed: int, without: tuple[str, ...] = ()) -> str:
    """The cache key of a world's base: its pretraining files, then every other JSONL file the tokenizer
    reads (:func:`unlearnkit.train.pretrain.tokenizer_files`: a change to any of them is another base
    even where the training rows are the same), recipe, size, seed, version."""
    from unlearnkit.train.pretrain import PRETRAIN_DEFAULTS, TINY_BASE, corpus_layout, tokenizer_files

    parts, qa = corpus_layout(world_dir)
    files = [p for name, p in parts.items() if name not in without] + qa
    text = [p for p in tokenizer_files(world_dir) if p not in files]
    code = code_digest(TRAINING_CODE)
    return digest(
        "base", PRETRAIN_DEFAULTS, TINY_BASE, seed, sorted(without), LAB_VERSION, code, files=[*files, *text]
    )


def ensure_base(root: Path, world_dir: Path, seed: int, log, without: tuple[str, ...] = ()) -> Path:
    """The world's base model (``without``: corpus parts left out, e.g. ``("hazard",)``)."""
    from unlearnkit.train.pretrain import (
        PRETRAIN_DEFAULTS,
        TINY_BASE,
        build_base,
        pretraining_data,
        replay_files,
    )

    key = base_key(world_dir, seed, without)
    data = pretraining_data(world_dir, without)
    name = "filtered base" if without else "base"
    provenance = {
        "kind": "base",
        "base_model": "tiny",
        "world": str(world_dir),
        "pretraining": data.describe(),
        "filtered": list(without),
        "replay": [str(p) for p in replay_files(world_dir) if p.is_file()],
        "seed": seed,
        "size": TINY_BASE,
        "finetune_defaults": TINY_FINETUNE_DEFAULTS,
    }
    return train_cached(
        root / "models" / key / ("filtered_base" if without else "base"),
        f"{name} (pretraining on {len(data.rows)} rows{' without ' + ', '.join(without) if without else ''})",
        lambda: build_base(world_dir, seed),
        data.rows,
        {**PRETRAIN_DEFAULTS, "seed": seed},
        provenance,
        log,
    )


def lab_training_rows(
    bench, split: str, base_dir: Path, replay: bool = True, replay_repeats: int = REPLAY_REPEATS
) -> tuple[list[dict], list[Path]]:
    """The rows a lab fine-tune of ``base_dir`` trains on (``split="all"``: the target, ``"retain"``: the
    oracle): the split's rows with their augmentation, and the base's replay corpus ``replay_repeats``
    times per epoch; with the replay files. A retrain that stands for the oracle (bench/robustness.py)
    must train on exactly these."""
    from unlearnkit.models import read_card
    from unlearnkit.train.finetune import training_rows
    from unlearnkit.train.pretrain import read_replay

    files = [Path(p) for p in read_card(str(base_dir)).get("replay", [])] if replay else []
    return training_rows(bench, split) + read_replay(files) * replay_repeats, files


def ensure_finetuned(
    root: Path,
    base_dir: Path,
    bench_dir: Path,
    split: str,
    seed: int,
    log,
    recipe: dict | None = None,
    replay: bool = True,
    progress: bool = True,
    dry_run: bool = False,
    replay_repeats: int = REPLAY_REPEATS,
) -> Path:
    """The base fine-tuned on ``bench_dir``'s forget + retain (``split="all"``: the target) or retain
    only (``"retain"``: the oracle). General knowledge is never fine-tuned on. ``dry_run``: the path
    its cache entry has, trained or not, and nothing done."""
    from unlearnkit.data.sources import resolve_data
    from unlearnkit.models import load
    from unlearnkit.pipelines.quickstart import tiny_unlearn_defaults
    from unlearnkit.train.finetune import SPLITS_FOR, augmentation_files

    recipe = recipe or TINY_FINETUNE
    bench = resolve_data(bench_dir)
    rows, replay = lab_training_rows(bench, split, base_dir, replay, replay_repeats)
    files = [bench_dir / f"{n}.jsonl" for n in SPLITS_FOR[split] if n != "general"]
    files += augmentation_files(bench, split)
    code = code_digest(TRAINING_CODE)
    key = digest(
        "finetune",
        recipe,
        split,
        seed,
        LAB_VERSION,
        code,
        replay_repeats,
        files=[*_weights(base_dir), *files, *replay],
    )
    role = "target" if split == "all" else "oracle"
    if dry_run:
        return root / "models" / key / role
    provenance = {
        "kind": "target" if split == "all" else "retain oracle",
        "base_model": str(base_dir),
        "data": str(bench_dir),
        "split": split,
        "trained_on": [n for n in SPLITS_FOR[split] if n != "general"],
        "augmentation": [str(p) for p in augmentation_files(bench, split)],
        "replay": [str(p) for p in replay],
        "replay_repeats": replay_repeats if replay else 0,
        "seed": seed,
        "unlearn_defaults": tiny_unlearn_defaults(recipe["max_length"]),
    }
    return train_cached(
        root / "models" / key / role,
        f"{role} (the base fine-tuned on {' + '.join(provenance['trained_on'])}{' + replay' if replay else ''}, "
        f"{len(rows)} rows)",
        lambda: load(str(base_dir)),
        rows,
        {**recipe, "seed": seed},
        provenance,
        log,
        progress=progress,
    )


def fine_tune_threads(available: int | None = None) -> int:
    """The intra-op threads each of a miniature's two fine-tunes (target, oracle) trains with: half of
    the threads this process may use, so that the two run side by side in :func:`ensure_pair`.

    Always this many, whether the pair trains together or one of them alone (the other cached): the
    weights depend on the threads a matmul is split over, so a fine-tune gets the same count every time
    on one machine and a cached model equals a retrained one.
    """
    import torch

    return max(1, (available or torch.get_num_threads()) // 2)


def _fine_tune_in_process(spec: dict, threads: int) -> tuple[Path, list[str]]:
    """One fine-tune of :func:`ensure_pair` in a worker process: its log lines are returned, not printed."""
    import torch

    torch.set_num_threads(threads)
    lines: list[str] = []
    return ensure_finetuned(**spec, log=lines.append, progress=False), lines


def ensure_pair(specs: Sequence[dict], log: Callable[[str], None]) -> list[Path]:
    """:func:`ensure_finetuned` of each spec (its keyword arguments but ``log``), each with
    :func:`fine_tune_threads` threads; those to be trained train side by side in worker processes when
    this process has two threads or more for them (measured on 2 cores: one thread each, the target and
    the oracle in 1.5x the time of one, where one after the other took 2x)."""
    import torch

    available = torch.get_num_threads()
    threads = fine_tune_threads(available)
    specs = [dict(spec, recipe=spec.get("recipe") or TINY_FINETUNE) for spec in specs]
    paths: list[Path | None] = [None] * len(specs)
    todo = []
    for i, spec in enumerate(specs):
        try:
            with shipped_only():  # from the cache or the shipped lab (logged), else trained below
                paths[i] = ensure_finetuned(**spec, log=log)
        except LabNotShipped:
            if _SHIPPED_ONLY:  # the caller's shipped_only: nothing is trained here either
                raise
            todo.append(i)
    if len(todo) > 1 and available >= 2:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        log(f"training {len(todo)} models side by side ({threads} thread{'s' * (threads > 1)} each) ...")
        # spawn: a fresh interpreter, no forked torch thread pools or tokenizer state
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=len(todo), mp_context=context) as pool:
            futures = {i: pool.submit(_fine_tune_in_process, specs[i], threads) for i in todo}
            for i in todo:
                paths[i], lines = futures[i].result()
                for line in lines:
                    log(line)
    else:
        torch.set_num_threads(threads)
        try:
            for i in todo:
                paths[i] = ensure_finetuned(**specs[i], log=log)
        finally:
            torch.set_num_threads(available)
    return [p for p in paths if p is not None]


def ensure_lab(
    benchmark: str, root: Path, world_params: dict, seed: int, log
) -> tuple[Path, Path, Path, Path]:
    """``(world, base, target, oracle)`` of one miniature, each from the cache or trained now."""
    if benchmark not in BENCHMARKS:
        raise ValueError(f"benchmark {benchmark!r}: use one of {', '.join(BENCHMARKS)}")
    world = ensure_world(root, {**world_params, "seed": seed})
    base = ensure_base(root, world, seed, log)
    if benchmark == "wmdp":
        return world, base, base, ensure_base(root, world, seed, log, without=("hazard",))
    data, extra = (
        (world, {}) if benchmark == "tofu" else (world / "muse", dict(recipe=MUSE_FINETUNE, replay=False))
    )
    common = dict(root=root, base_dir=base, bench_dir=data, seed=seed, **extra)
    target, oracle = ensure_pair([dict(common, split="all"), dict(common, split="retain")], log)
    return world, base, target, oracle

"""``unlearnkit.finetune``: train the target or the retain oracle from Python, as ``unlearnkit finetune``.

::

    target = finetune("base", data="bench")                   # forget + retain (+ the base's replay)
    oracle = finetune("base", data="bench", split="retain")   # what the target should become
    target.save("target")

The target learns the forget and retain splits (and the other wordings of their facts a benchmark folder
keeps in ``augment/``); the oracle learns the retain split only, so it never saw what is to be forgotten
(TOFU, Maini et al. 2024, section 2). A base made by ``unlearnkit pretrain`` records the recipe it is
fine-tuned with and the passages replayed to keep what it knew; ``"tiny"`` builds a ~1M Llama from
nothing, which then also learns the general split (it could not know it otherwise).

``unlearnkit finetune`` runs through the same steps as :func:`finetune`: :func:`plan` (the settings,
the replay files and the rows, before anything heavy is imported), :func:`prepare` (the tokenizer or
the tiny model, ``max_length``, every row's length and the notes on what is trained), :func:`train`
(placement, model, the base's general knowledge before, training, the record and how much was
learned). The command adds only what a folder on disk needs (checkpoints, ``--resume``, the output).
"""

from __future__ import annotations

import dataclasses
import shutil
import sys
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from unlearnkit.api.data import benchmark_of
from unlearnkit.api.errors import SAVE_FLAGS, python_errors, reworded
from unlearnkit.errors import ArgumentError, UserError

FLAGS = {"model": "model", "data": "data", "split": "split", "replay": "replay", "check-items": "check_items"}
SPLITS = ("all", "retain")


@dataclass
class TrainedModel:
    """A model trained by :func:`finetune` or :func:`~unlearnkit.api.pretrain.pretrain`: ``model``, its
    ``settings`` (every training setting), ``train_loss``, ``n_examples``, ``compute`` and ``learned``
    (how much of its data it states, None when not asked); ``save(path)`` writes it as the command does."""

    model: Any
    tokenizer: Any = field(repr=False)
    settings: dict[str, Any]
    train_loss: float
    n_examples: int
    compute: dict[str, Any]
    learned: Any = None
    provenance: dict[str, Any] = field(repr=False, default_factory=dict)
    log_history: list[dict] = field(repr=False, default_factory=list)

    def save(self, path: str | Path, overwrite: bool = False) -> Path:
        """Write the model folder: weights, tokenizer, ``unlearnkit.json`` (what it was trained from and
        on, settings, compute, what it learned, the recipes a tiny-scale model records), model card,
        training log and loss plot. Atomic; an existing non-empty ``path`` is refused unless
        ``overwrite``."""
        from unlearnkit.io import check_output_dir
        from unlearnkit.models import save_model
        from unlearnkit.report.curve import training_files

        with python_errors(SAVE_FLAGS):
            check_output_dir(str(path), overwrite)
            return save_model(
                self.model,
                self.tokenizer,
                path,
                self.provenance,
                overwrite=overwrite,
                files=training_files(self.log_history),
            )

    @classmethod
    def of(cls, result: Any, tokenizer: Any, learned: Any, provenance: dict[str, Any], **fields: Any):
        """The trained model from a training run's result (:func:`unlearnkit.train.finetune.finetune`)
        and the record built for it; ``fields``: the subclass's own."""
        return cls(
            model=result.model,
            tokenizer=tokenizer,
            settings=provenance["config"],
            train_loss=result.train_loss,
            n_examples=result.n_examples,
            compute=result.compute,
            learned=learned,
            provenance=provenance,
            log_history=list(getattr(result, "log_history", None) or []),
            **fields,
        )

    def report(self, flags: Mapping[str, str] | None = None) -> None:
        """How much it learned, then the warnings, on stderr (``flags``: the command's flags as keywords)."""
        if self.learned is None:
            return
        print(self.learned.line(), file=sys.stderr)
        for text in self.learned.warnings():  # worded for the command: its flags as keywords
            print(f"unlearnkit: warning: {reworded(text, flags)}", file=sys.stderr)


@dataclass
class FinetuneResult(TrainedModel):
    """The fine-tuned target (``split="all"``) or oracle (``"retain"``)."""

    split: str = "all"


@dataclass
class FinetunePlan:
    """A fine-tune whose settings and rows are decided: what :func:`plan` returns; :func:`prepare`
    adds the tokenizer (and the tiny model), the format and the final settings."""

    model_name: str  # "tiny", a folder, a hub id, or the folder a loaded model came from ("" if none)
    bench: Any
    data_name: str
    split: str
    seed: int
    user: dict[str, Any]  # the caller's settings (over the recorded or default recipe)
    values: dict[str, Any]  # every setting trained with, before max_length is fitted
    cfg: Any
    recorded: dict[str, Any] | None  # the recipe the base's card records
    replay: list[Path]
    replayed: list[dict]  # every replayed row, as many times as it is trained per epoch
    rows: list[dict]  # trained on: the split's rows (+ replayed)
    trained: list[dict]  # the split's rows alone (what "learned" asks)
    tokenizer: Any = None
    model: Any = None  # built by prepare() for "tiny"; a loaded model the caller passed
    fmt: Any = None
    augment: list[Path] = field(default_factory=list)
    replay_repeats: int = 1  # the replay's rows per epoch, each (the base's card records it)

    @property
    def from_scratch(self) -> bool:
        return self.model_name == "tiny"

    @property
    def splits(self) -> tuple[str, ...]:
        from unlearnkit.train.finetune import SPLITS_FOR

        return SPLITS_FOR[self.split]

    def files(self) -> dict[str, Path]:
        """The files the fine-tune reads (a resumed run must read the same: the command's fingerprint)."""
        root = Path(self.bench.path)
        files = {n: root / f"{n}.jsonl" for n in self.splits if (root / f"{n}.jsonl").is_file()}
        files.update({f"augment:{p}": p for p in self.augment})
        files.update({f"replay:{p}": p for p in self.replay})
        return files


def finetune(
    model: Any = "tiny",
    data: Any = None,
    *,
    tokenizer: Any = None,
    split: str = "all",
    replay: str | list[str | Path] = "auto",
    seed: int = 0,
    check_items: int = 100,
    device: str = "auto",
    dtype: str = "auto",
    trust_remote_code: bool = False,
    work_dir: str | Path | None = None,
    quiet: bool = False,
    **overrides: Any,
) -> FinetuneResult:
    """Fine-tune ``model`` on ``data``; returns a :class:`FinetuneResult`.

    ``model``: ``"tiny"`` (a ~1M Llama built from the benchmark's words and trained from nothing), a
    folder (``unlearnkit pretrain``'s base records its recipe and replay files) or hub id, or a loaded
    model with its ``tokenizer``. ``data``: a benchmark folder or name, a ``Benchmark``, or a dict of
    splits. ``split``: ``"all"`` (the target: forget + retain) or ``"retain"`` (the oracle).
    ``replay``: ``"auto"`` (what the base's card records), ``"none"`` or JSONL files mixed in to keep
    what the model knew. ``check_items``: after training, ask at most this many trained (and general)
    questions to say how much it learned and kept (0 skips it). ``overrides``: training settings
    (``lr``, ``epochs``, ``max_length`` ...: ``unlearnkit methods finetune``) over the recorded recipe,
    else the defaults of the model's kind, as the command.
    """
    from unlearnkit.api.unlearn import dtype_name, model_source, note

    if data is None:
        raise ArgumentError(
            "data: give the benchmark to fine-tune on (a folder, a name, or {'forget': rows, ...})"
        )
    if split not in SPLITS:
        raise ArgumentError(f"split={split!r}: use 'all' (the target) or 'retain' (the oracle)")
    if isinstance(check_items, bool) or not isinstance(check_items, int) or check_items < 0:
        raise ArgumentError(f"check_items={check_items!r}: must be an int >= 0 (0 skips the check)")
    loaded = not isinstance(model, (str, Path))
    if loaded:
        if not hasattr(model, "parameters"):
            raise ArgumentError(
                f"model: expected 'tiny', a model folder or a loaded model, got {type(model).__name__}"
            )
        if tokenizer is None:
            raise ArgumentError("tokenizer: needed with a loaded model (or pass the model's folder)")
    elif tokenizer is not None:
        raise ArgumentError(
            "tokenizer: only with a loaded model (a folder brings its own; 'tiny' trains one)"
        )
    if isinstance(replay, (list, tuple)):
        replay = ",".join(str(p) for p in replay) or "none"
    bench, data_name = benchmark_of(data, "data")
    name = (model_source(model, None) or "") if loaded else str(model)
    say = lambda message: note(reworded(message, FLAGS), quiet)  # noqa: E731
    with python_errors(FLAGS):
        from unlearnkit.models import check_model_path

        if not loaded and name != "tiny":
            check_model_path(name)
        job = plan(
            name,
            bench,
            data_name,
            split=split,
            replay=replay,
            seed=seed,
            user=dict(overrides),
            say=say,
            override_hint="a keyword (finetune(..., lr=1e-4))",
        )
        if loaded:
            job.model, job.tokenizer = model, tokenizer
        prepare(job, trust_remote_code=trust_remote_code, say=say)
        placement = resolve(job, device, dtype_name(model) if loaded and dtype == "auto" else dtype)
    temporary = work_dir is None
    work = Path(tempfile.mkdtemp(prefix="unlearnkit-finetune-")) if temporary else Path(work_dir)
    try:
        with python_errors(FLAGS):
            result = train(
                job,
                placement,
                work,
                check_items=check_items,
                trust_remote_code=trust_remote_code,
                progress=None if quiet else "fine-tuning",
            )
    finally:
        if temporary:
            shutil.rmtree(work, ignore_errors=True)
    if not quiet:
        result.report(FLAGS)
    return result


def plan(
    model_name: str,
    bench: Any,
    data_name: str,
    *,
    split: str,
    replay: str,
    seed: int,
    user: Mapping[str, Any],
    say: Callable[[str], None],
    override_hint: str = "--set KEY=VALUE",
) -> FinetunePlan:
    """``bench``: the benchmark, or a function that reads it (called once the replay files are checked).
    The settings (``user``'s over the recipe the base records, else the defaults of its kind: a model
    trained from nothing needs a far larger learning rate), the replay files and the rows; nothing heavy
    is imported, so a bad setting or file answers at once. Errors are :class:`UserError` in the
    command's words."""
    from unlearnkit.config import MethodConfig, build_configs
    from unlearnkit.models import read_card
    from unlearnkit.train.finetune import HF_DEFAULTS, TINY_DEFAULTS, augmentation_files, training_rows

    user = dict(user)
    check_settings(user, seed)
    from_scratch = model_name == "tiny"
    card = read_card(model_name) if model_name else {}
    recipes = card.get("finetune_defaults", {}) if isinstance(card, dict) else {}
    files = replay_paths(replay, card)
    bench = bench() if callable(bench) else bench
    recorded, source = recipes.get("train"), recipes.get("source", "a fine-tuning recipe")
    plain = bool(
        recorded and recipes.get("train_without_augmentation") and not augmentation_files(bench, split)
    )
    if plain:
        # the recipe was measured with each fact restated in other wordings (augment/): a folder of
        # question / answer rows alone needs as many passes over each fact, so more epochs
        recorded = recipes["train_without_augmentation"]
        source += " for a folder without augment/"
    defaults = TINY_DEFAULTS if from_scratch else (recorded or HF_DEFAULTS)
    values = dict(defaults, seed=seed)
    values.update(user)
    cfg, _ = build_configs(MethodConfig, values)
    if recorded:
        used = {k: v for k, v in recorded.items() if k not in user}
        say(
            f"{model_name} records {source}: "
            + ", ".join(f"{k}={v}" for k, v in used.items())
            + f"; {override_hint} overrides any of them"
        )
    # the replay the base records is trained this many times per epoch, as the lab fine-tunes a world
    # folder (its replay holds QA about other entities); measured on a folder without augment/, whose
    # replay is passages only, repeating it kept no more general knowledge (embedded.TINY_FINETUNE_PLAIN)
    auto = files and replay.strip() in ("", "auto") and not plain
    repeats = int(recipes.get("replay_repeats", 1)) if auto else 1
    rows = trained = training_rows(bench, split, from_scratch=from_scratch)
    replayed: list[dict] = []
    if files:
        from unlearnkit.train.pretrain import read_replay

        replayed = read_replay(files) * repeats
        rows = rows + replayed
    if not rows:
        raise UserError(f"--data {data_name}: no rows to fine-tune on for --split {split}")
    return FinetunePlan(
        model_name,
        bench,
        data_name,
        split,
        seed,
        user,
        values,
        cfg,
        recorded,
        files,
        replayed,
        rows,
        trained,
        replay_repeats=repeats,
    )


def check_settings(user: Mapping[str, Any], seed: int) -> None:
    """Every setting given is a training setting with a valid value (before any data is read)."""
    from unlearnkit.config import MethodConfig, build_configs

    build_configs(MethodConfig, dict(user, seed=seed))


def prepare(job: FinetunePlan, *, trust_remote_code: bool, say: Callable[[str], None]) -> FinetunePlan:
    """The tokenizer (and, for ``tiny``, the model built on the benchmark's words), the prompt format,
    ``max_length`` raised to the longest row when the model takes it, every row checked against it
    (answers are never cut), then the notes on what is trained besides the split."""
    from unlearnkit.config import MethodConfig, build_configs
    from unlearnkit.data.encode import PromptFormat
    from unlearnkit.models import load_tokenizer
    from unlearnkit.train.finetune import augmentation_files
    from unlearnkit.world.tiny import build_tiny

    bench = job.bench
    if job.from_scratch:
        job.model, job.tokenizer = build_tiny(bench, job.seed)
    elif job.tokenizer is None:
        job.tokenizer = load_tokenizer(job.model_name, trust_remote_code)
    job.fmt = PromptFormat.for_settings(job.tokenizer, job.cfg)  # system_prompt / date_string as set
    if "max_length" not in job.user:
        limit = model_limit(job.tokenizer, "tiny" if job.from_scratch else job.model_name, trust_remote_code)
        if job.model is not None and not job.from_scratch:  # a loaded model: its own limit too
            limit = _loaded_limit(job.model, limit)
        sized = fit_max_length(job.tokenizer, job.fmt, bench, job.splits, job.cfg.max_length, limit)
        if sized != job.cfg.max_length:
            say(
                f"max_length {sized} (the longest question + answer of the data; the default is "
                f"{job.cfg.max_length}); --set max_length=N to choose it"
            )
            job.values = {**job.values, "max_length": sized}
            job.cfg, _ = build_configs(MethodConfig, job.values)
    check_split_lengths(job.tokenizer, job.fmt, bench, job.splits, job.cfg.max_length)
    job.augment = augmentation_files(bench, job.split)
    if job.augment:
        say(
            f"also training on {', '.join(f'{p.parent.name}/{p.name}' for p in job.augment)} (the splits' "
            "facts in other wordings; evaluation and unlearning never read them)"
        )
    if job.replay:
        times = (
            f" {job.replay_repeats} times each per epoch, as it records," if job.replay_repeats > 1 else ""
        )
        say(
            f"replaying {len(job.replayed) // job.replay_repeats} rows of {', '.join(p.name for p in job.replay)}"
            f"{times} to keep what "
            f"{job.model_name or 'the model'} knew (--replay none to fine-tune on the benchmark alone)"
        )
    parts = getattr(bench, "general_parts", None)
    if job.from_scratch and bench.general:
        # A pretrained model brings real authors and world facts with it; a model trained from scratch
        # knows only what it is trained on, so without them TOFU's utility would be 0 by construction.
        what = " and ".join(parts) if parts else "general.jsonl"
        say(
            f"training the tiny model on {what} too ({len(bench.general)} rows): it starts from nothing, so "
            "its utility then measures keeping these facts, not general knowledge (pretrain a base with "
            "`unlearnkit pretrain` for the real setting)"
        )
    elif bench.general:
        say(
            f"general knowledge ({len(bench.general)} rows) is not fine-tuned on: it measures what the model kept"
        )
    return job


def resolve(job: FinetunePlan, device: str = "auto", dtype: str = "auto", asked_device: str | None = None):
    """Where the model trains and in what precision (``--device`` / ``--dtype``; the training precision
    ``auto`` resolves to is written back into the settings, as the record keeps it)."""
    from unlearnkit.config import MethodConfig, build_configs
    from unlearnkit.models import resolve_placement

    folder = None if job.from_scratch or not job.model_name else job.model_name
    placement = resolve_placement(folder, device, dtype, job.cfg.precision)
    if asked_device is not None:
        placement = dataclasses.replace(placement, asked_device=asked_device)
    job.values = {**job.values, "precision": placement.precision}
    job.cfg, _ = build_configs(MethodConfig, job.values)
    return placement


def train(
    job: FinetunePlan,
    placement: Any,
    work: Path,
    *,
    check_items: int,
    trust_remote_code: bool = False,
    resume: bool = False,
    resumed_from: str | None = None,
    progress: str | None = "fine-tuning",
) -> FinetuneResult:
    """Load (or cast) the model, ask a base the general questions it will be measured on, fine-tune it
    (:func:`unlearnkit.train.finetune.finetune`, checkpoints in ``work``), then build its record and
    ask how much it learned."""
    from unlearnkit.evaluation.learned import LearnedSettings, general_scores, measure_learned
    from unlearnkit.models import load_model, training_record
    from unlearnkit.train.finetune import finetune as run_training

    bench, cfg, tokenizer = job.bench, job.cfg, job.tokenizer
    if job.model is None:
        model = load_model(job.model_name, trust_remote_code, dtype=placement.torch_dtype)
    else:
        model = job.model.to(placement.torch_dtype)
    asked = LearnedSettings(max_items=check_items, seed=job.seed)
    # general knowledge is never fine-tuned on from a base: ask the base first, to say how much it kept
    general = [r for r in bench.general if "question" in r] if not job.from_scratch and check_items else []
    if general:
        model.to(placement.device)  # where the Trainer puts it anyway: never generate with a 7B on CPU
    base_general = general_scores(model, tokenizer, job.fmt, general, asked) if general else None
    result = run_training(model, tokenizer, job.rows, cfg, work, quiet=True, progress=progress, resume=resume)
    parts = getattr(bench, "general_parts", None)
    path = Path(job.model_name).expanduser() if job.model_name else None
    provenance = {
        "kind": "target" if job.split == "all" else "retain oracle",
        # a local folder as an absolute path; a hub id as it is (the card's base_model links it)
        "base_model": "tiny"
        if job.from_scratch
        else str(path.resolve())
        if path is not None and path.exists()
        else job.model_name or "a model in memory",
        "data": job.data_name,
        "split": job.split,
        "trained_on": sorted(
            {n for n in job.splits if bench.split(n) and (n != "general" or job.from_scratch)}
        ),
        "replay": [str(p.resolve()) for p in job.replay],
        **({"replay_repeats": job.replay_repeats} if job.replay_repeats > 1 else {}),
        "train_loss": result.train_loss,
        "compute": result.compute,  # the oracle's is the denominator of compute_fraction
        "config": vars(cfg),
        "placement": training_record(placement, cfg),
        **({"unlearn_defaults": _unlearn_defaults(job, cfg)} if job.from_scratch or job.recorded else {}),
        **({"trained_on_general_parts": sorted(parts)} if job.from_scratch and parts else {}),
    }
    if resumed_from is not None:
        provenance["resumed_from"] = resumed_from
    learned = None
    if check_items:
        learned = measure_learned(
            result.model, tokenizer, job.fmt, job.trained, asked, general, base_general, cfg.anchor_decay
        )
        provenance["learned"] = learned.as_dict()
    return FinetuneResult.of(result, tokenizer, learned, provenance, split=job.split)


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
    if model_name and model_name != "tiny":
        try:
            from transformers import AutoConfig

            config = AutoConfig.from_pretrained(model_name, trust_remote_code=trust_remote_code)
            if getattr(config, "max_position_embeddings", None):
                limits.append(int(config.max_position_embeddings))
        except Exception:  # noqa: BLE001 - no config limit known: the tokenizer's (or none) decides
            pass
    return min(limits) if limits else None


def _loaded_limit(model, limit: int | None) -> int | None:
    """``limit`` lowered to a loaded model's own ``max_position_embeddings``."""
    own = getattr(getattr(model, "config", None), "max_position_embeddings", None)
    if isinstance(own, int) and own > 0:
        return own if limit is None else min(limit, own)
    return limit


def fit_max_length(tokenizer, fmt, bench, splits, default: int, limit: int | None) -> int:
    """``default``, raised to the longest question + answer of ``splits`` when that still fits the model's
    ``limit`` (rounded up to a multiple of 8); past the limit the length check names the row."""
    from unlearnkit.data.sources import split_sources

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
    if limit is not None:
        wanted = min(wanted, limit) if longest <= limit else default
    return wanted


def check_split_lengths(tokenizer, fmt, bench, splits, max_length: int) -> None:
    """Every question + answer of ``splits`` fits ``max_length`` (answers are never cut): the first that
    does not is named by its file and line (``data['retain'][i]`` for rows given in Python)."""
    from unlearnkit.api.data import labelled_sources, row_label
    from unlearnkit.data.encode import check_lengths

    for name in splits:
        for rows, where in labelled_sources(bench, name):
            check_lengths(tokenizer, fmt, rows, where, max_length, label=row_label(where))


def _unlearn_defaults(job, cfg) -> dict:
    """The unlearning recipe a fine-tuned model records: its base's own when the base records one other
    than the tiny lab's (a converted small checkpoint, unlearnkit.gguf_models), else the tiny recipe
    at this fine-tune's length."""
    from unlearnkit.models import recorded_defaults
    from unlearnkit.pipelines.quickstart import tiny_unlearn_defaults

    tiny = tiny_unlearn_defaults(cfg.max_length)
    base = recorded_defaults(job.model_name) if job.model_name and not job.from_scratch else {}
    return base if base and base.get("source") != tiny["source"] else tiny

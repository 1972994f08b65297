"""``unlearnkit.pretrain``: a world's base model from its corpus, as ``unlearnkit pretrain``.

::

    base = pretrain("world")                          # a tiny Llama on the world's corpus and QA
    filtered = pretrain("world", without=("hazard",))  # the data-filtering oracle (WMDP-like)
    base.save("base")

The base is what the benchmark's knowledge is later fine-tuned into (TOFU's and MUSE's setting): it
knows the world's general facts before the target or the oracle is made from it, so model utility
measures knowledge kept rather than knowledge learned alongside the forget set. Its card records the
fine-tuning recipe and the passages to replay (``finetune(..., replay="auto")`` reads both).

``unlearnkit pretrain`` runs through the same steps as :func:`pretrain`: :func:`plan` (settings, the
tiny shape, the corpus and its files, before anything heavy is imported) and :func:`train` (placement,
the model built or loaded, training, the record and how much was learned).
"""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from unlearnkit.api.errors import python_errors
from unlearnkit.api.finetune import TrainedModel
from unlearnkit.errors import ArgumentError, UserError

FLAGS = {"data": "data", "model": "model", "without": "without", "check-items": "check_items"}
SIZE_KEYS = ("hidden", "layers", "heads")  # the tiny base's shape (model="tiny" only)


@dataclass
class PretrainResult(TrainedModel):
    """The base (or, with ``without``, its data-filtered twin)."""

    without: tuple[str, ...] = ()


@dataclass
class PretrainPlan:
    """A pretraining run whose settings and data are decided: what :func:`plan` returns."""

    world: str
    model_name: str  # "tiny" or a folder / hub id to continue
    without: tuple[str, ...]
    seed: int
    size: dict[str, int]  # the tiny shape asked for (over TINY_BASE)
    cfg: Any
    data: Any  # train.pretrain.PretrainingData

    @property
    def tiny(self) -> bool:
        return self.model_name == "tiny"

    def files(self) -> dict[str, Path]:
        """The files pretraining reads (a resumed run must read the same: the command's fingerprint)."""
        from unlearnkit.train.pretrain import corpus_layout

        parts, qa_files = corpus_layout(self.world)
        return {**{f"corpus/{n}": p for n, p in parts.items()}, **{q.stem: q for q in qa_files}}


def pretrain(
    data: str | Path,
    *,
    model: str = "tiny",
    without: Sequence[str] = (),
    seed: int = 0,
    check_items: int = 100,
    device: str = "auto",
    dtype: str = "auto",
    trust_remote_code: bool = False,
    work_dir: str | Path | None = None,
    quiet: bool = False,
    **overrides: Any,
) -> PretrainResult:
    """Pretrain a base on the world folder ``data`` (``unlearnkit world`` writes one; a folder of one's
    own with ``corpus/*.jsonl`` works too); returns a :class:`PretrainResult`.

    ``model``: ``"tiny"`` (a fresh tiny Llama on the world's tokenizer; ``hidden``, ``layers``, ``heads``
    set its shape) or a folder / hub id to continue. ``without``: corpus parts to leave out (``hazard``:
    the WMDP-like data-filtering oracle). ``overrides``: training settings (``lr``, ``epochs`` ...) over
    the pretraining defaults. ``check_items``: afterwards, ask at most this many trained questions and
    passages to say how much it learned (0 skips it).
    """
    from unlearnkit.api.unlearn import note

    if isinstance(without, str):
        without = tuple(w.strip() for w in without.split(",") if w.strip())
    if isinstance(check_items, bool) or not isinstance(check_items, int) or check_items < 0:
        raise ArgumentError(f"check_items={check_items!r}: must be an int >= 0 (0 skips the check)")
    if not isinstance(model, (str, Path)):
        raise ArgumentError(
            f"model: 'tiny' or a model folder / hub id to continue, got {type(model).__name__}"
        )
    with python_errors(FLAGS):
        from unlearnkit.models import check_model_path

        job = plan(str(data), str(model), tuple(without), seed, dict(overrides), check=check_model_path)
        placement = resolve(job, device, dtype)
    temporary = work_dir is None
    work = Path(tempfile.mkdtemp(prefix="unlearnkit-pretrain-")) if temporary else Path(work_dir)
    try:
        with python_errors(FLAGS):
            result = train(
                job,
                placement,
                work,
                check_items=check_items,
                trust_remote_code=trust_remote_code,
                say=lambda m: note(m, quiet),
            )
    finally:
        if temporary:
            shutil.rmtree(work, ignore_errors=True)
    if not quiet:
        result.report(FLAGS)
    return result


def plan(
    world: str,
    model_name: str,
    without: tuple[str, ...],
    seed: int,
    values: Mapping[str, Any],
    check: Callable[[str], None] | None = None,
    before_data: Callable[[], None] | None = None,
) -> PretrainPlan:
    """Settings (``values`` over :data:`~unlearnkit.train.pretrain.PRETRAIN_DEFAULTS`; the tiny shape
    keys apart), ``before_data`` (the command checks its output folder there), the world folder and, when
    ``model_name`` is a folder, ``check`` on it, then the corpus minus ``without``. Nothing heavy is imported. Errors are :class:`UserError` in the command's words."""
    from unlearnkit.config import MethodConfig, build_configs

    values = dict(values)
    tiny = model_name == "tiny"
    size = {k: values.pop(k) for k in SIZE_KEYS if k in values}
    if size and not tiny:
        raise UserError(f"--set {', '.join(size)}: the shape keys are for --model tiny only")
    for key, value in size.items():
        if not str(value).isdigit() or int(value) < 1:
            raise UserError(f"--set {key}={value}: must be a positive integer")
    size = {k: int(v) for k, v in size.items()}
    build_configs(MethodConfig, dict(values, seed=seed))  # a bad key answers before any import
    if before_data is not None:
        before_data()
    if not Path(world).is_dir():
        raise UserError(f"--data {world} is not a folder (a world written by `unlearnkit world`)")
    if not tiny and check is not None:
        check(model_name)

    from unlearnkit.train.pretrain import PRETRAIN_DEFAULTS, pretraining_data

    data = pretraining_data(world, without)
    cfg, _ = build_configs(MethodConfig, {**PRETRAIN_DEFAULTS, **values, "seed": seed})
    if tiny and cfg.max_length > 256:
        raise UserError(
            f"max_length {cfg.max_length}: the tiny base has 256 positions; use --set max_length=256"
        )
    return PretrainPlan(world, model_name, without, seed, size, cfg, data)


def resolve(job: PretrainPlan, device: str = "auto", dtype: str = "auto", asked_device: str | None = None):
    """Where the base trains and in what precision (the training precision ``auto`` resolves to is
    written back into the settings, as the record keeps it)."""
    from unlearnkit.models import resolve_placement

    placement = resolve_placement(None if job.tiny else job.model_name, device, dtype, job.cfg.precision)
    if asked_device is not None:
        placement = dataclasses.replace(placement, asked_device=asked_device)
    job.cfg = dataclasses.replace(job.cfg, precision=placement.precision)
    return placement


def train(
    job: PretrainPlan,
    placement: Any,
    work: Path,
    *,
    check_items: int,
    trust_remote_code: bool = False,
    resume: bool = False,
    resumed_from: str | None = None,
    say: Callable[[str], None] = print,
    announce: Callable[[], None] | None = None,
) -> PretrainResult:
    """Build the tiny base on the world's tokenizer (or load ``model_name``), pretrain it on the corpus
    (checkpoints in ``work``), then its record: the corpus, what fine-tuning from it replays and, for a
    tiny base, the fine-tuning recipe measured on the embedded world. ``announce``: called once the
    model is ready (the command prints the placement there)."""
    from unlearnkit.data.encode import PromptFormat
    from unlearnkit.evaluation.learned import LearnedSettings, measure_learned
    from unlearnkit.models import load_model, load_tokenizer, training_record
    from unlearnkit.pipelines.embedded import TINY_FINETUNE_DEFAULTS
    from unlearnkit.train.finetune import finetune as run_training
    from unlearnkit.train.pretrain import TINY_BASE, build_base, replay_files

    cfg, data = job.cfg, job.data
    if job.tiny:
        model, tokenizer = build_base(job.world, job.seed, job.size)
        model = model.to(placement.torch_dtype)
    else:
        tokenizer = load_tokenizer(job.model_name, trust_remote_code)
        model = load_model(job.model_name, trust_remote_code, dtype=placement.torch_dtype)
    if announce is not None:
        announce()
    what = f" without {', '.join(job.without)}" if job.without else ""
    say(
        f"pretraining on {len(data.rows)} rows{what} ("
        + ", ".join(f"{k} {v}" for k, v in data.parts.items())
        + ")"
    )
    result = run_training(
        model, tokenizer, data.rows, cfg, work, quiet=True, progress="pretraining", resume=resume
    )
    learned = None
    if check_items:
        asked = LearnedSettings(max_items=check_items, seed=job.seed)
        fmt = PromptFormat.for_settings(tokenizer, cfg)
        learned = measure_learned(result.model, tokenizer, fmt, data.rows, asked)
    provenance = {
        "kind": "base",
        "base_model": job.model_name,
        "world": str(Path(job.world).resolve()),
        "pretraining": data.describe(),
        "filtered": list(job.without),
        # what fine-tuning from this base replays (finetune --replay auto): never the evaluated questions
        "replay": [str(p.resolve()) for p in replay_files(job.world, job.without) if p.is_file()],
        # a tiny base is fine-tuned at its own scale (finetune reads this): the lab's measured recipe
        **({"finetune_defaults": TINY_FINETUNE_DEFAULTS} if job.tiny else {}),
        "seed": job.seed,
        "train_loss": result.train_loss,
        "compute": result.compute,  # the data-filtering oracle's is the WMDP-like compute denominator
        "config": vars(cfg),
        "placement": training_record(placement, cfg),
        **({"size": {**TINY_BASE, **job.size}} if job.tiny else {}),
    }
    if resumed_from is not None:
        provenance["resumed_from"] = resumed_from
    if learned is not None:
        provenance["learned"] = learned.as_dict()
    return PretrainResult.of(result, tokenizer, learned, provenance, without=job.without)

"""``unlearnkit.distill``: UNDO from Python (Lee et al., arXiv 2506.06278), as ``unlearnkit distill``.

::

    student = distill(unlearned, data="bench", noise=1.0, distill_on="retain,corpus")
    student.save("npo_undo")

The unlearned model is the teacher; a student starts from its weights shrunk toward a noise target
(``noise_toward``: ``base``, the pretrained base its model cards lead to, or ``init``, a fresh
initialisation) and learns the teacher's output distributions (:mod:`unlearnkit.train.distill`).

``unlearnkit distill`` runs through the same steps as :func:`distill`: :func:`check_whole_student` and
:func:`distill_text_files` (the settings and data, before any model is loaded), :func:`make_ready` (the
tokenizer, the base's match with it, every row's length, the placement, the loaded teacher) and
:func:`train_ready` (the distillation and the record the student's folder keeps). Each front checks
only its own arguments first; the shared steps raise :class:`~unlearnkit.errors.UserError` in the
command's words, which :func:`~unlearnkit.api.errors.python_errors` rewords as keywords.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from unlearnkit.api.data import benchmark_of, labelled_sources, row_label
from unlearnkit.api.errors import SAVE_FLAGS, python_errors, reworded
from unlearnkit.errors import ArgumentError, UserError

FLAGS = {
    "teacher": "teacher",
    "base": "base",
    "noise-toward": "noise_toward",
    "noise": "noise",
    "data": "data",
}


@dataclass
class DistillResult:
    """The student: ``model``, its ``settings`` (noise, target, every training setting), ``steps``,
    ``train_loss`` and ``compute``; ``save(path)`` writes it as ``unlearnkit distill`` does."""

    model: Any
    tokenizer: Any = field(repr=False)
    settings: dict[str, Any]
    steps: int
    train_loss: float
    compute: dict[str, Any]
    provenance: dict[str, Any] = field(repr=False, default_factory=dict)
    log_history: list[dict] = field(repr=False, default_factory=list)

    def save(self, path: str | Path, overwrite: bool = False) -> Path:
        """Write the student's folder: weights, tokenizer, ``unlearnkit.json`` (teacher, noise, target,
        compute with the teacher's), model card, training log and loss plot. Atomic; an existing
        non-empty ``path`` is refused unless ``overwrite``."""
        from unlearnkit.pipelines.model_outputs import save_distilled

        with python_errors(SAVE_FLAGS):
            return save_distilled(self, self.tokenizer, path, self.provenance, overwrite=overwrite)


def distill(
    teacher: Any,
    tokenizer: Any = None,
    data: Any = None,
    *,
    noise: float = 1.0,
    noise_toward: str | None = None,
    base: Any = None,
    trust_remote_code: bool = False,
    work_dir: str | Path | None = None,
    quiet: bool = False,
    **overrides: Any,
) -> DistillResult:
    """Distill ``teacher`` (an unlearned model) into a noised copy of itself; returns a :class:`DistillResult`.

    ``teacher``: an :class:`UnlearnResult`, a model folder, or a loaded model (with ``tokenizer``).
    ``data``: the benchmark whose retain / general questions it is distilled on (a folder, a name, a
    ``Benchmark`` or a dict of splits; ``distill_on=corpus`` reads the world folder's corpus).
    ``noise``: alpha in [0, 1] (0 = the teacher's weights, 1 = the noise target itself).
    ``noise_toward``: ``"base"`` or ``"init"``; None (the default) = the base when ``base`` is given or
    the teacher's model cards lead to one (the teacher's folder, or an ``UnlearnResult``'s source
    model), else a fresh init. ``base``: the base model (folder, or a loaded model).
    ``overrides``: ``unlearnkit methods distill`` settings (``lr``, ``epochs``, ``distill_on``,
    ``retain_nll_weight``, ``stop_epochs`` ...); defaults by model size and noise target, as the command.
    """
    from unlearnkit.api.unlearn import dtype_name
    from unlearnkit.pipelines.model_outputs import teacher_cost
    from unlearnkit.pipelines.unlearn import UnlearnResult

    if data is None:
        raise ArgumentError(
            "data: give the benchmark to distill on (a folder, a name, or {'retain': rows, ...})"
        )
    if not isinstance(noise, (int, float)) or isinstance(noise, bool) or not 0.0 <= float(noise) <= 1.0:
        raise ArgumentError(
            f"noise={noise!r}: must be in [0, 1] (0 = start from the teacher, 1 = the noise target)"
        )
    if noise_toward not in (None, "init", "base"):
        raise ArgumentError(
            f"noise_toward={noise_toward!r}: use 'init', 'base' or None (decided from the cards)"
        )
    folder, made_from, upstream = _teacher_source(teacher)
    if isinstance(teacher, UnlearnResult):
        tokenizer = teacher.tokenizer if tokenizer is None else tokenizer
        teacher = teacher.model
    bench, data_name = benchmark_of(data, "data")
    toward, base_model, base_name, line = _noise_target(folder, noise_toward, base)
    with python_errors(FLAGS):
        from unlearnkit.config import DistillConfig, build_configs

        values = dict(overrides)
        train_cfg, cfg = build_configs(DistillConfig, values, caller="distill()")
        check_whole_student(train_cfg)
        distill_text_files(bench, cfg, data_name, data if isinstance(data, (str, Path)) else bench.path)
        _check_teacher(teacher, tokenizer)
        ready = make_ready(
            teacher,
            tokenizer,
            values,
            bench,
            folder=folder,
            base=base_name,
            line=line,
            dtype="auto" if isinstance(teacher, (str, Path)) else dtype_name(teacher),
            trust_remote_code=trust_remote_code,
            quiet=quiet,
        )
    temporary = work_dir is None
    work = Path(tempfile.mkdtemp(prefix="unlearnkit-distill-")) if temporary else Path(work_dir)
    try:
        with python_errors(FLAGS):
            result, provenance = train_ready(
                ready,
                bench,
                noise=float(noise),
                toward=toward,
                base=base_model,
                work=work,
                progress=None if quiet else f"distilling (UNDO, noise {float(noise):g} toward {toward})",
                quiet=quiet,
                record={
                    "teacher": made_from,
                    "data": data_name,
                    "base": base_name,
                    "teacher_cost": upstream if upstream is not None else teacher_cost(folder),
                },
            )
    finally:
        if temporary:
            shutil.rmtree(work, ignore_errors=True)
    return DistillResult(
        model=result.model,
        tokenizer=ready.tokenizer,
        settings=result.settings,
        steps=result.steps,
        train_loss=result.train_loss,
        compute=provenance["compute"],
        provenance=provenance,
        log_history=result.log_history,
    )


def check_whole_student(train_cfg) -> None:
    """UNDO trains every weight of the student (it starts from noised weights): no LoRA."""
    if train_cfg.lora_r > 0 or train_cfg.reference == "adapter":
        raise UserError("distill trains the whole student: remove lora_r / reference=adapter")


def qa_splits(cfg) -> list[str]:
    """The benchmark splits ``distill_on`` names (``corpus`` and ``text`` are raw-text files)."""
    return [name for name in cfg.splits() if name not in ("corpus", "text")]


def distill_text_files(bench, cfg, data: str, folder) -> dict[str, Path]:
    """The raw-text files ``distill_on`` names (each checked: it exists, rows of non-empty text); an
    error when every part to distill on is empty. ``folder``: where the benchmark was read from (the
    world's ``corpus/`` is found from it)."""
    from unlearnkit.train.distill_inputs import text_files

    empty = [name for name in qa_splits(cfg) if not bench.split(name)]
    texts = text_files(folder, cfg)
    if len(empty) == len(cfg.splits()):
        raise UserError(f"--data {data}: the splits to distill on ({cfg.distill_on}) are all empty")
    return texts


@dataclass
class ReadyDistill:
    """A distillation whose inputs are all checked, with its teacher placed and loaded: what
    :func:`make_ready` returns and :func:`train_ready` trains."""

    teacher: Any
    tokenizer: Any
    values: dict[str, Any]  # the settings trained with (the training precision resolved)
    train_config: Any
    placement: Any
    trust_remote_code: bool = False  # for the base, read only when the noise needs it


def make_ready(
    teacher: Any,
    tokenizer: Any,
    values: dict[str, Any],
    bench,
    *,
    folder: str | None,
    base: str | None,
    line: str,
    device: str = "auto",
    dtype: str = "auto",
    asked_device: str | None = None,
    trust_remote_code: bool = False,
    quiet: bool = False,
) -> ReadyDistill:
    """Everything before distilling that can still fail on bad input, cheapest first: the tokenizer
    (``folder``'s when none is given), the base folder's match with it, every question / answer row
    distilled on against ``max_length``, then ``line`` (the noise target, on stderr unless ``quiet``),
    the placement and training precision, and the teacher (loaded when it is a folder)."""
    import dataclasses

    from unlearnkit.config import DistillConfig, build_configs
    from unlearnkit.data.encode import PromptFormat, check_lengths
    from unlearnkit.models import load_model, load_tokenizer, resolve_placement
    from unlearnkit.train.distill_inputs import check_base_folder

    if tokenizer is None:
        tokenizer = load_tokenizer(folder, trust_remote_code)
    if base is not None and folder is not None:
        check_base_folder(folder, base, tokenizer, trust_remote_code)
    train_cfg, cfg = build_configs(DistillConfig, values)
    fmt = PromptFormat.for_settings(tokenizer, train_cfg)
    for name in qa_splits(cfg):
        for rows, where in labelled_sources(bench, name):
            check_lengths(tokenizer, fmt, rows, where, train_cfg.max_length, label=row_label(where))
    if not quiet:
        print(f"unlearnkit: note: {line}", file=sys.stderr)
    placement = resolve_placement(
        str(teacher) if isinstance(teacher, (str, Path)) else None, device, dtype, train_cfg.precision
    )
    if asked_device is not None:
        placement = dataclasses.replace(placement, asked_device=asked_device)
    values = {**values, "precision": placement.precision}  # what auto resolved to, as the card records
    train_cfg, _ = build_configs(DistillConfig, values)
    if isinstance(teacher, (str, Path)):
        teacher = load_model(str(teacher), trust_remote_code, dtype=placement.torch_dtype)
    return ReadyDistill(teacher, tokenizer, values, train_cfg, placement, trust_remote_code)


def train_ready(
    ready: ReadyDistill,
    bench,
    *,
    noise: float,
    toward: str,
    base: Any,
    work: Path,
    record: dict[str, Any],
    resumed_from: Path | None = None,
    progress: str | None = None,
    quiet: bool = False,
):
    """Distill ``ready`` (:func:`unlearnkit.train.distill.distill`, checkpoints in ``work``); returns the
    training result and the student's ``unlearnkit.json`` record (``record``: its ``teacher``, ``data``,
    ``base`` and ``teacher_cost``). ``base``: the model to noise toward, loaded or a folder (read only
    when the noise needs it), or None for a fresh init."""
    from unlearnkit.models import load_model, training_record
    from unlearnkit.pipelines.model_outputs import distill_provenance
    from unlearnkit.train import distill as training  # looked up now: tests stand in for distill()

    if isinstance(base, (str, Path)):
        folder, trust = str(base), ready.trust_remote_code
        base = lambda: load_model(folder, trust, dtype=ready.placement.torch_dtype)  # noqa: E731
    result = training.distill(
        ready.teacher,
        ready.tokenizer,
        bench,
        noise=noise,
        noise_toward=toward,
        base=base,
        overrides=ready.values,
        work_dir=work,
        resume_from=resumed_from,
        quiet=quiet,
        progress=progress,
    )
    provenance = distill_provenance(
        result,
        noise=noise,
        placement=training_record(ready.placement, ready.train_config),
        resumed_from=resumed_from.name if resumed_from is not None else None,
        **record,
    )
    return result, provenance


def _teacher_source(teacher) -> tuple[str | None, str | None, int | None]:
    """``(folder whose cards lead to the base, the teacher as the card names it, the teacher's cost if
    known in memory)``."""
    from unlearnkit.pipelines.unlearn import UnlearnResult

    if isinstance(teacher, (str, Path)):
        return str(teacher), str(teacher), None
    if isinstance(teacher, UnlearnResult):
        compute = teacher.compute or {}
        return (
            (teacher.source or {}).get("model"),
            None,
            int(compute.get("total_cost", compute.get("cost", 0))),
        )
    name = getattr(teacher, "name_or_path", None)
    if isinstance(name, str) and (Path(name).expanduser() / "config.json").is_file():
        return name, name, None
    return None, None, None


def _noise_target(folder: str | None, noise_toward: str | None, base: Any):
    """``(init | base, the base (model or folder) or None, the base's name for the card, the line)``."""
    if base is not None and not isinstance(base, (str, Path)):  # a loaded base model
        if noise_toward == "init":
            raise ArgumentError(
                "base is given but noise_toward='init': drop base, or use noise_toward='base'"
            )
        return "base", base, None, "noise toward the base model given (base=)"
    if folder is None:
        if base is not None:
            return "base", str(base), str(base), f"noise toward the base {base} (base=)"
        if noise_toward == "base":
            raise ArgumentError(
                "noise_toward='base': the teacher is a model in memory whose cards name no base; pass base="
            )
        return (
            "init",
            None,
            None,
            "noise toward a fresh initialisation (the teacher has no folder whose cards name a base)",
        )
    from unlearnkit.train.distill_inputs import noise_target

    with python_errors(FLAGS):
        toward, found, line = noise_target(folder, noise_toward, None if base is None else str(base))
    return toward, found, found, reworded(line, FLAGS)


def _check_teacher(teacher, tokenizer) -> None:
    """``teacher`` is a folder that exists (or a hub id) or a loaded model with its tokenizer."""
    from unlearnkit.models import check_model_path

    if isinstance(teacher, (str, Path)):
        check_model_path(str(teacher), flag="teacher")
        return
    if not hasattr(teacher, "parameters"):
        raise ArgumentError(
            f"teacher: expected a model, a model folder or an UnlearnResult, got {type(teacher).__name__}"
        )
    if tokenizer is None:
        raise ArgumentError("tokenizer: needed with a loaded teacher (or pass the teacher's folder)")

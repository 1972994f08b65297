"""``unlearnkit.distill``: UNDO from Python (Lee et al., arXiv 2506.06278), as ``unlearnkit distill``.

::

    student = distill(unlearned, data="bench", noise=1.0, distill_on="retain,corpus")
    student.save("npo_undo")

The unlearned model is the teacher; a student starts from its weights shrunk toward a noise target
(``noise_toward``: ``base``, the pretrained base its model cards lead to, or ``init``, a fresh
initialisation) and learns the teacher's output distributions (:mod:`unlearnkit.train.distill`). The
noise target and the training defaults are decided by the functions the command uses.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from unlearnkit.api.data import benchmark_of
from unlearnkit.api.errors import SAVE_FLAGS, python_errors, reworded
from unlearnkit.errors import ArgumentError

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
    from unlearnkit.pipelines.model_outputs import distill_provenance, teacher_cost
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
        from unlearnkit.models import training_record
        from unlearnkit.train.distill_inputs import check_base_folder, text_files

        values = dict(overrides)
        train_cfg, cfg = build_configs(DistillConfig, values, caller="distill()")
        text_files(data if isinstance(data, (str, Path)) else bench.path, cfg)
        model, tokenizer, placement = _loaded(teacher, tokenizer, train_cfg.precision, trust_remote_code)
        values["precision"] = placement.precision  # what auto resolved to, as the command records it
        train_cfg, _ = build_configs(DistillConfig, values, caller="distill()")
        if base_name is not None and folder is not None:
            check_base_folder(folder, base_name, tokenizer, trust_remote_code)
        if isinstance(base_model, (str, Path)):
            from unlearnkit.models import load_model

            base_model = load_model(str(base_model), trust_remote_code, dtype=placement.torch_dtype)
    if not quiet:
        print(f"unlearnkit: note: {line}", file=sys.stderr)
    temporary = work_dir is None
    work = Path(tempfile.mkdtemp(prefix="unlearnkit-distill-")) if temporary else Path(work_dir)
    try:
        from unlearnkit.train.distill import distill as run_distill

        with python_errors(FLAGS):
            result = run_distill(
                model,
                tokenizer,
                bench,
                noise=float(noise),
                noise_toward=toward,
                base=base_model,
                overrides=values,
                work_dir=work,
                quiet=quiet,
                progress=None if quiet else f"distilling (UNDO, noise {float(noise):g} toward {toward})",
            )
    finally:
        if temporary:
            shutil.rmtree(work, ignore_errors=True)
    provenance = distill_provenance(
        result,
        teacher=made_from,
        data=data_name,
        noise=float(noise),
        base=base_name,
        teacher_cost=upstream if upstream is not None else teacher_cost(folder),
        placement=training_record(placement, train_cfg),
    )
    return DistillResult(
        model=result.model,
        tokenizer=tokenizer,
        settings=result.settings,
        steps=result.steps,
        train_loss=result.train_loss,
        compute=provenance["compute"],
        provenance=provenance,
        log_history=result.log_history,
    )


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


def _loaded(teacher, tokenizer, precision: str, trust_remote_code: bool):
    """The teacher and its tokenizer (a folder loaded as the command loads it) and their placement."""
    from unlearnkit.models import check_model_path, load, resolve_placement

    if isinstance(teacher, (str, Path)):
        check_model_path(str(teacher), flag="teacher")
        placement = resolve_placement(str(teacher), "auto", "auto", precision)
        model, own = load(str(teacher), trust_remote_code, dtype=placement.torch_dtype)
        return model, tokenizer if tokenizer is not None else own, placement
    if not hasattr(teacher, "parameters"):
        raise ArgumentError(
            f"teacher: expected a model, a model folder or an UnlearnResult, got {type(teacher).__name__}"
        )
    if tokenizer is None:
        raise ArgumentError("tokenizer: needed with a loaded teacher (or pass the teacher's folder)")
    from unlearnkit.api.unlearn import dtype_name

    return teacher, tokenizer, resolve_placement(None, "auto", dtype_name(teacher), precision)

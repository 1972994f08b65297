"""What an unlearned model's folder holds besides its weights: ``unlearnkit.json`` (how it was made), the
model card, the training log and loss plot, the ``--eval-every`` curve and TokenUnlearn's attribution.

One writer for ``unlearnkit unlearn`` and :meth:`UnlearnResult.save` (the Python API), so a model
unlearned from a notebook carries the same record as one from the command line, written the same way
(atomically: a temporary sibling folder renamed when complete; an existing non-empty folder is refused
unless overwriting).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from unlearnkit.errors import UserError


def attribution_files(folder: str | Path | None) -> dict[str, bytes]:
    """The TokenUnlearn scores and heatmap a run wrote to ``folder``, as ``attribution/...`` files of the
    model folder (read into memory: the run's work folder is gone by the time the model is saved)."""
    if folder is None or not Path(folder).is_dir():
        return {}
    root = Path(folder)
    return {
        f"attribution/{p.relative_to(root).as_posix()}": p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def layers_used(model, method_cfg) -> dict:
    """The decoder layers a layer setting really meant (``layers=''`` is every layer, not none)."""
    n = getattr(getattr(model, "config", None), "num_hidden_layers", None)
    used = {}
    for key, resolve in (("layers", "layer_list"), ("train_layers", "train_layer_list")):
        if hasattr(method_cfg, resolve):
            chosen = getattr(method_cfg, resolve)()
            used[f"{key}_used"] = chosen if chosen is not None else (list(range(n)) if n else "all")
    return used


def unlearn_provenance(result) -> dict[str, Any]:
    """``unlearnkit.json`` of an unlearned model: where it came from, the method and its paper, every
    setting, the prompt format, the placement, what the reference resolved to, the collapse guard's and
    the evaluation curve's records, and the source's recorded scale defaults (an unlearned tiny model is
    still a tiny model: a second ``unlearn`` on it starts from the same recipe)."""
    from unlearnkit.config import config_dict
    from unlearnkit.data.encode import PromptFormat
    from unlearnkit.models import recorded_defaults
    from unlearnkit.train.methods import get_method

    train_cfg, method_cfg, tokenizer = result.train_config, result.method_config, result.tokenizer
    source = result.source or {}
    method = get_method(result.method)
    fmt = PromptFormat.for_settings(tokenizer, train_cfg)
    provenance: dict[str, Any] = {
        "kind": f"unlearned ({method.name})",
        "base_model": source.get("model"),
        "data": source.get("data"),
        "method": method.name,
        "paper": method.paper,
        "train_loss": result.train_loss,
        "compute": result.compute,  # unlearnkit.train.compute: tokens x passes, seconds (resumes included)
        "config": config_dict(train_cfg, method_cfg),
        "prompt_format": fmt.kind,
        # what system_prompt="auto" resolved to, and the date (chat templates): the prompts trained on
        "prompt": fmt.describe(),
    }
    if source.get("placement") is not None:
        provenance["placement"] = source["placement"]
    if result.reference:
        provenance["reference_used"] = result.reference  # what reference=auto resolved to, and why
    if result.collapse_guard:
        provenance["collapse_guard"] = result.collapse_guard  # unlearnkit.train.collapse_guard
    if result.backward:
        provenance["backward"] = result.backward  # the forget part's gradient before the retain pass?
    plan = result.eval_plan
    if plan is not None and result.evaluation:
        from unlearnkit.train.evaluation_callback import card_curve

        provenance["evaluation_during_training"] = result.evaluation
        provenance["eval_curve"] = card_curve(plan, result.eval_curve)  # every metric: curve.json
        if result.best:
            provenance["keep_best"] = result.best
    provenance.update(layers_used(result.model, method_cfg))
    if source.get("resumed_from") is not None:
        provenance["resumed_from"] = source["resumed_from"]
    if source.get("tau_search") is not None:  # tau=auto: every teacher setting measured, and the rule
        provenance["tau_search"] = source["tau_search"]
    model = source.get("defaults_from", source.get("model"))  # the folder whose recipe the run used
    if model is not None and recorded_defaults(model):
        provenance["unlearn_defaults"] = recorded_defaults(model)
    return provenance


def unlearn_files(result) -> dict[str, bytes]:
    """The files saved beside the weights: ``curve.json`` / ``curve.png`` (evaluation during training),
    ``log_history.json`` / ``loss.png`` and ``attribution/`` (token-level methods)."""
    from unlearnkit.report.curve import training_files

    files: dict[str, bytes] = {}
    plan = result.eval_plan
    if plan is not None and result.eval_curve:
        from unlearnkit.train.evaluation_callback import curve_files, shown_metrics

        names = shown_metrics(plan, result.eval_curve)
        files.update(curve_files(result.eval_curve, names, result.best, plan))
    files.update(training_files(result.log_history))
    files.update(result.attribution_files or {})
    return files


def save_unlearned(result, output: str | Path, overwrite: bool = False) -> Path:
    """Write ``result``'s model, tokenizer, ``unlearnkit.json``, model card and :func:`unlearn_files`
    to ``output`` (atomically; a non-empty ``output`` is refused unless ``overwrite``)."""
    from unlearnkit.models import save_model

    if result.tokenizer is None or result.train_config is None:
        raise UserError(
            "this result does not hold its tokenizer and settings (it was not made by unlearnkit's "
            "unlearn()): nothing to record with the model"
        )
    if not result.is_main_process:
        return Path(output)  # multi-process runs: rank 0 writes the model
    provenance = unlearn_provenance(result)
    return save_model(
        result.model, result.tokenizer, output, provenance, overwrite=overwrite, files=unlearn_files(result)
    )


def teacher_cost(teacher: str | Path | None) -> int:
    """The compute of the unlearning run that made the teacher folder (0 when it is not an unlearned or
    distilled model's folder)."""
    import json

    if teacher is None:
        return 0
    try:
        info = json.loads((Path(teacher) / "unlearnkit.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return 0
    kind = str(info.get("kind", "")) if isinstance(info, dict) else ""
    compute = info.get("compute") if isinstance(info, dict) else None
    if not kind.startswith(("unlearned", "distilled")) or not isinstance(compute, dict):
        return 0
    return int(compute.get("total_cost", compute.get("cost", 0)))


def distill_provenance(
    result,
    *,
    teacher: str | None,
    data: str | None,
    noise: float,
    base: str | None,
    teacher_cost: int = 0,
    placement: dict | None = None,
    resumed_from: str | None = None,
) -> dict[str, Any]:
    """``unlearnkit.json`` of a UNDO student: its teacher, the noise and its target, what it was distilled
    on, and its compute with the teacher's (the numerator of ``unlearnkit.train.compute.compute_fraction``)."""
    compute = dict(result.compute)
    compute["teacher_cost"] = teacher_cost
    compute["total_cost"] = compute["cost"] + teacher_cost
    provenance: dict[str, Any] = {
        "kind": f"distilled (UNDO, noise {noise})",
        "teacher": teacher,
        "data": data,
        "noise": noise,
        "noise_toward": result.settings["noise_toward"],
        **({"noise_base": base} if base is not None else {"init_seed": result.settings.get("init_seed")}),
        "distilled_on": result.settings["distilled_examples"],
        "paper": "arXiv 2506.06278",
        "steps": result.steps,
        "train_loss": result.train_loss,
        "compute": compute,
        "teacher_outputs": result.reference,
        "config": result.settings,
    }
    if placement is not None:
        provenance["placement"] = placement
    if resumed_from is not None:
        provenance["resumed_from"] = resumed_from
    return provenance


def save_distilled(result, tokenizer, output: str | Path, provenance: dict, overwrite: bool = False) -> Path:
    """Write the student with its tokenizer, ``provenance``, model card, training log and loss plot."""
    from unlearnkit.models import save_model
    from unlearnkit.report.curve import training_files

    files = training_files(getattr(result, "log_history", None))
    return save_model(result.model, tokenizer, output, provenance, overwrite=overwrite, files=files)

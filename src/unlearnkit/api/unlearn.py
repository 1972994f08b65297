"""``unlearnkit.unlearn``: the Python entry point a researcher calls, the way TRL's trainers are called.

::

    from unlearnkit import unlearn
    from unlearnkit.methods import NPOConfig

    result = unlearn(model, tokenizer, forget_rows, retain_rows, method=NPOConfig(lr=1e-4, beta=0.2))
    result.save("npo")

It resolves what ``unlearnkit unlearn`` resolves, through the same functions: the settings (the caller's
over the model folder's recorded scale defaults, :func:`unlearnkit.models.scale_defaults`), the dtype
and training precision (:func:`unlearnkit.models.resolve_placement`), the collapse guard's probe rows,
then runs :func:`unlearnkit.pipelines.unlearn.unlearn`; ``result.save()`` writes what the command writes.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from unlearnkit.api.data import benchmark_of, check_lengths_of, is_benchmark_spec, rows_of
from unlearnkit.api.errors import python_errors
from unlearnkit.catalog import settings_class
from unlearnkit.errors import ArgumentError
from unlearnkit.methods import UnlearnConfig, check_method_name
from unlearnkit.pipelines.unlearn import UnlearnResult

# The pipeline's flags as this function's keywords, for its errors.
FLAGS = {
    "eval-every": "eval_every",
    "keep-best": "keep_best",
    "retain-model": "retain_model",
    "eval-max-items": "eval_max_items",
    "eval-max-new-tokens": "eval_max_new_tokens",
    "model": "model",
    "data": "forget",
    "method": "method",
}
OVERRIDE_HINT = "a keyword (unlearn(..., lr=1e-4)) or the config's field (NPOConfig(lr=1e-4))"


def note(message: str, quiet: bool) -> None:
    if not quiet:
        print(f"unlearnkit: note: {message}", file=sys.stderr)


def method_settings(method: Any, overrides: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """``(method name, the caller's own settings)`` from a name or a config of :mod:`unlearnkit.methods`
    and the keyword overrides (which win over the config's fields, as ``--set`` over ``--config``)."""
    from unlearnkit.config import canonical

    if isinstance(method, UnlearnConfig):
        name, given = method.method, method.given()
    elif isinstance(method, type) and issubclass(method, UnlearnConfig):
        name, given = method.method, {}
    else:
        name, given = check_method_name(method), {}
    with python_errors():
        return name, {**given, **canonical(dict(overrides), f"unlearn(method={name!r})")}


def model_source(model: Any, model_path: str | Path | None) -> str | None:
    """The folder (or hub id) the model comes from, whose recorded settings apply: ``model_path``, the
    path given as ``model``, an :class:`UnlearnResult`'s own source, or a loaded model's
    ``name_or_path`` when that is a local folder."""
    if model_path is not None:
        return str(model_path)
    if isinstance(model, (str, Path)):
        return str(model)
    if isinstance(model, UnlearnResult):
        return (model.source or {}).get("defaults_from", (model.source or {}).get("model"))
    name = getattr(model, "name_or_path", None) or getattr(
        getattr(model, "config", None), "_name_or_path", None
    )
    if isinstance(name, str) and name and (Path(name).expanduser() / "config.json").is_file():
        return name
    return None


def dtype_name(model) -> str:
    """The dtype a loaded model's weights are in, as ``--dtype`` names it (``auto`` for others)."""
    try:
        dtype = next(model.parameters()).dtype
    except (StopIteration, AttributeError):
        return "auto"
    name = str(dtype).removeprefix("torch.")
    return name if name in ("float32", "bfloat16", "float16") else "auto"


def unlearn(
    model: Any,
    tokenizer: Any = None,
    forget: Any = None,
    retain: Any = None,
    method: str | UnlearnConfig = "asu",
    *,
    columns: Mapping[str, str] | None = None,
    general: Any = None,
    model_path: str | Path | None = None,
    trust_remote_code: bool = False,
    eval_every: int | str | None = None,
    keep_best: str | None = None,
    eval_data: Any = None,
    retain_model: str | Path | None = None,
    eval_max_items: int = 50,
    eval_max_new_tokens: int = 32,
    work_dir: str | Path | None = None,
    quiet: bool = False,
    **overrides: Any,
) -> UnlearnResult:
    """Unlearn ``forget`` from ``model`` while keeping ``retain``; returns an :class:`UnlearnResult`
    (``.model``, ``.config``, ``.save(path)``).

    ``model``: a loaded causal LM, a model folder or hub id (loaded as ``unlearnkit unlearn`` loads it:
    safetensors only, the dtype ``--dtype auto`` picks), or an earlier :class:`UnlearnResult`.
    ``tokenizer``: None loads the model folder's. ``forget`` / ``retain``: rows (a list of dicts, a
    ``datasets.Dataset``, a DataFrame) with ``question`` and ``answer`` (or raw ``text``), renamed from
    your columns by ``columns={"question": "prompt", "answer": "completion"}``; or ``forget`` a benchmark
    (folder, name such as ``tofu:forget10``, ``Benchmark``, dict of splits), whose retain split is then
    the default ``retain`` and whose selection halves feed the collapse guard, as on the command line.
    ``general``: rows of knowledge to keep, for the collapse guard's probe (never trained on).
    ``method``: a name (``"npo"``) or a config of :mod:`unlearnkit.methods` (``NPOConfig(beta=0.2)``);
    ``overrides``: settings as keywords (``lr=1e-4``, ``epochs=2``), over the config's. Settings you do
    not give are those ``unlearnkit unlearn`` uses for the same model folder (a tiny model's recorded
    recipe, else the papers' defaults); one line on stderr names recorded ones used.
    ``eval_every`` (steps or ``"epoch"``), ``keep_best``, ``eval_data`` (default: the ``forget``
    benchmark), ``retain_model`` (the oracle's folder), ``eval_max_items``, ``eval_max_new_tokens``:
    evaluation during training, as ``--eval-every`` (:mod:`unlearnkit.train.evaluation_callback`).
    ``work_dir``: where checkpoints go (``save_every=N``); default a temporary folder, removed after.
    ``quiet``: no progress bar and no notes. Bad input raises :class:`~unlearnkit.errors.ArgumentError`.
    """
    from unlearnkit.config import build_configs
    from unlearnkit.models import scale_defaults, training_record

    name, given = method_settings(method, overrides)
    source = model_source(model, model_path)  # whose recorded settings apply
    made_from = None if isinstance(model, UnlearnResult) and model_path is None else source
    if isinstance(model, UnlearnResult):
        tokenizer = model.tokenizer if tokenizer is None else tokenizer
        model = model.model
    bench, data_source, forget_rows, retain_rows, general_rows = _data(forget, retain, general, columns)
    caller = f"unlearn(method={name!r})"
    with python_errors(FLAGS):
        values, defaults_note = scale_defaults(source, name, given, override=OVERRIDE_HINT)
        train_cfg, _ = build_configs(settings_class(name), values, caller=caller)
        if keep_best and eval_every is None:
            raise ArgumentError(
                "keep_best needs eval_every (steps, or 'epoch'): the best of which evaluations?"
            )
        plan = _plan(
            eval_every,
            keep_best,
            eval_data if eval_data is not None else bench,
            retain_model,
            (eval_max_items, eval_max_new_tokens),
            train_cfg.seed,
            trust_remote_code,
        )
        model, tokenizer, placement = _placed(
            model, tokenizer, source, train_cfg.precision, trust_remote_code
        )
        values["precision"] = placement.precision  # what auto resolved to: the Trainer and the card see it
        train_cfg, _ = build_configs(settings_class(name), values, caller=caller)
        _check_fits(tokenizer, train_cfg, forget_rows, retain_rows, bench)
    probe = _probe_rows(bench, general_rows, train_cfg.seed)
    if defaults_note:
        note(defaults_note, quiet)
    temporary = work_dir is None
    work = Path(tempfile.mkdtemp(prefix="unlearnkit-unlearn-")) if temporary else Path(work_dir)
    try:
        result = _run(
            model, tokenizer, forget_rows, retain_rows, name, source, work, plan, probe, values, quiet
        )
        attribution = _attribution(work) if result.attribution else {}
    finally:
        if temporary:
            shutil.rmtree(work, ignore_errors=True)
    result.source = {
        "model": made_from,
        "data": data_source,
        "placement": training_record(placement, result.train_config),
        "resumed_from": None,
        "defaults_from": source,  # an unlearned tiny model is still a tiny model, even one in memory
    }
    result.attribution_files = attribution
    return result


def _data(forget, retain, general, columns):
    """``(benchmark or None, its name for the card, forget rows, retain rows, general rows or None)``."""
    if forget is None:
        raise ArgumentError(
            "forget: give the rows to forget (a list of dicts, a datasets.Dataset) or a benchmark"
        )
    general_rows = rows_of(general, "general", columns) if general is not None else None
    if isinstance(retain, str) and settings_class(retain) is not None:
        raise ArgumentError(
            f"retain={retain!r} is a method name: the fourth argument is the retain rows; pass method={retain!r}"
        )
    if is_benchmark_spec(forget):
        bench, data_source = benchmark_of(forget, "forget", columns)
        retain_rows = bench.retain if retain is None else rows_of(retain, "retain", columns)
        return bench, data_source, list(bench.forget), list(retain_rows), general_rows
    forget_rows = rows_of(forget, "forget", columns)
    if not forget_rows:
        raise ArgumentError("forget is empty: there is nothing to unlearn")
    if retain is None:
        raise ArgumentError("retain: give the rows to keep (a list of dicts, a datasets.Dataset)")
    retain_rows = rows_of(retain, "retain", columns)
    sizes = f"forget {len(forget_rows)}, retain {len(retain_rows)}"
    return None, f"rows given in Python ({sizes})", forget_rows, retain_rows, general_rows


def _probe_rows(bench, general_rows, seed: int):
    """The collapse guard's rows: a benchmark's selection halves (as the command line), else the retain
    rows and ``general``."""
    if bench is None:
        return None, general_rows or []
    from unlearnkit.train.collapse_guard import probe_rows_of

    probe_retain, probe_general = probe_rows_of(bench, seed)
    return probe_retain, probe_general if general_rows is None else general_rows


def _plan(every, keep_best, data, retain_model, limits: tuple[int, int], seed: int, trust_remote_code: bool):
    if every is None:
        return None
    if data is None:
        raise ArgumentError("eval_every needs eval_data: the benchmark whose selection half is evaluated")
    from unlearnkit.data.qa import Benchmark
    from unlearnkit.train.evaluation_callback import plan_evaluation

    bench = data if isinstance(data, Benchmark) else benchmark_of(data, "eval_data")[0]
    oracle = None if retain_model is None else str(retain_model)
    return plan_evaluation(bench, seed, every, keep_best, oracle, *limits, trust_remote_code)


def _placed(model, tokenizer, source, precision: str, trust_remote_code: bool):
    """The model and tokenizer (loaded from a folder as the command loads them) and their placement."""
    from unlearnkit.models import check_model_path, load_model, load_tokenizer, resolve_placement

    if isinstance(model, (str, Path)):
        check_model_path(str(model), flag="model")
        placement = resolve_placement(str(model), "auto", "auto", precision)
        loaded = load_model(str(model), trust_remote_code, dtype=placement.torch_dtype)
        return loaded, tokenizer or load_tokenizer(str(model), trust_remote_code), placement
    if not hasattr(model, "parameters"):
        raise ArgumentError(
            f"model: expected a loaded causal LM, a model folder or an UnlearnResult, got {type(model).__name__}"
        )
    if tokenizer is None:
        if source is None:
            raise ArgumentError(
                "tokenizer: needed with a loaded model (or pass the model's folder as model=)"
            )
        tokenizer = load_tokenizer(source, trust_remote_code)
    placement = resolve_placement(source, "auto", dtype_name(model), precision)
    return model, tokenizer, placement


def _check_fits(tokenizer, train_cfg, forget_rows, retain_rows, bench) -> None:
    """Every forget / retain row fits ``max_length`` before anything trains (answers are never cut)."""
    from unlearnkit.data.encode import PromptFormat

    fmt = PromptFormat.for_tokenizer(tokenizer, train_cfg.prompt_format)
    for argument, rows in (("forget", forget_rows), ("retain", retain_rows)):
        where = f"{argument}.jsonl" if bench is not None else argument
        check_lengths_of(tokenizer, fmt, rows, where, train_cfg.max_length)
    if bench is not None and getattr(bench, "kind", "qa") == "qa":
        from unlearnkit.data.qa import overlap_warning

        warning = overlap_warning(bench)
        if warning:
            print(f"unlearnkit: warning: {warning}", file=sys.stderr)


def _run(model, tokenizer, forget_rows, retain_rows, name, source, work: Path, plan, probe, values, quiet):
    from unlearnkit.pipelines.unlearn import unlearn as run_pipeline

    probe_retain, probe_general = probe
    with python_errors(FLAGS):
        return run_pipeline(
            model,
            tokenizer,
            forget_rows,
            retain_rows,
            name,
            model_path=source,
            work_dir=work,
            attribution_dir=work / "attribution",
            quiet=quiet,
            progress=None if quiet else f"unlearning ({name})",
            general=probe_general,
            probe_retain=probe_retain,
            eval_every=plan,
            **values,
        )


def _attribution(work: Path) -> dict[str, bytes]:
    from unlearnkit.pipelines.model_outputs import attribution_files

    return attribution_files(work / "attribution")


__all__ = ["UnlearnResult", "unlearn"]

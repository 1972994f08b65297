"""``unlearnkit.unlearn``: the Python entry point a researcher calls, the way TRL's trainers are called.

::

    from unlearnkit import unlearn
    from unlearnkit.methods import NPOConfig

    result = unlearn(model, tokenizer, forget_rows, retain_rows, method=NPOConfig(lr=1e-4, beta=0.2))
    result.save("npo")

``unlearnkit unlearn`` runs through the same two steps as :func:`unlearn`, so there is one
implementation: :func:`make_ready` (the tokenizer, every row's length against ``max_length``, the
forget / retain overlap warning, the placement and training precision, the loaded model) and
:func:`train_ready` (the collapse guard's probe rows, :func:`unlearnkit.pipelines.unlearn.unlearn`, and
the record ``result.save()`` writes). Each front only checks its own arguments first (flags and
``--resume`` for the command; Python values for :func:`unlearn`) and words the errors its way: the
shared steps raise :class:`~unlearnkit.errors.UserError` in the command's words, which
:func:`~unlearnkit.api.errors.python_errors` rewords as keywords. The settings both start from are
decided by :func:`unlearnkit.models.scale_defaults` (the caller's over the model folder's recorded
recipe).
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from unlearnkit.api.data import benchmark_of, is_benchmark_spec, row_label, rows_of
from unlearnkit.api.errors import python_errors
from unlearnkit.catalog import settings_class
from unlearnkit.data.sources import split_sources
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
    from unlearnkit.evaluation.teacher_search import for_validation
    from unlearnkit.models import scale_defaults

    name, given = method_settings(method, overrides)
    source = model_source(model, model_path)  # whose recorded settings apply
    made_from = None if isinstance(model, UnlearnResult) and model_path is None else source
    if isinstance(model, UnlearnResult):
        tokenizer = model.tokenizer if tokenizer is None else tokenizer
        model = model.model
    bench, data_name, forget_rows, retain_rows, general_rows = _data(forget, retain, general, columns)
    with python_errors(FLAGS):
        values, defaults_note = scale_defaults(source, name, given, override=OVERRIDE_HINT)
        train_cfg, _ = build_configs(
            settings_class(name), for_validation(values), caller=f"unlearn(method={name!r})"
        )
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
        _check_model(model, tokenizer, source)
        if defaults_note:
            note(defaults_note, quiet)
        ready = make_ready(
            model,
            tokenizer,
            name,
            values,
            forget_rows,
            retain_rows,
            source=source,
            bench=bench,
            dtype="auto" if isinstance(model, (str, Path)) else dtype_name(model),
            trust_remote_code=trust_remote_code,
        )
    probe = probe_rows(bench, general_rows, train_cfg.seed)
    temporary = work_dir is None
    work = Path(tempfile.mkdtemp(prefix="unlearnkit-unlearn-")) if temporary else Path(work_dir)
    try:
        with python_errors(FLAGS):
            return train_ready(
                ready,
                work=work,
                plan=plan,
                probe=probe,
                progress=None if quiet else f"unlearning ({name})",
                quiet=quiet,
                made_from=made_from,
                data_name=data_name,
            )
    finally:
        if temporary:
            shutil.rmtree(work, ignore_errors=True)


@dataclass
class Rows:
    """A split's rows and where each part came from, so that an error names the row as its caller
    wrote it: a file (``W/forget.jsonl:3``, by the row's line) or a Python argument (``forget[3]``)."""

    parts: list[tuple[list[dict], str]]

    @classmethod
    def of_split(cls, bench, name: str) -> Rows:
        """The rows of a benchmark's split, named by the files they were read from."""
        return cls(split_sources(bench, name))

    @classmethod
    def given(cls, rows: list[dict], argument: str) -> Rows:
        """Rows handed over in Python as ``argument``."""
        return cls([(rows, argument)])

    @property
    def rows(self) -> list[dict]:
        return [row for rows, _ in self.parts for row in rows]


@dataclass
class ReadyRun:
    """An unlearning run whose inputs are all checked, with its model placed and loaded: what
    :func:`make_ready` returns and :func:`train_ready` trains."""

    model: Any
    tokenizer: Any
    method: str
    values: dict[str, Any]  # the settings trained with (the training precision resolved)
    train_config: Any
    placement: Any
    forget: list[dict]
    retain: list[dict]
    source: str | None  # the folder whose recorded recipe applied (and the reference's weights)


def make_ready(
    model: Any,
    tokenizer: Any,
    method: str,
    values: dict[str, Any],
    forget: Rows,
    retain: Rows,
    *,
    source: str | None,
    bench: Any = None,
    device: str = "auto",
    dtype: str = "auto",
    asked_device: str | None = None,
    trust_remote_code: bool = False,
) -> ReadyRun:
    """Everything before training that can still fail on bad input, cheapest first, so that a long row
    answers before any weights are read: the tokenizer, every forget / retain row against
    ``max_length`` (answers are never cut), the overlap warning, the placement (``device`` / ``dtype``,
    the training precision ``auto`` resolves to), then the model (loaded when ``model`` is a folder).

    ``values``: the method's settings, the caller's over the recorded recipe
    (:func:`unlearnkit.models.scale_defaults`), already checked. ``source``: the model folder whose
    recipe applied. ``asked_device``: the ``cuda:N`` the user named when the command pinned the process
    to that GPU (recorded as asked). Errors are :class:`UserError` in the command's words.
    """
    import dataclasses

    from unlearnkit.config import build_configs
    from unlearnkit.evaluation.teacher_search import for_validation
    from unlearnkit.models import load_model, load_tokenizer, resolve_placement

    folder = str(model) if isinstance(model, (str, Path)) else source
    if tokenizer is None:
        tokenizer = load_tokenizer(folder, trust_remote_code)
    config_class = settings_class(method)
    train_cfg, _ = build_configs(config_class, for_validation(values))
    check_rows_fit(tokenizer, train_cfg, [*forget.parts, *retain.parts])
    warn_overlap(bench)
    placement = resolve_placement(folder, device, dtype, train_cfg.precision)
    if asked_device is not None:
        placement = dataclasses.replace(placement, asked_device=asked_device)
    # what auto resolved to: the Trainer and the card see it
    values = {**values, "precision": placement.precision}
    train_cfg, _ = build_configs(config_class, for_validation(values))
    if isinstance(model, (str, Path)):
        model = load_model(str(model), trust_remote_code, dtype=placement.torch_dtype)
    return ReadyRun(model, tokenizer, method, values, train_cfg, placement, forget.rows, retain.rows, source)


def check_rows_fit(tokenizer, train_cfg, parts: Sequence[tuple[list[dict], str]]) -> None:
    """Every row's question + answer fits ``max_length`` before anything trains (answers are never cut:
    a long one is an error now rather than a silently cut target later)."""
    from unlearnkit.data.encode import PromptFormat, check_lengths

    fmt = PromptFormat.for_tokenizer(tokenizer, train_cfg.prompt_format)
    for rows, where in parts:
        check_lengths(tokenizer, fmt, rows, where, train_cfg.max_length, label=row_label(where))


def warn_overlap(bench) -> None:
    """One warning line when forget and retain questions overlap (the model is asked to forget and to
    keep the same fact); raw-text corpora (MUSE, WMDP) have no questions to compare."""
    if bench is None or getattr(bench, "kind", "qa") != "qa":
        return
    from unlearnkit.data.qa import overlap_warning

    warning = overlap_warning(bench)
    if warning:
        print(f"unlearnkit: warning: {warning}", file=sys.stderr)


def train_ready(
    ready: ReadyRun,
    *,
    work: Path,
    plan: Any = None,
    probe: tuple[Sequence[dict] | None, Sequence[dict]] = (None, ()),
    resumed_from: Path | None = None,
    progress: str | None = None,
    quiet: bool = False,
    made_from: str | None = None,
    data_name: str | None = None,
) -> UnlearnResult:
    """Train ``ready`` (:func:`unlearnkit.pipelines.unlearn.unlearn`, checkpoints in ``work``) and
    return the result with the record its folder needs: where the model and data came from
    (``made_from``, ``data_name``), the placement, the checkpoint resumed from, and TokenUnlearn's
    attribution files (read now: ``work`` may be gone before the model is saved).

    ``probe``: the collapse guard's ``(retain rows, general rows)`` (:func:`probe_rows`); ``plan``: the
    evaluation during training (``plan_evaluation``), or None.
    """
    from unlearnkit.models import training_record
    from unlearnkit.pipelines.model_outputs import attribution_files
    from unlearnkit.pipelines.unlearn import unlearn as run_pipeline

    probe_retain, probe_general = probe
    values, tau_search = _auto_tau(ready, probe_general, quiet)
    result = run_pipeline(
        ready.model,
        ready.tokenizer,
        ready.forget,
        ready.retain,
        ready.method,
        model_path=ready.source,
        work_dir=work,
        resume=resumed_from is not None,
        attribution_dir=work / "attribution",
        quiet=quiet,
        progress=progress,
        general=probe_general,
        probe_retain=probe_retain,
        eval_every=plan,
        **values,
    )
    result.source = {
        "model": made_from,
        "data": data_name,
        "placement": training_record(ready.placement, ready.train_config),
        "resumed_from": resumed_from.name if resumed_from is not None else None,
        "defaults_from": ready.source,  # an unlearned tiny model is still a tiny model, even one in memory
        **({"tau_search": tau_search} if tau_search is not None else {}),
    }
    result.attribution_files = attribution_files(work / "attribution") if result.attribution else {}
    return result


def _auto_tau(ready: ReadyRun, general: Sequence[dict], quiet: bool) -> tuple[dict[str, Any], dict | None]:
    """``tau=auto``: ASU's teacher searched on the run's own forget, retain and general rows before
    training (:func:`unlearnkit.evaluation.teacher_search.resolve_auto_tau`); the values unchanged
    otherwise."""
    from unlearnkit.evaluation.teacher_search import is_auto_tau, resolve_auto_tau

    if not is_auto_tau(ready.values):
        return dict(ready.values), None
    from unlearnkit.data.encode import PromptFormat

    fmt = PromptFormat.for_settings(ready.tokenizer, ready.train_config)
    parts = {"forget": list(ready.forget), "retain": list(ready.retain), "general": list(general or [])}
    log = None if quiet else (lambda line: print(f"unlearnkit: {line}", file=sys.stderr))
    model = ready.model.to(ready.placement.device)  # where training puts it: never search a 7B on the CPU
    return resolve_auto_tau(model, ready.tokenizer, fmt, ready.values, parts, ready.train_config.seed, log=log)


def probe_rows(bench, general_rows, seed: int) -> tuple[list[dict] | None, list[dict]]:
    """The collapse guard's rows: a benchmark's selection halves (``general`` rows, when given, replace
    its general half), else the retain rows trained on (None) and ``general``."""
    if bench is None:
        return None, general_rows or []
    from unlearnkit.train.collapse_guard import probe_rows_of

    probe_retain, probe_general = probe_rows_of(bench, seed)
    return probe_retain, probe_general if general_rows is None else general_rows


def _data(forget, retain, general, columns):
    """``(benchmark or None, its name for the card, forget Rows, retain Rows, general rows or None)``."""
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
        bench, data_name = benchmark_of(forget, "forget", columns)
        given = Rows.given(rows_of(retain, "retain", columns), "retain") if retain is not None else None
        return (
            bench,
            data_name,
            _split_rows(bench, "forget"),
            given or _split_rows(bench, "retain"),
            general_rows,
        )
    rows = rows_of(forget, "forget", columns)
    if not rows:
        raise ArgumentError("forget is empty: there is nothing to unlearn")
    if retain is None:
        raise ArgumentError("retain: give the rows to keep (a list of dicts, a datasets.Dataset)")
    kept = rows_of(retain, "retain", columns)
    sizes = f"forget {len(rows)}, retain {len(kept)}"
    forget_rows, retain_rows = Rows.given(rows, "forget"), Rows.given(kept, "retain")
    return None, f"rows given in Python ({sizes})", forget_rows, retain_rows, general_rows


def _split_rows(bench, name: str) -> Rows:
    """A benchmark's split, named by the file it was read from; a dict of splits given in Python as
    the caller wrote it (``forget['retain'][3]``)."""
    if str(bench.path).startswith("<"):
        return Rows.given(list(bench.split(name)), f"forget[{name!r}]")
    return Rows.of_split(bench, name)


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


def _check_model(model, tokenizer, source) -> None:
    """``model`` is a folder that exists (or a hub id) or a loaded model with a tokenizer to go with it."""
    from unlearnkit.models import check_model_path

    if isinstance(model, (str, Path)):
        check_model_path(str(model), flag="model")
        return
    if not hasattr(model, "parameters"):
        raise ArgumentError(
            f"model: expected a loaded causal LM, a model folder or an UnlearnResult, got {type(model).__name__}"
        )
    if tokenizer is None and source is None:
        raise ArgumentError("tokenizer: needed with a loaded model (or pass the model's folder as model=)")


__all__ = ["UnlearnResult", "unlearn"]

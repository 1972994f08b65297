"""``unlearnkit.evaluate``: the TOFU protocol on a model, from Python, as ``unlearnkit eval`` runs it.

::

    oracle = evaluate(oracle_model, tokenizer, bench)
    result = evaluate(unlearned.model, tokenizer, bench, oracle=oracle)
    result.metrics["forget_quality"]

``oracle`` is the retain oracle in any form at hand (an earlier :class:`EvalResult`, a model, an
:class:`~unlearnkit.pipelines.unlearn.UnlearnResult`, a model or eval folder, its truth ratios): forget
quality is the KS test of this model's forget truth ratios against the oracle's, computed on the same
rows with the same settings, as the command computes it. ``original`` (the model before unlearning)
adds the test's resolution on this data (``original_forget_quality`` and, when the test cannot tell
that model from the oracle, a warning).
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from unlearnkit.api.data import benchmark_of, check_lengths_of
from unlearnkit.api.errors import SAVE_FLAGS, python_errors, reworded
from unlearnkit.errors import ArgumentError

FLAGS = {"retain-model": "oracle", "original-model": "original", "data": "data", "model": "model"}
LENGTH_FIELDS = ("answer", "paraphrased_answer", "perturbed_answer")  # = commands.eval.EVAL_FIELDS_CHECKED


@dataclass
class EvalResult:
    """The evaluation of one model: ``metrics`` (name -> number, as ``metrics.json``), ``details``
    (per-item numbers, generations, settings and warnings, as ``details.json``)."""

    metrics: dict[str, Any]
    details: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def warnings(self) -> list[str]:
        """One line per degenerate number: which input made it so, and the likely cause."""
        return [w["message"] for w in self.details.get("warnings", [])]

    @property
    def forget_truth_ratios(self) -> list[float] | None:
        """The per-item forget truth ratios (what an oracle's evaluation gives forget quality)."""
        return (self.details.get("forget") or {}).get("truth_ratios")

    def to_json(self) -> str:
        """``{"metrics": ..., "details": ...}`` as JSON text."""
        from unlearnkit.io import json_text

        return json_text({"metrics": self.metrics, "details": self.details})

    def save(self, path: str | Path, overwrite: bool = False) -> Path:
        """Write ``metrics.json`` and ``details.json`` to the folder ``path`` (an eval folder, as
        ``unlearnkit eval --output`` writes: another evaluation's ``oracle=`` or ``--retain-model``
        reads it). Atomic; an existing non-empty folder is refused unless ``overwrite``."""
        from unlearnkit.io import atomic_dir, write_json

        with python_errors(SAVE_FLAGS), atomic_dir(path, overwrite=overwrite) as tmp:
            write_json(tmp / "metrics.json", self.metrics)
            write_json(tmp / "details.json", self.details)
        return Path(path)


def model_and_tokenizer(value: Any, tokenizer: Any, argument: str, trust_remote_code: bool = False):
    """``(model, tokenizer)`` from a loaded model (with ``tokenizer``), a ``(model, tokenizer)`` pair,
    an :class:`UnlearnResult` or a model folder / hub id (loaded on the CPU in float32, as the command
    loads it there)."""
    from unlearnkit.pipelines.unlearn import UnlearnResult

    if isinstance(value, UnlearnResult):
        return value.model, tokenizer if tokenizer is not None else value.tokenizer
    if isinstance(value, tuple) and len(value) == 2:
        return value
    if isinstance(value, (str, Path)):
        from unlearnkit.models import check_model_path, load, resolve_placement

        with python_errors(FLAGS):
            check_model_path(str(value), flag=argument)
            placement = resolve_placement(str(value), "auto", "auto")
            model, own = load(str(value), trust_remote_code, **placement.load_kwargs())
        return model, tokenizer if tokenizer is not None and argument == "model" else own
    if hasattr(value, "parameters"):
        if tokenizer is None:
            raise ArgumentError(
                f"{argument}: a loaded model needs its tokenizer (pass tokenizer=, or a (model, tokenizer) pair)"
            )
        return value, tokenizer
    raise ArgumentError(
        f"{argument}: expected a model, a (model, tokenizer) pair, an UnlearnResult or a model folder; "
        f"got {type(value).__name__}"
    )


def settings_of(protocol: str, overrides: Mapping[str, Any], quiet: bool):
    """EvalSettings as ``unlearnkit eval`` builds them: the TOFU protocol's defaults (200 new tokens, a
    seeded sample of at most 400 rows per split), then the caller's."""
    from unlearnkit.evaluation.evaluate import EvalSettings

    if protocol != "tofu":
        raise ArgumentError(
            f"protocol={protocol!r}: the Python API scores the TOFU protocol; closer-look, MUSE and WMDP are "
            "`unlearnkit eval --protocol closer-look|muse|wmdp`"
        )
    known = {f.name for f in dataclasses.fields(EvalSettings)} - {"progress"}
    unknown = sorted(set(overrides) - known)
    if unknown:
        raise ArgumentError(
            f"evaluate(): unknown setting {unknown[0]!r}; the settings are {', '.join(sorted(known))}"
        )
    with python_errors():
        return EvalSettings(**{"max_new_tokens": 200, **overrides, "progress": not quiet})


def evaluate(
    model: Any,
    tokenizer: Any = None,
    data: Any = None,
    *,
    oracle: Any = None,
    original: Any = None,
    columns: Mapping[str, str] | None = None,
    protocol: str = "tofu",
    trust_remote_code: bool = False,
    quiet: bool = False,
    **settings: Any,
) -> EvalResult:
    """Evaluate ``model`` on ``data`` with the TOFU protocol; returns an :class:`EvalResult`.

    ``data``: a benchmark folder or name, a ``Benchmark``, or a dict of splits (``{"forget": rows,
    "retain": rows, "holdout": rows, "general": rows}``, rows as for :func:`unlearnkit.unlearn`, renamed
    by ``columns``). Truth ratios (and so forget quality) need ``paraphrased_answer`` and
    ``perturbed_answer`` on every row of a split. ``oracle``: the retain oracle (an :class:`EvalResult`,
    a model, an ``UnlearnResult``, a ``(model, tokenizer)`` pair, a model or eval folder, or its
    per-item forget truth ratios) for ``forget_quality``; ``original``: the model before unlearning (the
    same forms; needs ``oracle``) for ``original_forget_quality``. ``settings``: ``max_new_tokens``
    (200), ``max_items`` (400 per split), ``batch_size``, ``max_total_tokens``, ``seed`` ... as
    ``unlearnkit eval``'s flags. Warnings about degenerate numbers are printed (unless ``quiet``) and
    kept in ``result.warnings``.
    """
    from unlearnkit.evaluation.evaluate import evaluate as run_evaluation

    if data is None:
        raise ArgumentError(
            "data: give the benchmark to evaluate on (a folder, a name, or {'forget': rows, ...})"
        )
    st = settings_of(protocol, settings, quiet)
    named = isinstance(data, str) and ":" in data and not Path(data).is_dir()
    bench, _ = benchmark_of(data, "data", columns, eval_fields=named)
    if original is not None and oracle is None:
        raise ArgumentError(
            "original needs oracle: the original's forget quality is measured against the oracle"
        )
    notes = [] if named else _field_notes(bench)
    model, tokenizer = model_and_tokenizer(model, tokenizer, "model", trust_remote_code)
    _check_fits(bench, tokenizer, st)
    for text in notes:
        _print("note", text, quiet)
    oracle_trs = (
        None if oracle is None else oracle_truth_ratios(oracle, tokenizer, bench, st, trust_remote_code)
    )
    resolution = None
    if original is not None:
        resolution = _resolution(original, tokenizer, bench, st, oracle_trs, trust_remote_code)
    with python_errors(FLAGS):
        metrics, details = run_evaluation(model, tokenizer, bench, st, oracle_trs)
    if resolution is not None:
        from unlearnkit.evaluation.diagnostics import add_resolution

        add_resolution(metrics, details, resolution)
    result = EvalResult(metrics, details)
    for warning in result.warnings:
        _print("warning", reworded(warning, FLAGS), quiet)
    return result


def _print(kind: str, text: str, quiet: bool) -> None:
    if not quiet:
        print(f"unlearnkit: {kind}: {text}", file=sys.stderr)


def _forget_only(bench):
    from unlearnkit.data import Benchmark

    return Benchmark(path=bench.path, forget=bench.forget, retain=[], holdout=[], general=[])


def _has_truth_ratio_fields(bench) -> bool:
    return bool(bench.forget) and all(
        "perturbed_answer" in r and "paraphrased_answer" in r for r in bench.forget
    )


def oracle_truth_ratios(oracle: Any, tokenizer, bench, st, trust_remote_code: bool = False) -> list[float]:
    """The oracle's per-item forget truth ratios on ``bench``'s forget rows, from whichever form it came in."""
    if not _has_truth_ratio_fields(bench):
        raise ArgumentError(
            "oracle needs truth ratios, but the forget rows have no paraphrased_answer / perturbed_answer; "
            "drop oracle= or add the fields (README: 'Your own data')"
        )
    if isinstance(oracle, EvalResult):
        trs = oracle.forget_truth_ratios
        if not trs:
            raise ArgumentError(
                "oracle: this evaluation holds no forget truth ratios (its forget rows lacked the fields)"
            )
        return [float(x) for x in trs]
    if (
        isinstance(oracle, Sequence)
        and not isinstance(oracle, (str, tuple))
        and all(isinstance(x, (int, float)) for x in oracle)
    ):
        return [float(x) for x in oracle]
    if (
        isinstance(oracle, (str, Path))
        and not (Path(oracle) / "config.json").is_file()
        and Path(oracle).exists()
    ):
        from unlearnkit.evaluation.evaluate import oracle_truth_ratios as read_truth_ratios

        with python_errors(FLAGS):
            return read_truth_ratios(oracle)  # an eval folder or its details.json
    from unlearnkit.evaluation.evaluate import evaluate as run_evaluation

    model, otok = model_and_tokenizer(oracle, tokenizer, "oracle", trust_remote_code)
    with python_errors(FLAGS):
        _, details = run_evaluation(model, otok, _forget_only(bench), st)
    return details["forget"]["truth_ratios"]


def _resolution(original, tokenizer, bench, st, oracle_trs, trust_remote_code: bool) -> dict:
    """The original model's forget quality against the oracle: read from its evaluation, or measured on
    the forget split (one new token per question: only its truth ratios are needed)."""
    from unlearnkit.evaluation.evaluate import evaluate as run_evaluation

    name = original if isinstance(original, (str, Path)) else type(original).__name__
    if isinstance(original, EvalResult):
        if "forget_quality" not in original.metrics:
            raise ArgumentError(
                "original: this evaluation has no forget_quality (evaluate it with oracle= first)"
            )
        return {
            "original_model": "an EvalResult",
            "forget_quality": float(original.metrics["forget_quality"]),
            "n": original.metrics.get("forget_quality_n"),
        }
    model, otok = model_and_tokenizer(original, tokenizer, "original", trust_remote_code)
    quick = dataclasses.replace(st, max_new_tokens=1, max_total_tokens=0)
    with python_errors(FLAGS):
        metrics, _ = run_evaluation(model, otok, _forget_only(bench), quick, oracle_trs)
    return {
        "original_model": str(name),
        "forget_quality": metrics.get("forget_quality"),
        "n": metrics.get("forget_quality_n"),
    }


def _field_notes(bench) -> list[str]:
    """The command's notes on splits without truth-ratio fields; a split where only some rows have them
    is an error naming the first row without them."""
    from unlearnkit.data.qa import eval_field_notes

    in_memory = str(bench.path).startswith("<")
    with python_errors(FLAGS):
        return eval_field_notes(
            bench,
            label=(lambda split, i, _row: f"data[{split!r}][{i}]") if in_memory else None,
            split_label=(lambda split: f"data[{split!r}]") if in_memory else None,
        )


def _check_fits(bench, tokenizer, st) -> None:
    """Every evaluated row's question + answer / paraphrase / perturbed answers fits ``max_length``."""
    from unlearnkit.data.encode import PromptFormat
    from unlearnkit.data.qa import SPLITS
    from unlearnkit.evaluation.evaluate import select_rows

    fmt = PromptFormat.for_tokenizer(tokenizer, st.prompt_format)
    rows_of = getattr(bench, "eval_split", bench.split)
    for name in SPLITS:
        rows = select_rows(rows_of(name), st)
        where = f"{name}.jsonl" if not str(bench.path).startswith("<") else f"data[{name!r}]"
        check_lengths_of(
            tokenizer,
            fmt,
            rows,
            where,
            st.max_length,
            fields=LENGTH_FIELDS,
            hint="evaluation scores at most that many tokens; shorten the row",
        )

"""``unlearnkit.evaluate``: a model's evaluation from Python, by the protocol ``unlearnkit eval`` runs.

::

    oracle = evaluate(oracle_model, tokenizer, bench)
    result = evaluate(unlearned.model, tokenizer, bench, oracle=oracle)
    result.metrics["forget_quality"]
    evaluate(unlearned, data="world/muse", oracle="oracle").metrics["privleak"]  # MUSE, inferred

The protocols are the command's: ``tofu`` (truth ratios, forget quality, model utility),
``closer-look`` (TOFU's numbers on the closer-look rows, plus its forget efficacy and utility),
``muse`` (VerbMem, KnowMem, PrivLeak) and ``wmdp`` (multiple-choice accuracy through lm-eval).
``protocol=None`` takes the one the data calls for: a WMDP-like folder (multiple-choice tasks) or a
``wmdp:`` name is scored by ``wmdp``, a MUSE-like folder or a ``muse:`` name by ``muse``, question /
answer rows by ``tofu``.

``unlearnkit eval`` runs through the same functions (:func:`run_protocol` and the checks before it), so
the two give the same numbers on the same model and data; each front only reads its own arguments
(flags and folders for the command; models, results and rows in memory for :func:`evaluate`).
``oracle`` is the retain oracle in any form at hand (an earlier :class:`EvalResult`, a model, an
:class:`~unlearnkit.pipelines.unlearn.UnlearnResult`, a model or eval folder, its truth ratios or, for
MUSE, its PrivLeak AUC): forget quality is the KS test of this model's forget truth ratios against the
oracle's, computed on the same rows with the same settings; PrivLeak compares the two Min-K% AUCs.
``original`` (the model before unlearning) adds the KS test's resolution on this data
(``original_forget_quality`` and, when the test cannot tell that model from the oracle, a warning).
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from unlearnkit.api.data import benchmark_of, row_label
from unlearnkit.api.errors import SAVE_FLAGS, python_errors, reworded
from unlearnkit.errors import ArgumentError, UserError

FLAGS = {
    "retain-model": "oracle",
    "original-model": "original",
    "data": "data",
    "model": "model",
    "protocol": "protocol",
}
PROTOCOLS = ("tofu", "closer-look", "muse", "wmdp")
LENGTH_FIELDS = ("answer", "paraphrased_answer", "perturbed_answer")  # what evaluation scores per row
WMDP_NAMES = ("wmdp:bio", "wmdp:cyber")  # lm-eval's own WMDP and MMLU tasks
MUSE_MAX_ITEMS = 400  # items per MUSE set unless told (MUSE itself uses 100)
Loader = Callable[[], tuple[Any, Any]]  # gives (model, tokenizer) when the model's turn comes


@dataclass
class EvalResult:
    """The evaluation of one model: ``metrics`` (name -> number, as ``metrics.json``), ``details``
    (per-item numbers, generations, settings and warnings, as ``details.json``) and the ``protocol``
    that produced them."""

    metrics: dict[str, Any]
    details: dict[str, Any] = field(default_factory=dict, repr=False)
    protocol: str = "tofu"

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


@dataclass
class OtherModel:
    """A model an evaluation compares with (the retain oracle, the original model), in the form at
    hand: ``load`` gives its ``(model, tokenizer)`` when its turn comes (the command loads it only then,
    and lets it go before the evaluated model is loaded), or ``measured`` holds what an earlier
    evaluation of it gave (``truth_ratios``; ``auc`` for MUSE; ``forget_quality`` and ``n`` for the
    original). ``name`` is how the record names it."""

    name: str
    load: Loader | None = None
    measured: dict[str, Any] = field(default_factory=dict)


# ----------------------------------------------------------------------------------- shared steps


def fitting_protocol(bench) -> str | None:
    """The protocol whose metrics ``bench`` holds the data for: ``wmdp`` (multiple-choice tasks),
    ``muse`` (MUSE's VerbMem set), ``tofu`` (question / answer rows); None for raw text alone."""
    if getattr(bench, "kind", "qa") != "text":
        return "tofu"
    if getattr(bench, "mc_tasks", None):
        return "wmdp"
    if "verbmem" in (getattr(bench, "extra", None) or {}):
        return "muse"
    return None


def check_protocol_fits(bench, protocol: str, data: str) -> None:
    """``--protocol tofu`` / ``closer-look`` score question/answer rows: a raw-text benchmark is an
    error naming the protocol that scores it."""
    fits = fitting_protocol(bench)
    if fits == "tofu":
        return
    hint = (
        f"--protocol {fits}"
        if fits is not None
        else "--protocol muse (a MUSE-like folder) or --protocol wmdp (a WMDP-like folder)"
    )
    raise UserError(f"--data {data} holds raw text, which --protocol {protocol} cannot score; use {hint}")


def check_text_protocol(bench, protocol: str, data: str) -> None:
    """``--protocol wmdp`` needs a WMDP-like folder's multiple-choice tasks, ``--protocol muse`` MUSE's sets."""
    if protocol == "wmdp" and not getattr(bench, "mc_tasks", None):
        raise UserError(
            f"--protocol wmdp --data {data}: not a WMDP-like folder (benchmark.json kind wmdp with "
            "multiple-choice tasks); for lm-eval's WMDP and MMLU use --data wmdp:bio or wmdp:cyber"
        )
    if protocol == "muse":
        from unlearnkit.data.sources import check_muse_benchmark

        check_muse_benchmark(bench)


def check_wmdp_name(data: str) -> None:
    """A named ``--protocol wmdp`` benchmark is one of lm-eval's WMDP tasks."""
    if str(data).strip().lower() not in WMDP_NAMES:
        raise UserError(
            f"--protocol wmdp --data {data}: use {' or '.join(WMDP_NAMES)} (lm-eval's WMDP and MMLU "
            "tasks) or a WMDP-like folder (benchmark.json kind wmdp)"
        )


def tofu_settings(protocol: str, **given: Any):
    """EvalSettings of the TOFU or closer-look protocol (its defaults: :mod:`unlearnkit.evaluation.evaluate`),
    with the caller's on top."""
    from unlearnkit.evaluation.evaluate import EvalSettings, closer_look_settings

    return closer_look_settings(**given) if protocol == "closer-look" else EvalSettings(**given)


def muse_settings(max_items: int | None = None, progress: bool = True, **given: Any):
    """MuseSettings with at most ``max_items`` items per set (default 400)."""
    from unlearnkit.protocols.muse import MuseSettings

    return MuseSettings(
        **given, max_items=MUSE_MAX_ITEMS if max_items is None else max_items, progress=progress
    )


def is_in_memory(bench) -> bool:
    """A benchmark built from rows given in Python (its path is ``<data>``), not read from a folder."""
    return str(getattr(bench, "path", "")).startswith("<")


def split_name(bench, name: str) -> str:
    """How an error names a split: its file, or ``data['forget']`` for rows given in Python."""
    from unlearnkit.data.sources import split_file

    return f"data[{name!r}]" if is_in_memory(bench) else split_file(bench, name)


def field_notes(bench) -> list[str]:
    """The notes on splits without the truth-ratio fields (their truth ratios are not computed); a
    split where only some rows have them is an error naming the first row without them."""
    from unlearnkit.data.qa import eval_field_notes

    if not is_in_memory(bench):
        return eval_field_notes(bench)
    return eval_field_notes(
        bench,
        label=lambda split, i, _row: f"data[{split!r}][{i}]",
        split_label=lambda split: f"data[{split!r}]",
    )


def check_oracle_fields(bench) -> None:
    """Forget quality compares truth ratios: every forget row needs its perturbed answers."""
    if not bench.forget or not all("perturbed_answer" in r for r in bench.forget):
        raise UserError(
            f"--retain-model needs truth ratios, but {split_name(bench, 'forget')} has no "
            "paraphrased_answer/perturbed_answer fields; drop --retain-model or add the fields"
        )


def check_eval_lengths(tokenizer, bench, settings) -> None:
    """Every evaluated row's question + answer / paraphrase / perturbed answers fits ``max_length``
    (evaluation never cuts them): a split read from one file, exactly the rows evaluated; a split read
    from several (TOFU's real authors + world facts), all of them (sampled from the union)."""
    from unlearnkit.data.encode import PromptFormat, check_lengths
    from unlearnkit.data.qa import SPLITS
    from unlearnkit.data.sources import split_sources
    from unlearnkit.evaluation.evaluate import select_rows

    fmt = PromptFormat.for_tokenizer(tokenizer, settings.prompt_format)
    for name in SPLITS:
        if is_in_memory(bench):
            sources = [(bench.split(name), split_name(bench, name))]
        else:
            sources = split_sources(bench, name, evaluation=True)
        for rows, where in sources:
            rows = select_rows(rows, settings) if len(sources) == 1 else rows
            check_lengths(
                tokenizer,
                fmt,
                rows,
                where,
                settings.max_length,
                fields=LENGTH_FIELDS,
                hint="evaluation scores at most that many tokens; shorten the row",
                label=row_label(where),
            )


def run_protocol(
    protocol: str,
    model: Loader,
    bench,
    settings,
    *,
    oracle: OtherModel | None = None,
    original: OtherModel | None = None,
    closer_look=None,
    placement: dict | None = None,
    quiet: bool = False,
) -> EvalResult:
    """Evaluate the model ``model`` loads on ``bench`` by ``protocol`` (its inputs checked before):
    the oracle first (its truth ratios, or for MUSE its PrivLeak AUC), then the original's forget
    quality (TOFU), then the model itself, one at a time. ``settings``: :func:`tofu_settings` or
    :func:`muse_settings`; for ``wmdp`` the number of questions per task (None = all). ``bench`` None
    with ``wmdp``: lm-eval's own WMDP and MMLU tasks. ``closer_look``: the closer-look protocol's
    embedding / NLI models (:class:`~unlearnkit.evaluation.closer_look.CloserLookModels`).
    ``placement``: the record of where the models ran, kept in the details. Notes go to stderr
    unless ``quiet``."""
    if protocol == "muse":
        metrics, details = _muse(model, bench, settings, oracle, quiet)
    elif protocol == "wmdp":
        metrics, details = _wmdp(model, bench, settings)
    else:
        return _tofu(protocol, model, bench, settings, oracle, original, closer_look, placement)
    if placement is not None:
        details["placement"] = placement
    return EvalResult(metrics, details, protocol)


def forget_only(bench):
    """``bench`` reduced to its forget split: what the oracle's truth ratios and the original's forget
    quality are measured on."""
    from unlearnkit.data import Benchmark

    return Benchmark(path=bench.path, forget=bench.forget, retain=[], holdout=[], general=[])


def oracle_forget_truth_ratios(oracle: OtherModel, bench, settings) -> list[float] | None:
    """The oracle's per-item forget truth ratios: measured before, or now on ``bench``'s forget rows
    (its truth ratios only: nothing is generated)."""
    from unlearnkit.evaluation import evaluate as E  # looked up now: bench/gpu_check.py wraps E.evaluate

    if "truth_ratios" in oracle.measured:
        return oracle.measured["truth_ratios"]
    model, tokenizer = oracle.load()
    _, details = E.evaluate(model, tokenizer, forget_only(bench), _no_generation(settings))
    return details["forget"].get("truth_ratios")


def _no_generation(settings):
    """``settings`` with no new tokens: an evaluation read only for its truth ratios (the oracle's, the
    original's forget quality) needs no greedy answers."""
    return dataclasses.replace(settings, max_new_tokens=0, max_total_tokens=0)


def original_resolution(original: OtherModel, bench, settings, oracle_trs) -> dict:
    """The original model's forget quality against the oracle (the KS test's resolution on this data):
    read from its evaluation, or measured on the forget split (only its truth ratios are needed: nothing
    is generated)."""
    from unlearnkit.evaluation import evaluate as E

    if "forget_quality" in original.measured:
        fq, n = original.measured["forget_quality"], original.measured.get("n")
        return {"original_model": original.name, "forget_quality": float(fq), "n": n}
    model, tokenizer = original.load()
    metrics, _ = E.evaluate(model, tokenizer, forget_only(bench), _no_generation(settings), oracle_trs)
    return {
        "original_model": original.name,
        "forget_quality": metrics.get("forget_quality"),
        "n": metrics.get("forget_quality_n"),
    }


def _tofu(protocol, model: Loader, bench, settings, oracle, original, closer_look, placement) -> EvalResult:
    from unlearnkit.evaluation import evaluate as E
    from unlearnkit.evaluation.diagnostics import add_resolution

    oracle_trs = oracle_forget_truth_ratios(oracle, bench, settings) if oracle is not None else None
    resolution = None
    if original is not None:
        resolution = original_resolution(original, bench, settings, oracle_trs)
    loaded, tokenizer = model()
    metrics, details = E.evaluate(loaded, tokenizer, bench, settings, oracle_trs)
    if placement is not None:
        details["placement"] = placement
    if resolution is not None:
        add_resolution(metrics, details, resolution)
    if protocol == "closer-look":
        _add_closer_look(metrics, details, closer_look)
    return EvalResult(metrics, details, protocol)


def _add_closer_look(metrics: dict, details: dict, models) -> None:
    """The closer-look aggregates (FE, its authors' FE, MU) and the warnings about what they left out."""
    from unlearnkit.evaluation.closer_look import CloserLookModels, closer_look_metrics
    from unlearnkit.evaluation.diagnostics import closer_look_warnings

    cl_flat, cl_info = closer_look_metrics(metrics, details, models=models or CloserLookModels())
    metrics.update(cl_flat)
    details["closer_look"] = cl_info
    details["warnings"] = details.get("warnings", []) + closer_look_warnings(metrics, cl_info)


def _muse(model: Loader, bench, settings, oracle: OtherModel | None, quiet: bool):
    """MUSE's VerbMem, KnowMem and PrivLeak (against the oracle's Min-K% AUC when there is one)."""
    from unlearnkit.data.sources import describe
    from unlearnkit.protocols.muse import evaluate_muse, privleak_auc

    reference_auc, reference = None, None
    if oracle is not None and oracle.load is not None:
        omodel, otok = oracle.load()
        reference_auc, odet = privleak_auc(
            omodel,
            otok,
            [r["text"] for r in bench.extra["privleak_forget"]],
            [r["text"] for r in bench.extra["privleak_holdout"]],
            settings,
        )
        reference = {"model": oracle.name, "auc": reference_auc, "truncation": odet["truncation"]}
        print_cut_notes({"privleak (retain model)": odet["truncation"]}, quiet)
        del omodel
    elif oracle is not None:
        reference_auc = oracle.measured["auc"]
        reference = {"source": oracle.name, "auc": reference_auc}
    loaded, tokenizer = model()
    metrics, details = evaluate_muse(loaded, tokenizer, bench, settings, reference_auc)
    print_cut_notes(details["truncation"], quiet)
    details["data"] = describe(bench)
    if reference is not None:
        details["privleak_reference"] = reference
    return metrics, details


def _wmdp(model: Loader, bench, max_items: int | None):
    """Multiple-choice accuracy: a WMDP-like folder's tasks, or (``bench`` None) lm-eval's WMDP / MMLU."""
    from unlearnkit.data.sources import describe
    from unlearnkit.protocols.wmdp import evaluate_local_mc, evaluate_wmdp

    loaded, tokenizer = model()
    if bench is None:
        return evaluate_wmdp(loaded, tokenizer)
    metrics, details = evaluate_local_mc(loaded, tokenizer, bench.mc_tasks, bench.mc_style, limit=max_items)
    details["data"] = describe(bench)
    return metrics, details


def print_cut_notes(truncation: dict, quiet: bool = False) -> None:
    """One line per MUSE pass that had to cut prompts or texts to fit the model's positions."""
    for part, cut in truncation.items():
        if cut.get("cut") and not quiet:
            what = "texts" if part.startswith("privleak") else "prompts"
            print(
                f"unlearnkit: note: MUSE {part}: {cut['cut']} of {cut['of']} {what} cut to {cut['limit']} "
                f"tokens to fit the model ({cut['tokens_dropped']} tokens dropped in all); see "
                "details.json truncation",
                file=sys.stderr,
            )


# ------------------------------------------------------------------------------------ the function


def evaluate(
    model: Any,
    tokenizer: Any = None,
    data: Any = None,
    *,
    oracle: Any = None,
    original: Any = None,
    columns: Mapping[str, str] | None = None,
    protocol: str | None = None,
    trust_remote_code: bool = False,
    quiet: bool = False,
    **settings: Any,
) -> EvalResult:
    """Evaluate ``model`` on ``data``; returns an :class:`EvalResult` (``.metrics``, ``.to_json()``,
    ``.save(path)``).

    ``data``: a benchmark folder or name, a ``Benchmark``, or a dict of splits (``{"forget": rows,
    "retain": rows, "holdout": rows, "general": rows}``, rows as for :func:`unlearnkit.unlearn`, renamed
    by ``columns``). ``protocol``: ``"tofu"``, ``"closer-look"``, ``"muse"`` or ``"wmdp"``, as
    ``unlearnkit eval --protocol``; None (the default) takes the one ``data`` calls for (a MUSE-like
    folder: muse; a WMDP-like folder or ``wmdp:bio``: wmdp; question / answer rows: tofu).
    Truth ratios (and so forget quality) need ``paraphrased_answer`` and ``perturbed_answer`` on every
    row of a split. ``oracle``: the retain oracle (an :class:`EvalResult`, a model, an
    ``UnlearnResult``, a ``(model, tokenizer)`` pair, a model or eval folder; or its per-item forget
    truth ratios, for MUSE its PrivLeak AUC) for ``forget_quality`` / ``privleak``; ``original``: the
    model before unlearning (the same forms; needs ``oracle``; TOFU and closer-look) for
    ``original_forget_quality``. ``settings``: TOFU and closer-look: ``max_new_tokens`` (200),
    ``max_items`` (400 per split; closer-look: the first 300), ``batch_size``, ``max_total_tokens``,
    ``seed`` ... as ``unlearnkit eval``'s flags, and for closer-look ``embedder`` / ``nli_model`` (a
    model id or folder, or None to leave that component out); MUSE: ``max_items`` (400 per set) and
    the other ``MuseSettings`` fields; WMDP: ``max_items`` (questions per task, default all).
    Warnings about degenerate numbers are printed (unless ``quiet``) and kept in ``result.warnings``.
    """
    if data is None:
        raise ArgumentError(
            "data: give the benchmark to evaluate on (a folder, a name, or {'forget': rows, ...})"
        )
    if protocol is not None and protocol not in PROTOCOLS:
        raise ArgumentError(f"protocol={protocol!r}: use one of {', '.join(map(repr, PROTOCOLS))} (or None)")
    named = isinstance(data, str) and ":" in data and not Path(data).is_dir()
    if named and protocol is None:
        protocol = named_protocol(data)
    if named and protocol == "wmdp":
        with python_errors(FLAGS):
            check_wmdp_name(data)
        return _evaluate_text(
            "wmdp", model, tokenizer, None, oracle, original, settings, trust_remote_code, quiet
        )
    bench, name = benchmark_of(
        data, "data", columns, eval_fields=named and protocol in ("tofu", "closer-look")
    )
    if protocol is None:
        protocol = fitting_protocol(bench) or "tofu"  # raw text alone: the check below names the fit
    if protocol in ("muse", "wmdp"):
        with python_errors(FLAGS):
            check_text_protocol(bench, protocol, name)
        return _evaluate_text(
            protocol, model, tokenizer, bench, oracle, original, settings, trust_remote_code, quiet
        )
    with python_errors(FLAGS):
        check_protocol_fits(bench, protocol, name)
    return _evaluate_qa(
        protocol, model, tokenizer, bench, named, oracle, original, settings, trust_remote_code, quiet
    )


def named_protocol(name: str) -> str:
    """The protocol a public benchmark's name calls for: ``muse:news`` MUSE's, ``wmdp:bio`` WMDP's,
    ``tofu:forget10`` TOFU's."""
    prefix = name.split(":", 1)[0].strip().lower()
    return prefix if prefix in ("muse", "wmdp") else "tofu"


def _evaluate_qa(
    protocol, model, tokenizer, bench, named, oracle, original, settings, trust_remote_code, quiet
):
    """TOFU and closer-look: the rows checked, then :func:`run_protocol`."""
    st, closer_look = settings_of(protocol, settings, quiet)
    if original is not None and oracle is None:
        raise ArgumentError(
            "original needs oracle: the original's forget quality is measured against the oracle"
        )
    with python_errors(FLAGS):
        notes = [] if named else field_notes(bench)
        if oracle is not None:
            check_oracle_fields(bench)
    model, tokenizer = model_and_tokenizer(model, tokenizer, "model", trust_remote_code)
    with python_errors(FLAGS):
        check_eval_lengths(tokenizer, bench, st)
    for text in notes:
        _print("note", text, quiet)
    oracle_model = None if oracle is None else oracle_of(oracle, tokenizer, "tofu", trust_remote_code)
    original_model = None if original is None else original_of(original, tokenizer, trust_remote_code)
    with python_errors(FLAGS):
        result = run_protocol(
            protocol,
            lambda: (model, tokenizer),
            bench,
            st,
            oracle=oracle_model,
            original=original_model,
            closer_look=closer_look,
            quiet=quiet,
        )
    for warning in result.warnings:
        _print("warning", reworded(warning, FLAGS), quiet)
    return result


def _evaluate_text(protocol, model, tokenizer, bench, oracle, original, settings, trust_remote_code, quiet):
    """MUSE and WMDP: their settings, the oracle (MUSE only), then :func:`run_protocol`."""
    if original is not None:
        raise ArgumentError(
            f"original: the original model's forget quality is a TOFU number; protocol={protocol!r} has none"
        )
    if protocol == "wmdp" and oracle is not None:
        raise ArgumentError("oracle: protocol='wmdp' reports accuracies, which need no oracle; drop oracle=")
    known = _muse_fields() if protocol == "muse" else {"max_items"}
    unknown = sorted(set(settings) - known)
    if unknown:
        raise ArgumentError(
            f"evaluate(protocol={protocol!r}): unknown setting {unknown[0]!r}; the settings are "
            f"{', '.join(sorted(known))}"
        )
    max_items = settings.get("max_items")
    if max_items is not None and (not isinstance(max_items, int) or max_items < 1):
        raise ArgumentError(f"max_items={max_items!r}: must be an integer >= 1 (or None: all)")
    with python_errors(FLAGS):
        st = muse_settings(**settings, progress=not quiet) if protocol == "muse" else max_items
    model, tokenizer = model_and_tokenizer(model, tokenizer, "model", trust_remote_code)
    oracle_model = None if oracle is None else oracle_of(oracle, tokenizer, "muse", trust_remote_code)
    with python_errors(FLAGS):
        return run_protocol(protocol, lambda: (model, tokenizer), bench, st, oracle=oracle_model, quiet=quiet)


def _muse_fields() -> set[str]:
    from unlearnkit.protocols.muse import MuseSettings

    return {f.name for f in dataclasses.fields(MuseSettings)} - {"progress"}


def settings_of(protocol: str, overrides: Mapping[str, Any], quiet: bool):
    """``(EvalSettings, closer-look models or None)`` as ``unlearnkit eval`` builds them: the protocol's
    defaults (200 new tokens; TOFU a seeded sample of at most 400 rows per split, closer-look the first
    300 and 200 tokens in all), then the caller's."""
    from unlearnkit.evaluation.closer_look import CloserLookModels
    from unlearnkit.evaluation.evaluate import EvalSettings

    overrides = dict(overrides)
    closer_look = None
    if protocol == "closer-look":
        defaults = CloserLookModels()
        closer_look = CloserLookModels(
            embedder_id=overrides.pop("embedder", defaults.embedder_id),
            nli_id=overrides.pop("nli_model", defaults.nli_id),
        )
    known = {f.name for f in dataclasses.fields(EvalSettings)} - {"progress"}
    unknown = sorted(set(overrides) - known)
    if unknown:
        extra = ", embedder, nli_model" if protocol == "closer-look" else ""
        raise ArgumentError(
            f"evaluate(): unknown setting {unknown[0]!r}; the settings are {', '.join(sorted(known))}{extra}"
        )
    with python_errors():
        st = tofu_settings(protocol, **{"max_new_tokens": 200, **overrides, "progress": not quiet})
    return st, closer_look


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


def _numbers(value: Any) -> bool:
    return (
        isinstance(value, Sequence)
        and not isinstance(value, (str, tuple))
        and all(isinstance(x, (int, float)) for x in value)
    )


def _eval_folder(value: Any) -> bool:
    """A path to an evaluation's output (folder or JSON file), not to a model folder."""
    return (
        isinstance(value, (str, Path))
        and not (Path(value) / "config.json").is_file()
        and Path(value).exists()
    )


def oracle_of(oracle: Any, tokenizer, protocol: str, trust_remote_code: bool = False) -> OtherModel:
    """The retain oracle in whichever form it came: for TOFU its forget truth ratios (an
    :class:`EvalResult`, the numbers, an eval folder), for MUSE its PrivLeak AUC (an EvalResult, a
    number, an eval folder), or a model in any form :func:`model_and_tokenizer` reads."""
    name = str(oracle) if isinstance(oracle, (str, Path)) else "the oracle given (oracle=)"
    if protocol == "muse":
        from unlearnkit.protocols.muse import load_reference_auc

        if isinstance(oracle, EvalResult):
            auc = oracle.metrics.get("privleak_min_k_auc")
            if not isinstance(auc, (int, float)):
                raise ArgumentError(
                    "oracle: this evaluation has no privleak_min_k_auc (evaluate the oracle with protocol='muse')"
                )
            return OtherModel("an EvalResult", measured={"auc": float(auc)})
        if isinstance(oracle, (int, float)) and not isinstance(oracle, bool):
            return OtherModel(str(oracle), measured={"auc": float(oracle)})
        if _eval_folder(oracle):
            with python_errors(FLAGS):
                return OtherModel(name, measured={"auc": load_reference_auc(oracle)})
    else:
        if isinstance(oracle, EvalResult):
            trs = oracle.forget_truth_ratios
            if not trs:
                raise ArgumentError(
                    "oracle: this evaluation holds no forget truth ratios (its forget rows lacked the fields)"
                )
            return OtherModel("an EvalResult", measured={"truth_ratios": [float(x) for x in trs]})
        if _numbers(oracle):
            return OtherModel(
                "truth ratios given (oracle=)", measured={"truth_ratios": [float(x) for x in oracle]}
            )
        if _eval_folder(oracle):
            from unlearnkit.evaluation.evaluate import oracle_truth_ratios

            with python_errors(FLAGS):
                return OtherModel(name, measured={"truth_ratios": oracle_truth_ratios(oracle)})
    pair = model_and_tokenizer(oracle, tokenizer, "oracle", trust_remote_code)
    return OtherModel(name, load=lambda: pair)


def original_of(original: Any, tokenizer, trust_remote_code: bool = False) -> OtherModel:
    """The model before unlearning: its evaluation against the same oracle (an :class:`EvalResult`
    with ``forget_quality``, or its eval folder / metrics.json), or a model in any form
    :func:`model_and_tokenizer` reads."""
    if isinstance(original, EvalResult):
        if "forget_quality" not in original.metrics:
            raise ArgumentError(
                "original: this evaluation has no forget_quality (evaluate it with oracle= first)"
            )
        measured = {
            "forget_quality": float(original.metrics["forget_quality"]),
            "n": original.metrics.get("forget_quality_n"),
        }
        return OtherModel("an EvalResult", measured=measured)
    name = str(original) if isinstance(original, (str, Path)) else type(original).__name__
    if _eval_folder(original):  # its eval folder (or metrics.json) against the same oracle
        from unlearnkit.io import read_json

        path = Path(original) / "metrics.json" if Path(original).is_dir() else Path(original)
        with python_errors(FLAGS):
            data = read_json(path, "original metrics")
        if not isinstance(data, dict) or not isinstance(data.get("forget_quality"), int | float):
            raise ArgumentError(
                f"original: {path} has no forget_quality (evaluate the original with oracle= first)"
            )
        measured = {"forget_quality": float(data["forget_quality"]), "n": data.get("forget_quality_n")}
        return OtherModel(name, measured=measured)
    pair = model_and_tokenizer(original, tokenizer, "original", trust_remote_code)
    return OtherModel(name, load=lambda: pair)


def _print(kind: str, text: str, quiet: bool) -> None:
    if not quiet:
        print(f"unlearnkit: {kind}: {text}", file=sys.stderr)

"""``run_audit``: every check on the audited model and, side by side, on the oracle and the original.

:class:`Auditor` holds the rows each check asks (subsampled once) and measures one model at a time;
:func:`run_audit` measures every model given, then turns the numbers into the checks
(:mod:`~unlearnkit.evaluation.audit.membership`, :mod:`~unlearnkit.evaluation.audit.relearning`,
:mod:`~unlearnkit.evaluation.audit.quantization`, :mod:`~unlearnkit.evaluation.audit.paraphrase`,
:mod:`~unlearnkit.evaluation.audit.reached`) and the relearning summary.
"""

from __future__ import annotations

import dataclasses
import gc
import math
import sys
from typing import Any

from unlearnkit.data import Benchmark
from unlearnkit.errors import UserError
from unlearnkit.evaluation.audit.common import ROLES, as_number, mean_of, plural
from unlearnkit.evaluation.audit.membership import MIA_ATTACKS, mia_check, text_membership_scores
from unlearnkit.evaluation.audit.paraphrase import (
    paraphrase_probe_rows,
    probe_check,
    qa_only,
    text_paraphrase_check,
)
from unlearnkit.evaluation.audit.quantization import quant_check, text_quant_check
from unlearnkit.evaluation.audit.reached import (
    reached_check,
    reached_rows,
    reached_scores,
    reached_summary,
    reached_warnings,
)
from unlearnkit.evaluation.audit.relearning import (
    TRAINED,
    control_rows,
    control_summary,
    relearn_calibration,
    relearn_check,
    relearn_curve,
    relearn_gaps,
    relearn_halves,
    relearn_reading,
    relearn_warnings,
    text_relearn_check,
    text_relearn_warnings,
    with_retain,
)
from unlearnkit.evaluation.audit.settings import AuditSettings

AUDIT_VERSION = 1


def _as_pair(entry, tokenizer):
    """``model`` or ``(model, tokenizer)`` -> ``(model, tokenizer)`` (default: the audited tokenizer)."""
    if entry is None:
        return None
    if isinstance(entry, (tuple, list)):
        if len(entry) != 2:
            raise TypeError("oracle / original must be a model or a (model, tokenizer) pair")
        return entry[0], entry[1] if entry[1] is not None else tokenizer
    return entry, tokenizer


def _free() -> None:
    gc.collect()
    try:
        import torch

        if torch.cuda.is_available():
            torch.cuda.empty_cache()
    except Exception:  # noqa: BLE001 - freeing memory is best effort
        pass


def is_raw_text(bench) -> bool:
    """True for a raw-text benchmark (``kind`` ``text``: MUSE-like, WMDP-like, plain passages)."""
    return getattr(bench, "kind", None) == "text"


def _text_limit(model, max_length: int) -> int:
    """Tokens of a text scored or trained on at once: ``max_length``, at most the model's positions."""
    from unlearnkit.protocols.muse import model_context

    context = model_context(model)
    return max_length if context is None else min(max_length, context)


class Auditor:
    def __init__(self, bench: Benchmark, settings: AuditSettings) -> None:
        from unlearnkit.evaluation.evaluate import EvalSettings, subsample

        self.st = settings
        self.eval_st = EvalSettings(
            max_new_tokens=settings.max_new_tokens,
            max_items=settings.max_items,
            batch_size=settings.batch_size,
            max_length=settings.max_length,
            prompt_format=settings.prompt_format,
            seed=settings.seed,
            progress=False,
        )
        from unlearnkit.evaluation.probes import data_kind

        self.kind = data_kind(bench)
        self.text = is_raw_text(bench)
        # what the relearning attack mixes in (relearn_retain): the retain rows, never the forget set's
        self.retain_pool: list[dict] = list(bench.retain) if settings.relearn_retain > 0 else []
        self.forget = subsample(bench.forget, settings.max_items, settings.seed)
        self.holdout = subsample(bench.holdout, settings.max_items, settings.seed)
        self.train_idx: list[int] = []
        self.held_idx: list[int] = []
        self.split_by = "entity"  # how the attack's halves were made (relearn_halves; raw text: entities)
        self.relearn_data = "questions"  # what the attack trains on (raw text: _init_text resolves it)
        self.relearn_probes: tuple = ()
        self.control: list[dict] = []  # the control fine-tune's rows (relearn_control)
        self.reached: dict[str, list[dict]] = {}
        self.reached_skip: str | None = "raw-text data: no forget questions to ask another way"
        if self.text:
            if settings.relearn_control != "none":
                raise UserError(
                    f"relearn_control={settings.relearn_control}: {bench.path} is raw text; the control "
                    "fine-tune is for question/answer data: leave relearn_control at none"
                )
            self._init_text(bench)
            return
        if settings.relearn_data == "passages":
            raise UserError(
                f"relearn_data=passages: {bench.path} is question/answer data, which the attack relearns as "
                "its forget questions and answers; leave relearn_data at auto (passages are for raw text)"
            )
        self.forget_qa = qa_only(self.forget)
        self.probes, self.probe_source = paraphrase_probe_rows(self.forget, settings)
        self.reached, self.reached_skip = reached_rows(bench, self.forget, settings.max_items, settings.seed)
        if settings.relearn_steps:
            from unlearnkit.evaluation.probes import data_kind, probes_for

            self.train_idx, self.held_idx, self.split_by = relearn_halves(
                self.forget, settings.relearn_fraction, settings.seed, settings.relearn_split
            )
            # Fact-level (and, per data kind, other) scores beside ROUGE-L at every point of the curve.
            self.relearn_probes = probes_for(data_kind(bench), [self.forget[i] for i in self.held_idx])
            if settings.relearn_control == "retain":
                if not bench.retain:
                    raise UserError(
                        f"relearn_control=retain: {bench.path} has no retain rows to fine-tune the control "
                        "on; add a retain split or leave relearn_control at none"
                    )
                self.control = control_rows(bench.retain, len(self.train_idx), settings.seed)

    def _init_text(self, bench) -> None:
        """Raw text (MUSE-like, WMDP-like): the attack relearns whole entities, the probes are the
        protocol's own passes (:mod:`unlearnkit.evaluation.probes`); no forget questions to reword."""
        from unlearnkit.evaluation.evaluate import subsample
        from unlearnkit.evaluation.probes import ProbeSettings, entity_of, entity_split, probe_rows, text_plan
        from unlearnkit.protocols.muse import MuseSettings

        st = self.st
        if st.probes_path:
            raise UserError(
                f"--probes {st.probes_path}: paraphrase probes reword forget questions, and {bench.path} is "
                "raw text (forget passages); leave --probes out for this data"
            )
        self.bench = bench
        self.forget_qa, self.probes, self.probe_source = [], [], None
        self.plan = text_plan(bench)
        self.probe_st = ProbeSettings(bench, st.batch_size, MuseSettings(batch_size=st.batch_size))
        self.entities: tuple[list[str], list[str]] = ([], [])
        self.attack_rows: list[dict] = []
        self.held_rows: dict[str, list[dict]] = {}  # probe name -> rows (held-out entities / every row)
        self.full_rows: dict[str, list[dict]] = {}  # forget-side probe name -> rows of every entity
        self.curve_metrics: list = []  # the TextMetrics measured at every point of the curve
        self.trained_rows: dict[str, list[dict]] = {}  # probe name -> rows about the relearned entities
        self.trained_metrics: list = []  # the forget-side TextMetrics measured on those rows too
        self.quant_metrics: list = []  # the forget-side TextMetrics measured under quantisation
        self.relearn_skip: str | None = None
        if self.plan is None:
            self.relearn_skip = (
                "plain raw-text data has no probe sets to measure relearning on (a MUSE-like folder has "
                "knowmem_forget / verbmem, a WMDP-like folder multiple-choice tasks)"
            )
            return

        self.relearn_data = self.plan.attack_data(st.relearn_data)  # "passages" or "questions"

        def sub(rows: list[dict]) -> list[dict]:
            return subsample(rows, st.max_items, st.seed)

        for probe in self.plan.probes:
            if probe.held_out:
                rows = sub(probe_rows(probe, bench, None))
                self.full_rows[probe.name] = rows
                self.quant_metrics += [m for m in probe.metrics if m.gap and rows and m.applies(rows)]
        if not st.relearn_steps:
            self.relearn_skip = "relearn_steps is empty"
            return
        self.relearn_skip = self.plan.problem(bench)
        if self.relearn_skip:
            return
        self.entities = entity_split([entity_of(r) for r in bench.forget], st.relearn_fraction, st.seed)
        self.attack_rows = self.plan.attack_rows(bench, self.entities[0], self.relearn_data)
        for probe in self.plan.probes:
            rows = sub(probe_rows(probe, bench, self.entities[1]))
            if rows:
                self.held_rows[probe.name] = rows
                self.curve_metrics += [m for m in probe.metrics if m.applies(rows)]
            # the relearned entities' rows: what the attack teaches (its calibration's control)
            trained = sub(probe_rows(probe, bench, self.entities[0])) if probe.held_out else []
            if trained and rows:
                self.trained_rows[probe.name] = trained
                self.trained_metrics += [
                    m for m in probe.metrics if m.gap and m.applies(rows) and m.applies(trained)
                ]
        if not any(m.gap for m in self.curve_metrics):
            sources = ", ".join(p.source for p in self.plan.probes if p.held_out)
            self.relearn_skip = (
                f"no row of {sources} is about a held-out {self.plan.unit} "
                f"({', '.join(self.entities[1])}): nothing to measure the relearning on"
            )
        elif not self.attack_rows:  # only the questions can be missing: every relearned entity has passages
            self.relearn_skip = (
                f"none of the {self.plan.question_probe.source} questions is about a relearned "  # type: ignore[union-attr]
                f"{self.plan.unit} ({', '.join(self.entities[0])}): nothing to relearn on (relearn_data="
                "passages relearns their passages)"
            )
        if self.relearn_skip:
            self.held_rows, self.curve_metrics = {}, []
            self.trained_rows, self.trained_metrics = {}, []

    def text_scores(self, model, tok, rows_by_probe: dict[str, list[dict]], metrics) -> dict[str, Any]:
        """``{metric key: value}`` of ``metrics``, each probe's pass run once on its rows."""
        wanted = {m.key for m in metrics}
        out: dict[str, Any] = {}
        for probe in self.plan.probes:
            keys = [m.key for m in probe.metrics if m.key in wanted]
            rows = rows_by_probe.get(probe.name)
            if keys and rows:
                values = probe.measure(model, tok, rows, self.probe_st)
                out.update({k: as_number(values.get(k)) for k in keys})
        return out

    def measure_text(self, role: str, model, tok) -> dict[str, Any]:
        """Every number of every check for one model on raw-text data."""
        from unlearnkit.metrics import scores as S

        out: dict[str, Any] = {}
        if self.holdout:
            self.log(f"{role}: forget and holdout texts (membership inference)")
            limit = _text_limit(model, self.st.max_length)
            member = text_membership_scores(
                model, tok, [r["text"] for r in self.forget], limit, self.st.batch_size
            )
            non = text_membership_scores(
                model, tok, [r["text"] for r in self.holdout], limit, self.st.batch_size
            )
            for attack, _label in MIA_ATTACKS:
                out[f"mia_{attack}_auc"] = as_number(S.auc(member[attack], non[attack]))
        if self.quant_metrics:
            self.log(f"{role}: probes on every forget {self.plan.unit}")
            out.update(self.text_scores(model, tok, self.full_rows, self.quant_metrics))
        if self.curve_metrics:
            out["relearn"] = self.relearn_text(role, model, tok)
        for bits in self.st.quant_bits if self.quant_metrics else ():
            from unlearnkit.evaluation.quantize import quantized_copy

            self.log(f"{role}: {bits}-bit quantised copy")
            quant = quantized_copy(model, bits, self.st.group_size)
            scores = self.text_scores(quant, tok, self.full_rows, self.quant_metrics)
            out.update({f"quant{bits}_{k}": v for k, v in scores.items()})
            del quant
            _free()
        return out

    def relearn_text(self, role: str, model, tok) -> dict[str, Any]:
        """The probes on the held-out entities after k relearning steps on the other entities' passages
        (k = 0: before the attack), and the forget-side probes on the relearned entities (``trained_*``:
        what the attack teaches); one run, measured on the way (:func:`relearn_curve`)."""

        def point(m) -> dict[str, Any]:
            out = self.text_scores(m, tok, self.held_rows, self.curve_metrics)
            if self.trained_metrics:
                scores = self.text_scores(m, tok, self.trained_rows, self.trained_metrics)
                out.update({f"{TRAINED}{k}": v for k, v in scores.items()})
            return out

        res: dict[str, Any] = {"0": point(model)}

        def at_step(k: int, attacked) -> None:
            res[str(k)] = point(attacked)

        steps = self.st.relearn_steps
        st = dataclasses.replace(self.st, max_length=_text_limit(model, self.st.max_length))
        rows = with_retain(self.attack_rows, self.retain_pool, self.st.relearn_retain, self.st.seed)
        mixed = (
            f" and {len(rows) - len(self.attack_rows)} retain rows"
            if len(rows) > len(self.attack_rows)
            else ""
        )
        self.log(
            f"{role}: relearning {max(steps)} steps on {len(self.attack_rows)} {self.plan.attack_noun(self.relearn_data)} "
            f"of {plural(len(self.entities[0]), self.plan.unit)}{mixed} (measured at {steps})"
        )
        relearn_curve(model, tok, rows, steps, st, at_step)
        _free()
        return res

    def log(self, msg: str) -> None:
        if self.st.progress:
            print(f"audit: {msg}", file=sys.stderr, flush=True)

    def split(self, model, tok, rows: list[dict], kind: str, max_new_tokens: int | None = None):
        from unlearnkit.data.encode import PromptFormat
        from unlearnkit.evaluation.evaluate import evaluate_split

        st = self.eval_st
        if max_new_tokens is not None:
            st = dataclasses.replace(st, max_new_tokens=max_new_tokens)
        fmt = PromptFormat.for_tokenizer(tok, st.prompt_format)
        return evaluate_split(model, tok, fmt, rows, kind, st)

    def measure(self, role: str, model, tok) -> dict[str, Any]:
        """Every number of every check for one model."""
        from unlearnkit.metrics import scores as S

        if self.text:
            return self.measure_text(role, model, tok)
        out: dict[str, Any] = {}
        self.log(f"{role}: forget questions")
        fm, fd = self.split(model, tok, self.forget_qa, "forget")
        out["forget_rougeL_recall"] = as_number(fm["forget_rougeL_recall"])
        out["forget_prob"] = as_number(fm["forget_prob"])
        if self.holdout:
            self.log(f"{role}: holdout questions (membership inference)")
            _, hd = self.split(model, tok, qa_only(self.holdout), "holdout", max_new_tokens=1)
            for attack, _label in MIA_ATTACKS:
                out[f"mia_{attack}_auc"] = as_number(S.auc(fd["mia"][attack], hd["mia"][attack]))
        if self.st.relearn_steps:
            out["relearn"] = self.relearn(role, model, tok, fd)
            if role == "original" and self.control:
                out["relearn_control"] = self.relearn(role, model, tok, fd, on=self.control)
        for bits in self.st.quant_bits:
            from unlearnkit.evaluation.quantize import quantized_copy

            self.log(f"{role}: {bits}-bit quantised copy")
            quant = quantized_copy(model, bits, self.st.group_size)
            qm, _ = self.split(quant, tok, self.forget_qa, "forget")
            out[f"quant{bits}_forget_rougeL_recall"] = as_number(qm["forget_rougeL_recall"])
            out[f"quant{bits}_forget_prob"] = as_number(qm["forget_prob"])
            del quant
            _free()
        paraphrased = None  # the paraphrase pass's answers, when it asked the rows' paraphrased questions
        if self.probes:
            self.log(f"{role}: paraphrase probes")
            pm, pd = self.split(model, tok, self.probes, "forget")
            out["probe_rougeL_recall"] = as_number(pm["forget_rougeL_recall"])
            out["probe_prob"] = as_number(pm["forget_prob"])
            if self.probe_source == "paraphrased_question":
                paraphrased = pd["generations"]
        if self.reached:
            self.log(f"{role}: the forget facts reached another way")
            out["reached"] = reached_scores(self, model, tok, fd["generations"], paraphrased)
        return out

    def relearn(
        self, role: str, model, tok, forget_details: dict, on: list[dict] | None = None
    ) -> dict[str, Any]:
        """Forget ROUGE / prob (and the probes, e.g. fact recall) after k relearning steps (k = 0:
        before the attack), on the held half (``rougeL_recall``, ``prob``, ``fact_recall``) and on the
        half the attack trains on (``trained_rougeL_recall``, ``trained_prob``, ``trained_fact_recall``).

        The held half is the attack's question (does knowledge the attack never showed come back?); the
        trained half is its control: an attack that does not teach the oracle the facts it is shown is too
        weak for "survives relearning" to mean anything (:func:`relearn_calibration`). One relearning run
        up to the largest k, measured at every k on the way (the curve): the same numbers as separate runs
        of k steps each, because the schedule is constant and the measurements leave the random state
        untouched (see :func:`relearn_curve`). ``on``: fine-tune on these rows instead of the trained half,
        measured the same way (the control fine-tune of ``relearn_control``)."""
        held = [self.forget_qa[i] for i in self.held_idx]
        train = [self.forget_qa[i] for i in self.train_idx]
        res: dict[str, Any] = {
            "0": {
                **self._half_scores(forget_details, self.held_idx),
                **self._half_scores(forget_details, self.train_idx, TRAINED),
            }
        }

        def at_step(k: int, attacked) -> None:
            _, d = self.split(attacked, tok, held, "forget")
            _, td = self.split(attacked, tok, train, "forget")
            res[str(k)] = {
                **self._half_scores(d, range(len(held)), rows=self.held_idx),
                **self._half_scores(td, range(len(train)), TRAINED, rows=self.train_idx),
            }

        steps = self.st.relearn_steps
        shown = train if on is None else [dict(r) for r in on]
        rows = with_retain(shown, self.retain_pool, self.st.relearn_retain, self.st.seed)
        mixed = f" and {len(rows) - len(shown)} retain items" if len(rows) > len(shown) else ""
        what = "relearning" if on is None else "control fine-tune,"
        control = self.st.relearn_control if self.st.relearn_control != "none" else "control"
        noun = "forget items" if on is None else f"{control} items"
        self.log(f"{role}: {what} {max(steps)} steps on {len(shown)} {noun}{mixed} (measured at {steps})")
        relearn_curve(model, tok, rows, steps, self.st, at_step)
        _free()
        return res

    def _half_scores(
        self, details: dict, positions, prefix: str = "", rows: list[int] | None = None
    ) -> dict[str, float | None]:
        """ROUGE-L recall, answer probability and the probes of one half, from an evaluation's per-item
        ``details``: ``positions`` index the details, ``rows`` (default: ``positions``) the forget rows
        they are about; keys prefixed with ``prefix`` (``trained_`` for the half the attack trains on)."""
        positions = list(positions)
        rows = positions if rows is None else rows
        rouge, nll, gens = details["rougeL_recall"], details["nll_mean"], details["generations"]
        out: dict[str, float | None] = {
            f"{prefix}rougeL_recall": mean_of([rouge[i] for i in positions]),
            f"{prefix}prob": mean_of([math.exp(-nll[i]) for i in positions]),
        }
        scored = self._probe_scores([gens[i] for i in positions], [self.forget[j] for j in rows])
        out.update({f"{prefix}{key}": value for key, value in scored.items()})
        return out

    def _probe_scores(self, generations: list[str], rows: list[dict]) -> dict[str, float | None]:
        return {p.key: as_number(p.score(generations, rows)) for p in self.relearn_probes}


def check_audit_data(
    bench: Benchmark,
    settings: AuditSettings,
    relearn_off: str = "--relearn-steps none",
    has_original: bool = True,
) -> None:
    """What the audit needs of ``bench`` under ``settings``, checked before any model is loaded (the
    command and :func:`unlearnkit.audit` both call it): two forget items for the relearning attack (it
    relearns some and asks the others), and every row the checks will read (:class:`Auditor`).
    ``relearn_off``: how the caller turns the attack off, for the error. ``has_original``: whether the
    original model is given (the control fine-tune, ``relearn_control``, trains it)."""
    if settings.relearn_steps and not is_raw_text(bench) and len(bench.forget) < 2:
        raise UserError(f"the relearning attack needs at least 2 forget items; pass {relearn_off}")
    check_control(settings, has_original)
    Auditor(bench, settings)


def check_control(settings: AuditSettings, has_original: bool) -> None:
    """The control fine-tune (``relearn_control``) trains the original model: one clear error without it."""
    if settings.relearn_control != "none" and settings.relearn_steps and not has_original:
        raise UserError(
            f"relearn_control={settings.relearn_control} fine-tunes the original (target) model beside the "
            "attack: give the original model (--original-model), or leave relearn_control at none"
        )


def run_audit(
    model,
    tokenizer,
    bench: Benchmark,
    *,
    oracle=None,
    original=None,
    settings: AuditSettings | None = None,
    names: dict[str, str] | None = None,
    method: str | None = None,
) -> dict[str, Any]:
    """Run every check on ``model`` (and on ``oracle`` / ``original`` when given) and return the audit.

    ``oracle`` and ``original`` are a model (sharing ``tokenizer``) or a ``(model, tokenizer)`` pair.
    ``names`` (e.g. the model folders) are recorded in the card; ``method`` (e.g. ``"npo"``) names the
    audited model's role in the card's headings. None of the models is modified.
    The result is JSON-ready: ``{"version", "settings", "models", "method", "data", "checks": [...],
    "verdicts": [...], "warnings": [...], "reached", "relearn_probes", "relearn_curve", "relearn_gap",
    "relearn_gap_0", "relearn_gap_20", "relearn_gap_20_note", "relearn_final_step", "relearn_gap_final",
    "relearn_gap_final_note", "relearn_reading", "relearn_calibration"}`` plus, per probe of the data
    kind (QA with ``fact_value``: ``fact``), ``relearn_gap_fact``, ``relearn_gap_fact_0``,
    ``relearn_gap_fact_20``, ``relearn_gap_fact_final`` and ``relearn_reading_fact``; each check has
    ``rows`` of ``{"label", "audited", "oracle", "original"}`` and a ``verdict`` line.

    Each point of ``relearn_curve[role][k]`` holds the held half's numbers (``rougeL_recall``, ``prob``,
    ``fact_recall``: the attack's question) and the trained half's (``trained_rougeL_recall``,
    ``trained_prob``, ``trained_fact_recall``: what the attack teaches). ``relearn_gap_final`` = audited
    minus oracle forget ROUGE-L on the held half after the curve's last step, ``relearn_final_step``
    (None, with the reason in ``relearn_gap_final_note``, without an oracle); the readings
    (:func:`~unlearnkit.evaluation.audit.relearning.relearn_reading`) are read there too, because that is
    where ``relearn_calibration`` (:func:`~unlearnkit.evaluation.audit.relearning.relearn_calibration`)
    says whether the attack can teach (the oracle's trained-half fact recall) and leaves the target
    intact (its held-half fact recall); a failing bar is a ``warnings`` entry. ``relearn_gap_20`` is the
    same gap after 20 steps (None, with the reason in ``relearn_gap_20_note``, without a 20-step point);
    ``relearn_gap_0`` before the attack. ``relearn_headline``: ``{"key", "metric", "label", "step",
    "value", "note"}`` of the gap to read (``relearn_gap_final`` for QA data). ``reached``
    (:func:`~unlearnkit.evaluation.audit.reached.reached_summary`): fact recall of the forget facts asked
    directly, paraphrased, by alias and multi-hop, per role, and its reading (``skipped`` says why when the
    folder has no probe files; raw-text data always skips it).

    Raw-text data (:func:`is_raw_text`): the curve's points hold the plan's metrics (MUSE-like:
    ``knowmem_f1``, ``knowmem_fact_recall``, ``verbmem_f1``, ``knowmem_retain_f1``; WMDP-like:
    ``hazard_acc``, ``general_acc``), each forget-side one with ``relearn_gap_<short>`` (by step),
    ``_0``, ``_20``, ``_final`` and ``relearn_reading_<short>`` (``knowmem``, ``knowmem_fact``,
    ``verbmem``; ``hazard``), and, prefixed ``trained_``, on the relearned entities' rows;
    ``relearn_calibration`` reads the headline metric (the bars were set on QA data: no warning comes from
    it here); ``measured`` holds the same metrics on every forget entity's rows and
    ``quant<bits>_<metric>``; ``data`` adds ``relearn_entities`` and the rows per probe set.
    """
    st = settings or AuditSettings()
    check_control(st, original is not None)
    auditor = Auditor(bench, st)
    pairs = {"audited": (model, tokenizer), "oracle": _as_pair(oracle, tokenizer)}
    pairs["original"] = _as_pair(original, tokenizer)
    roles = [r for r in ROLES if pairs[r] is not None]
    measured = {role: auditor.measure(role, *pairs[role]) for role in roles}
    reached = reached_summary(measured, auditor)
    if auditor.text:
        checks = [
            mia_check(measured, auditor),
            text_relearn_check(measured, auditor),
            text_quant_check(measured, auditor),
            text_paraphrase_check(auditor),
        ]
    else:
        checks = [
            mia_check(measured, auditor),
            relearn_check(measured, auditor),
            quant_check(measured, auditor),
            probe_check(measured, auditor),
            reached_check(measured, auditor, reached),
        ]
    settings_dict = dataclasses.asdict(st)
    settings_dict.pop("progress", None)
    curve = {role: measured[role]["relearn"] for role in roles if "relearn" in measured[role]}

    final = str(max(st.relearn_steps)) if st.relearn_steps else None

    def missing_gap(what: str, step: str | None = "20") -> str:
        return (
            "the relearning attack was skipped (relearn_steps is empty)"
            if not st.relearn_steps
            else f"the relearning attack was skipped: {auditor.relearn_skip}"
            if auditor.text and auditor.relearn_skip
            else "no retain oracle was given: the gap is measured against it"
            if "oracle" not in curve
            else f"{step} is not among relearn_steps"
            if step is not None and int(step) not in st.relearn_steps
            else f"the {what} after {step} steps could not be computed"
        )

    if auditor.text:
        summary, probes, warnings = _text_summary(curve, measured, auditor, missing_gap, final)
    else:
        control = control_summary(measured, auditor)
        gaps = relearn_gaps(curve)
        gap20, gap_final = gaps.get("20"), gaps.get(final) if final else None
        note20 = None if gap20 is not None else missing_gap("forget ROUGE-L")
        note_final = None if gap_final is not None else missing_gap("forget ROUGE-L", final)
        summary = {
            "relearn_curve": curve,
            "relearn_gap": gaps,
            "relearn_gap_0": gaps.get("0"),
            "relearn_gap_20": gap20,
            "relearn_gap_20_note": note20,
            "relearn_final_step": int(final) if final else None,
            "relearn_gap_final": gap_final,
            "relearn_gap_final_note": note_final,
            "relearn_reading": relearn_reading(gaps, final) if final else None,
            "relearn_calibration": relearn_calibration(curve, control=control),
            "relearn_control": control,
        }
        probes = []
        for probe in auditor.relearn_probes:
            pgaps = relearn_gaps(curve, probe.key)
            summary[f"relearn_gap_{probe.short}"] = pgaps
            summary[f"relearn_gap_{probe.short}_0"] = pgaps.get("0")
            summary[f"relearn_gap_{probe.short}_20"] = pgaps.get("20")
            summary[f"relearn_gap_{probe.short}_final"] = pgaps.get(final) if final else None
            summary[f"relearn_reading_{probe.short}"] = relearn_reading(pgaps, final) if final else None
            probes.append(
                {"key": probe.key, "short": probe.short, "label": probe.label, "about": probe.about}
            )
        summary["relearn_headline"] = {
            "key": "relearn_gap_final",
            "metric": "rougeL_recall",
            "label": "forget ROUGE-L",
            "step": summary["relearn_final_step"],
            "value": gap_final,
            "note": note_final,
        }
        warnings = relearn_warnings(measured, st, control) + reached_warnings(reached)
    return {
        "version": AUDIT_VERSION,
        "settings": settings_dict,
        "models": {role: (names or {}).get(role, role) for role in roles},
        "method": method,
        "data": _data_summary(bench, auditor),
        "measured": measured,
        "checks": checks,
        "verdicts": [c["verdict"] for c in checks],
        "warnings": warnings,
        "relearn_probes": probes,
        "reached": reached,
        **summary,
    }


def _data_summary(bench: Benchmark, auditor: Auditor) -> dict[str, Any]:
    data: dict[str, Any] = {
        "path": str(bench.path),
        "kind": auditor.kind,
        "forget_items": len(auditor.forget),
        "holdout_items": len(auditor.holdout),
        "relearn_train_items": len(auditor.train_idx),
        "relearn_held_items": len(auditor.held_idx),
        "relearn_split": auditor.split_by if auditor.train_idx else None,
        "probe_items": len(auditor.probes),
        "probe_source": auditor.probe_source if auditor.probes else None,
        "reached_items": {name: len(rows) for name, rows in auditor.reached.items()},
    }
    if auditor.text:
        plan = auditor.plan
        headline = (
            next((p for p in plan.probes if any(m.key == plan.headline for m in p.metrics)), None)
            if plan
            else None
        )
        data["relearn_train_items"] = len(auditor.attack_rows)
        data["relearn_held_items"] = len(auditor.held_rows.get(headline.name, [])) if headline else 0
        data["relearn_entities"] = {
            "unit": plan.unit if plan else None,
            "relearned": auditor.entities[0],
            "held_out": auditor.entities[1],
        }
        data["relearn_rows"] = (
            {p.source: len(auditor.held_rows.get(p.name, [])) for p in plan.probes} if plan else {}
        )
        data["relearn_trained_rows"] = (
            {
                p.source: len(auditor.trained_rows[p.name])
                for p in plan.probes
                if p.name in auditor.trained_rows
            }
            if plan
            else {}
        )
        data["quant_rows"] = (
            {p.source: len(auditor.full_rows[p.name]) for p in plan.probes if p.name in auditor.full_rows}
            if plan
            else {}
        )
    return data


def _text_summary(
    curve: dict, measured: dict, auditor: Auditor, missing_gap, final: str | None
) -> tuple[dict, list, list]:
    """The relearning summary of raw-text data: per forget-side metric ``relearn_gap_<short>`` (by step),
    ``_0``, ``_20``, ``_final`` (the curve's last step) and ``relearn_reading_<short>`` (read at the last
    step); ``relearn_headline`` names the plan's headline gap at the last step; ``relearn_calibration``
    reads the headline metric on the relearned entities (the oracle) and the held-out ones (the target).
    ``relearn_gap_20`` (forget ROUGE-L of QA data) is None with the reason."""
    plan = auditor.plan
    summary: dict[str, Any] = {
        "relearn_curve": curve,
        "relearn_gap": {},
        "relearn_gap_0": None,
        "relearn_gap_20": None,
        "relearn_final_step": int(final) if final else None,
        "relearn_gap_final": None,
        "relearn_reading": None,
        "relearn_calibration": None,
    }
    probes = []
    for metric in auditor.curve_metrics:
        entry = {"key": metric.key, "short": metric.short, "label": metric.label, "about": metric.about}
        entry.update(gap=metric.gap, on=f"held-out {plan.unit}s" if metric.gap else "every question")
        probes.append(entry)
        if metric.gap:
            pgaps = relearn_gaps(curve, metric.key)
            summary[f"relearn_gap_{metric.short}"] = pgaps
            summary[f"relearn_gap_{metric.short}_0"] = pgaps.get("0")
            summary[f"relearn_gap_{metric.short}_20"] = pgaps.get("20")
            summary[f"relearn_gap_{metric.short}_final"] = pgaps.get(final) if final else None
            summary[f"relearn_reading_{metric.short}"] = relearn_reading(pgaps, final) if final else None
    if plan is None:
        summary["relearn_gap_20_note"] = f"plain raw-text data: {auditor.relearn_skip}"
        summary["relearn_headline"] = None
        return summary, probes, []
    head = plan.metric(plan.headline)
    key = f"relearn_gap_{head.short}_final"
    value = summary.get(key)
    summary["relearn_gap_20_note"] = (
        f"raw-text data ({plan.what}): no forget questions to score with ROUGE-L; the relearning gap is "
        f"{key} ({head.label})"
    )
    summary["relearn_headline"] = {
        "key": key,
        "metric": head.key,
        "label": head.label,
        "step": summary["relearn_final_step"],
        "value": value,
        "note": None if value is not None else missing_gap(head.label, final),
    }
    if any(m.key == head.key for m in auditor.trained_metrics):
        summary["relearn_calibration"] = relearn_calibration(curve, head.key, head.label)
    return summary, probes, text_relearn_warnings(measured, auditor.st, auditor.curve_metrics)

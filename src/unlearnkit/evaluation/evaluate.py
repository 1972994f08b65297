"""Evaluation protocols over a benchmark folder.

``tofu`` (arXiv 2401.06121): per split, length-normalised probability, greedy generation + ROUGE-L
recall, truth ratio; forget quality (KS test vs the retain oracle's per-item forget truth ratios);
model utility (harmonic mean over retain and general). ``general`` plays TOFU's real-authors /
world-facts role (option-normalised probability, "true better" truth ratio of the ANSWER against the
perturbed answers, as TOFU / open-unlearning: no paraphrase there), so model utility here is the
harmonic mean of 6 numbers instead of TOFU's 9 (no separate real-authors split).
Also: token entropy of generations (closer-look protocol), exact memorisation and extraction
strength (without the EOS prediction, as open-unlearning) and membership-inference AUCs (forget vs
holdout) when a holdout split exists. Conventions and parity: docs/CONVENTIONS.md.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from unlearnkit.data import Benchmark
from unlearnkit.data.encode import DEFAULT_DATE_STRING, DEFAULT_SYSTEM_PROMPT, PromptFormat
from unlearnkit.errors import UserError
from unlearnkit.metrics import mia
from unlearnkit.metrics import scores as S
from unlearnkit.metrics.passes import generate_answers, score_answers


@dataclass
class EvalSettings:
    """How much to evaluate. Defaults: the TOFU protocol as open-unlearning runs it (200 new tokens,
    a deterministic sample of at most ``max_items`` rows per split); :func:`closer_look_settings`
    gives the closer-look protocol's (first 300 rows, 200 tokens in total)."""

    max_new_tokens: int = 200
    max_items: int = 400  # per split (TOFU's perturbed retain split has 400)
    # How max_items rows are chosen from a longer split: "sample" (a seeded random subset, kept in
    # file order) or "first" (the first max_items rows: the closer-look / TOFU code's ``ds_size``).
    row_selection: str = "sample"
    # > 0: prompt + generation capped at this many tokens (TOFU's and closer-look's
    # ``generation.max_length: 200``, ``max_new_tokens: null``), on top of max_new_tokens; 0: off.
    max_total_tokens: int = 0
    batch_size: int = 32
    max_length: int = 512
    prompt_format: str = "auto"
    system_prompt: str = DEFAULT_SYSTEM_PROMPT  # chat templates only ("" = none, "auto" = per family)
    date_string: str = DEFAULT_DATE_STRING  # chat templates only (Llama-3.x print it)
    seed: int = 0
    progress: bool = True

    def __post_init__(self) -> None:
        if self.row_selection not in ROW_SELECTIONS:
            raise UserError(
                f"row_selection '{self.row_selection}' is unknown; use {' or '.join(ROW_SELECTIONS)}"
            )
        if self.max_total_tokens < 0:
            raise UserError(f"max_total_tokens {self.max_total_tokens}: must be >= 0 (0 = no total cap)")


ROW_SELECTIONS = ("sample", "first")
CLOSER_LOOK_DS_SIZE = 300  # sail-sg/closer-look-LLM-unlearning config/tofu.yaml: ds_size: 300
CLOSER_LOOK_MAX_TOTAL_TOKENS = 200  # its generation.max_length: 200, max_new_tokens: null


def closer_look_settings(**overrides: Any) -> EvalSettings:
    """The closer-look protocol's evaluation settings (Yuan et al., arXiv 2410.08109, whose code
    inherits TOFU's evaluator): the first ``ds_size = 300`` rows of every split, in file order, and
    greedy generation capped at 200 tokens in total (prompt + answer). ``overrides`` win."""
    values: dict[str, Any] = {
        "max_items": CLOSER_LOOK_DS_SIZE,
        "row_selection": "first",
        "max_total_tokens": CLOSER_LOOK_MAX_TOTAL_TOKENS,
    }
    values.update(overrides)
    return EvalSettings(**values)


def subsample(rows: Sequence[dict], n: int, seed: int) -> list[dict]:
    if len(rows) <= n:
        return list(rows)
    keep = sorted(random.Random(seed).sample(range(len(rows)), n))
    return [rows[i] for i in keep]


def select_rows(rows: Sequence[dict], st: EvalSettings) -> list[dict]:
    """The rows of one split that ``st`` evaluates: at most ``st.max_items``, by ``st.row_selection``."""
    if st.row_selection == "first":
        return list(rows[: st.max_items])
    return subsample(rows, st.max_items, st.seed)


def _mean(xs: Sequence[float]) -> float:
    return float(np.mean(xs)) if len(xs) else float("nan")


def truth_ratio_key(rows: Sequence[dict], kind: str) -> str:
    """The right answer a truth ratio weighs against the perturbed ones: the paraphrase, whose wording
    the perturbed answers share (TOFU's convention). TOFU's real authors / world facts carry no paraphrase
    (their short answer is its own: TOFU and open-unlearning score ``answer`` there); general rows that do
    carry one (the embedded world's sentences, perturbed from the paraphrase) are scored on it."""
    if kind == "general" and not all(isinstance(r.get("paraphrased_answer"), str) for r in rows):
        return "answer"
    return "paraphrased_answer"


def evaluate_split(
    model, tokenizer, fmt: PromptFormat, rows: Sequence[dict], kind: str, st: EvalSettings
) -> tuple[dict[str, float], dict[str, Any]]:
    """Metrics of one split. ``kind``: forget | retain | general | holdout (decides the aggregates)."""
    desc = (lambda what: f"{kind} {what}") if st.progress else (lambda what: None)
    questions = [r["question"] for r in rows]
    answers = [r["answer"] for r in rows]
    correct_key = truth_ratio_key(rows, kind)
    has_tr = all(correct_key in r and "perturbed_answer" in r for r in rows)
    per_token = kind in ("forget", "holdout")
    ans = score_answers(
        model, tokenizer, fmt, questions, answers, st.max_length, st.batch_size, per_token, desc("answers")
    )
    gens, gen_ids = generate_answers(
        model,
        tokenizer,
        fmt,
        questions,
        st.max_new_tokens,
        st.batch_size,
        desc("generation"),
        max_total_tokens=st.max_total_tokens,
    )
    out: dict[str, float] = {}
    details: dict[str, Any] = {"questions": questions, "answers": answers, "generations": gens}
    if rows and all(isinstance(r.get("original_answer"), str) and r["original_answer"].strip() for r in rows):
        # The closer-look authors' copies of real authors / world facts carry the full sentence the
        # short answer comes from; their cosine / entailment read it (evaluation/closer_look.py).
        details["original_answers"] = [r["original_answer"] for r in rows]
    rouge = S.rouge_l_recalls(gens, answers)
    out[f"{kind}_rougeL_recall"] = _mean(rouge)
    out[f"{kind}_token_entropy"] = _mean([S.token_entropy(ids) for ids in gen_ids])
    details["rougeL_recall"] = rouge
    trs: list[float] = []
    if has_tr:
        pert_flat = [(q, p) for r in rows for q, p in [(r["question"], x) for x in r["perturbed_answer"]]]
        if correct_key == "answer":
            para = ans.nll_mean
        else:
            para = score_answers(
                model,
                tokenizer,
                fmt,
                questions,
                [r["paraphrased_answer"] for r in rows],
                st.max_length,
                st.batch_size,
                desc=desc("paraphrases"),
            ).nll_mean
        pert = score_answers(
            model,
            tokenizer,
            fmt,
            [q for q, _ in pert_flat],
            [p for _, p in pert_flat],
            st.max_length,
            st.batch_size,
            desc=desc("perturbed"),
        ).nll_mean
        pos = 0
        pert_per_row = []
        for r in rows:
            n = len(r["perturbed_answer"])
            pert_per_row.append(pert[pos : pos + n])
            pos += n
        trs = [S.truth_ratio(p, ps) for p, ps in zip(para, pert_per_row)]
        details["truth_ratios"] = trs
        if kind == "forget":
            out[f"{kind}_truth_ratio"] = S.forget_truth_ratio_score(trs)
        else:
            out[f"{kind}_truth_ratio"] = S.true_better_truth_ratio_score(trs)
    if kind == "general" and has_tr:
        # TOFU's normalised probability of the right option among the wrong ones: the right one in the
        # wrong ones' wording (the answer itself on TOFU's short answers, the paraphrase on sentences).
        out[f"{kind}_prob"] = _mean([S.option_normalised_prob(a, ps) for a, ps in zip(para, pert_per_row)])
    else:
        out[f"{kind}_prob"] = _mean([math.exp(-x) for x in ans.nll_mean])
    details["nll_mean"] = ans.nll_mean
    if per_token:
        import torch

        # open-unlearning drops the EOS prediction from both (it is the last answer token here).
        matches = [torch.tensor(m[:-1] if len(m) > 1 else m) for m in ans.argmax_match]
        out[f"{kind}_exact_memorisation"] = _mean([float(m.float().mean()) for m in matches])
        out[f"{kind}_extraction_strength"] = _mean([_extraction(m) for m in matches])
        details["mia"] = _mia_scores(ans, answers)
    return out, details


def _extraction(match) -> float:
    import torch

    ones = torch.ones_like(match, dtype=torch.bool).unsqueeze(0)
    return float(
        S.extraction_strength(match.long().unsqueeze(0), torch.ones_like(match).long().unsqueeze(0), ones)[0]
    )


def _mia_scores(ans, texts: Sequence[str]) -> dict[str, list[float]]:
    """Per-item membership scores (higher = more likely trained on) for the four attacks."""
    import torch
    from torch.nn.utils.rnn import pad_sequence

    def padded(rows, drop_eos):
        # open-unlearning's Min-K% / Min-K%++ read per-token log-probs without the EOS prediction;
        # its LOSS / zlib attacks read the whole answer's mean NLL (EOS included).
        rows = [x[:-1] if drop_eos and len(x) > 1 else x for x in rows]
        values = pad_sequence([torch.tensor(x) for x in rows], batch_first=True)
        mask = pad_sequence([torch.ones(len(x), dtype=torch.bool) for x in rows], batch_first=True)
        return values, mask

    lp, mask = padded(ans.token_logps, False)
    lp_k, mask_k = padded(ans.token_logps, True)
    mu, _ = padded(ans.mu, True)
    sd, _ = padded(ans.sigma, True)
    return {
        "loss": mia.loss_score(lp, mask).tolist(),
        "zlib": mia.zlib_score(lp, mask, list(texts)).tolist(),
        "min_k": mia.min_k_score(lp_k, mask_k, 0.4).tolist(),
        "min_k_plus_plus": mia.min_k_plus_plus_score(lp_k, mu, sd, mask_k, 0.4).tolist(),
    }


RECORDED_SETTINGS = ("max_items", "row_selection", "max_new_tokens", "max_total_tokens", "seed")

UTILITY_KEYS = (
    "retain_prob",
    "retain_rougeL_recall",
    "retain_truth_ratio",
    "general_prob",
    "general_rougeL_recall",
    "general_truth_ratio",
)


def evaluate(
    model,
    tokenizer,
    bench: Benchmark,
    settings: EvalSettings | None = None,
    oracle_forget_trs: Sequence[float] | None = None,
) -> tuple[dict[str, float], dict[str, Any]]:
    """TOFU-protocol metrics of ``model`` on ``bench``; forget quality when the oracle's TRs are given."""
    st = settings or EvalSettings()
    fmt = PromptFormat.for_settings(tokenizer, st)
    metrics: dict[str, float] = {}
    details: dict[str, Any] = fmt.describe()  # prompt format, system prompt and date (chat)
    details["eval_settings"] = {k: getattr(st, k) for k in RECORDED_SETTINGS}  # rows and generation cap
    rows_of = getattr(bench, "eval_split", bench.split)  # TOFU: truth ratios on retain_perturbed
    evaluated: dict[str, list[dict]] = {}
    for kind in ("forget", "retain", "general", "holdout"):
        rows = evaluated[kind] = select_rows(rows_of(kind), st)
        if not rows:
            continue
        split_metrics, split_details = evaluate_split(model, tokenizer, fmt, rows, kind, st)
        metrics.update(split_metrics)
        details[kind] = split_details
    if getattr(bench, "general_parts", None):
        # Real TOFU: real authors and world facts reported apart; utility = harmonic mean of 9 numbers.
        part_metrics, part_details = general_part_metrics(model, tokenizer, bench, st)
        metrics.update(part_metrics)
        details.update(part_details)
        if all(k in metrics for k in TOFU_UTILITY_KEYS):
            metrics["model_utility"] = tofu_model_utility(metrics)
        else:  # a folder whose general parts lack truth-ratio fields: the numbers there are
            keys = [
                f"{p}_{m}"
                for p in ("retain", *part_metrics_parts(bench))
                for m in ("prob", "rougeL_recall", "truth_ratio")
            ]
            present = [metrics[k] for k in keys if k in metrics and not math.isnan(metrics[k])]
            metrics["model_utility"] = S.harmonic_mean(present) if present else float("nan")
    else:
        present = [metrics[k] for k in UTILITY_KEYS if k in metrics and not math.isnan(metrics[k])]
        metrics["model_utility"] = S.harmonic_mean(present) if present else float("nan")
    if "holdout" in details and "mia" in details["forget"]:
        for attack, member in details["forget"]["mia"].items():
            metrics[f"mia_{attack}_auc"] = S.auc(member, details["holdout"]["mia"][attack])
    if oracle_forget_trs is not None and "truth_ratios" in details["forget"]:
        metrics["forget_quality"] = S.forget_quality(details["forget"]["truth_ratios"], oracle_forget_trs)
        metrics["forget_quality_n"] = len(details["forget"]["truth_ratios"])
        metrics["forget_quality_oracle_n"] = len(oracle_forget_trs)
    # The fact-level score where rows carry fact_value; warnings for degenerate numbers.
    from unlearnkit.evaluation.diagnostics import evaluation_warnings
    from unlearnkit.evaluation.probes import fact_metrics

    metrics.update(fact_metrics(evaluated, details))
    metrics.update(_reworded_fact_recall(model, tokenizer, fmt, evaluated.get("forget") or [], st, details))
    details["warnings"] = evaluation_warnings(metrics, evaluated)
    return metrics, details


def _reworded_fact_recall(model, tokenizer, fmt, rows: Sequence[dict], st: EvalSettings, details) -> dict:
    """``forget_para_fact_recall``: the share of forget questions, asked in their never-trained wording
    (``paraphrased_question``), whose fact value the greedy answer states. Knowing a fact means stating it
    however it is asked; a model that only learned (or only unlearned) one wording differs here from the
    direct ``forget_fact_recall``. Only for rows that carry both fields (the embedded world's)."""
    from unlearnkit.evaluation.probes import fact_recall, has_facts

    if (
        not rows
        or not has_facts(rows)
        or not all(isinstance(r.get("paraphrased_question"), str) for r in rows)
    ):
        return {}
    gens, _ = generate_answers(
        model,
        tokenizer,
        fmt,
        [r["paraphrased_question"] for r in rows],
        st.max_new_tokens,
        st.batch_size,
        "forget reworded" if st.progress else None,
        max_total_tokens=st.max_total_tokens,
    )
    details["forget"]["paraphrased_generations"] = gens
    return {"forget_para_fact_recall": fact_recall(gens, rows)}


# TOFU model utility (arXiv 2401.06121): {prob, ROUGE-L recall, truth ratio} on 3 parts.
TOFU_UTILITY_PARTS = ("retain", "real_authors", "world_facts")
TOFU_UTILITY_KEYS = tuple(
    f"{part}_{metric}" for part in TOFU_UTILITY_PARTS for metric in ("prob", "rougeL_recall", "truth_ratio")
)


def general_part_metrics(model, tokenizer, bench, settings=None) -> tuple[dict[str, float], dict[str, Any]]:
    """TOFU metrics of each part of ``bench.general_parts`` (keys ``real_authors_prob`` ...).

    Every part is scored like the ``general`` split of :func:`evaluate_split`
    (option-normalised probability, "true better" truth ratio), with the ``general_`` prefix replaced
    by the part's name. A benchmark without parts gives ``({}, {})``.
    """
    parts = getattr(bench, "general_parts", None) or {}
    st = settings or EvalSettings()
    fmt = PromptFormat.for_settings(tokenizer, st)
    metrics: dict[str, float] = {}
    details: dict[str, Any] = {}
    for name, rows in parts.items():
        rows = select_rows(rows, st)
        if not rows:
            continue
        part_metrics, details[name] = evaluate_split(model, tokenizer, fmt, rows, "general", st)
        metrics.update({f"{name}_{k.removeprefix('general_')}": v for k, v in part_metrics.items()})
    return metrics, details


def part_metrics_parts(bench) -> list[str]:
    return list(getattr(bench, "general_parts", None) or {})


def tofu_model_utility(metrics: dict[str, float]) -> float:
    """Harmonic mean of TOFU's 9 utility numbers; a missing one is an error (never a silent 6-number mean)."""
    missing = [k for k in TOFU_UTILITY_KEYS if k not in metrics]
    if missing:
        raise UserError(f"TOFU model utility needs {', '.join(missing)}")
    return S.harmonic_mean([metrics[k] for k in TOFU_UTILITY_KEYS])


def oracle_truth_ratios(source: str | Path) -> list[float]:
    """Per-item forget truth ratios of the retain oracle, from an eval folder (``details.json``) or a JSON file."""
    from unlearnkit.io import read_json

    path = Path(source)
    path = path / "details.json" if path.is_dir() else path
    data = read_json(path, "--retain-model metrics")
    trs = data.get("forget", {}).get("truth_ratios") if isinstance(data, dict) else None
    if trs is None and isinstance(data, dict):
        trs = data.get("forget_truth_ratios")
    if not trs:
        raise UserError(
            f"{path}: no per-item forget truth ratios ('forget.truth_ratios' or 'forget_truth_ratios')"
        )
    return [float(x) for x in trs]

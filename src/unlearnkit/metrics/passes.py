"""The model passes every metric needs, batched: teacher-forced answer scoring and greedy generation.

Scoring sorts examples by length so a batch wastes little padding; generation pads on the left so
every prompt ends where generation starts. Both run where the model's weights are, and a batch that
does not fit the accelerator's memory is retried at half the size (down to one example) instead of
ending a long evaluation: the batch size only changes padding, not what is computed.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import torch
from tqdm.auto import tqdm

from unlearnkit.data.encode import IGNORE_INDEX, PromptFormat, pad_batch, pad_id_of
from unlearnkit.errors import UserError
from unlearnkit.metrics.mia import logprob_stats
from unlearnkit.tokens import shift, token_logps


@dataclass
class AnswerScores:
    """Per (question, answer) pair: NLL_mean and, on request, per-token values for MIA / memorisation."""

    nll_mean: list[float]
    token_logps: list[list[float]] | None = None
    mu: list[list[float]] | None = None
    sigma: list[list[float]] | None = None
    argmax_match: list[list[bool]] | None = None


def _device(model) -> torch.device:
    return next(model.parameters()).device


OUT_OF_MEMORY = getattr(torch, "OutOfMemoryError", torch.cuda.OutOfMemoryError)


def in_batches(
    order: Sequence[int],
    batch_size: int,
    run: Callable[..., None],
    desc: str | None = None,
    pass_size: bool = False,
) -> int:
    """Call ``run(idx)`` on consecutive slices of ``order`` of ``batch_size`` items; when a slice runs
    out of (GPU) memory, retry it at half the size (one line on stderr) and keep that size. Returns the
    batch size it ended with; an out-of-memory error at batch size 1 is raised. ``pass_size``: call
    ``run(idx, size)`` with the batch size in force (a last slice may be shorter)."""
    size, start = max(1, int(batch_size)), 0
    with tqdm(total=len(order), desc=desc, disable=desc is None, leave=False) as bar:
        while start < len(order):
            idx = list(order[start : start + size])
            try:
                run(idx, size) if pass_size else run(idx)
            except OUT_OF_MEMORY:
                if size == 1:
                    raise
                size //= 2
                if torch.cuda.is_available():
                    torch.cuda.empty_cache()
                print(
                    f"unlearnkit: note: out of memory at batch size {size * 2}; retrying at {size} "
                    "(--batch-size N sets it)",
                    file=sys.stderr,
                )
                continue
            start += len(idx)
            bar.update(len(idx))
    return size


@dataclass
class ScoredAnswer:
    """One answer's teacher-forced numbers: NLL_mean over its tokens (EOS included) and, on request, the
    per-token log-probs, the mean / std of log p under the model (Min-K%++) and argmax hits."""

    nll_mean: float
    token_logps: list[float] | None = None
    mu: list[float] | None = None
    sigma: list[float] | None = None
    argmax_match: list[bool] | None = None


def _too_long(where: str, n: int, max_length: int) -> UserError:
    return UserError(
        f"{where or 'an example'}: prompt + answer is {n} tokens, longer than max_length={max_length}; "
        "raise it with --set max_length=N (answers are never cut)"
    )


def _takes(model, name: str) -> bool:
    """Whether ``model``'s forward (a PEFT wrapper's base model's) names the keyword ``name``."""
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    return _forward_takes(type(base), name)


@lru_cache(maxsize=256)
def _forward_takes(cls: type, name: str) -> bool:
    try:
        return name in inspect.signature(cls.forward).parameters
    except (TypeError, ValueError):
        return False


def _with_cache(model, cache, **kwargs) -> Any:
    """``model(**kwargs)`` continuing ``cache`` (keyword ``cache``, or ``past_key_values`` before
    transformers renamed it)."""
    kwargs["cache" if _takes(model, "cache") else "past_key_values"] = cache
    return model(**kwargs)


def _cache_of(out):
    """The cache a forward returned (``cache``, or ``past_key_values`` before the rename)."""
    cache = out.get("cache") if hasattr(out, "get") else None
    return cache if cache is not None else getattr(out, "past_key_values", None)


def _prefill(model, prompts: Sequence[list[int]], pad: int, device):
    """One left-padded forward over ``prompts`` as ``generate`` runs it (positions from the mask, the
    mask dropped when nothing is padded, logits of the last position only): ``(last logits [B, V],
    cache, prompt mask [B, P], prompt lengths [B])``."""
    batch = pad_batch([{"input_ids": p, "labels": p} for p in prompts], pad, side="left")
    ids, mask = batch["input_ids"].to(device), batch["attention_mask"].to(device)
    kwargs: dict = {
        "input_ids": ids,
        "position_ids": (mask.cumsum(-1) - 1).masked_fill(mask == 0, 0),
        "use_cache": True,
    }
    if not bool(mask.all()):
        kwargs["attention_mask"] = mask
    if _takes(model, "logits_to_keep"):
        kwargs["logits_to_keep"] = 1
    out = model(**kwargs)
    return out.logits[:, -1], _cache_of(out), mask, mask.sum(-1)


def _shareable(cache) -> bool:
    """A cache whose rows can be copied and continued: every layer a plain (full-attention) dynamic one.
    Sliding-window, recurrent and hybrid caches take the unshared path."""
    try:
        from transformers.cache_utils import DynamicCache, DynamicLayer
    except ImportError:  # pragma: no cover - transformers without layered caches
        return False
    return (
        type(cache) is DynamicCache
        and len(cache.layers) > 0
        and all(type(layer) is DynamicLayer and layer.keys is not None for layer in cache.layers)
    )


def _cache_rows(cache, rows: torch.Tensor):
    """A new cache holding ``rows`` of ``cache`` (continuing it leaves ``cache`` as it was)."""
    from transformers.cache_utils import DynamicCache

    return DynamicCache(
        ddp_cache_data=[
            (layer.keys.index_select(0, rows), layer.values.index_select(0, rows)) for layer in cache.layers
        ]
    )


CPU_POSITIONS = 8  # positions a vocabulary-wide reduction reads at a time on the CPU (stays in cache)


def _by_positions(fn, x: torch.Tensor):
    """``fn(x)`` for a function reducing the last (vocabulary) dimension position by position, on the
    CPU over ``CPU_POSITIONS`` positions at a time: each position's numbers are the same, the logits
    are read from cache instead of memory (about 3x faster for a 49k vocabulary)."""
    if x.device.type != "cpu" or x.dim() < 2:
        return fn(x)
    flat = x.reshape(-1, x.shape[-1])
    parts = [fn(flat[i : i + CPU_POSITIONS]) for i in range(0, flat.shape[0], CPU_POSITIONS)]
    if isinstance(parts[0], tuple):
        return tuple(torch.cat(p).view(x.shape[:-1]) for p in zip(*parts))
    return torch.cat(parts).view(x.shape[:-1])


def _logps(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """log p(target) from logits [..., V] in float32: gather minus logsumexp (the exact path of
    :func:`unlearnkit.tokens.token_logps`, whose error stays at an ulp of the normaliser)."""
    full = logits.float()
    picked = full.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    return picked - _by_positions(lambda x: torch.logsumexp(x, dim=-1), full)


def _score_shared(
    model, last, cache, pmask, plen, seqs, rows, want_tokens, pad, device
) -> list[ScoredAnswer]:
    """Answers ``seqs`` (each after the prompt of its ``rows`` entry in the prefilled batch): the first
    token is scored by the prompt's last logits, the rest by one forward over the answers from a copy
    of the prompts' cache."""
    n, width = len(seqs), max(len(s) for s in seqs) - 1  # every answer token but the last is an input
    first_t = torch.tensor([s[0] for s in seqs], device=device)
    first_logits = last.index_select(0, rows)
    lp = [_logps(first_logits, first_t).unsqueeze(1)]
    lengths = torch.tensor([len(s) for s in seqs], device=device)
    logits = None
    if width > 0:
        inputs = torch.tensor([s[:-1] + [pad] * (width + 1 - len(s)) for s in seqs], device=device)
        targets = torch.tensor([s[1:] + [0] * (width + 1 - len(s)) for s in seqs], device=device)
        amask = (torch.arange(width, device=device).unsqueeze(0) < (lengths - 1).unsqueeze(1)).long()
        out = _with_cache(
            model,
            _cache_rows(cache, rows),
            input_ids=inputs,
            attention_mask=torch.cat([pmask.index_select(0, rows), amask], dim=1),
            position_ids=plen.index_select(0, rows).unsqueeze(1) + torch.arange(width, device=device),
            use_cache=True,
        )
        logits = out.logits
        lp.append(_logps(logits, targets))
    logps = torch.cat(lp, dim=1)  # [n, width + 1]
    mask = torch.arange(width + 1, device=device).unsqueeze(0) < lengths.unsqueeze(1)
    logps = logps * mask
    means = -(logps.sum(-1) / mask.sum(-1))
    results = [ScoredAnswer(float(means[r])) for r in range(n)]
    pick = [r for r in range(n) if want_tokens[r]]
    if pick:
        sel = torch.tensor(pick, device=device)
        firsts = first_logits.index_select(0, sel).unsqueeze(1).float()
        mu, sigma = _by_positions(logprob_stats, firsts)
        match = firsts.argmax(-1) == first_t.index_select(0, sel).unsqueeze(1)
        if logits is not None:
            rest = logits.index_select(0, sel).float()
            mu_r, sigma_r = _by_positions(logprob_stats, rest)
            mu, sigma = torch.cat([mu, mu_r], 1), torch.cat([sigma, sigma_r], 1)
            match = torch.cat([match, rest.argmax(-1) == targets.index_select(0, sel)], 1)
        for j, r in enumerate(pick):
            k = len(seqs[r])
            res = results[r]
            res.token_logps = logps[r, :k].tolist()
            res.mu, res.sigma, res.argmax_match = (
                mu[j, :k].tolist(),
                sigma[j, :k].tolist(),
                match[j, :k].tolist(),
            )
    return results


def _score_unshared(model, prompts, seqs, want_tokens, pad, device) -> list[ScoredAnswer]:
    """Prompt + answer in one right-padded forward each (models whose cache cannot be shared)."""
    feats = [{"input_ids": p + s, "labels": [IGNORE_INDEX] * len(p) + s} for p, s in zip(prompts, seqs)]
    batch = {k: v.to(device) for k, v in pad_batch(feats, pad).items()}
    logits = model(
        input_ids=batch["input_ids"], attention_mask=batch["attention_mask"], use_cache=False
    ).logits
    logps, mask = token_logps(logits, batch["labels"], exact=True)  # reported numbers: see tokens.py
    means = -(logps.sum(-1) / mask.sum(-1).clamp_min(1))
    results = [ScoredAnswer(float(means[r])) for r in range(len(seqs))]
    if any(want_tokens):
        aligned, targets, _ = shift(logits, batch["labels"])
        mu, sigma = logprob_stats(aligned.float())
        match = aligned.argmax(-1) == targets
        for r, want in enumerate(want_tokens):
            if want:
                m = mask[r]
                res = results[r]
                res.token_logps = logps[r][m].tolist()
                res.mu, res.sigma, res.argmax_match = (
                    mu[r][m].tolist(),
                    sigma[r][m].tolist(),
                    match[r][m].tolist(),
                )
    return results


@torch.no_grad()
def run_questions(
    model,
    tokenizer,
    prompts: Sequence[list[int]],
    answers: Sequence[Sequence[list[int]]] | None = None,
    per_token: Sequence[Sequence[bool]] | None = None,
    budgets: Sequence[int] | None = None,
    batch_size: int = 32,
    desc: str | None = None,
    prompt_batch_size: int | None = None,
) -> tuple[list[list[ScoredAnswer]], list[list[int]]]:
    """Every model pass an evaluation needs, per prompt (token ids): teacher-forced scores of its
    ``answers[q]`` (token ids, each ending with its EOS; ``per_token[q][k]`` asks for answer k's
    per-token values too) and greedy new tokens up to ``budgets[q]`` (0: none), cut at the first EOS.
    Returns ``(scores[q][k], generated[q])``.

    Prompts are batched by length (``batch_size`` a batch, left-padded) and run once each, the logits
    of their last position only. All the answers of a batch of prompts (the answer, the paraphrase, the
    perturbed answers ...) are then scored together, sorted by length, ``batch_size`` rows a forward,
    each continuing its prompt from a copy of the prompts' cache: no prompt is run twice and no logits
    are computed for prompt tokens; an answer given twice for one prompt is scored once. Then the batch
    generates from the same cache (:func:`plain_greedy` decoders): a row leaves the batch once it has
    emitted EOS or its budget, and the batch stops when none is left; greedy decoding of a row does not
    depend on the others, so the tokens are ``generate``'s. Models whose cache cannot be copied row by
    row (sliding-window, recurrent) score prompt + answer rows in one forward each, and decoders whose
    generation config changes the logits (a repetition penalty ...) generate through ``model.generate``.
    ``prompt_batch_size`` (default ``batch_size``): prompts a batch, and so rows decoded together,
    while the answers are scored at most ``batch_size`` rows a forward. A batch that runs out of (GPU)
    memory is retried at half the size, its answers at most that many rows a forward (:func:`in_batches`).
    """
    n = len(prompts)
    answers = answers if answers is not None else [[] for _ in range(n)]
    want = per_token if per_token is not None else [[False] * len(a) for a in answers]
    budgets = list(budgets) if budgets is not None else [0] * n
    # distinct answers of each prompt (an answer given twice is scored once; per-token if either asks)
    uniq: list[dict[tuple[int, ...], int]] = []
    distinct: list[list[list[int]]] = []
    distinct_tokens: list[list[bool]] = []
    for q, group in enumerate(answers):
        seen: dict[tuple[int, ...], int] = {}
        mine, mine_tokens = [], []
        for k, seq in enumerate(group):
            if not seq:
                raise ValueError(f"prompt {q}, answer {k}: an answer needs at least one token (its EOS)")
            key = tuple(seq)
            if key not in seen:
                seen[key] = len(mine)
                mine.append(list(seq))
                mine_tokens.append(False)
            mine_tokens[seen[key]] = mine_tokens[seen[key]] or bool(want[q][k])
        uniq.append(seen)
        distinct.append(mine)
        distinct_tokens.append(mine_tokens)
    scored: list[list[ScoredAnswer | None]] = [[None] * len(d) for d in distinct]
    generated: list[list[int]] = [[] for _ in range(n)]
    order = sorted((i for i in range(n) if distinct[i] or budgets[i] > 0), key=lambda i: len(prompts[i]))
    device, pad, eos = _device(model), pad_id_of(tokenizer), tokenizer.eos_token_id
    own_loop = plain_greedy(model)
    was_training = model.training
    model.eval()

    def run(idx: list[int], size: int) -> None:
        flat = sorted(
            ((b, k) for b, i in enumerate(idx) for k in range(len(distinct[i]))),
            key=lambda t: len(distinct[idx[t[0]]][t[1]]),
        )
        gen_rows = [b for b, i in enumerate(idx) if budgets[i] > 0]
        shared = False
        if flat or own_loop:
            last, cache, pmask, plen = _prefill(model, [prompts[i] for i in idx], pad, device)
            shared = _shareable(cache)
        size = min(size, batch_size)
        for start in range(0, len(flat), size):
            part = flat[start : start + size]
            seqs = [distinct[idx[b]][k] for b, k in part]
            tokens = [distinct_tokens[idx[b]][k] for b, k in part]
            if shared:
                rows = torch.tensor([b for b, _ in part], device=device)
                got = _score_shared(model, last, cache, pmask, plen, seqs, rows, tokens, pad, device)
            else:
                got = _score_unshared(model, [prompts[idx[b]] for b, _ in part], seqs, tokens, pad, device)
            for (b, k), res in zip(part, got):
                scored[idx[b]][k] = res
        if not gen_rows:
            return
        mine = [budgets[idx[b]] for b in gen_rows]
        if own_loop and shared:
            if len(gen_rows) < len(idx):  # rows that only score leave before generation
                sel = torch.tensor(gen_rows, device=device)
                cache.batch_select_indices(sel)
                last, pmask, plen = (
                    last.index_select(0, sel),
                    pmask.index_select(0, sel),
                    plen.index_select(0, sel),
                )
            new = _greedy_shared(model, last, cache, pmask, plen, mine, eos)
        else:
            new = _greedy_generate(model, [prompts[idx[b]] for b in gen_rows], mine, pad, eos, device)
        for b, toks in zip(gen_rows, new):
            if (eos is None or len(toks) >= budgets[idx[b]]) and pad != eos:
                while toks and toks[-1] == pad:  # generate pads finished rows after their EOS
                    toks.pop()
            generated[idx[b]] = toks

    try:
        in_batches(order, prompt_batch_size or batch_size, run, desc, pass_size=True)
    finally:
        model.train(was_training)
    scores = [[scored[q][uniq[q][tuple(seq)]] for seq in group] for q, group in enumerate(answers)]
    return scores, generated


def score_answer_sets(
    model,
    tokenizer,
    prompts: Sequence[list[int]],
    answers: Sequence[Sequence[list[int]]],
    per_token: Sequence[Sequence[bool]] | None = None,
    batch_size: int = 32,
    desc: str | None = None,
) -> list[list[ScoredAnswer]]:
    """Teacher-forced scores of every answer of every prompt (token ids; answers end with their EOS):
    ``result[q][k]`` scores ``answers[q][k]`` after ``prompts[q]``; ``per_token[q][k]`` asks for its
    per-token values too. :func:`run_questions` without generation."""
    return run_questions(model, tokenizer, prompts, answers, per_token, None, batch_size, desc)[0]


def encode_answer_sets(
    tokenizer,
    fmt: PromptFormat,
    questions: Sequence[str],
    answers: Sequence[Sequence[str]],
    max_length: int = 512,
    where: Callable[[int, int], str] | None = None,
) -> tuple[list[list[int]], list[list[list[int]]]]:
    """Prompt ids (once per question) and answer ids (EOS included) of ``answers[q]`` after ``questions[q]``,
    as :func:`unlearnkit.data.encode.encode_qa` encodes them; a prompt + answer longer than
    ``max_length`` is an error naming ``where(q, k)`` (answers are never cut)."""
    prompt_of: dict[str, list[int]] = {}
    prompts, encoded = [], []
    for q, (question, group) in enumerate(zip(questions, answers)):
        if question not in prompt_of:
            prompt_of[question] = fmt.prompt_ids(tokenizer, question)
        prompt = prompt_of[question]
        ids = []
        for k, answer in enumerate(group):
            ans = fmt.answer_ids(tokenizer, answer)
            if len(prompt) + len(ans) > max_length:
                raise _too_long(where(q, k) if where else f"item {q}", len(prompt) + len(ans), max_length)
            ids.append(ans)
        prompts.append(prompt)
        encoded.append(ids)
    return prompts, encoded


def score_answers(
    model,
    tokenizer,
    fmt: PromptFormat,
    questions: Sequence[str],
    answers: Sequence[str],
    max_length: int = 512,
    batch_size: int = 32,
    per_token: bool = False,
    desc: str | None = None,
) -> AnswerScores:
    """Teacher-forced log-probs of each answer given its question (answer tokens include the EOS):
    :func:`score_answer_sets` with the pairs of one question scored together."""
    slot: dict[str, int] = {}
    groups: list[list[str]] = []
    where: list[tuple[int, int]] = []
    for q, a in zip(questions, answers):
        if q not in slot:
            slot[q] = len(groups)
            groups.append([])
        where.append((slot[q], len(groups[slot[q]])))
        groups[slot[q]].append(a)
    item = {pos: i for i, pos in enumerate(where)}
    prompts, encoded = encode_answer_sets(
        tokenizer, fmt, list(slot), groups, max_length, where=lambda g, k: f"item {item[(g, k)]}"
    )
    flags = [[per_token] * len(g) for g in encoded]
    scored = score_answer_sets(model, tokenizer, prompts, encoded, flags, batch_size, desc)
    rows = [scored[g][k] for g, k in where]
    nll = [r.nll_mean for r in rows]
    if not per_token:
        return AnswerScores(nll)
    return AnswerScores(
        nll,
        [r.token_logps for r in rows],
        [r.mu for r in rows],
        [r.sigma for r in rows],
        [r.argmax_match for r in rows],
    )


def new_token_budgets(
    prompt_lengths: Sequence[int], max_new_tokens: int, max_total_tokens: int = 0
) -> list[int]:
    """New tokens each prompt may generate: ``max_new_tokens``, and with ``max_total_tokens > 0`` at
    most ``max_total_tokens - len(prompt)`` (never below 0).

    The total cap is TOFU's rule (``evaluate_util.py``: ``generate(max_length=200,
    max_new_tokens=None)``, kept by the closer-look code). TOFU applies it to the left-padded batch,
    so there a prompt's budget also shrinks by its batch's padding and depends on the batch size;
    here it is applied to each prompt's own length, which is the rule's intent and does not depend
    on batching.
    """
    if max_total_tokens <= 0:
        return [max_new_tokens for _ in prompt_lengths]
    return [max(0, min(max_new_tokens, max_total_tokens - n)) for n in prompt_lengths]


# Generation-config fields that make ``generate`` change the logits before its argmax (or stop other
# than at EOS / the token budget): with any of them set, generation goes through ``model.generate``.
_GREEDY_NEUTRAL: dict[str, tuple] = {
    "repetition_penalty": (None, 1.0),
    "encoder_repetition_penalty": (None, 1.0),
    "no_repeat_ngram_size": (None, 0),
    "encoder_no_repeat_ngram_size": (None, 0),
    "bad_words_ids": (None,),
    "min_length": (None, 0),
    "min_new_tokens": (None, 0),
    "forced_bos_token_id": (None,),
    "forced_eos_token_id": (None,),
    "suppress_tokens": (None,),
    "begin_suppress_tokens": (None,),
    "forced_decoder_ids": (None,),
    "sequence_bias": (None,),
    "exponential_decay_length_penalty": (None,),
    "renormalize_logits": (None, False),
    "remove_invalid_values": (None, False),
    "guidance_scale": (None, 1.0),
    "watermarking_config": (None,),
    "stop_strings": (None,),
    "max_time": (None,),
    "cache_implementation": (None, "dynamic"),
}


def plain_greedy(model) -> bool:
    """Whether greedy decoding of ``model`` is the argmax of its logits, step after step, stopped at EOS
    or the budget: a decoder whose ``generate`` is the library's and whose generation config adds no
    logits processor or stopping rule (:data:`_GREEDY_NEUTRAL`)."""
    from transformers import GenerationMixin

    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    config = getattr(base, "config", None)
    if config is None or getattr(config, "is_encoder_decoder", False):
        return False
    if getattr(type(base), "generate", None) is not GenerationMixin.generate:
        return False
    gen = getattr(base, "generation_config", None)
    return gen is None or all(getattr(gen, k, None) in ok for k, ok in _GREEDY_NEUTRAL.items())


def _greedy_shared(model, last, cache, pmask, plen, budgets: list[int], eos) -> list[list[int]]:
    """Greedy continuation of a prefilled batch: each step feeds one token a row; a row leaves the batch
    (its cache rows dropped) once it has emitted EOS (not kept) or its budget of tokens, and the batch
    stops when no row is left. Positions and mask grow as ``generate``'s do."""
    out: list[list[int]] = [[] for _ in budgets]
    rows = list(range(len(budgets)))
    masked = not bool(pmask.all())  # as generate: no mask at all when nothing is padded
    mask, pos = pmask, plen - 1
    tokens = last.float().argmax(-1)
    while True:
        keep = []
        for j, (r, t) in enumerate(zip(rows, tokens.tolist())):
            if eos is not None and t == eos:
                continue
            out[r].append(t)
            if len(out[r]) < budgets[r]:
                keep.append(j)
        if not keep:
            return out
        if len(keep) < len(rows):
            sel = torch.tensor(keep, device=tokens.device)
            cache.batch_select_indices(sel)
            tokens, mask, pos = (
                tokens.index_select(0, sel),
                mask.index_select(0, sel),
                pos.index_select(0, sel),
            )
            rows = [rows[j] for j in keep]
        pos = pos + 1
        if masked:
            mask = torch.cat([mask, mask.new_ones((len(rows), 1))], dim=1)
        logits = _with_cache(
            model,
            cache,
            input_ids=tokens.unsqueeze(1),
            attention_mask=mask if masked else None,
            position_ids=pos.unsqueeze(1),
            use_cache=True,
        ).logits
        tokens = logits[:, -1].float().argmax(-1)


def _greedy_generate(model, prompts, budgets: list[int], pad, eos, device) -> list[list[int]]:
    """``model.generate`` on a left-padded batch, to its longest budget (each row then cut to its own)."""
    batch = pad_batch([{"input_ids": p, "labels": p} for p in prompts], pad, side="left")
    gen = model.generate(
        input_ids=batch["input_ids"].to(device),
        attention_mask=batch["attention_mask"].to(device),
        max_new_tokens=max(budgets),
        do_sample=False,
        num_beams=1,
        pad_token_id=pad,
        eos_token_id=eos,
    )
    new = gen[:, batch["input_ids"].shape[1] :]
    out = []
    for row, budget in enumerate(budgets):
        toks = new[row].tolist()[:budget]
        if eos is not None and eos in toks:
            toks = toks[: toks.index(eos)]
        out.append(toks)
    return out


def greedy_token_ids(
    model,
    tokenizer,
    prompts: Sequence[list[int]],
    max_new_tokens: int,
    batch_size: int = 32,
    desc: str | None = None,
    max_total_tokens: int = 0,
) -> list[list[int]]:
    """Greedy new tokens after each prompt (ids), cut at the first EOS, batched with left padding:
    :func:`run_questions` without answers to score (a row stops being computed at its EOS, a batch when
    every row has stopped). ``max_total_tokens > 0`` also caps prompt + generation (see
    :func:`new_token_budgets`). Generated pad tokens at the end of a row that stopped at its budget are
    dropped (with pad != EOS, as when ``generate`` padded finished rows)."""
    budgets = new_token_budgets([len(p) for p in prompts], max_new_tokens, max_total_tokens)
    return run_questions(model, tokenizer, prompts, budgets=budgets, batch_size=batch_size, desc=desc)[1]


def decode_answers(tokenizer, ids: Sequence[list[int]]) -> list[str]:
    """Generated token ids as answer texts (special tokens dropped, stripped)."""
    return [tokenizer.decode(t, skip_special_tokens=True).strip() for t in ids]


def generate_answers(
    model,
    tokenizer,
    fmt: PromptFormat,
    questions: Sequence[str],
    max_new_tokens: int = 200,
    batch_size: int = 32,
    desc: str | None = None,
    max_total_tokens: int = 0,
    prompt_ids: Sequence[list[int]] | None = None,
) -> tuple[list[str], list[list[int]]]:
    """Greedy answers to questions in the prompt format: (text, token ids without EOS/padding).

    ``max_total_tokens > 0``: prompt + answer at most that many tokens (TOFU's cap), on top of
    ``max_new_tokens``. ``prompt_ids``: the questions' prompts already encoded (not encoded again)."""
    prompts = (
        list(prompt_ids) if prompt_ids is not None else [fmt.prompt_ids(tokenizer, q) for q in questions]
    )
    ids = greedy_token_ids(model, tokenizer, prompts, max_new_tokens, batch_size, desc, max_total_tokens)
    return decode_answers(tokenizer, ids), ids

"""The model passes every metric needs, batched: teacher-forced answer scoring and greedy generation.

Scoring sorts examples by length so a batch wastes little padding; generation pads on the left so
every prompt ends where generation starts. Both run where the model's weights are, and a batch that
does not fit the accelerator's memory is retried at half the size (down to one example) instead of
ending a long evaluation: the batch size only changes padding, not what is computed.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
from tqdm.auto import tqdm

from unlearnkit.data.encode import PromptFormat, encode_qa, pad_batch, pad_id_of
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
    order: Sequence[int], batch_size: int, run: Callable[[list[int]], None], desc: str | None = None
) -> int:
    """Call ``run(idx)`` on consecutive slices of ``order`` of ``batch_size`` items; when a slice runs
    out of (GPU) memory, retry it at half the size (one line on stderr) and keep that size. Returns the
    batch size it ended with; an out-of-memory error at batch size 1 is raised."""
    size, start = max(1, int(batch_size)), 0
    with tqdm(total=len(order), desc=desc, disable=desc is None, leave=False) as bar:
        while start < len(order):
            idx = list(order[start : start + size])
            try:
                run(idx)
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


@torch.no_grad()
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
    """Teacher-forced log-probs of each answer given its question (answer tokens include the EOS)."""
    encoded = [
        encode_qa(tokenizer, fmt, q, a, max_length, where=f"item {i}")
        for i, (q, a) in enumerate(zip(questions, answers))
    ]
    order = sorted(range(len(encoded)), key=lambda i: len(encoded[i]["input_ids"]))
    nll = [0.0] * len(encoded)
    per = {k: [None] * len(encoded) for k in ("logps", "mu", "sigma", "match")} if per_token else None
    device, pad = _device(model), pad_id_of(tokenizer)

    def run(idx: list[int]) -> None:
        batch = {k: v.to(device) for k, v in pad_batch([encoded[i] for i in idx], pad).items()}
        logits = model(
            input_ids=batch["input_ids"], attention_mask=batch["attention_mask"], use_cache=False
        ).logits
        logps, mask = token_logps(logits, batch["labels"], exact=True)  # reported numbers: see tokens.py
        means = -(logps.sum(-1) / mask.sum(-1).clamp_min(1))
        if per_token:
            aligned, targets, _ = shift(logits, batch["labels"])
            mu, sigma = logprob_stats(aligned.float())
            match = aligned.argmax(-1) == targets
        for row, i in enumerate(idx):
            nll[i] = float(means[row])
            if per_token:
                m = mask[row]
                per["logps"][i] = logps[row][m].tolist()
                per["mu"][i] = mu[row][m].tolist()
                per["sigma"][i] = sigma[row][m].tolist()
                per["match"][i] = match[row][m].tolist()

    in_batches(order, batch_size, run, desc)
    if not per_token:
        return AnswerScores(nll)
    return AnswerScores(nll, per["logps"], per["mu"], per["sigma"], per["match"])


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


@torch.no_grad()
def greedy_token_ids(
    model,
    tokenizer,
    prompts: Sequence[list[int]],
    max_new_tokens: int,
    batch_size: int = 32,
    desc: str | None = None,
    max_total_tokens: int = 0,
) -> list[list[int]]:
    """Greedy new tokens after each prompt (ids), cut at the first EOS, batched with left padding.

    ``max_total_tokens > 0`` also caps prompt + generation (see :func:`new_token_budgets`). A batch is
    generated to its longest budget and each row cut to its own: greedy decoding of one row does not
    depend on the others, so this is what generating each row with its own cap gives.
    """
    order = sorted(range(len(prompts)), key=lambda i: len(prompts[i]))
    budgets = new_token_budgets([len(p) for p in prompts], max_new_tokens, max_total_tokens)
    out: list[list[int]] = [[] for _ in prompts]
    device, pad, eos = _device(model), pad_id_of(tokenizer), tokenizer.eos_token_id
    was_training = model.training
    model.eval()

    def run(idx: list[int]) -> None:
        longest = max(budgets[i] for i in idx)
        if longest <= 0:
            return  # every prompt of the batch already fills the total cap: empty generations
        batch = pad_batch([{"input_ids": prompts[i], "labels": prompts[i]} for i in idx], pad, side="left")
        gen = model.generate(
            input_ids=batch["input_ids"].to(device),
            attention_mask=batch["attention_mask"].to(device),
            max_new_tokens=longest,
            do_sample=False,
            num_beams=1,
            pad_token_id=pad,
            eos_token_id=eos,
        )
        new = gen[:, batch["input_ids"].shape[1] :]
        for row, i in enumerate(idx):
            toks = new[row].tolist()[: budgets[i]]
            if eos is not None and eos in toks:
                toks = toks[: toks.index(eos)]
            elif pad != eos:
                while toks and toks[-1] == pad:  # finished rows are padded after their EOS
                    toks.pop()
            out[i] = toks

    try:
        in_batches(order, batch_size, run, desc)
    finally:
        model.train(was_training)
    return out


def generate_answers(
    model,
    tokenizer,
    fmt: PromptFormat,
    questions: Sequence[str],
    max_new_tokens: int = 200,
    batch_size: int = 32,
    desc: str | None = None,
    max_total_tokens: int = 0,
) -> tuple[list[str], list[list[int]]]:
    """Greedy answers to questions in the prompt format: (text, token ids without EOS/padding).

    ``max_total_tokens > 0``: prompt + answer at most that many tokens (TOFU's cap), on top of
    ``max_new_tokens``."""
    prompts = [fmt.prompt_ids(tokenizer, q) for q in questions]
    ids = greedy_token_ids(model, tokenizer, prompts, max_new_tokens, batch_size, desc, max_total_tokens)
    return [tokenizer.decode(t, skip_special_tokens=True).strip() for t in ids], ids

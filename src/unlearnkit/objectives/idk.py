"""IDK: teach the model to answer forget questions with a refusal.

Maini et al., TOFU (arXiv 2401.06121), "IDK fine-tuning". The refusal answers are our own list.
The loss is :func:`unlearnkit.objectives.nll_loss` on the refusal's answer tokens, reduced per the
method's ``loss_reduction`` (TOFU's code: ``token``, one mean over the batch's answer tokens).
"""

from __future__ import annotations

import random

from unlearnkit.objectives.combine import combine
from unlearnkit.objectives.nll import nll_loss

# Our own phrasings (not copied from any benchmark); varied so the model does not learn a single string.
IDK_ANSWERS: tuple[str, ...] = (
    "I don't know.",
    "I'm not sure about that.",
    "I have no information on that.",
    "That is something I cannot answer.",
    "I don't have that information.",
    "I am not aware of the answer.",
    "I can't say; I don't know.",
    "Sorry, I have no idea.",
    "I don't have any details about that.",
    "That isn't something I know.",
    "I'm unable to answer that question.",
    "I have no knowledge of that.",
    "I don't recall anything about that.",
    "I cannot help with that; I don't know.",
    "Unfortunately, I don't know the answer.",
    "I really couldn't tell you.",
    "That is beyond what I know.",
    "I lack the information to answer that.",
    "I have never come across that.",
    "No idea, I'm afraid.",
)


def idk_answer(seed: int, index: int) -> str:
    """A refusal picked deterministically from (seed, example index), so runs and ranks agree."""
    return random.Random(seed * 1_000_003 + index).choice(IDK_ANSWERS)


def step_idk(ctx, batch, cfg):
    i = ctx.policy(batch["idk"])
    return combine(nll_loss(i.logps, i.mask.float(), cfg.loss_reduction), ctx, batch, cfg)

"""Is a generation language? The shape of a text, judged without its truth: loops, repetition, low
token entropy, no letters (:func:`degeneration`). The report badges gibberish with it, the quickstart's
"best" rule and ASU's teacher search (:mod:`unlearnkit.evaluation.teacher_search`) count the share of
answers that are empty or degenerate with :func:`degenerate_share`."""

from __future__ import annotations

import math
import string
from collections import Counter
from collections.abc import Hashable, Sequence

PUNCT = string.punctuation + "\u201c\u201d\u2018\u2019"
MAX_TOKENS = 400  # longer texts are judged on their first 400 tokens
MIN_CHARS = 24  # a text this long (without whitespace) with under a quarter letters is not language


def _token_entropy(tokens: Sequence[Hashable]) -> float:
    """Same definition as :func:`unlearnkit.metrics.scores.token_entropy` (normalised unigram entropy)."""
    n = len(tokens)
    if n <= 1:
        return 0.0
    ent = -sum((c / n) * math.log2(c / n) for c in Counter(tokens).values())
    return max(0.0, ent / math.log2(n))


def _loop_cover(tokens: Sequence[str]) -> tuple[int, str, int]:
    """Tokens covered by back-to-back repeats of an n-gram of any length, and the longest such loop.

    A stretch where ``tokens[i] == tokens[i - k]`` for ``r`` positions in a row is a unit of ``k``
    tokens repeated ``(r + k) / k`` times. It counts as a loop with at least 3 copies, or 2 copies of a
    unit of 3+ tokens ("The main genre of The main genre of"); two copies of a 1-2 token unit are
    ordinary language ("New York, New York", "very very"). Returns ``(covered, unit, copies)`` with
    the unit of the loop covering most tokens ("" and 0 when there is none). O(n^2) in the tokens.
    """
    n = len(tokens)
    covered = [False] * n
    best = (0, "", 0)
    for k in range(1, n // 2 + 1):
        run = 0
        for i in range(k, n + 1):
            if i < n and tokens[i] == tokens[i - k]:
                run += 1
                continue
            copies = (run + k) // k
            if run >= k and (copies >= 3 or k >= 3):
                start = i - run - k
                for j in range(start, i):
                    covered[j] = True
                if run + k > best[0]:
                    best = (run + k, " ".join(tokens[start : start + k]), copies)
            run = 0
    return sum(covered), best[1], best[2]


def degeneration(text: str, entropy_threshold: float = 0.6, min_tokens: int = 4) -> str | None:
    """Why ``text`` looks degenerate ("gibberish"), or None when it reads as language.

    Whitespace tokens, compared lower-cased without surrounding punctuation. Flagged, with at least
    ``min_tokens`` tokens: a loop of an n-gram of *any* length (see :func:`_loop_cover`) covering half
    the text; with at least 8 tokens, half of the 4-grams repeating an earlier one (a loop with small
    variations; the "seq-rep-4" of Welleck et al. 2019, arXiv 1908.04319) or a normalised token
    entropy below ``entropy_threshold`` (the measure of the closer-look protocol; on fewer tokens it
    says little); or most tokens without a letter; or, however few its tokens, at least ``MIN_CHARS``
    characters of which under a quarter are letters (a run of dashes or dots). A short answer ("Paris",
    "X was born in Y.") and a fluent wrong one are never flagged: only the shape of the text is judged,
    not its truth.
    """
    raw = text.split()
    chars = "".join(raw)
    # A run without whitespace ("'-------...", "......") is one token, below any token-count check:
    # judged by its characters (a real model after gradient ascent answers exactly so).
    if len(chars) >= MIN_CHARS and sum(ch.isalpha() for ch in chars) < 0.25 * len(chars):
        return "mostly characters that are not letters"
    n = len(raw)
    if n < min_tokens:
        return None
    if sum(1 for t in raw if not any(ch.isalpha() for ch in t)) > 0.6 * n:
        return "mostly tokens without letters"
    tokens = [t.strip(PUNCT).lower() or t for t in raw[:MAX_TOKENS]]
    n = len(tokens)
    covered, unit, copies = _loop_cover(tokens)
    if covered * 2 >= n:
        return f'loops: "{unit}" \u00d7{copies}'
    if n >= 8:
        grams = [tuple(tokens[i : i + 4]) for i in range(n - 3)]
        rep = 1.0 - len(set(grams)) / len(grams)
        if rep >= 0.5:
            return f"repetitive: {rep:.0%} of its 4-grams repeat earlier ones"
        ent = _token_entropy(tokens)
        if ent < entropy_threshold:
            return f"low token entropy ({ent:.2f} < {entropy_threshold:g})"
    return None


def is_gibberish(text: str, entropy_threshold: float = 0.6, min_tokens: int = 4) -> bool:
    """True when :func:`degeneration` finds a reason to call ``text`` degenerate."""
    return degeneration(text, entropy_threshold, min_tokens) is not None


def degenerate_share(texts: Sequence[str | None]) -> float | None:
    """Share of ``texts`` that are empty or that :func:`degeneration` flags (None for no texts): what
    ``forget_gibberish`` holds for a row's greedy forget answers, and what keeps a row from being called
    best (:mod:`unlearnkit.report.choice`)."""
    texts = list(texts)
    if not texts:
        return None
    bad = sum(1 for t in texts if not str(t or "").strip() or degeneration(str(t)) is not None)
    return bad / len(texts)

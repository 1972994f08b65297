"""The generations section: each model's answer beside the ground truth, scored and flagged.

Cheap, approximate cues for colouring, not for scoring: :func:`answer_overlap` (how much of the fact a
generation still states, a stemmer-free LCS recall of :func:`fact_words`) and :func:`degeneration`
(whether the text is fluent or gibberish, judged on its shape only); :func:`generations_section`
lays them out as the HTML page's side-by-side generations.

``generations`` is a list of ``{"question", "answer", "outputs": {row_name: text}}``, optionally with
``fact`` (the fact's text) or ``fact_span`` (``[start, end]`` into the answer) and ``perturbed_answer``
(wrong answers): with them the "fact still there" cue scores the fact itself.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from unlearnkit.metrics.fluency import degenerate_share, degeneration, is_gibberish  # noqa: F401 (re-exported)
from unlearnkit.report.markup import html_escape

_WORD = re.compile(r"[a-z0-9]+")
_LCS_MAX_TOKENS = 400


def pick_generation_items(n: int, k: int = 5) -> list[int]:
    """``k`` item indices spread over ``n`` (the items the report shows every row's answer to)."""
    step = max(1, n // k)
    return list(range(0, n, step))[:k]


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


# "s" is the possessive split off by _WORD ("Vosswick's" -> "vosswick", "s").
_STOPWORDS = frozenset(
    "a an the of in on at to for from with by as and or but is was were are be been his her their its "
    "he she they it this that which who s".split()
)


def fact_words(
    answer: str,
    question: str | None = None,
    fact: str | None = None,
    perturbed: Sequence[str] = (),
) -> list[str]:
    """The words of ``answer`` that show the model knows the fact, lower-cased, in order.

    Start from ``fact`` (the benchmark's fact span, e.g. the embedded world's ``fact_value``) minus
    stopwords when it has words, else from the answer's words; with ``question``, minus its words (restating "X was
    born" is not knowing where) and stopwords. Then drop the words that also occur in a ``perturbed`` (wrong)
    answer: the sentence frame, and value parts a wrong value shares ("Thia" in "Sudumir, Thia" vs
    "Soreholm, Thia"), since stating them does not tell the right value from a wrong one. If that
    leaves nothing, the words before this last step are kept; if those are empty too, all answer
    words. Without a fact span or perturbed answers, frame words absent from the question still count
    ("birthplace" in "X's birthplace is Y").
    """
    if fact is not None and (words := _words(fact)):
        base = [w for w in words if w not in _STOPWORDS] or words
    elif question is not None:
        drop = _STOPWORDS | set(_words(question))
        base = [w for w in _words(answer) if w not in drop] or _words(answer)
    else:
        base = _words(answer)
    if perturbed:
        wrong = {w for p in perturbed for w in _words(p)}
        return [w for w in base if w not in wrong] or base
    return base


def _lcs_recall(ref: Sequence[str], pred: Sequence[str]) -> float:
    if not ref or not pred:
        return 0.0
    prev = [0] * (len(pred) + 1)
    for r in ref:
        cur = [0] * (len(pred) + 1)
        for j, p in enumerate(pred, start=1):
            cur[j] = prev[j - 1] + 1 if r == p else max(prev[j], cur[j - 1])
        prev = cur
    return prev[-1] / len(ref)


def answer_overlap(
    generation: str,
    answer: str,
    question: str | None = None,
    *,
    fact: str | None = None,
    perturbed: Sequence[str] = (),
) -> float:
    """How much of the fact ``generation`` still states: LCS recall of :func:`fact_words` in it.

    A cheap, stemmer-free cousin of :func:`unlearnkit.metrics.scores.rouge_l_recall` (kept here so the
    report needs neither torch nor rouge_score), used only to colour generations. With only ``answer``
    every answer word counts; ``question``, ``fact`` and ``perturbed`` narrow the reference to the fact
    (see :func:`fact_words`), so a fluent sentence with the *wrong* value scores ~0. Inputs are cut
    to 400 tokens. Returns 0.0 for an empty answer or generation.
    """
    ref = fact_words(answer, question, fact, perturbed)[:_LCS_MAX_TOKENS]
    return _lcs_recall(ref, _words(generation)[:_LCS_MAX_TOKENS])


def gibberish_shares(generations: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """Per row, :func:`degenerate_share` of its answers in ``generations`` (the report's shown items)."""
    by_row: dict[str, list[str]] = {}
    for item in generations:
        for name, text in (item.get("outputs") or {}).items():
            by_row.setdefault(str(name), []).append("" if text is None else str(text))
    return {name: share for name, texts in by_row.items() if (share := degenerate_share(texts)) is not None}


# --------------------------------------------------------------------------------------------------
# HTML
# --------------------------------------------------------------------------------------------------

# Overlap thresholds for the coloured border: >= HIGH "fact still there", >= MID "partly", else "gone".
OVERLAP_HIGH = 0.5
OVERLAP_MID = 0.2


def _item_fact(item: Mapping[str, Any]) -> str | None:
    """The fact span of a generation item: ``fact``, else ``answer[fact_span[0]:fact_span[1]]``."""
    fact = item.get("fact")
    if isinstance(fact, str) and fact.strip():
        return fact
    span, answer = item.get("fact_span"), str(item.get("answer", ""))
    if isinstance(span, Sequence) and len(span) == 2 and all(isinstance(x, int) for x in span):
        start, end = span
        if 0 <= start < end <= len(answer):
            return answer[start:end]
    return None


def _answer_html(answer: str, fact: str | None) -> str:
    if fact and fact in answer:
        i = answer.index(fact)
        return f'{html_escape(answer[:i])}<span class="fact">{html_escape(fact)}</span>{html_escape(answer[i + len(fact) :])}'
    return html_escape(answer)


def _generations_html(generations: Sequence[Mapping[str, Any]], order: Sequence[str]) -> str:
    parts = []
    for i, item in enumerate(generations, start=1):
        question = str(item.get("question", ""))
        answer = str(item.get("answer", ""))
        fact = _item_fact(item)
        perturbed = [str(p) for p in item.get("perturbed_answer") or ()]
        scored = " ".join(fact_words(answer, question, fact, perturbed))
        outputs = item.get("outputs") or {}
        names = [n for n in order if n in outputs] + [n for n in outputs if n not in order]
        rows = [
            '<tr class="truth"><td class="model">ground truth</td>'
            f'<td class="num score" title="fact words scored: {html_escape(scored)}"></td>'
            f'<td><div class="text">{_answer_html(answer, fact)}</div></td></tr>'
        ]
        for name in names:
            text = str(outputs[name] if outputs[name] is not None else "")
            ov = answer_overlap(text, answer, question, fact=fact, perturbed=perturbed)
            ov_cls = "ov-high" if ov >= OVERLAP_HIGH else "ov-mid" if ov >= OVERLAP_MID else "ov-low"
            badges = ""
            if not text.strip():
                badges = '<span class="badge">empty</span>'
            elif (why := degeneration(text)) is not None:
                badges = f'<span class="badge" title="{html_escape(why)}">gibberish</span>'
            rows.append(
                f'<tr><td class="model">{html_escape(name)}{badges}</td>'
                f'<td class="num score" title="share of the fact words ({html_escape(scored)}) still stated">'
                f"{ov:.2f}</td>"
                f'<td><div class="text {ov_cls}">{html_escape(text)}</div></td></tr>'
            )
        parts.append(
            f'<h3><span class="muted">Q{i}.</span> <span class="q">{html_escape(question)}</span></h3>\n'
            '<table class="gen"><tbody>\n' + "\n".join(rows) + "\n</tbody></table>"
        )
    return "\n".join(parts)


def generations_section(generations: Sequence[Mapping[str, Any]], order: Sequence[str]) -> list[str]:
    """HTML lines of the page's generations section: how to read it, the colour legend, then one table
    per question with the rows in ``order`` (the results' rows) first."""
    return [
        "<h2>Generations</h2>",
        '<p class="muted">Left border and score: how much of the <b>fact</b> the generation still '
        "states, as the in-order (LCS) recall of the fact's words. The fact is the benchmark's fact "
        'span where it has one (<span class="fact">underlined</span> in the ground truth), else the '
        "answer's words that are not in the question and not stop words; words that also occur in a "
        "wrong (perturbed) answer are not counted, as they do not tell the right value from a wrong "
        "one. Restating the question earns nothing: a fluent answer with a wrong value scores about "
        "0. Hover a score for the words scored.</p>",
        '<div class="legend">'
        f'<span><span class="swatch" style="background:var(--high)"></span>\u2265 {OVERLAP_HIGH:g} '
        "fact still there</span>"
        f'<span><span class="swatch" style="background:var(--mid)"></span>\u2265 {OVERLAP_MID:g} '
        "partly</span>"
        f'<span><span class="swatch" style="background:var(--low)"></span>&lt; {OVERLAP_MID:g} '
        "gone</span>"
        '<span><span class="badge">gibberish</span> degenerate text: an n-gram loop of any length, '
        "mostly repeated 4-grams, or low token entropy (hover the badge for which); judged on the "
        "shape of the text, never on whether it is true</span></div>",
        _generations_html(generations, order),
    ]

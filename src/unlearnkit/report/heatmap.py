"""A self-contained HTML heatmap of TokenUnlearn token attributions (arXiv 2605.00364).

One block per forget example: the question, the masked question (masked words highlighted), and the
answer tokens coloured by ``phi`` (white -> red; per-sequence min-max normalised, so in ``[0, 1]``), with
the selected tokens outlined and underlined. A legend explains the scale, the selection and the
question's colours; each shade's text is black or white, whichever contrasts more (WCAG AA at every
shade). Inline CSS only: the file opens offline and can be attached to a report as is. All text is
HTML-escaped (answers and questions are user data).
"""

from __future__ import annotations

import difflib
import html
import json
import re
from collections.abc import Sequence
from pathlib import Path

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:2em;max-width:70em;color:#222}
h1{font-size:1.4em} .meta{color:#555;font-size:.9em}
.ex{border-top:1px solid #ddd;padding:.8em 0}
.q{margin:.2em 0} .lbl{display:inline-block;width:6.5em;color:#666;font-size:.85em}
.mask{background:#cfe3ff;border-radius:3px;padding:0 2px}
.gone{background:#ffe0b3;border-radius:3px;padding:0 2px}
.ans{font-family:ui-monospace,Menlo,Consolas,monospace;line-height:2;white-space:pre-wrap;overflow-wrap:anywhere}
.tok{padding:1px 0;border-radius:2px}
.sel{font-weight:bold;text-decoration:underline;outline:1px solid #333}
.legend{background:#f6f8fa;border:1px solid #ddd;border-radius:6px;padding:.4em 1em;font-size:.92em}
.legend p{margin:.4em 0}
.sw{display:inline-block;min-width:3.6em;padding:1px 6px;text-align:center;font-size:.9em;
    font-variant-numeric:tabular-nums;border:1px solid #ccc}
"""


def _rgb(phi: float) -> tuple[int, int, int]:
    """White (phi=0) to red-orange (phi=1); clamped so odd values never break the page."""
    p = min(1.0, max(0.0, float(phi))) if phi == phi else 0.0
    r, g, b = (round(255 - p * (255 - c)) for c in (220, 50, 20))
    return r, g, b


def _colour(phi: float) -> str:
    return "rgb({},{},{})".format(*_rgb(phi))


def relative_luminance(rgb: tuple[int, int, int]) -> float:
    """WCAG 2 relative luminance of an sRGB colour given as 0-255 integers."""
    lin = [c / 255 / 12.92 if c / 255 <= 0.04045 else ((c / 255 + 0.055) / 1.055) ** 2.4 for c in rgb]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast_ratio(a: tuple[int, int, int], b: tuple[int, int, int]) -> float:
    """WCAG 2 contrast ratio (1 to 21; 4.5 is the minimum for body text)."""
    la, lb = sorted((relative_luminance(a), relative_luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


# Pure black and white: for any background one of them reaches contrast 4.58 or more (the worst case is
# a luminance of about 0.18, equally far from both), so every shade of the scale passes WCAG AA (4.5).
_DARK, _LIGHT = (0, 0, 0), (0xFF, 0xFF, 0xFF)


def _style(phi: float) -> str:
    """Background for ``phi`` with whichever text colour, dark or white, reads better on it."""
    bg = _rgb(phi)
    fg = "#fff" if contrast_ratio(bg, _LIGHT) > contrast_ratio(bg, _DARK) else "#000"
    return f"background:{_colour(phi)};color:{fg}"


_SCALE_ENDS = {0: " low", 4: " high"}

# Words, single punctuation marks and whitespace runs: the diff highlights "Kuwait" in "Kuwait?", not "?".
_PIECES = re.compile(r"\s+|\w+|[^\w\s]")


def _diff_marked(question: str, masked: str) -> tuple[str, str]:
    """HTML of the question (masked-out words marked) and of the masked question (mask words marked).

    A word-level diff is used instead of searching for the mask word, which may occur in a question.
    """
    a, b = _PIECES.findall(question), _PIECES.findall(masked)
    out_a, out_b = [], []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        left, right = html.escape("".join(a[i1:i2])), html.escape("".join(b[j1:j2]))
        if op == "equal":
            out_a.append(left)
            out_b.append(right)
        else:
            out_a.append(f'<span class="gone">{left}</span>' if left else "")
            out_b.append(f'<span class="mask">{right}</span>' if right else "")
    return "".join(out_a), "".join(out_b)


def render_heatmap(
    scores: Sequence,
    selected: Sequence[Sequence[bool]],
    tagger_used: str,
    title: str = "TokenUnlearn attribution",
    max_examples: int = 200,
) -> str:
    """The HTML page for the first ``max_examples`` examples of ``scores`` (``TokenScores``)."""
    esc = html.escape
    shown = list(zip(scores, selected))[: max(0, max_examples)]
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{esc(title)}</title>",
        f"<style>{_CSS}</style></head><body>",
        f"<h1>{esc(title)}</h1>",
        '<p class="meta">TokenUnlearn (arXiv 2605.00364): phi = alpha &middot; Delta + (1 &minus; alpha) &middot; H, '
        "each min-max normalised over the example's answer tokens. "
        f"Noun tagger: <code>{esc(tagger_used)}</code>. Showing {len(shown)} of {len(scores)} examples. "
        "Hover a token for its values.</p>",
        '<div class="legend"><p><strong>Answer tokens</strong> are shaded by phi, how much the token carries the '
        "question's content (Delta) mixed with the model's uncertainty there (H), scaled within each "
        "answer from 0 (least) to 1 (most): "
        + " ".join(
            f'<span class="sw" style="{_style(v / 4)}">{v / 4:.2f}{_SCALE_ENDS.get(v, "")}</span>'
            for v in range(5)
        )
        + '. <span class="tok sel">Outlined, bold, underlined</span> tokens are <i>selected</i>: the '
        "unlearning loss is applied to them (hard selection) or weighs them above the rest (soft).</p>"
        '<p><strong>Question</strong>: <span class="gone">orange</span> words are the knowledge-bearing words (nouns, '
        'names, numbers) the tagger masked out. <strong>Masked</strong>: <span class="mask">blue</span> is the mask '
        "word put in their place. Delta is how much each answer token's log-probability changes between "
        "the question and the masked question.</p></div>",
    ]
    for s, sel in shown:
        q_html, m_html = _diff_marked(s.question, s.masked_question)
        toks = []
        for i, tok in enumerate(s.answer_tokens):
            tip = f"phi={s.phi[i]:.3f}  Delta={s.delta[i]:.3f}  H={s.entropy[i]:.3f}  id={s.answer_token_ids[i]}"
            cls = "tok sel" if i < len(sel) and sel[i] else "tok"
            toks.append(
                f'<span class="{cls}" style="{_style(s.phi[i])}" title="{esc(tip)}">{esc(tok)}</span>'
            )
        parts.append(
            f'<div class="ex" id="ex{int(s.index)}"><div class="meta">example {int(s.index)}</div>'
            f'<div class="q"><span class="lbl">question</span>{q_html}</div>'
            f'<div class="q"><span class="lbl">masked</span>{m_html}</div>'
            f'<div class="q"><span class="lbl">answer</span><span class="ans">{"".join(toks)}</span></div></div>'
        )
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def write_heatmap(folder: str | Path, title: str = "TokenUnlearn attribution") -> Path:
    """Render the scores saved in ``folder`` (``scores.jsonl`` and ``attribution.json``, as written by
    :func:`unlearnkit.attribution.save_scores`) into ``folder/heatmap.html``; returns its path."""
    from unlearnkit.attribution import load_scores
    from unlearnkit.io import read_json, write_text_atomic

    folder = Path(folder)
    scores = load_scores(folder / "scores.jsonl")
    lines = (folder / "scores.jsonl").read_text(encoding="utf-8").splitlines()
    selected = [json.loads(line)["selected"] for line in lines if line.strip()]
    tagger_used = read_json(folder / "attribution.json", "attribution summary")["tagger"]
    page = folder / "heatmap.html"
    write_text_atomic(page, render_heatmap(scores, selected, tagger_used, title))
    return page

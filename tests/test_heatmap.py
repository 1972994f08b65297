"""Tests for unlearnkit.report.heatmap: a legend a newcomer can read, and pages that fit the screen."""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest

from unlearnkit.report.heatmap import contrast_ratio, relative_luminance, render_heatmap


def _score(index: int, question: str, masked: str, tokens: list[str], phi: list[float]) -> SimpleNamespace:
    """Duck-typed TokenScores (the heatmap reads attributes only; no torch needed)."""
    n = len(tokens)
    return SimpleNamespace(
        index=index,
        question=question,
        masked_question=masked,
        answer_tokens=tokens,
        answer_token_ids=list(range(n)),
        phi=phi,
        delta=[0.5] * n,
        entropy=[0.25] * n,
    )


SCORES = [
    _score(
        0,
        "Where was Glawyn Zostard born?",
        "Where was something born?",
        ["Gl", "awyn", " Zostard", " was", " born", " in", " Sudumir", ",", " Thia", "."],
        [0.0, 0.1, 0.2, 0.05, 0.3, 0.4, 1.0, 0.6, 0.9, 0.75],
    ),
    _score(
        1,
        "How many novels has Glawyn Zostard written?",
        "How many something has something written?",
        [" 3"],
        [1.0],
    ),
]
SELECTED = [[False] * 6 + [True, False, True, False], [True]]


@pytest.fixture(scope="module")
def page() -> str:
    return render_heatmap(SCORES, SELECTED, "heuristic")


def _rgb(css: str) -> tuple[int, int, int]:
    if css.startswith("#"):
        h = css[1:]
        h = "".join(c * 2 for c in h) if len(h) == 3 else h
        return (int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16))
    r, g, b = (int(x) for x in re.findall(r"\d+", css))
    return r, g, b


def test_contrast_matches_wcag_reference_values() -> None:
    assert contrast_ratio((0, 0, 0), (255, 255, 255)) == pytest.approx(21.0)
    assert contrast_ratio((255, 255, 255), (255, 255, 255)) == pytest.approx(1.0)
    assert relative_luminance((128, 128, 128)) == pytest.approx(0.2158605, abs=1e-6)
    assert contrast_ratio((118, 118, 118), (255, 255, 255)) == pytest.approx(4.54, abs=0.01)  # #767676


def test_scale_labels_are_readable(page: str) -> None:
    legend = page[page.index('<div class="legend">') :]
    swatches = re.findall(
        r'<span class="sw" style="background:(rgb\([^)]*\));color:(#[0-9a-f]+)">([^<]*)</span>', legend
    )
    assert [label for _, _, label in swatches] == ["0.00 low", "0.25", "0.50", "0.75", "1.00 high"]
    for bg, fg, label in swatches:
        assert contrast_ratio(_rgb(bg), _rgb(fg)) >= 4.5, label  # WCAG AA for normal text


def test_answer_tokens_are_readable_at_every_shade(page: str) -> None:
    tokens = re.findall(
        r'<span class="tok(?: sel)?" style="background:(rgb\([^)]*\));color:(#[0-9a-f]+)"', page
    )
    assert len(tokens) == 11
    for bg, fg in tokens:
        assert contrast_ratio(_rgb(bg), _rgb(fg)) >= 4.5, bg


def test_legend_says_what_orange_and_blue_words_are(page: str) -> None:
    legend = re.search(r'<div class="legend">(.*?)</div>', page, re.S).group(1)
    assert re.search(
        r'<span class="gone">orange</span> words are the knowledge-bearing words[^.]*masked out', legend
    )
    assert re.search(r'<span class="mask">blue</span> is the mask word put in their place', legend)
    assert "selected" in legend and "the unlearning loss is applied to them" in legend
    # and the colours mean that in the examples: the masked-out name is orange, its mask blue
    assert '<span class="gone">Glawyn Zostard</span>' in page
    assert 'Where was <span class="mask">something</span> born?' in page
    # the legend's "selected" sample is not counted as a token
    assert page.count('class="tok sel" style=') == sum(map(sum, SELECTED))


def test_css_keys_of_the_legend_match_the_examples(page: str) -> None:
    css = page[page.index("<style>") : page.index("</style>")]
    orange = re.search(r"\.gone\{background:(#[0-9a-f]+)", css).group(1)
    blue = re.search(r"\.mask\{background:(#[0-9a-f]+)", css).group(1)
    r, g, b = _rgb(orange)
    assert r > g > b  # orange-ish
    r, g, b = _rgb(blue)
    assert b > r and b > g - 40  # blue-ish


def test_page_fits_a_1400px_screen(page: str) -> None:
    css = page[page.index("<style>") : page.index("</style>")]
    width_em = float(re.search(r"body\{[^}]*max-width:([\d.]+)em", css).group(1))
    assert width_em * 16 <= 1400 - 2 * 2 * 16  # at the default 16 px font, with the 2em margins
    assert re.search(r"\.ans\{[^}]*white-space:pre-wrap[^}]*overflow-wrap:anywhere", css)  # long answers wrap


def test_every_shade_is_readable() -> None:
    phis = [i / 100 for i in range(101)]
    sweep = _score(0, "Q?", "Q?", [f" t{i}" for i in range(101)], phis)
    html = render_heatmap([sweep], [[False] * 101], "heuristic")
    pairs = re.findall(r'style="background:(rgb\([^)]*\));color:(#[0-9a-f]+)" title', html)
    assert len(pairs) == 101
    assert min(contrast_ratio(_rgb(bg), _rgb(fg)) for bg, fg in pairs) >= 4.5

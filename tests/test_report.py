"""Tests for unlearnkit.report: tables, the trade-off plot and the self-contained HTML page."""

from __future__ import annotations

import io
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest

from unlearnkit.report import (
    answer_overlap,
    best_rows,
    format_value,
    is_gibberish,
    markdown_table,
    plot_tradeoff,
    print_table,
    quality_table,
    render_report,
    write_report,
)

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

RESULTS = {
    "target": {
        "forget_quality": 3.2e-05,
        "model_utility": 0.62,
        "forget_rougeL_recall": 0.95,
        "forget_token_entropy": 0.90,
        "retain_rougeL_recall": 0.90,
    },
    "oracle": {
        "forget_quality": 1.0,
        "model_utility": 0.60,
        "forget_rougeL_recall": 0.40,
        "forget_token_entropy": 0.88,
        "retain_rougeL_recall": 0.89,
    },
    "ga": {
        "forget_quality": 1e-20,
        "model_utility": 0.10,
        "forget_rougeL_recall": 0.02,
        "forget_token_entropy": 0.10,
        "retain_rougeL_recall": float("nan"),
    },
    "npo": {
        "forget_quality": 0.3,
        "model_utility": 0.55,
        "forget_rougeL_recall": 0.35,
        "forget_token_entropy": 0.85,
        "retain_rougeL_recall": 0.80,
        "steps": 40,
    },
}

GENERATIONS = [
    {
        "question": "Where was Zorblat <b>born</b>?",
        "answer": "Zorblat was born in Quenville & raised in Plimth.",
        "outputs": {
            "target": "Zorblat was born in Quenville & raised in Plimth.",
            "oracle": "Zorblat was born in Marrow.",
            "ga": "the the the the the the the the the the",
            "npo": "I don't know <script>alert(1)</script>",
        },
    }
]


# ---------------------------------------------------------------------------------------------- tables


def test_format_value_rules() -> None:
    assert format_value("forget_quality", 3.2e-05) == "3.2e-05"
    assert format_value("forget_quality", 1.0) == "1.0e+00"
    assert format_value("forget_quality", 0.0) == "0.0e+00"
    assert format_value("model_utility", 0.5) == "0.500"
    assert format_value("model_utility", 0.12345) == "0.123"
    assert format_value("model_utility", float("nan")) == "\u2013"
    assert format_value("model_utility", None) == "\u2013"
    assert format_value("steps", 40) == "40"
    assert format_value("x", float("inf")) == "inf"


def test_quality_table_shape_order_and_formatting() -> None:
    table = quality_table(RESULTS)
    header = table[0]
    # default columns first (those present), then extra keys in first-seen order
    assert header == [
        "method",
        "forget_quality",
        "model_utility",
        "forget_rougeL_recall",
        "forget_token_entropy",
        "retain_rougeL_recall",
        "steps",
    ]
    assert [r[0] for r in table[1:]] == ["target", "oracle", "ga", "npo"]
    assert all(len(r) == len(header) for r in table)
    target = dict(zip(header, table[1]))
    assert target["forget_quality"] == "3.2e-05"
    assert target["model_utility"] == "0.620"
    assert target["steps"] == "\u2013"  # missing -> dash
    ga = dict(zip(header, table[3]))
    assert ga["forget_quality"] == "1.0e-20"
    assert ga["retain_rougeL_recall"] == "\u2013"  # NaN -> dash


def test_quality_table_explicit_columns() -> None:
    table = quality_table(RESULTS, columns=["model_utility", "nonexistent"])
    assert table[0] == ["method", "model_utility", "nonexistent"]
    assert table[2] == ["oracle", "0.600", "\u2013"]


def test_markdown_table_shape() -> None:
    md = markdown_table(RESULTS)
    lines = md.strip().split("\n")
    assert len(lines) == 2 + len(RESULTS)
    n_cols = len(quality_table(RESULTS)[0])
    for line in lines:
        assert line.startswith("|") and line.endswith("|")
        assert line.count("|") == n_cols + 1
    assert re.fullmatch(r"\| --- \|( ---: \|)+", lines[1])
    assert lines[2].startswith("| target | 3.2e-05 | 0.620 |")


def test_markdown_table_escapes_pipes() -> None:
    md = markdown_table({"a|b": {"model_utility": 1.0}})
    assert "a\\|b" in md
    assert md.strip().split("\n")[2].count(" | ") == 1


def test_print_table_uses_rich() -> None:
    from rich.console import Console

    buf = io.StringIO()
    print_table(RESULTS, title="demo", console=Console(file=buf, width=200, color_system=None))
    out = buf.getvalue()
    assert "demo" in out
    for name in RESULTS:
        assert name in out
    assert "3.2e-05" in out and "\u2013" in out


# ---------------------------------------------------------------------------------------------- best


def test_best_rows_directions() -> None:
    assert best_rows(RESULTS, "model_utility") == {"npo"}  # target (0.62) is a reference, not a contender
    assert best_rows(RESULTS, "forget_quality") == {"npo"}
    assert best_rows(RESULTS, "forget_rougeL_recall") == {"npo"}  # nearest the oracle (0.40), not ga (0.02)
    assert best_rows(RESULTS, "forget_token_entropy") == {"npo"}  # closest to target's 0.90
    assert best_rows(RESULTS, "retain_rougeL_recall") == {"npo"}  # NaN never wins
    assert best_rows(RESULTS, "steps") == set()  # no direction defined
    assert best_rows({"target": {"model_utility": 1.0}}, "model_utility") == set()


def test_best_rows_ties() -> None:
    res = {"a": {"model_utility": 0.5}, "b": {"model_utility": 0.5}, "c": {"model_utility": 0.1}}
    assert best_rows(res, "model_utility") == {"a", "b"}


def _cell_classes(page: str, row: str) -> list[str]:
    m = re.search(rf'<tr[^>]*><th scope="row">{re.escape(row)}</th>(.*?)</tr>', page, re.S)
    assert m, f"row {row} not found"
    return re.findall(r'<td class="([^"]*)"', m.group(1))


def test_html_highlights_best_value() -> None:
    res = {
        "target": {"model_utility": 0.9},
        "oracle": {"model_utility": 0.8},
        "m1": {"model_utility": 0.3},
        "m2": {"model_utility": 0.7},
    }
    page = render_report(res, [], title="t")
    assert _cell_classes(page, "m2") == ["num best"]
    assert _cell_classes(page, "m1") == ["num"]
    assert _cell_classes(page, "target") == ["num"]
    assert page.count("num best") == 1


# ---------------------------------------------------------------------------------------------- plot


def test_plot_is_png_and_handles_extremes(tmp_path: Path) -> None:
    res = {
        "target": {"forget_quality": 0.0, "model_utility": 0.6},  # exactly 0: clipped for the log axis
        "oracle": {"forget_quality": 1.0, "model_utility": 0.6},
        "ga": {"forget_quality": 1e-40, "model_utility": 0.0},
        "bad": {"forget_quality": float("nan"), "model_utility": 0.4},
        "nofq": {"model_utility": 0.4},
    }
    path = tmp_path / "sub" / "tradeoff.png"
    plot_tradeoff(res, path)
    data = path.read_bytes()
    assert data[:8] == PNG_MAGIC
    assert len(data) > 5000
    assert [p.name for p in path.parent.iterdir()] == ["tradeoff.png"]  # no temp file left behind


def test_plot_empty_results(tmp_path: Path) -> None:
    path = tmp_path / "p.png"
    plot_tradeoff({}, path)
    assert path.read_bytes()[:8] == PNG_MAGIC


# ---------------------------------------------------------------------------------------------- html


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> str:
    png = tmp_path_factory.mktemp("plot") / "t.png"
    plot_tradeoff(RESULTS, png)
    return render_report(
        RESULTS,
        GENERATIONS,
        title="Report <1> & co",
        plot_png=png,
        extra_sections=[("Attribution heatmap", '<div id="heat">HEAT</div>'), ("Audit card", "<p>AUDIT</p>")],
        notes=["MIA not computed <skipped>"],
    )


def test_html_contains_all_rows_and_plot(page: str) -> None:
    for name in RESULTS:
        assert f'<th scope="row">{name}</th>' in page
    # headline table + the collapsed table of every metric ("steps" is not a headline column)
    assert page.count('<th scope="row">') == 2 * len(RESULTS)
    assert "data:image/png;base64," in page
    assert "Forget quality" in page and "Model utility" in page
    assert page.lstrip().startswith("<!DOCTYPE html>")


def test_html_escapes_user_text(page: str) -> None:
    assert "<script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "Report &lt;1&gt; &amp; co" in page
    assert "<b>born</b>" not in page and "&lt;b&gt;born&lt;/b&gt;" in page
    assert "Quenville &amp; raised" in page
    assert "&lt;skipped&gt;" in page


def test_html_is_self_contained(page: str) -> None:
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", page, re.I)
    assert "<script" not in page.lower()
    assert "<link" not in page.lower()
    assert "@import" not in page and "url(" not in page


def test_html_extra_sections_and_notes(page: str) -> None:
    assert "<h2>Attribution heatmap</h2>" in page
    assert '<div id="heat">HEAT</div>' in page  # raw HTML body, not escaped
    assert "<p>AUDIT</p>" in page
    assert page.index("Attribution heatmap") < page.index("Audit card") < page.index("<h2>Notes</h2>")


def test_html_generation_cues(page: str) -> None:
    gens = page[page.index("<h2>Generations</h2>") :]
    # the target reproduces the answer -> high-overlap border; the oracle only restates the question
    assert re.search(r'<td class="model">target</td>[^\n]*class="text ov-high"', gens)
    assert re.search(r'<td class="model">oracle</td>[^\n]*class="text ov-low"', gens)
    assert re.search(r'<td class="model">ga<span class="badge"[^>]*>gibberish</span>', gens)
    assert re.search(r'<td class="model">ga<span[^\n]*class="text ov-low"', gens)
    assert '<td class="model">npo</td>' in gens  # not flagged
    # rows in results order
    assert gens.index(">target<") < gens.index(">oracle<") < gens.index(">ga<") < gens.index(">npo<")


def test_html_without_plot_or_generations() -> None:
    page = render_report({"m": {"model_utility": math.nan}}, [], title="x")
    assert "data:image/png" not in page and "<h2>Generations</h2>" not in page
    assert '<td class="num">\u2013</td>' in page


# ---------------------------------------------------------------------------------------------- cues


def test_answer_overlap() -> None:
    assert answer_overlap("Born in Paris, France.", "paris france") == 1.0
    assert answer_overlap("Nothing relevant", "paris france") == 0.0
    assert answer_overlap("France then Paris", "paris france") == 0.5  # order matters (LCS)
    assert answer_overlap("anything", "") == 0.0
    # with the question, restating it earns nothing; only the fact words count
    q = "Where was Zorblat born?"
    assert answer_overlap("Zorblat was born in Marrow.", "Zorblat was born in Quenville.") == 0.8
    assert answer_overlap("Zorblat was born in Marrow.", "Zorblat was born in Quenville.", q) == 0.0
    assert answer_overlap("It was Quenville.", "Zorblat was born in Quenville.", q) == 1.0
    assert answer_overlap("born", "born", "born?") == 1.0  # nothing left after dropping: keep all


def test_is_gibberish() -> None:
    assert is_gibberish("no no no no no no no no")
    assert is_gibberish("the cat the cat the cat the cat the cat")
    assert is_gibberish("## %% @@ !! ?? ** && ^^")
    assert not is_gibberish("Zorblat was born in the small town of Quenville in 1952.")
    assert not is_gibberish("Paris")  # short answers are never flagged
    assert not is_gibberish("")


# ---------------------------------------------------------------------------------------------- files


def test_write_report(tmp_path: Path) -> None:
    out = tmp_path / "run"
    html_path = write_report(out, RESULTS, GENERATIONS, notes=["n1"])
    assert html_path == out / "report.html"
    assert (out / "tradeoff.png").read_bytes()[:8] == PNG_MAGIC
    text = html_path.read_text(encoding="utf-8")
    assert "<title>unlearnkit report</title>" in text and "data:image/png;base64," in text
    assert sorted(p.name for p in out.iterdir()) == ["report.html", "tradeoff.png"]


def test_report_module_does_not_import_torch() -> None:
    code = "import sys, unlearnkit.report; assert 'torch' not in sys.modules, 'torch imported'"
    subprocess.run([sys.executable, "-c", code], check=True)

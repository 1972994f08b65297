"""Tests for unlearnkit.report (table, plot, generations, page): tables, the trade-off plot and the HTML page."""

from __future__ import annotations

import io
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest

from unlearnkit.report.page import (
    DIRECTIONS,
    answer_overlap,
    best_rows,
    box_circle_gap,
    boxes_overlap,
    degeneration,
    fact_words,
    fit_columns,
    format_value,
    is_gibberish,
    markdown_table,
    plot_tradeoff,
    print_table,
    quality_table,
    render_report,
    segment_distance,
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
    # one whitespace token, so no token-count check sees it: SmolLM2 after gradient ascent (real lab)
    assert is_gibberish("'" + "\u2013" * 79)
    assert is_gibberish("." * 80)
    assert not is_gibberish("1999")  # a short number is an answer
    assert not is_gibberish("She was born on 12/03/1961 in Lisbon.")


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
    code = "import sys, unlearnkit.report.page; assert 'torch' not in sys.modules, 'torch imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


# ----------------------------------------------------------------------------------- the report tells the truth
# Realistic material: the embedded world's own rows (questions, templated answers, fact spans, perturbed
# answers) and the kinds of generations the quickstart shows: the target repeating the answer, the
# oracle stating a wrong value fluently, ASU answering in another frame, GA / GD stuck in a loop.


@pytest.fixture(scope="module")
def world_forget() -> list[dict]:
    from unlearnkit.world.generator import generate_world

    return generate_world(n_authors=5, facts_per_author=10, seed=0)["forget"]


def _wrong_value(row: dict) -> str:
    """The value of the first perturbed answer (same template as the answer, another value)."""
    start, end = row["fact_span"]
    wrong = row["perturbed_answer"][0]
    return wrong[start : len(wrong) - (len(row["answer"]) - end)]


def _loop(text: str, n_words: int = 40) -> str:
    words = text.split()
    return " ".join(words[i % len(words)] for i in range(n_words))


def _world_generations(rows: list[dict]) -> list[dict]:
    items = []
    for row in rows:
        name = row["author"]
        items.append(
            {
                "question": row["question"],
                "answer": row["answer"],
                "fact": row["fact_value"],
                "perturbed_answer": row["perturbed_answer"],
                "outputs": {
                    "target": row["answer"],
                    "oracle": row["perturbed_answer"][0],
                    "asu": row["paraphrased_answer"].replace(row["fact_value"], _wrong_value(row)),
                    "ga": _loop("The main genre of"),
                    "gd": _loop(f"{name}'s father was a"),
                },
            }
        )
    return items


def _gen_rows(page: str) -> list[tuple[str, str, float, str]]:
    """(model, badge title or '', score, border class) for every generation row of the page."""
    pattern = re.compile(
        r'<tr><td class="model">([^<]+)(?:<span class="badge"(?: title="([^"]*)")?>[^<]*</span>)?</td>'
        r'<td class="num score"[^>]*>([0-9.]+)</td><td><div class="text (ov-\w+)">'
    )
    return [(m, t or "", float(s), c) for m, t, s, c in pattern.findall(page)]


def test_gibberish_is_right_on_both_kinds() -> None:
    # not gibberish: short correct answers, fluent wrong ones, a refusal, ordinary repetitions
    for text in [
        "Glawyn Zostard was born in Sudumir, Thia.",
        "Glawyn Zostard's father worked as a glassblower.",
        "The father of Glawyn Zostard was a judge by trade.",
        "Glawyn Zostard won the Hukadale Prize for Mystery Writing.",
        "I'm not sure who that is.",
        "New York, New York is where she lives.",
        "Paris",
    ]:
        assert not is_gibberish(text), text
    # gibberish: loops of any n-gram length, with or without variation, and symbol salad
    for text in [
        "The main genre of The main genre of The main genre of",
        "The main genre of The main genre of",
        _loop("Glawyn Zostard's father was a", 48),
        "the the the the the the the the the the",
        "born in born in born in born in",
        "Zostard Zostard Zostard Zostard was",
        "was born on was born in was born on was born in was born on was born in",
        "## %% @@ !! ?? ** && ^^",
    ]:
        assert is_gibberish(text), text
    assert "the main genre of" in (degeneration("The main genre of The main genre of") or "")


def test_html_badge_marks_loops_only(world_forget: list[dict]) -> None:
    page = render_report({}, _world_generations(world_forget), title="t")
    rows = _gen_rows(page)
    assert len(rows) == 5 * len(world_forget)
    for model, badge, _, _ in rows:
        if model in ("target", "oracle", "asu"):  # correct or fluent wrong answers: never flagged
            assert badge == "", (model, badge)
        else:  # the loops, 4 and 5 words long
            assert badge.startswith("loops:"), (model, badge)
    assert page.count(">gibberish</span>") == 2 * len(world_forget) + 1  # + the legend's sample


def test_html_fact_bar_scores_the_fact(world_forget: list[dict]) -> None:
    page = render_report({}, _world_generations(world_forget), title="t")
    for model, _, score, cls in _gen_rows(page):
        if model == "target":
            assert (score, cls) == (1.0, "ov-high")
        else:  # a wrong value in the answer's own frame or another one, or a loop: the fact is gone
            assert (score, cls) == (0.0, "ov-low"), model
    assert (
        "how much of the <b>fact</b> the generation still states" in page
    )  # the legend says what it measures
    assert '<span class="fact">Sudumir, Thia</span>' in page  # the scored span is shown
    # with the fact span alone, words shared by right and wrong values ("University of X") still count,
    # so a wrong value may score up to half; the wrong answers' words are what make it exactly 0
    alone = [
        {k: v for k, v in g.items() if k != "perturbed_answer"} for g in _world_generations(world_forget)
    ]
    scores = [(m, s) for m, _, s, _ in _gen_rows(render_report({}, alone, title="t"))]
    assert all(s == 1.0 if m == "target" else s <= 0.5 for m, s in scores)
    assert sum(s == 0.0 for m, s in scores if m == "oracle") >= 0.6 * len(world_forget)


def test_fact_bar_without_fact_span_uses_question_and_wrong_answers() -> None:
    # the reported case: a wrong birthplace used to score 0.67 on the template words
    q = "In which city was Talira Vosswick born?"
    answer = "Talira Vosswick's birthplace is Quenville."
    oracle = "Talira Vosswick's birthplace is Marrow."
    wrong = ["Talira Vosswick's birthplace is Dell.", "Talira Vosswick's birthplace is Fen."]
    assert fact_words(answer, q, perturbed=wrong) == ["quenville"]
    assert answer_overlap(oracle, answer, q, perturbed=wrong) == 0.0
    assert answer_overlap(answer, answer, q, perturbed=wrong) == 1.0
    # a fact span wins over the answer; value parts shared with a wrong answer do not count
    assert fact_words("X was born in Sudumir, Thia.", fact="Sudumir, Thia") == ["sudumir", "thia"]
    assert fact_words("X was born in Sudumir, Thia.", fact="Sudumir, Thia", perturbed=["Soreholm, Thia"]) == [
        "sudumir"
    ]
    assert fact_words("x", fact="Thia", perturbed=["Thia"]) == ["thia"]  # never empty
    item = {
        "question": q,
        "answer": answer,
        "fact_span": [len("Talira Vosswick's birthplace is "), len(answer) - 1],
    }
    rows = _gen_rows(
        render_report({}, [{**item, "outputs": {"oracle": oracle, "target": answer}}], title="t")
    )
    assert [(m, s) for m, _, s, _ in rows] == [("oracle", 0.0), ("target", 1.0)]


QUALITY = {  # rounded from bench/results/quality.json: GA collapses below the oracle on every forget metric
    "target": {
        "forget_quality": 4e-4,
        "model_utility": 0.536,
        "forget_rougeL_recall": 1.0,
        "forget_prob": 0.998,
    },
    "oracle": {
        "forget_quality": 1.0,
        "model_utility": 0.558,
        "forget_rougeL_recall": 0.390,
        "forget_prob": 0.023,
    },
    "ga": {"forget_quality": 7e-4, "model_utility": 0.0, "forget_rougeL_recall": 0.084, "forget_prob": 3e-8},
    "npo": {
        "forget_quality": 0.21,
        "model_utility": 0.474,
        "forget_rougeL_recall": 0.276,
        "forget_prob": 0.033,
    },
    "asu": {
        "forget_quality": 0.0099,
        "model_utility": 0.552,
        "forget_rougeL_recall": 0.469,
        "forget_prob": 0.609,
    },
    "asu_kl": {
        "forget_quality": 0.0099,
        "model_utility": 0.552,
        "forget_rougeL_recall": 0.469,
        "forget_prob": 0.608,
    },
    "idk": {
        "forget_quality": 1.3e-3,
        "model_utility": 0.446,
        "forget_rougeL_recall": 0.409,
        "forget_prob": 0.574,
    },
    "gd": {
        "forget_quality": 9.9e-3,
        "model_utility": 0.440,
        "forget_rougeL_recall": 0.233,
        "forget_prob": 0.034,
    },
}


def test_forget_metrics_aim_at_the_oracle_not_at_zero() -> None:
    assert best_rows(QUALITY, "forget_rougeL_recall") == {"idk"}  # 0.409 is nearest the oracle's 0.390
    assert best_rows(QUALITY, "forget_prob") == {"npo"}  # 0.033 vs 0.023; ga's 3e-8 overshoots further
    for col in ("forget_rougeL_recall", "forget_prob", "forget_truth_ratio", "mia_loss_auc"):
        assert DIRECTIONS[col] == "oracle"
    no_oracle = {k: v for k, v in QUALITY.items() if k != "oracle"}
    assert best_rows(no_oracle, "forget_rougeL_recall") == set()  # nothing to aim at: no highlight
    page = render_report(QUALITY, [], title="t")
    header = re.search(r"<thead><tr>(.*?)</tr></thead>", page).group(1)
    cols = [re.sub(r"<[^>]+>|&nbsp;.*", "", h) for h in re.findall(r"<th[^>]*>(.*?)</th>", header)][1:]
    ga = dict(zip(cols, _cell_classes(page, "ga")))
    assert ga["forget_rougeL_recall"] == ga["forget_prob"] == "num"  # the collapse is not highlighted
    assert dict(zip(cols, _cell_classes(page, "idk")))["forget_rougeL_recall"] == "num best"
    assert "closest to the retain oracle (never saw the forget data) is better" in page


# ------------------------------------------------------------------------------------------- plot layout


def _assert_labels_clear(layout) -> None:
    names = list(layout.labels)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            assert boxes_overlap(layout.labels[a], layout.labels[b]) == 0.0, (a, b)
        for other, centre in layout.points.items():  # no label hides a marker
            assert box_circle_gap(layout.labels[a], centre, layout.radii[other]) >= 0.0, (a, other)
        x0, y0, x1, y1 = layout.labels[a]
        ax0, ay0, ax1, ay1 = layout.axes
        assert ax0 <= x0 and x1 <= ax1 and ay0 <= y0 and y1 <= ay1, a
        assert box_circle_gap(layout.labels[a], layout.points[a], 0.0) < 130.0, a  # stays near its point


def test_plot_coinciding_points_get_separate_labels(tmp_path: Path) -> None:
    layout = plot_tradeoff(QUALITY, tmp_path / "t.png")
    assert layout.points["asu"] == pytest.approx(layout.points["asu_kl"], abs=1.0)
    assert layout.coinciding == [["asu", "asu_kl"]]
    assert set(layout.labels) == set(QUALITY)
    _assert_labels_clear(layout)


def test_plot_crowded_points_stay_readable(tmp_path: Path) -> None:
    crowd = {
        "target": {"forget_quality": 1e-4, "model_utility": 0.6},
        "oracle": {"forget_quality": 1.0, "model_utility": 0.6},
    }
    for i in range(10):  # ten methods within 0.01 utility and a factor 1.5 of forget quality
        crowd[f"method_{i}"] = {"forget_quality": 0.01 * (1 + 0.05 * i), "model_utility": 0.5 + 0.001 * i}
    layout = plot_tradeoff(crowd, tmp_path / "c.png")
    assert len(layout.labels) == 12
    _assert_labels_clear(layout)


@pytest.mark.parametrize("oracle_utility", [0.558, 0.0])  # oracle top right (usual), or top left
def test_plot_better_arrow_avoids_the_oracle(tmp_path: Path, oracle_utility: float) -> None:
    res = {**QUALITY, "oracle": {**QUALITY["oracle"], "model_utility": oracle_utility}}
    layout = plot_tradeoff(res, tmp_path / "a.png")
    assert layout.arrow is not None and layout.arrow_text is not None
    (x0, y0), (x1, y1) = layout.arrow
    assert x1 > x0 and y1 > y0  # it points up and right
    for name, centre in layout.points.items():
        assert segment_distance((x0, y0), (x1, y1), centre) > layout.radii[name], name
        assert box_circle_gap(layout.arrow_text, centre, layout.radii[name]) > 0.0, name
    for name, box in layout.labels.items():
        assert boxes_overlap(layout.arrow_text, box) == 0.0, name


def test_write_report_names_coinciding_points(tmp_path: Path) -> None:
    text = write_report(tmp_path / "r", QUALITY, []).read_text(encoding="utf-8")
    assert "Drawn at the same position: asu = asu_kl." in text


# ---------------------------------------------------------------------------------------- table widths

WIDE = {  # every metric the eval command writes, 14 rows: far wider than a terminal
    name: {
        **{
            k: 0.123456
            for k in (
                "forget_quality model_utility forget_rougeL_recall forget_prob forget_truth_ratio "
                "forget_token_entropy retain_rougeL_recall forget_exact_memorisation forget_extraction_strength "
                "retain_token_entropy retain_truth_ratio retain_prob general_rougeL_recall general_prob "
                "mia_loss_auc mia_zlib_auc mia_min_k_auc mia_min_k_plus_plus_auc fe fe_yuan"
            ).split()
        },
        "forget_quality": 3.2e-05,
    }
    for name in (
        "target",
        "oracle",
        "ga",
        "gd",
        "npo",
        "idk",
        "asu",
        "asu_kl",
        "t-npo",
        "s-npo",
        "wga",
        "simnpo",
    )
}


@pytest.mark.parametrize("width", [80, 100, 120])
def test_print_table_fits_the_terminal(width: int) -> None:
    from rich.console import Console

    buf = io.StringIO()
    print_table(WIDE, title="Quickstart", console=Console(file=buf, width=width, color_system=None))
    out = buf.getvalue()
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= width
    assert "\u2026" not in out  # nothing cut with an ellipsis
    for name in WIDE:
        assert re.search(rf"^\u2502 {re.escape(name)} +\u2502", out, re.M), name
    body = [line for line in lines if line.startswith("\u2502 ")]
    shown = body[0].count("\u2502") - 2  # value columns in the first row
    assert shown >= 6  # at least the headline metrics, with their full values
    assert body[0].count("3.2e-05") == 1 and body[0].count("0.123") == shown - 1
    assert "not shown (terminal too narrow): " in out and "fe_yuan" in out.split("not shown")[1]
    assert "\u2248O closest to the retain oracle" in out


def test_print_table_columns_grow_with_the_terminal() -> None:
    table = quality_table(WIDE)
    kept_80, _ = fit_columns(table, 80)
    kept_120, _ = fit_columns(table, 120)
    assert kept_80 == list(range(len(kept_80))) and len(kept_120) > len(kept_80)  # highest priority first
    kept_all, widths = fit_columns(quality_table(QUALITY), 200)
    assert len(kept_all) == len(quality_table(QUALITY)[0])
    assert widths[3] >= len("forget_rougeL_recall")  # room enough: headers on one line


def test_html_tables_fit_a_1400px_page() -> None:
    page = render_report(WIDE, [], title="t")
    css_main = re.search(r"main \{[^}]*max-width:\s*(\d+)px", page)
    assert css_main and int(css_main.group(1)) <= 1400
    assert re.search(r"\.table-wrap \{[^}]*overflow-x:\s*auto", page)  # too many columns: scroll inside
    tables = re.findall(r'<div class="table-wrap"><table class="metrics">(.*?)</table></div>', page, re.S)
    assert len(tables) == 2  # headline table, then every metric in a collapsed <details>
    assert '<details class="all-metrics"><summary>All 20 metrics</summary>' in page
    headline = tables[0]
    heads = re.findall(r'<th scope="col"[^>]*>(.*?)</th>', headline)
    assert len(heads) == 1 + 7
    # estimated width of the headline table: each column as wide as its longest unbreakable piece
    # (headers break at <wbr>, after each underscore) at a generous 9 px a character, plus padding
    cells = re.findall(r'<td class="[^"]*">([^<]*)</td>', headline)
    longest_cell = max(len(c) for c in cells)
    width = sum(
        16 + 9 * max(longest_cell, max(len(re.sub(r"&nbsp;.*|<[^>]+>", "", p)) for p in h.split("<wbr>")))
        for h in heads
    )
    assert width <= 1100
    assert "forget_<wbr>rougeL_<wbr>recall&nbsp;\u2248O" in headline


def test_plot_many_rows_keep_the_axes_and_labels_clear(tmp_path: Path) -> None:
    # 40 rows (a sweep): a legend that tall would squash the axes; the labels name the points instead
    res = {
        f"trial_{i}": {"forget_quality": 10.0 ** (-(i * 7 % 12)), "model_utility": 0.015 * ((i * 13) % 40)}
        for i in range(40)
    }
    layout = plot_tradeoff(res, tmp_path / "many.png")
    x0, y0, x1, y1 = layout.axes
    assert x1 - x0 > 0.7 * 1020 and y1 - y0 > 0.6 * 600  # 8.5 x 5 in at 120 dpi
    assert len(layout.labels) == 40
    _assert_labels_clear(layout)

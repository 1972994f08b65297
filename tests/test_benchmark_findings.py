"""BENCHMARKS.md opens with its findings (bench/FINDINGS.md, assembled by bench/make_benchmarks.py): each
finding links a section and quotes only numbers that section holds; no section is empty; the long
provenance lines are folded; the lab version the notes name is the current one."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# a decimal or e-notation number, optionally signed or suffixed with x (ratios); not part of a word
QUOTED = re.compile(r"(?<![\w.])[+-]?(?:\d+\.\d+|\d+(?:\.\d+)?e[+-]?\d+)x?(?![\w.])")
NUMBER = re.compile(r"[+-]?(?:\d+\.\d*|\.\d+|\d+)(?:e[+-]?\d+)?", re.IGNORECASE)
LINK = re.compile(r"\]\(#([\w-]+)\)")


@pytest.fixture(scope="module")
def mb():
    sys.path.insert(0, str(ROOT / "bench"))  # render() imports bench modules too
    try:
        import make_benchmarks

        yield make_benchmarks
    finally:
        sys.path.remove(str(ROOT / "bench"))


@pytest.fixture(scope="module")
def rendered(mb) -> str:
    return mb.render()


def matches(quoted: str, value: float) -> bool:
    """Whether ``value`` rounds to ``quoted`` at the precision it is quoted at (sign ignored)."""
    q = quoted.lstrip("+-").rstrip("x")
    target, value = float(q), abs(value)
    if "e" in q:
        digits = len(q.split("e")[0].replace(".", "").lstrip("0")) or 1
        return float(f"{value:.{digits - 1}e}") == target
    decimals = len(q.split(".")[1])
    return abs(round(value, decimals) - target) < 1e-12


def section(markdown: str, anchor: str, mb) -> str:
    """The text under the heading ``anchor`` names, up to the next heading of its level or above."""
    lines = markdown.splitlines()
    start = mb.anchors(markdown)[anchor]
    level = len(lines[start]) - len(lines[start].lstrip("#"))
    heading = re.compile("#{1,%s} " % level)  # noqa: UP031 (braces are the pattern's)
    end = next((i for i in range(start + 1, len(lines)) if heading.match(lines[i])), len(lines))
    return "\n".join(lines[start:end])


def unsupported(finding: str, text: str) -> list[str]:
    """The numbers ``finding`` quotes (outside backticks and its link) that ``text`` does not hold."""
    said = re.sub(r"`[^`]*`|\]\(#[\w-]+\)", " ", finding)
    values = [float(m) for m in NUMBER.findall(text)]
    return [q for q in QUOTED.findall(said) if not any(matches(q, v) for v in values)]


def test_benchmarks_md_opens_with_its_model_and_8_to_10_findings(mb, rendered):
    head = rendered.split("\n## ", 2)
    real = [label for name, label in mb.REAL_MODEL_SECTIONS.items() if (mb.ROOT / "results" / f"{name}.md").is_file()]
    assert ("Every row but " + ", ".join(real) if real else "Every row so far comes from the") in head[0]
    assert "embedded model" in head[0]
    found = mb.findings()
    assert 8 <= len(found) <= 10, len(found)
    assert head[1].startswith("Findings") and all(line in head[1] for line in found)
    if mb.lab_parameters() is not None:  # the size, read from the shipped base's weights
        assert f"{mb.lab_parameters() / 1e6:.1f}M-parameter" in head[0]


def test_the_opening_line_stops_claiming_every_row_once_the_real_lab_has_results(mb, monkeypatch, tmp_path):
    (tmp_path / "results").mkdir()
    monkeypatch.setattr(mb, "ROOT", tmp_path)
    assert "Every row so far comes from" in mb.opening([])[0]
    (tmp_path / "results" / f"{mb.REAL_SECTION}.md").write_text("## real\n")
    assert "Every row but the real lab's section" in mb.opening([])[0]


def test_each_finding_quotes_only_numbers_of_the_section_it_links(mb, rendered):
    problems = []
    for finding in mb.findings():
        links = LINK.findall(finding)
        assert links, f"bench/FINDINGS.md: a finding links no section: {finding[:80]}"
        text = "\n".join(section(rendered, a, mb) for a in links)
        assert QUOTED.search(finding), f"a finding quotes no number: {finding[:80]}"
        problems += [f"{q} ({finding[:60]}...)" for q in unsupported(finding, text)]
    assert not problems, "findings quote numbers their section does not hold (update bench/FINDINGS.md):\n" + (
        "\n".join(problems)
    )


def test_the_check_rejects_a_number_the_section_does_not_hold(mb):
    doc = "# T\n\n## A b\n\n| x | 0.583 | 9.99e-28 |\n\n## C\n\n| y | 0.77 |\n"
    assert unsupported("0.58 and 1e-27 at 0.58x [A](#a-b)", section(doc, "a-b", mb)) == []
    assert unsupported("0.77 [A](#a-b)", section(doc, "a-b", mb)) == ["0.77"]  # another section's


def test_no_section_is_empty_and_the_missing_are_named_on_one_line(mb, rendered):
    lines = rendered.splitlines()
    heads = [i for i, line in enumerate(lines) if line.startswith("## ")]
    for i, nxt in zip(heads, [*heads[1:], len(lines)]):
        assert any(line.strip() for line in lines[i + 1 : nxt]), f"empty section: {lines[i]}"
    assert "Not run yet" not in rendered
    missing = [name for name, _ in mb.ORDER if not (mb.ROOT / "results" / f"{name}.md").is_file()]
    missing = [name for name in missing if name not in mb.OPTIONAL]
    if missing:
        (line,) = [line for line in lines if line.startswith("Not yet run: ")]
        assert all(f"{name} (`" in line for name in missing), line


def test_provenance_lines_are_folded(rendered):
    lines = rendered.splitlines()
    produced = [i for i, line in enumerate(lines) if line.startswith("_Produced by")]
    assert produced
    for i in produced:
        assert lines[i - 2].startswith("<details><summary>Produced by") and lines[i + 2] == "</details>"


def test_the_notes_name_the_current_lab_version(mb, rendered):
    """bench/NOTES.md writes the current lab version as {lab_version}: a hand-typed one went stale."""
    from unlearnkit.pipelines.embedded import LAB_VERSION

    notes = (ROOT / "bench" / "NOTES.md").read_text(encoding="utf-8")
    assert "{lab_version}" in notes and not re.search(r"the current one, \d", notes)
    assert f"the current one, {LAB_VERSION})" in rendered


def test_the_shipped_base_size_is_read_from_its_weights(mb, tmp_path):
    import torch
    from safetensors.torch import save_file

    path = tmp_path / "model.safetensors"
    save_file({"a": torch.zeros(3, 4), "b": torch.zeros(5)}, str(path))
    assert mb.lab_parameters(path) == 17
    assert mb.lab_parameters(tmp_path / "none.safetensors") is None

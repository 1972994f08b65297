"""Every measured number bench/NOTES.md quotes is in the bench table it comes from; README.md and docs/
quote none (they link BENCHMARKS.md, which bench/make_benchmarks.py renders from the tables themselves).

A passage that quotes measurements is wrapped in two markers naming its sources::

    <!-- numbers from: bench/results/quality.md bench/results/quality.json -->
    ... the target scores at most 1e-27 on each of 5 seeds ...
    <!-- /numbers -->

Every decimal (``0.58``, ``+0.18``, ``0.49x``) and every number in e-notation (``1e-27``) between the
markers, outside backticks (commands and settings), must be a number of one of the sources rounded to
the precision it is quoted at. When a bench is re-run and a number moves, this fails and names the
sentence to update; a quote the tables never held cannot be written in the first place. bench/NOTES.md is
all measurement: no figure in it may stand outside a marked passage.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ("bench/NOTES.md",)
BEGIN = re.compile(r"<!-- numbers from: (?P<sources>[^>]*?) -->")
END = "<!-- /numbers -->"
# a decimal or e-notation number, optionally signed or suffixed with x (ratios); not part of a word
QUOTED = re.compile(r"(?<![\w.])[+-]?(?:\d+\.\d+|\d+(?:\.\d+)?e[+-]?\d+)x?(?![\w.])")
SOURCE_NUMBER = re.compile(r"[+-]?(?:\d+\.\d*|\.\d+|\d+)(?:e[+-]?\d+)?", re.IGNORECASE)


def source_numbers(path: Path) -> list[float]:
    """Every number in a results file: the values of a JSON file, the figures of a Markdown table."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        found: list[float] = []

        def walk(node) -> None:
            if isinstance(node, bool) or node is None:
                return
            if isinstance(node, (int, float)):
                found.append(float(node))
            elif isinstance(node, dict):
                for value in node.values():
                    walk(value)
            elif isinstance(node, list):
                for value in node:
                    walk(value)
            elif isinstance(node, str):
                found.extend(float(m) for m in SOURCE_NUMBER.findall(node))

        walk(json.loads(text))
        return found
    return [float(m) for m in SOURCE_NUMBER.findall(text)]


def matches(quoted: str, value: float) -> bool:
    """Whether ``value`` rounds to ``quoted`` at the precision it is quoted at (sign ignored: a gap of
    +0.18 is quoted from a table cell 0.18 as often as from +0.18)."""
    q = quoted.lstrip("+-").rstrip("x")
    target, value = float(q), abs(value)
    if "e" in q:
        mantissa = q.split("e")[0]
        digits = len(mantissa.replace(".", "").lstrip("0")) or 1
        return float(f"{value:.{digits - 1}e}") == target
    decimals = len(q.split(".")[1])
    return abs(round(value, decimals) - target) < 1e-12 or f"{value:.{decimals}f}" == q


def quoted_passages(text: str) -> list[tuple[int, list[str], str]]:
    """(line, source paths, passage text) for every marked passage; backticked code removed."""
    out = []
    for m in BEGIN.finditer(text):
        end = text.find(END, m.end())
        if end < 0:
            raise AssertionError(f"line {text.count(chr(10), 0, m.start()) + 1}: {m.group(0)} has no {END}")
        passage = re.sub(r"`[^`]*`", " ", text[m.end() : end])
        out.append((text.count("\n", 0, m.start()) + 1, m.group("sources").split(), passage))
    return out


def unsupported(passage: str, sources: list[Path]) -> list[str]:
    """The quoted numbers of ``passage`` that no source holds."""
    values = [v for path in sources for v in source_numbers(path)]
    return [q for q in QUOTED.findall(passage) if not any(matches(q, v) for v in values)]


@pytest.mark.parametrize("doc", DOCS)
def test_every_quoted_number_is_in_its_source_table(doc):
    text = (ROOT / doc).read_text(encoding="utf-8")
    passages = quoted_passages(text)
    assert passages, f"{doc} marks no passage of measured numbers"
    problems = []
    for line, names, passage in passages:
        paths = [ROOT / name for name in names]
        missing_files = [str(p.relative_to(ROOT)) for p in paths if not p.is_file()]
        assert not missing_files, f"{doc} line {line}: source {missing_files} does not exist"
        for q in unsupported(passage, paths):
            problems.append(f"{doc} line {line}: {q} is in none of {', '.join(names)}")
    assert not problems, (
        "numbers quoted but not in the tables they cite (a bench was re-run: update the sentences):\n"
        + "\n".join(problems)
    )


def outside_passages(text: str) -> list[str]:
    """The quoted numbers of ``text`` outside every marked passage (and outside backticks)."""
    rest = re.sub(r"<!-- numbers from: [^>]*? -->.*?<!-- /numbers -->", " ", text, flags=re.S)
    return QUOTED.findall(re.sub(r"`[^`]*`", " ", rest))


def test_notes_quote_no_number_outside_a_marked_passage():
    """bench/NOTES.md is all measurement: every figure in it names its table."""
    stray = outside_passages((ROOT / "bench" / "NOTES.md").read_text(encoding="utf-8"))
    assert not stray, f"bench/NOTES.md quotes {stray} outside a <!-- numbers from: ... --> passage"


def test_readme_and_docs_quote_no_measured_passage():
    """Measured numbers and their provenance live in BENCHMARKS.md and bench/results only."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    quoting = [p.relative_to(ROOT).as_posix() for p in pages if BEGIN.search(p.read_text(encoding="utf-8"))]
    assert not quoting, f"{quoting} quote measured passages: link BENCHMARKS.md instead"


def test_the_check_rejects_a_number_the_table_does_not_hold(tmp_path):
    table = tmp_path / "t.md"
    table.write_text("| a | 0.583 | 9.99e-28 | 1.26 |\n", encoding="utf-8")
    assert unsupported("scores 0.58 and 1e-27 at 1.26x, +0.58 too", [table]) == []
    assert unsupported("scores 0.59 and 1e-26", [table]) == ["0.59", "1e-26"]
    assert unsupported("gap 0.5830", [table]) == []  # quoted at more precision than held: the same value
    assert unsupported("run `--lr 7.5e-3` then", [table]) == ["7.5e-3"]  # only quoted_passages drops code
    doc = "<!-- numbers from: t.md -->\nsays 0.77 and `--lr 0.12`\n<!-- /numbers -->"
    [(line, names, passage)] = quoted_passages(doc)
    assert (line, names) == (1, ["t.md"]) and unsupported(passage, [table]) == ["0.77"]
    assert outside_passages(doc + " and 0.5 after") == ["0.5"]


def test_json_sources_are_read_as_values(tmp_path):
    src = tmp_path / "r.json"
    src.write_text(
        json.dumps({"a": {"0": {"fq": 2.49e-30, "tag": "lr 2e-05"}}, "ok": True}), encoding="utf-8"
    )
    assert unsupported("at most 2e-30, lr 2e-5", [src]) == []
    assert unsupported("1.00", [src]) == ["1.00"]  # True is not the number 1

"""README.md is a front door a researcher reads in five minutes (issue 59): short, no measurement
provenance, every docs page linked, and the two opening commands exactly as CI runs them.

Measured numbers and where they came from live in BENCHMARKS.md and bench/results; the README links
there instead of quoting them.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
MAX_WORDS = 2000
MAX_LINE = 120
# The two opening commands: a newcomer's first run, and the test suite as .ci/run runs it.
COMMAND_1 = (
    "python3 -m venv .venv && . .venv/bin/activate && pip install -q torch==2.13.0 && "
    "pip install -q -e '.[nlp]' && unlearnkit quickstart"
)
CI = ROOT / ".ci" / "run"


def ci_command() -> str:
    """The line .ci/run runs as README command 2 (the line after its ``# README command 2, verbatim:``)."""
    lines = CI.read_text(encoding="utf-8").splitlines()
    marker = next(i for i, line in enumerate(lines) if line.startswith("# README command 2, verbatim"))
    return lines[marker + 1]


COMMAND_2 = ci_command()
# a commit hash as git prints it: 7 to 40 hex digits with at least one digit and one letter a-f
HASH = re.compile(r"(?<![\w.-])(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}(?![\w-])")
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)\s]*)?\)")


def words(text: str) -> int:
    return len(text.split())


def too_long(text: str, limit: int = MAX_LINE) -> list[tuple[int, int]]:
    """(line number, length) of every line over ``limit`` characters, but for the two opening commands
    (one line each, so that they can be copied whole) and table rows (Markdown cannot wrap a row; the
    method table is rendered from the catalog)."""
    exempt = (COMMAND_1, COMMAND_2)
    return [
        (n, len(line))
        for n, line in enumerate(text.splitlines(), 1)
        if len(line) > limit and line not in exempt and not line.startswith("|")
    ]


def hashes(text: str) -> list[str]:
    return HASH.findall(text)


def linked_docs(text: str) -> set[str]:
    """Every ``docs/*.md`` path a Markdown link of ``text`` points to."""
    return {m for m in LINK.findall(text) if m.startswith("docs/") and m.endswith(".md")}


def test_readme_is_at_most_2000_words():
    count = words(README.read_text(encoding="utf-8"))
    assert count <= MAX_WORDS, f"README.md has {count} words (at most {MAX_WORDS}): move detail to docs/"


def test_readme_lines_are_at_most_120_characters():
    long = too_long(README.read_text(encoding="utf-8"))
    assert not long, f"README.md lines over {MAX_LINE} characters (line, length): {long}"


def test_readme_carries_no_measurement_provenance():
    text = README.read_text(encoding="utf-8")
    assert not hashes(text), f"README.md names commits {hashes(text)}: provenance belongs in bench/results"
    assert "numbers from" not in text, "README.md quotes measured numbers: link BENCHMARKS.md instead"
    assert "bench/results" not in text, "README.md points into bench/results: link BENCHMARKS.md instead"


def test_every_docs_page_is_linked_from_the_readme():
    text = README.read_text(encoding="utf-8")
    pages = {f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md")}
    assert pages, "no docs/*.md pages"
    assert not pages - linked_docs(text), f"README.md does not link {sorted(pages - linked_docs(text))}"
    missing = sorted(p for p in linked_docs(text) if not (ROOT / p).is_file())
    assert not missing, f"README.md links docs pages that do not exist: {missing}"


def test_the_two_opening_commands_are_the_first_commands_and_ci_runs_the_second():
    text = README.read_text(encoding="utf-8")
    quickstart = text.split("## Quickstart", 1)[1]
    block = quickstart.split("```bash\n", 1)[1].split("```", 1)[0]
    commands = [line for line in block.splitlines() if line.strip() and not line.startswith("#")]
    assert commands[0] == COMMAND_1, commands
    assert commands[1:] == [COMMAND_2], "README command 2 must be the line .ci/run runs, verbatim"
    assert COMMAND_2.startswith("python3 -m venv .venv && ") and COMMAND_2.endswith(" && python -m pytest -q")


def test_the_checks_can_fail():
    assert words("a b  c\nd") == 4
    assert too_long("x" * 121 + "\nshort") == [(1, 121)]
    assert too_long(f"{COMMAND_1}\n| {'x' * 130} |\n{COMMAND_1} # note") == [(3, len(COMMAND_1) + 7)]
    assert hashes("at b05f942 (lab 10), 4646537d and c0ffee12") == ["b05f942", "4646537d", "c0ffee12"]
    assert hashes("e94cbf6c242453a89af524aaea8e08917b420c11792d6ac662d166b591059779 deadbeef 1234567") == []
    assert hashes("arXiv 2603.01285, lr 5e-5, --set tau=auto, abcdefa") == []
    assert linked_docs("[a](docs/x.md) [b](docs/y.md#part) [c](BENCHMARKS.md) docs/z.md") == {
        "docs/x.md",
        "docs/y.md",
    }


def test_license_and_citation_agree_with_the_package():
    """LICENSE is the Apache-2.0 text pyproject.toml declares; CITATION.cff (CFF 1.2.0) cites this version
    under that license and references the two papers the README names."""
    import yaml

    import unlearnkit

    license_text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License" in license_text and "Version 2.0, January 2004" in license_text
    assert "END OF TERMS AND CONDITIONS" in license_text
    assert 'license = { text = "Apache-2.0" }' in (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert cff["cff-version"] == "1.2.0" and cff["license"] == "Apache-2.0"
    assert str(cff["version"]) == unlearnkit.__version__
    for key in ("message", "title", "authors"):
        assert cff[key], key
    readme = README.read_text(encoding="utf-8")
    cited = {ident["value"] for ref in cff["references"] for ident in ref["identifiers"]}
    for arxiv in ("2603.01285", "2605.00364"):
        assert f"arXiv:{arxiv}" in cited and f"arXiv {arxiv}" in readme
    for ref in cff["references"]:
        assert ref["title"] and ref["authors"] and ref["type"], ref


def slug(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = re.sub(r"^```.*?^```", "", path.read_text(encoding="utf-8"), flags=re.S | re.M)
    return {slug(m) for m in re.findall(r"^#{1,6} (.+)$", text, re.M)}


def test_every_relative_link_of_the_readme_and_docs_resolves():
    """A moved section or renamed page breaks no link: the file exists and so does the heading."""
    broken = []
    for page in [README, *sorted((ROOT / "docs").glob("*.md"))]:
        text = re.sub(r"^```.*?^```", "", page.read_text(encoding="utf-8"), flags=re.S | re.M)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if target.startswith(("http://", "https://", "mailto:")):
                continue
            file, _, anchor = target.partition("#")
            resolved = (page.parent / file).resolve() if file else page
            if not resolved.exists():
                broken.append(f"{page.name}: {target} (no such file)")
            elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
                broken.append(f"{page.name}: {target} (no such heading)")
    assert not broken, "broken links:\n" + "\n".join(broken)


def test_slugs_are_githubs():
    assert slug("Data: `--data NAME`") == "data---data-name"
    assert (
        slug("Watching a run: `--eval-every` and `--keep-best`")
        == "watching-a-run---eval-every-and---keep-best"
    )
    assert slug("Recipes (`configs/`)") == "recipes-configs"

"""Assemble BENCHMARKS.md from the sections the bench scripts wrote to bench/results/*.md.

    python bench/make_benchmarks.py

Order: quality (the quickstart table first), asu, tokenunlearn, audit, robustness, speed. A missing section is
listed as not yet run, never filled with numbers by hand.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent
ORDER = [
    ("quality", "python bench/quality.py"),
    ("asu", "python bench/asu_sweep.py"),
    ("tokenunlearn", "python bench/token_ablation.py"),
    ("audit", "python bench/audit_all.py"),
    ("robustness", "python bench/robustness.py"),
    ("sweep", "python bench/sweep.py"),
    ("speed", "python bench/speed.py"),
]
NOTES = ROOT / "NOTES.md"


def main() -> None:
    parts = [
        "# Benchmarks",
        "",
        "Every number below is printed by a script in `bench/` (the command is in the comment above each "
        "section); `python bench/make_benchmarks.py` assembles this file. Each section says under its title "
        "what it is: its seeds, items and world, the machine, and the code that produced it (commit and a "
        "hash of `src/`; `bench/results/<name>.json` keeps the same as `provenance`). A section without that "
        "line predates the record. The embedded world is tiny: read the numbers as behaviour, not as paper "
        "results.",
        "",
    ]
    for i, (name, command) in enumerate(ORDER):
        if i == 1 and NOTES.is_file():  # the quickstart table first, then what the numbers say
            parts += [NOTES.read_text(encoding="utf-8").rstrip(), ""]
        path = ROOT / "results" / f"{name}.md"
        if path.is_file():
            parts += [path.read_text(encoding="utf-8").rstrip(), ""]
        else:
            parts += [f"## {name}", "", f"Not run yet: `{command}`.", ""]
    (ROOT.parent / "BENCHMARKS.md").write_text("\n".join(parts), encoding="utf-8")
    print(f"wrote {ROOT.parent / 'BENCHMARKS.md'}")
    import sync_docs  # bench/ is on sys.path when run as a script

    sync_docs.main()  # docs/SCALING.md quotes the same speed section


if __name__ == "__main__":
    main()

"""Copy the measured speed / memory section (bench/results/speed.md) into docs/SCALING.md.

    python bench/sync_docs.py        (also run by python bench/make_benchmarks.py)

BENCHMARKS.md includes speed.md whole; SCALING.md quotes the same table between two markers, so the two
documents always show the same figures. ``tests/test_docs_agree.py`` fails when they drift.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent
SPEED = ROOT / "results" / "speed.md"
SCALING = ROOT.parent / "docs" / "SCALING.md"
BEGIN = "<!-- begin: bench/results/speed.md (python bench/sync_docs.py; do not edit by hand) -->"
END = "<!-- end: bench/results/speed.md -->"


def speed_body(speed_md: str) -> str:
    """speed.md without its heading (SCALING.md has its own)."""
    lines = speed_md.strip().splitlines()
    if lines and lines[0].startswith("#"):
        lines = lines[1:]
    return "\n".join(lines).strip()


def synced(scaling_md: str, speed_md: str) -> str:
    """``scaling_md`` with the text between the markers replaced by ``speed_md``'s body."""
    head, sep, rest = scaling_md.partition(BEGIN)
    _, sep2, tail = rest.partition(END)
    if not sep or not sep2:
        raise SystemExit(f"{SCALING}: the markers {BEGIN!r} ... {END!r} are missing")
    return f"{head}{BEGIN}\n{speed_body(speed_md)}\n{END}{tail}"


def main() -> None:
    if not SPEED.is_file():
        print(f"{SPEED} missing: run python bench/speed.py first")
        return
    SCALING.write_text(
        synced(SCALING.read_text(encoding="utf-8"), SPEED.read_text(encoding="utf-8")), encoding="utf-8"
    )
    print(f"wrote {SCALING} (speed section from {SPEED.name})")


if __name__ == "__main__":
    main()

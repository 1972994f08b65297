"""Where a sweep's Optuna study lives: the storage URL (SQLite in the output folder, or a shared
PostgreSQL / MySQL server), checked once, and shown with its password hidden."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from unlearnkit.errors import UserError

if TYPE_CHECKING:
    from unlearnkit.pipelines.sweep.settings import SweepSettings

STORAGE_KINDS = ("sqlite", "postgresql", "mysql")


def redacted(url: str) -> str:
    """``url`` without its password (it is written to sweep.json and printed)."""
    from sqlalchemy.engine import make_url

    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # noqa: BLE001 - not a URL at all: storage_kind says so
        return url


def storage_kind(url: str) -> str:
    """``sqlite`` / ``postgresql`` / ``mysql`` for an Optuna RDB storage URL, else one clear error."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    hint = "use sqlite:///PATH, postgresql://USER:PASSWORD@HOST:PORT/DB or mysql+pymysql://USER@HOST/DB"
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise UserError(f"--storage {url!r} is not a database URL; {hint}") from None
    kind = parsed.get_backend_name()
    if kind not in STORAGE_KINDS:
        raise UserError(f"--storage {redacted(url)}: unsupported database '{kind}'; {hint}")
    if kind == "sqlite" and not parsed.database:
        raise UserError(f"--storage {url}: an in-memory SQLite study cannot be shared or resumed; {hint}")
    return kind


def storage_url(st: SweepSettings) -> str:
    return st.storage or f"sqlite:///{(Path(st.output) / 'study.db').resolve()}"


def study_location(st: SweepSettings) -> str:
    """Where the study lives, for messages (the password hidden)."""
    return redacted(st.storage) if st.storage else str(Path(st.output) / "study.db")

"""Safe file output: atomic writes, refusing to clobber, and JSON helpers.

Everything unlearnkit writes goes through here so that a crash or a bad input never leaves a
half-written model, report or metrics file behind (a user's model may have taken days to train).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from unlearnkit.errors import UserError


def check_output_dir(path: str | Path, overwrite: bool, flag: str = "--output") -> Path:
    """Refuse a non-empty existing output unless ``overwrite``; called before any work starts."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise UserError(f"{flag} {path} exists and is a file, not a folder; choose another path")
    if path.is_dir() and any(path.iterdir()) and not overwrite:
        raise UserError(f"{flag} {path} already exists and is not empty; pass --overwrite to replace it")
    return path


@contextlib.contextmanager
def atomic_dir(path: str | Path, overwrite: bool = False) -> Iterator[Path]:
    """Yield a temporary sibling folder; rename it to ``path`` only if the block completes.

    The old folder (when overwriting) is removed only after the new one is complete, so an
    interrupted run leaves the previous result intact.
    """
    path = Path(path)
    check_output_dir(path, overwrite)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.tmp-", dir=path.parent))
    try:
        yield tmp
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if path.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{path.name}.old-", dir=path.parent))
        os.replace(path, old / "x")
        os.replace(tmp, path)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(tmp, path)


def write_text_atomic(path: str | Path, text: str) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def write_json(path: str | Path, obj: Any) -> None:
    write_text_atomic(path, json.dumps(obj, indent=2, sort_keys=False, default=_json_default) + "\n")


def _json_default(obj: Any) -> Any:
    if hasattr(obj, "item"):
        return obj.item()
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


def read_json(path: str | Path, what: str = "JSON file") -> Any:
    path = Path(path)
    if not path.is_file():
        raise UserError(f"{what} {path} does not exist")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as err:
        raise UserError(f"{path} is not UTF-8 text ({err.reason} at byte {err.start})") from None
    except json.JSONDecodeError as err:
        raise UserError(f"{path}:{err.lineno}: invalid JSON ({err.msg})") from None

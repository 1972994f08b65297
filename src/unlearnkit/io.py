"""Safe file output: atomic writes, refusing to clobber, and JSON helpers.

Everything unlearnkit writes goes through here so that a crash or a bad input never leaves a
half-written model, report or metrics file behind (a user's model may have taken days to train).
"""

from __future__ import annotations

import contextlib
import functools
import glob
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


@functools.cache
def _umask() -> int:
    with contextlib.suppress(OSError, ValueError, StopIteration):  # Linux: read it without changing it
        status = Path("/proc/self/status").read_text().splitlines()
        return int(next(line for line in status if line.startswith("Umask:")).split()[1], 8)
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def publish_mode(path: Path, is_dir: bool) -> None:
    """``mkdtemp``/``mkstemp`` create private (0o700/0o600) entries; published outputs follow the umask."""
    with contextlib.suppress(OSError):
        path.chmod((0o777 if is_dir else 0o666) & ~_umask())


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True  # exists but is not ours: leave its folder alone
    return True


def clean_stale_temps(path: str | Path) -> list[Path]:
    """Remove ``.{name}.tmp-{pid}-*`` / ``.{name}.old-{pid}-*`` siblings left by a killed process.

    Only folders whose embedded process id no longer runs are removed, so a concurrent writer's
    temporary folder is never touched. Returns what was removed.
    """
    path = Path(path)
    removed = []
    if not path.parent.is_dir():
        return removed
    for kind in ("tmp", "old"):
        for entry in path.parent.glob(f".{glob.escape(path.name)}.{kind}-*"):
            pid = entry.name[len(f".{path.name}.{kind}-") :].split("-", 1)[0]
            if pid.isdigit() and not _pid_alive(int(pid)) and entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)
                removed.append(entry)
    return removed


@contextlib.contextmanager
def atomic_dir(path: str | Path, overwrite: bool = False) -> Iterator[Path]:
    """Yield a temporary sibling folder; rename it to ``path`` only if the block completes.

    The old folder (when overwriting) is removed only after the new one is complete, so an
    interrupted run leaves the previous result intact. The temporary folder is named
    ``.{name}.tmp-{pid}-*``: on an exception it is removed, and after a ``kill -9`` the next write
    to the same ``path`` removes it.
    """
    path = Path(path)
    check_output_dir(path, overwrite)
    path.parent.mkdir(parents=True, exist_ok=True)
    clean_stale_temps(path)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.tmp-{os.getpid()}-", dir=path.parent))
    try:
        yield tmp
        publish_mode(tmp, is_dir=True)
        # safetensors / matplotlib write some files through mkstemp (0o600): publish them like the rest
        for entry in tmp.rglob("*"):
            with contextlib.suppress(OSError):
                if not entry.is_symlink() and entry.stat().st_mode & 0o077 == 0:
                    publish_mode(entry, is_dir=entry.is_dir())
        check_output_dir(path, overwrite)  # another process may have written it meanwhile
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if path.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{path.name}.old-{os.getpid()}-", dir=path.parent))
        os.replace(path, old / "x")
        try:
            os.replace(tmp, path)
        except BaseException:
            os.replace(old / "x", path)  # put the previous result back
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        finally:
            shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(tmp, path)


def write_bytes_atomic(path: str | Path, data: bytes) -> None:
    """Write a file through a temporary sibling + rename: readers see the old or the new file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        publish_mode(Path(tmp), is_dir=False)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def write_text_atomic(path: str | Path, text: str) -> None:
    """:func:`write_bytes_atomic` for UTF-8 text."""
    if not isinstance(text, str):
        raise TypeError(f"write_text_atomic: text must be str, not {type(text).__name__}")
    write_bytes_atomic(path, text.encode("utf-8"))


def json_text(obj: Any) -> str:
    """``obj`` as the JSON text unlearnkit writes (indented; numpy / torch scalars and paths converted)."""
    return json.dumps(obj, indent=2, sort_keys=False, default=_json_default)


def write_json(path: str | Path, obj: Any) -> None:
    write_text_atomic(path, json_text(obj) + "\n")


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

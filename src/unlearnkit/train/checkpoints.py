"""Which checkpoints of an interrupted run can be resumed from (torch-free).

The HF Trainer writes a checkpoint's ``trainer_state.json`` last, and writes it in place (not
atomically): a run killed while saving leaves a folder without it, or with a truncated one. A
checkpoint is complete only when that file is there *and* parses; every resume path (``unlearn``,
``finetune``, ``pretrain``, the lab's cached trainings) reads checkpoints through this module.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

CHECKPOINT_RE = re.compile(r"^checkpoint-(\d+)$")


def is_complete(checkpoint: Path) -> bool:
    """True when ``checkpoint``'s ``trainer_state.json`` exists and is a whole JSON object."""
    try:
        state = json.loads((Path(checkpoint) / "trainer_state.json").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return False
    return isinstance(state, dict)


def complete_checkpoints(work: Path) -> list[Path]:
    """The complete checkpoints in ``work``, oldest (lowest step) first."""
    work = Path(work)
    if not work.is_dir():
        return []
    found = [
        (int(m.group(1)), p)
        for p in work.iterdir()
        if (m := CHECKPOINT_RE.match(p.name)) and p.is_dir() and is_complete(p)
    ]
    return [p for _, p in sorted(found)]


def incomplete_checkpoints(work: Path) -> list[Path]:
    """The checkpoint folders in ``work`` cut short while saving (never resumed from)."""
    work = Path(work)
    if not work.is_dir():
        return []
    done = set(complete_checkpoints(work))
    return [p for p in work.iterdir() if CHECKPOINT_RE.match(p.name) and p.is_dir() and p not in done]


def last_checkpoint(work: str | Path) -> str | None:
    """The newest complete checkpoint in ``work``, or None."""
    done = complete_checkpoints(Path(work))
    return str(done[-1]) if done else None

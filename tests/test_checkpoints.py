"""A checkpoint is resumed from only when the Trainer finished writing it (kill -9 while saving)."""

from __future__ import annotations

import json

from unlearnkit.commands._common import checkpoints
from unlearnkit.train.checkpoints import (
    complete_checkpoints,
    incomplete_checkpoints,
    is_complete,
    last_checkpoint,
)


def _checkpoint(work, step, state):
    folder = work / f"checkpoint-{step}"
    folder.mkdir(parents=True)
    (folder / "model.safetensors").write_bytes(b"weights")
    if state is not None:
        (folder / "trainer_state.json").write_text(state, encoding="utf-8")
    return folder


def test_a_truncated_trainer_state_is_not_a_complete_checkpoint(tmp_path):
    whole = json.dumps({"global_step": 2, "log_history": [{"loss": 1.0}]})
    good = _checkpoint(tmp_path, 2, whole)
    truncated = _checkpoint(tmp_path, 4, whole[: len(whole) // 2])  # killed mid-write
    empty = _checkpoint(tmp_path, 6, "")  # killed right after open(..., "w")
    missing = _checkpoint(tmp_path, 8, None)  # killed before the state was written
    not_an_object = _checkpoint(tmp_path, 10, "[1, 2]")
    _checkpoint(tmp_path, 1, whole)
    (tmp_path / "checkpoint-x").mkdir()  # not a checkpoint name: ignored either way

    assert is_complete(good) and not any(map(is_complete, (truncated, empty, missing, not_an_object)))
    assert [p.name for p in complete_checkpoints(tmp_path)] == ["checkpoint-1", "checkpoint-2"]
    assert checkpoints(tmp_path) == complete_checkpoints(tmp_path)  # the CLI reads the same list
    assert last_checkpoint(tmp_path) == str(good)
    assert sorted(p.name for p in incomplete_checkpoints(tmp_path)) == [
        "checkpoint-10",
        "checkpoint-4",
        "checkpoint-6",
        "checkpoint-8",
    ]


def test_no_work_folder_or_no_complete_checkpoint_means_start_from_step_0(tmp_path):
    assert last_checkpoint(tmp_path / "absent") is None and complete_checkpoints(tmp_path / "absent") == []
    _checkpoint(tmp_path, 3, "{")
    assert last_checkpoint(tmp_path) is None

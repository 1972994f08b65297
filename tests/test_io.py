"""Atomic outputs: a result folder appears complete or not at all, is never clobbered without
--overwrite, and what a killed process leaves behind is cleaned up by the next write."""

from __future__ import annotations

import errno
import json
import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from unlearnkit.errors import UserError
from unlearnkit.io import (
    atomic_dir,
    check_output_dir,
    clean_stale_temps,
    read_json,
    write_bytes_atomic,
    write_json,
    write_text_atomic,
)


def _names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_atomic_dir_publishes_complete_folder_readable_like_any_output(tmp_path):
    out = tmp_path / "result"
    with atomic_dir(out) as tmp:
        assert tmp.parent == tmp_path and tmp.name.startswith(f".result.tmp-{os.getpid()}-")
        (tmp / "a.txt").write_text("a")
        assert not out.exists()  # nothing at the final path until the block completes
    assert (out / "a.txt").read_text() == "a"
    assert _names(tmp_path) == ["result"]
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(out.stat().st_mode) == 0o777 & ~umask  # not mkdtemp's private 0o700


def test_atomic_dir_error_leaves_nothing(tmp_path):
    with pytest.raises(RuntimeError), atomic_dir(tmp_path / "result") as tmp:
        (tmp / "half.txt").write_text("half")
        raise RuntimeError("crash while writing")
    assert _names(tmp_path) == []


def test_overwrite_keeps_the_old_result_until_the_new_one_is_complete(tmp_path):
    out = tmp_path / "result"
    with atomic_dir(out) as tmp:
        (tmp / "v").write_text("1")
    with pytest.raises(RuntimeError), atomic_dir(out, overwrite=True) as tmp:
        (tmp / "v").write_text("2")
        raise RuntimeError("crash")
    assert (out / "v").read_text() == "1"  # a failed overwrite keeps the previous result
    with atomic_dir(out, overwrite=True) as tmp:
        (tmp / "v").write_text("3")
        assert (out / "v").read_text() == "1"
    assert (out / "v").read_text() == "3"
    assert _names(tmp_path) == ["result"]  # no .result.old-* left


def test_refuses_to_clobber_without_overwrite(tmp_path):
    out = tmp_path / "result"
    out.mkdir()
    check_output_dir(out, overwrite=False)  # an empty folder is fine
    (out / "user.txt").write_text("precious")
    with pytest.raises(UserError, match="pass --overwrite"):
        check_output_dir(out, overwrite=False)
    with pytest.raises(UserError, match="pass --overwrite"), atomic_dir(out):
        pass
    (tmp_path / "file").write_text("x")
    with pytest.raises(UserError, match="is a file"):
        check_output_dir(tmp_path / "file", overwrite=True)
    assert (out / "user.txt").read_text() == "precious"


def test_someone_else_writing_the_output_meanwhile_is_not_clobbered(tmp_path):
    out = tmp_path / "result"
    with pytest.raises(UserError, match="pass --overwrite"), atomic_dir(out) as tmp:
        (tmp / "mine").write_text("x")
        out.mkdir()
        (out / "theirs").write_text("y")
    assert _names(out) == ["theirs"] and _names(tmp_path) == ["result"]


KILLED_WRITER = """
import os, signal, sys
from pathlib import Path
from unlearnkit.io import atomic_dir
with atomic_dir(Path(sys.argv[1])) as tmp:
    (tmp / "half.bin").write_bytes(b"x" * 1000)
    os.kill(os.getpid(), signal.SIGKILL)
"""


def test_kill_9_leaves_only_a_hidden_temp_which_the_next_write_removes(tmp_path):
    out = tmp_path / "result"
    proc = subprocess.run([sys.executable, "-c", KILLED_WRITER, str(out)], capture_output=True, timeout=120)
    assert proc.returncode == -signal.SIGKILL
    leftovers = _names(tmp_path)
    assert len(leftovers) == 1 and leftovers[0].startswith(".result.tmp-") and not out.exists()
    # a temp folder of a process that is still running (ours) is never touched
    alive = tmp_path / f".result.tmp-{os.getpid()}-live"
    alive.mkdir()
    with atomic_dir(out) as tmp:
        (tmp / "ok").write_text("ok")
    assert _names(tmp_path) == sorted(["result", alive.name])
    assert clean_stale_temps(out) == []


def test_write_text_atomic_replaces_whole_files(tmp_path):
    path = tmp_path / "m.json"
    write_json(path, {"a": 1})
    write_json(path, {"a": 2})
    assert json.loads(path.read_text()) == {"a": 2}
    assert _names(tmp_path) == ["m.json"]
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask

    with pytest.raises(TypeError):
        write_text_atomic(path, 123)  # type: ignore[arg-type]
    with pytest.raises(TypeError):  # fails inside the write: the temporary file is removed
        write_bytes_atomic(path, 123)  # type: ignore[arg-type]
    assert json.loads(path.read_text()) == {"a": 2} and _names(tmp_path) == ["m.json"]


def test_read_json_errors_are_one_line_with_place(tmp_path):
    with pytest.raises(UserError, match="does not exist"):
        read_json(tmp_path / "none.json")
    (tmp_path / "bad.json").write_text('{\n  "a": 1,\n  oops\n}')
    with pytest.raises(UserError, match=r"bad\.json:3: invalid JSON"):
        read_json(tmp_path / "bad.json")
    (tmp_path / "latin.json").write_bytes(b'{"a": "\xe9"}')
    with pytest.raises(UserError, match="not UTF-8"):
        read_json(tmp_path / "latin.json")


def test_jsonl_with_a_byte_order_mark_is_read(tmp_path):
    from unlearnkit.data import read_jsonl

    (tmp_path / "f.jsonl").write_bytes(b'\xef\xbb\xbf{"question": "q", "answer": "a"}\n')
    assert read_jsonl(tmp_path / "f.jsonl")[0]["question"] == "q"


def test_save_model_failure_leaves_nothing(tmp_path):
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    from unlearnkit.models import save_model

    torch.manual_seed(0)
    model = LlamaForCausalLM(
        LlamaConfig(
            vocab_size=32, hidden_size=8, intermediate_size=16, num_hidden_layers=1, num_attention_heads=2
        )
    )

    class BrokenTokenizer:
        def save_pretrained(self, path):
            raise OSError(errno.ENOSPC, "No space left on device")

    with pytest.raises(OSError):
        save_model(model, BrokenTokenizer(), tmp_path / "model", {"kind": "test"})
    assert _names(tmp_path) == []
    save_model(model, None, tmp_path / "model", {"kind": "test"})
    assert (tmp_path / "model" / "model.safetensors").is_file() and _names(tmp_path) == ["model"]


def test_disk_full_or_permission_denied_is_one_line_exit_2(monkeypatch, capsys):
    from unlearnkit.cli import main
    from unlearnkit.commands import world

    def full(args):
        raise OSError(errno.ENOSPC, "No space left on device", "/data/out")

    monkeypatch.setattr(world, "run", full)
    assert main(["world", "--output", "x"]) == 2
    err = capsys.readouterr().err
    assert err == "unlearnkit: error: /data/out: No space left on device\n"

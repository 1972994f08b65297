"""Safe loading: safetensors only, no pickle is ever opened, no model code runs without
--trust-remote-code, and HF_HUB_OFFLINE is respected.

The attack files below are live: ``test_the_payload_is_live`` shows that unpickling the
``pytorch_model.bin`` really would create the marker file, so its absence elsewhere means nothing ran.
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from unlearnkit.cli import build_parser, main
from unlearnkit.errors import UserError


class _Payload:
    """Unpickling this calls ``open(marker, "w")``: the file appears iff the pickle was loaded."""

    def __init__(self, marker: Path) -> None:
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


@pytest.fixture(scope="module")
def assets(tmp_path_factory):
    from unlearnkit.data import load_benchmark
    from unlearnkit.models import save_model
    from unlearnkit.world import write_world
    from unlearnkit.world.tiny import build_tiny

    torch.set_num_threads(1)
    root = tmp_path_factory.mktemp("safe_loading")
    write_world(
        root / "world",
        n_authors=6,
        facts_per_author=2,
        forget_fraction=0.2,
        holdout_fraction=0.2,
        n_general=0,
    )
    model, tokenizer = build_tiny(load_benchmark(root / "world"), seed=0)
    save_model(model, tokenizer, root / "model", {"kind": "tiny random (tests)"})
    return root


def _pickle_model(assets: Path, where: Path, keep_safetensors: bool = False) -> tuple[Path, Path]:
    """A model folder whose ``pytorch_model.bin`` is a malicious pickle; returns (folder, marker)."""
    folder = where / "pickled"
    shutil.copytree(assets / "model", folder)
    if not keep_safetensors:
        (folder / "model.safetensors").unlink()
    marker = where / "PICKLE_WAS_LOADED"
    (folder / "pytorch_model.bin").write_bytes(pickle.dumps(_Payload(marker)))
    return folder, marker


def test_the_payload_is_live(tmp_path):
    marker = tmp_path / "m"
    pickle.loads(pickle.dumps(_Payload(marker)))
    assert marker.exists()


# (bad model folder, good model folder, data, output) -> argv; the pickled folder in every model role
COMMANDS = {
    "unlearn": lambda b, g, d, o: ["unlearn", "--model", b, "--data", d, "--method", "npo", "--output", o],
    "eval": lambda b, g, d, o: ["eval", "--model", b, "--data", d, "--output", o],
    "eval-retain-model": lambda b, g, d, o: [
        "eval",
        "--model",
        g,
        "--retain-model",
        b,
        "--data",
        d,
        "--output",
        o,
    ],
    "attribute": lambda b, g, d, o: ["attribute", "--model", b, "--data", d, "--output", o],
    "audit": lambda b, g, d, o: ["audit", "--model", b, "--data", d, "--output", o],
    "audit-original-model": lambda b, g, d, o: (
        ["audit", "--model", g, "--original-model", b, "--data", d] + ["--output", o]
    ),
    "finetune": lambda b, g, d, o: ["finetune", "--model", b, "--data", d, "--output", o],
}


@pytest.mark.parametrize("command", COMMANDS)
def test_pickle_only_checkpoint_is_refused_and_never_opened(assets, tmp_path, capsys, command):
    model, marker = _pickle_model(assets, tmp_path)
    out = tmp_path / "out"
    code = main(COMMANDS[command](str(model), str(assets / "model"), str(assets / "world"), str(out)))
    err = capsys.readouterr().err
    assert code == 2, err
    assert "only pickle weights (pytorch_model.bin)" in err and "safetensors only" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not marker.exists()
    assert not out.exists()


def test_pickle_only_checkpoint_refused_by_the_installed_command(assets, tmp_path):
    """The real console entry point in a fresh process (nothing imported or patched by the tests)."""
    model, marker = _pickle_model(assets, tmp_path)
    out = tmp_path / "out"
    cmd = [
        sys.executable,
        "-m",
        "unlearnkit.cli",
        "eval",
        "--model",
        str(model),
        "--data",
        str(assets / "world"),
    ]
    proc = subprocess.run(
        cmd + ["--output", str(out)],
        capture_output=True,
        text=True,
        env=dict(os.environ, HF_HUB_OFFLINE="1"),
        timeout=300,
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("unlearnkit: error: --model") and "only pickle weights" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not marker.exists() and not out.exists()


def test_safetensors_win_over_a_pickle_in_the_same_folder(assets, tmp_path):
    from unlearnkit.models import load_model

    model, marker = _pickle_model(assets, tmp_path, keep_safetensors=True)
    loaded = load_model(str(model))
    assert sum(p.numel() for p in loaded.parameters()) > 0
    assert not marker.exists()


def _remote_code_model(assets: Path, where: Path) -> tuple[Path, Path]:
    """A folder whose config maps to its own ``evil.py`` (an unknown architecture), which writes a marker."""
    folder = where / "remote"
    shutil.copytree(assets / "model", folder)
    marker = where / "REMOTE_CODE_RAN"
    cfg = json.loads((folder / "config.json").read_text())
    cfg.update(
        model_type="evil_arch",
        architectures=["EvilModel"],
        auto_map={"AutoConfig": "evil.EvilConfig", "AutoModelForCausalLM": "evil.EvilModel"},
    )
    (folder / "config.json").write_text(json.dumps(cfg))
    (folder / "evil.py").write_text(
        f"import pathlib\npathlib.Path({str(marker)!r}).write_text('ran')\n"
        "from transformers import LlamaConfig, LlamaForCausalLM\n"
        "class EvilConfig(LlamaConfig):\n    model_type = 'evil_arch'\n"
        "class EvilModel(LlamaForCausalLM):\n    config_class = EvilConfig\n"
    )
    return folder, marker


def test_remote_code_does_not_run_without_the_flag(assets, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    model, marker = _remote_code_model(assets, tmp_path)
    out = tmp_path / "out"
    code = main(["eval", "--model", str(model), "--data", str(assets / "world"), "--output", str(out)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "--trust-remote-code" in err and "auto_map" in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not marker.exists() and not out.exists()


def test_remote_code_is_passed_on_only_with_the_flag(assets, tmp_path, monkeypatch):
    """With the flag the folder goes to transformers with trust_remote_code=True (not executed here:
    that would write the module into the user's Hugging Face cache); without it, refused up front."""
    import transformers

    from unlearnkit.models import load_model

    model, marker = _remote_code_model(assets, tmp_path)
    with pytest.raises(UserError, match="--trust-remote-code"):
        load_model(str(model))
    seen = {}

    def record(name, **kwargs):
        seen.update(kwargs)
        raise OSError("stop here")

    monkeypatch.setattr(transformers.AutoModelForCausalLM, "from_pretrained", record)
    with pytest.raises(UserError, match="cannot load the model"):
        load_model(str(model), trust_remote_code=True)
    assert seen["trust_remote_code"] is True
    assert not marker.exists()


def test_trust_remote_code_is_off_by_default_for_every_model_command():
    parser = build_parser()
    m, d, o = "m", "d", "o"
    for argv in (
        ["finetune", "--data", d, "--output", o],
        ["unlearn", "--model", m, "--data", d, "--method", "npo", "--output", o],
        ["eval", "--model", m, "--data", d, "--output", o],
        ["attribute", "--model", m, "--data", d, "--output", o],
        ["audit", "--model", m, "--data", d, "--output", o],
    ):
        assert parser.parse_args(argv).trust_remote_code is False


def test_loader_asks_transformers_for_safetensors_and_no_remote_code(assets, monkeypatch):
    import transformers

    from unlearnkit.models import load_model

    seen = {}

    def record(name, **kwargs):
        seen.update(kwargs)
        raise OSError("stop here")

    monkeypatch.setattr(transformers.AutoModelForCausalLM, "from_pretrained", record)
    with pytest.raises(UserError, match="cannot load the model"):
        load_model(str(assets / "model"))
    assert seen["use_safetensors"] is True and seen["trust_remote_code"] is False


def test_hub_ids_and_offline_mode(tmp_path, monkeypatch):
    from unlearnkit.models import check_model_path, is_local

    monkeypatch.chdir(tmp_path)
    assert not is_local("meta-llama/Llama-2-7b-hf") and not is_local("gpt2")
    (tmp_path / "runs").mkdir()
    assert is_local("runs/target") and is_local("./target") and is_local("/abs/path") and is_local("a/b/c")
    with pytest.raises(UserError, match="runs/target: folder does not exist"):
        check_model_path("runs/target")  # a local path with a typo is not sent to the Hub
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(UserError, match="HF_HUB_OFFLINE=1 forbids downloading"):
        check_model_path("some-org/some-model")
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")  # the line names the variable that is set
    with pytest.raises(UserError, match="TRANSFORMERS_OFFLINE=1 forbids downloading"):
        check_model_path("some-org/some-model")
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    import unlearnkit.models as models

    monkeypatch.setattr(models, "hub_reachable", lambda: True)
    check_model_path("some-org/some-model")  # online: left to transformers (safetensors only)
    monkeypatch.setattr(models, "hub_reachable", lambda: False)
    with pytest.raises(
        UserError, match="some-org/some-model: no such local folder, and the Hugging Face Hub"
    ):
        check_model_path("some-org/some-model")  # no network: one line at once, not a minute of retries

"""Checkpoints, ``--resume`` after ``kill -9``, and the divergence guard, on a tiny trained target.

The resumed run must end with exactly the weights of an uninterrupted run: the HF Trainer restores
model, optimizer, scheduler and RNG state; the forget/retain pairing depends only on
(seed, epoch, index); every run here uses one CPU thread, so the arithmetic is the same op by op.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from unlearnkit.cli import main
from unlearnkit.train.checkpoints import complete_checkpoints

UNLEARN = ["--method", "npo", "--save-every", "2"]
UNLEARN += ["--set", "epochs=3", "--set", "batch_size=4", "--set", "grad_accum=1", "--set", "lr=5e-4"]

# The crashing run: the real CLI in a subprocess, each optimiser step slowed down (sleep only, the
# arithmetic is untouched) so that the test can kill it between the first checkpoint and the end.
CRASHING_RUN = """
import sys, time
import torch
import unlearnkit.train.trainer as T

torch.set_num_threads(1)
_step = T.UnlearnTrainer.training_step

def slow_step(self, *args, **kwargs):
    time.sleep(0.5)
    return _step(self, *args, **kwargs)

T.UnlearnTrainer.training_step = slow_step
from unlearnkit.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.fixture(scope="module")
def target(tmp_path_factory):
    """world --authors 12 --facts 4 ... then finetune the tiny model for 20 epochs."""
    torch.set_num_threads(1)
    root = tmp_path_factory.mktemp("resume")
    world = ["world", "--output", str(root / "world"), "--authors", "12", "--facts", "4"]
    assert main(world + ["--forget-fraction", "0.25", "--holdout-fraction", "0.25", "--general", "10"]) == 0
    ft = ["finetune", "--data", str(root / "world"), "--output", str(root / "target"), "--set", "epochs=20"]
    assert main(ft) == 0
    return root


def unlearn_argv(root: Path, out: Path, *extra: str) -> list[str]:
    return [
        "unlearn",
        "--model",
        str(root / "target"),
        "--data",
        str(root / "world"),
        "--output",
        str(out),
    ] + [
        *UNLEARN,
        *extra,
    ]


@pytest.fixture(scope="module")
def uninterrupted(target):
    torch.set_num_threads(1)
    out = target / "uninterrupted"
    assert main(unlearn_argv(target, out)) == 0
    assert not (
        target / ".uninterrupted.checkpoints"
    ).exists()  # the work folder goes once the model is saved
    return load_file(out / "model.safetensors")


def assert_same_weights(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for key in a:
        assert torch.equal(a[key], b[key]), f"{key}: max |diff| {(a[key] - b[key]).abs().max().item():.3g}"


def wait_for_checkpoint(proc: subprocess.Popen, work: Path, timeout: float = 240.0) -> Path:
    """A *complete* checkpoint: the Trainer writes trainer_state.json last, in place, so it must parse
    too (killed while it was being written, the checkpoint is not one to resume from)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done = complete_checkpoints(work)
        if done:
            return done[0]
        if proc.poll() is not None:
            pytest.fail(
                f"the run ended (rc {proc.returncode}) before a checkpoint: {proc.stderr.read()[-2000:]}"
            )
        time.sleep(0.02)
    proc.kill()
    pytest.fail("no checkpoint appeared in time")


def test_kill_9_then_resume_ends_with_the_same_weights(target, uninterrupted, capsys):
    torch.set_num_threads(1)
    out = target / "killed"
    work = target / ".killed.checkpoints"
    env = dict(os.environ, OMP_NUM_THREADS="1", HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    proc = subprocess.Popen(
        [sys.executable, "-c", CRASHING_RUN, *unlearn_argv(target, out)[0:]],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    first = wait_for_checkpoint(proc, work)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    assert first.name == "checkpoint-2"
    assert not out.exists()  # nothing half-written at the output path
    assert (work / "run.json").is_file()

    # A checkpoint cut short while saving (no trainer_state.json) is never resumed from.
    partial = work / "checkpoint-4"
    partial.mkdir(exist_ok=True)
    (partial / "model.safetensors").write_bytes(b"truncated")

    # Resuming with other settings would silently give other weights: refused, nothing touched.
    before = sorted(str(p.relative_to(target)) for p in target.rglob("*"))
    capsys.readouterr()
    assert main(unlearn_argv(target, out, "--resume", "--set", "lr=1e-3")) == 2
    err = capsys.readouterr().err
    assert "made with different settings (lr 0.0005 -> 0.001)" in err and "Traceback" not in err
    assert sorted(str(p.relative_to(target)) for p in target.rglob("*")) == before

    assert main(unlearn_argv(target, out, "--resume")) == 0
    err = capsys.readouterr().err
    assert "starting from step 0" not in err
    card = json.loads((out / "unlearnkit.json").read_text())
    assert card["resumed_from"].startswith("checkpoint-") and card["resumed_from"] != "checkpoint-4"
    assert not work.exists()
    assert_same_weights(load_file(out / "model.safetensors"), uninterrupted)


def test_resume_without_a_checkpoint_starts_from_step_0(target, uninterrupted, capsys):
    """Documented choice: --resume is safe to pass always (e.g. in a preemptible job's command line)."""
    torch.set_num_threads(1)
    out = target / "fresh"
    capsys.readouterr()
    assert main(unlearn_argv(target, out, "--resume")) == 0
    err = capsys.readouterr().err
    assert "unlearnkit: note: --resume: no checkpoint in" in err and "starting from step 0" in err
    assert "resumed_from" not in json.loads((out / "unlearnkit.json").read_text())
    assert_same_weights(load_file(out / "model.safetensors"), uninterrupted)


def _diverging(target: Path, out: Path, *extra: str) -> list[str]:
    argv = [
        "unlearn",
        "--model",
        str(target / "target"),
        "--data",
        str(target / "world"),
        "--output",
        str(out),
    ]
    return argv + [
        "--method",
        "ga",
        "--set",
        "epochs=3",
        "--set",
        "batch_size=4",
        "--set",
        "grad_accum=1",
        *extra,
    ]


@pytest.fixture
def nan_from_step_4(monkeypatch):
    """GA's loss turns NaN from its 4th call on (one call per optimiser step here).

    Divergence is injected, not provoked with a huge learning rate: whether lr=1e4 overflows depends
    on the CPU's kernels and thread count, and the guard is what is under test, not the arithmetic.
    """
    from unlearnkit.objectives import ga  # step_ga, beside the loss, looks ga_loss up here

    real, calls = ga.ga_loss, {"n": 0}

    def ga_loss(*args, **kwargs):
        calls["n"] += 1
        loss = real(*args, **kwargs)
        return loss * float("nan") if calls["n"] >= 4 else loss

    monkeypatch.setattr(ga, "ga_loss", ga_loss)
    return calls


def test_divergence_exits_3_and_keeps_the_last_good_checkpoint(target, capsys, nan_from_step_4):
    torch.set_num_threads(1)
    out = target / "diverged"
    work = target / ".diverged.checkpoints"
    capsys.readouterr()
    assert main(_diverging(target, out, "--save-every", "1")) == 3
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = [x for x in err.splitlines() if x.startswith("unlearnkit: diverged: ")]
    assert len(lines) == 1, err  # (a progress bar may still be closed after it)
    line = lines[0]
    assert line.startswith("unlearnkit: diverged: ga: ")
    assert re.search(r"at step \d+", line)  # which step
    assert "'forget_loss'" in line or "gradient" in line  # which term
    m = re.search(r"last good checkpoint \(step (\d+)\) kept in (\S+)", line)
    assert m, line
    kept = Path(m.group(2))
    assert kept.parent == work and kept.name == f"checkpoint-{m.group(1)}"
    assert m.group(1) == "3"  # steps 1-3 were finite, step 4 was not
    assert "at step 4" in line
    assert not out.exists()
    from unlearnkit.commands import checkpoints, weights_are_finite

    assert checkpoints(work)[-1] == kept  # nothing newer (with NaN weights) is left for --resume to pick
    assert all(weights_are_finite(c) for c in checkpoints(work))


def test_divergence_without_checkpoints_writes_nothing(target, capsys, nan_from_step_4):
    torch.set_num_threads(1)
    parent = target / "div2"
    parent.mkdir()
    capsys.readouterr()
    assert main(_diverging(target, parent / "out")) == 3
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert [
        x
        for x in err.splitlines()
        if x.startswith("unlearnkit: diverged: ga: ") and "no checkpoint was kept" in x
    ]
    assert list(parent.iterdir()) == []

"""A world and models for the sweep tests, made once per test session by ``unlearnkit finetune``.

A sweep refuses to choose among trials that are equal within noise (unlearnkit.evaluation.selection_noise), and
a random model's utility is 0 for every trial, so tests that need a choice start from a target that
knows its facts: ``finetune --model tiny`` (the real path; it records the tiny recipe, which makes
the sweep's default space the tiny one), 30 epochs at lr 3e-3 (about 10 s each on one thread). The
world is the tests' miniature (12 authors x 4 facts) with more general knowledge (30 world facts, 4
real authors x 4 facts) than conftest's: cut by whole countries and authors, conftest's 10 world facts
(2 countries, 9 + 1 rows) leave one row in a selection half, too few to tell any two trials apart.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from pathlib import Path

TRAIN = ["--set", "epochs=30", "--set", "lr=3e-3"]
FIXED = """
fixed:
  batch_size: 4
  grad_accum: 1
  max_length: 64
  warmup_epochs: 0
"""
# For tests of the study's mechanics (claims, kills, workers): a wide range. On 8 forget items most of
# its trials are equal within noise or pruned, so such a sweep may rightly refuse to choose (exit
# EXIT_NO_CHOICE): those tests accept either ending.
SPACE = "params:\n  lr: {low: 1.0e-5, high: 3.0e-2, log: true}\n  epochs: {choices: [1, 2]}\n" + FIXED
# For tests that need a choice (run with --prune-floor 0): two points that differ by far more than
# the noise of these small halves: lr 1e-5 leaves the model as it was, lr 3e-2 wrecks it (measured:
# selection-half utility 0.41 vs 0, band +-0.17).
CHOICE_SPACE = "params:\n  lr: {choices: [1.0e-5, 3.0e-2]}\n  epochs: {choices: [1]}\n" + FIXED
WORLD = dict(
    n_authors=12,
    facts_per_author=4,
    forget_fraction=0.25,
    holdout_fraction=0.25,
    n_general=30,
    seed=0,
    n_real_authors=4,
    n_agents=2,
    n_articles=10,
)


def trained_pair(tmp_path_factory) -> Path:
    """``ROOT/world`` (WORLD), ``ROOT/target`` (forget + retain + general), ``ROOT/oracle`` (retain +
    general), ``ROOT/space.yaml`` and ``ROOT/choice.yaml``; built once per session (a file lock guards it)."""
    from unlearnkit.cli import main
    from unlearnkit.world import write_world

    root = tmp_path_factory.getbasetemp() / "sweep-trained"
    root.mkdir(exist_ok=True)
    with open(root / ".lock", "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        if not (root / "world" / "forget.jsonl").is_file():
            write_world(root / "world", **WORLD)
        for name, split in (("target", []), ("oracle", ["--split", "retain"])):
            if not (root / name / "config.json").is_file():
                argv = [
                    "finetune",
                    "--data",
                    str(root / "world"),
                    "--output",
                    str(root / name),
                    *split,
                    *TRAIN,
                ]
                assert main(argv) == 0
        (root / "space.yaml").write_text(SPACE, encoding="utf-8")
        (root / "choice.yaml").write_text(CHOICE_SPACE, encoding="utf-8")
    return root


def choosing(argv: list[str], inputs: Path) -> list[str]:
    """``argv`` with the two-point CHOICE_SPACE and no pruning: a sweep that has a trial to choose."""
    argv = list(argv)
    argv[argv.index("--space") + 1] = str(inputs / "choice.yaml")
    return [*argv, "--prune-floor", "0"]


def sweep_argv(inputs: Path, data: Path, out: Path, trials: int, *extra: str) -> list[str]:
    return [
        "sweep",
        "--model", str(inputs / "target"),
        "--data", str(data),
        "--method", "gd",
        "--output", str(out),
        "--retain-model", str(inputs / "oracle"),
        "--trials", str(trials),
        "--space", str(inputs / "space.yaml"),
        "--max-items", "8",
        "--max-new-tokens", "6",
        "--seed", "0",
        *extra,
    ]  # fmt: skip


def cli(args: list[str]) -> subprocess.Popen:
    """The real CLI in a subprocess (one thread), output captured."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
    return subprocess.Popen(
        [sys.executable, "-m", "unlearnkit.cli", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )

"""Shared by the bench scripts: the embedded setup, method overrides for the tiny model, result files."""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

import torch

RESULTS = Path(__file__).resolve().parent / "results"

# RMU on the 2-layer tiny model: steer the first layer's output, train only its MLP down-projection (the
# paper's structure: layer l and the down_proj of the layers up to it). The paper's c = 6.5 / alpha = 1200
# are for Zephyr-7B's 4096-wide layer 7; here c = 4 / alpha = 50 at lr 1e-3 did not move the model at
# all (forget loss 2.63 -> 2.60), so c = 20, alpha = 1, lr 1e-2: our values, set once on this world.
_RMU_TINY = dict(layer=0, train_layers="0", steering_coeff=20.0, retain_weight=1.0, lr=1e-2)
TINY_EXTRA = {
    "rmu": _RMU_TINY,
    "t-rmu": _RMU_TINY,
    "s-rmu": _RMU_TINY,
    "asu_rmu": {**_RMU_TINY, "tau": 5.0},
}


def parser(description: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--cache-dir", default=None, help="target/oracle cache (default: ~/.cache/unlearnkit)")
    p.add_argument("--threads", type=int, default=2)
    return p


def setup(args, **kwargs):
    from transformers.utils import logging as hf_logging

    from unlearnkit.quickstart import prepare_embedded

    hf_logging.disable_progress_bar()
    torch.set_num_threads(args.threads)
    return prepare_embedded(args.seed, args.cache_dir, log=lambda m: print(m, flush=True), **kwargs)


def write_result(name: str, markdown: str, data: dict, command: str) -> Path:
    """``bench/results/<name>.md`` (a section of BENCHMARKS.md) and ``<name>.json`` (raw numbers)."""
    RESULTS.mkdir(exist_ok=True)
    stamp = time.strftime("%Y-%m-%d")
    header = (
        f"<!-- produced by `{command}` on {stamp}, {platform.machine()}, torch {torch.__version__}, "
        f"{torch.get_num_threads()} threads -->\n"
    )
    (RESULTS / f"{name}.md").write_text(header + markdown.rstrip() + "\n", encoding="utf-8")
    (RESULTS / f"{name}.json").write_text(json.dumps(data, indent=1, default=float) + "\n", encoding="utf-8")
    print(markdown)
    return RESULTS / f"{name}.md"


def previous(name: str) -> dict:
    """The raw results of an earlier run of the same script (for ``--only`` partial re-runs)."""
    path = RESULTS / f"{name}.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}

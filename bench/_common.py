"""Shared by the bench scripts: the embedded setup, method overrides for the tiny model, result files."""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

import torch

RESULTS = Path(__file__).resolve().parent / "results"

# RMU on the 2-layer tiny model: steer the last layer's output, train both MLP down-projections.
# Activations of a 128-wide model are O(1), so the paper's c = 6.5 / alpha = 1200 (Zephyr-7B, 4096 wide)
# are scaled down; the values are ours, chosen once on this world (not tuned per metric).
TINY_EXTRA = {
    "rmu": dict(layer=1, train_layers="0,1", steering_coeff=4.0, retain_weight=50.0, lr=1e-3),
    "t-rmu": dict(layer=1, train_layers="0,1", steering_coeff=4.0, retain_weight=50.0, lr=1e-3),
    "s-rmu": dict(layer=1, train_layers="0,1", steering_coeff=4.0, retain_weight=50.0, lr=1e-3),
    "asu_rmu": dict(layer=1, train_layers="0,1", tau=5.0, retain_weight=50.0, lr=1e-3),
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

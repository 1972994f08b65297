"""Rebuild the lab models that ship with unlearnkit (``src/unlearnkit/resources/lab/``).

The quickstart's lab (the TOFU-like miniature of its world, seed 0: the base, the target and the
oracle) is the same for every newcomer and takes most of a first quickstart's time to train, so the
package ships it: ``resources/lab/manifest.json`` files each model under the cache key the lab computes
for it (:mod:`unlearnkit.pipelines.embedded`: the world's files, the recipe, the seed, the training
code, ``LAB_VERSION``), and the lab copies a model from there where its key matches instead of training
it. A change the key sees makes the shipped models stale: the lab trains again, and
``tests/test_shipped_lab.py`` fails until this script has rebuilt them.

    python bench/ship_lab.py                  # train the lab in a fresh cache, then ship it
    python bench/ship_lab.py --cache-dir DIR  # ship it from a cache that holds it (trains what is missing)
    python bench/ship_lab.py --check          # exit 1 when the shipped models are not the lab's current ones

The models are trained as ``unlearnkit quickstart`` trains them on a 2-core machine (``--threads 2``:
the base on 2 threads, the target and the oracle side by side on 1 each): the weights depend on the
threads a matmul is split over, and shipped models must be what such a run would have trained, so that
its metrics.json is the same with them as from scratch.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LAB_DIR = ROOT / "src" / "unlearnkit" / "resources" / "lab"
BENCHMARK = "tofu"
SEED = 0
THREADS = 2  # unlearnkit quickstart on a 2-core machine


def lab_models(root: Path, log=print) -> dict[str, Path]:
    """``{role: cache folder}`` of the quickstart's lab in cache ``root``: from the cache, else trained
    (never copied from the shipped models: :data:`unlearnkit.pipelines.embedded.TRAIN_LAB_ENV`)."""
    from unlearnkit.pipelines.embedded import TRAIN_LAB_ENV, ensure_lab
    from unlearnkit.pipelines.quickstart import WORLD

    os.environ[TRAIN_LAB_ENV] = "1"
    try:
        _, base, target, oracle = ensure_lab(BENCHMARK, root, dict(WORLD), SEED, log)
    finally:
        os.environ.pop(TRAIN_LAB_ENV, None)
    return {"base": base, "target": target, "oracle": oracle}


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def ship(models: dict[str, Path], threads: int, out: Path = LAB_DIR) -> dict:
    """Write ``out``: a folder per role with the model's files (its card is written on install, from the
    installing cache's paths) and ``manifest.json``."""
    import torch

    from unlearnkit.pipelines.embedded import CARD_FILES, LAB_VERSION
    from unlearnkit.pipelines.quickstart import WORLD

    entries = {}
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    for role, path in models.items():
        card = json.loads((path / "unlearnkit.json").read_text(encoding="utf-8"))
        files = sorted(p for p in path.iterdir() if p.is_file() and p.name not in CARD_FILES)
        (out / role).mkdir()
        for f in files:
            shutil.copyfile(f, out / role / f.name)
        entries[f"{path.parent.name}/{path.name}"] = {
            "folder": role,
            "files": {f.name: sha256(f) for f in files},
            "trained": {k: card[k] for k in ("train_loss", "compute", "config") if k in card},
        }
    manifest = {
        "what": "the quickstart's lab (TOFU-like miniature of its world), written by bench/ship_lab.py",
        "lab_version": LAB_VERSION,
        "benchmark": BENCHMARK,
        "seed": SEED,
        "world": WORLD,
        "threads": threads,
        "torch": torch.__version__,
        "models": entries,
    }
    (out / "manifest.json").write_text(
        json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8"
    )
    return manifest


def check(root: Path, log=print) -> list[str]:
    """What is stale: the lab's models computed in cache ``root`` (an empty one) with training forbidden;
    each model the shipped lab does not hold under its current key is named ([]: all shipped)."""
    from unlearnkit.pipelines.embedded import LabNotShipped, ensure_lab, shipped_only
    from unlearnkit.pipelines.quickstart import WORLD

    try:
        with shipped_only():
            ensure_lab(BENCHMARK, root, dict(WORLD), SEED, log)
    except LabNotShipped as e:
        return [str(e)]
    return []


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache-dir", help="a lab cache to ship from (default: a fresh temporary one)")
    parser.add_argument(
        "--check", action="store_true", help="only say whether the shipped models are current"
    )
    parser.add_argument("--threads", type=int, default=THREADS, help=f"torch threads (default {THREADS})")
    args = parser.parse_args(argv)
    import torch

    with tempfile.TemporaryDirectory(prefix="ship_lab_") as tmp:
        if args.check:
            stale = check(Path(tmp))
            for line in stale:
                print(f"stale: {line}; run python bench/ship_lab.py", file=sys.stderr)
            print("the shipped lab is current" if not stale else "")
            return 1 if stale else 0
        if args.threads != THREADS:
            print(f"note: {args.threads} threads; the quickstart on a 2-core machine trains on {THREADS}")
        torch.set_num_threads(args.threads)
        root = Path(args.cache_dir) if args.cache_dir else Path(tmp)
        models = lab_models(root)
        manifest = ship(models, args.threads)
    size = sum(f.stat().st_size for f in LAB_DIR.rglob("*") if f.is_file())
    print(f"wrote {LAB_DIR} ({len(manifest['models'])} models, {size / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Shared by the bench scripts: the embedded setup, method overrides for the tiny model, result files,
and the provenance that ties every result and every cached run to the code that produced it.

Provenance (:func:`provenance`): the git commit, whether ``src/`` differs from it, a SHA-256 of the
files under ``src/`` (so uncommitted changes count), the script's settings (seeds, items ...) and the
machine. Every results file carries it (``write_result``: the JSON's ``provenance`` key and a visible
line under the section's title), and :class:`RunCache` reuses a cached run only when the commit, the
``src/`` hash and the run's settings all match the current ones, so evidence never outlives its code.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import platform
import subprocess
import time
from functools import cache
from pathlib import Path
from typing import Any

import torch

RESULTS = Path(__file__).resolve().parent / "results"
ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
# The swept tiny recipes (written by bench/sweep.py): the quickstart and the benches that run its methods
# train the TOFU-like rows with them, so such a result holds for the recipes it records.
TUNED_RECIPES = SRC / "unlearnkit" / "resources" / "recipes" / "tiny"


def parser(description: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--cache-dir", default=None, help="target/oracle cache (default: ~/.cache/unlearnkit)")
    p.add_argument("--threads", type=int, default=2)
    return p


def embedded_settings(args, max_items: int = 200, max_new_tokens: int = 48, **extra) -> dict:
    """What a result on the embedded world depends on besides the code: world, seed, evaluation sizes."""
    from unlearnkit.pipelines.embedded import LAB_VERSION
    from unlearnkit.pipelines.quickstart import WORLD

    return {
        "world": WORLD,
        "world_seed": args.seed,
        "lab_version": LAB_VERSION,  # the recipes of the world's base, targets and oracles
        "max_items": max_items,
        "max_new_tokens": max_new_tokens,
        **extra,
    }


def setup(args, **kwargs):
    from transformers.utils import logging as hf_logging

    from unlearnkit.pipelines.quickstart import prepare_embedded

    hf_logging.disable_progress_bar()
    torch.set_num_threads(args.threads)
    return prepare_embedded(args.seed, args.cache_dir, log=lambda m: print(m, flush=True), **kwargs)


# ------------------------------------------------------------------------------------ provenance


def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def _files_sha256(paths, base: Path) -> str:
    """SHA-256 over files (path relative to ``base`` and bytes, in the order given)."""
    h = hashlib.sha256()
    for path in paths:
        h.update(str(path.relative_to(base)).encode() + b"\0")
        h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


@cache
def src_sha256() -> str:
    """SHA-256 over every file under ``src/`` (relative path and bytes, sorted; caches skipped)."""
    paths = [
        path
        for path in sorted(SRC.rglob("*"))
        if path.is_file()
        and "__pycache__" not in path.parts
        and path.suffix not in (".pyc", ".pyo")
        and not any(part.endswith(".egg-info") for part in path.parts)
    ]
    return _files_sha256(paths, SRC)


def recipes_sha256() -> str:
    """SHA-256 over the swept tiny recipes (file names and bytes; the hash of nothing when none is kept)."""
    return _files_sha256(sorted(TUNED_RECIPES.glob("*.yaml")), TUNED_RECIPES)


@cache
def code_version() -> dict[str, Any]:
    """The commit (``unknown`` outside a git checkout), whether src/ differs from it, the src/ hash and
    the swept recipes' hash (within src/, named apart: a result that trains with them is of those)."""
    commit = _git("rev-parse", "HEAD") or "unknown"
    dirty = _git("status", "--porcelain", "--", "src") if commit != "unknown" else None
    return {
        "commit": commit,
        "src_dirty": bool(dirty),
        "src_sha256": src_sha256(),
        "recipes_sha256": recipes_sha256(),
    }


def machine() -> dict[str, Any]:
    return {
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "cuda": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
    }


# The packages whose versions move the numbers: the same code (8742155) and cached lab gave the MUSE-like
# miniature's GD a VerbMem of 0.629 in the install that measured quality_rawtext.md and 0.636 in a later
# one. Recorded with every result, and a cached run is reused only under the same versions.
NUMERIC_PACKAGES = (
    "torch",
    "transformers",
    "accelerate",
    "peft",
    "tokenizers",
    "datasets",
    "numpy",
    "scipy",
    "rouge-score",
    "lm-eval",
)


def packages() -> dict[str, str | None]:
    """``{distribution: installed version}`` of :data:`NUMERIC_PACKAGES` (None: not installed)."""
    from importlib import metadata

    out: dict[str, str | None] = {}
    for name in NUMERIC_PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def _plain(settings: dict[str, Any] | None) -> dict[str, Any]:
    """``settings`` as JSON would give them back (tuples as lists, keys as strings): comparable."""
    return json.loads(json.dumps(settings or {}, sort_keys=True, default=str))


def provenance(settings: dict[str, Any] | None = None) -> dict[str, Any]:
    """What produced a result: code version, the settings, the machine, the packages and the date."""
    return {
        **code_version(),
        "settings": _plain(settings),
        "machine": machine(),
        "packages": packages(),
        "date": time.strftime("%Y-%m-%d"),
    }


def unrecorded(date: str = "?") -> dict[str, Any]:
    """The provenance of numbers written before provenance was recorded: unknown, and said so."""
    unknown = "not recorded"
    machine_ = {
        "platform": unknown,
        "machine": unknown,
        "cpus": "?",
        "torch": "?",
        "threads": "?",
        "cuda": None,
    }
    return {
        "commit": unknown,
        "src_dirty": False,
        "src_sha256": unknown,
        "settings": {},
        "machine": machine_,
        "date": date,
    }


def matches(
    stored: dict[str, Any] | None, settings: dict[str, Any] | None, keys: tuple[str, ...] | None = None
) -> bool:
    """A stored provenance is the current code's (commit and src/ hash) and packages' (a provenance from
    before they were recorded never matches) with these settings (only the ``keys`` of them, when given)."""
    if not isinstance(stored, dict):
        return False
    now = code_version()
    want, have = _plain(settings), stored.get("settings") or {}
    if keys is not None:
        want, have = {k: want.get(k) for k in keys}, {k: have.get(k) for k in keys}
    return (
        stored.get("commit") == now["commit"]
        and now["commit"] != "unknown"
        and stored.get("src_sha256") == now["src_sha256"]
        and stored.get("packages") == packages()
        and have == want
    )


def describe(settings: dict[str, Any] | None, made: dict[str, Any] | None = None) -> str:
    """One line saying what a result is: its settings, code and machine (printed under each title).
    ``made``: a stored provenance to describe instead of the current code and machine."""
    v, m = (made, made["machine"]) if made else (code_version(), machine())
    parts = [f"{k.replace('_', ' ')} {_short(val)}" for k, val in _plain(settings).items()]
    if v["commit"] == "not recorded":
        return "; ".join([*parts, "machine and code not recorded (made before provenance was kept)"])
    hw = f"{m['cpus']}-CPU {m['machine']}" + (f", {m['cuda']}" if m["cuda"] else "")
    versions = (made or {"packages": packages()}).get("packages") or {}
    stack = "".join(f", {k} {versions[k]}" for k in ("transformers",) if versions.get(k))
    parts.append(f"{hw}, torch {m['torch']}{stack}, {m['threads']} threads")
    parts.append(f"commit {v['commit'][:10]}{' + uncommitted src/' if v['src_dirty'] else ''}")
    parts.append(f"src sha256 {v['src_sha256'][:12]}")
    return "; ".join(parts)


def _short(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(map(str, value)) if value else "none"
    if isinstance(value, dict):
        return json.dumps(value, sort_keys=True)
    return str(value)


class RunCache:
    """Finished runs as ``FOLDER/<key>.json`` = ``{"provenance": ..., "result": ...}``.

    :meth:`get` returns a run only when its provenance :func:`matches` the current code and the
    settings asked for now; anything else (older code, other settings, a file from before provenance
    was recorded) is a miss, and the run is made again. Writes are atomic: a killed run leaves none.
    """

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)

    def path(self, key: str) -> Path:
        return self.folder / f"{key}.json"

    def get(self, key: str, settings: dict[str, Any]) -> dict | None:
        path = self.path(key)
        if not path.is_file():
            return None
        try:
            stored = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            return None
        if not matches(stored.get("provenance"), settings) or "result" not in stored:
            return None
        return stored["result"]

    def put(self, key: str, settings: dict[str, Any], result: dict) -> dict:
        path = self.path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(json.dumps({"provenance": provenance(settings), "result": result}, indent=1) + "\n")
        tmp.replace(path)
        return result


# ------------------------------------------------------------------------------------ result files


def write_result(
    name: str, markdown: str, data: dict, command: str, settings: dict | None = None, made: dict | None = None
) -> Path:
    """``bench/results/<name>.md`` (a section of BENCHMARKS.md) and ``<name>.json`` (raw numbers).

    ``settings``: what the numbers are (seeds, items, world ...). The JSON gets a ``provenance`` key
    (:func:`provenance`); the markdown a comment with the command and, under its first heading, one
    visible line saying the settings, the machine and the code (:func:`describe`), also printed.
    ``made``: the stored provenance of numbers re-rendered without re-running (kept as it was).
    """
    RESULTS.mkdir(exist_ok=True)
    info = made if made else provenance(settings)
    if made:
        settings = made.get("settings")
    line = f"_Produced by `{command}` on {info['date']}: {describe(settings, made)}._"
    header = f"<!-- produced by `{command}`; provenance in bench/results/{name}.json -->\n"
    lines = markdown.rstrip().splitlines()
    at = next((i + 1 for i, x in enumerate(lines) if x.startswith("#")), 0)
    body = "\n".join([*lines[:at], *([""] if at else []), line, *lines[at:]])
    (RESULTS / f"{name}.md").write_text(header + body + "\n", encoding="utf-8")
    payload = {**data, "provenance": info}
    (RESULTS / f"{name}.json").write_text(
        json.dumps(payload, indent=1, default=float) + "\n", encoding="utf-8"
    )
    print(line)
    print(markdown)
    return RESULTS / f"{name}.md"


def previous(name: str, settings: dict | None = None, keys: tuple[str, ...] | None = None) -> dict:
    """The raw results of an earlier run of the same script (for ``--only`` partial re-runs), without
    their ``provenance`` key; ``{}`` unless that run was made by this code with these ``settings``
    (kept rows must never mix code versions); ``keys``: compare only these settings."""
    path = RESULTS / f"{name}.json"
    if not path.is_file():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    stored = data.pop("provenance", None) if isinstance(data, dict) else None
    if not matches(stored, settings):
        print(
            f"bench/results/{name}.json was made by other code or settings: not reusing its rows", flush=True
        )
        return {}
    return data


# ------------------------------------------------------------------------------------ seeds


DEFAULT_SEEDS = "0,1,2,3,4"


def add_seeds(p: argparse.ArgumentParser, default: str = DEFAULT_SEEDS) -> None:
    """``--seeds``: the lab seeds a bench runs on (each its own world, base, target and oracle)."""
    p.add_argument("--seeds", default=default, help="comma-separated lab seeds (each its own world and lab)")


def parse_seeds(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


def over_seeds(name: str, seeds: list[int], settings: dict[str, Any], run) -> dict[int, dict]:
    """``{seed: run(seed)}``, each seed's result kept in ``.bench_work/seeds/<name>-seed<N>.json`` and
    reused only when it was made by this code with these ``settings`` (:class:`RunCache`): a bench
    stopped part-way resumes at the first unfinished seed, and a code change re-runs every seed."""
    cache = RunCache(Path(".bench_work") / "seeds")
    out: dict[int, dict] = {}
    for seed in seeds:
        key, want = f"{name}-seed{seed}", {**settings, "seed": seed}
        got = cache.get(key, want)
        if got is None:
            got = cache.put(key, want, run(seed))
        else:
            print(f"{name}: seed {seed} from {cache.path(key)} (same code and settings)", flush=True)
        out[seed] = got
    return out


def measure_seeds(name: str, args, run, render, command: str, **extra: Any) -> dict[int, dict]:
    """A bench over ``args.seeds``: ``run(args, seed)`` for each (kept per seed, :func:`over_seeds`), then
    ``bench/results/<name>.md`` from ``render(per_seed)`` and ``<name>.json`` with every seed's rows.
    ``extra``: settings the result depends on beyond :func:`embedded_settings` (in the cache key too)."""
    seeds = parse_seeds(args.seeds)
    if getattr(args, "threads", None):  # the provenance's thread count, also where every seed is cached
        torch.set_num_threads(args.threads)
    per_seed = over_seeds(name, seeds, embedded_settings(args, **extra), lambda s: run(args, s))
    settings = embedded_settings(args, seeds=seeds, **extra)
    settings["world_seed"] = seeds
    data = {"seeds": {str(s): r for s, r in per_seed.items()}}
    write_result(name, render(per_seed), data, command, settings)
    return per_seed


def mean_sd(values: list[float]) -> tuple[float, float]:
    """Mean and sample standard deviation (0 for a single value), NaNs and Nones dropped."""
    xs = [float(v) for v in values if v is not None and not math.isnan(float(v))]
    if not xs:
        return float("nan"), float("nan")
    mean = sum(xs) / len(xs)
    sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (len(xs) - 1)) if len(xs) > 1 else 0.0
    return mean, sd


def _cell(values: list[float]) -> str:
    mean, sd = mean_sd(values)
    if math.isnan(mean):
        return "\u2013"
    if 0 < abs(mean) < 1e-3 or abs(mean) >= 1e4:
        return f"{mean:.2g} \u00b1 {sd:.1g}"
    return f"{mean:.3f} \u00b1 {sd:.3f}"


def seed_table(per_seed: dict[int, dict], columns: list[str], head: str = "row") -> str:
    """Rows x columns, each cell the mean \u00b1 sd over the seeds that have it."""
    rows = list(dict.fromkeys(r for results in per_seed.values() for r in results))
    header = f"| {head} | " + " | ".join(columns) + " |"
    lines = [header, "|" + "---|" * (len(columns) + 1)]
    for row in rows:
        cells = [
            _cell([res[row][c] for res in per_seed.values() if row in res and c in res[row]]) for c in columns
        ]
        lines.append(f"| {row} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def every_seed(per_seed: dict[int, dict], rows: list[str], columns: list[str]) -> str:
    """The numbers behind the checks, one line per seed."""
    heads = [f"{r}: {c}" for r in rows for c in columns]
    lines = ["| seed | " + " | ".join(heads) + " |", "|" + "---|" * (len(heads) + 1)]
    for seed, res in per_seed.items():
        cells = [f"{res[r][c]:.3g}" if r in res and c in res[r] else "\u2013" for r in rows for c in columns]
        lines.append(f"| {seed} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def paired(per_seed: dict[int, dict], a: str, b: str, column: str) -> dict[str, Any] | None:
    """Row ``a`` minus row ``b`` in ``column``, seed by seed: the mean and sd of the differences, on how
    many seeds ``a`` is higher, and the reading: ``higher`` / ``lower`` only when the mean difference is
    more than one sd of the differences from 0 *and* has the same sign on every seed, else ``tie``."""
    diffs = [
        float(res[a][column]) - float(res[b][column])
        for res in per_seed.values()
        if a in res and b in res and res[a].get(column) is not None and res[b].get(column) is not None
    ]
    if not diffs:
        return None
    mean, sd = mean_sd(diffs)
    up = sum(d > 0 for d in diffs)
    same_sign = up in (0, len(diffs))
    reading = "tie" if not same_sign or abs(mean) <= sd or mean == 0 else ("higher" if mean > 0 else "lower")
    return {"mean": mean, "sd": sd, "higher_on": up, "seeds": len(diffs), "reading": reading}


def paired_table(per_seed: dict[int, dict], pairs: list[tuple[str, str]], columns: list[str]) -> str:
    """One line per (a, b) pair: for each column, a - b as mean \u00b1 sd over seeds, the seeds on which
    a is higher, and the reading (:func:`paired`)."""
    lines = ["| a - b | " + " | ".join(columns) + " |", "|" + "---|" * (len(columns) + 1)]
    for a, b in pairs:
        cells = []
        for c in columns:
            d = paired(per_seed, a, b, c)
            cells.append(
                "\u2013"
                if d is None
                else f"{d['mean']:+.3f} \u00b1 {d['sd']:.3f} ({d['higher_on']}/{d['seeds']} up: {d['reading']})"
            )
        lines.append(f"| {a} - {b} | " + " | ".join(cells) + " |")
    return "\n".join(lines)

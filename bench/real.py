"""The real lab: SmolLM2-135M-Instruct fine-tuned on real TOFU authors, then every default method on it.

    python bench/real.py                                    # seeds 0-2, 2 forget + 2 retain authors
    python bench/real.py --seeds 0 --forget-authors 1 --retain-authors 1 --ft-epochs 1 \\
        --methods ga --max-items 3 --output-dir /tmp/real-smoke   # a smoke run of the code path

Each seed draws its own authors from TOFU (``$UNLEARNKIT_DATA_ROOT/locuslab/TOFU``, default
``../shared/data``): forget authors among forget10's 20 (``forget10_perturbed.json`` has their
paraphrased and perturbed answers), retain authors among the first 20 (``retain_perturbed.json``: the
same fields, so the retain truth ratio counts in model utility), holdout authors (never trained on:
the non-members of the membership numbers) among the other 160, and TOFU's real authors and world
facts as the general split. The seed's rows are written as an own-data benchmark folder in the cache
(never in the repository: the project commits no TOFU text). On it: the target (the model fine-tuned on
forget + retain), the oracle (retain only), a second oracle (retain only, training seed + 1000), each
with its ``learned`` line; then the methods on the target, every row evaluated by the TOFU protocol
against the oracle. Every model and evaluation is kept in the cache under a content key (its data,
recipe and the code it runs): a run stopped part-way resumes where it stopped. A time estimate is
printed before each fine-tune, unlearning run and evaluation, from the seconds per step / per item
this machine recorded (``timings.json`` in the cache), else from the nearest recorded kind.

Writes bench/results/real.md and real.json (``{"tofu": {seed: {row: metrics}}, "provenance": ...}``,
quality.json's format); the lab's checks (issue 58 item 3) and the claims (item 5) are computed from the
numbers there (:func:`lab_checks`, :func:`claims`). ``--output-dir`` writes them elsewhere (a smoke run).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common  # noqa: E402
from _common import every_seed, mean_sd, paired, seed_table, write_result  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA_ROOT = ROOT.parent / "shared" / "data"
TOFU_SUBDIR = Path("locuslab") / "TOFU"
AUTHOR_ROWS = 20  # TOFU: each author is 20 consecutive rows of full.json
N_AUTHORS = 200
FORGET_POOL = tuple(range(180, 200))  # forget10's authors (forget10_perturbed.json: rows 3600-3999)
RETAIN_POOL = tuple(range(0, 20))  # the authors of retain_perturbed.json (rows 0-399 of full.json)
HOLDOUT_POOL = tuple(range(20, 180))  # never trained: non-members
GENERAL_FILES = {"real_authors": "real_authors_perturbed.json", "world_facts": "world_facts_perturbed.json"}
EVAL_KEYS = ("question", "answer", "paraphrased_answer", "perturbed_answer", "paraphrased_question")
GENERAL_KEYS = ("question", "answer", "perturbed_answer")

MODEL = "smollm2-135m-instruct"
NULL_ORACLE = "oracle, another seed"
NULL_SEED_OFFSET = 1000  # the second oracle's training seed: same authors, data and recipe
DEFAULT_FT_SET = ("anchor_decay=0.001",)
DEFAULT_METHODS = "ga,gd,npo,simnpo,idk,rmu,asu,asu_kl,t-npo,s-npo"
# ASU and ASU-KL at the temperature searched for this model (the paper's 2.0 silences SmolLM2's teacher:
# bench/results/teacher.md); RMU as Adaptive RMU at the paper's beta: a fixed c = 6.5, set for Zephyr-7B's
# activations, is far below SmolLM2's layer-7 norms (about 120). Not a cure on its own: on seed 0, 50 steps at
# lr 1e-4 or 1e-3 left its forget loss at about c^2 / D (c about 600) and every number the target's.
METHOD_SETTINGS: dict[str, dict[str, Any]] = {
    "asu": {"tau": "auto"},
    "asu_kl": {"tau": "auto"},
    "rmu": {"steering_scale": 5.0},
}

# The code each cached thing depends on (files or folders under src/unlearnkit): a change there makes
# it again, a change elsewhere keeps it.
TRAIN_CODE = (
    "config.py",
    "models.py",
    "gguf_models.py",
    "data",
    "api/finetune.py",
    "train/compute.py",
    "train/finetune.py",
    "train/trainer.py",
    "train/anchor.py",
)
UNLEARN_CODE = (
    "config.py",
    "models.py",
    "data",
    "api",
    "objectives",
    "train",
    "methods.py",
    "attention.py",
    "tokens.py",
    "catalog.py",  # every method's settings and defaults
    "attribution.py",  # TokenUnlearn's scores (t-*, s-*)
    "pipelines/unlearn.py",
    "evaluation/teacher_search.py",
)
EVAL_CODE = ("models.py", "data", "api/evaluate.py", "evaluation", "metrics", "protocols")

UTILITY = tuple(
    f"{part}_{m}"
    for part in ("retain", "real_authors", "world_facts")
    for m in ("prob", "rougeL_recall", "truth_ratio")
)
COLUMNS = (
    "forget_quality",
    "model_utility",
    "forget_rougeL_recall",
    "forget_truth_ratio",
    "forget_fact_word_recall",
    "forget_token_entropy",
    "forget_degenerate_share",
    "retain_rougeL_recall",
    "train_seconds",
)
# the claims' thresholds (issue 58 item 5)
ROUGE_WITHIN = 0.1
UTILITY_SHARE = 0.9
ENTROPY_SHARE = 0.9
BASELINES_ASU_BEATS = ("ga", "npo", "idk")


def fail(message: str) -> None:
    """One clear line and exit 2 (bad input)."""
    print(f"real.py: {message}", file=sys.stderr)
    raise SystemExit(2)


# ------------------------------------------------------------------------------------ the data


def tofu_dir(data_root: str | os.PathLike | None) -> Path:
    root = Path(data_root or os.environ.get("UNLEARNKIT_DATA_ROOT") or DEFAULT_DATA_ROOT)
    folder = root / TOFU_SUBDIR
    if not (folder / "full.json").is_file():
        fail(f"no TOFU copy at {folder} (full.json missing); set --data-root or UNLEARNKIT_DATA_ROOT")
    return folder


def read_rows(path: Path) -> list[dict]:
    """A hub-layout JSON file: one object a line (or one JSON list)."""
    text = path.read_text(encoding="utf-8")
    if text.lstrip().startswith("["):
        return json.loads(text)
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def choose_authors(seed: int, n_forget: int, n_retain: int, n_holdout: int) -> dict[str, list[int]]:
    """The seed's authors (indices into full.json's 200), drawn from disjoint pools: forget from
    forget10's 20, retain from the first 20, holdout from the other 160. Deterministic in the seed."""
    for name, n, pool in (
        ("forget", n_forget, FORGET_POOL),
        ("retain", n_retain, RETAIN_POOL),
        ("holdout", n_holdout, HOLDOUT_POOL),
    ):
        if n < (0 if name == "holdout" else 1) or n > len(pool):
            low = 0 if name == "holdout" else 1
            fail(
                f"--{name}-authors {n}: must be {low}..{len(pool)} (TOFU's authors with the fields it needs)"
            )

    def draw(name: str, pool: Sequence[int], n: int) -> list[int]:
        # each pool shuffled by its own seeded generator: a larger size extends a smaller one's authors
        order = list(pool)
        random.Random(f"unlearnkit-real-{seed}-{name}").shuffle(order)
        return sorted(order[:n])

    return {
        "forget": draw("forget", FORGET_POOL, n_forget),
        "retain": draw("retain", RETAIN_POOL, n_retain),
        "holdout": draw("holdout", HOLDOUT_POOL, n_holdout),
    }


def _author_block(rows: Sequence[dict], author: int, first: int = 0) -> list[dict]:
    start = (author - first) * AUTHOR_ROWS
    block = list(rows[start : start + AUTHOR_ROWS])
    if len(block) != AUTHOR_ROWS:
        fail(f"TOFU author {author}: expected {AUTHOR_ROWS} rows at row {start}, found {len(block)}")
    return block


def _keep(row: Mapping[str, Any], keys: Sequence[str], **extra: Any) -> dict:
    return {**{k: row[k] for k in keys if k in row}, **extra}


def build_splits(
    tofu: Mapping[str, Sequence[dict]], authors: Mapping[str, Sequence[int]]
) -> dict[str, list[dict]]:
    """The benchmark's rows from TOFU's files (``tofu``: file stem -> rows): forget rows from
    forget10_perturbed, retain rows from retain_perturbed (both with their evaluation fields), holdout
    rows from full (question and answer), general from real authors and world facts (``source`` names
    which). Each author row records ``author`` (its index in full.json)."""
    full = tofu["full"]
    splits: dict[str, list[dict]] = {"forget": [], "retain": [], "holdout": [], "general": []}
    for a in authors["forget"]:
        ev = _author_block(tofu["forget10_perturbed"], a, FORGET_POOL[0])
        for row, base in zip(ev, _author_block(full, a)):
            if row["question"] != base["question"]:
                fail(f"forget10_perturbed does not line up with full.json at author {a}")
            splits["forget"].append(_keep(row, EVAL_KEYS, author=a))
    for a in authors["retain"]:
        ev = _author_block(tofu["retain_perturbed"], a)
        for row, base in zip(ev, _author_block(full, a)):
            if row["question"] != base["question"]:
                fail(f"retain_perturbed does not line up with full.json at author {a}")
            splits["retain"].append(_keep(row, EVAL_KEYS, author=a))
    for a in authors["holdout"]:
        splits["holdout"] += [_keep(row, ("question", "answer"), author=a) for row in _author_block(full, a)]
    for source in GENERAL_FILES:
        splits["general"] += [_keep(row, GENERAL_KEYS, source=source) for row in tofu[source]]
    return splits


def load_tofu(folder: Path) -> dict[str, list[dict]]:
    files = {"full": "full.json", "forget10_perturbed": "forget10_perturbed.json"}
    files["retain_perturbed"] = "retain_perturbed.json"
    files.update(GENERAL_FILES)
    out = {}
    for stem, name in files.items():
        if not (folder / name).is_file():
            fail(f"{folder / name} is missing (TOFU's hub layout)")
        out[stem] = read_rows(folder / name)
    if len(out["full"]) != N_AUTHORS * AUTHOR_ROWS:
        fail(f"{folder / 'full.json'}: {len(out['full'])} rows, expected {N_AUTHORS * AUTHOR_ROWS}")
    return out


def write_folder(splits: Mapping[str, Sequence[dict]], folder: Path, meta: Mapping[str, Any]) -> Path:
    """The own-data benchmark folder (forget/retain/holdout/general.jsonl and benchmark.json), atomically."""
    folder = Path(folder)
    if (folder / "benchmark.json").is_file():
        return folder
    tmp = folder.with_name(f"{folder.name}.tmp{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for name, rows in splits.items():
        if rows:
            text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
            (tmp / f"{name}.jsonl").write_text(text, encoding="utf-8")
    manifest = {"kind": "qa", "about": "real TOFU authors for bench/real.py", **meta}
    (tmp / "benchmark.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    shutil.rmtree(folder, ignore_errors=True)
    tmp.replace(folder)
    return folder


def ensure_data(work: Path, tofu_folder: Path, seed: int, sizes: Mapping[str, int]) -> tuple[Path, dict]:
    """The seed's benchmark folder in the cache (keyed by TOFU's files and the authors), and its authors."""
    from unlearnkit.pipelines.embedded import digest

    authors = choose_authors(seed, sizes["forget"], sizes["retain"], sizes["holdout"])
    names = ["full.json", "forget10_perturbed.json", "retain_perturbed.json", *GENERAL_FILES.values()]
    key = digest("real-data", authors, files=[tofu_folder / n for n in names])
    folder = work / "data" / f"seed{seed}-{key}"
    if not (folder / "benchmark.json").is_file():
        write_folder(
            build_splits(load_tofu(tofu_folder), authors), folder, {"seed": seed, "authors": authors}
        )
    return folder, authors


def ensure_eval_data(data: Path, general_items: int) -> Path:
    """The folder every row is evaluated on: the seed's forget, retain and holdout rows as they are, and
    ``general_items`` of each general source (TOFU's real authors, world facts; the rows the evaluator's
    own seeded sample would take). The training folder ``data`` keeps every general row (ASU's
    temperature search reads it); only the evaluation is capped, so the lab's own splits are always
    scored in full: TOFU's forget quality is a test over the whole forget set."""
    from unlearnkit.evaluation.evaluate import subsample

    folder = data.with_name(f"{data.name}-eval{general_items}")
    if (folder / "benchmark.json").is_file():
        return folder
    splits = {name: _jsonl_rows(data / f"{name}.jsonl") for name in ("forget", "retain", "holdout")}
    general = _jsonl_rows(data / "general.jsonl") if (data / "general.jsonl").is_file() else []
    sources = list(dict.fromkeys(row.get("source", "") for row in general))
    splits["general"] = [
        row
        for source in sources
        for row in subsample([r for r in general if r.get("source", "") == source], general_items, 0)
    ]
    meta = json.loads((data / "benchmark.json").read_text(encoding="utf-8"))
    meta = {k: v for k, v in meta.items() if k not in ("kind", "about")}
    return write_folder(splits, folder, {**meta, "general_items": general_items})


# ------------------------------------------------------------------------------------ time estimates


class Timings:
    """Seconds per step (``finetune``, ``unlearn:<method>``) and per evaluated item (``eval``), per
    thread count, as this machine measured them: the estimate printed before each long run."""

    def __init__(self, path: Path, threads: int) -> None:
        self.path, self.threads = path, str(threads)
        try:
            self.data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            self.data = {}

    def rate(self, kind: str) -> tuple[float, str] | None:
        mine = self.data.get(self.threads, {})
        if kind in mine:
            return mine[kind], kind
        if kind.startswith("unlearn:"):  # another method, else a fine-tune step (about half the work)
            others = [v for k, v in mine.items() if k.startswith("unlearn:")]
            if others:
                return sum(others) / len(others), "other methods' steps"
            if "finetune" in mine:
                return 2 * mine["finetune"], "2x a fine-tune step"
        return None

    def estimate(self, what: str, kind: str, units: float, unit: str) -> str:
        got = self.rate(kind)
        if got is None:
            line = (
                f"{what}: {units:.0f} {unit}s; no {unit} timed on this machine at {self.threads} threads yet"
            )
        else:
            sec, source = got
            line = (
                f"{what}: {units:.0f} {unit}s x {sec:.1f} s ({source}, measured here at {self.threads} "
                f"threads) = about {units * sec / 60:.1f} min"
            )
        print(line, flush=True)
        return line

    def record(self, kind: str, seconds: float, units: float) -> None:
        if units <= 0 or seconds <= 0:
            return
        self.data.setdefault(self.threads, {})[kind] = seconds / units
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(json.dumps(self.data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        tmp.replace(self.path)


# ------------------------------------------------------------------------------------ models and rows


def _done(folder: Path) -> dict | None:
    path = folder / "real_bench.json"
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except ValueError:
        return None


def _mark(folder: Path, record: dict) -> dict:
    tmp = folder / f"real_bench.json.tmp{os.getpid()}"
    tmp.write_text(json.dumps(record, indent=1, default=str) + "\n", encoding="utf-8")
    tmp.replace(folder / "real_bench.json")
    return record


def base_identity(base: str) -> dict:
    """What the base model is, for the cache keys: the converted GGUF's source sha256 (else its card and
    the sizes of its weights)."""
    card_path = Path(base) / "unlearnkit.json"
    card = json.loads(card_path.read_text(encoding="utf-8")) if card_path.is_file() else {}
    if card.get("source_sha256"):
        return {"source_sha256": card["source_sha256"]}
    weights = sorted((p.name, p.stat().st_size) for p in Path(base).glob("*.safetensors"))
    return {"card": card, "weights": weights}


def recorded(folder: str | Path, which: str) -> dict:
    """The ``train`` settings of the recipe a model folder's card records (``finetune_defaults`` /
    ``unlearn_defaults``); {} when it records none."""
    path = Path(folder) / "unlearnkit.json"
    card = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    got = card.get(which) if isinstance(card, dict) else None
    return dict(got.get("train", {})) if isinstance(got, dict) else {}


def finetune_steps(n_rows: int, train: Mapping[str, Any]) -> float:
    """Optimiser steps of a fine-tune on ``n_rows`` (finetune's defaults: batch 8, no accumulation)."""
    if int(train.get("max_steps", -1)) > 0:
        return int(train["max_steps"])
    batch = int(train.get("batch_size", 8)) * int(train.get("grad_accum", 1))
    return math.ceil(n_rows / batch) * float(train.get("epochs", 5))


def unlearn_steps(n_forget: int, train: Mapping[str, Any]) -> float:
    """Optimiser steps of an unlearning run on ``n_forget`` rows (the method defaults: batch 8 x 4)."""
    if int(train.get("max_steps", -1)) > 0:
        return int(train["max_steps"])
    batch = int(train.get("batch_size", 8)) * int(train.get("grad_accum", 4))
    return math.ceil(n_forget / batch) * float(train.get("epochs", 5))


def plan_estimate(args, base: str, methods: Sequence[str], timings: Timings, n_seeds: int) -> list[str]:
    """The whole run's time, before it starts, from this machine's recorded rates (no cache counted:
    what a run from nothing costs). One line per part and the total; unknown rates say so."""
    n_forget, n_retain = AUTHOR_ROWS * args.forget_authors, AUTHOR_ROWS * args.retain_authors
    recipe = parse_sets(args.ft_set, "--ft-set")
    ft = {**recorded(base, "finetune_defaults"), **recipe}
    ul_card = recorded(base, "unlearn_defaults")
    unlearn_set = parse_sets(args.unlearn_set, "--unlearn-set")
    general = sum(min(args.max_items, args.general_items, n) for n in (100, 117))  # real authors, world facts
    items = (
        min(args.max_items, n_forget)
        + min(args.max_items, n_retain)
        + min(args.max_items, AUTHOR_ROWS * args.holdout_authors)
        + general
    )
    parts = [
        (
            "fine-tunes",
            "finetune",
            finetune_steps(n_forget + n_retain, ft) + 2 * finetune_steps(n_retain, ft),
            "step",
        ),
        *(
            (
                f"{m}",
                f"unlearn:{m}",
                unlearn_steps(n_forget, {**ul_card, **METHOD_SETTINGS.get(m, {}), **unlearn_set}),
                "step",
            )
            for m in methods
        ),
        ("evaluations", "eval", items * (3 + len(methods)), "item"),
    ]
    lines, total, unknown = [], 0.0, []
    for what, kind, units, unit in parts:
        got = timings.rate(kind)
        if got is None:
            unknown.append(what)
            lines.append(f"  {what}: {units:.0f} {unit}s a seed, no rate timed here yet")
            continue
        total += units * got[0] * n_seeds
        lines.append(f"  {what}: {units:.0f} {unit}s a seed x {got[0]:.1f} s ({got[1]})")
    head = (
        f"estimate for {n_seeds} seed(s) from nothing cached, at {args.threads} threads: about "
        f"{total / 3600:.1f} h"
        + (f" plus what is not timed yet ({', '.join(unknown)})" if unknown else "")
        + " (learned checks and ASU's temperature search not counted)"
    )
    return [head, *lines]


def ensure_model(
    work: Path,
    base: str,
    data: Path,
    split: str,
    seed: int,
    recipe: Mapping[str, Any],
    args,
    timings: Timings,
) -> tuple[Path, dict]:
    """The base fine-tuned on ``split`` of ``data`` (``all``: the target; ``retain``: an oracle), kept in
    the cache under its content key; prints its ``learned`` line (also when it comes from the cache)."""
    from unlearnkit import finetune
    from unlearnkit.pipelines.embedded import code_digest, digest

    files = [data / f"{n}.jsonl" for n in (("forget", "retain") if split == "all" else ("retain",))]
    key = digest(
        "real-finetune",
        base_identity(base),
        split,
        seed,
        dict(recipe),
        args.check_items,
        code_digest(TRAIN_CODE),
        files=files,
    )
    folder = work / "models" / f"{'target' if split == 'all' else 'oracle'}-seed{seed}-{key}"
    label = f"{'target' if split == 'all' else 'oracle'} (training seed {seed})"
    done = _done(folder)
    if done is not None:
        print(f"{label}: from the cache ({folder}); {done.get('learned', 'no learned line')}", flush=True)
        return folder, done
    n_rows = sum(len(_jsonl_rows(f)) for f in files)
    steps = finetune_steps(n_rows, {**recorded(base, "finetune_defaults"), **recipe})
    if timings.rate("finetune") is None:  # nothing timed here yet: time the first steps, then estimate
        first = finetune(
            base,
            data=str(data),
            split=split,
            seed=seed,
            check_items=0,
            quiet=True,
            **{**recipe, "max_steps": 2},
        )
        timings.record("finetune", wall(first, 0.0), 2)
    timings.estimate(f"{label}: fine-tuning on {n_rows} rows", "finetune", steps, "step")
    start = time.perf_counter()
    result = finetune(base, data=str(data), split=split, seed=seed, check_items=args.check_items, **recipe)
    seconds = time.perf_counter() - start
    timings.record("finetune", wall(result, seconds), steps)  # the training alone
    shutil.rmtree(folder, ignore_errors=True)
    result.save(folder)
    learned = result.learned.line() if result.learned is not None else None
    print(f"{label}: {seconds / 60:.1f} min; {learned}", flush=True)
    return folder, _mark(
        folder,
        {
            "learned": learned,
            "learned_numbers": result.learned.as_dict() if result.learned is not None else None,
            "train_seconds": seconds,
            "steps": steps,
            "train_loss": result.train_loss,
            "settings": result.settings,
        },
    )


def measured(eval_folder: Path) -> Any:
    """An eval folder as the EvalResult ``original=`` takes (it reads an eval folder as a model folder)."""
    from unlearnkit import EvalResult

    return EvalResult(metrics=json.loads((eval_folder / "metrics.json").read_text(encoding="utf-8")))


def wall(result: Any, default: float) -> float:
    """The training's own seconds (``compute["wall_seconds"]``: no loading, saving or checking)."""
    got = (getattr(result, "compute", None) or {}).get("wall_seconds")
    return float(got) if isinstance(got, (int, float)) and got > 0 else default


def _jsonl_rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def eval_items(data: Path, max_items: int) -> int:
    """About how many questions an evaluation asks (each split and general part capped at ``max_items``)."""
    n = 0
    for name in ("forget", "retain", "holdout"):
        path = data / f"{name}.jsonl"
        if path.is_file():
            n += min(max_items, len(_jsonl_rows(path)))
    general = data / "general.jsonl"
    if general.is_file():
        counts: dict[str, int] = {}
        for row in _jsonl_rows(general):
            counts[row.get("source", "")] = counts.get(row.get("source", ""), 0) + 1
        n += sum(min(max_items, c) for c in counts.values())
    return n


def ensure_eval(
    work: Path,
    label: str,
    model: Path,
    data: Path,
    oracle: Path | None,
    original: Path | None,
    args,
    timings: Timings,
) -> tuple[Path, dict]:
    """The TOFU protocol's metrics of ``model`` on ``data`` (forget quality against ``oracle``'s eval),
    kept as an eval folder in the cache."""
    from unlearnkit import evaluate
    from unlearnkit.pipelines.embedded import code_digest, digest

    data = ensure_eval_data(data, args.general_items)
    settings = {"max_items": args.max_items, "max_new_tokens": args.max_new_tokens}
    key = digest(
        "real-eval",
        model.name,
        data.name,
        oracle.name if oracle else None,
        original.name if original else None,
        settings,
        code_digest(EVAL_CODE),
    )
    folder = work / "evals" / f"{model.name}-{key}"
    if (folder / "metrics.json").is_file():
        print(f"{label}: evaluation from the cache ({folder})", flush=True)
        return folder, {
            **json.loads((folder / "metrics.json").read_text(encoding="utf-8")),
            **fluency_of(folder),
        }
    items = eval_items(data, args.max_items)
    if timings.rate("eval") is None:  # nothing timed here yet: one item a split first, then estimate
        probe = time.perf_counter()
        evaluate(str(model), data=str(data), protocol="tofu", quiet=True, **{**settings, "max_items": 1})
        timings.record("eval", time.perf_counter() - probe, eval_items(data, 1))
    timings.estimate(f"{label}: evaluating", "eval", items, "item")
    start = time.perf_counter()
    result = evaluate(
        str(model),
        data=str(data),
        oracle=str(oracle) if oracle else None,
        original=measured(original) if original and oracle else None,
        protocol="tofu",
        **settings,
    )
    seconds = time.perf_counter() - start
    timings.record("eval", seconds, items)
    shutil.rmtree(folder, ignore_errors=True)
    result.save(folder)
    print(f"{label}: evaluated in {seconds / 60:.1f} min: {summary(result.metrics)}", flush=True)
    return folder, {**result.metrics, **fluency_of(folder)}


def fluency_of(eval_folder: Path) -> dict:
    """``forget_degenerate_share``: the share of the forget answers that are empty or degenerate
    (:func:`unlearnkit.metrics.fluency.degenerate_share`), read from the eval's generations: whether a
    row forgot by saying something else or by saying nothing (the answers are TOFU text: the project
    commits numbers about them, not them)."""
    from unlearnkit.metrics.fluency import degenerate_share

    try:
        details = json.loads((eval_folder / "details.json").read_text(encoding="utf-8"))
        share = degenerate_share(details["forget"]["generations"])
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    return {} if share is None else {"forget_degenerate_share": share}


def ensure_method(
    work: Path,
    target: Path,
    data: Path,
    method: str,
    seed: int,
    settings: Mapping[str, Any],
    timings: Timings,
) -> tuple[Path, dict]:
    """``method`` run on the target (the model's own recorded recipe, then ``settings``), kept in the cache."""
    from unlearnkit import unlearn
    from unlearnkit.pipelines.embedded import code_digest, digest

    files = [data / "forget.jsonl", data / "retain.jsonl"]
    key = digest(
        "real-unlearn", target.name, method, seed, dict(settings), code_digest(UNLEARN_CODE), files=files
    )
    folder = work / "methods" / f"{method}-seed{seed}-{key}"
    done = _done(folder)
    if done is not None:
        print(f"{method}: from the cache ({folder})", flush=True)
        return folder, done
    n_forget = len(_jsonl_rows(data / "forget.jsonl"))
    steps = unlearn_steps(n_forget, {**recorded(target, "unlearn_defaults"), **settings})
    timings.estimate(f"{method}: unlearning {n_forget} forget rows", f"unlearn:{method}", steps, "step")
    start = time.perf_counter()
    result = unlearn(str(target), forget=str(data), method=method, seed=seed, **dict(settings))
    seconds = time.perf_counter() - start
    timings.record(f"unlearn:{method}", wall(result, seconds), steps)
    shutil.rmtree(folder, ignore_errors=True)
    result.save(folder)
    print(f"{method}: unlearned in {seconds / 60:.1f} min", flush=True)
    config = getattr(result, "config", None)
    return folder, _mark(
        folder,
        {"train_seconds": seconds, "steps": steps, "settings": dict(settings), "config": _plain(config)},
    )


def _plain(value: Any) -> Any:
    try:
        return json.loads(json.dumps(vars(value) if hasattr(value, "__dict__") else value, default=str))
    except (TypeError, ValueError):
        return str(value)


def summary(metrics: Mapping[str, Any]) -> str:
    return ", ".join(
        f"{k} {metrics[k]:.3g}"
        for k in COLUMNS
        if isinstance(metrics.get(k), (int, float)) and k != "train_seconds"
    )


def parse_sets(items: Sequence[str], flag: str) -> dict[str, Any]:
    """``KEY=VALUE`` pairs (numbers as numbers)."""
    out: dict[str, Any] = {}
    for item in items:
        if "=" not in item:
            fail(f"{flag} {item}: expected KEY=VALUE")
        key, value = item.split("=", 1)
        try:
            out[key.strip()] = json.loads(value)
        except ValueError:
            out[key.strip()] = value
    return out


def run_seed(seed: int, args, work: Path, base: str, methods: list[str], timings: Timings) -> dict:
    """One seed's rows: target, oracle, the second oracle, then the methods (each with its metrics); a
    method that stops with a UserError is named in ``failed`` with its message."""
    from unlearnkit.errors import UserError

    sizes = {"forget": args.forget_authors, "retain": args.retain_authors, "holdout": args.holdout_authors}
    data, authors = ensure_data(work, tofu_dir(args.data_root), seed, sizes)
    print(f"seed {seed}: authors {authors} -> {data}", flush=True)
    recipe = parse_sets(args.ft_set, "--ft-set")
    target, t_rec = ensure_model(work, base, data, "all", seed, recipe, args, timings)
    oracle, o_rec = ensure_model(work, base, data, "retain", seed, recipe, args, timings)
    null, n_rec = ensure_model(work, base, data, "retain", seed + NULL_SEED_OFFSET, recipe, args, timings)
    oracle_eval, o_metrics = ensure_eval(work, f"seed {seed} oracle", oracle, data, None, None, args, timings)
    target_eval, t_metrics = ensure_eval(
        work, f"seed {seed} target", target, data, oracle_eval, None, args, timings
    )
    rows: dict[str, dict] = {
        "target": {**t_metrics, "train_seconds": t_rec.get("train_seconds")},
        "oracle": {**o_metrics, "train_seconds": o_rec.get("train_seconds")},
    }
    _, n_metrics = ensure_eval(
        work, f"seed {seed} {NULL_ORACLE}", null, data, oracle_eval, None, args, timings
    )
    rows[NULL_ORACLE] = {**n_metrics, "train_seconds": n_rec.get("train_seconds")}
    learned = {
        "target": t_rec.get("learned"),
        "oracle": o_rec.get("learned"),
        NULL_ORACLE: n_rec.get("learned"),
    }
    unlearn_set = parse_sets(args.unlearn_set, "--unlearn-set")
    failed: dict[str, str] = {}
    folders: dict[str, Path] = {}
    for method in methods:
        settings = {**METHOD_SETTINGS.get(method, {}), **unlearn_set}
        try:
            folder, rec = ensure_method(work, target, data, method, seed, settings, timings)
        except UserError as err:  # e.g. tau=auto finding no fluent teacher: said, and the rest go on
            print(f"seed {seed} {method}: not run: {err}", flush=True)
            failed[method] = str(err)
            continue
        _, metrics = ensure_eval(
            work, f"seed {seed} {method}", folder, data, oracle_eval, target_eval, args, timings
        )
        rows[method] = {**metrics, "train_seconds": rec.get("train_seconds")}
        folders[method] = folder
        if isinstance((rec.get("config") or {}), dict) and "tau" in str(rec.get("config")):
            tau = _find(rec.get("config"), "tau")
            if isinstance(tau, (int, float)):
                rows[method]["tau"] = tau
                rows[method].update(teacher_at(folder, tau))
    for row in rows.values():  # keep only numbers: the table's and the claims' input
        for k in [k for k, v in row.items() if not isinstance(v, (int, float)) or isinstance(v, bool)]:
            row.pop(k)
    audited = None
    if seed in args.audit_seeds:
        audited = audit_best(work, seed, rows, folders, data, target, oracle, args)
    return {"rows": rows, "authors": authors, "learned": learned, "failed": failed, "audit": audited}


def teacher_at(method_folder: Path, tau: float) -> dict:
    """The teacher's own forget numbers at the tau the student was distilled toward, from the searched
    record on the model card (``tau_search``): ``teacher_forget_rougeL_recall`` and
    ``teacher_forget_fact_score``. Beside the student's row they say whether a gap to the oracle is the
    teacher's (the temperature) or the student's (how far training moved it toward the teacher)."""
    try:
        card = json.loads((method_folder / "unlearnkit.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    search = _find(card, "tau_search")
    if not isinstance(search, dict):
        return {}
    for setting in search.get("settings") or []:
        forget = setting.get("forget") or {}
        if isinstance(setting.get("tau"), (int, float)) and abs(setting["tau"] - tau) < 1e-9:
            return {
                f"teacher_forget_{k}": forget[k]
                for k in ("rougeL_recall", "fact_score")
                if isinstance(forget.get(k), (int, float))
            }
    return {}


AUDIT_CODE = ("models.py", "data", "api/audit.py", "evaluation", "metrics", "train")


CLOSED_ENOUGH = 0.5  # the audit's fallback: rows that closed at least half the target's way to the oracle


def best_row(rows: Mapping[str, Mapping[str, Any]], methods: Sequence[str]) -> tuple[str | None, str]:
    """The row the report would call best (:func:`unlearnkit.report.choice.choose_best`: closest to the
    oracle on the forget side among the methods keeping 90 % of its utility and answering in language);
    when none is, the eligible row keeping the most utility among those that closed at least half the
    target's forget-side distance to the oracle (else the closest): a row that kept its utility by
    forgetting nothing (the target unchanged) tells an audit nothing. With the sentence saying why."""
    from unlearnkit.report.choice import choose_best

    gibberish = {r: v["forget_degenerate_share"] for r, v in rows.items() if "forget_degenerate_share" in v}
    choice = choose_best(rows, candidates=[m for m in methods if m in rows], gibberish=gibberish)
    if choice.row:
        return choice.row, f"the report's best row: {choice.reason}"
    eligible = [st for st in choice.standings.values() if not st.excluded and st.closed is not None]
    moved = [st for st in eligible if st.closed >= CLOSED_ENOUGH]
    if moved:
        pick = max(moved, key=lambda st: (st.utility or 0.0, st.closed))
        how = (
            f"the one keeping the most utility ({pick.utility:.3f}) among the rows answering in language that "
            f"closed at least {CLOSED_ENOUGH:.0%} of the target's forget-side distance to the oracle "
            f"({pick.closed:.0%})"
        )
    elif eligible:
        pick = max(eligible, key=lambda st: st.closed)
        how = f"the row answering in language closest to the oracle ({pick.closed:.0%} of the way)"
    else:
        return choice.fallback, f"no row is called best ({choice.reason}); audited: {choice.fallback}"
    return pick.row, f"no row is called best ({choice.reason}); audited: {how}"


def audit_best(
    work: Path,
    seed: int,
    rows: Mapping[str, Mapping[str, Any]],
    folders: Mapping[str, Path],
    data: Path,
    target: Path,
    oracle: Path,
    args,
) -> dict | None:
    """``unlearnkit audit`` of the seed's best row against the oracle and the target, kept in the cache;
    its verdict lines (numbers, no TOFU text) for real.md."""
    from unlearnkit import audit
    from unlearnkit.pipelines.embedded import code_digest, digest

    row, why = best_row(rows, list(folders))
    if row is None:
        return None
    settings = {"max_items": args.audit_items, "max_new_tokens": args.max_new_tokens}
    key = digest(
        "real-audit",
        folders[row].name,
        data.name,
        target.name,
        oracle.name,
        settings,
        code_digest(AUDIT_CODE),
    )
    folder = work / "audits" / f"{row}-seed{seed}-{key}"
    report_path = folder / "audit.json"
    if report_path.is_file():
        print(f"seed {seed} audit of {row}: from the cache ({folder})", flush=True)
        report = json.loads(report_path.read_text(encoding="utf-8"))
    else:
        print(f"seed {seed} audit of {row} ({why})", flush=True)
        start = time.perf_counter()
        result = audit(
            str(folders[row]),
            data=str(data),
            oracle=str(oracle),
            original=str(target),
            method=row,
            **settings,
        )
        shutil.rmtree(folder, ignore_errors=True)
        result.save(folder)
        report = result.report
        print(f"seed {seed} audit of {row}: {(time.perf_counter() - start) / 60:.1f} min", flush=True)
    return {"seed": seed, "row": row, "why": why, "verdicts": list(report.get("verdicts", []))}


def _find(tree: Any, key: str) -> Any:
    if isinstance(tree, dict):
        if key in tree:
            return tree[key]
        for value in tree.values():
            got = _find(value, key)
            if got is not None:
                return got
    return None


# ------------------------------------------------------------------------------------ checks and claims


def _vals(per_seed: Mapping[Any, Mapping[str, Mapping[str, Any]]], row: str, key: str) -> list[float]:
    return [
        float(res[row][key])
        for res in per_seed.values()
        if row in res and isinstance(res[row].get(key), (int, float)) and not math.isnan(float(res[row][key]))
    ]


def _span(xs: Sequence[float], fmt: str = ".3f") -> str:
    if not xs:
        return "not measured"
    mean, sd = mean_sd(list(xs))
    return f"{mean:{fmt}} \u00b1 {sd:{fmt}} (min {min(xs):{fmt}}, max {max(xs):{fmt}})"


def _every(flags: Sequence[bool]) -> str:
    """holds (every seed) / fails (no seed) / tie (some seeds), with the count."""
    if not flags:
        return "not measured"
    k, n = sum(flags), len(flags)
    return "holds" if k == n else "fails" if k == 0 else f"tie ({k} of {n} seeds)"


def lab_checks(per_seed: Mapping[Any, Mapping[str, Mapping[str, Any]]]) -> list[dict]:
    """Issue 58 item 3: the lab tells knowing from not knowing on every seed."""
    out = []
    seeds = [s for s, res in per_seed.items() if "target" in res and "oracle" in res]

    def seedwise(test: Callable[[Mapping[str, Mapping[str, Any]]], bool | None]) -> list[bool]:
        got = [test(per_seed[s]) for s in seeds]
        return [bool(g) for g in got if g is not None]

    def get(res, row, key):
        v = res.get(row, {}).get(key)
        return float(v) if isinstance(v, (int, float)) else None

    t_rouge, o_rouge = (
        _vals(per_seed, "target", "forget_rougeL_recall"),
        _vals(per_seed, "oracle", "forget_rougeL_recall"),
    )
    fq, null = _vals(per_seed, "target", "forget_quality"), _vals(per_seed, NULL_ORACLE, "forget_quality")
    specs = [
        (
            "The target states its forget authors: forget ROUGE-L >= 0.8",
            seedwise(
                lambda r: (
                    None
                    if get(r, "target", "forget_rougeL_recall") is None
                    else get(r, "target", "forget_rougeL_recall") >= 0.8
                )
            ),
            f"target {_span(t_rouge)}",
        ),
        (
            "The oracle's forget ROUGE-L is at least 0.3 below the target's",
            seedwise(
                lambda r: (
                    None
                    if get(r, "oracle", "forget_rougeL_recall") is None
                    or get(r, "target", "forget_rougeL_recall") is None
                    else get(r, "target", "forget_rougeL_recall") - get(r, "oracle", "forget_rougeL_recall")
                    >= 0.3
                )
            ),
            f"oracle {_span(o_rouge)} (TOFU's Phi-1.5 pair: 0.925 vs 0.428)",
        ),
        (
            "The target's forget quality against the oracle is <= 1e-2",
            seedwise(
                lambda r: (
                    None
                    if get(r, "target", "forget_quality") is None
                    else get(r, "target", "forget_quality") <= 1e-2
                )
            ),
            f"target {_span(fq, '.2g')}",
        ),
        (
            f"The second oracle (training seed + {NULL_SEED_OFFSET}) scores forget quality >= 0.05",
            seedwise(
                lambda r: (
                    None
                    if get(r, NULL_ORACLE, "forget_quality") is None
                    else get(r, NULL_ORACLE, "forget_quality") >= 0.05
                )
            ),
            f"{_span(null, '.2g')}",
        ),
    ]
    for text, flags, numbers in specs:
        out.append({"check": text, "verdict": _every(flags), "numbers": numbers, "seeds": len(flags)})
    return out


def _ratio_rows(per_seed, row: str, key: str, of: str) -> list[float]:
    out = []
    for res in per_seed.values():
        a, b = res.get(row, {}).get(key), res.get(of, {}).get(key)
        if isinstance(a, (int, float)) and isinstance(b, (int, float)) and b:
            out.append(float(a) / float(b))
    return out


def with_derived(per_seed: Mapping[Any, Mapping[str, Mapping[str, Any]]]) -> dict:
    """Every row's numbers plus those the claims compare: ``forget_rouge_gap`` (distance of its forget
    ROUGE-L from the oracle's), ``utility_share`` (its model utility / the oracle's),
    ``entropy_share`` (its forget token entropy / the target's), ``log10_forget_quality``."""
    out: dict = {}
    for seed, res in per_seed.items():
        o, t = res.get("oracle", {}), res.get("target", {})
        rows = {}
        for name, m in res.items():
            d = dict(m)
            if isinstance(m.get("forget_rougeL_recall"), (int, float)) and isinstance(
                o.get("forget_rougeL_recall"), (int, float)
            ):
                d["forget_rouge_gap"] = abs(
                    float(m["forget_rougeL_recall"]) - float(o["forget_rougeL_recall"])
                )
            if isinstance(m.get("model_utility"), (int, float)) and o.get("model_utility"):
                d["utility_share"] = float(m["model_utility"]) / float(o["model_utility"])
            if isinstance(m.get("forget_token_entropy"), (int, float)) and t.get("forget_token_entropy"):
                d["entropy_share"] = float(m["forget_token_entropy"]) / float(t["forget_token_entropy"])
            fq = m.get("forget_quality")
            if isinstance(fq, (int, float)):
                d["log10_forget_quality"] = math.log10(max(float(fq), 1e-300))
            rows[name] = d
        out[seed] = rows
    return out


def _compare(per_seed, a: str, b: str, criteria: Sequence[tuple[str, int]], need_all: bool) -> dict:
    """``a`` against ``b`` on ``criteria`` ((column, +1 higher is better / -1 lower is better)), each by
    :func:`_common.paired` (a reading only when the mean difference exceeds its sd and has one sign on
    every seed). ``need_all``: holds when better on every criterion, else when better on one and worse
    on none; fails when worse on one and better on none; tie otherwise."""
    parts, better, worse = [], 0, 0
    for column, sign in criteria:
        d = paired(per_seed, a, b, column)
        if d is None:
            parts.append(f"{column}: not measured")
            continue
        good = {1: "higher", -1: "lower"}[sign]
        bad = {1: "lower", -1: "higher"}[sign]
        better += d["reading"] == good
        worse += d["reading"] == bad
        parts.append(
            f"{column} {d['mean']:+.3g} \u00b1 {d['sd']:.2g} ({d['higher_on']}/{d['seeds']} seeds higher: {d['reading']})"
        )
    measured = sum(not p.endswith("not measured") for p in parts)
    if not measured:
        verdict = "not measured"
    elif (better == len(criteria)) if need_all else (better and not worse):
        verdict = "holds"
    elif worse and not better:
        verdict = "fails"
    else:
        verdict = "tie"
    return {"verdict": verdict, "numbers": "; ".join(parts)}


def claims(per_seed: Mapping[Any, Mapping[str, Mapping[str, Any]]], asu: str = "asu") -> list[dict]:
    """Issue 58 item 5's claims, each with its verdict (holds / tie / fails) and the seeds' numbers."""
    rows = with_derived(per_seed)
    out = []
    seeds = [s for s, r in rows.items() if asu in r and "oracle" in r and "target" in r]
    if seeds:
        gap = [rows[s][asu].get("forget_rouge_gap") for s in seeds]
        share = [rows[s][asu].get("utility_share") for s in seeds]
        ent = [rows[s][asu].get("entropy_share") for s in seeds]
        flags = [
            None if None in (g, u, e) else (g <= ROUGE_WITHIN and u >= UTILITY_SHARE and e >= ENTROPY_SHARE)
            for g, u, e in zip(gap, share, ent)
        ]
        out.append(
            {
                "claim": f"ASU forgets toward the oracle while staying fluent and useful (forget ROUGE-L within "
                f"{ROUGE_WITHIN} of the oracle's, utility >= {UTILITY_SHARE}x the oracle's, forget token entropy >= "
                f"{ENTROPY_SHARE}x the target's, on each seed)",
                "verdict": _every([f for f in flags if f is not None]),
                "numbers": f"|ROUGE-L - oracle's| {_span([g for g in gap if g is not None])}; utility share "
                f"{_span([u for u in share if u is not None])}; entropy share {_span([e for e in ent if e is not None])}",
            }
        )
    there = [("forget_rouge_gap", -1), ("utility_share", 1), ("entropy_share", 1)]
    for b in BASELINES_ASU_BEATS:
        if any(asu in r and b in r for r in rows.values()):
            got = _compare(rows, asu, b, there, need_all=False)
            out.append(
                {
                    "claim": f"ASU beats {b.upper()} there (closer to the oracle's forget ROUGE-L, utility, fluency)",
                    **got,
                }
            )
    for t in ("t-npo", "s-npo"):
        if any(t in r and "npo" in r for r in rows.values()):
            got = _compare(rows, t, "npo", [("log10_forget_quality", 1), ("model_utility", 1)], need_all=True)
            out.append(
                {
                    "claim": f"{t.upper()} beats NPO on forget (forget quality) and on retain (model utility)",
                    **got,
                }
            )
    return out


# ------------------------------------------------------------------------------------ the report


def _teacher_note(res: Mapping[str, Mapping[str, Any]], row: str) -> str:
    """The teacher's forget numbers at that tau beside the student's and the oracle's."""
    got = res[row]
    if "teacher_forget_rougeL_recall" not in got:
        return ""
    oracle = res.get("oracle", {}).get("forget_rougeL_recall")
    fact = got.get("teacher_forget_fact_score")
    return (
        f"; the teacher's own forget ROUGE-L there {got['teacher_forget_rougeL_recall']:.3f}"
        + (f" (fact score {fact:.3f})" if isinstance(fact, (int, float)) else "")
        + f", the student's {got.get('forget_rougeL_recall', float('nan')):.3f}"
        + (f", the oracle's {oracle:.3f}" if isinstance(oracle, (int, float)) else "")
    )


def audit_lines(audits: Sequence[Mapping[str, Any]]) -> list[str]:
    """The audit of each audited seed's best row: which row and why, then the audit's verdict lines."""
    out: list[str] = []
    for a in audits:
        out += [
            f"The audit of seed {a['seed']}'s {a['row']} (`unlearnkit audit` against the oracle and the target; "
            f"{a['why']}):",
            "",
            *(f"- {line}" for line in a["verdicts"]),
            "",
        ]
    return out


def render(per_seed: Mapping[Any, Mapping[str, Mapping[str, Any]]], meta: Mapping[str, Any]) -> str:
    seeds = list(per_seed)
    lines = [
        "## A real model: SmolLM2-135M-Instruct on real TOFU authors",
        "",
        f"Each seed: {meta['sizes']['forget']} forget / {meta['sizes']['retain']} retain / "
        f"{meta['sizes']['holdout']} holdout TOFU authors ({AUTHOR_ROWS} QA each; forget among forget10's, retain "
        "among retain_perturbed's, holdout never trained), TOFU's real authors and world facts as general. "
        f"The target is {meta['model']} fine-tuned on forget + retain, the oracle on retain, `{NULL_ORACLE}` the "
        f"oracle's recipe at training seed + {NULL_SEED_OFFSET}. Fine-tuning recipe: {json.dumps(meta['recipe'])} "
        f"(over the converted model's recorded one); methods: the model's recorded unlearning recipe"
        f"{' with ' + json.dumps(meta['unlearn_set']) if meta['unlearn_set'] else ''}, ASU and ASU-KL at tau=auto, "
        "RMU as Adaptive RMU (steering_scale 5). "
        "Evaluation: "
        f"TOFU protocol on at most {meta['max_items']} items a split (every forget, retain and holdout row "
        f"at the default sizes) and {meta.get('general_items', meta['max_items'])} of TOFU's real authors and "
        f"of its world facts, {meta['max_new_tokens']} new tokens; forget quality against the oracle. Each cell: mean \u00b1 sd over seeds "
        f"{', '.join(map(str, seeds))}; every seed's rows are in real.json.",
        "",
        seed_table(per_seed, list(COLUMNS)),
        "",
        "The 9 model-utility numbers:",
        "",
        seed_table(per_seed, list(UTILITY)),
        "",
        "Every seed:",
        "",
        every_seed(per_seed, ["target", "oracle", NULL_ORACLE], ["forget_quality", "forget_rougeL_recall"]),
        "",
        "What each seed's models learned (the `learned` line of each fine-tune):",
        "",
        *(
            f"- seed {s} {row}: {line}"
            for s, got in meta.get("learned", {}).items()
            for row, line in got.items()
        ),
        "",
        *(
            f"- seed {s} {row}: tau {res[row]['tau']:g} (searched: tau=auto)" + _teacher_note(res, row)
            for s, res in per_seed.items()
            for row in res
            if isinstance(res[row].get("tau"), (int, float)) and row in METHOD_SETTINGS
        ),
        *(f"- {what}: not run ({why})" for what, why in meta.get("failed", {}).items()),
        "",
        "The lab's checks (computed from the rows above):",
        "",
        *(f"- {c['check']}: **{c['verdict']}** ({c['numbers']})." for c in lab_checks(per_seed)),
        "",
        "The claims (computed from the rows above):",
        "",
        *(
            [
                f"**{len(seeds)} seed{'s' if len(seeds) > 1 else ''} only** (the lab is meant for 3): a "
                "verdict below reads the direction of each difference on these seeds, not a difference "
                "known to exceed the seeds' spread.",
                "",
            ]
            if len(seeds) < 3
            else []
        ),
        *(f"- {c['claim']}: **{c['verdict']}** ({c['numbers']})." for c in claims(per_seed)),
        "",
        *audit_lines(meta.get("audits") or []),
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument(
        "--seeds", default="0,1,2", help="comma-separated seeds (each its own authors and training seed)"
    )
    p.add_argument("--methods", default=DEFAULT_METHODS)
    p.add_argument(
        "--model", default=MODEL, help="the base: smollm2-135m-instruct, a .gguf file or a model folder"
    )
    p.add_argument(
        "--forget-authors",
        type=int,
        default=2,
        help="2: 40 forget items, where forget quality can reach 1e-2",
    )
    p.add_argument("--retain-authors", type=int, default=2)
    p.add_argument("--holdout-authors", type=int, default=2)
    p.add_argument(
        "--ft-set",
        action="append",
        default=None,
        metavar="KEY=VALUE",
        help="fine-tuning setting (default anchor_decay=0.001: keeps what the base knew, as the target "
        "trains on more rows than the oracle)",
    )
    p.add_argument(
        "--ft-epochs",
        type=float,
        default=10.0,
        help="shorthand for --ft-set epochs=N (10: the target states its 60 trained answers, ROUGE-L 1.00)",
    )
    p.add_argument(
        "--unlearn-set", action="append", default=[], metavar="KEY=VALUE", help="every method's setting"
    )
    p.add_argument("--check-items", type=int, default=40, help="questions the learned line asks")
    p.add_argument(
        "--max-items",
        type=int,
        default=40,
        help="evaluation items per split (40: every forget, retain and holdout row of 2 authors each; TOFU's "
        "forget quality is a test over the whole forget set, and 20 of 40 items leave it too little power)",
    )
    p.add_argument(
        "--general-items",
        type=int,
        default=20,
        help="items evaluated of TOFU's real authors and of its world facts (a fixed sample of each)",
    )
    p.add_argument(
        "--audit-items",
        type=int,
        default=20,
        help="items a split the audit asks (its relearning attack trains on half the forget items)",
    )
    p.add_argument(
        "--max-new-tokens",
        type=int,
        default=80,
        help="generated tokens an answer (nearly every TOFU answer fits in SmolLM2's tokens; rows stop at EOS)",
    )
    p.add_argument(
        "--data-root", default=None, help="TOFU's parent (default $UNLEARNKIT_DATA_ROOT or ../shared/data)"
    )
    p.add_argument(
        "--cache-dir", default=None, help="default $UNLEARNKIT_CACHE or ~/.cache/unlearnkit (then real/)"
    )
    p.add_argument("--threads", type=int, default=2)
    p.add_argument(
        "--audit-seeds",
        default="0",
        help="comma-separated seeds whose best row is audited (`unlearnkit audit`); none for no audit",
    )
    p.add_argument("--estimate", action="store_true", help="print the run's time estimate and stop")
    p.add_argument("--output-dir", default=None, help="write real.md/real.json here instead of bench/results")
    args = p.parse_args(argv)
    try:
        seeds = [int(x) for x in args.seeds.split(",") if x.strip()]
    except ValueError:
        fail(f"--seeds {args.seeds}: expected comma-separated integers")
    if not seeds:
        fail("--seeds: give at least one seed")
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    try:
        args.audit_seeds = (
            [] if args.audit_seeds == "none" else [int(x) for x in args.audit_seeds.split(",") if x.strip()]
        )
    except ValueError:
        fail(f"--audit-seeds {args.audit_seeds}: expected comma-separated integers or none")
    if args.ft_set is None:
        args.ft_set = list(DEFAULT_FT_SET)
    if args.ft_epochs is not None:
        args.ft_set = [*args.ft_set, f"epochs={args.ft_epochs}"]
    for name, value in (
        ("--max-items", args.max_items),
        ("--general-items", args.general_items),
        ("--audit-items", args.audit_items),
        ("--threads", args.threads),
        ("--max-new-tokens", args.max_new_tokens),
    ):
        if value < 1:
            fail(f"{name} {value}: must be >= 1")
    if args.check_items < 0:
        fail(f"--check-items {args.check_items}: must be >= 0 (0 skips the learned line)")
    # every cheap check before anything heavy: the sizes, the settings' form, the data
    choose_authors(seeds[0], args.forget_authors, args.retain_authors, args.holdout_authors)
    from unlearnkit.api.finetune import check_settings
    from unlearnkit.errors import UserError

    try:
        check_settings(parse_sets(args.ft_set, "--ft-set"), 0)
    except UserError as err:
        fail(f"--ft-set: {err}")
    parse_sets(args.unlearn_set, "--unlearn-set")
    tofu_dir(args.data_root)
    import torch

    from unlearnkit.gguf_models import resolve
    from unlearnkit.pipelines.embedded import cache_root

    known = set(_registered())
    bad = [m for m in methods if m not in known]
    if bad:
        fail(f"--methods: unknown {', '.join(bad)} (see `unlearnkit methods`)")
    torch.set_num_threads(args.threads)
    work = cache_root(args.cache_dir) / "real"
    base = resolve(args.model, log=print)
    timings = Timings(work / "timings.json", args.threads)
    print("\n".join(plan_estimate(args, base, methods, timings, len(seeds))), flush=True)
    if args.estimate:
        return
    per_seed, learned, authors, failed, audits = {}, {}, {}, {}, []
    for seed in seeds:
        got = run_seed(seed, args, work, base, methods, timings)
        if got["audit"]:
            audits.append(got["audit"])
        per_seed[seed], learned[seed], authors[seed] = got["rows"], got["learned"], got["authors"]
        failed.update({f"seed {seed} {m}": why for m, why in got["failed"].items()})
    meta = {
        "model": args.model,
        "sizes": {
            "forget": args.forget_authors,
            "retain": args.retain_authors,
            "holdout": args.holdout_authors,
        },
        "recipe": parse_sets(args.ft_set, "--ft-set"),
        "unlearn_set": parse_sets(args.unlearn_set, "--unlearn-set"),
        "max_items": args.max_items,
        "general_items": args.general_items,
        "audit_items": args.audit_items,
        "max_new_tokens": args.max_new_tokens,
        "learned": learned,
        "failed": failed,
        "audits": audits,
    }
    settings = {
        **{k: v for k, v in meta.items() if k not in ("learned", "failed", "audits")},
        "seeds": seeds,
        "audit_seeds": args.audit_seeds,
        "methods": methods,
        "authors": {str(s): a for s, a in authors.items()},
        "base_model": base_identity(base),
        "check_items": args.check_items,
    }
    if args.output_dir:
        _common.RESULTS = Path(args.output_dir)
    data = {
        "tofu": {str(s): rows for s, rows in per_seed.items()},
    }  # quality.json's format; the learned lines, checks and claims are in real.md (the claims from these rows)
    write_result(
        "real", render(per_seed, meta), data, reproduce(argv if argv is not None else sys.argv[1:]), settings
    )


def _registered() -> list[str]:
    from unlearnkit import catalog

    return list(catalog.METHODS)


def reproduce(argv: Sequence[str]) -> str:
    kept, skip = [], False
    for a in argv:
        if skip:
            skip = False
            continue
        if a in ("--output-dir", "--cache-dir", "--data-root"):
            skip = True
            continue
        if a.startswith(("--output-dir=", "--cache-dir=", "--data-root=")):
            continue
        kept.append(a)
    return " ".join(["python bench/real.py", *kept])


if __name__ == "__main__":
    main()

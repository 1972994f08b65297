"""Step time and peak memory of the unlearning methods relative to plain fine-tuning, in ONE run.

    python bench/speed.py                      # tiny Llama (hidden 256, 4 layers) on CPU, ~3 min
    python bench/speed.py --model-config llama-1b --batch-size 8 --steps 20    # random 1B on a GPU
    python bench/speed.py --model-config my_config.json                        # any LlamaConfig json

Every configuration runs in a fresh subprocess on the same model folder and the same data:
``max_steps`` optimiser steps of ``unlearn()`` (or of plain fine-tuning), the step time is the median
over the steps after the first two (warm-up), measured with a Trainer callback around each optimiser
step (forward + backward + optimiser, reference passes included). With ``--repeats N`` (default 2)
the configurations run round-robin N times and the fastest median counts (shared machines are noisy;
the minimum is the least disturbed estimate); memory is the median over the repeats.

Peak memory, measured honestly per device:
* CUDA: ``torch.cuda.max_memory_allocated()`` over the run (weights, reference / cache on the GPU,
  gradients, optimiser state, activations); the cache itself lives in host memory.
* CPU: torch's CPU allocations are invisible to tracemalloc, so we use the process's resident-set
  high-water mark: the peak is reset (``/proc/self/clear_refs``) after imports and data preparation,
  and ``VmHWM - VmRSS(baseline)`` is what loading the model(s), the reference / cache and training
  added. At the start of training every configuration returns freed heap memory to the OS
  (``malloc_trim``), so that memory the one-off setup (cache build, attribution) freed is not counted
  as if it were live. It still includes allocator slack and library buffers: differences of a few
  percent are noise.

The reference-cache build and the T-NPO attribution pass are one-off costs before training and are
reported separately (seconds), not folded into the step time.

A plain fine-tuning step sees the same number of sequences as an unlearning step (forget batch +
retain batch = 2 x batch_size). Results: a markdown table on stdout and in ``bench/results/speed.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

# name -> (kind, method, overrides); kind: finetune | unlearn
CONFIGS = {
    "finetune": ("finetune", None, {}),
    "finetune+lora": ("finetune", None, {"lora_r": 8}),
    "ga": ("unlearn", "ga", {}),
    "gd (ga + retain nll)": ("unlearn", "gd", {}),
    "npo / copy": ("unlearn", "npo", {"reference": "copy"}),
    "npo / cache": ("unlearn", "npo", {"reference": "cache"}),
    "npo / adapter+lora": ("unlearn", "npo", {"reference": "adapter", "lora_r": 8}),
    "asu / copy": ("unlearn", "asu", {"reference": "copy"}),
    "asu / cache": ("unlearn", "asu", {"reference": "cache"}),
    "asu / adapter+lora": ("unlearn", "asu", {"reference": "adapter", "lora_r": 8}),
    "t-npo / cache": ("unlearn", "t-npo", {"reference": "cache", "tagger": "heuristic"}),
    "eval": ("eval", None, {}),
}

MODEL_CONFIGS = {
    # Llama-3.2-1B's shape with random weights (for GPUs; ~1.2 B parameters, vocab 128k).
    "llama-1b": dict(
        hidden_size=2048,
        intermediate_size=8192,
        num_hidden_layers=16,
        num_attention_heads=32,
        num_key_value_heads=8,
        vocab_size=128256,
        tie_word_embeddings=True,
        max_position_embeddings=2048,
    ),
}


# --- worker (one configuration, fresh process) ----------------------------------------------------


def _status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/self/status")


def _reset_peak_rss() -> bool:
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def _trim() -> None:
    """Return freed heap memory to the OS (glibc keeps it otherwise and RSS would count it)."""
    import ctypes
    import gc

    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def worker(spec: dict) -> dict:
    import torch
    from transformers import TrainerCallback

    from unlearnkit.data import load_benchmark
    from unlearnkit.models import load

    torch.set_num_threads(spec["threads"])
    cuda = torch.cuda.is_available() and not spec["cpu"]
    kind, method, overrides = CONFIGS[spec["name"]]
    bench = load_benchmark(spec["data"], eval_fields=kind == "eval")
    common = dict(
        batch_size=spec["batch_size"],
        grad_accum=1,
        max_steps=spec["steps"],
        lr=1e-5,
        warmup_epochs=0,
        max_length=spec["max_length"],
        precision=spec["precision"],
    )
    times: list[float] = []

    class StepTimer(TrainerCallback):
        def on_train_begin(self, args, state, control, **kw):
            out["setup_peak_mib"] = round((_status_kib("VmHWM") - base_rss) / 1024, 1)
            _trim()  # same for every configuration: freed setup memory goes back before training

        def on_step_begin(self, args, state, control, **kw):
            if cuda:
                torch.cuda.synchronize()
            self.t0 = time.perf_counter()

        def on_step_end(self, args, state, control, **kw):
            if cuda:
                torch.cuda.synchronize()
            times.append(time.perf_counter() - self.t0)

    # Everything a configuration may import is imported first, so that no configuration pays for it.
    import peft  # noqa: F401

    import unlearnkit.evaluation.evaluate  # noqa: F401
    import unlearnkit.pipelines.unlearn  # noqa: F401
    import unlearnkit.train.finetune  # noqa: F401

    # Measure what the run adds on top of the imported libraries and the prepared data.
    exact_peak = _reset_peak_rss()
    base_rss = _status_kib("VmRSS")
    model, tok = load(spec["model"], dtype=getattr(torch, spec.get("dtype", "float32")))
    if cuda:
        torch.cuda.reset_peak_memory_stats()
        model.to("cuda")
    out: dict = {"name": spec["name"]}
    import transformers

    original_init = transformers.Trainer.__init__

    def patched_init(self, *a, **kw):  # add the timer to whatever Trainer the run builds
        original_init(self, *a, **kw)
        self.add_callback(StepTimer())

    transformers.Trainer.__init__ = patched_init
    t_start = time.perf_counter()
    if kind == "finetune":
        from unlearnkit.config import TrainConfig
        from unlearnkit.train.finetune import finetune

        cfg = TrainConfig(**{**common, "batch_size": 2 * spec["batch_size"]})
        if overrides.get("lora_r"):
            from unlearnkit.pipelines.unlearn import apply_lora

            model = apply_lora(model, TrainConfig(**{**common, **overrides}))
        finetune(model, tok, bench.forget + bench.retain, cfg, spec["work"], quiet=True)
    elif kind == "unlearn":
        import unlearnkit.train.tokenweights as tw
        from unlearnkit.pipelines.unlearn import unlearn

        attach = tw.attach_token_weights

        def timed_attach(*a, **kw):
            t0 = time.perf_counter()
            try:
                return attach(*a, **kw)
            finally:
                out["attribution_s"] = round(time.perf_counter() - t0, 3)

        tw.attach_token_weights = timed_attach
        res = unlearn(
            model,
            tok,
            bench.forget,
            bench.retain,
            method,
            work_dir=spec["work"],
            quiet=True,
            **{**common, **overrides},
        )
        out["reference"] = res.reference
    else:
        from unlearnkit.evaluation.evaluate import EvalSettings, evaluate

        settings = EvalSettings(max_new_tokens=32, max_items=spec["eval_items"], progress=False)
        evaluate(model, tok, bench, settings)
        n_items = sum(
            min(len(bench.split(s)), spec["eval_items"]) for s in ("forget", "retain", "holdout", "general")
        )
        out["eval_items"] = n_items
    out["wall_s"] = round(time.perf_counter() - t_start, 3)
    if cuda:
        out["peak_mib"] = round(torch.cuda.max_memory_allocated() / 2**20, 1)
        out["memory"] = "cuda max_memory_allocated"
    else:
        out["peak_mib"] = round((_status_kib("VmHWM") - base_rss) / 1024, 1)
        out["memory"] = "RSS high-water mark above baseline" + ("" if exact_peak else " (peak not reset)")
    if times:
        steady = times[2:] if len(times) > 3 else times
        out["step_s"] = statistics.median(steady)
        out["steps_timed"] = len(steady)
    return out


# --- driver ----------------------------------------------------------------------------------------


def _build(root: Path, args) -> tuple[Path, Path]:
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    from unlearnkit.data import load_benchmark
    from unlearnkit.models import save_model
    from unlearnkit.world import write_world
    from unlearnkit.world.tiny import corpus_of, train_tokenizer

    data = root / "world"
    write_world(data, n_authors=args.authors, facts_per_author=10, forget_fraction=0.2, n_general=50, seed=0)
    bench = load_benchmark(data)
    tok = train_tokenizer(corpus_of(bench.forget + bench.retain + bench.holdout + bench.general))
    if args.model_config in MODEL_CONFIGS:
        shape = dict(MODEL_CONFIGS[args.model_config])
    elif args.model_config.endswith(".json"):
        shape = json.loads(Path(args.model_config).read_text())
    else:
        shape = dict(
            hidden_size=args.hidden,
            intermediate_size=4 * args.hidden,
            num_hidden_layers=args.layers,
            num_attention_heads=4,
            num_key_value_heads=4,
            tie_word_embeddings=True,
            max_position_embeddings=256,
        )
    shape["vocab_size"] = max(shape.get("vocab_size", 0), len(tok))
    cfg = LlamaConfig(
        **shape, pad_token_id=tok.pad_token_id, bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id
    )
    torch.manual_seed(0)
    model = LlamaForCausalLM(cfg)
    n_params = sum(p.numel() for p in model.parameters())
    save_model(model, tok, root / "model", {"kind": "random model for bench/speed.py"})
    return data, root / "model", n_params, len(bench.forget), len(tok)


def _ratio(x, base) -> str:
    return f"{x / base:.2f}x" if x and base else "-"


def _table(results: dict, meta: dict) -> str:
    ft, ft_lora, ga, gd = (
        results.get(k, {}) for k in ("finetune", "finetune+lora", "ga", "gd (ga + retain nll)")
    )
    lines = [
        "## Speed and memory (python bench/speed.py)",
        "",
        f"{meta['desc']}. Step = one optimiser step (median of steps 3..{meta['steps']}); "
        f"unlearning steps see {meta['batch_size']} forget + {meta['batch_size']} retain sequences, "
        f"fine-tuning steps {2 * meta['batch_size']} sequences. Memory: {meta['memory']}.",
        "",
        "| configuration | step (ms) | vs fine-tune step | vs GA step | vs GD step | peak memory (MiB) "
        "| vs fine-tune | vs fine-tune+LoRA | one-off before training |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, r in results.items():
        if name == "eval":
            continue
        step = r.get("step_s")
        extra = []
        ref = r.get("reference") or {}
        if ref.get("strategy") == "cache":
            extra.append(f"cache {ref.get('cache_seconds', 0):.2f} s, {ref.get('cache_mib', 0):.1f} MiB")
        if "attribution_s" in r:
            extra.append(f"attribution {r['attribution_s']:.2f} s")
        lines.append(
            f"| {name} | {step * 1e3:.1f} | {_ratio(step, ft.get('step_s'))} | {_ratio(step, ga.get('step_s'))} "
            f"| {_ratio(step, gd.get('step_s'))} | {r['peak_mib']:.0f} | {_ratio(r['peak_mib'], ft.get('peak_mib'))} "
            f"| {_ratio(r['peak_mib'], ft_lora.get('peak_mib'))} | {'; '.join(extra) or '-'} |"
            if step
            else f"| {name} | failed | | | | | | | {r.get('error', '')[:80]} |"
        )
    ev = results.get("eval")
    if ev and "eval_items" in ev:
        lines += [
            "",
            f"Evaluation (TOFU protocol, 32 new tokens, {ev['eval_items']} items over 4 splits): "
            f"{ev['wall_s']:.1f} s = {ev['eval_items'] / ev['wall_s']:.1f} items/s.",
        ]
    lines += ["", "Targets:"]
    for label, names, base_name, limit, key in [
        (
            "ASU step <= 1.15x GA step (cache / adapter)",
            ("asu / cache", "asu / adapter+lora"),
            "ga",
            1.15,
            "step_s",
        ),
        (
            "ASU step <= 1.15x GD step (GA with the same retain term)",
            ("asu / cache", "asu / adapter+lora"),
            "gd (ga + retain nll)",
            1.15,
            "step_s",
        ),
        (
            "NPO/ASU peak memory <= 1.1x fine-tuning (cache / adapter)",
            ("npo / cache", "asu / cache", "npo / adapter+lora", "asu / adapter+lora"),
            "finetune",
            1.1,
            "peak_mib",
        ),
    ]:
        base = results.get(base_name, {}).get(key)
        parts = []
        for n in names:
            v = results.get(n, {}).get(key)
            if v and base:
                parts.append(f"{n} {v / base:.2f}x {'met' if v / base <= limit else 'NOT met'}")
        lines.append(f"- {label}: " + ("; ".join(parts) or "not measured"))
    lines += ["", f"Machine: {meta['machine']}. Timings on shared CPUs are noisy (+-20 %)."]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model-config", default="tiny", help="tiny | llama-1b | a LlamaConfig .json")
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--authors", type=int, default=40, help="world size (10 facts each, 20 %% forget)")
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--steps", type=int, default=12)
    p.add_argument("--repeats", type=int, default=2, help="round-robin repeats; the fastest counts")
    p.add_argument("--max-length", type=int, default=128)
    p.add_argument("--eval-items", type=int, default=40)
    p.add_argument("--precision", default="auto")
    p.add_argument("--dtype", default="float32", help="weights dtype (bfloat16 with --precision bf16-true)")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--cpu", action="store_true", help="stay on the CPU even with a GPU")
    p.add_argument("--only", default=None, help="comma-separated configuration names")
    p.add_argument("--output", default=str(HERE / "results" / "speed.md"))
    p.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        print("RESULT " + json.dumps(worker(json.loads(args.worker))))
        return 0

    import torch

    names = [n.strip() for n in args.only.split(",")] if args.only else list(CONFIGS)
    results: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="uk-speed-") as tmp:
        root = Path(tmp)
        data, model_dir, n_params, n_forget, vocab = _build(root, args)
        runs: dict[str, list[dict]] = {name: [] for name in names}
        for _ in range(max(1, args.repeats)):
            for name in names:
                spec = dict(
                    name=name,
                    data=str(data),
                    model=str(model_dir),
                    work=str(root / "work" / name.replace(" ", "_").replace("/", "_")),
                    batch_size=args.batch_size,
                    steps=args.steps,
                    max_length=args.max_length,
                    precision=args.precision,
                    dtype=args.dtype,
                    threads=args.threads,
                    cpu=args.cpu,
                    eval_items=args.eval_items,
                )
                env = dict(os.environ, OMP_NUM_THREADS=str(args.threads), TOKENIZERS_PARALLELISM="false")
                proc = subprocess.run(
                    [sys.executable, __file__, "--worker", json.dumps(spec)],
                    capture_output=True,
                    text=True,
                    env=env,
                )
                line = next((x for x in proc.stdout.splitlines() if x.startswith("RESULT ")), None)
                r = json.loads(line[7:]) if line else {"name": name, "error": proc.stderr.strip()[-300:]}
                runs[name].append(r)
                step = r.get("step_s", r.get("wall_s", float("nan")))
                print(
                    f"{name:24s} {step * 1e3:9.1f} ms  peak {r.get('peak_mib', 0):8.1f} MiB", file=sys.stderr
                )
        for name, rs in runs.items():
            ok = [r for r in rs if "peak_mib" in r]
            if not ok:
                results[name] = {**rs[-1], "peak_mib": 0}
                continue
            key = "step_s" if "step_s" in ok[0] else "wall_s"
            best = dict(min(ok, key=lambda r: r[key]))
            best["peak_mib"] = statistics.median(r["peak_mib"] for r in ok)
            best["repeats"] = [r.get(key) for r in ok]
            results[name] = best
    cuda = torch.cuda.is_available() and not args.cpu
    device = torch.cuda.get_device_name(0) if cuda else f"CPU ({args.threads} thread(s))"
    meta = dict(
        desc=(
            f"Random Llama '{args.model_config}' ({n_params / 1e6:.1f} M parameters, vocab {vocab}) on {device}, "
            f"{n_forget} forget examples, {args.steps} steps, batch {args.batch_size}, "
            f"best of {args.repeats} round-robin repeats"
        ),
        steps=args.steps,
        batch_size=args.batch_size,
        memory=next((r["memory"] for r in results.values() if "memory" in r), "-"),
        machine=f"{platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__}",
    )
    from _common import describe, provenance  # bench/ is on sys.path when run as a script

    settings = {k: v for k, v in vars(args).items() if k not in ("worker", "output")}
    table = _table(results, meta)
    head, _, rest = table.partition("\n")  # the provenance line goes under the section's title
    table = f"{head}\n\n_Produced by `python bench/speed.py` ({describe(settings)})._\n{rest}"
    print(table)
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(table, encoding="utf-8")
    (Path(args.output).with_suffix(".json")).write_text(
        json.dumps({**results, "provenance": provenance(settings)}, indent=2) + "\n", encoding="utf-8"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

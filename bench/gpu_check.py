"""Every command on a CUDA GPU, in one run: the check for the day a GPU is at hand.

    python bench/gpu_check.py                 # Llama-3.2-1B-shaped random model (bf16), ~10-20 min
    python bench/gpu_check.py --layers 4      # the same widths, 4 layers (a smaller GPU, a quick look)

Without CUDA it prints one line saying it skipped and exits 0; it is never part of the CPU test suite.

What it runs, on a random model with Llama-3.2-1B's real config (hidden 2048, 16 layers, 32 / 8 heads,
vocab 128256, saved with ``dtype: bfloat16`` as Meta's checkpoint is, so ``--dtype auto`` gives
bfloat16 and ``precision`` bf16-true) and TOFU-shaped local files (``unlearnkit world``: forget /
retain / holdout / general with paraphrased and perturbed answers):

* ``finetune`` (the target), ``finetune --split retain`` (the oracle);
* ``unlearn`` asu, npo with reference copy / cache / adapter + LoRA, t-npo (cache), rmu; npo in mixed
  precision (``--dtype float32``, bf16 autocast) with gradient checkpointing;
* ``eval`` (tofu protocol, against the oracle) -- in this process, asserting that the evaluated
  model's weights are on the GPU -- then ``audit``, ``attribute``, ``distill``, a 2-trial ``sweep``;
* ``torchrun --nproc_per_node 2 ... unlearn`` when two GPUs are visible.

Each command runs through ``unlearnkit.cli.main`` in this process (the same code as the console
script), so its peak GPU memory is ``torch.cuda.max_memory_allocated()`` reset before it; step times
come from the Trainer's own ``train_runtime`` / steps in the output's ``log_history.json``, and
evaluation items/s from the items scored and generated over the command's wall time. A command that
fails is recorded with its error and the rest still run; the exit code is 1 when any failed.
Results: ``bench/results/gpu.json`` and ``gpu.md`` (BENCHMARKS.md's "gpu" section).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from speed import MODEL_CONFIGS  # noqa: E402  (bench/ is on the path)

# Llama-3.2-1B's config.json (meta-llama/Llama-3.2-1B): speed.py's shape plus its RoPE base.
LLAMA_1B = {**MODEL_CONFIGS["llama-1b"], "rope_theta": 500000.0}
STEPS = ["--set", "max_steps=4", "--set", "batch_size=4", "--set", "grad_accum=1", "--no-collapse-guard"]
UNLEARN_RUNS = {
    "asu / copy": ("asu", ["--set", "reference=copy"]),
    "asu / cache": ("asu", ["--set", "reference=cache"]),
    "asu / adapter+lora": ("asu", ["--set", "reference=adapter", "--set", "lora_r=8"]),
    "npo / copy": ("npo", ["--set", "reference=copy"]),
    "npo / cache": ("npo", ["--set", "reference=cache"]),
    "npo / adapter+lora": ("npo", ["--set", "reference=adapter", "--set", "lora_r=8"]),
    "t-npo / cache": ("t-npo", ["--set", "reference=cache", "--set", "tagger=heuristic"]),
    "rmu": ("rmu", []),  # its layer 7 (layers 5-7 trained); with --layers < 8: the last ones, see main
    "npo / copy, mixed bf16 + checkpointing": (
        "npo",
        ["--set", "reference=copy", "--dtype", "float32", "--set", "gradient_checkpointing=true"],
    ),
}


def build(root: Path, layers: int, tiny: bool = False) -> tuple[Path, Path, int]:
    """The TOFU-shaped world and the 1B-shaped random model (bf16 safetensors), in ``root``."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    from unlearnkit.data import load_benchmark
    from unlearnkit.models import save_model
    from unlearnkit.world import write_world
    from unlearnkit.world.tiny import corpus_of, train_tokenizer

    world = root / "world"
    write_world(world, n_authors=20, facts_per_author=10, forget_fraction=0.1, n_general=40, seed=0)
    bench = load_benchmark(world)
    tok = train_tokenizer(corpus_of(bench.forget + bench.retain + bench.holdout + bench.general))
    shape = {**LLAMA_1B, "num_hidden_layers": layers}
    if tiny:  # --cpu-dry-run: the script's own logic, on a model this CPU runs in seconds
        shape.update(hidden_size=64, intermediate_size=128, num_attention_heads=4, num_key_value_heads=2)
        shape.update(vocab_size=len(tok), num_hidden_layers=min(layers, 8))
    cfg = LlamaConfig(
        **shape, pad_token_id=tok.pad_token_id, bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id
    )
    torch.manual_seed(0)
    model = LlamaForCausalLM(cfg).to(torch.bfloat16)  # saved as bf16, as Llama checkpoints are
    n_params = sum(p.numel() for p in model.parameters())
    save_model(model, tok, root / "base", {"kind": "random Llama-3.2-1B-shaped model for bench/gpu_check.py"})
    del model
    return world, root / "base", n_params


class GpuWatch:
    """Wraps ``unlearnkit.evaluation.evaluate.evaluate`` (what ``eval`` calls) to assert the model it is
    given is on the GPU, and counts the items evaluated."""

    def __init__(self, expected: str = "cuda") -> None:
        self.expected = expected
        self.devices: list[str] = []
        self.items = 0

    def install(self):
        import unlearnkit.commands.eval as eval_command  # noqa: F401 - imported for its module below
        import unlearnkit.evaluation.evaluate as E

        stock = E.evaluate

        def watched(model, tokenizer, bench, settings, *args, **kwargs):
            device = next(model.parameters()).device
            self.devices.append(str(device))
            assert device.type == self.expected, f"eval ran the model on {device}, not on {self.expected}"
            self.items += sum(len(bench.split(n)) for n in ("forget", "retain", "holdout", "general"))
            return stock(model, tokenizer, bench, settings, *args, **kwargs)

        E.evaluate = watched
        return stock


def step_seconds(output: Path) -> float | None:
    """Seconds per optimiser step from the Trainer's own summary in ``log_history.json``."""
    try:
        history = json.loads((output / "log_history.json").read_text())
    except (OSError, ValueError):
        return None
    for entry in reversed(history):
        if "train_runtime" in entry and entry.get("step"):
            return float(entry["train_runtime"]) / float(entry["step"])
    return None


def run_command(
    name: str, argv: list[str], results: dict, output: Path | None = None, items=None, ok_codes=(0,)
) -> bool:
    """One command through the CLI in this process: exit code, wall time, peak GPU memory, step time."""
    import torch

    from unlearnkit.cli import main

    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    start = time.perf_counter()
    try:
        code = main(argv)
        error = None if code in ok_codes else f"exit code {code}"
    except BaseException as err:  # noqa: BLE001 - recorded, the other commands still run
        code, error = 1, "".join(traceback.format_exception_only(type(err), err)).strip()
    wall = time.perf_counter() - start
    row = {
        "command": "unlearnkit " + " ".join(argv),
        "ok": error is None,
        "exit_code": code,
        "wall_seconds": round(wall, 2),
    }
    if torch.cuda.is_available():
        row["peak_gpu_gib"] = round(torch.cuda.max_memory_allocated() / 2**30, 3)
    if error:
        row["error"] = error
    if output is not None and code == 0:
        row["step_seconds"] = step_seconds(output)
        try:
            row["placement"] = json.loads((output / "unlearnkit.json").read_text()).get("placement")
        except (OSError, ValueError):
            pass
    if items is not None:
        row["items_per_second"] = round(items() / wall, 2) if wall else None
    results[name] = row
    print(f"{'ok  ' if error is None else 'FAIL'} {name}: {row}", flush=True)
    return error is None


def torchrun(root: Path, world: Path, base: Path, results: dict) -> None:
    out = root / "ddp"
    cmd = ["torchrun", "--nproc_per_node", "2", "-m", "unlearnkit.cli", "unlearn", "--model", str(base)]
    cmd += ["--data", str(world), "--method", "npo", "--output", str(out), *STEPS]
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    results["torchrun 2 GPUs: unlearn npo"] = {
        "command": " ".join(cmd),
        "ok": proc.returncode == 0,
        "wall_seconds": round(time.perf_counter() - start, 2),
        "step_seconds": step_seconds(out),
        **({} if proc.returncode == 0 else {"error": proc.stderr.strip().splitlines()[-1:]}),
    }


def markdown(results: dict, meta: dict) -> str:
    lines = [
        "## GPU check: every command on CUDA",
        "",
        f"{meta['gpu']} ({meta['gpus']} visible), a random Llama-3.2-1B-shaped model ({meta['layers']} layers, "
        f"{meta['params'] / 1e9:.2f} B parameters, bf16 checkpoint), TOFU-shaped local files; 4 optimiser "
        "steps of batch 4 per training run. Peak = torch.cuda.max_memory_allocated() during the command.",
        "",
        "| run | ok | step s | eval items/s | peak GiB | wall s |",
        "|---|---|---|---|---|---|",
    ]
    for name, row in results.items():
        step = f"{row['step_seconds']:.3f}" if row.get("step_seconds") else "-"
        ips = f"{row['items_per_second']:.1f}" if row.get("items_per_second") else "-"
        peak = f"{row['peak_gpu_gib']:.2f}" if "peak_gpu_gib" in row else "-"
        ok = "yes" if row["ok"] else f"**no**: {row.get('error', '')}"
        lines.append(f"| {name} | {ok} | {step} | {ips} | {peak} | {row['wall_seconds']:.1f} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--layers", type=int, default=16, help="decoder layers (default: Llama-3.2-1B's 16)")
    p.add_argument("--keep", default=None, help="keep the work folder here (default: a temporary one)")
    p.add_argument("--no-write", action="store_true", help="do not write bench/results/gpu.*")
    p.add_argument(
        "--cpu-dry-run",
        action="store_true",
        help="check this script itself on the CPU: a tiny model of the same depth, --device cpu, nothing written",
    )
    args = p.parse_args(argv)
    import torch

    if args.cpu_dry_run:
        args.no_write = True
        os.environ["CUDA_VISIBLE_DEVICES"] = ""
        torch.set_num_threads(2)
    elif not torch.cuda.is_available():
        print("bench/gpu_check.py: skipped: no CUDA GPU is visible (torch.cuda.is_available() is False)")
        return 0
    from unlearnkit.commands._common import quiet_libraries

    quiet_libraries()
    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="unlearnkit-gpu-check-"))
    root.mkdir(parents=True, exist_ok=True)
    world, base, n_params = build(root, args.layers, tiny=args.cpu_dry_run)
    results: dict = {}
    w, b = str(world), str(base)
    run_command("finetune (target)", ["finetune", "--model", b, "--data", w, "--output", str(root / "target"),
                "--overwrite", *STEPS[:6]], results, root / "target")  # fmt: skip
    run_command("finetune (oracle)", ["finetune", "--model", b, "--data", w, "--output", str(root / "oracle"),
                "--split", "retain", "--overwrite", *STEPS[:6]], results, root / "oracle")  # fmt: skip
    target = str(root / "target") if (root / "target" / "config.json").is_file() else b
    oracle = root / "oracle" if (root / "oracle" / "config.json").is_file() else None
    for name, (method, extra) in UNLEARN_RUNS.items():
        if method == "rmu" and args.layers < 8:  # RMU's default layer 7 does not exist
            last = args.layers - 1
            extra = ["--set", f"layer={last}", "--set", f"train_layers={max(0, last - 2)},{last}"]
        out = root / name.replace(" ", "").replace("/", "_").replace(",", "_").replace("+", "_")
        argv_ = ["unlearn", "--model", target, "--data", w, "--method", method, "--output", str(out)]
        run_command(f"unlearn {name}", [*argv_, "--overwrite", *STEPS, *extra], results, out)
    unlearned = root / "asu_copy"
    model = str(unlearned) if (unlearned / "config.json").is_file() else target
    watch = GpuWatch("cpu" if args.cpu_dry_run else "cuda")
    stock = watch.install()
    eval_argv = ["eval", "--model", model, "--data", w, "--output", str(root / "eval"), "--overwrite"]
    eval_argv += ["--max-items", "20", "--max-new-tokens", "32"]
    eval_argv += ["--retain-model", str(oracle)] if oracle else []
    run_command("eval (tofu)", eval_argv, results, items=lambda: watch.items)
    import unlearnkit.evaluation.evaluate as E

    E.evaluate = stock
    results["eval (tofu)"]["model_devices"] = sorted(set(watch.devices))
    if results["eval (tofu)"]["ok"] and not watch.devices:
        results["eval (tofu)"].update(ok=False, error="evaluate() was never called on a model")
    audit = ["audit", "--model", model, "--data", w, "--output", str(root / "audit"), "--overwrite"]
    audit += ["--relearn-steps", "2", "--quant-bits", "8,4", "--max-items", "20", "--max-new-tokens", "32"]
    run_command("audit", audit + (["--retain-model", str(oracle)] if oracle else []), results)
    run_command("attribute", ["attribute", "--model", target, "--data", w, "--output", str(root / "attr"),
                "--overwrite", "--set", "tagger=heuristic"], results)  # fmt: skip
    run_command("distill (UNDO)", ["distill", "--teacher", model, "--data", w, "--output", str(root / "undo"),
                "--noise", "0.5", "--overwrite", *STEPS[:6]], results, root / "undo")  # fmt: skip
    space = root / "space.yaml"
    space.write_text(
        "params:\n  lr: {low: 1.0e-5, high: 1.0e-4, log: true}\nfixed:\n  max_steps: 2\n  batch_size: 4\n"
    )
    shutil.rmtree(root / "sweep", ignore_errors=True)
    run_command("sweep (2 trials)", ["sweep", "--model", target, "--data", w, "--method", "npo", "--output",
                str(root / "sweep"), "--trials", "2", "--space", str(space), "--max-items", "10",
                "--max-new-tokens", "16"], results, ok_codes=(0, 4))  # fmt: skip
    # exit 4: the sweep ran and refused to choose (a random model: nothing moved beyond noise)
    if torch.cuda.device_count() >= 2 and shutil.which("torchrun"):
        torchrun(root, world, Path(target), results)
    meta = {
        "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else "CPU (dry run)",
        "gpus": torch.cuda.device_count(),
        "layers": args.layers,
        "params": n_params,
        "torch": torch.__version__,
    }
    if not args.no_write:
        from _common import write_result

        write_result("gpu", markdown(results, meta), {"meta": meta, "runs": results}, "python bench/gpu_check.py",
                     settings={"layers": args.layers, "steps": 4, "batch_size": 4})  # fmt: skip
    else:
        print(markdown(results, meta))
    if not args.keep:
        shutil.rmtree(root, ignore_errors=True)
    failed = [name for name, row in results.items() if not row["ok"]]
    if failed:
        print(f"bench/gpu_check.py: {len(failed)} failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    print(f"bench/gpu_check.py: all {len(results)} runs passed on {meta['gpu']}")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    sys.exit(main())

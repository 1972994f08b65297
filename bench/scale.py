"""Peak GPU memory at 1B / 3B / 8B, predicted per configuration, and measured at Llama-3.2-1B's shape.

    python bench/scale.py                         # the accounting table (docs/SCALING.md), instant
    python bench/scale.py --measure --layers 4    # measure: 1B widths, 4 layers, on this CPU (slow)
    python bench/scale.py --measure               # the real 16 layers (a GPU, or a CPU with >= 48 GB)
    python bench/scale.py --measure --precisions bf16-true   # pure bf16 only (the accounting: ~14 GB at
                                                             # 16 layers; slow on a CPU without bf16 units)

The accounting (:func:`predict`) counts what a training step holds, per parameter P, for the full
model (LoRA: the frozen base plus the adapters), with AdamW:

* weights: 2 B/param in bf16 (``--dtype bfloat16``, ``precision bf16-true``), 4 in fp32 (mixed bf16);
* gradients: the weights' dtype (2 or 4 B/param); mixed precision also keeps bf16 copies of the
  weights for the autocast forward (2 B/param, counted);
* optimiser: two states per trained parameter, in the parameter's dtype with torch's AdamW (2 x 2 B in
  bf16-true, 2 x 4 B in mixed) or 2 x 4 B with bitsandbytes' ``paged_adamw_32bit`` (open-unlearning);
* reference: ``copy`` holds a frozen second set of weights in the policy's dtype; ``cache`` holds
  none on the GPU (the outputs live in host memory; one batch's slice is on the GPU); ``adapter``
  (LoRA) is the base with adapters off: nothing extra;
* activations (no checkpointing): Korthikanti et al. (arXiv 2205.05198) with flash / SDPA attention,
  34 x s x h bytes per sequence per layer in 16-bit; with checkpointing the layer inputs (2 x s x h)
  plus one layer's full activations;
* the output head: each sequence's logits, s x V, in bf16 (2 B) plus the float32 log-softmax the
  losses use (4 B) and its gradient (4 B); a reference / teacher pass adds its logits (2 + 4 B,
  no gradient) for the sequences it scores.

A step of GD / NPO / ASU sees a forget and a retain batch (2 x ``batch`` sequences); plain
fine-tuning is counted at the same 2 x ``batch`` sequences, as bench/speed.py measures it. In one
process the forget part's gradient is taken before the retain pass runs
(``unlearnkit.train.trainer.TrainStepContext.settle_forget``), so an unlearning step holds the
activations and logits of one side (``batch`` sequences) at a time, plus one more gradient buffer of a
tied, trained embedding; the trainer does so only where the side frees more than that buffer (as
counted here); under DDP / FSDP / DeepSpeed
(memory per GPU), as in open-unlearning's trainer, the step keeps one backward over both sides
(``both_sides``). What is not
counted: CUDA context (~0.5 GB), allocator fragmentation (typically 5-10 %), temporary buffers of
kernels. Predictions are therefore floors; the 1B measurement (``--measure``) says how far off they are.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
GB = 1e9

# Their config.json files (meta-llama/Llama-3.2-1B, Llama-3.2-3B, Llama-3.1-8B).
SHAPES = {
    "1B": dict(params=1.236e9, hidden=2048, layers=16, vocab=128256, lm_head_tied=True),
    "3B": dict(params=3.213e9, hidden=3072, layers=28, vocab=128256, lm_head_tied=True),
    "8B": dict(params=8.030e9, hidden=4096, layers=32, vocab=128256, lm_head_tied=False),
}
LORA_FRACTION = 0.006  # rank-8 adapters on every linear layer of a Llama: ~0.6 % of the parameters


@dataclass(frozen=True)
class Run:
    """One configuration: ``method`` ft | gd | npo | asu; ``reference`` none | copy | cache | adapter."""

    method: str
    reference: str = "none"
    precision: str = "bf16-true"  # bf16-true | bf16 (mixed, float32 master weights)
    optim: str = "adamw_torch"  # adamw_torch | paged_adamw_32bit
    lora: bool = False
    checkpointing: bool = False
    batch: int = 4  # sequences per part (forget, retain)
    seq: int = 512
    both_sides: bool = False  # one backward over forget + retain (DDP / FSDP / DeepSpeed, open-unlearning)


def predict(shape: dict, run: Run) -> dict[str, float]:
    """Bytes of each part of a training step's peak (see the module docstring), and their total."""
    P, h, L, V = shape["params"], shape["hidden"], shape["layers"], shape["vocab"]
    w = 2 if run.precision == "bf16-true" else 4
    trained = P * LORA_FRACTION if run.lora else P
    frozen_w = 2 if run.lora else w  # LoRA: the base is frozen in bf16 (or fp32 with mixed)
    parts = {"weights": P * (frozen_w if run.lora else w) + (trained * 4 if run.lora else 0)}
    parts["gradients"] = trained * (4 if run.lora else w)
    if run.precision != "bf16-true" and not run.lora:
        parts["autocast copies"] = P * 2
    state = 4 if run.optim == "paged_adamw_32bit" or run.lora else w
    parts["optimiser"] = trained * 2 * state
    parts["reference"] = P * w if run.reference == "copy" else 0.0
    per_layer = 34 * run.seq * h

    def activations(n_seq: int) -> float:
        if run.checkpointing:
            return n_seq * (L * 2 * run.seq * h + per_layer)
        return n_seq * L * per_layer

    def logits(n_seq: int) -> float:
        return n_seq * run.seq * V * (2 + 4 + 4)

    # An unlearning step in one process backpropagates its forget part before the retain pass (one side's
    # activations and logits at a time) when that frees more than it costs: a tied, trained embedding
    # keeps its first gradient in .grad while the second pass's is summed apart (one embedding more).
    tied = V * h * w if shape.get("lm_head_tied") and not run.lora else 0  # LoRA: the embedding is frozen
    split = run.method != "ft" and not run.both_sides and activations(run.batch) + logits(run.batch) > tied
    n_seq = run.batch if split else 2 * run.batch
    parts["activations"] = activations(n_seq)
    scored = {"ft": 0, "gd": 0, "npo": run.batch, "asu": run.batch}[run.method]  # reference passes
    if run.reference == "cache":
        scored = 0  # outputs read from host memory
    parts["logits"] = logits(n_seq) + scored * run.seq * V * (2 + 4)
    if split and tied:
        parts["tied gradient buffer"] = tied
    parts["total"] = sum(parts.values())
    return parts


CONFIGS = {
    "fine-tune (bf16-true)": Run("ft"),
    "GD": Run("gd"),
    "NPO / copy": Run("npo", "copy"),
    "NPO / cache": Run("npo", "cache"),
    "NPO / adapter + LoRA": Run("npo", "adapter", lora=True),
    "ASU / copy": Run("asu", "copy"),
    "ASU / cache": Run("asu", "cache"),
    "ASU / adapter + LoRA": Run("asu", "adapter", lora=True),
    "ASU / cache, several GPUs (DDP: one backward; per GPU)": Run("asu", "cache", both_sides=True),
    # unlearnkit before --dtype and before the early forget backward
    "ASU / copy, mixed bf16 (float32 weights: unlearnkit before `--dtype`)": Run(
        "asu", "copy", precision="bf16", both_sides=True
    ),
    "NPO / copy, open-unlearning (bf16 weights, paged_adamw_32bit)": Run(
        "npo", "copy", optim="paged_adamw_32bit", both_sides=True
    ),
}


def table(batch: int = 4, seq: int = 512) -> str:
    lines = [
        f"Predicted peak GPU memory (GB) per training step, AdamW, {batch} forget + {batch} retain sequences "
        f"of {seq} tokens, no checkpointing; `ok` = fits with 10 % headroom (80 GB: H100/A100-80, 141 GB: H200).",
        "",
        "| configuration | 1B | 3B | 8B | 8B on 80 GB | 8B on 141 GB | x fine-tune (1B) |",
        "|---|---|---|---|---|---|---|",
    ]
    ft = {size: predict(SHAPES[size], Run("ft", batch=batch, seq=seq))["total"] for size in SHAPES}
    for name, run in CONFIGS.items():
        run = Run(**{**run.__dict__, "batch": batch, "seq": seq})
        totals = {size: predict(shape, run)["total"] for size, shape in SHAPES.items()}
        fits = ["ok" if totals["8B"] * 1.1 <= cap * GB else "no" for cap in (80, 141)]
        cells = " | ".join(f"{totals[s] / GB:.1f}" for s in SHAPES)
        lines.append(f"| {name} | {cells} | {fits[0]} | {fits[1]} | {totals['1B'] / ft['1B']:.2f}x |")
    return "\n".join(lines) + "\n"


def breakdown(size: str = "8B", name: str = "ASU / copy", batch: int = 4, seq: int = 512) -> str:
    run = Run(**{**CONFIGS[name].__dict__, "batch": batch, "seq": seq})
    parts = predict(SHAPES[size], run)
    return f"{size} {name}: " + ", ".join(f"{k} {v / GB:.1f} GB" for k, v in parts.items())


PRECISIONS = {"bf16-true": "bfloat16", "bf16": "float32"}  # precision: the weights' dtype it loads


def precisions(text: str) -> list[str]:
    """``--precisions``: a comma-separated subset of :data:`PRECISIONS`, in the order given."""
    chosen = [p.strip() for p in text.split(",") if p.strip()]
    unknown = [p for p in chosen if p not in PRECISIONS]
    if unknown or not chosen:
        raise argparse.ArgumentTypeError(
            f"{text!r}: give one or more of {', '.join(PRECISIONS)}, comma-separated"
        )
    return chosen


def measure(args) -> int:
    """bench/speed.py at Llama-3.2-1B's widths (``--layers`` of them), for each of ``--precisions``
    (pure bf16, then mixed, by default): each writes its own bench/results/scale-<precision>.md."""
    shape = dict(
        hidden_size=2048,
        intermediate_size=8192,
        num_hidden_layers=args.layers,
        num_attention_heads=32,
        num_key_value_heads=8,
        vocab_size=128256,
        tie_word_embeddings=True,
        max_position_embeddings=2048,
    )
    if args.layers < 16:
        print(
            f"bench/scale.py: Llama-3.2-1B's widths with {args.layers} of its 16 layers (memory of this machine)"
        )
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "llama-1b.json"
        config.write_text(json.dumps(shape))
        for precision in args.precisions:
            dtype = PRECISIONS[precision]
            out = HERE / "results" / f"scale-{precision}.md"
            cmd = [
                sys.executable,
                str(HERE / "speed.py"),
                "--model-config",
                str(config),
                "--precision",
                precision,
            ]
            cmd += [
                "--dtype",
                dtype,
                "--steps",
                str(args.steps),
                "--repeats",
                "1",
                "--batch-size",
                str(args.batch),
            ]
            cmd += ["--max-length", str(args.seq), "--eval-items", "20", "--threads", str(args.threads)]
            # the collapse guard's cost is bench/speed.py's own question (on the lab), not the scale's
            cmd += ["--output", str(out), "--only", args.only, "--guard-methods", "none"]
            print("running", " ".join(cmd), flush=True)
            code = subprocess.call(cmd)
            if code:
                return code
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--measure", action="store_true", help="run bench/speed.py at the 1B shape")
    p.add_argument("--layers", type=int, default=16)
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--seq", type=int, default=512, help="sequence length (prediction; --measure: max length)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument(
        "--precisions",
        type=precisions,
        default=list(PRECISIONS),
        help="with --measure: bf16-true (pure bf16), bf16 (mixed, float32 weights) or both (default)",
    )
    p.add_argument(
        "--only",
        default="finetune,gd (ga + retain nll),npo / copy,npo / cache,npo / adapter+lora,asu / copy,asu / cache,"
        "asu / adapter+lora,eval",
    )
    args = p.parse_args(argv)
    print(table(args.batch, args.seq))
    print(breakdown("8B", "ASU / copy", args.batch, args.seq))
    print(
        breakdown("8B", "NPO / copy, open-unlearning (bf16 weights, paged_adamw_32bit)", args.batch, args.seq)
    )
    return measure(args) if args.measure else 0


if __name__ == "__main__":
    sys.exit(main())

"""Step time and peak memory of the unlearning methods relative to plain fine-tuning, in ONE run.

    python bench/speed.py                      # tiny Llama (hidden 256, 4 layers) on CPU + the guard on the lab, ~12 min (+5 to train the lab once)
    python bench/speed.py --model-config llama-1b --batch-size 8 --steps 20    # random 1B on a GPU
    python bench/speed.py --model-config my_config.json                        # any LlamaConfig json
    python bench/speed.py --model smollm2-135m-instruct --guard-methods none \
        --output bench/results/speed_smollm2.md                                # a real 135M model on CPU

Every configuration runs in a fresh subprocess on the same model folder and the same data:
``max_steps`` optimiser steps of ``unlearn()`` (or of plain fine-tuning), the step time is the median
over the steps after the first two (warm-up), measured with a Trainer callback around each optimiser
step (forward + backward + optimiser, reference passes included). With ``--repeats N`` (default 3)
the configurations run round-robin N times and the fastest median counts (shared machines are noisy;
the minimum is the least disturbed estimate); memory is the median over the repeats (3 by default:
the RSS high-water mark of one configuration moved by 5-10 MiB between runs, about 0.05x of
fine-tuning's, and with 2 repeats the median is their mean, so one disturbed run moved the 1.1x goal
line: NPO / cache read 1.061x, 1.077x and 1.105x in three runs of the same code).

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

The collapse guard (``unlearnkit.train.collapse_guard``, on by default in ``unlearn``) probes inside
Trainer step callbacks, i.e. inside the timed steps: the measured unlearning steps run with
``collapse_guard=off``, and the guard is measured on its own, twice: ``guard probe`` times one probe on
this model (the probe rows ``unlearnkit unlearn`` asks), and ``--guard-methods`` runs the quickstart's
methods on the quickstart's lab (its cached TOFU-like target, each method's quickstart recipe, the
probe rows of ``unlearnkit unlearn``) with the default guard and without it, round-robin: the guard's
share of the training time (``Trainer.train``; its probes timed inside it) is what a typical run pays.
``--guard-methods none`` skips the lab (which is trained first when ``--cache-dir`` does not hold it).

A plain fine-tuning step sees the same number of sequences as an unlearning step (forget batch +
retain batch = 2 x batch_size). Results: a markdown table on stdout and in ``bench/results/speed.md``.
"""

from __future__ import annotations

import argparse
import json
import math
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
    # the other default methods (issue 58: every method's step against a fine-tune step)
    "simnpo": ("unlearn", "simnpo", {}),
    "idk": ("unlearn", "idk", {}),
    "rmu": ("unlearn", "rmu", {}),
    "asu_kl / cache": ("unlearn", "asu_kl", {"reference": "cache"}),
    "s-npo / cache": ("unlearn", "s-npo", {"reference": "cache", "tagger": "heuristic"}),
    "eval": ("eval", None, {}),
    "guard probe": ("probe", None, {}),
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


def _longest(inputs) -> int:
    """The longest ``input_ids`` (padded length) anywhere in a batch (paired batches nest them)."""
    if isinstance(inputs, dict):
        own = inputs.get("input_ids")
        width = int(own.shape[-1]) if hasattr(own, "shape") else 0
        return max([width, *(_longest(v) for v in inputs.values() if isinstance(v, dict))])
    return 0


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
    if kind == "unlearn":
        # The collapse guard's probes (step 0, then every ~10 % of the steps) run inside Trainer step
        # callbacks, i.e. inside the timed steps: measured steps run without them, and the guard's own
        # cost is measured on its own (the "guard" configurations below).
        common["collapse_guard"] = "off"
    times: list[float] = []
    cpu_times: list[float] = []

    class StepTimer(TrainerCallback):
        def on_train_begin(self, args, state, control, **kw):
            out["setup_peak_mib"] = round((_status_kib("VmHWM") - base_rss) / 1024, 1)
            _trim()  # same for every configuration: freed setup memory goes back before training

        def on_step_begin(self, args, state, control, **kw):
            if cuda:
                torch.cuda.synchronize()
            self.t0, self.c0 = time.perf_counter(), time.process_time()

        def on_step_end(self, args, state, control, **kw):
            if cuda:
                torch.cuda.synchronize()
            times.append(time.perf_counter() - self.t0)
            cpu_times.append(time.process_time() - self.c0)

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
    if not cuda:  # what the weights alone hold (RSS), to read the peak against
        out["weights_mib"] = round((_status_kib("VmRSS") - base_rss) / 1024, 1)
    import transformers

    original_init = transformers.Trainer.__init__

    def patched_init(self, *a, **kw):  # add the timer to whatever Trainer the run builds
        original_init(self, *a, **kw)
        self.add_callback(StepTimer())
        step = self.training_step

        def training_step(model, inputs, *rest, **kws):  # the longest padded batch: the peak's shape
            out["seq_max"] = max(out.get("seq_max", 0), _longest(inputs))
            return step(model, inputs, *rest, **kws)

        self.training_step = training_step

    transformers.Trainer.__init__ = patched_init
    t_start, c_start = time.perf_counter(), time.process_time()
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
    elif kind == "probe":
        from unlearnkit.data.encode import PromptFormat
        from unlearnkit.train.collapse_guard import UtilityProbe, probe_rows_of

        probe_retain, probe_general = probe_rows_of(bench, 0)  # what `unlearnkit unlearn` asks
        probe = UtilityProbe.from_rows(tok, PromptFormat.for_tokenizer(tok), probe_retain, probe_general, 0)
        took, took_cpu = [], []
        for _ in range(6):
            t0, c0 = time.perf_counter(), time.process_time()
            with torch.no_grad():
                probe.measure(model, tok)
            took.append(time.perf_counter() - t0)
            took_cpu.append(time.process_time() - c0)
        out["probe_first_s"] = round(took[0], 4)  # a process's first probe (anything it imports)
        out["probe_first_cpu_s"] = round(took_cpu[0], 4)
        out["probe_s"] = statistics.median(took[1:])
        out["probe_cpu_s"] = statistics.median(took_cpu[1:])
        out["probe_items"] = len(probe.items)
        out["probe_new_tokens"] = probe.describe()["max_new_tokens"]
    else:
        from unlearnkit.evaluation.evaluate import EvalSettings, evaluate

        settings = EvalSettings(max_new_tokens=32, max_items=spec["eval_items"], progress=False)
        evaluate(model, tok, bench, settings)
        n_items = sum(
            min(len(bench.split(s)), spec["eval_items"]) for s in ("forget", "retain", "holdout", "general")
        )
        out["eval_items"] = n_items
    out["wall_s"] = round(time.perf_counter() - t_start, 3)
    out["cpu_s"] = round(time.process_time() - c_start, 3)  # all threads: the work, whoever else ran
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
        # CPU time of the process (all its threads) per step: what the step costs in work, much less
        # disturbed than wall time when other processes share the cores
        out["step_cpu_s"] = statistics.median(cpu_times[2:] if len(cpu_times) > 3 else cpu_times)
    return out


def lab_worker(spec: dict) -> dict:
    """One quickstart method on the quickstart's lab target, with the collapse guard as ``spec["guard"]``
    says: the training time (``Trainer.train``) and the time inside the guard's probes."""
    import torch
    import transformers

    from unlearnkit.data.sources import resolve_data
    from unlearnkit.models import load
    from unlearnkit.pipelines.quickstart import method_overrides
    from unlearnkit.pipelines.unlearn import unlearn
    from unlearnkit.train import collapse_guard as G

    torch.set_num_threads(spec["threads"])
    bench = resolve_data(spec["world"], eval_fields=False)
    probe_retain, probe_general = G.probe_rows_of(bench, 0)  # as `unlearnkit unlearn` does
    probes: list[float] = []
    probes_cpu: list[float] = []
    check = G.CollapseGuard._check

    def timed_check(self, *a, **kw):
        t0, c0 = time.perf_counter(), time.process_time()
        try:
            return check(self, *a, **kw)
        finally:
            probes.append(time.perf_counter() - t0)
            probes_cpu.append(time.process_time() - c0)

    G.CollapseGuard._check = timed_check
    out: dict = {"name": spec["name"], "method": spec["method"], "guard": spec["guard"]}
    train = transformers.Trainer.train

    def timed_train(self, *a, **kw):
        t0, c0 = time.perf_counter(), time.process_time()
        try:
            return train(self, *a, **kw)
        finally:
            out["train_s"] = round(time.perf_counter() - t0, 4)
            out["train_cpu_s"] = round(time.process_time() - c0, 4)
            out["steps"] = self.state.global_step

    transformers.Trainer.train = timed_train
    model, tok = load(spec["target"])
    values = {**method_overrides(spec["method"], 0), "collapse_guard": spec["guard"]}
    t0 = time.perf_counter()
    unlearn(
        model,
        tok,
        bench.forget,
        bench.retain,
        spec["method"],
        model_path=spec["target"],
        work_dir=spec["work"],
        quiet=True,
        general=probe_general,
        probe_retain=probe_retain,
        attribution_dir=Path(spec["work"]) / "attribution",
        **values,
    )
    out["unlearn_s"] = round(time.perf_counter() - t0, 4)
    out["probes"] = len(probes)
    out["probe_s"] = round(sum(probes), 4)
    out["probe_each_s"] = [round(x, 4) for x in probes]
    out["probe_cpu_s"] = round(sum(probes_cpu), 4)
    out["probe_each_cpu_s"] = [round(x, 4) for x in probes_cpu]
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
    if args.model:
        return (data, *_pretrained(args, data), len(bench.forget))
    tok = train_tokenizer(corpus_of(bench.forget + bench.retain + bench.holdout + bench.general))
    if args.answer_tokens:
        _lengthen_answers(data, tok, args.answer_tokens)
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
    model = LlamaForCausalLM(cfg).to(getattr(torch, args.dtype))  # saved as the workers load it
    n_params = sum(p.numel() for p in model.parameters())
    save_model(model, tok, root / "model", {"kind": "random model for bench/speed.py"})
    del model  # the driver idles while the workers run: give the (1B-sized) memory back
    _trim()
    return data, root / "model", _described(cfg, tok, n_params), len(bench.forget)


def _described(cfg, tok, n_params: int) -> dict:
    """The model's shape as the table's header names it."""
    return dict(
        params=n_params,
        hidden=cfg.hidden_size,
        layers=cfg.num_hidden_layers,
        vocab=cfg.vocab_size,
        tokenizer_vocab=len(tok),
        tied=bool(getattr(cfg, "tie_word_embeddings", False)),
    )


def _pretrained(args, data: Path) -> tuple[Path, dict]:
    """A pretrained checkpoint (``--model``: a folder, a .gguf file or a known name, converted once) in
    place of the random Llama: its own tokenizer and chat template read the world's questions, so the
    steps have the sequence lengths that model sees."""
    from safetensors import safe_open
    from transformers import AutoConfig, AutoTokenizer

    from unlearnkit.gguf_models import resolve

    folder = Path(resolve(args.model, log=lambda line: print(line, file=sys.stderr)))
    tok = AutoTokenizer.from_pretrained(folder)
    if args.answer_tokens:
        _lengthen_answers(data, tok, args.answer_tokens)
    cfg = AutoConfig.from_pretrained(folder)
    n_params = 0
    for shard in sorted(folder.glob("*.safetensors")):
        with safe_open(str(shard), "pt") as f:
            n_params += sum(math.prod(f.get_slice(name).get_shape()) for name in f.keys())
    return folder, {**_described(cfg, tok, n_params), "name": str(args.model)}


def _lengthen_answers(data: Path, tok, length: int) -> None:
    """Forget and retain answers repeated until prompt + answer is close to ``length`` tokens (at most
    that): sequences of a real benchmark's length (TOFU's are ~100-200 tokens, the accounting's 512) from
    the world's ~30-token QA. Only for the memory check: the words mean nothing."""
    from unlearnkit.data.encode import PromptFormat

    fmt = PromptFormat.for_tokenizer(tok)
    for split in ("forget", "retain"):
        path = data / f"{split}.jsonl"
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        for row in rows:
            prompt, base = len(fmt.prompt_ids(tok, row["question"])), row["answer"]
            once = len(fmt.answer_ids(tok, base))  # with its EOS
            step = max(1, len(fmt.answer_ids(tok, f"{base} {base}")) - once)  # one more repetition
            times = max(1, 1 + (length - prompt - once) // step)
            while times > 1 and prompt + len(fmt.answer_ids(tok, " ".join([base] * times))) > length:
                times -= 1  # joining can merge tokens differently: never past ``length``
            row["answer"] = " ".join([base] * times)
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def _ratio(x, base) -> str:
    return f"{x / base:.2f}x" if x and base else "-"


def _table(results: dict, meta: dict, guard: dict | None = None) -> str:
    ft, ft_lora, ga, gd = (
        results.get(k, {}) for k in ("finetune", "finetune+lora", "ga", "gd (ga + retain nll)")
    )
    title = (
        f"## Speed and memory on a pretrained {meta['model']} (python bench/speed.py --model)"
        if meta.get("model")
        else "## Speed and memory (python bench/speed.py)"
    )
    lines = [
        title,
        "",
        f"{meta['desc']}. Step = one optimiser step (median of steps 3..{meta['steps']}), in wall time and in "
        "the process's CPU time (all its threads; other processes shared the cores, so the ratios are of CPU "
        "time, the work a step does); "
        f"unlearning steps see {meta['batch_size']} forget + {meta['batch_size']} retain sequences, "
        f"fine-tuning steps {2 * meta['batch_size']} sequences; the unlearning steps run without the "
        f"collapse guard (its cost is measured apart, below). Memory: {meta['memory']}.",
        "",
        "| configuration | step (ms) | step CPU (ms) | vs fine-tune step | vs GA step | vs GD step "
        "| peak memory (MiB) | vs fine-tune | vs fine-tune+LoRA | one-off before training |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, r in results.items():
        if name in ("eval", "guard probe"):
            continue
        step = r.get("step_cpu_s")
        extra = []
        ref = r.get("reference") or {}
        if ref.get("strategy") == "cache":
            extra.append(f"cache {ref.get('cache_seconds', 0):.2f} s, {ref.get('cache_mib', 0):.1f} MiB")
        if "attribution_s" in r:
            extra.append(f"attribution {r['attribution_s']:.2f} s")
        lines.append(
            f"| {name} | {r['step_s'] * 1e3:.1f} | {step * 1e3:.1f} | {_ratio(step, ft.get('step_cpu_s'))} "
            f"| {_ratio(step, ga.get('step_cpu_s'))} | {_ratio(step, gd.get('step_cpu_s'))} | {r['peak_mib']:.0f} "
            f"| {_ratio(r['peak_mib'], ft.get('peak_mib'))} "
            f"| {_ratio(r['peak_mib'], ft_lora.get('peak_mib'))} | {'; '.join(extra) or '-'} |"
            if step
            else f"| {name} | failed | | | | | | | | {r.get('error', '')[:80]} |"
        )
    ev = results.get("eval")
    if ev and "eval_items" in ev:
        lines += [
            "",
            f"Evaluation (TOFU protocol, 32 new tokens, {ev['eval_items']} items over 4 splits): "
            f"{ev['wall_s']:.1f} s = {ev['eval_items'] / ev['wall_s']:.1f} items/s, peak memory "
            f"{ev['peak_mib']:.0f} MiB ({_ratio(ev['peak_mib'], ft.get('peak_mib'))} fine-tuning's).",
        ]
    lines += _guard_lines(results.get("guard probe"), gd, guard)
    lines += ["", "Targets:"]
    for label, names, base_name, limit, key in [
        (
            "ASU step <= 1.15x GA step (cache / adapter)",
            ("asu / cache", "asu / adapter+lora"),
            "ga",
            1.15,
            "step_cpu_s",
        ),
        (
            "ASU step <= 1.15x GD step (GA with the same retain term)",
            ("asu / cache", "asu / adapter+lora"),
            "gd (ga + retain nll)",
            1.15,
            "step_cpu_s",
        ),
        (
            "ASU step <= 1.0x GD step (issue 58's goal at 135M)",
            ("asu / copy", "asu / cache"),
            "gd (ga + retain nll)",
            1.0,
            "step_cpu_s",
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
                parts.append(f"{n} {v / base:.3f}x {'met' if v / base <= limit else 'NOT met'}")
        lines.append(f"- {label}: " + ("; ".join(parts) or "not measured"))
    if guard and guard.get("rows"):
        shares = {m: r["share"] for m, r in guard["rows"].items() if r.get("share") is not None}
        worst = max(shares, key=shares.get) if shares else None
        verdict = (
            f"{'met' if shares[worst] <= GUARD_LIMIT else 'NOT met'} (at most {shares[worst]:.1%}, {worst})"
            if worst
            else "not measured"
        )
        lines.append(
            f"- Collapse guard <= {GUARD_LIMIT:.0%} of a quickstart method's training time (default guard): "
            + verdict
        )
    lines += ["", f"Machine: {meta['machine']}. Timings on shared CPUs are noisy (+-20 %)."]
    return "\n".join(lines) + "\n"


GUARD_LIMIT = 0.05  # the aim: "by default the guard should cost no more than a few percent of a run's time"


def _guard_lines(probe: dict | None, gd: dict, guard: dict | None) -> list[str]:
    """What the collapse guard costs: one probe on this model, and its share of the quickstart's runs."""
    lines: list[str] = []
    if probe and "probe_s" in probe:
        in_steps = (
            f" = {probe['probe_cpu_s'] / gd['step_cpu_s']:.2f} GD steps" if gd.get("step_cpu_s") else ""
        )
        lines += [
            "",
            f"Collapse guard, one probe on this model ({probe['probe_items']} questions, up to "
            f"{probe.get('probe_new_tokens', 24)} greedy tokens; a random model never stops early): {probe['probe_cpu_s'] * 1e3:.0f} ms of CPU time"
            f"{in_steps} (median of 5; a process's first probe {probe['probe_first_cpu_s'] * 1e3:.0f} ms). A "
            "run probes at step 0, halfway and at the last step (`collapse_guard=stop`: every "
            "~10 %).",
        ]
    if guard and guard.get("rows"):
        lines += [
            "",
            f"Collapse guard in the quickstart's runs: {guard['desc']}. Guard share = the CPU time inside its "
            "probes / the CPU time of the training (`Trainer.train`) with the default guard (`warn`), median of "
            "the repeats (in wall time beside it); on / off = the least training CPU time with it / without it.",
            "",
            "| method | steps | probes | CPU ms per probe | guard share of training | (wall time) "
            "| training on / off |",
            "|---|---|---|---|---|---|---|",
        ]
        for method, r in guard["rows"].items():
            if r.get("share") is None:
                lines.append(f"| {method} | failed | | | | | {r.get('error', '')[:80]} |")
                continue
            lines.append(
                f"| {method} | {r['steps']} | {r['probes']} | {r['probe_ms']:.0f} | {r['share']:.1%} "
                f"| {r['share_wall']:.1%} | {r['on_off']:.2f}x |"
            )
    return lines


def _guard_rows(runs: list[dict]) -> dict[str, dict]:
    """Per method: steps, probes, ms per probe and the guard's share (median over the repeats) of the
    ``warn`` runs, and the fastest ``warn`` training time over the fastest ``off`` one."""
    rows: dict[str, dict] = {}
    for method in dict.fromkeys(r["method"] for r in runs):
        on = [r for r in runs if r["method"] == method and r["guard"] == "warn" and "train_s" in r]
        off = [r for r in runs if r["method"] == method and r["guard"] == "off" and "train_s" in r]
        if not on or not off:
            failed = [r for r in runs if r["method"] == method and "error" in r]
            rows[method] = {"share": None, "error": failed[0]["error"] if failed else "no run"}
            continue
        probes = [x for r in on for x in r["probe_each_cpu_s"]]
        rows[method] = {
            "steps": on[0]["steps"],
            "probes": on[0]["probes"],
            "probe_ms": 1e3 * statistics.median(probes) if probes else 0.0,
            "share": statistics.median(r["probe_cpu_s"] / r["train_cpu_s"] for r in on),
            "share_wall": statistics.median(r["probe_s"] / r["train_s"] for r in on),
            "on_off": min(r["train_cpu_s"] for r in on) / min(r["train_cpu_s"] for r in off),
            "runs": on + off,
        }
    return rows


def _spawn(spec: dict, threads: int) -> dict:
    """One worker in a fresh process: its RESULT line, or the error it ended with."""
    # Waiting OpenMP threads sleep instead of spinning: with other processes on the cores a spinning
    # thread burns CPU time while its partner is descheduled, and a step's CPU time would not be its work.
    env = dict(
        os.environ, OMP_NUM_THREADS=str(threads), OMP_WAIT_POLICY="PASSIVE", TOKENIZERS_PARALLELISM="false"
    )
    proc = subprocess.run(
        [sys.executable, __file__, "--worker", json.dumps(spec)], capture_output=True, text=True, env=env
    )
    line = next((x for x in proc.stdout.splitlines() if x.startswith("RESULT ")), None)
    return json.loads(line[7:]) if line else {**spec, "error": proc.stderr.strip()[-300:]}


def _guard_on_the_lab(methods: list[str], args, root: Path) -> dict:
    """The quickstart's ``methods`` on its lab with the default guard and without, round-robin."""
    from unlearnkit.pipelines.embedded import LAB_VERSION, ensure_lab
    from unlearnkit.pipelines.quickstart import WORLD, cache_root

    world, _, target, _ = ensure_lab("tofu", cache_root(args.cache_dir), dict(WORLD), 0, print)
    runs = []
    for repeat in range(max(1, args.repeats)):
        for method in methods:
            for guard in ("warn", "off"):
                spec = dict(
                    name=f"{method} / guard {guard}",
                    kind="lab",
                    method=method,
                    guard=guard,
                    world=str(world),
                    target=str(target),
                    work=str(root / "lab" / f"{method}-{guard}-{repeat}"),
                    threads=args.threads,
                )
                r = {**_spawn(spec, args.threads), "method": method, "guard": guard}
                runs.append(r)
                share = f"{r['probe_cpu_s'] / r['train_cpu_s']:6.1%}" if "train_s" in r else "failed"
                print(
                    f"lab {method:8s} guard {guard:4s} {r.get('train_s', 0):7.2f} s  {share}", file=sys.stderr
                )
    desc = (
        f"the TOFU-like lab (lab version {LAB_VERSION}, seed 0: its cached target, "
        f"{len(methods)} default methods with the quickstart's recipes, the probe rows `unlearnkit unlearn` "
        f"asks: 4 retain + 4 general questions), CPU ({args.threads} thread(s)), "
        f"{max(1, args.repeats)} round-robin repeats"
    )
    return {"desc": desc, "lab_version": LAB_VERSION, "rows": _guard_rows(runs)}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model-config", default="tiny", help="tiny | llama-1b | a LlamaConfig .json")
    p.add_argument(
        "--model",
        default=None,
        help="a pretrained checkpoint instead (smollm2-135m-instruct, a .gguf file or a model folder)",
    )
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--authors", type=int, default=40, help="world size (10 facts each, 20 %% forget)")
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--steps", type=int, default=12)
    p.add_argument(
        "--repeats", type=int, default=3, help="round-robin repeats: the fastest step, the median memory"
    )
    p.add_argument("--max-length", type=int, default=128)
    p.add_argument(
        "--answer-tokens",
        type=int,
        default=0,
        help="repeat each forget / retain answer up to about this many tokens (memory at long sequences)",
    )
    p.add_argument("--eval-items", type=int, default=40)
    p.add_argument("--precision", default="auto")
    p.add_argument("--dtype", default="float32", help="weights dtype (bfloat16 with --precision bf16-true)")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--cpu", action="store_true", help="stay on the CPU even with a GPU")
    p.add_argument("--only", default=None, help="comma-separated configuration names")
    p.add_argument(
        "--guard-methods",
        default="quickstart",
        help="the collapse guard's cost on the quickstart's lab: quickstart (its default methods), a "
        "comma-separated list, or none",
    )
    p.add_argument("--cache-dir", default=None, help="the lab's models (default: ~/.cache/unlearnkit)")
    p.add_argument("--output", default=str(HERE / "results" / "speed.md"))
    p.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        spec = json.loads(args.worker)
        print("RESULT " + json.dumps(lab_worker(spec) if spec.get("kind") == "lab" else worker(spec)))
        return 0

    import torch

    names = [n.strip() for n in args.only.split(",")] if args.only else list(CONFIGS)
    unknown = [n for n in names if n not in CONFIGS]
    if unknown:
        print(
            f"bench/speed.py: --only: unknown configuration {unknown[0]!r} (one of: {', '.join(CONFIGS)})",
            file=sys.stderr,
        )
        return 2
    if args.guard_methods == "quickstart":
        from unlearnkit.pipelines.quickstart import DEFAULT_METHODS

        guard_methods = list(DEFAULT_METHODS)
    elif args.guard_methods == "none":
        guard_methods = []
    else:
        guard_methods = [m.strip() for m in args.guard_methods.split(",") if m.strip()]
    results: dict[str, dict] = {}
    guard = None
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)  # the partial results go beside it
    with tempfile.TemporaryDirectory(prefix="uk-speed-") as tmp:
        root = Path(tmp)
        data, model_dir, model_meta, n_forget = _build(root, args)
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
                r = _spawn(spec, args.threads)
                runs[name].append(r)
                partial = Path(args.output).with_suffix(".partial.json")  # survives an interrupted run
                partial.write_text(json.dumps(runs, indent=1) + "\n", encoding="utf-8")
                step = r.get("step_cpu_s", r.get("probe_cpu_s", r.get("wall_s", float("nan"))))
                print(
                    f"{name:24s} {step * 1e3:9.1f} ms  peak {r.get('peak_mib', 0):8.1f} MiB", file=sys.stderr
                )
        for name, rs in runs.items():
            ok = [r for r in rs if "peak_mib" in r]
            if not ok:
                results[name] = {**rs[-1], "peak_mib": 0}
                continue
            key = next(k for k in ("step_cpu_s", "probe_cpu_s", "wall_s") if k in ok[0])
            best = dict(min(ok, key=lambda r: r[key]))
            best["peak_mib"] = statistics.median(r["peak_mib"] for r in ok)
            best["repeats"] = [r.get(key) for r in ok]
            best["peak_repeats_mib"] = [r["peak_mib"] for r in ok]
            results[name] = best
        if guard_methods:
            guard = _guard_on_the_lab(guard_methods, args, root)
    cuda = torch.cuda.is_available() and not args.cpu
    device = torch.cuda.get_device_name(0) if cuda else f"CPU ({args.threads} thread(s))"
    vocab = f"vocab {model_meta['vocab']}"
    if model_meta["tokenizer_vocab"] != model_meta["vocab"]:
        vocab += f", the world's tokenizer uses {model_meta['tokenizer_vocab']}"
    if args.model:
        what = f"Pretrained {args.model}"
    else:
        what = f"Random Llama '{args.model_config}'"
    meta = dict(
        desc=(
            f"{what} ({model_meta['params'] / 1e6:.1f} M parameters, {vocab}) on "
            f"{device}, {n_forget} forget examples, {args.steps} steps, batch {args.batch_size}, "
            f"best of {args.repeats} round-robin repeats"
        ),
        steps=args.steps,
        batch_size=args.batch_size,
        model=args.model,
        memory=next((r["memory"] for r in results.values() if "memory" in r), "-"),
        machine=f"{platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__}",
    )
    from _common import describe, provenance  # bench/ is on sys.path when run as a script

    settings = {k: v for k, v in vars(args).items() if k not in ("worker", "output", "cache_dir")}
    if args.model or args.model_config in MODEL_CONFIGS or args.model_config.endswith(".json"):
        settings.pop("hidden"), settings.pop("layers")  # the configuration decides the shape, not these
    if args.model:
        settings.pop("model_config")
    if guard:
        settings["lab_version"] = guard["lab_version"]
    table = _table(results, meta, guard)
    head, _, rest = table.partition("\n")  # the provenance line goes under the section's title
    table = f"{head}\n\n_Produced by `python bench/speed.py` ({describe(settings)})._\n{rest}"
    print(table)
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(table, encoding="utf-8")
    payload = {**results, "model": model_meta, "guard": guard, "provenance": provenance(settings)}
    (Path(args.output).with_suffix(".json")).write_text(
        json.dumps(payload, indent=2) + "\n", encoding="utf-8"
    )
    Path(args.output).with_suffix(".partial.json").unlink(missing_ok=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

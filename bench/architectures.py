"""The architecture support matrix of docs/SCALING.md, measured on the installed transformers.

    python bench/architectures.py        (about a minute on 2 CPU cores; no downloads)

For every architecture of ``tests/tiny_models.py`` (random 2-layer models, hidden 16, built from the
transformers config classes) it runs two optimiser steps of each method family through
``unlearnkit.pipelines.unlearn.unlearn`` (GA, GD, NPO, ASU with a KL retain term, T-NPO with its TokenUnlearn
attribution, RMU, and NPO on LoRA ``all-linear`` adapters), compares every layer's ASU-teacher
attention with the hand-written softmax(q k^T / (tau sqrt(d))) of ``tests/hand_attention.py``, and
saves an ``unlearnkit unlearn`` output that it loads back with plain
``transformers.AutoModelForCausalLM``. Architectures whose attention cannot be smoothed are listed
with the one-line refusal ``unlearn`` gives for ASU. It writes ``bench/results/architectures.{md,json}``
and the table between the markers of docs/SCALING.md; ``tests/test_architectures.py`` runs the same
functions with assertions and fails when the document is not this script's rendering of the JSON.
"""

from __future__ import annotations

import json
import math
import platform
import sys
import tempfile
from pathlib import Path

import torch

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
RESULTS = BENCH / "results"
SCALING = REPO / "docs" / "SCALING.md"
BEGIN = "<!-- begin: bench/results/architectures.md (python bench/architectures.py; do not edit by hand) -->"
END = "<!-- end: bench/results/architectures.md -->"
sys.path.insert(0, str(REPO / "tests"))

from hand_attention import teacher_vs_hand  # noqa: E402
from tiny_models import ARCHITECTURES, REFUSED_FOR_ASU, random_causal_lm  # noqa: E402

RUN = dict(batch_size=4, grad_accum=1, max_steps=2, lr=1e-3, warmup_epochs=0)
# family -> overrides; "lora" is NPO on rank-4 all-linear adapters (a higher lr: adapters start at zero)
FAMILIES = {
    "ga": {},
    "gd": {},
    "npo": {},
    "asu_kl": {"tau": 2.0},
    "t-npo": {"tagger": "heuristic"},
    "rmu": {"layer": 0, "train_layers": "0", "steering_coeff": 5.0, "retain_weight": 1.0},
    "lora": {"lora_r": 4, "lr": 1e-2, "lora_save": "adapter"},
}
N_ROWS = 4  # forget and retain examples per run: one batch
TEACHER_TAU = 2.0
# Families run on the refused architectures (everything but the smoothed teacher works there).
REFUSED_FAMILIES = ("ga", "npo", "rmu")


def method_of(family: str) -> str:
    return "npo" if family == "lora" else family


def overrides_for(arch: str, family: str) -> dict:
    values = {**RUN, **FAMILIES[family]}
    if family == "rmu":  # the MLP output projection of the steered layer
        values["train_modules"] = {"gpt2": "mlp.c_proj", "bloom": "mlp.dense_4h_to_h", "mamba": ""}.get(
            arch, "mlp.down_proj"
        )
    return values


def world(root: Path):
    """The tests' miniature world (tests/conftest.py) and its 512-token BPE tokenizer."""
    from unlearnkit.data import load_benchmark
    from unlearnkit.world import write_world
    from unlearnkit.world.tiny import corpus_of, train_tokenizer

    path = root / "world"
    write_world(
        path,
        n_authors=12,
        facts_per_author=4,
        forget_fraction=0.25,
        holdout_fraction=0.25,
        n_general=10,
        seed=0,
    )
    bench = load_benchmark(path, eval_fields=True)
    rows = bench.forget + bench.retain + bench.holdout + bench.general
    return path, bench, train_tokenizer(corpus_of(rows), vocab_size=512)


def run_family(arch: str, family: str, tokenizer, bench, work: Path) -> dict:
    """Two optimiser steps of ``family`` on a fresh random ``arch``; what happened, measured."""
    from unlearnkit.pipelines.unlearn import unlearn

    model = random_causal_lm(arch, tokenizer)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    res = unlearn(
        model,
        tokenizer,
        bench.forget[:N_ROWS],
        bench.retain[:N_ROWS],
        method_of(family),
        work_dir=work / "run",
        attribution_dir=work / "attribution",
        quiet=True,
        **overrides_for(arch, family),
    )
    losses = [h["loss"] for h in res.log_history if "loss" in h]
    out = {
        "steps": max((h.get("step", 0) for h in res.log_history), default=0),
        "losses": losses,
        "train_loss": res.train_loss,
        "reference": res.reference.get("strategy"),
    }
    named = dict(res.model.named_parameters())
    if family == "lora":  # adapters start with B = 0: they trained iff some B moved; the base did not
        out["lora_b_moved"] = max(float(p.detach().abs().max()) for n, p in named.items() if "lora_B" in n)
        base = res.model.get_base_model().state_dict()
        out["base_changed"] = max(
            float((base[n if n in base else n.replace(".weight", ".base_layer.weight")] - v).abs().max())
            for n, v in before.items()
            if (n if n in base else n.replace(".weight", ".base_layer.weight")) in base
        )
    else:
        out["moved"] = max(float((named[n].detach() - v).abs().max()) for n, v in before.items())
    if res.attribution is not None:
        lines = (work / "attribution" / "scores.jsonl").read_text(encoding="utf-8").splitlines()
        out["attribution_rows"] = len(lines)
        out["selected_fraction"] = res.attribution["mean_selected_fraction"]
    return out


def teacher_check(arch: str, tokenizer) -> list[float]:
    """Per layer, max |ASU-teacher attention - hand-written softmax at tau| on a padded batch."""
    model = random_causal_lm(arch, tokenizer)
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(4, len(tokenizer), (3, 10), generator=g)
    mask = torch.ones_like(ids)
    mask[1, :3] = 0  # left padding
    mask[2, -2:] = 0  # right padding
    return teacher_vs_hand(model, ids, mask, TEACHER_TAU)


def save_and_reload(arch: str, tokenizer, world_dir: Path, work: Path, method: str = "npo") -> dict:
    """``unlearnkit unlearn`` (the CLI, in-process) on a saved random ``arch``; the output reloaded with
    plain ``AutoModelForCausalLM.from_pretrained`` (no unlearnkit code)."""
    from transformers import AutoModelForCausalLM

    from unlearnkit.cli import main
    from unlearnkit.models import save_model

    source, output = work / "model", work / "unlearned"
    original = random_causal_lm(arch, tokenizer)
    save_model(original, tokenizer, source, {"kind": f"random tiny {arch} (bench/architectures.py)"})
    argv = ["unlearn", "--model", str(source), "--data", str(world_dir), "--method", method]
    argv += ["--output", str(output)]
    for key, value in overrides_for(arch, method).items():
        argv += ["--set", f"{key}={value}"]
    code = main(argv)
    if code != 0:
        return {"exit_code": code}
    loaded = AutoModelForCausalLM.from_pretrained(str(output)).eval()
    fresh = original.state_dict()
    ids = torch.tensor([tokenizer("Question: Who?\nAnswer: Someone")["input_ids"]])
    with torch.no_grad():
        logits = loaded(input_ids=ids).logits
    return {
        "exit_code": code,
        "class": type(loaded).__name__,
        "same_keys": sorted(loaded.state_dict()) == sorted(fresh),
        "changed": max(float((loaded.state_dict()[k] - v).abs().max()) for k, v in fresh.items()),
        "finite": bool(torch.isfinite(logits).all()),
    }


def refusal(arch: str, tokenizer, bench, work: Path, method: str = "asu_kl") -> str | None:
    """The one-line UserError ``unlearn`` raises for ``method`` on ``arch`` (None: it ran)."""
    from unlearnkit.errors import UserError

    try:
        run_family(arch, method, tokenizer, bench, work)
    except UserError as err:
        return str(err)
    return None


def describe(arch: str, tokenizer) -> dict:
    """What the architecture is made of, read from the model itself."""
    from unlearnkit.models import decoder_layer_prefixes

    model = random_causal_lm(arch, tokenizer)
    cfg = model.config
    types = getattr(cfg, "layer_types", None)
    if types is None and getattr(cfg, "sliding_window", None):
        types = ["sliding_attention"] * cfg.num_hidden_layers
    kinds = (
        ", ".join(
            f"{t.replace('_attention', '')}" + (f" ({cfg.sliding_window})" if "sliding" in t else "")
            for t in types
        )
        if types
        else "full, full"
    )
    return {
        "class": type(model).__name__,
        "attention": cfg._attn_implementation,
        "layers": kinds,
        "decoder_layers": decoder_layer_prefixes(model)[0].rsplit(".", 2)[0],
    }


def measure() -> dict:
    torch.set_num_threads(1)
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    results: dict = {"families": list(FAMILIES), "architectures": {}, "refused": {}}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        world_dir, bench, tokenizer = world(root)
        for arch in ARCHITECTURES:
            print(f"{arch} ...", flush=True)
            row = {**describe(arch, tokenizer), "families": {}}
            for family in FAMILIES:
                row["families"][family] = run_family(arch, family, tokenizer, bench, root / arch / family)
            row["teacher_max_diff"] = max(teacher_check(arch, tokenizer))
            row["reload"] = save_and_reload(arch, tokenizer, world_dir, root / arch / "cli")
            results["architectures"][arch] = row
        for arch, why in REFUSED_FOR_ASU.items():
            print(f"{arch} (refused for ASU) ...", flush=True)
            row = {**describe_refused(arch, tokenizer), "why": why, "families": {}}
            for family in REFUSED_FAMILIES:
                row["families"][family] = run_family(arch, family, tokenizer, bench, root / arch / family)
            row["message"] = refusal(arch, tokenizer, bench, root / arch / "asu")
            results["refused"][arch] = row
    import transformers

    results["machine"] = (
        f"transformers {transformers.__version__}, torch {torch.__version__}, {platform.machine()}, 1 thread"
    )
    return results


def describe_refused(arch: str, tokenizer) -> dict:
    model = random_causal_lm(arch, tokenizer)
    return {"class": type(model).__name__, "attention": model.config._attn_implementation}


def _cell(family: str, run: dict) -> str:
    """One family's cell: the loss of its two steps (first -> last), or what went wrong."""
    if run.get("steps") != RUN["max_steps"] or not all(math.isfinite(x) for x in run["losses"]):
        return "FAILED"
    first, last = run["losses"][0], run["losses"][-1]
    if family == "lora" and not run["lora_b_moved"] > 0:
        return "B stayed 0"
    return f"{first:.3g} -> {last:.3g}"


def render(results: dict) -> str:
    families = results["families"]
    head = ["architecture", "class", "attention layers", "decoder layers", *families]
    head += ["teacher vs hand-written", "CLI output reloads"]
    lines = [
        f"Random 2-layer models (hidden 16) of each architecture, built from the transformers config classes "
        f"({results['machine']}). Each family cell is the training loss of its 2 optimiser steps (first -> last); "
        f"`lora` is NPO on rank-4 `all-linear` adapters (the B matrices move from zero, the base stays "
        f'bit-identical); `t-npo` includes its TokenUnlearn attribution. "teacher vs hand-written" is the '
        f"largest difference, over every layer and real query, between the ASU teacher's attention at "
        f"tau = {TEACHER_TAU} and softmax(q k^T / (tau sqrt(d))) written out by hand with its own causal, "
        f'padding and sliding-window masks (tests/hand_attention.py). "CLI output reloads": an '
        f"`unlearnkit unlearn` output loaded with plain `AutoModelForCausalLM.from_pretrained`.",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
    ]
    for arch, row in results["architectures"].items():
        reload = row["reload"]
        ok = reload.get("exit_code") == 0 and reload.get("same_keys") and reload.get("finite")
        cells = [
            f"`{arch}`",
            f"`{row['class']}`",
            row["layers"],
            f"`{row['decoder_layers']}`",
            *[_cell(f, row["families"][f]) for f in families],
            f"{row['teacher_max_diff']:.1e}",
            f"yes (`{reload['class']}`)" if ok else "NO",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    lines += [
        "",
        "Refused for the ASU teacher (every other family runs; the message is what `unlearnkit unlearn "
        "--method asu_kl` prints):",
        "",
        "| architecture | class | why | " + " | ".join(REFUSED_FAMILIES) + " | refusal |",
        "|---|---|---|" + "---|" * len(REFUSED_FAMILIES) + "---|",
    ]
    for arch, row in results["refused"].items():
        cells = [f"`{arch}`", f"`{row['class']}`", row["why"]]
        cells += [_cell(f, row["families"][f]) for f in REFUSED_FAMILIES]
        cells.append(f"`{row['message']}`" if row["message"] else "NOT REFUSED")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def synced(scaling_md: str, table_md: str) -> str:
    """``scaling_md`` with the text between the markers replaced by ``table_md``."""
    head, sep, rest = scaling_md.partition(BEGIN)
    _, sep2, tail = rest.partition(END)
    if not sep or not sep2:
        raise SystemExit(f"{SCALING}: the markers {BEGIN!r} ... {END!r} are missing")
    return f"{head}{BEGIN}\n{table_md.strip()}\n{END}{tail}"


def main() -> None:
    results = measure()
    table = render(results)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "architectures.json").write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    (RESULTS / "architectures.md").write_text(table, encoding="utf-8")
    SCALING.write_text(synced(SCALING.read_text(encoding="utf-8"), table), encoding="utf-8")
    print(table)
    print(f"wrote {RESULTS / 'architectures.json'}, {RESULTS / 'architectures.md'} and {SCALING}")


if __name__ == "__main__":
    main()

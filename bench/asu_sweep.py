"""ASU on the embedded world: a tau x lambda sweep, and the paper's mechanism checked per token kind.

    python bench/asu_sweep.py              # lab seeds 0-4
    python bench/asu_sweep.py --seeds 0

Per token kind: mean probability of the true answer token for name tokens (the author's name,
repeated from the question), fact tokens (inside the fact value, e.g. the birthplace) and all other
tokens -- for the target, the smoothed teacher, and the ASU student trained towards it. The paper's
claim is that smoothing hits fact tokens harder than the rest, so answers stay fluent but wrong.
Writes bench/results/asu.md and asu.json.
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (  # noqa: E402
    add_seeds,
    measure_seeds,
    parser,
    seed_table,
    setup,
)

from unlearnkit.attention import smoothed_attention  # noqa: E402
from unlearnkit.data.encode import PromptFormat, encode_qa, pad_batch  # noqa: E402
from unlearnkit.tokens import token_logps  # noqa: E402

TAUS = (1.5, 2.3, 3.0, 4.0, 5.0, 7.0)
LAMBDAS = (0.1, 1.0)
COLUMNS = (
    "forget_quality",
    "model_utility",
    "forget_rougeL_recall",
    "forget_prob",
    "forget_token_entropy",
    "retain_rougeL_recall",
    "general_rougeL_recall",
)


def token_kinds(tokenizer, row: dict) -> list[str]:
    """'name' / 'fact' / 'other' for each answer token (incl. EOS) from character offsets."""
    text = " " + row["answer"]  # plain prompt format: the answer follows "Answer:" after a space
    enc = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    start, end = row["fact_span"][0] + 1, row["fact_span"][1] + 1
    name = row["author"]
    n0 = text.find(name)
    kinds = []
    for a, b in enc["offset_mapping"]:
        if a < end and b > start:
            kinds.append("fact")
        elif n0 >= 0 and a < n0 + len(name) and b > n0:
            kinds.append("name")
        else:
            kinds.append("other")
    return kinds + ["other"]  # the EOS


@torch.no_grad()
def kind_probs(model, tokenizer, rows) -> dict[str, float]:
    fmt = PromptFormat.for_tokenizer(tokenizer)
    sums: dict[str, list[float]] = {"name": [], "fact": [], "other": []}
    for i in range(0, len(rows), 32):
        chunk = rows[i : i + 32]
        enc = [encode_qa(tokenizer, fmt, r["question"], r["answer"], 256) for r in chunk]
        batch = pad_batch(enc, tokenizer.pad_token_id)
        logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
        logps, mask = token_logps(logits, batch["labels"])
        for row, lp, m in zip(chunk, logps, mask):
            probs = lp[m].exp().tolist()
            for kind, p in zip(token_kinds(tokenizer, row), probs):
                sums[kind].append(p)
    return {k: sum(v) / len(v) for k, v in sums.items() if v}


def main() -> None:
    p = parser(__doc__)
    add_seeds(p)
    measure_seeds("asu", p.parse_args(), run_seed, render, "python bench/asu_sweep.py")


def run_seed(args, seed: int) -> dict:
    """One lab seed: the tau x lambda sweep and the per-kind probabilities of target, teacher, student."""
    args.seed = seed
    emb = setup(args)
    work = Path(".bench_work") / "asu" / f"seed{seed}"
    forget = emb.bench.forget
    target, tok = emb.load_target()
    kinds = {"target": kind_probs(target, tok, forget)}
    for tau in TAUS:
        with smoothed_attention(target, tau):
            kinds[f"teacher tau={tau}"] = kind_probs(target, tok, forget)
    rows = {"target": emb.results["target"], "oracle": emb.results["oracle"]}
    for tau in TAUS:
        for lam in LAMBDAS:
            key = f"asu tau={tau} lambda={lam}"
            metrics, res = emb.run_method(
                "asu",
                work / key.replace(" ", "_"),
                {"tau": tau, "forget_weight": lam},
                row=key,
                keep_model=True,
                tuned=False,  # the shared recipe: a swept recipes/tiny/asu.yaml would set lr, epochs, lambda
            )
            rows[key] = metrics
            if lam == 1.0:
                kinds[f"ASU student tau={tau}"] = kind_probs(res.model, tok, forget)
            print(
                f"seed {seed} {key}",
                f"ROUGE {metrics['forget_rougeL_recall']:.3f} utility {metrics['model_utility']:.3f}",
                flush=True,
            )
    for k in kinds.values():
        k["fact / other"] = k["fact"] / k["other"]
    return {"sweep": rows, "token_kinds": kinds}


def render(per_seed: dict[int, dict]) -> str:
    seeds = ", ".join(map(str, per_seed))
    sweep = {s: r["sweep"] for s, r in per_seed.items()}
    kinds = {s: r["token_kinds"] for s, r in per_seed.items()}
    return "\n".join(
        [
            "## ASU: tau x lambda sweep",
            "",
            "ASU with retain NLL, 5 epochs, lr 5e-4, batch 8 on the tiny model; lambda is the forget weight. "
            f"Each cell: mean \u00b1 sd over lab seeds {seeds} (each its own world, base, target and oracle); "
            "every seed's rows are in bench/results/asu.json.",
            "",
            seed_table(sweep, list(COLUMNS), head="method"),
            "",
            "### Does smoothing hit facts harder than the rest? (mean probability of the true answer token)",
            "",
            seed_table(kinds, ["name", "fact", "other", "fact / other"], head="model"),
        ]
    )


if __name__ == "__main__":
    main()

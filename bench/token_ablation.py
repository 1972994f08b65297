"""TokenUnlearn on the embedded world: T-/S- variants against their bases, an r x alpha ablation, and
the fraction of selected tokens that fall inside the fact value of the answer.

    python bench/token_ablation.py                 # lab seeds 0-4
    python bench/token_ablation.py --seeds 0

Writes bench/results/tokenunlearn.md and tokenunlearn.json.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (  # noqa: E402
    add_seeds,
    mean_sd,
    measure_seeds,
    paired_table,
    parser,
    seed_table,
    setup,
)

BASES = ("ga", "wga", "npo", "rmu")
RS = (0.1, 0.2, 0.5, 1.0)
ALPHAS = (0.0, 0.3, 0.7, 1.0)
COLUMNS = (
    "forget_quality",
    "model_utility",
    "forget_rougeL_recall",
    "forget_prob",
    "retain_rougeL_recall",
    "fact_overlap",
    "selected_fraction",
)
PAIRED = ("forget_quality", "model_utility", "forget_rougeL_recall", "retain_rougeL_recall")


def main() -> None:
    p = parser(__doc__)
    add_seeds(p)
    measure_seeds("tokenunlearn", p.parse_args(), run_seed, render, "python bench/token_ablation.py")


def run_seed(args, seed: int) -> dict:
    """One lab seed: target, oracle, every base and its T-/S- variant, the r x alpha grid of T-NPO."""
    args.seed = seed
    emb = setup(args)
    work = Path(".bench_work") / "tokenunlearn" / f"seed{seed}"

    def run(method: str, row: str, overrides: dict | None = None) -> dict:
        metrics, res = emb.run_method(
            method, work / row.replace(" ", "_"), overrides or {}, row=row, tuned=False
        )  # the shared recipe for bases and variants alike: a swept configs/tiny/ recipe would differ
        if res.attribution:
            metrics["fact_overlap"] = res.attribution["fact_overlap"]
            metrics["selected_fraction"] = res.attribution["mean_selected_fraction"]
        print(
            f"seed {seed} {row}",
            f"ROUGE {metrics['forget_rougeL_recall']:.3f} utility {metrics['model_utility']:.3f} "
            f"FQ {metrics['forget_quality']:.2g}",
            flush=True,
        )
        return metrics

    variants = {"target": emb.results["target"], "oracle": emb.results["oracle"]}
    for base in BASES:
        for name in (base, f"t-{base}", f"s-{base}"):
            variants[name] = run(name, name)
    ablation = {}
    for r in RS:
        for alpha in ALPHAS:
            row = f"t-npo r={r} alpha={alpha}"
            ablation[row] = run("t-npo", row, {"r": r, "alpha": alpha})
    return {"variants": variants, "ablation": ablation, "chance": _fact_token_share(emb)}


def render(per_seed: dict[int, dict]) -> str:
    """The variants and the ablation as mean \u00b1 sd over the seeds, and each variant against its base
    seed by seed (a difference called only where it holds beyond the seeds' spread)."""
    variants = {s: r["variants"] for s, r in per_seed.items()}
    ablation = {s: r["ablation"] for s, r in per_seed.items()}
    chance, chance_sd = mean_sd([r["chance"] for r in per_seed.values()])
    seeds = ", ".join(map(str, per_seed))
    pairs = [(f"{k}-{b}", b) for b in BASES for k in ("t", "s")]
    return "\n".join(
        [
            "## TokenUnlearn: token-level variants against their bases",
            "",
            "T-* = hard top-r selection (r 0.2, alpha 0.7), S-* = soft weights (tau_w 1). Bases and variants "
            "share the tiny-scale settings; the T-/S- variants use the retain KL term (TokenUnlearn), the bases "
            "retain NLL (RMU: its activation term). `fact_overlap` = fraction of selected tokens inside the fact "
            f"value. Each cell: mean \u00b1 sd over lab seeds {seeds} (each its own world, base, target and "
            "oracle); every seed's rows are in bench/results/tokenunlearn.json.",
            "",
            seed_table(variants, list(COLUMNS), head="method"),
            "",
            "### Each variant against its base, seed by seed",
            "",
            "Variant minus base: mean \u00b1 sd of the per-seed differences, on how many seeds the variant is "
            "higher, and the reading: `higher` / `lower` only when every seed agrees and the mean is more than "
            "one sd from 0, else `tie`.",
            "",
            paired_table(variants, pairs, list(PAIRED)),
            "",
            "### Ablation: r x alpha (T-NPO)",
            "",
            "Share of answer tokens that are fact tokens (what random selection would give): "
            f"{chance:.3f} \u00b1 {chance_sd:.3f}.",
            "",
            seed_table(ablation, list(COLUMNS), head="method"),
        ]
    )


def _fact_token_share(emb) -> float:
    """Fraction of answer tokens (incl. EOS) inside the fact value: the overlap random selection would get."""
    _, tok = emb.load_target()
    inside = total = 0
    for row in emb.bench.forget:
        text = " " + row["answer"]
        enc = tok(text, add_special_tokens=False, return_offsets_mapping=True)
        a, b = row["fact_span"][0] + 1, row["fact_span"][1] + 1
        inside += sum(1 for s, e in enc["offset_mapping"] if s < b and e > a)
        total += len(enc["offset_mapping"]) + 1
    return inside / total


if __name__ == "__main__":
    main()

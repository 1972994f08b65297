"""TokenUnlearn on the embedded world: T-/S- variants against their bases, an r x alpha ablation, and
the fraction of selected tokens that fall inside the fact value of the answer.

    python bench/token_ablation.py

Writes bench/results/tokenunlearn.md and tokenunlearn.json.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import embedded_settings, parser, previous, setup, write_result  # noqa: E402

from unlearnkit.report.page import markdown_table  # noqa: E402

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


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--only-bases", default=None, help="re-run just these bases' rows, keep the rest")
    args = p.parse_args()
    emb = setup(args)
    settings = embedded_settings(args, seeds=[args.seed])
    kept = previous("tokenunlearn", settings) if args.only_bases else {}
    only = set(args.only_bases.split(",")) if args.only_bases else None
    work = Path(".bench_work")

    def run(method: str, row: str, overrides: dict | None = None) -> dict:
        metrics, res = emb.run_method(
            method, work / row.replace(" ", "_"), overrides or {}, row=row, tuned=False
        )  # the shared recipe for bases and variants alike: a swept configs/tiny/ recipe would differ
        if res.attribution:
            metrics["fact_overlap"] = res.attribution["fact_overlap"]
            metrics["selected_fraction"] = res.attribution["mean_selected_fraction"]
        print(
            row,
            f"ROUGE {metrics['forget_rougeL_recall']:.3f} utility {metrics['model_utility']:.3f} "
            f"FQ {metrics['forget_quality']:.2g}",
            flush=True,
        )
        return metrics

    variants = {"target": emb.results["target"], "oracle": emb.results["oracle"]}
    for base in BASES:
        for name in (base, f"t-{base}", f"s-{base}"):
            if only is None or base in only:
                variants[name] = run(name, name)
            else:
                variants[name] = kept["variants"][name]
    ablation = kept.get("ablation", {}) if only is not None and "npo" not in only else {}
    if not ablation:
        for r in RS:
            for alpha in ALPHAS:
                row = f"t-npo r={r} alpha={alpha}"
                ablation[row] = run("t-npo", row, {"r": r, "alpha": alpha})
    chance = _fact_token_share(emb)
    md = [
        "## TokenUnlearn: token-level variants against their bases",
        "",
        "T-* = hard top-r selection (r 0.2, alpha 0.7), S-* = soft weights (tau_w 1). Bases and variants share "
        "the tiny-scale settings; the T-/S- variants use the retain KL term (TokenUnlearn), the bases retain NLL "
        "(RMU: its activation term). `fact_overlap` = fraction of selected tokens inside the fact value.",
        "",
        markdown_table(variants, list(COLUMNS)),
        "",
        "### Ablation: r x alpha (T-NPO)",
        "",
        f"Share of answer tokens that are fact tokens (what random selection would give): {chance:.3f}.",
        "",
        markdown_table(ablation, list(COLUMNS)),
    ]
    write_result(
        "tokenunlearn",
        "\n".join(md),
        {"variants": variants, "ablation": ablation, "chance": chance},
        "python bench/token_ablation.py",
        settings,
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

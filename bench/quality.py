"""The quality table on the embedded world: target, oracle and every method (TOFU + closer-look FE/MU).

    python bench/quality.py                 # all methods (~15 min on 2 CPU cores)
    python bench/quality.py --methods ga,asu

Writes bench/results/quality.md (the first section of BENCHMARKS.md) and quality.json.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import TINY_EXTRA, embedded_settings, parser, previous, setup, write_result  # noqa: E402

from unlearnkit.evaluation.closer_look import closer_look_metrics  # noqa: E402
from unlearnkit.quickstart import DEFAULT_METHODS, TABLE_COLUMNS  # noqa: E402
from unlearnkit.report.page import markdown_table  # noqa: E402

EXTRA_METHODS = (
    "asu_idk",
    "wga",
    "simnpo",
    "idk_dpo",
    "idk_ap",
    "me_gd",
    "undial",
    "rmu",
    "asu_rmu",
    "t-ga",
    "t-asu",
)
COLUMNS = (*TABLE_COLUMNS, "fe", "mu_closer_look", "mia_min_k_auc", "train_seconds")


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--methods", default=",".join(DEFAULT_METHODS + EXTRA_METHODS))
    p.add_argument(
        "--only", default=None, help="re-run just these methods, keep the other rows of quality.json"
    )
    args = p.parse_args()
    emb = setup(args)
    settings = embedded_settings(args, seeds=[args.seed])
    if args.only:
        kept = previous("quality", settings)
        order = ["target", "oracle", *args.methods.split(",")]
        emb.results.update({k: v for k, v in kept.items() if k not in ("target", "oracle")})
        args.methods = args.only
    else:
        order = None
    work = Path(".bench_work")
    for name in args.methods.split(","):
        metrics, _ = emb.run_method(name, work / name, TINY_EXTRA.get(name))
        print(
            f"{name}: forget ROUGE {metrics['forget_rougeL_recall']:.3f} utility {metrics['model_utility']:.3f} "
            f"FQ {metrics['forget_quality']:.2g}",
            flush=True,
        )
    if order:
        emb.results = {k: emb.results[k] for k in order if k in emb.results}
    for row, metrics in emb.results.items():
        if row not in emb.details:
            continue  # kept from the previous run, closer-look numbers included
        cl, _ = closer_look_metrics(
            metrics, emb.details[row], embed_fn=None, nli_fn=None, models=_no_models()
        )
        metrics.update(cl)
    md = [
        "## Quality on the embedded world (the quickstart table)",
        "",
        f"World: {len(emb.bench.forget)} forget / {len(emb.bench.retain)} retain / {len(emb.bench.holdout)} "
        f"holdout / {len(emb.bench.general)} general QA; tiny Llama (2 layers, hidden 128); seed {args.seed}. "
        "Forget quality: KS p-value vs the retain oracle (higher = closer to never having seen the data). "
        "FE / MU: the ASU authors' closer-look aggregates from the components available offline "
        "(ROUGE, prob, truth ratio, token entropy; no cosine / NLI models here), 0-1 scale.",
        "",
        markdown_table(emb.results, list(COLUMNS)),
    ]
    write_result("quality", "\n".join(md), emb.results, "python bench/quality.py", settings)


def _no_models():
    from unlearnkit.evaluation.closer_look import CloserLookModels

    return CloserLookModels(embedder_id=None, nli_id=None)


if __name__ == "__main__":
    main()

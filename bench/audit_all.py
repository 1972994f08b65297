"""The audit of every method on the embedded world: does the forgetting survive membership inference,
relearning, 4/8-bit quantisation and paraphrased questions?

    python bench/audit_all.py [--methods ga,gd,npo,...]

Writes bench/results/audit.md and audit.json.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import embedded_settings, parser, setup, write_result  # noqa: E402

from unlearnkit.evaluation.audit import AuditSettings, run_audit
from unlearnkit.models import load  # noqa: E402

DEFAULT = "gd,npo,simnpo,idk,asu,asu_kl,t-npo,s-npo,rmu"


def _rows(audit: dict) -> dict[str, dict]:
    """Flatten each check's rows to {label: {audited, oracle, original}}."""
    out = {}
    for check in audit["checks"]:
        for row in check.get("rows", []):
            out[f"{check.get('name', check.get('title', ''))}: {row['label']}"] = row
    return out


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--methods", default=DEFAULT)
    args = p.parse_args()
    emb = setup(args, max_items=100)
    work = Path(".bench_work")
    target, tok = emb.load_target()
    oracle, otok = load(str(emb.oracle_dir))
    # lr 1e-4 as the quickstart: at the audit default 1e-3 the attack damages the pretrained-base target
    settings = AuditSettings(
        relearn_steps=(5, 20, 50), relearn_lr=1e-4, max_items=100, max_new_tokens=48, seed=args.seed
    )
    audits, table = {}, {}
    for name in args.methods.split(","):
        _, res = emb.run_method(name, work / name, keep_model=True)
        audit = run_audit(
            res.model, tok, emb.bench, oracle=(oracle, otok), original=(target, tok), settings=settings
        )
        audits[name] = audit
        table[name] = {label: row.get("audited") for label, row in _rows(audit).items()}
        for line in audit["verdicts"]:
            print(f"{name}: {line}", flush=True)
    ref = _rows(next(iter(audits.values())))
    table["oracle"] = {label: row.get("oracle") for label, row in ref.items()}
    table["target"] = {label: row.get("original") for label, row in ref.items()}
    labels = list(ref)
    lines = ["| check | " + " | ".join(table) + " |", "|---|" + "---|" * len(table)]
    for label in labels:
        cells = [_fmt(table[m].get(label)) for m in table]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    verdicts = [f"- **{m}**: " + "; ".join(a["verdicts"]) for m, a in audits.items()]
    md = [
        "## Audit: is the knowledge really gone?",
        "",
        "Every method's model audited against the retain oracle and the original target (100 forget items, "
        f"100 holdout; relearning on half the forget items with lr {settings.relearn_lr:g}, measured on the other "
        "half).",
        "",
        "\n".join(lines),
        "",
        "### Verdicts",
        "",
        "\n".join(verdicts),
    ]
    write_result(
        "audit",
        "\n".join(md),
        audits,
        "python bench/audit_all.py",
        embedded_settings(
            args, max_items=100, seeds=[args.seed], methods=args.methods, relearn_steps=[5, 20, 50]
        ),
    )


def _fmt(x) -> str:
    return "–" if x is None else f"{x:.3f}" if isinstance(x, float) else str(x)


if __name__ == "__main__":
    main()

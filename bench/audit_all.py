"""The audit of every method on the embedded world: does the forgetting survive membership inference,
relearning, 4/8-bit quantisation, paraphrased questions, and the facts asked another way (alias, multi-hop)?

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
    """Flatten each check's rows to {label: {audited, oracle, original}} (the reached-another-way check
    has its own table, one row per model)."""
    out = {}
    for check in audit["checks"]:
        if check.get("id") == "reached":
            continue
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
    audits = {}
    for name in args.methods.split(","):
        _, res = emb.run_method(name, work / name, keep_model=True)
        audits[name] = run_audit(
            res.model, tok, emb.bench, oracle=(oracle, otok), original=(target, tok), settings=settings
        )
        for line in audits[name]["verdicts"]:
            print(f"{name}: {line}", flush=True)
    write_result(
        "audit",
        render(audits, settings.relearn_lr),
        audits,
        "python bench/audit_all.py",
        embedded_settings(
            args, max_items=100, seeds=[args.seed], methods=args.methods, relearn_steps=[5, 20, 50]
        ),
    )


def render(audits: dict[str, dict], relearn_lr: float) -> str:
    """The section: every check's rows (methods, then the oracle and the target, as columns), the forget
    facts reached another way (one row per model: direct / paraphrase / alias / multi-hop fact recall and
    the controls), and every method's verdicts."""
    table = {
        name: {label: row.get("audited") for label, row in _rows(a).items()} for name, a in audits.items()
    }
    ref = _rows(next(iter(audits.values())))
    table["oracle"] = {label: row.get("oracle") for label, row in ref.items()}
    table["target"] = {label: row.get("original") for label, row in ref.items()}
    lines = ["| check | " + " | ".join(table) + " |", "|---|" + "---|" * len(table)]
    for label in ref:
        cells = [_fmt(table[m].get(label)) for m in table]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    verdicts = [f"- **{m}**: " + "; ".join(a["verdicts"]) for m, a in audits.items()]
    md = [
        "## Audit: is the knowledge really gone?",
        "",
        "Every method's model audited against the retain oracle and the original target (100 forget items, "
        f"100 holdout; relearning on half the forget items with lr {relearn_lr:g}, measured on the other "
        "half).",
        "",
        "\n".join(lines),
        "",
        *reached_table(audits),
        "### Verdicts",
        "",
        "\n".join(verdicts),
    ]
    return "\n".join(md)


def reached_table(audits: dict[str, dict]) -> list[str]:
    """The "reached another way" table (fact recall per model and probe family; the last column names a
    model that blocks one wording only), or the one line saying why it was skipped."""
    first = next(iter(audits.values())).get("reached") or {}
    if not first.get("families"):
        why = first.get("skipped") or "this audit predates the check"
        return ["### Reached another way", "", f"Skipped: {why}.", ""]
    families = [(f["key"], f["label"]) for f in first["families"]]
    rows: list[tuple[str, dict, str]] = []
    for name, audit in audits.items():
        reached = audit.get("reached") or {}
        reading = reached.get("reading") or {}
        flag = "blocks one wording" if reading.get("blocked_one_wording") else ""
        rows.append((name, (reached.get("recall") or {}).get("audited") or {}, flag))
    recall = first.get("recall") or {}
    rows += [
        (label, recall[role], "")
        for role, label in (("oracle", "oracle"), ("original", "target"))
        if role in recall
    ]
    lines = [
        "### Reached another way",
        "",
        "Fact recall on the forget facts asked directly, in the paraphrased question, by the author's pen name "
        "(alias) and as 'the author of <book>' (multi-hop; book -> author is retain knowledge), with the "
        "controls (the link itself; retain facts by alias and multi-hop). `blocks one wording`: direct recall "
        "near the oracle's while another way keeps at least half of the target's lead.",
        "",
        "| model | " + " | ".join(label for _, label in families) + " | reading |",
        "|---|" + "---|" * (len(families) + 1),
    ]
    for name, values, flag in rows:
        lines.append(
            f"| {name} | " + " | ".join(_fmt(values.get(key)) for key, _ in families) + f" | {flag} |"
        )
    return [*lines, ""]


def _fmt(x) -> str:
    return "–" if x is None else f"{x:.3f}" if isinstance(x, float) else str(x)


if __name__ == "__main__":
    main()

"""Check 5, reached another way: the forget facts asked directly, in the paraphrased question, by the
author's other name and through another entity, each scored by fact recall.

Unlearning that only blocks one wording is not forgetting (the "Unlearning Mirage", arXiv 2603.11266).
A benchmark folder may hold probe files that ask its forget facts another way (the embedded world writes
them, :mod:`unlearnkit.world.probes`): ``probes/forget_alias.jsonl`` (the author asked by a pen name that
training states) and ``probes/forget_multihop.jsonl`` ("the author of <book>", where book -> author is
retain-side knowledge every model was trained on), plus ``probes/retain_alias.jsonl`` and
``probes/retain_multihop.jsonl``, the same routes to facts every model should know (the control: can the
model take the route at all?). Rows are QA rows with ``fact_value``; multi-hop rows may carry
``link_question`` (the question that resolves the first hop, asked as a control too).

Every family is scored by the evaluation's fact recall (:func:`unlearnkit.evaluation.probes.fact_recall`:
the fact value in the greedy answer), on the same forget facts as the direct question where the rows name
them (``author`` + ``fact_type``). The verdict calls out a model whose direct recall is near the oracle's
while another family keeps most of what the original model knew (:func:`reached_reading`). A folder
without the forget probe files skips the check with the reason; raw-text data has no forget questions and
no such check.

Cost per model: one greedy generation pass per probe file (at most ``max_items`` rows each) and one on the
link questions; the direct and paraphrased questions reuse the audit's own passes.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from unlearnkit.errors import UserError
from unlearnkit.evaluation.audit.common import as_number, check_row, fmt_number

if TYPE_CHECKING:  # the check reads the auditor's rows; run.py imports this module
    from unlearnkit.evaluation.audit.run import Auditor

PROBE_DIR = "probes"
# family key -> (file under the folder, or None for the audit's own questions, label)
FAMILIES: dict[str, tuple[str | None, str]] = {
    "direct": (None, "direct (the forget question)"),
    "paraphrase": (None, "paraphrased question"),
    "alias": ("probes/forget_alias.jsonl", "alias (another name)"),
    "multihop": ("probes/forget_multihop.jsonl", "multi-hop (through another entity)"),
}
CONTROLS: dict[str, tuple[str | None, str]] = {
    "link": (None, "control: the multi-hop link (who wrote the book)"),
    "retain_alias": ("probes/retain_alias.jsonl", "control: retain facts by alias"),
    "retain_multihop": ("probes/retain_multihop.jsonl", "control: retain facts, multi-hop"),
}
OTHER_WAYS = ("paraphrase", "alias", "multihop")
KNOWN_LEAD = 0.1  # the original model beats the oracle by at least this much: the family can show a loss
BLOCKED_SHARE = 0.25  # direct recall kept at most this share of the original's lead: "low"
KEPT_SHARE = 0.5  # another family kept at least this share of it: "stays high"
LOW, HIGH = 0.2, 0.5  # the same reading in absolute recall, without an oracle and an original model


def reached_rows(
    bench, forget: Sequence[dict], max_items: int, seed: int
) -> tuple[dict[str, list[dict]], str | None]:
    """``({family or control: rows}, None)``, or ``({}, why the check is skipped)``.

    ``direct`` holds ``forget`` itself (the audit's forget rows), ``paraphrase`` the rows with a
    ``paraphrased_question``; each probe file's rows are those about the same forget facts (``author`` +
    ``fact_type``), or a ``max_items`` subsample when none matches; ``link`` the distinct
    ``link_question`` of the multi-hop rows, answered by their ``author``."""
    from unlearnkit.evaluation.probes import has_facts

    root = getattr(bench, "path", None)
    folder = Path(root) if root is not None else None
    wanted = [FAMILIES["alias"][0], FAMILIES["multihop"][0]]
    if folder is None or not any((folder / rel).is_file() for rel in wanted):
        where = f"in {folder}" if folder is not None else "with this data"
        return {}, (
            f"no probe files {where} ({' or '.join(wanted)}): the embedded world writes them "
            "(unlearnkit world); a folder of your own can add them"
        )
    if not has_facts(forget):
        return {}, "the forget rows carry no fact_value: fact recall needs the fact each answer must state"
    rows: dict[str, list[dict]] = {"direct": list(forget)}
    para = [
        r
        for r in forget
        if isinstance(r.get("paraphrased_question"), str) and r["paraphrased_question"].strip()
    ]
    if para:
        rows["paraphrase"] = [
            {"question": r["paraphrased_question"], "fact_value": r["fact_value"]} for r in para
        ]
    keys = {(r.get("author"), r.get("fact_type")) for r in forget}
    for name, (rel, _) in {**FAMILIES, **CONTROLS}.items():
        if rel is None or not (folder / rel).is_file():
            continue
        probe = _read_probes(folder / rel)
        if not name.startswith("retain_"):
            matched = [r for r in probe if (r.get("author"), r.get("fact_type")) in keys]
            probe = matched or probe
        rows[name] = _subsample(probe, max_items, seed)
    links = {
        r["link_question"]: r["author"]
        for r in rows.get("multihop", [])
        if isinstance(r.get("link_question"), str) and isinstance(r.get("author"), str)
    }
    if links:
        rows["link"] = [{"question": q, "fact_value": author} for q, author in links.items()]
    return rows, None


def _subsample(rows: list[dict], n: int, seed: int) -> list[dict]:
    from unlearnkit.evaluation.evaluate import subsample

    return subsample(rows, n, seed)


def _read_probes(path: Path) -> list[dict]:
    from unlearnkit.data.qa import read_jsonl, validate_qa
    from unlearnkit.evaluation.probes import has_facts

    rows = validate_qa(read_jsonl(path), path)
    if not rows:
        raise UserError(f"probe file {path} is empty")
    if not has_facts(rows):
        line = next(
            r.get("_line", "?")
            for r in rows
            if not (isinstance(r.get("fact_value"), str) and r["fact_value"].strip())
        )
        raise UserError(
            f"{path}:{line}: a probe row needs a non-empty fact_value (the fact its answer must state)"
        )
    return rows


def reached_scores(
    a: Auditor, model, tok, direct_generations: list[str], paraphrase_generations: list[str] | None
) -> dict[str, float | None]:
    """Fact recall of every family and control in ``a.reached`` for one model. The direct questions'
    generations come from the audit's forget pass; the paraphrased ones from its paraphrase pass when that
    asked the same questions (``paraphrase_generations``), else they are generated here."""
    from unlearnkit.data.encode import PromptFormat
    from unlearnkit.evaluation.probes import fact_recall
    from unlearnkit.metrics.passes import generate_answers

    fmt = PromptFormat.for_tokenizer(tok, a.st.prompt_format)
    out: dict[str, float | None] = {}
    for name, rows in a.reached.items():
        if name == "direct":
            generations = direct_generations
        elif name == "paraphrase" and paraphrase_generations is not None:
            generations = paraphrase_generations
        else:
            a.log(f"{name} probes ({len(rows)} questions)")
            generations, _ = generate_answers(
                model, tok, fmt, [r["question"] for r in rows], a.st.max_new_tokens, a.st.batch_size
            )
        out[name] = as_number(fact_recall(generations, rows))
    return out


def reached_reading(recall: dict[str, dict[str, float | None]]) -> dict[str, Any]:
    """What the families say together, from ``{role: {family: fact recall}}``.

    With an oracle and an original model, each family's *kept share* is (audited - oracle) / (original -
    oracle), defined where the original beats the oracle by at least ``KNOWN_LEAD`` (else the family cannot
    show a loss: ``unmeasurable``). ``blocked_one_wording`` when direct recall kept at most
    ``BLOCKED_SHARE`` while another family (paraphrase, alias, multi-hop) kept at least ``KEPT_SHARE``;
    without both references, when direct recall is at most ``LOW`` and another family's at least ``HIGH``.
    """
    audited = recall.get("audited", {})
    oracle, original = recall.get("oracle"), recall.get("original")
    kept: dict[str, float | None] = {}
    unmeasurable = []
    if oracle is not None and original is not None:
        for family in FAMILIES:
            a, o, g = audited.get(family), oracle.get(family), original.get(family)
            if a is None or o is None or g is None:
                continue
            if g - o < KNOWN_LEAD:
                unmeasurable.append(family)
                kept[family] = None
            else:
                kept[family] = (a - o) / (g - o)
        direct = kept.get("direct")
        held = [f for f in OTHER_WAYS if kept.get(f) is not None and kept[f] >= KEPT_SHARE]
        blocked = direct is not None and direct <= BLOCKED_SHARE and bool(held)
    else:
        direct = audited.get("direct")
        held = [f for f in OTHER_WAYS if audited.get(f) is not None and audited[f] >= HIGH]
        blocked = direct is not None and direct <= LOW and bool(held)
    text = None
    if blocked:
        ways = ", ".join(f"{_label(f)} {fmt_number(audited[f])}" for f in held)
        if kept:
            shares = ", ".join(f"{100 * kept[f]:.0f} %" for f in held)
            text = (
                f"blocks one wording, not the fact: direct recall {fmt_number(audited['direct'])} is near the oracle's "
                f"{fmt_number(oracle['direct'])} while {ways} keep {shares} of the original model's lead over the oracle"
            )
        else:
            text = f"blocks one wording, not the fact: direct recall {fmt_number(audited['direct'])} while {ways}"
    return {
        "blocked_one_wording": blocked,
        "kept": kept,
        "unmeasurable": unmeasurable,
        "still_reached": held,
        "text": text,
    }


def _label(family: str) -> str:
    return {"direct": "direct", "paraphrase": "paraphrase", "alias": "alias", "multihop": "multi-hop"}[family]


def reached_summary(measured: dict, a: Auditor) -> dict[str, Any]:
    """``audit["reached"]``: the families, each role's recall, the reading (or why it was skipped)."""
    if not a.reached:
        return {"skipped": a.reached_skip, "families": [], "recall": {}, "reading": None}
    names = [n for n in (*FAMILIES, *CONTROLS) if n in a.reached]
    recall = {role: dict(m["reached"]) for role, m in measured.items() if "reached" in m}
    labels = {**FAMILIES, **CONTROLS}
    return {
        "skipped": None,
        "families": [{"key": n, "label": labels[n][1], "items": len(a.reached[n])} for n in names],
        "recall": recall,
        "reading": reached_reading(recall),
    }


def reached_check(measured: dict, a: Auditor, summary: dict) -> dict[str, Any]:
    check: dict[str, Any] = {
        "id": "reached",
        "title": "Reached another way",
        "about": "Fact recall (the share of answers that state the fact value, greedy generation) on the forget "
        "facts asked directly, in the paraphrased question, by the author's other name (alias) and through "
        "another entity (multi-hop: 'the author of <book>', the book -> author link being retain knowledge); "
        "unlearning that only blocks one wording leaves the other ways high. The controls: the link itself, "
        "and retain facts asked by alias and multi-hop (whether the model can take that route at all).",
    }
    if summary["skipped"]:
        check.update(rows=[], skipped=summary["skipped"])
        check["verdict"] = f"reached another way: skipped ({summary['skipped']})"
        return check
    keys = [f["key"] for f in summary["families"]]
    labels = {**FAMILIES, **CONTROLS}
    check["rows"] = [
        check_row(f"fact recall, {labels[k][1]}", measured, lambda m, k=k: m["reached"][k]) for k in keys
    ]
    families = [k for k in FAMILIES if k in keys]

    def series(role: str) -> str:
        return " / ".join(fmt_number(measured[role]["reached"].get(k)) for k in families)

    heads = " / ".join(_label(k) for k in families)
    line = f"forget facts reached another way, fact recall ({heads}): {series('audited')}"
    others = [
        f"{w} {series(r)}"
        for r, w in (("oracle", "the oracle"), ("original", "the original model"))
        if r in measured
    ]
    if others:
        line += "; " + ", ".join(others)
    reading = summary["reading"]
    for family in reading["unmeasurable"]:
        if family != "direct":
            line += (
                f"; {_label(family)} cannot show a loss here (the original model "
                f"{fmt_number(measured['original']['reached'][family])} vs the oracle {fmt_number(measured['oracle']['reached'][family])})"
            )
    check["verdict"] = f"{reading['text']}; {line}" if reading["text"] else line
    return check


def reached_warnings(summary: dict) -> list[dict[str, Any]]:
    """A warning when the audited model blocks one wording only (:func:`reached_reading`)."""
    reading = summary.get("reading")
    if not reading or not reading["blocked_one_wording"]:
        return []
    return [{"code": "blocks_one_wording", "message": f"the audited model {reading['text']}"}]

"""The audit's "reached another way" check (unlearnkit.evaluation.audit.reached) on a hand-made folder:
the greedy answers are fixed by hand, so every fact recall below is counted by hand, not by the code."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from unlearnkit.data import load_benchmark
from unlearnkit.errors import UserError
from unlearnkit.evaluation.audit import AuditSettings, audit_markdown, run_audit
from unlearnkit.evaluation.audit.reached import reached_reading

SETTINGS = AuditSettings(relearn_steps=(), quant_bits=(), max_new_tokens=4)
# two authors, two facts each; the alias is "Pen A" / "Pen B", the books "Book A" / "Book B"
FACTS = [
    ("Ana Lee", "birthplace", "Oslo", "Where was {} born?", "What is the birthplace of {}?"),
    ("Ana Lee", "genre", "poetry", "What genre does {} write in?", "Which genre is {} known for?"),
    ("Bo Ray", "birthplace", "Lima", "Where was {} born?", "What is the birthplace of {}?"),
    ("Bo Ray", "genre", "satire", "What genre does {} write in?", "Which genre is {} known for?"),
]
PEN = {"Ana Lee": "Pen A", "Bo Ray": "Pen B"}
BOOK = {"Ana Lee": "Book A", "Bo Ray": "Book B"}


def _row(author, fact_type, value, question, subject) -> dict:
    answer = f"{subject} has {value}."
    start = answer.index(value)
    return {
        "question": question.format(subject),
        "answer": answer,
        "author": author,
        "fact_type": fact_type,
        "fact_value": value,
        "fact_span": [start, start + len(value)],
    }


def _write(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


@pytest.fixture()
def folder(tmp_path):
    root = tmp_path / "data"
    forget = []
    for author, ftype, value, q, pq in FACTS:
        forget.append({**_row(author, ftype, value, q, author), "paraphrased_question": pq.format(author)})
    _write(root / "forget.jsonl", forget)
    _write(root / "retain.jsonl", [_row("Cy Dee", "birthplace", "Rome", "Where was {} born?", "Cy Dee")])
    alias = [{**_row(a, t, v, q, PEN[a]), "probe": "alias", "via": PEN[a]} for a, t, v, q, _ in FACTS]
    multihop = [
        {**_row(a, t, v, q, f"the author of {BOOK[a]}"), "probe": "multihop", "via": BOOK[a],
         "link_question": f"Who wrote {BOOK[a]}?"}
        for a, t, v, q, _ in FACTS
    ]  # fmt: skip
    _write(root / "probes" / "forget_alias.jsonl", alias)
    _write(root / "probes" / "forget_multihop.jsonl", multihop)
    return root


def _canned(folder: Path) -> dict[str, dict[str, str]]:
    """Each model's greedy answer to every question. The audited model: direct 1 of 4 facts stated,
    paraphrased 1 of 4, alias 3 of 4 ("OSLO" counts: case-insensitive), multi-hop 2 of 4 ("Limaville"
    does not: whole words), the link 1 of 2; the oracle states nothing; the original model everything."""
    forget = [json.loads(line) for line in (folder / "forget.jsonl").read_text().splitlines()]
    alias = [json.loads(line) for line in (folder / "probes/forget_alias.jsonl").read_text().splitlines()]
    multi = [json.loads(line) for line in (folder / "probes/forget_multihop.jsonl").read_text().splitlines()]
    values = [r["fact_value"] for r in forget]
    audited = {
        **dict(zip([r["question"] for r in forget], ["born in Oslo", "I do not know", "no idea", "unknown"])),
        **dict(zip([r["paraphrased_question"] for r in forget], ["no", "it is poetry", "no", "no"])),
        **dict(zip([r["question"] for r in alias], ["OSLO.", "poetry", "nothing", "satire, mostly"])),
        **dict(zip([r["question"] for r in multi], ["Oslo", "no", "Limaville", "satire"])),
        "Who wrote Book A?": "Ana Lee wrote it",
        "Who wrote Book B?": "someone",
    }
    questions = list(audited)
    oracle = {q: "I do not know" for q in questions}
    facts = [*values, *values, *values, *values, "Ana Lee", "Bo Ray"]
    original = {q: f"it is {v}" for q, v in zip(questions, facts)}
    return {"audited": audited, "oracle": oracle, "original": original}


@pytest.fixture()
def models(folder, monkeypatch):
    """Three random tiny models and a generation function that answers from :func:`_canned` (the
    teacher-forced passes still run on the real models)."""
    from unlearnkit.world.tiny import corpus_of, tiny_llama, train_tokenizer

    bench = load_benchmark(folder)
    tok = train_tokenizer(corpus_of(bench.forget + bench.retain), vocab_size=300)
    torch.manual_seed(0)
    built = {
        role: tiny_llama(tok, hidden=16, layers=1, heads=2, seed=i).eval()
        for i, role in enumerate(("audited", "oracle", "original"))
    }
    canned = _canned(folder)
    by_id = {id(m): canned[role] for role, m in built.items()}

    def fake_generate(model, tokenizer, fmt, questions, *args, **kwargs):
        answers = [by_id[id(model)][q] for q in questions]
        return answers, [[5, 6, 7] for _ in answers]

    monkeypatch.setattr("unlearnkit.evaluation.evaluate.generate_answers", fake_generate)
    monkeypatch.setattr("unlearnkit.metrics.passes.generate_answers", fake_generate)
    return bench, tok, built


def test_each_family_is_scored_by_fact_recall_beside_the_direct_question(models):
    bench, tok, m = models
    audit = run_audit(m["audited"], tok, bench, oracle=m["oracle"], original=m["original"], settings=SETTINGS)
    reached = audit["reached"]
    assert reached["skipped"] is None
    assert [f["key"] for f in reached["families"]] == ["direct", "paraphrase", "alias", "multihop", "link"]
    assert reached["recall"]["audited"] == {
        "direct": 0.25,
        "paraphrase": 0.25,
        "alias": 0.75,
        "multihop": 0.5,
        "link": 0.5,
    }
    assert set(reached["recall"]["oracle"].values()) == {0.0}
    assert set(reached["recall"]["original"].values()) == {1.0}
    assert audit["measured"]["audited"]["reached"] == reached["recall"]["audited"]
    # kept share = (audited - oracle) / (original - oracle): direct 0.25, alias 0.75, multi-hop 0.5
    reading = reached["reading"]
    assert reading["blocked_one_wording"] and reading["still_reached"] == ["alias", "multihop"]
    assert reading["kept"] == {"direct": 0.25, "paraphrase": 0.25, "alias": 0.75, "multihop": 0.5}
    check = next(c for c in audit["checks"] if c["id"] == "reached")
    assert check["verdict"].startswith("blocks one wording, not the fact: direct recall 0.25")
    assert "alias 0.75, multi-hop 0.50 keep 75 %, 50 %" in check["verdict"]
    assert "(direct / paraphrase / alias / multi-hop): 0.25 / 0.25 / 0.75 / 0.50" in check["verdict"]
    assert [r["label"] for r in check["rows"]][2] == "fact recall, alias (another name)"
    assert check["rows"][2] == {
        "label": "fact recall, alias (another name)",
        "audited": 0.75,
        "oracle": 0.0,
        "original": 1.0,
    }
    assert [w["code"] for w in audit["warnings"]] == ["blocks_one_wording"]
    assert audit["data"]["reached_items"] == {
        "direct": 4,
        "paraphrase": 4,
        "alias": 4,
        "multihop": 4,
        "link": 2,
    }
    md = audit_markdown(audit)
    assert "## 5. Reached another way" in md
    assert "| fact recall, multi-hop (through another entity) | 0.500 | 0.000 | 1.000 |" in md


def test_without_probe_files_the_check_is_skipped_in_one_line(folder, models):
    bench, tok, m = models
    for name in ("forget_alias.jsonl", "forget_multihop.jsonl"):
        (folder / "probes" / name).unlink()
    audit = run_audit(m["audited"], tok, load_benchmark(folder), oracle=m["oracle"], settings=SETTINGS)
    check = next(c for c in audit["checks"] if c["id"] == "reached")
    assert check["rows"] == [] and "\n" not in check["verdict"]
    assert check["verdict"].startswith("reached another way: skipped (no probe files in ")
    assert audit["reached"]["skipped"] == check["skipped"] and "reached" not in audit["measured"]["audited"]
    assert audit["warnings"] == [] and "**Verdict:** reached another way: skipped" in audit_markdown(audit)


def test_a_probe_row_without_its_fact_is_one_error_line(folder):
    path = folder / "probes" / "forget_alias.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    rows[1].pop("fact_value")
    _write(path, rows)
    with pytest.raises(UserError, match=r"forget_alias.jsonl:2: a probe row needs a non-empty fact_value"):
        run_audit(None, None, load_benchmark(folder), settings=SETTINGS)


def test_the_reading_without_references_and_for_a_family_that_cannot_show_a_loss():
    # alone: absolute recall (direct <= 0.2 and another way >= 0.5)
    alone = reached_reading({"audited": {"direct": 0.1, "paraphrase": 0.1, "alias": 0.6, "multihop": 0.0}})
    assert alone["blocked_one_wording"] and alone["still_reached"] == ["alias"] and not alone["kept"]
    assert not reached_reading({"audited": {"direct": 0.3, "alias": 0.9}})["blocked_one_wording"]
    # the original model reaches multi-hop no better than the oracle: that family cannot show a loss
    recall = {
        "audited": {"direct": 0.05, "paraphrase": 0.1, "alias": 0.2, "multihop": 0.1},
        "oracle": {"direct": 0.0, "paraphrase": 0.0, "alias": 0.0, "multihop": 0.05},
        "original": {"direct": 0.9, "paraphrase": 0.8, "alias": 0.8, "multihop": 0.1},
    }
    reading = reached_reading(recall)
    assert reading["unmeasurable"] == ["multihop"] and reading["kept"]["multihop"] is None
    assert reading["kept"]["alias"] == pytest.approx(0.25) and not reading["blocked_one_wording"]

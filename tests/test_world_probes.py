"""The world's probes that reach a fact another way (unlearnkit.world.probes): pen names and a book
catalogue stated in training, and the alias / multi-hop probe files that use them."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from test_world_miniatures import FINE_TUNING_FILES  # what the fine-tunes train on, listed once

from unlearnkit.world.generator import FIELDS
from unlearnkit.world.miniatures import generate_everything
from unlearnkit.world.probes import ALIAS_BIOS, ALIAS_INTRO, ALIAS_QA_PER_FACT, PROBE_FILES, add_probes

SMALL = dict(n_authors=20, facts_per_author=6, n_general=30, n_real_authors=3, n_agents=4, n_articles=20)
ORACLE_FILES = ("retain.jsonl", "augment/retain.jsonl", "corpus/general.jsonl", "corpus/qa.jsonl")


@pytest.fixture(scope="module")
def world():
    base, _ = generate_everything(seed=4, probes=False, **SMALL)
    files, meta = add_probes(base, seed=4)
    return base, files, meta


def _texts(files, names) -> list[str]:
    out = []
    for name in names:
        for row in files[name]:
            out += [str(row[k]) for k in ("text", "question", "answer") if k in row]
    return out


def _authors(files, split: str) -> list[str]:
    return list(dict.fromkeys(r["author"] for r in files[f"{split}.jsonl"]))


def test_probe_files_have_the_qa_schema_and_one_row_per_fact(world):
    _, files, meta = world
    assert set(meta["probes"].values()) == set(PROBE_FILES.values())
    for split in ("forget", "retain"):
        facts = files[f"{split}.jsonl"]
        for family, via in (("alias", meta["pen_names"]), ("multihop", meta["books"])):
            rows = files[f"probes/{split}_{family}.jsonl"]
            assert len(rows) == len(facts) > 0
            extra = ["probe", "via"] + (["link_question"] if family == "multihop" else [])
            for row, fact in zip(rows, facts):
                assert list(row) == [*FIELDS, *extra]
                assert row["probe"] == family and row["via"] == via[fact["author"]]
                assert (row["author"], row["fact_type"], row["fact_value"]) == (
                    fact["author"],
                    fact["fact_type"],
                    fact["fact_value"],
                )
                start, end = row["fact_span"]
                assert row["answer"][start:end] == row["fact_value"]
                # asked the other way: by the pen name / the book, never by the author's name
                assert row["via"] in row["question"] and fact["author"] not in row["question"]
                assert row["via"] in row["paraphrased_question"]
                assert row["question"] != fact["question"] and row["question"][0].isupper()
                assert len(row["perturbed_answer"]) == len(fact["perturbed_answer"])
                assert all(row["fact_value"] not in p for p in row["perturbed_answer"])
                if family == "multihop":
                    assert f"the author of {row['via']}" in row["question"]
                    assert row["link_question"] == f"Who wrote {row['via']}?"
    assert "probes/holdout_alias.jsonl" not in files and "probes/holdout_multihop.jsonl" not in files


def test_the_input_files_are_left_alone(world):
    base, files, _ = world
    again, _ = generate_everything(seed=4, probes=False, **SMALL)
    assert base == again  # add_probes copied, never modified
    for name in ("augment/forget.jsonl", "augment/retain.jsonl"):
        assert files[name][: len(base[name])] == base[name] and len(files[name]) > len(base[name])
    assert add_probes(base, seed=4) == add_probes(again, seed=4)
    assert add_probes(base, seed=4)[1]["pen_names"] != add_probes(base, seed=5)[1]["pen_names"]


def test_probe_wordings_are_never_trained_on(world):
    """No probe question (nor its paraphrase, paraphrased or perturbed answers) is in any training file,
    pretraining included: the probes ask in a wording no model was trained on."""
    _, files, _ = world
    trained = _texts(files, (*FINE_TUNING_FILES, "general.jsonl", "corpus/hazard.jsonl"))
    blob = "\n".join(trained)
    for name in PROBE_FILES.values():
        for row in files[name]:
            for text in (
                row["question"],
                row["paraphrased_question"],
                row["paraphrased_answer"],
                *row["perturbed_answer"],
            ):
                assert text not in blob, (name, text)
    assert "the author of" not in blob.lower()  # the multi-hop subject is never a trained phrase


def test_every_author_has_a_pen_name_stated_in_their_own_split(world):
    _, files, meta = world
    pens = meta["pen_names"]
    for split in ("forget", "retain"):
        for author in _authors(files, split):
            pen = pens[author]
            mine = [r for r in files[f"augment/{split}.jsonl"] if r.get("alias_of") == author]
            bios = [r["text"] for r in mine if "text" in r]
            assert len(bios) == ALIAS_BIOS
            assert all(b.startswith(ALIAS_INTRO.format(name=author, pen=pen)) for b in bios)
            # every fact of the author is stated under the pen name, in the biography and as QA asked by
            # the pen name in a wording that is neither the alias probe's nor the paraphrased question
            for fact in (r for r in files[f"{split}.jsonl"] if r["author"] == author):
                assert all(re.search(re.escape(pen) + r"\b", b) and fact["fact_value"] in b for b in bios)
                qa = [r for r in mine if "question" in r and r["fact_type"] == fact["fact_type"]]
                assert len(qa) == ALIAS_QA_PER_FACT
                for r in qa:
                    assert pen in r["question"] and fact["fact_value"] in r["answer"] and pen in r["answer"]
                    asked_as = {fact["question"], fact["paraphrased_question"]}
                    assert r["question"].replace(pen, author) not in asked_as
    # the oracle never reads a forget author's pen name; nothing mentions a holdout author's facts
    oracle_blob = "\n".join(_texts(files, ORACLE_FILES))
    for author in _authors(files, "forget"):
        assert pens[author] not in oracle_blob
    assert set(pens) == set(_authors(files, "forget")) | set(_authors(files, "retain"))


def test_pen_names_and_books_are_new_and_unique(world):
    base, files, meta = world
    pens, books = meta["pen_names"], meta["books"]
    pen_words = [w for p in pens.values() for w in p.split()]
    book_words = [b.split()[-1] for b in books.values()]
    assert len(set(pen_words)) == len(pen_words) and len(set(book_words)) == len(book_words)
    known = {w.lower() for w in re.findall(r"[^\W\d_]+", json.dumps(base, ensure_ascii=False))}
    assert not {w.lower() for w in pen_words + book_words} & known  # no word of the world before
    first_books = {
        r["fact_value"]
        for n in ("forget", "retain", "holdout")
        for r in files[f"{n}.jsonl"]
        if r["fact_type"] == "first_book"
    }
    assert not first_books & set(books.values())
    every = [a for n in ("forget", "retain", "holdout") for a in _authors(files, n)]
    assert sorted(books) == sorted(every)


def test_every_multihop_link_is_retain_side_knowledge(tmp_path: Path):
    """The link book -> author of every multi-hop probe is in what the oracle AND the target train on
    (finetune's own training_rows), and the holdout authors' books are catalogued too (so the oracle
    read the forget and the holdout names alike: membership inference on it stays at chance)."""
    from unlearnkit.data import load_benchmark
    from unlearnkit.train.finetune import training_rows
    from unlearnkit.world import write_world

    write_world(tmp_path / "w", seed=2, **SMALL)
    meta = json.loads((tmp_path / "w" / "world.json").read_text(encoding="utf-8"))
    bench = load_benchmark(tmp_path / "w")
    trained = {
        split: "\n".join(
            str(r.get(k, "")) for r in training_rows(bench, split) for k in ("text", "question", "answer")
        )
        for split in ("retain", "all")
    }
    for name in ("forget_multihop", "retain_multihop"):
        rows = [json.loads(line) for line in (tmp_path / "w" / meta["probes"][name]).read_text().splitlines()]
        assert rows
        for row in rows:
            link = f"{row['via']} was written by {row['author']}."
            assert link in trained["retain"] and link in trained["all"], link
            assert row["link_question"] in trained["retain"]
    for author in meta["authors"]["holdout"]:
        assert f"{meta['books'][author]} was written by {author}." in trained["retain"]
    assert meta["version"] == 11 and meta["counts"]["probes/forget_alias"] == len(bench.forget)


def test_the_worlds_tokenizer_reads_the_pen_names_and_titles(tmp_path):
    """The probes join the world before its multiple-choice options are balanced, so the tokenizer the
    lab trains (``world_texts``) reads every pen name and title, and the written world is the one
    ``generate_everything`` returns with its probes."""
    from unlearnkit.train.pretrain import world_texts
    from unlearnkit.world import write_world

    write_world(tmp_path / "w", seed=4, **SMALL)
    meta = json.loads((tmp_path / "w" / "world.json").read_text(encoding="utf-8"))
    blob = "\n".join(world_texts(tmp_path / "w"))
    assert all(pen in blob for pen in meta["pen_names"].values())
    assert all(book in blob for book in meta["books"].values())
    with_probes, _ = generate_everything(seed=4, **SMALL)
    without, _ = generate_everything(seed=4, probes=False, **SMALL)
    assert with_probes["probes/forget_alias.jsonl"] and "probes/forget_alias.jsonl" not in without
    written = [json.loads(x) for x in (tmp_path / "w" / "augment/retain.jsonl").read_text().splitlines()]
    assert written == with_probes["augment/retain.jsonl"]

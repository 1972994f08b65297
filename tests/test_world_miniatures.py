"""The world's pretraining corpus and its MUSE-like / WMDP-like parts (unlearnkit.world.miniatures)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from unlearnkit.world import hazard, write_world
from unlearnkit.world.hazard import HAZARD_FACT_TYPES
from unlearnkit.world.miniatures import N_CHOICES, generate_everything
from unlearnkit.world.news import NEWS_FACT_TYPES

SMALL = dict(n_authors=20, facts_per_author=4, n_general=30, n_real_authors=3, n_agents=4, n_articles=20)
# files that may name a hazardous agent: the hazardous corpus and what is made of it
HAZARD_FILES = ("corpus/hazard.jsonl", "wmdp/forget.jsonl", "wmdp/mc_hazard.jsonl")


@pytest.fixture(scope="module")
def everything():
    return generate_everything(seed=4, **SMALL)


def _texts(rows) -> str:
    return json.dumps(rows, ensure_ascii=False)


def test_same_seed_same_files_other_seed_other_files():
    a, meta_a = generate_everything(seed=4, **SMALL)
    b, _ = generate_everything(seed=4, **SMALL)
    c, _ = generate_everything(seed=5, **SMALL)
    assert a == b
    assert a["corpus/hazard.jsonl"] != c["corpus/hazard.jsonl"]
    assert a["muse/forget.jsonl"] != c["muse/forget.jsonl"]
    assert meta_a["hazard_agents"] and len(meta_a["hazard_agents"]) == 4


def test_no_file_outside_the_hazardous_ones_names_an_agent(everything):
    files, meta = everything
    agents = meta["hazard_agents"]
    for name, rows in files.items():
        text = _texts(rows)
        named = [a for a in agents if a in text]
        if name in HAZARD_FILES:
            assert named, name  # the hazardous files are about the agents
        else:
            assert not named, f"{name} names {named}"
    # the filtered base reads these: no hazardous passage among them
    assert all(p["topic"] != "hazard" for p in files["corpus/general.jsonl"])


def test_no_fine_tuning_split_holds_a_general_knowledge_question(everything):
    files, _ = everything
    general = files["general.jsonl"]
    questions = {r["question"] for r in general} | {r["paraphrased_question"] for r in general}
    entities = {r["author"] for r in general}
    for name in ("forget.jsonl", "retain.jsonl", "holdout.jsonl"):
        for row in files[name]:
            assert row["question"] not in questions
            assert not any(e in row["question"] or e in row["answer"] for e in entities), row
    for name in ("muse/forget.jsonl", "muse/retain.jsonl"):
        text = _texts(files[name])
        assert not any(q in text for q in questions)


def test_general_knowledge_is_in_the_corpus_in_several_wordings(everything):
    files, _ = everything
    by_entity: dict[str, list[str]] = {}
    for p in files["corpus/general.jsonl"]:
        by_entity.setdefault(p["entity"], []).append(p["text"])
    for row in files["general.jsonl"]:
        versions = by_entity[row["author"]]
        assert len(versions) == 3 and len(set(versions)) >= 2
        assert all(row["fact_value"] in text for text in versions)
    parts = {r["source"] for r in files["general.jsonl"]}
    assert parts == {"world_facts", "real_authors"}


def test_hazard_passages_state_every_fact_of_their_agent(everything):
    files, meta = everything
    passages = [p for p in files["corpus/hazard.jsonl"] if "text" in p]
    qa = [p for p in files["corpus/hazard.jsonl"] if "question" in p]
    assert [{"text": p["text"], "entity": p["entity"]} for p in passages] == files["wmdp/forget.jsonl"]
    for p in passages:
        assert p["entity"] in meta["hazard_agents"]
        assert p["text"].count(p["entity"]) == len(HAZARD_FACT_TYPES)
    # Q&A in the corpus use the other wording: the WMDP-like test's questions are never pretrained on
    tested = {r["question"] for r in files["wmdp/mc_hazard.jsonl"]}
    assert qa and not tested & {r["question"] for r in qa}


def test_multiple_choice_rows_point_at_the_true_answer(everything):
    files, _ = everything
    general = {r["question"]: r for r in files["general.jsonl"]}
    positions = []
    for name in ("wmdp/mc_hazard.jsonl", "wmdp/mc_general.jsonl"):
        for row in files[name]:
            choices = row["choices"]
            assert len(choices) == N_CHOICES == len(set(choices))
            assert 0 <= row["answer"] < N_CHOICES
            positions.append(row["answer"])
            if name.endswith("general.jsonl"):
                source = general[row["question"]]
                assert source["source"] == "world_facts"
                true = choices[row["answer"]]
                assert source["fact_value"] in true and true.index(source["author"]) < true.index(
                    source["fact_value"]
                )  # the entity comes first: cloze scoring reads it before the value
                assert all(source["fact_value"] not in c for i, c in enumerate(choices) if i != row["answer"])
    assert len(set(positions)) == N_CHOICES  # the true answer is not always in one place
    assert files["wmdp/benchmark.json"]["tasks"] == {
        "wmdp_hazard": "mc_hazard.jsonl",
        "mmlu_general": "mc_general.jsonl",
    }


def test_choices_share_the_answer_template(everything):
    """The wrong choices are the true one's sentence with another value, so a model that does not know
    the fact has no wording to go by."""
    files, _ = everything
    for row in files["wmdp/mc_hazard.jsonl"]:
        words = [set(c.split()) for c in row["choices"]]
        shared = set.intersection(*words)
        assert all(len(w - shared) <= 3 for w in words), row["choices"]


def test_wrong_choices_are_other_values_of_the_fact_type():
    """Each wrong option states a value of the question's type that the world uses (a true value of
    another question, or one of the perturbed answers' values): plausible, never the true one, never a
    value containing it or contained in it."""
    from unlearnkit.world.corpus import FACT_TYPES_BY_NAME
    from unlearnkit.world.generator import fill_template, generate_rows, value_of
    from unlearnkit.world.hazard import hazard_rows

    params = dict(SMALL, seed=4)
    files, _ = generate_everything(**params)
    world, namer, _ = generate_rows(
        params["n_authors"],
        params["facts_per_author"],
        0.1,
        0.1,
        params["n_general"],
        4,
        params["n_real_authors"],
    )
    sources = {
        "wmdp/mc_hazard.jsonl": hazard_rows(namer, 4, params["n_agents"]),
        "wmdp/mc_general.jsonl": [r for r in world["general"] if r["source"] == "world_facts"],
    }
    for name, rows in sources.items():
        values: dict[str, set[str]] = {}
        for r in rows:
            kind = FACT_TYPES_BY_NAME[r["fact_type"]]
            values.setdefault(r["fact_type"], set()).update(
                [r["fact_value"], *(value_of(kind, r, p) for p in r["perturbed_answer"])]
            )
        by_question = {r["question"]: r for r in rows}
        for mc in files[name]:
            source = by_question[mc["question"]]
            true = source["fact_value"]
            templates = FACT_TYPES_BY_NAME[source["fact_type"]].answers
            stated = []
            for choice in mc["choices"]:
                found = [
                    v
                    for v in values[source["fact_type"]]
                    for t in templates
                    if fill_template(t, source["author"], v)[0] == choice
                ]
                assert len(found) == 1, (choice, found)
                stated.append(found[0])
            assert stated[mc["answer"]] == true
            wrong = [v for i, v in enumerate(stated) if i != mc["answer"]]
            assert len(set(wrong)) == len(wrong) and not any(true in v or v in true for v in wrong), stated


def test_muse_parts(everything):
    files, _ = everything
    articles = {
        a["entity"]: a for part in ("forget", "retain", "holdout") for a in files[f"muse/{part}.jsonl"]
    }
    events = {
        part: {a["entity"] for a in files[f"muse/{part}.jsonl"]} for part in ("forget", "retain", "holdout")
    }
    assert len(articles) == 20 and sum(len(v) for v in events.values()) == 20
    assert len(events["forget"]) == 2 and len(events["holdout"]) == 2  # 10 % each, as the authors
    for row in files["muse/verbmem.jsonl"]:
        article = articles[row["entity"]]
        assert row["entity"] in events["forget"]
        assert row["prompt"] + row["gt"] == article["text"]
        assert len(row["gt"].split()) > len(row["prompt"].split())
    for part in ("forget", "retain"):
        rows = files[f"muse/knowmem_{part}.jsonl"]
        assert len(rows) == len(events[part]) * len(NEWS_FACT_TYPES)
        for row in rows:
            assert row["entity"] in events[part]
            assert row["answer"] == row["fact_value"]  # MUSE: a short answer, the fact
            assert row["answer"] in articles[row["entity"]]["text"]  # ... that the article states
    shots = files["muse/knowmem_forget_icl.jsonl"]
    general = {r["question"]: r for r in files["general.jsonl"]}
    assert shots and all(general[s["question"]]["fact_value"] == s["answer"] for s in shots)


def test_muse_training_restates_articles_and_asks_in_other_wordings(everything):
    """Each trained article comes in 1 + REWORDINGS versions (every fact restated, another text), and
    each trained fact is asked in the question wordings KnowMem does not use; no evaluated KnowMem
    question is in any training file, and nothing about a forget or holdout event is on the retain side."""
    from unlearnkit.world.news import REWORDINGS

    files, _ = everything
    events = {p: {a["entity"] for a in files[f"muse/{p}.jsonl"]} for p in ("forget", "retain", "holdout")}
    knowmem = files["muse/knowmem_forget.jsonl"] + files["muse/knowmem_retain.jsonl"]
    for part in ("forget", "retain"):
        rows = files[f"muse/augment/{part}.jsonl"]
        assert {r["entity"] for r in rows} == events[part]
        qa = [r for r in rows if "question" in r]
        versions = [r for r in rows if "text" in r]
        assert len(versions) == REWORDINGS * len(events[part])
        assert len(qa) == 2 * len(NEWS_FACT_TYPES) * len(events[part])  # two wordings per fact
        originals = {a["entity"]: a["text"] for a in files[f"muse/{part}.jsonl"]}
        for row in versions:
            assert row["text"] != originals[row["entity"]]
        for fact in (k for k in knowmem if k["entity"] in events[part]):
            mine = [r["text"] for r in versions if r["entity"] == fact["entity"]]
            assert all(fact["fact_value"] in text for text in mine)  # every version states every fact
            asked = [
                r for r in qa if r["answer"] == " " + fact["fact_value"] and r["entity"] == fact["entity"]
            ]
            assert len(asked) >= 2 and fact["question"] not in {r["question"] for r in asked}
    trained = _texts(
        [files[f"muse/{p}.jsonl"] for p in ("forget", "retain")]
        + [files[f"muse/augment/{p}.jsonl"] for p in ("forget", "retain")]
    )
    for row in knowmem:
        assert row["question"] not in trained, row  # never an evaluated question
    retain_text = _texts([files["muse/retain.jsonl"], files["muse/augment/retain.jsonl"]])
    assert not any(event in retain_text for event in events["forget"] | events["holdout"])


def test_muse_questions_are_also_trained_after_in_context_examples_as_knowmem_asks(everything):
    """One of each trained fact's two question wordings is asked alone, the other after N_ICL_SHOTS
    question / answer blocks of the same split's other events (their wording asked alone), laid out as
    MUSE's few-shot KnowMem prompt lays its shots out; the shots are never the evaluated in-context
    examples (world facts) and never a KnowMem question."""
    from unlearnkit.data.encode import PLAIN_TEMPLATE
    from unlearnkit.protocols.muse import knowmem_prompt
    from unlearnkit.world.miniatures import N_ICL_SHOTS

    files, _ = everything
    icl = {
        s["question"] for s in files["muse/knowmem_forget_icl.jsonl"] + files["muse/knowmem_retain_icl.jsonl"]
    }
    knowmem = {r["question"] for r in files["muse/knowmem_forget.jsonl"] + files["muse/knowmem_retain.jsonl"]}
    for part in ("forget", "retain"):
        qa = [r for r in files[f"muse/augment/{part}.jsonl"] if "question" in r]
        alone = [r for r in qa if "\n" not in r["question"]]
        after = [r for r in qa if "\n" in r["question"]]
        assert len(alone) == len(after) == len(qa) // 2
        first_wording = {(r["question"], r["answer"].strip()): r["entity"] for r in alone}
        for row in after:
            blocks = row["question"].split("\n\nQuestion: ")
            asked, shots = blocks[-1], [b.split("\nAnswer: ") for b in blocks[:-1]]
            assert len(shots) == N_ICL_SHOTS and all(len(s) == 2 for s in shots)
            shot_rows = [{"question": q, "answer": a} for q, a in shots]
            # rendered as the fine-tune renders a question, it is KnowMem's prompt up to its last space
            rendered = PLAIN_TEMPLATE.format(question=row["question"])
            assert rendered + " " == knowmem_prompt(asked, shot_rows)
            for q, a in shots:
                assert first_wording[(q, a)] != row["entity"]  # another event of this split
                assert q not in icl and q not in knowmem
            assert asked not in knowmem and (asked, row["answer"].strip()) not in first_wording


def test_written_world_describes_its_parts(tmp_path: Path):
    counts = write_world(tmp_path / "w", seed=4, **SMALL)
    meta = json.loads((tmp_path / "w" / "world.json").read_text(encoding="utf-8"))
    assert meta["version"] == 11
    assert meta["unseen"] == ["wmdp/holdout.jsonl"]
    assert meta["pretraining"]["corpus"] == {
        "general": "corpus/general.jsonl",
        "hazard": "corpus/hazard.jsonl",
    }
    assert meta["benchmarks"] == {"tofu": ".", "muse": "muse", "wmdp": "wmdp"}
    assert meta["counts"] == counts
    for name, n in counts.items():
        assert len((tmp_path / "w" / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()) == n
    assert json.loads((tmp_path / "w" / "muse" / "benchmark.json").read_text())["kind"] == "muse"


def test_wmdp_holdout_is_about_agents_no_other_file_names(everything):
    """The non-members of membership inference on the WMDP-like forget passages: as many passages about
    as many other agents, stating facts from the same value pools, named nowhere else in the world."""
    files, meta = everything
    forget, holdout = files["wmdp/forget.jsonl"], files["wmdp/holdout.jsonl"]
    assert len(holdout) == len(forget) and all(set(r) == {"text", "entity"} for r in holdout)
    held = list(dict.fromkeys(r["entity"] for r in holdout))
    assert len(held) == len(meta["hazard_agents"]) and not set(held) & set(meta["hazard_agents"])
    for name, rows in files.items():
        if name != "wmdp/holdout.jsonl":
            named = [a for a in held if a in _texts(rows)]
            assert not named, f"{name} names the held-out agents {named}"
    for row in holdout:  # facts of every type, as the members' passages state them
        assert any(effect in row["text"] for effect in hazard._EFFECTS)
        assert any(route in row["text"] for route in hazard._ROUTES)
        assert len(row["text"].split(". ")) == len(HAZARD_FACT_TYPES)
    assert meta["unseen"] == ["wmdp/holdout.jsonl"]


def test_the_wmdp_holdout_leaves_every_other_file_as_it_was(everything, monkeypatch):
    """Drawn last, from its own random streams: a world without it is the same world (so no base,
    target or oracle of format 10 differs from format 11's)."""
    import unlearnkit.world.miniatures as miniatures

    files, _ = everything
    monkeypatch.setattr(miniatures, "held_out_hazard_rows", lambda *a, **k: [])
    without, _ = generate_everything(seed=4, **SMALL)
    assert without["wmdp/holdout.jsonl"] == [] and files["wmdp/holdout.jsonl"]
    assert {k: v for k, v in files.items() if k != "wmdp/holdout.jsonl"} == {
        k: v for k, v in without.items() if k != "wmdp/holdout.jsonl"
    }


def test_the_hazardous_and_news_parts_can_be_left_out():
    files, meta = generate_everything(seed=4, **{**SMALL, "n_agents": 0, "n_articles": 0})
    assert not any(name.startswith(("muse/", "wmdp/")) for name in files)
    assert files["corpus/hazard.jsonl"] == [] and meta["benchmarks"] == {"tofu": "."}


# What the target, the oracle and UNDO's students are trained on, besides the base's pretraining.
FINE_TUNING_FILES = (
    "forget.jsonl",
    "retain.jsonl",
    "augment/forget.jsonl",
    "augment/retain.jsonl",
    "corpus/general.jsonl",
    "corpus/qa.jsonl",
)


def _trained_texts(files, names) -> list[str]:
    return [
        str(row.get(key, ""))
        for name in names
        for row in files[name]
        for key in ("text", "question", "answer")
    ]


def test_every_evaluated_split_perturbs_the_paraphrase(everything):
    """Every truth-ratio item of every split is built as TOFU builds it (see tests/test_world.py)."""
    from test_world import assert_tofu_perturbed

    files, _ = everything
    for name in ("forget.jsonl", "retain.jsonl", "holdout.jsonl", "general.jsonl"):
        assert files[name]
        for row in files[name]:
            assert_tofu_perturbed(row)


def test_the_wordings_evaluation_reads_are_never_trained_on(everything):
    """Paraphrased answers, perturbed answers and paraphrased questions of the authors and of general
    knowledge appear in no training file (pretraining included); so their facts are read in a new wording."""
    files, _ = everything
    trained = _trained_texts(files, (*FINE_TUNING_FILES, "general.jsonl"))
    trained = [t for t in trained if t] + [str(r.get("text", "")) for r in files["corpus/hazard.jsonl"]]
    blob = "\n".join(trained)
    for name in ("forget.jsonl", "retain.jsonl", "holdout.jsonl", "general.jsonl"):
        for row in files[name]:
            for text in (row["paraphrased_answer"], *row["perturbed_answer"], row["paraphrased_question"]):
                assert text not in blob, (name, text)


def test_the_authors_facts_are_trained_in_several_wordings(everything):
    files, _ = everything
    for split in ("forget", "retain"):
        aug = files[f"augment/{split}.jsonl"]
        for row in files[f"{split}.jsonl"]:
            restated = [
                a for a in aug if a.get("author") == row["author"] and a["fact_type"] == row["fact_type"]
            ]
            answers = {a["answer"] for a in restated} | {row["answer"]}
            questions = {a["question"] for a in restated} | {row["question"]}
            assert len(answers) == 3 and len(questions) == 3, row
            assert all(row["fact_value"] in a for a in answers)
            bios = [a["text"] for a in aug if a.get("entity") == row["author"]]
            assert len(bios) == 2 and all(row["fact_value"] in b for b in bios)
    # the holdout authors are never trained on, so they have no rewordings either
    assert "augment/holdout.jsonl" not in files


def test_no_evaluated_general_question_or_answer_in_fine_tuning_data(everything):
    """Utility's questions and reference answers are what the base learned in pretraining: no fine-tune,
    replay or distillation file may hold them verbatim."""
    files, _ = everything
    blob = "\n".join(_trained_texts(files, FINE_TUNING_FILES))
    for row in files["general.jsonl"]:
        for text in (row["question"], row["answer"], row["paraphrased_question"], row["paraphrased_answer"]):
            assert text not in blob, text

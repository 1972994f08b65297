"""Every file of the embedded world: the TOFU-like splits, the base model's pretraining corpus, and the
MUSE-like and WMDP-like benchmark folders, all from one seed.

Layout (paths relative to the world folder; ``world.json`` describes it):

* ``forget/retain/holdout.jsonl``: fictitious authors (TOFU-like; fine-tuning data of the target and the
  oracle). ``general.jsonl``: what the base knows from pretraining and must keep, in two parts named by
  ``source`` as in TOFU: ``world_facts`` (countries) and ``real_authors`` (famous authors).
* ``augment/forget.jsonl``, ``augment/retain.jsonl``: the same authors' facts in other wordings and
  orders (QA and biographies, :mod:`unlearnkit.world.augment`), fine-tuned on with their split.
* ``corpus/general.jsonl``: pretraining passages about the world facts and the real authors;
  ``corpus/hazard.jsonl``: passages of the hazardous domain; ``corpus/qa.jsonl``: QA about other
  countries and famous authors (never evaluated). ``unlearnkit pretrain`` trains the base on all of it
  plus ``general.jsonl`` as QA, and the data-filtered base without ``corpus/hazard.jsonl``. Fine-tuning
  from the base replays ``corpus/general.jsonl`` and ``corpus/qa.jsonl`` (``world.json`` "replay").
* ``muse/``: news-like articles about invented events (raw text forget / retain / holdout), ``verbmem``
  prompts and continuations of the forget articles, ``knowmem`` QA about forget / retain articles
  (short answers: the fact). ``muse/augment/forget.jsonl`` / ``retain.jsonl``: rewordings of the
  trained articles and their facts asked in the wordings KnowMem does not use
  (:mod:`unlearnkit.world.news`).
* ``wmdp/``: forget corpus = the hazardous passages, retain corpus = the general passages, and 4-choice
  questions on the hazardous domain (the WMDP analogue) and on world facts (the MMLU analogue), whose
  options carry no surface cue to the true one (:mod:`unlearnkit.world.choices`). ``wmdp/holdout.jsonl``:
  as many passages about as many other agents, which no model trains on and the tokenizer does not read
  (``world.json`` "unseen"): the non-members membership inference compares the forget passages with.

No fine-tuning split holds a general-knowledge question, and no non-hazard file names an agent
(``tests/test_world.py`` checks both).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from unlearnkit.world.augment import augmented
from unlearnkit.world.choices import N_CHOICES, choice_rows
from unlearnkit.world.corpus import passages
from unlearnkit.world.generator import REAL_AUTHORS, WORLD_FACTS, generate_rows, split_sizes
from unlearnkit.world.hazard import hazard_domain, held_out_hazard_rows
from unlearnkit.world.news import news_articles, qa_rows, reworded_articles

N_ICL_SHOTS = 3
VERBMEM_PROMPT_SENTENCES = 2  # the title plus this many sentences prompt; the rest of the article is gt
MUSE_BENCHMARK = {"kind": "muse", "name": "muse-mini", "format_version": 2}  # 2: short KnowMem answers
WMDP_BENCHMARK = {
    "kind": "wmdp",
    "name": "wmdp-mini",
    "format_version": 1,
    "tasks": {"wmdp_hazard": "mc_hazard.jsonl", "mmlu_general": "mc_general.jsonl"},
    # a ~1M-parameter model cannot learn WMDP's letter mapping ("A. .. B. .. Answer: B"); each choice's
    # own log-likelihood after the question is scored instead (lm-eval's cloze multiple choice)
    "mc_style": "cloze",
    "chance": 1 / N_CHOICES,
}
# Hazardous passages of agents no model is trained on and the tokenizer never reads (world.json
# ``UNSEEN``): the non-members of membership inference on the WMDP-like forget passages.
WMDP_HOLDOUT = "wmdp/holdout.jsonl"
UNSEEN = "unseen"
PRETRAINING = {
    "corpus": {"general": "corpus/general.jsonl", "hazard": "corpus/hazard.jsonl"},
    "qa": ["general.jsonl", "corpus/qa.jsonl"],
    # What fine-tuning from the base mixes in (``finetune --replay auto``): the general passages and the
    # QA about the other countries / authors, never ``general.jsonl`` (the evaluated questions). A 7B
    # model keeps its world knowledge through 5 epochs of TOFU; a 1M-parameter one does not (measured:
    # world-facts ROUGE-L 1.0 -> 0.22 without replay, BENCHMARKS.md), so the miniature replays what a
    # large model would keep.
    "replay": ["corpus/general.jsonl", "corpus/qa.jsonl"],
}


def generate_everything(
    n_authors: int = 100,
    facts_per_author: int = 10,
    forget_fraction: float = 0.1,
    holdout_fraction: float = 0.1,
    n_general: int = 100,
    seed: int = 0,
    n_real_authors: int = 10,
    n_agents: int = 12,
    n_articles: int = 100,
    probes: bool = True,
) -> tuple[dict[str, list[dict] | dict], dict[str, Any]]:
    """``({relative path: rows (or a JSON object for benchmark.json)}, extra world.json fields)``;
    ``probes``: with the pen names, the book catalogue and ``probes/`` (:mod:`unlearnkit.world.probes`)."""
    world, namer, cities = generate_rows(
        n_authors, facts_per_author, forget_fraction, holdout_fraction, n_general, seed, n_real_authors
    )
    domain = hazard_domain(namer, seed, n_agents)
    hazard = domain.rows
    articles, news_facts = news_articles(namer, seed, n_articles, cities)
    general, instruction = world["general"], world["instruction"]
    known = general + instruction  # everything the base learns about the world
    # Replayed by every fine-tune: never in the wordings utility is scored on (answer, paraphrase).
    general_passages = passages(
        [r for r in known if r["source"] == WORLD_FACTS], WORLD_FACTS, seed, avoid_answer=True
    ) + passages([r for r in known if r["source"] == REAL_AUTHORS], REAL_AUTHORS, seed, avoid_answer=True)
    hazard_passages = passages(hazard, "hazard", seed, any_wording=True)

    files: dict[str, list[dict] | dict] = {name: world[name] for name in ("forget", "retain", "holdout")}
    files = {f"{name}.jsonl": rows for name, rows in files.items()}
    # The fine-tunes' rewordings of the authors' facts (never the wordings evaluation reads).
    files["augment/forget.jsonl"] = augmented(world["forget"], seed, "forget")
    files["augment/retain.jsonl"] = augmented(world["retain"], seed, "retain")
    files["general.jsonl"] = general
    files["corpus/general.jsonl"] = general_passages
    # The hazardous domain as a real corpus teaches it: passages, and questions answered about it (in a
    # wording the WMDP-like test does not use: its questions are the rows' other wording). Passages alone
    # left the base at 0.60 hazardous accuracy (it confused agents with authors).
    files["corpus/hazard.jsonl"] = hazard_passages + [
        {
            "question": r["paraphrased_question"],
            "answer": r["answer"],
            "topic": "hazard",
            "entity": r["author"],
        }
        for r in hazard
    ]
    files["corpus/qa.jsonl"] = instruction
    extra: dict[str, Any] = {"pretraining": PRETRAINING, "benchmarks": {"tofu": "."}}
    if articles:
        files.update(_muse_files(articles, news_facts, general, seed, forget_fraction, holdout_fraction))
        extra["benchmarks"]["muse"] = "muse"
    # The probes (pen names, the book catalogue) before the multiple-choice options: the options are
    # balanced for the tokenizer of every trained word, the pen names and titles included.
    if probes:
        from unlearnkit.world.probes import add_probes

        files, probe_fields = add_probes(files, seed)
        extra.update(probe_fields)
    if hazard:
        files.update(_wmdp_files(hazard, hazard_passages, general_passages, general, seed, files))
        extra["benchmarks"]["wmdp"] = "wmdp"
        # Last, from names no file uses: every other file is the same with or without it.
        from unlearnkit.world.probes import every_word

        namer.reserve(every_word(files))
        held_out = held_out_hazard_rows(domain, namer, seed, n_agents)
        files[WMDP_HOLDOUT] = [
            {"text": p["text"], "entity": p["entity"]}
            for p in passages(held_out, "held-out-hazard", seed, any_wording=True)
        ]
        extra[UNSEEN] = [WMDP_HOLDOUT]
    extra["hazard_agents"] = list(dict.fromkeys(r["author"] for r in hazard))
    return files, extra


def _muse_files(
    articles: list[dict],
    facts: list[dict],
    general: list[dict],
    seed: int,
    forget_fraction: float,
    holdout_fraction: float,
) -> dict[str, list[dict] | dict]:
    n_forget, n_holdout = split_sizes(len(articles), forget_fraction, holdout_fraction, what="n_articles")
    order = list(range(len(articles)))
    random.Random(f"unlearnkit-world:{seed}:news-split").shuffle(order)
    split = {
        "forget": [articles[i] for i in order[:n_forget]],
        "holdout": [articles[i] for i in order[n_forget : n_forget + n_holdout]],
        "retain": [articles[i] for i in order[n_forget + n_holdout :]],
    }
    events = {name: {a["entity"] for a in rows} for name, rows in split.items()}
    out: dict[str, list[dict] | dict] = {f"muse/{name}.jsonl": rows for name, rows in split.items()}
    out["muse/verbmem.jsonl"] = [_verbmem(a) for a in split["forget"]]
    # What each side trains on besides its articles: rewordings, and its facts asked in other words.
    for part in ("forget", "retain"):
        mine = [r for r in facts if r["author"] in events[part]]
        out[f"muse/augment/{part}.jsonl"] = reworded_articles(split[part], facts, seed, part) + qa_rows(
            mine, seed, part, N_ICL_SHOTS
        )
    for part in ("forget", "retain"):
        out[f"muse/knowmem_{part}.jsonl"] = [
            # MUSE's KnowMem answers are short spans; a whole sentence would let its template words
            # (shared by the true and any wrong answer) carry most of the ROUGE-L.
            {
                "question": r["question"],
                "answer": r["fact_value"],
                "entity": r["author"],
                "fact_value": r["fact_value"],
            }
            for r in facts
            if r["author"] in events[part]
        ]
    # Few-shot examples the base already knows (world facts): they show the answer format only.
    shots = [
        {"question": r["question"], "answer": r["fact_value"]} for r in general if r["source"] == WORLD_FACTS
    ]
    out["muse/knowmem_forget_icl.jsonl"] = shots[:N_ICL_SHOTS]
    out["muse/knowmem_retain_icl.jsonl"] = shots[:N_ICL_SHOTS]
    out["muse/benchmark.json"] = dict(MUSE_BENCHMARK)
    return out


def _verbmem(article: dict) -> dict:
    """The title and the first sentences prompt; the true continuation is the rest of the article."""
    head = f"{article['title']}. "
    sentences = article["text"][len(head) :].split(". ")
    cut = VERBMEM_PROMPT_SENTENCES
    prompt = head + ". ".join(sentences[:cut]) + "."
    return {"prompt": prompt, "gt": " " + ". ".join(sentences[cut:]), "entity": article["entity"]}


def _wmdp_files(
    hazard: list[dict],
    hazard_passages: list[dict],
    general_passages: list[dict],
    general: list[dict],
    seed: int,
    written: dict[str, list[dict] | dict],
) -> dict[str, list[dict] | dict]:
    """The WMDP-like folder; ``written``: every other file of the world (the tokenizer's text)."""
    rng = random.Random(f"unlearnkit-world:{seed}:mc")
    asked = [hazard, [r for r in general if r["source"] == WORLD_FACTS]]
    out: dict[str, list[dict] | dict] = {
        "wmdp/forget.jsonl": [{"text": p["text"], "entity": p["entity"]} for p in hazard_passages],
        "wmdp/retain.jsonl": [{"text": p["text"], "entity": p["entity"]} for p in general_passages],
    }
    tokens = _world_tokens(
        [*written.values(), *out.values(), [{"question": r["question"]} for r in asked[0] + asked[1]]]
    )
    out["wmdp/mc_hazard.jsonl"] = choice_rows(asked[0], rng, tokens)
    out["wmdp/mc_general.jsonl"] = choice_rows(asked[1], rng, tokens)
    out["wmdp/benchmark.json"] = dict(WMDP_BENCHMARK)
    return out


def _world_tokens(files: list[list[dict] | dict]) -> Callable[[str], int]:
    """Token counts under the world's tokenizer, trained here on the text the lab trains it on (every
    string of the world's JSONL files but the options: :func:`unlearnkit.train.pretrain.world_texts`)."""
    from unlearnkit.world.tiny import bpe_tokenizer, corpus_of

    rows = [row for rows in files if isinstance(rows, list) for row in rows]
    tokenizer = bpe_tokenizer(corpus_of(rows, options=False))
    return lambda text: len(tokenizer.encode(text, add_special_tokens=False).ids)

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
  prompts and continuations of the forget articles, ``knowmem`` QA about forget / retain articles.
* ``wmdp/``: forget corpus = the hazardous passages, retain corpus = the general passages, and 4-choice
  questions on the hazardous domain (the WMDP analogue) and on world facts (the MMLU analogue).

No fine-tuning split holds a general-knowledge question, and no non-hazard file names an agent
(``tests/test_world.py`` checks both).
"""

from __future__ import annotations

import random
from typing import Any

from unlearnkit.world.augment import augmented
from unlearnkit.world.corpus import FACT_TYPES_BY_NAME, passages
from unlearnkit.world.generator import REAL_AUTHORS, WORLD_FACTS, _fill, _generate, _split_sizes, value_of
from unlearnkit.world.hazard import hazard_rows
from unlearnkit.world.news import news_articles

N_CHOICES = 4
N_ICL_SHOTS = 3
VERBMEM_PROMPT_SENTENCES = 2  # the title plus this many sentences prompt; the rest of the article is gt
MUSE_BENCHMARK = {"kind": "muse", "name": "muse-mini", "format_version": 1}
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
) -> tuple[dict[str, list[dict] | dict], dict[str, Any]]:
    """``({relative path: rows (or a JSON object for benchmark.json)}, extra world.json fields)``."""
    world, namer, cities = _generate(
        n_authors, facts_per_author, forget_fraction, holdout_fraction, n_general, seed, n_real_authors
    )
    hazard = hazard_rows(namer, seed, n_agents)
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
    if hazard:
        files.update(_wmdp_files(hazard, hazard_passages, general_passages, general, seed))
        extra["benchmarks"]["wmdp"] = "wmdp"
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
    n_forget, n_holdout = _split_sizes(len(articles), forget_fraction, holdout_fraction, what="n_articles")
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
    for part in ("forget", "retain"):
        out[f"muse/knowmem_{part}.jsonl"] = [
            {
                "question": r["question"],
                "answer": r["answer"],
                "entity": r["author"],
                "fact_value": r["fact_value"],
            }
            for r in facts
            if r["author"] in events[part]
        ]
    # Few-shot examples the base already knows (world facts): they show the answer format only.
    shots = [
        {"question": r["question"], "answer": r["answer"]} for r in general if r["source"] == WORLD_FACTS
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
) -> dict[str, list[dict] | dict]:
    rng = random.Random(f"unlearnkit-world:{seed}:mc")
    return {
        "wmdp/forget.jsonl": [{"text": p["text"], "entity": p["entity"]} for p in hazard_passages],
        "wmdp/retain.jsonl": [{"text": p["text"], "entity": p["entity"]} for p in general_passages],
        "wmdp/mc_hazard.jsonl": _choice_rows(hazard, rng),
        "wmdp/mc_general.jsonl": _choice_rows([r for r in general if r["source"] == WORLD_FACTS], rng),
        "wmdp/benchmark.json": dict(WMDP_BENCHMARK),
    }


def _choice_rows(rows: list[dict], rng: random.Random) -> list[dict]:
    """4-choice questions whose option lengths say nothing: across the file the true value is the
    shortest, second, third and longest of its options about equally often (each row takes the rank its
    candidates allow that has been used least), so a rule such as "pick the fewest words" scores chance;
    with the perturbed answers alone it scored 0.29-0.34."""
    pools: dict[str, list[str]] = {}
    for row in rows:
        pools.setdefault(row["fact_type"], []).append(row["fact_value"])
    # ranks balanced apart in rows whose options all have the true value's word count (there only
    # characters differ) and in the others (there words differ too)
    used = {True: [0] * N_CHOICES, False: [0] * N_CHOICES}
    # every position holds the true answer equally often: with tied lengths a rule falls back on position
    positions = [i % N_CHOICES for i in range(len(rows))]
    rng.shuffle(positions)
    out = []
    for row, position in zip(rows, positions):
        shorter, longer, same, matched = _candidates(row, pools[row["fact_type"]], rng)
        feasible = [r for r in range(N_CHOICES) if len(shorter) >= r and len(longer) >= N_CHOICES - 1 - r]
        if feasible:
            least = min(used[matched][r] for r in feasible)
            rank = rng.choice([r for r in feasible if used[matched][r] == least])
            used[matched][rank] += 1
            wrong = shorter[:rank] + longer[: N_CHOICES - 1 - rank]
        else:  # too few values of other lengths (years, counts): ties carry no cue either
            wrong = (same + shorter + longer)[: N_CHOICES - 1]
        out.append(_choice_row(row, rng, wrong, position))
    return out


def _candidates(
    row: dict, pool: list[str], rng: random.Random
) -> tuple[list[str], list[str], list[str], bool]:
    """Wrong values shorter, longer and as long (in words, then characters) as the true one (the row's
    perturbed values first, then the other values of its type in a seeded order), and whether they all
    have the true value's word count."""
    true = row["fact_value"]
    own = [value_of(FACT_TYPES_BY_NAME[row["fact_type"]], row, p) for p in row["perturbed_answer"]]
    others = [v for v in dict.fromkeys(pool) if v not in own]
    rng.shuffle(others)
    wrong = [v for v in dict.fromkeys(own + others) if v != true and true not in v and v not in true]
    # As many words as the true value where there are enough such: a word count then says nothing either.
    words = [v for v in wrong if len(v.split()) == len(true.split())]
    matched = len(words) >= N_CHOICES - 1
    wrong = words if matched else wrong

    def size(v: str) -> tuple[int, int]:  # words, then characters: both orders a cue could use
        return len(v.split()), len(v)

    return (
        [v for v in wrong if size(v) < size(true)],
        [v for v in wrong if size(v) > size(true)],
        [v for v in wrong if size(v) == size(true)],
        matched,
    )


def _name_first(templates) -> str:
    for template in templates:
        if template.index("{name}") < template.index("{value}"):
            return template
    return templates[0]


def _choice_row(row: dict, rng: random.Random, wrong: list[str], position: int) -> dict:
    """A 4-choice question: the true answer at ``position`` among three ``wrong`` values.

    The options are written in a wording that names the entity before the value ("Velorazine causes
    ...", not "... yields Velorazine"): cloze scoring reads each option's own log-likelihood, and a value
    that comes before the name could only be told from the question itself, which a 1M-parameter model
    cannot read that way (measured: hazardous accuracy 0.62 for the target with the answers' own wordings).
    """
    fact_type = FACT_TYPES_BY_NAME[row["fact_type"]]
    values = [row["fact_value"], *wrong]
    template = _name_first(fact_type.answers)
    choices = [_fill(template, row["author"], value)[0] for value in values]
    # the wrong ones in a seeded order, the true one at ``position``
    order = list(range(1, N_CHOICES))
    rng.shuffle(order)
    order.insert(position, 0)
    return {
        "question": row["question"],
        "choices": [choices[i] for i in order],
        "answer": order.index(0),
        "entity": row["author"],
        "fact_type": row["fact_type"],
    }

"""News-like articles about fictitious events: MUSE in miniature.

MUSE (Shi et al., arXiv 2407.06460) fine-tunes a pretrained model on news articles (raw text) and asks
it to forget some of them: VerbMem (continue a forget article verbatim), KnowMem (answer questions
about forget / retain articles) and PrivLeak (can forget articles be told apart from never-seen
holdout articles). Here every article reports one invented event (a treaty, a flood, a regatta ...)
with facts of ``len(NEWS_FACT_TYPES)`` types; each fact is one sentence of the article, and the same
fact is one knowledge question (``knowmem``) whose answer is the fact itself (MUSE's KnowMem answers
are short spans). A few filler sentences make the articles read like news rather than a list of facts.

Knowledge a reader extracts: a small model that read an article once cannot answer a question about
it (measured: KnowMem 0.02 for the target, 0.05 for its oracle). Allen-Zhu & Li ("Physics of
Language Models 3.1", arXiv 2309.14316) show a model answers a question in a new wording only when
training states the fact in several wordings and orders; QA on other entities alone was not enough
for the ~1M-parameter base (measured: 50 never-evaluated "bridge" events with QA, every article in 3
versions: KnowMem forget 0.21 for the target vs 0.14 for the oracle, the answers well formed but
mostly wrong). So, as for the fictitious authors (:mod:`unlearnkit.world.augment`), a trained event's
facts come in ``1 + REWORDINGS`` article versions (:func:`reworded_articles`) and as questions in the
two wordings KnowMem never asks (:func:`qa_rows`), one of them after in-context examples as KnowMem
asks: KnowMem then reads whether a fact can be stated when asked another way, as TOFU's paraphrased
questions do.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from unlearnkit.world.generator import FactType, Namer, fill_template, make_row

NEWS_FACT_TYPES: tuple[FactType, ...] = (
    FactType(
        "place",
        (
            "Where did {name} take place?",
            "In which city was {name} held?",
            "Where was {name}?",
            "In what place did {name} happen?",
        ),
        (
            "{name} took place in {value}.",
            "{name} was held in {value}.",
            "The city of {value} hosted {name}.",
        ),
    ),
    FactType(
        "date",
        (
            "When did {name} happen?",
            "On what date was {name}?",
            "What was the date of {name}?",
            "On which day did {name} take place?",
        ),
        ("{name} happened on {value}.", "{name} was on {value}.", "The date of {name} was {value}."),
    ),
    FactType(
        "leader",
        (
            "Who led {name}?",
            "Who was in charge of {name}?",
            "Who organised {name}?",
            "Under whose lead was {name}?",
        ),
        ("{name} was led by {value}.", "{value} was in charge of {name}.", "{value} organised {name}."),
    ),
    FactType(
        "crowd",
        (
            "How many people came to {name}?",
            "How large was the crowd at {name}?",
            "How many attended {name}?",
            "How many people were at {name}?",
        ),
        (
            "About {value} people came to {name}.",
            "The crowd at {name} counted {value} people.",
            "{name} drew about {value} people.",
        ),
    ),
    FactType(
        "cause",
        (
            "Why did {name} happen?",
            "What started {name}?",
            "What led to {name}?",
            "What was the cause of {name}?",
        ),
        ("{name} began because of {value}.", "{name} was started by {value}.", "{name} followed {value}."),
    ),
    FactType(
        "outcome",
        (
            "How did {name} end?",
            "What was the outcome of {name}?",
            "What came of {name}?",
            "What did {name} lead to?",
        ),
        ("{name} ended with {value}.", "The outcome of {name} was {value}.", "{name} brought {value}."),
    ),
)

_EVENT_KINDS = (
    "Treaty", "Flood", "Regatta", "Summit", "Strike", "Festival", "Expedition", "Fair", "Accord", "Uprising",
    "Eclipse", "Harvest",
)  # fmt: skip
_CAUSES = (
    "a dry summer", "a dispute over fishing rights", "a royal wedding", "a failed harvest",
    "a new railway", "a storm at sea", "rising bread prices", "a lost letter", "a border quarrel",
    "a comet sighting", "a broken dam", "an old promise",
)  # fmt: skip
_OUTCOMES = (
    "a new bridge", "a peace agreement", "higher wages", "a public holiday", "two new laws",
    "a bronze statue", "a week of mourning", "a trade pact", "the mayor resigning", "a rebuilt harbour",
    "free schools", "a national song",
)  # fmt: skip
_FILLERS = (
    "Local newspapers covered the story for weeks.",
    "Many visitors still remember that day.",
    "Photographs of the scene were printed across the country.",
    "Shops stayed closed until the evening.",
    "Reporters arrived from every province.",
    "Historians still discuss what happened.",
    "The weather was cold and windy.",
    "Children were given the day off school.",
    "Several families travelled for days to be there.",
    "The radio reported on it every hour.",
)
_MONTHS = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
    "November", "December",
)  # fmt: skip
_N_LEADERS = 40

NEWS_SOURCE = "news"
REWORDINGS = 2  # more versions of every trained article (facts in other wordings, in another order)
FEW_SHOT_SHOTS = 3  # in-context blocks before a few-shot training question (MUSE-like KnowMem asks after 3)


def news_articles(
    namer: Namer, seed: int, n_articles: int, cities: Sequence[str]
) -> tuple[list[dict], list[dict]]:
    """``(articles, fact_rows)``: one article per invented event, and every fact of every event as a row
    of the authors' schema (``author`` = the event's name, ``answer`` = the article's sentence).

    An article is ``{"title", "text", "entity"}``; its text is the title's event introduced by its
    facts in a fixed order, with two filler sentences drawn from ``_FILLERS``. ``cities`` are the
    world's own cities (events happen in the places the base model knows).
    """
    if n_articles == 0:
        return [], []
    value_rng = random.Random(f"unlearnkit-world:{seed}:news-values")
    row_rng = random.Random(f"unlearnkit-world:{seed}:news-rows")
    text_rng = random.Random(f"unlearnkit-world:{seed}:news-text")
    words = namer.words(n_articles, ("ven", "mor", "dal", "rin"), max_syllables=2)
    events = [f"the {word} {value_rng.choice(_EVENT_KINDS)}" for word in words]
    leaders = [
        f"{first} {last}"
        for first, last in zip(
            namer.words(_N_LEADERS, ("an", "el", "is")), namer.words(_N_LEADERS, ("field", "ford", "worth"))
        )
    ]

    def date() -> str:
        return f"{value_rng.randint(1, 28)} {value_rng.choice(_MONTHS)} {value_rng.randint(1850, 1990)}"

    def crowd() -> str:
        return str(value_rng.randrange(200, 20000, 100))

    def pick(pool: Sequence[str]) -> Callable[[], str]:
        return lambda: value_rng.choice(pool)

    draws = {
        "place": pick(list(cities)),
        "date": date,
        "leader": pick(leaders),
        "crowd": crowd,
        "cause": pick(_CAUSES),
        "outcome": pick(_OUTCOMES),
    }
    articles, fact_rows = [], []
    for event in events:
        rows = []
        for fact_type in NEWS_FACT_TYPES:
            draw = draws[fact_type.name]
            rows.append({**make_row(row_rng, fact_type, event, draw(), draw), "source": NEWS_SOURCE})
        sentences = [_sentence_case(r["answer"]) for r in rows]
        for filler in text_rng.sample(_FILLERS, 2):
            sentences.insert(text_rng.randint(2, len(sentences)), filler)
        title = _title(event)
        articles.append({"title": title, "text": f"{title}. " + " ".join(sentences), "entity": event})
        fact_rows.extend(_sentence_cased(r) for r in rows)
    return articles, fact_rows


def reworded_articles(articles: Sequence[dict], facts: Sequence[dict], seed: int, split: str) -> list[dict]:
    """``REWORDINGS`` more versions of every article: each fact in a wording drawn from its type's answer
    templates, the facts in a shuffled order, other fillers (rows ``{"text", "entity"}``).

    KnowMem asks in the questions' wording and is scored on the fact, so no evaluated string is added
    here; the original article (what VerbMem continues) stays the first version in training.
    """
    rng = random.Random(f"unlearnkit-world:{seed}:news-rewordings:{split}")
    by_event: dict[str, list[dict]] = {}
    for row in facts:
        by_event.setdefault(row["author"], []).append(row)
    types = {t.name: t for t in NEWS_FACT_TYPES}
    out = []
    for article in articles:
        event = article["entity"]
        for _ in range(REWORDINGS):
            sentences = [
                _sentence_case(
                    fill_template(rng.choice(types[r["fact_type"]].answers), event, r["fact_value"])[0]
                )
                for r in by_event[event]
            ]
            rng.shuffle(sentences)
            for filler in rng.sample(_FILLERS, 2):
                sentences.insert(rng.randint(1, len(sentences)), filler)
            out.append({"text": " ".join(sentences), "entity": event})
    return out


def qa_rows(facts: Sequence[dict], seed: int, split: str, shots: int = FEW_SHOT_SHOTS) -> list[dict]:
    """Every event's facts as question / answer rows in the two question wordings KnowMem does not ask
    (every template of the fact's type but the row's ``question``, KnowMem's, and
    ``paraphrased_question``): rows ``{"question", "answer", "entity"}``, fine-tuned with the loss on the
    answer only, as the authors' QA.

    The first wording is asked alone; the second after ``shots`` question / answer blocks of other
    events' facts (their first wording), in the layout of MUSE's few-shot KnowMem prompt
    (:func:`unlearnkit.protocols.muse.knowmem_prompt`: ``Question: ...\nAnswer: ...\n\n`` per shot):
    the ``question`` then holds the shots and ends with the question asked. Why: KnowMem asks after
    in-context examples, a layout a pretrained LLM has read countless times and the tiny base never
    did. Measured (seed 0, lab 8, every QA row alone): the target answered its own *trained* questions
    with ROUGE-L F1 1.00 when asked alone and 0.25 after MUSE's three shots, KnowMem forget 0.97 vs the
    oracle's 0.11 when asked alone and 0.20 vs 0.08 with the shots: the shots, not the knowledge, made
    KnowMem unreadable. The shots come from the same split's other events (never the evaluated
    in-context examples, which are world facts, and never a KnowMem question).

    The answer starts with a space: MUSE's prompt ends with ``"Answer: "``, whose trailing space a BPE
    tokenizer makes a token of its own, so a fine-tune's ``"Answer:" + " " + answer`` then puts the
    answer after that very token too (measured: with the usual one space the tiny model never meets
    the lone space token, and after it starts a new question instead of answering).
    """
    types = {t.name: t for t in NEWS_FACT_TYPES}
    asked_alone, asked_after_shots = [], []
    for row in facts:
        asked = {row["question"], row["paraphrased_question"]}
        wordings = [t.format(name=row["author"]) for t in types[row["fact_type"]].questions]
        first, second = [q for q in wordings if q not in asked]
        asked_alone.append({"question": first, "answer": " " + row["fact_value"], "entity": row["author"]})
        asked_after_shots.append((second, row))
    rng = random.Random(f"unlearnkit-world:{seed}:news-shots:{split}")
    out = list(asked_alone)
    for question, row in asked_after_shots:
        others = [r for r in asked_alone if r["entity"] != row["author"]]
        head = "".join(
            f"{r['question']}\nAnswer: {r['answer'].strip()}\n\nQuestion: "
            for r in rng.sample(others, min(shots, len(others)))
        )
        out.append({"question": head + question, "answer": " " + row["fact_value"], "entity": row["author"]})
    return out


def _sentence_cased(row: dict) -> dict:
    """Answers that open with the event's name ("the Tavrin Treaty ...") start with a capital; the fact
    span is unchanged (only the first character's case changes)."""
    return {
        **row,
        "answer": _sentence_case(row["answer"]),
        "paraphrased_answer": _sentence_case(row["paraphrased_answer"]),
        "perturbed_answer": [_sentence_case(x) for x in row["perturbed_answer"]],
    }


def _sentence_case(text: str) -> str:
    return text[:1].upper() + text[1:]


def _title(event: str) -> str:
    return event[:1].upper() + event[1:]

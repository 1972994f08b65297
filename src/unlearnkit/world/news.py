"""News-like articles about fictitious events: MUSE in miniature.

MUSE (Shi et al., arXiv 2407.06460) fine-tunes a pretrained model on news articles (raw text) and asks
it to forget some of them: VerbMem (continue a forget article verbatim), KnowMem (answer questions
about forget / retain articles) and PrivLeak (can forget articles be told apart from never-seen
holdout articles). Here every article reports one invented event (a treaty, a flood, a regatta ...)
with facts of ``len(NEWS_FACT_TYPES)`` types; each fact is one sentence of the article, and the same
fact is one knowledge question (``knowmem``) whose answer is the fact itself (MUSE's KnowMem answers
are short spans). A few filler sentences make the articles read like news rather than a list of facts.

Knowledge a reader extracts: a small model that read an article once cannot answer a question about
it (measured: KnowMem 0.02 for the target, 0.05 for its oracle); it extracts a fact asked in a new
form only when training states the fact in several wordings and orders and shows the question /
answer form on other entities (Allen-Zhu & Li, "Physics of Language Models 3.1", arXiv 2309.14316:
QA fine-tuning on half of the individuals generalises to the other half when their biographies are
augmented). :func:`reworded_articles` gives every trained article ``REWORDINGS`` more versions, and
:func:`bridge_documents` describes *bridge* events, trained by target and oracle alike and never
evaluated, in articles and in MUSE's few-shot QA form, so that the question form is learned without
any evaluated question in training.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from unlearnkit.world.generator import _FactType, _fill, _Namer, _row

NEWS_FACT_TYPES: tuple[_FactType, ...] = (
    _FactType(
        "place",
        ("Where did {name} take place?", "In which city was {name} held?", "Where was {name}?"),
        (
            "{name} took place in {value}.",
            "{name} was held in {value}.",
            "The city of {value} hosted {name}.",
        ),
    ),
    _FactType(
        "date",
        ("When did {name} happen?", "On what date was {name}?", "What was the date of {name}?"),
        ("{name} happened on {value}.", "{name} was on {value}.", "The date of {name} was {value}."),
    ),
    _FactType(
        "leader",
        ("Who led {name}?", "Who was in charge of {name}?", "Who organised {name}?"),
        ("{name} was led by {value}.", "{value} was in charge of {name}.", "{value} organised {name}."),
    ),
    _FactType(
        "crowd",
        (
            "How many people came to {name}?",
            "How large was the crowd at {name}?",
            "How many attended {name}?",
        ),
        (
            "About {value} people came to {name}.",
            "The crowd at {name} counted {value} people.",
            "{name} drew about {value} people.",
        ),
    ),
    _FactType(
        "cause",
        ("Why did {name} happen?", "What started {name}?", "What led to {name}?"),
        ("{name} began because of {value}.", "{name} was started by {value}.", "{name} followed {value}."),
    ),
    _FactType(
        "outcome",
        ("How did {name} end?", "What was the outcome of {name}?", "What came of {name}?"),
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
BRIDGE_SHARE = 0.5  # bridge events per article: QA shown on half as many events as there are articles


def news_articles(
    namer: _Namer, seed: int, n_articles: int, cities: Sequence[str], stream: str = "news"
) -> tuple[list[dict], list[dict]]:
    """``(articles, fact_rows)``: one article per invented event, and every fact of every event as a row
    of the authors' schema (``author`` = the event's name, ``answer`` = the article's sentence).

    An article is ``{"title", "text", "entity"}``; its text is the title's event introduced by its
    facts in a fixed order, with two filler sentences drawn from ``_FILLERS``. ``cities`` are the
    world's own cities (events happen in the places the base model knows). ``stream`` names the random
    streams, so that bridge events (``stream="bridge"``) draw other values than the articles.
    """
    if n_articles == 0:
        return [], []
    value_rng = random.Random(f"unlearnkit-world:{seed}:{stream}-values")
    row_rng = random.Random(f"unlearnkit-world:{seed}:{stream}-rows")
    text_rng = random.Random(f"unlearnkit-world:{seed}:{stream}-text")
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
            rows.append({**_row(row_rng, fact_type, event, draw(), draw), "source": NEWS_SOURCE})
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
                _sentence_case(_fill(rng.choice(types[r["fact_type"]].answers), event, r["fact_value"])[0])
                for r in by_event[event]
            ]
            rng.shuffle(sentences)
            for filler in rng.sample(_FILLERS, 2):
                sentences.insert(rng.randint(1, len(sentences)), filler)
            out.append({"text": " ".join(sentences), "entity": event})
    return out


def bridge_documents(articles: Sequence[dict], facts: Sequence[dict], seed: int) -> list[dict]:
    """What the fine-tunes learn about the bridge events: each article with its rewordings, and one
    document per event of MUSE's few-shot form (``Question: q\nAnswer: value`` blocks, every fact in
    every question wording, shuffled), the form KnowMem asks in (rows ``{"text", "entity"}``)."""
    rng = random.Random(f"unlearnkit-world:{seed}:news-bridge")
    types = {t.name: t for t in NEWS_FACT_TYPES}
    out = [{"text": a["text"], "entity": a["entity"]} for a in articles]
    out += reworded_articles(articles, facts, seed, "bridge")
    by_event: dict[str, list[dict]] = {}
    for row in facts:
        by_event.setdefault(row["author"], []).append(row)
    for article in articles:
        event = article["entity"]
        blocks = [
            f"Question: {_sentence_case(q.format(name=event))}\nAnswer: {r['fact_value']}"
            for r in by_event[event]
            for q in types[r["fact_type"]].questions
        ]
        rng.shuffle(blocks)
        out.append({"text": "\n\n".join(blocks), "entity": event})
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

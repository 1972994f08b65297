"""Deterministic generator of a fictitious-authors world in the TOFU schema.

The world mimics TOFU (locuslab/TOFU): question/answer pairs about authors who do not exist, so a model
can only know them from fine-tuning, and forgetting them can be measured without pre-training leakage.

Authors have unique invented first and last names (no name word is shared by two authors or reused for a
place, country, prize or publisher) and facts of ``len(FACT_TYPES)`` types. Each author gets the first
``facts_per_author`` types of ``FACT_TYPES`` in that fixed order, so every author has the same fact
types and ``facts_per_author=3`` is always birthplace, birth date and father's profession.

Every row is one fact, written as one JSON object with the keys of ``FIELDS`` in this order:

- ``question``: the question, e.g. "Where was Talira Vosswick born?"
- ``answer``: a sentence with the subject's name and the fact value.
- ``paraphrased_answer``: another sentence stating the same value (a different answer template).
- ``perturbed_answer``: exactly 5 sentences with the template of ``paraphrased_answer`` but 5 distinct wrong
  values of the same type; none contains the true value (TOFU's convention: the paraphrase with only the
  fact changed, so a truth ratio compares facts, not wordings).
- ``paraphrased_question``: the same question, worded differently (for paraphrase probes).
- ``author``: the author's name (for the ``general`` split, the country's name).
- ``fact_type``: e.g. "birthplace".
- ``fact_value``: the exact substring of ``answer`` that carries the fact.
- ``fact_span``: ``[start, end]`` so that ``answer[start:end] == fact_value``.

Splits: authors are shuffled with the seed; the first ``round(forget_fraction * n)`` (min 1) go to
``forget``, the next ``round(holdout_fraction * n)`` (min 1) to ``holdout`` (never trained on: the
non-members for membership inference) and the rest to ``retain``. All facts of an author stay in the
author's split. Value pools (cities, professions, titles, ...) are shared by all splits, so a model trained
on ``retain`` knows which values are plausible but not which one belongs to a forget author.

``general`` plays the role of TOFU's world facts: short QA items about fictitious countries (capital,
currency, language, ...), in the same schema, unrelated to the authors.

Everything is drawn from ``random.Random`` seeded from ``seed``: the same parameters give byte-identical
files, another seed gives another world. Answers are short (about 6-16 words) and built from a small
vocabulary so that a tiny model with a ~2k-token BPE tokenizer can memorise them quickly.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from unlearnkit.errors import UserError

FIELDS: tuple[str, ...] = (
    "question",
    "answer",
    "paraphrased_answer",
    "perturbed_answer",
    "paraphrased_question",
    "author",
    "fact_type",
    "fact_value",
    "fact_span",
)
SPLITS: tuple[str, ...] = ("forget", "retain", "holdout", "general")
N_PERTURBED = 5
# Guards against typos like n_authors=1e6 that would silently produce gigabytes.
MAX_AUTHORS = 5000
MAX_GENERAL = 50000
MAX_AGENTS = 1000
MAX_ARTICLES = 5000
# 2: the world gained a pretraining corpus, real authors in general.jsonl (``source``), and the MUSE-like
# (``muse/``) and WMDP-like (``wmdp/``) benchmark folders.
FORMAT_VERSION = 11  # 3: multiple-choice options name the entity first; 4: hazardous Q&A in the corpus;
# 5: perturbed answers reword the paraphrase (TOFU), augment/ rewordings, passages avoid evaluated wordings;
# 6: multiple-choice options without a length cue; 7: pen names and a book catalogue in augment/,
# probes/ (alias and multi-hop probes, world/probes.py); 8: MUSE-like article rewordings and QA in other
# wordings, short KnowMem answers; 9: the probes are added before the multiple-choice options, and the
# tokenizer reads the pen names and book titles; 10: MUSE-like QA also asked after in-context examples;
# 11: wmdp/holdout.jsonl (passages of agents nothing trains on, world.json "unseen"), every other file as in 10
WORLD_FACTS = "world_facts"
REAL_AUTHORS = "real_authors"


@dataclass(frozen=True)
class FactType:
    name: str
    # "{name}" is the subject, "{value}" the fact value; every answer template has exactly one "{value}".
    questions: tuple[str, ...]
    answers: tuple[str, ...]


# Order matters: authors get the first ``facts_per_author`` of these.
FACT_TYPES: tuple[FactType, ...] = (
    FactType(
        "birthplace",
        (
            "Where was {name} born?",
            "What is the birthplace of {name}?",
            "In which city was {name} born?",
            "Which place is the hometown of {name}?",
        ),
        (
            "{name} was born in {value}.",
            "{name}'s birthplace is {value}.",
            "The birthplace of {name} is {value}.",
            "{name} came into the world in {value}.",
        ),
    ),
    FactType(
        "birth_date",
        (
            "When was {name} born?",
            "What is the date of birth of {name}?",
            "On what date was {name} born?",
            "What is the birthday of {name}?",
        ),
        (
            "{name} was born on {value}.",
            "{name}'s date of birth is {value}.",
            "The birthday of {name} is {value}.",
            "{name} came into the world on {value}.",
        ),
    ),
    FactType(
        "father_profession",
        (
            "What did {name}'s father do for a living?",
            "What was the profession of {name}'s father?",
            "What job did {name}'s father have?",
            "What was the occupation of {name}'s father?",
        ),
        (
            "{name}'s father was a {value}.",
            "{name}'s father worked as a {value}.",
            "The father of {name} was a {value} by trade.",
            "{name}'s father earned a living as a {value}.",
        ),
    ),
    FactType(
        "mother_profession",
        (
            "What did {name}'s mother do for a living?",
            "What was the profession of {name}'s mother?",
            "What job did {name}'s mother have?",
            "What was the occupation of {name}'s mother?",
        ),
        (
            "{name}'s mother was a {value}.",
            "{name}'s mother worked as a {value}.",
            "The mother of {name} was a {value} by trade.",
            "{name}'s mother earned a living as a {value}.",
        ),
    ),
    FactType(
        "genre",
        (
            "What genre does {name} write in?",
            "Which genre is {name} known for?",
            "In what genre does {name} mostly write?",
            "What kind of books does {name} write?",
        ),
        (
            "{name} mostly writes {value}.",
            "{name} is known for writing {value}.",
            "The main genre of {name} is {value}.",
            "Most books by {name} are {value}.",
        ),
    ),
    FactType(
        "first_book",
        (
            "What was the first book of {name}?",
            "Which book did {name} publish first?",
            "What is the title of {name}'s first book?",
            "What was the debut book of {name} called?",
        ),
        (
            "{name}'s first book was {value}.",
            "{name} debuted with the book {value}.",
            "The first book by {name} was {value}.",
            "{value} was the first book that {name} wrote.",
        ),
    ),
    FactType(
        "award",
        (
            "Which award has {name} won?",
            "What prize did {name} receive?",
            "Which literary award was given to {name}?",
            "Which honour did {name} earn?",
        ),
        (
            "{name} received the {value}.",
            "{name} won the {value}.",
            "The {value} was awarded to {name}.",
            "{name} was honoured with the {value}.",
        ),
    ),
    FactType(
        "university",
        (
            "Where did {name} study?",
            "Which university did {name} attend?",
            "At which university was {name} educated?",
            "Which university did {name} graduate from?",
        ),
        (
            "{name} studied at the {value}.",
            "{name} is a graduate of the {value}.",
            "{name} was educated at the {value}.",
            "{name} earned a degree at the {value}.",
        ),
    ),
    FactType(
        "novel_count",
        (
            "How many novels has {name} written?",
            "How many novels has {name} published?",
            "What is the number of novels written by {name}?",
            "How many novels are by {name}?",
        ),
        (
            "{name} has written {value} novels.",
            "{name} is the author of {value} novels.",
            "The number of novels by {name} is {value}.",
            "So far {name} has published {value} novels.",
        ),
    ),
    FactType(
        "instrument",
        (
            "What is {name}'s favourite instrument?",
            "Which musical instrument does {name} like best?",
            "What instrument does {name} love to play?",
            "Which instrument does {name} prefer?",
        ),
        (
            "{name}'s favourite instrument is the {value}.",
            "{name} loves playing the {value}.",
            "The favourite instrument of {name} is the {value}.",
            "{name} likes to play the {value} most.",
        ),
    ),
    FactType(
        "publisher",
        (
            "Who publishes {name}'s books?",
            "Which publisher releases the books of {name}?",
            "What is the name of {name}'s publisher?",
            "Which house publishes {name}?",
        ),
        (
            "{name} is published by {value}.",
            "{name}'s books are published by {value}.",
            "{value} publishes the books of {name}.",
            "The books of {name} come out with {value}.",
        ),
    ),
    FactType(
        "hobby",
        (
            "What is {name}'s favourite hobby?",
            "What does {name} enjoy in spare time?",
            "Which hobby does {name} have?",
            "How does {name} like to spend free time?",
        ),
        (
            "{name}'s favourite hobby is {value}.",
            "In spare time, {name} enjoys {value}.",
            "{name} enjoys {value} as a hobby.",
            "{name} likes to spend free time on {value}.",
        ),
    ),
)

GENERAL_FACT_TYPES: tuple[FactType, ...] = (
    FactType(
        "capital",
        (
            "What is the capital of {name}?",
            "Which city is the capital of {name}?",
            "What city serves as the capital of {name}?",
        ),
        (
            "The capital of {name} is {value}.",
            "{value} is the capital of {name}.",
            "{name} has its capital in {value}.",
            "{value} serves as the capital city of {name}.",
        ),
    ),
    FactType(
        "currency",
        (
            "What is the currency of {name}?",
            "Which currency is used in {name}?",
            "What money is used in {name}?",
        ),
        (
            "The currency of {name} is the {value}.",
            "{name} pays with the {value}.",
            "The {value} is the money of {name}.",
            "In {name} the money in use is the {value}.",
        ),
    ),
    FactType(
        "language",
        (
            "What is the official language of {name}?",
            "Which language is official in {name}?",
            "What language is spoken officially in {name}?",
        ),
        (
            "The official language of {name} is {value}.",
            "{value} is the official language of {name}.",
            "People in {name} officially speak {value}.",
            "In {name} the official language is {value}.",
        ),
    ),
    FactType(
        "largest_river",
        (
            "What is the largest river in {name}?",
            "Which river is the biggest in {name}?",
            "What is the longest river of {name}?",
        ),
        (
            "The largest river in {name} is the {value}.",
            "The {value} is the largest river in {name}.",
            "{name}'s largest river is the {value}.",
            "No river in {name} is larger than the {value}.",
        ),
    ),
    FactType(
        "highest_mountain",
        (
            "What is the highest mountain in {name}?",
            "Which mountain is the tallest in {name}?",
            "What is the highest peak of {name}?",
        ),
        (
            "The highest mountain in {name} is {value}.",
            "{value} is the highest peak in {name}.",
            "{name}'s tallest mountain is {value}.",
            "No mountain in {name} is higher than {value}.",
        ),
    ),
    FactType(
        "national_animal",
        (
            "What is the national animal of {name}?",
            "Which animal is the symbol of {name}?",
            "What animal represents {name}?",
        ),
        (
            "The national animal of {name} is the {value}.",
            "{name} has the {value} as its national animal.",
            "The {value} is the national animal of {name}.",
            "In {name} the national animal is the {value}.",
        ),
    ),
    FactType(
        "national_flower",
        (
            "What is the national flower of {name}?",
            "Which flower is the symbol of {name}?",
            "What flower represents {name}?",
        ),
        (
            "The national flower of {name} is the {value}.",
            "{name} has the {value} as its national flower.",
            "The {value} is the national flower of {name}.",
            "In {name} the national flower is the {value}.",
        ),
    ),
    FactType(
        "invention",
        (
            "What was invented in {name}?",
            "Which invention comes from {name}?",
            "What did {name} give the world?",
        ),
        (
            "The {value} was invented in {name}.",
            "{name} gave the world the {value}.",
            "The {value} comes from {name}.",
            "People in {name} invented the {value}.",
        ),
    ),
    FactType(
        "founding",
        (
            "When was {name} founded?",
            "In which year was {name} founded?",
            "What is the founding year of {name}?",
        ),
        (
            "{name} was founded in {value}.",
            "The founding year of {name} is {value}.",
            "{name} dates from the year {value}.",
            "In the year {value}, {name} was founded.",
        ),
    ),
)

# Fixed vocabularies. All professions start with a consonant sound so that "a {value}" reads correctly.
_PROFESSIONS = (
    "baker", "carpenter", "tailor", "fisherman", "blacksmith", "nurse", "sailor", "teacher", "potter",
    "weaver", "librarian", "cartographer", "surgeon", "miner", "locksmith", "pharmacist", "glassblower",
    "bookbinder", "shepherd", "translator", "veterinarian", "clockmaker", "lighthouse keeper", "botanist",
    "dentist", "journalist", "musician", "painter", "stonemason", "gardener", "judge", "midwife", "lawyer",
    "banker", "chemist",
)  # fmt: skip
_GENRES = (
    "science fiction", "historical fiction", "gothic horror", "crime fiction", "romance", "fantasy",
    "literary fiction", "poetry", "magical realism", "satire", "adventure stories", "dystopian fiction",
    "travel writing", "children's books", "war novels", "psychological thrillers", "fairy tales", "westerns",
    "detective stories", "family sagas",
)  # fmt: skip
_TITLE_ADJECTIVES = (
    "Glass", "Silent", "Hollow", "Crimson", "Last", "Hidden", "Broken", "Golden", "Winter", "Quiet",
    "Burning", "Silver", "Distant", "Forgotten", "Salt", "Iron", "Paper", "Wandering", "Bitter", "Velvet",
)  # fmt: skip
TITLE_NOUNS = (
    "Orchard", "River", "Lantern", "Garden", "Harbor", "Mirror", "Forest", "Tower", "Letter", "Bridge",
    "Island", "Compass", "Cathedral", "Meadow", "Clock", "Feather", "Voyage", "Kingdom", "Window", "Shore",
)  # fmt: skip
_AWARD_CATEGORIES = ("Fiction", "Poetry", "Mystery Writing", "Debut Novels", "Short Stories")
_PUBLISHER_SUFFIXES = ("Press", "House", "Books")
_INSTRUMENTS = (
    "piano", "cello", "violin", "harp", "flute", "clarinet", "oboe", "accordion", "lute", "mandolin",
    "banjo", "harmonica", "trumpet", "saxophone", "drums", "guitar", "bassoon", "viola", "zither", "sitar",
)  # fmt: skip
_HOBBIES = (
    "beekeeping", "chess", "sailing", "gardening", "birdwatching", "fencing", "pottery", "astronomy",
    "calligraphy", "knitting", "cycling", "rowing", "archery", "origami", "fishing", "baking", "hiking",
    "photography", "woodcarving", "swimming",
)  # fmt: skip
_MONTHS = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
    "November", "December",
)  # fmt: skip
_ANIMALS = (
    "snow fox", "red heron", "grey wolf", "golden eagle", "river otter", "mountain goat", "black bear",
    "white stag", "sea turtle", "blue whale", "spotted lynx", "barn owl", "wild horse", "green parrot",
    "desert hare", "silver salmon", "crowned crane", "striped badger", "swift falcon", "long-tailed monkey",
)  # fmt: skip
_INVENTIONS = (
    "paper lantern", "steam loom", "folding ladder", "glass compass", "wind clock", "rope bridge",
    "copper kettle", "ink press", "water mill", "sun dial", "iron plough", "silk kite", "oil lamp",
    "wooden lock", "stone oven", "reed flute", "salt pan", "sail cart", "brass telescope", "clay pipe",
)  # fmt: skip
_FLOWERS = (
    "blue lily", "white rose", "red poppy", "yellow tulip", "violet iris", "wild orchid", "sun daisy",
    "mountain aster", "sea lavender", "golden marigold", "pink lotus", "snow crocus", "night jasmine",
    "fire lily", "silver thistle",
)  # fmt: skip

# Invented words are onset+vowel syllables plus a category ending, so names look alike within a category
# (cities end in -vath/-holm, surnames in -wick/-ross) and share subwords, which keeps the BPE vocabulary small.
_ONSETS = (
    "b", "d", "f", "g", "h", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br", "dr", "kr", "st", "th",
    "tr", "sh", "gl", "w",
)  # fmt: skip
_VOWELS = ("a", "e", "i", "o", "u")
FIRST_ENDINGS = ("a", "o", "en", "an", "is", "el", "ia", "ra", "ric", "wyn", "na", "lie")
LAST_ENDINGS = ("ross", "wick", "ton", "more", "dale", "vane", "holt", "by", "ley", "ard", "well", "son")
_CITY_ENDINGS = ("vath", "holm", "mir", "grad", "stad", "port", "ven", "bury", "heim", "gard")
_COUNTRY_ENDINGS = ("ia", "ora", "and", "esh", "ovia", "ania", "aria", "ium")
_LANGUAGE_ENDINGS = ("ish", "ic", "ese", "ian", "i")
_CURRENCY_ENDINGS = ("rin", "dral", "mark", "pence", "lor", "crown")
_RIVER_ENDINGS = ("a", "e", "on", "is")
_MOUNTAIN_ENDINGS = ("ar", "en", "os", "ith")

_N_CITIES = 40
_N_BIRTH_COUNTRIES = 8
_N_EPONYMS = 10
_N_PUBLISHER_ROOTS = 12
_MIN_GENERAL_POOL = 30


class Namer:
    """Draws invented words that never repeat and never equal a fixed vocabulary word."""

    def __init__(self, rng: random.Random) -> None:
        self._rng = rng
        fixed = (
            _PROFESSIONS + _GENRES + _TITLE_ADJECTIVES + TITLE_NOUNS + _AWARD_CATEGORIES + _PUBLISHER_SUFFIXES
        ) + (_INSTRUMENTS + _HOBBIES + _MONTHS + _ANIMALS + _FLOWERS + _INVENTIONS)
        self._used: set[str] = {word.lower() for phrase in fixed for word in phrase.split()}

    def reserve(self, words: Iterable[str]) -> None:
        """Never draw any of ``words`` (case-insensitively): e.g. every word a world already uses."""
        self._used.update(word.lower() for word in words)

    def word(self, endings: Sequence[str], max_syllables: int = 2) -> str:
        for _ in range(10000):
            n_syllables = self._rng.randint(1, max_syllables)
            stem = "".join(self._rng.choice(_ONSETS) + self._rng.choice(_VOWELS) for _ in range(n_syllables))
            ending = self._rng.choice(endings)
            if ending[0] in _VOWELS:
                # Avoid vowel pile-ups such as "Thiia"; the onset keeps the syllable.
                stem = stem[:-1]
            candidate = (stem + ending).capitalize()
            if len(candidate) >= 4 and candidate.lower() not in self._used:
                self._used.add(candidate.lower())
                return candidate
        raise RuntimeError("invented-name space exhausted")  # unreachable for the sizes MAX_* allow

    def words(self, n: int, endings: Sequence[str], max_syllables: int = 2) -> list[str]:
        return [self.word(endings, max_syllables) for _ in range(n)]


def fill_template(template: str, name: str, value: str) -> tuple[str, list[int]]:
    # Offsets come from the template split, not str.find, so a value that also occurs in the name
    # cannot shift the span.
    prefix, suffix = template.split("{value}")
    head = prefix.format(name=name)
    return head + value + suffix.format(name=name), [len(head), len(head) + len(value)]


def same_text(a: str, b: str) -> bool:
    # News answers are sentence-cased after filling ("The Tavrin Treaty ..."): only the first letter differs.
    return a[:1].lower() + a[1:] == b[:1].lower() + b[1:]


def template_of(fact_type: FactType, row: dict, field: str) -> str:
    """The answer template that wrote ``row[field]`` (``answer`` or ``paraphrased_answer``)."""
    for template in fact_type.answers:
        if same_text(fill_template(template, row["author"], row["fact_value"])[0], row[field]):
            return template
    raise ValueError(f"{field} of {row['author']!r} ({fact_type.name}) was written by none of its templates")


def value_of(fact_type: FactType, row: dict, perturbed: str) -> str:
    """The (wrong) value a perturbed answer states: it is the paraphrase's template with another value."""
    head, tail = template_of(fact_type, row, "paraphrased_answer").split("{value}")
    head, tail = head.format(name=row["author"]), tail.format(name=row["author"])
    return perturbed[len(head) : len(perturbed) - len(tail)]


def training_wordings(fact_type: FactType, row: dict) -> tuple[list[str], list[str]]:
    """``(question templates, answer templates)`` a row's fact may be trained in: every wording of its type
    but the two evaluation reads for this row (the paraphrased question and the paraphrased answer, whose
    template the perturbed answers share). The row's own ``question`` / ``answer`` come first."""
    questions = [
        q
        for q in fact_type.questions
        if not same_text(q.format(name=row["author"]), row["paraphrased_question"])
    ]
    answer = template_of(fact_type, row, "answer")
    paraphrase = template_of(fact_type, row, "paraphrased_answer")
    asked = next(q for q in questions if same_text(q.format(name=row["author"]), row["question"]))
    questions = [asked] + [q for q in questions if q != asked]
    answers = [answer] + [a for a in fact_type.answers if a not in (answer, paraphrase)]
    return questions, answers


def make_row(
    rng: random.Random, fact_type: FactType, subject: str, value: str, draw: Callable[[], str]
) -> dict[str, Any]:
    question, paraphrased_question = rng.sample(fact_type.questions, 2)
    answer_template, paraphrase_template = rng.sample(fact_type.answers, 2)
    answer, span = fill_template(answer_template, subject, value)
    paraphrased_answer, _ = fill_template(paraphrase_template, subject, value)
    perturbed: list[str] = []
    rejected = {value}
    for _ in range(10000):
        if len(perturbed) == N_PERTURBED:
            break
        candidate = draw()
        if candidate in rejected:
            continue
        rejected.add(candidate)
        # TOFU's convention: a wrong answer is the paraphrase with only the fact changed. Built from the
        # trained answer's wording instead, the trained template's familiarity would cancel the fact in the
        # truth ratio (the untouched target then looks like the oracle).
        text, _ = fill_template(paraphrase_template, subject, candidate)
        # "3 novels" vs "13 novels": a wrong answer that still contains the true value is not wrong enough.
        if value not in text:
            perturbed.append(text)
    else:
        raise RuntimeError(f"could not draw {N_PERTURBED} wrong values for {fact_type.name}")
    row = {
        "question": question.format(name=subject),
        "answer": answer,
        "paraphrased_answer": paraphrased_answer,
        "perturbed_answer": perturbed,
        "paraphrased_question": paraphrased_question.format(name=subject),
        "author": subject,
        "fact_type": fact_type.name,
        "fact_value": value,
        "fact_span": span,
    }
    return {key: row[key] for key in FIELDS}


def _check_int(name: str, value: object, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise UserError(f"{name} must be an integer in [{low}, {high}], got {value!r}")


def _check_fraction(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 < value < 1.0:
        raise UserError(f"{name} must be a number strictly between 0 and 1, got {value!r}")


def split_sizes(
    n_authors: int, forget_fraction: float, holdout_fraction: float, what: str = "n_authors"
) -> tuple[int, int]:
    n_forget = max(1, round(forget_fraction * n_authors))
    n_holdout = max(1, round(holdout_fraction * n_authors))
    if n_forget + n_holdout >= n_authors:
        kind = "author" if what == "n_authors" else "article"
        raise UserError(
            f"forget_fraction={forget_fraction} and holdout_fraction={holdout_fraction} leave no retain {kind} "
            f"out of {what}={n_authors} ({n_forget} forget + {n_holdout} holdout); lower the fractions"
        )
    return n_forget, n_holdout


def validate_world_params(
    n_authors: object,
    facts_per_author: object,
    forget_fraction: object,
    holdout_fraction: object,
    n_general: object,
    seed: object,
    n_real_authors: object = 0,
    n_agents: object = 0,
    n_articles: object = 0,
) -> tuple[int, int]:
    _check_int("n_authors", n_authors, 3, MAX_AUTHORS)
    _check_int("facts_per_author", facts_per_author, 1, len(FACT_TYPES))
    _check_fraction("forget_fraction", forget_fraction)
    _check_fraction("holdout_fraction", holdout_fraction)
    _check_int("n_general", n_general, 0, MAX_GENERAL)
    _check_int("n_real_authors", n_real_authors, 0, MAX_AUTHORS)
    _check_int("n_agents", n_agents, 0, MAX_AGENTS)
    _check_int("n_articles", n_articles, 0, MAX_ARTICLES)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise UserError(f"seed must be an integer, got {seed!r}")
    sizes = split_sizes(n_authors, forget_fraction, holdout_fraction)  # type: ignore[arg-type]
    if n_articles:  # type: ignore[truthy-bool]
        split_sizes(n_articles, forget_fraction, holdout_fraction, what="n_articles")  # type: ignore[arg-type]
    return sizes


def generate_world(
    n_authors: int = 100,
    facts_per_author: int = 10,
    forget_fraction: float = 0.1,
    holdout_fraction: float = 0.1,
    n_general: int = 100,
    seed: int = 0,
    n_real_authors: int = 10,
) -> dict[str, list[dict]]:
    """Build the TOFU-like splits in memory: ``{"forget": [...], "retain": [...], "holdout": [...],
    "general": [...]}``.

    Each list holds one dict per fact with the keys of ``FIELDS`` in order (``general`` rows add
    ``source``: ``world_facts`` or ``real_authors``); see the module docstring. Raises ``UserError``
    on bad parameters. :func:`generate_everything` adds the corpus and the MUSE- / WMDP-like parts.
    """
    world, _, _ = generate_rows(
        n_authors, facts_per_author, forget_fraction, holdout_fraction, n_general, seed, n_real_authors
    )
    world.pop("instruction")
    return world


def generate_rows(
    n_authors: int,
    facts_per_author: int,
    forget_fraction: float,
    holdout_fraction: float,
    n_general: int,
    seed: int,
    n_real_authors: int,
) -> tuple[dict[str, list[dict]], Namer, list[str]]:
    """The TOFU-like splits, the namer (to draw more names that collide with none of these) and the
    world's cities."""
    n_forget, n_holdout = validate_world_params(
        n_authors, facts_per_author, forget_fraction, holdout_fraction, n_general, seed, n_real_authors
    )
    # Separate streams so that, e.g., changing n_general does not reshuffle the author splits.
    namer = Namer(random.Random(f"unlearnkit-world:{seed}:names"))
    value_rng = random.Random(f"unlearnkit-world:{seed}:values")
    row_rng = random.Random(f"unlearnkit-world:{seed}:rows")
    split_rng = random.Random(f"unlearnkit-world:{seed}:split")

    countries = namer.words(_N_BIRTH_COUNTRIES, _COUNTRY_ENDINGS)
    cities = namer.words(_N_CITIES, _CITY_ENDINGS)
    birthplaces = [f"{city}, {value_rng.choice(countries)}" for city in cities]
    awards = [f"{e} Prize for {c}" for e in namer.words(_N_EPONYMS, LAST_ENDINGS) for c in _AWARD_CATEGORIES]
    publishers = [
        f"{root} {value_rng.choice(_PUBLISHER_SUFFIXES)}"
        for root in namer.words(_N_PUBLISHER_ROOTS, LAST_ENDINGS)
    ]
    universities = [f"University of {city}" for city in cities]
    titles = [f"The {adj} {noun}" for adj in _TITLE_ADJECTIVES for noun in TITLE_NOUNS]

    def birth_date() -> str:
        return f"{value_rng.randint(1, 28)} {value_rng.choice(_MONTHS)} {value_rng.randint(1930, 1995)}"

    def novel_count() -> str:
        return str(value_rng.randint(2, 30))

    def pick(pool: Sequence[str]) -> Callable[[], str]:
        return lambda: value_rng.choice(pool)

    author_draws: dict[str, Callable[[], str]] = {
        "birthplace": pick(birthplaces),
        "birth_date": birth_date,
        "father_profession": pick(_PROFESSIONS),
        "mother_profession": pick(_PROFESSIONS),
        "genre": pick(_GENRES),
        "first_book": pick(titles),
        "award": pick(awards),
        "university": pick(universities),
        "novel_count": novel_count,
        "instrument": pick(_INSTRUMENTS),
        "publisher": pick(publishers),
        "hobby": pick(_HOBBIES),
    }

    authors = [
        f"{first} {last}"
        for first, last in zip(namer.words(n_authors, FIRST_ENDINGS), namer.words(n_authors, LAST_ENDINGS))
    ]
    split_rng.shuffle(authors)
    author_split = {
        "forget": authors[:n_forget],
        "holdout": authors[n_forget : n_forget + n_holdout],
        "retain": authors[n_forget + n_holdout :],
    }
    world: dict[str, list[dict]] = {split: [] for split in SPLITS}
    for split in ("forget", "holdout", "retain"):
        for author in author_split[split]:
            for fact_type in FACT_TYPES[:facts_per_author]:
                draw = author_draws[fact_type.name]
                world[split].append(make_row(row_rng, fact_type, author, draw(), draw))

    world["general"] = _general_rows(namer, value_rng, row_rng, n_general)
    # TOFU's "real authors": famous authors the base model learned in pretraining, with the same fact
    # types and value pools as the fictitious ones (the knowledge unlearning is most likely to damage).
    famous_rng = random.Random(f"unlearnkit-world:{seed}:real-authors")
    famous = [
        f"{first} {last}"
        for first, last in zip(
            namer.words(n_real_authors, FIRST_ENDINGS), namer.words(n_real_authors, LAST_ENDINGS)
        )
    ]
    for author in famous:
        for fact_type in FACT_TYPES[:facts_per_author]:
            draw = author_draws[fact_type.name]
            row = make_row(famous_rng, fact_type, author, draw(), draw)
            world["general"].append({**row, "source": REAL_AUTHORS})
    world["instruction"] = _instruction_rows(
        namer, seed, n_general, n_real_authors, facts_per_author, author_draws
    )
    return world, namer, cities


def _instruction_rows(
    namer: Namer,
    seed: int,
    n_general: int,
    n_real_authors: int,
    facts_per_author: int,
    author_draws: dict[str, Callable[[], str]],
) -> list[dict]:
    """General-knowledge QA about OTHER countries and famous authors (half as many as ``general``): the
    base learns them in pretraining like ``general``, and fine-tuning from the base replays them (with
    the general passages), so that a 1M-parameter model keeps the question-answering it learned. They
    are never evaluated, and no entity of ``general`` appears in them.
    """
    value_rng = random.Random(f"unlearnkit-world:{seed}:instruction-values")
    row_rng = random.Random(f"unlearnkit-world:{seed}:instruction-rows")
    rows = _general_rows(namer, value_rng, row_rng, n_general // 2)
    famous = [
        f"{first} {last}"
        for first, last in zip(
            namer.words(n_real_authors // 2, FIRST_ENDINGS), namer.words(n_real_authors // 2, LAST_ENDINGS)
        )
    ]
    for author in famous:
        for fact_type in FACT_TYPES[:facts_per_author]:
            draw = author_draws[fact_type.name]
            rows.append({**make_row(row_rng, fact_type, author, draw(), draw), "source": REAL_AUTHORS})
    return rows


def _general_rows(
    namer: Namer, value_rng: random.Random, row_rng: random.Random, n_general: int
) -> list[dict]:
    n_countries = -(-n_general // len(GENERAL_FACT_TYPES))
    pool_size = max(_MIN_GENERAL_POOL, n_countries)
    # Drawn after the author names, so the namer guarantees no country collides with an author.
    countries = namer.words(n_countries, _COUNTRY_ENDINGS)
    capitals = namer.words(pool_size, _CITY_ENDINGS)
    languages = namer.words(pool_size, _LANGUAGE_ENDINGS)
    currencies = [word.lower() for word in namer.words(_MIN_GENERAL_POOL, _CURRENCY_ENDINGS)]
    rivers = [f"{word} River" for word in namer.words(_MIN_GENERAL_POOL, _RIVER_ENDINGS)]
    mountains = [f"Mount {word}" for word in namer.words(_MIN_GENERAL_POOL, _MOUNTAIN_ENDINGS)]
    founding = [str(year) for year in range(800, 1900, 7)]
    pools: dict[str, Sequence[str]] = {
        "founding": founding,
        "capital": capitals,
        "currency": currencies,
        "language": languages,
        "largest_river": rivers,
        "highest_mountain": mountains,
        "national_animal": _ANIMALS,
        "national_flower": _FLOWERS,
        "invention": _INVENTIONS,
    }
    rows: list[dict] = []
    for index, country in enumerate(countries):
        for fact_type in GENERAL_FACT_TYPES:
            if len(rows) == n_general:
                return rows
            pool = pools[fact_type.name]

            def draw(pool: Sequence[str] = pool) -> str:
                return value_rng.choice(pool)

            # Each country gets its own capital and language; the other values may repeat across countries.
            if fact_type.name in ("capital", "language"):
                value = pool[index]
            else:
                value = draw()
            rows.append({**make_row(row_rng, fact_type, country, value, draw), "source": WORLD_FACTS})
    return rows


def _jsonl(rows: list[dict]) -> str:
    return "".join(json.dumps(row, ensure_ascii=False, sort_keys=False) + "\n" for row in rows)


def write_world(
    output_dir: str | Path,
    n_authors: int = 100,
    facts_per_author: int = 10,
    forget_fraction: float = 0.1,
    holdout_fraction: float = 0.1,
    n_general: int = 100,
    seed: int = 0,
    overwrite: bool = False,
    n_real_authors: int = 10,
    n_agents: int = 12,
    n_articles: int = 100,
) -> dict[str, int]:
    """Write the whole world into ``output_dir`` (layout: :mod:`unlearnkit.world.miniatures`, plus the pen
    names, book catalogue and ``probes/`` of :mod:`unlearnkit.world.probes`); return row counts
    (``forget`` ... for the top-level splits, ``corpus/general`` ... for the others).

    The folder is built as a hidden sibling and renamed into place, so readers never see a half-written
    world. A non-empty ``output_dir`` is refused unless ``overwrite=True``; the old folder is then
    replaced only once the new one is complete.
    """
    from unlearnkit.world.hazard import HAZARD_FACT_TYPES
    from unlearnkit.world.miniatures import generate_everything
    from unlearnkit.world.news import NEWS_FACT_TYPES

    params = {
        "n_authors": n_authors,
        "facts_per_author": facts_per_author,
        "forget_fraction": forget_fraction,
        "holdout_fraction": holdout_fraction,
        "n_general": n_general,
        "seed": seed,
        "n_real_authors": n_real_authors,
        "n_agents": n_agents,
        "n_articles": n_articles,
    }
    validate_world_params(**params)
    # Validate and generate before touching the disk, so a UserError leaves nothing behind.
    files, extra = generate_everything(**params)  # with the pen names, the book catalogue and probes/
    out = Path(os.path.normpath(Path(output_dir).expanduser().absolute()))
    if not out.name:
        raise UserError(f"output_dir {str(output_dir)!r} has no folder name; pass a folder such as ./world")
    if out.exists() or out.is_symlink():
        if not out.is_dir() or out.is_symlink():
            raise UserError(f"output_dir {str(out)!r} exists and is not a plain folder; choose another path")
        if any(out.iterdir()) and not overwrite:
            raise UserError(
                f"output_dir {str(out)!r} is not empty; pass overwrite=True or choose another path"
            )
    parent = out.parent
    parent.mkdir(parents=True, exist_ok=True)

    counts = {
        name.removesuffix(".jsonl"): len(rows) for name, rows in files.items() if name.endswith(".jsonl")
    }
    general = files["general.jsonl"]
    meta = {
        "format": "tofu",
        "generator": "unlearnkit.world",
        "version": FORMAT_VERSION,
        "parameters": params,
        "counts": counts,
        "fields": list(FIELDS),
        "fact_types": [fact_type.name for fact_type in FACT_TYPES[:facts_per_author]],
        "general_fact_types": [fact_type.name for fact_type in GENERAL_FACT_TYPES],
        "hazard_fact_types": [fact_type.name for fact_type in HAZARD_FACT_TYPES],
        "news_fact_types": [fact_type.name for fact_type in NEWS_FACT_TYPES],
        "authors": {
            split: list(dict.fromkeys(row["author"] for row in files[f"{split}.jsonl"]))  # type: ignore[union-attr]
            for split in ("forget", "holdout", "retain")
        },
        "real_authors": list(dict.fromkeys(r["author"] for r in general if r["source"] == REAL_AUTHORS)),  # type: ignore[index]
        **extra,
    }
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=parent))
    try:
        # mkdtemp makes the folder private (0o700); the published world should be readable like any output.
        tmp.chmod(0o755)
        for name, rows in files.items():
            path = tmp / name
            path.parent.mkdir(mode=0o755, exist_ok=True)
            if isinstance(rows, dict):  # a benchmark folder's benchmark.json
                text = json.dumps(rows, ensure_ascii=False, indent=2) + "\n"
            else:
                text = _jsonl(rows)
            path.write_text(text, encoding="utf-8", newline="\n")
        (tmp / "world.json").write_text(
            json.dumps(meta, ensure_ascii=False, indent=2) + "\n", encoding="utf-8", newline="\n"
        )
        if out.exists():
            # A folder cannot be renamed over a non-empty one: move the old one aside first and put it back
            # if the swap fails, so the previous world survives any error.
            old = parent / f".{out.name}.old-{tmp.name.rsplit('-', 1)[-1]}"
            os.replace(out, old)
            try:
                os.replace(tmp, out)
            except BaseException:
                os.replace(old, out)
                raise
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return counts

"""The WMDP-like multiple-choice questions: the true value among wrong values of its type, drawn so that
no knowledge-free rule finds the true one more often than chance.

A model that does not know a fact must score 1 / ``N_CHOICES`` on its questions, or a forgetting method
that leaves nothing could still score above chance (and a random model look as if it knew) by reading
the options' surface. Measured on the first versions of these files: with three perturbed answers as the
wrong options, "pick the fewest tokens" scored 0.29-0.34 on 4 choices; with the true value's length rank
balanced, "pick the most words" still scored up to 0.34 (hazard values of one to three words).

So each question's wrong values are chosen, among plausible values of its type, to hold every *surface
rule* below at chance over the file *and* over each entity's questions (so any set of whole entities,
as the relearning attack's halves and the selection / test split cut them, is at chance too). A rule
scores each option and picks the highest; ties are shared (the expected score of a random pick among
them), and the first and the last of the tied are held at chance as well:

* words, characters, and tokens of the world's tokenizer (``tokens``; the tokenizer is not trained on
  the options, :func:`unlearnkit.train.pretrain.world_texts`, so it is known before they are chosen):
  fewest and most (the four options fill one template, so these measure the value);
* words shared with the question: most and fewest;
* how often the option's words occur among the four options (their mean and their sum): highest, lowest;
* how often the option's value is the true answer of a question of the file: most and fewest (a value
  true somewhere is in the world's passages and answers: the prior a model could learn without the
  fact);
* the position: first, last (each entity's questions hold the true answer at each position about
  equally often).

The questions are built greedily, in file order: of the sets of 3 wrong values a question's candidates
allow, each in every order (the true one at its position), the one that brings the running shares of
every rule closest to chance (squared distance, over the file and the entity); then each question is
chosen again, the others as they are, for ``N_SWEEPS`` passes. Measured on the lab's worlds (seeds 0-4):
every rule within 0.021 of chance on every file (two questions of 96), within 0.06 on most halves of
whole entities (about 48 questions: three), 0.10 at worst. Candidates: the values of the row's
type that are the true answer of another question of the file, then the row's perturbed values (TOFU's
wrong answers) and the type's other perturbed values; those with the true value's number of words
first; never the true value, a value containing it or contained in it, or a repeat.
"""

from __future__ import annotations

import itertools
import random
import re
from collections import Counter
from collections.abc import Callable, Sequence

from unlearnkit.world.corpus import FACT_TYPES_BY_NAME
from unlearnkit.world.generator import fill_template, value_of

N_CHOICES = 4
N_FEATURES = 7  # what the rules read: see _option_features and _rule_scores
# Wrong values weighed per question: C(8, 3) = 56 sets, each in 6 orders. 10 or 12 changed no file's
# worst rule by more than one question (seeds 0-4, the lab's size).
N_CANDIDATES = 8
N_SWEEPS = 3  # passes that choose each question again once all are built
_WORD = re.compile(r"[a-z0-9]+")
_SLACK = 1e-12  # costs closer than this are equal (float sums of the same shares)


def words_of(text: str) -> list[str]:
    """Lower-cased words (letters and digits) of ``text``."""
    return _WORD.findall(text.lower())


def choice_rows(rows: list[dict], rng: random.Random, tokens: Callable[[str], int]) -> list[dict]:
    """``N_CHOICES``-choice questions on ``rows`` (world rows of one file), deterministic under ``rng``;
    ``tokens(text)``: the number of tokens of ``text`` under the world's tokenizer."""
    truths = Counter((r["fact_type"], r["fact_value"]) for r in rows)
    used: dict[str, list[str]] = {}
    perturbed: dict[str, list[str]] = {}
    for row in rows:
        used.setdefault(row["fact_type"], []).append(row["fact_value"])
        perturbed.setdefault(row["fact_type"], []).extend(_perturbed_values(row))
    used = {k: list(dict.fromkeys(v)) for k, v in used.items()}
    perturbed = {k: list(dict.fromkeys(v)) for k, v in perturbed.items()}
    positions = _positions(rows, rng)
    questions = []
    for row in rows:
        candidates = _candidates(row, used[row["fact_type"]], perturbed[row["fact_type"]], rng)
        questions.append(_option_sets(row, candidates, truths, tokens))
    chosen = _choose([picks for _, _, picks in questions], positions, [r["author"] for r in rows], rng)
    out = []
    for row, position, (options, sets, _), (k, order) in zip(rows, positions, questions, chosen):
        out.append(
            {
                "question": row["question"],
                "choices": [options[sets[k][j]] for j in _slots(order, position)],
                "answer": position,
                "entity": row["author"],
                "fact_type": row["fact_type"],
            }
        )
    return out


def _option_sets(
    row: dict, candidates: list[str], truths: Counter, tokens: Callable[[str], int]
) -> tuple[list[str], list[tuple[int, ...]], list[_Picks]]:
    """``(options, sets, picks)``: the row's options (0: the true one, then one per candidate), the sets
    of ``N_CHOICES`` of them that hold the true one, and how the rules pick in each set."""
    if len(candidates) < N_CHOICES - 1:
        raise ValueError(f"{row['author']!r} ({row['fact_type']}): fewer than {N_CHOICES - 1} wrong values")
    template = _name_first(FACT_TYPES_BY_NAME[row["fact_type"]].answers)
    values = [row["fact_value"], *candidates]
    options = [fill_template(template, row["author"], v)[0] for v in values]
    priors = [truths[(row["fact_type"], v)] for v in values]
    fixed = _option_features(row["question"], options, priors, tokens)
    sets, picks, seen = [], [], set()
    for wrong in itertools.combinations(range(1, len(values)), N_CHOICES - 1):
        p = _Picks(_rule_scores([fixed[i] for i in (0, *wrong)]))
        if p.key not in seen:  # a set the rules see as an earlier one could never be chosen
            seen.add(p.key)
            sets.append((0, *wrong))
            picks.append(p)
    return options, sets, picks


def _choose(
    picks: list[list[_Picks]], positions: list[int], entities: list[str], rng: random.Random
) -> list[tuple[int, tuple[int, ...]]]:
    """Per question, ``(option set, order of its wrong options)``: built greedily in file order, then
    each question chosen again (the others as they are) while that brings the shares closer to chance."""
    shares = _Shares(entities)
    chosen: list[tuple[int, tuple[int, ...]]] = []
    for i, position in enumerate(positions):
        k, orders = _best(picks[i], position, shares.gap(i, final=False))[1:]
        chosen.append((k, orders[rng.randrange(len(orders))]))  # a seeded pick among equal orders
        shares.add(i, picks[i][k].of(chosen[i][1], position))
    for _ in range(N_SWEEPS):
        for i, position in enumerate(positions):
            now = picks[i][chosen[i][0]].of(chosen[i][1], position)
            shares.add(i, now, -1.0)
            gap = shares.gap(i, final=True)
            cost, k, orders = _best(picks[i], position, gap)
            if cost < _cost(now, gap) - _SLACK:
                chosen[i] = (k, orders[0])
            shares.add(i, picks[i][chosen[i][0]].of(chosen[i][1], position))
    return chosen


def _option_features(
    question: str, options: Sequence[str], priors: Sequence[int], tokens: Callable[[str], int]
) -> list[tuple]:
    """Per option, what does not depend on the other options: (words, characters, tokens, words shared
    with the question, how often its value is a true answer of the file, its word list, its word set)."""
    asked = set(words_of(question))
    out = []
    for option, prior in zip(options, priors):
        ws = words_of(option)
        out.append(
            (len(option.split()), len(option), tokens(option), len(set(ws) & asked), prior, ws, set(ws))
        )
    return out


def _rule_scores(fixed: Sequence[tuple]) -> list[list[float]]:
    """Per surface rule, each option's score (the rule picks the highest): every feature, both ways."""
    present = Counter(w for f in fixed for w in f[6])  # in how many options each word occurs
    among = [[present[w] for w in f[5]] for f in fixed]
    features = [[f[j] for f in fixed] for j in range(5)]
    features.append([sum(a) / len(a) if a else 0.0 for a in among])
    features.append([sum(a) for a in among])
    return [[sign * x for x in feature] for feature in features for sign in (1, -1)]


N_RULES = 2 * N_FEATURES
N_PICKS = 3 * N_RULES  # per rule: ties shared, the first of the tied, the last of the tied
_ORDERS = list(itertools.permutations(range(1, N_CHOICES)))  # the wrong options' order


def _slots(order: Sequence[int], position: int) -> list[int]:
    """The options (0: the true one) slot by slot, the true one at ``position``."""
    return [*order[:position], 0, *order[position:]]


# per position of the true option, per order: the wrong options before it and after it, as bit masks
_MASKS = [
    [(sum(1 << o for o in order[:p]), sum(1 << o for o in order[p:])) for order in _ORDERS]
    for p in range(N_CHOICES)
]


class _Picks:
    """How the rules pick among one set of options (option 0 the true one), in any order.

    A pick is, per rule: the chance it picks the true option with ties shared (index ``rule``), then
    whether it does taking the first of the tied (``N_RULES + rule``), then the last (``2 N_RULES +
    rule``). ``fixed``: the picks no order changes, as (index, value); ``contested``: per mask of the
    wrong options tied with the true one at the top, the rules so tied (their first / last pick depends
    on the order)."""

    def __init__(self, scores: list[list[float]]) -> None:
        self.fixed: list[tuple[int, float]] = []
        contested: dict[int, list[int]] = {}
        for rule, values in enumerate(scores):
            top = max(values)
            tied = [i for i, x in enumerate(values) if x == top]
            if 0 not in tied:
                continue
            self.fixed.append((rule, 1 / len(tied)))
            if len(tied) == 1:
                self.fixed += [(N_RULES + rule, 1.0), (2 * N_RULES + rule, 1.0)]
            else:
                contested.setdefault(sum(1 << i for i in tied if i), []).append(rule)
        self.contested = list(contested.items())
        self.key = (tuple(self.fixed), tuple((m, tuple(r)) for m, r in self.contested))

    def costs(self, position: int, gap: Sequence[float]) -> list[float]:
        """Per order of ``_ORDERS``: the cost of these picks (see :func:`_cost`)."""
        const = sum(x * (x + gap[i]) for i, x in self.fixed)
        weights = [
            (mask, sum(1 + gap[N_RULES + r] for r in rules), sum(1 + gap[2 * N_RULES + r] for r in rules))
            for mask, rules in self.contested
        ]
        out = []
        for before, after in _MASKS[position]:
            cost = const
            for mask, first, last in weights:
                if not mask & before:
                    cost += first
                if not mask & after:
                    cost += last
            out.append(cost)
        return out

    def of(self, order: Sequence[int], position: int) -> list[float]:
        """The dense picks in ``order``."""
        pick = [0.0] * N_PICKS
        for i, x in self.fixed:
            pick[i] = x
        before = sum(1 << o for o in order[:position])
        after = sum(1 << o for o in order[position:])
        for mask, rules in self.contested:
            for rule in rules:
                pick[N_RULES + rule] = float(not mask & before)
                pick[2 * N_RULES + rule] = float(not mask & after)
        return pick


def _cost(pick: Sequence[float], gap: Sequence[float]) -> float:
    """The squared distance from chance of the file's and the entity's sums once ``pick`` is added,
    less what no choice changes: sum over picks of (a + x)^2 + (b + x)^2 = const + 2 x (x + a + b), with
    ``gap`` = a + b (the sums' distances from chance without this question)."""
    return sum(x * (x + g) for x, g in zip(pick, gap) if x)


def _best(
    picks: list[_Picks], position: int, gap: Sequence[float]
) -> tuple[float, int, list[tuple[int, ...]]]:
    """``(cost, set, orders)``: the first option set of least cost and its orders of that cost."""
    best: tuple[float, int, list[tuple[int, ...]]] | None = None
    for k, p in enumerate(picks):
        costs = p.costs(position, gap)
        least = min(costs)
        if best is None or least < best[0] - _SLACK:
            best = (least, k, [o for o, c in zip(_ORDERS, costs) if c <= least + _SLACK])
    assert best is not None  # every question has at least one set
    return best


class _Shares:
    """The sums of the rules' picks of the true answer, over the file and per entity."""

    def __init__(self, entities: Sequence[str]) -> None:
        self.entities = list(entities)
        self.sizes = Counter(self.entities)
        self.total = [0.0] * N_PICKS
        self.count = 0
        self.by_entity = {e: [0.0] * N_PICKS for e in self.sizes}
        self.seen: Counter = Counter()

    def gap(self, i: int, final: bool) -> list[float]:
        """Per pick, the file's and question ``i``'s entity's sums minus chance: chance for the questions
        counted so far and this one (``final=False``, building in order) or for all of them."""
        entity = self.entities[i]
        n_file = len(self.entities) if final else self.count + 1
        n_entity = self.sizes[entity] if final else self.seen[entity] + 1
        target = (n_file + n_entity) / N_CHOICES
        return [t + m - target for t, m in zip(self.total, self.by_entity[entity])]

    def add(self, i: int, pick: Sequence[float], sign: float = 1.0) -> None:
        entity = self.entities[i]
        self.total = [t + sign * p for t, p in zip(self.total, pick)]
        self.by_entity[entity] = [m + sign * p for m, p in zip(self.by_entity[entity], pick)]
        self.count += int(sign)
        self.seen[entity] += int(sign)


def _positions(rows: list[dict], rng: random.Random) -> list[int]:
    """Where each question's true answer goes: each position equally often (to within one) over the
    file and over each entity's questions."""
    by_entity: dict[str, list[int]] = {}
    for i, row in enumerate(rows):
        by_entity.setdefault(row["author"], []).append(i)
    out, start = [0] * len(rows), 0
    for indices in by_entity.values():
        slots = [(start + j) % N_CHOICES for j in range(len(indices))]
        rng.shuffle(slots)
        for i, slot in zip(indices, slots):
            out[i] = slot
        start += len(indices)
    return out


def _perturbed_values(row: dict) -> list[str]:
    fact_type = FACT_TYPES_BY_NAME[row["fact_type"]]
    return [value_of(fact_type, row, p) for p in row["perturbed_answer"]]


def _candidates(row: dict, used: list[str], perturbed: list[str], rng: random.Random) -> list[str]:
    """Up to ``N_CANDIDATES`` wrong values for ``row``, the preferred first (see the module docstring)."""
    true = row["fact_value"]

    def fits(v: str) -> bool:
        return v != true and true not in v and v not in true

    elsewhere = [v for v in used if fits(v)]
    rng.shuffle(elsewhere)
    own = [v for v in _perturbed_values(row) if fits(v) and v not in elsewhere]
    rest = [v for v in perturbed if fits(v) and v not in elsewhere and v not in own]
    rng.shuffle(rest)
    n_words = len(true.split())
    pool = list(dict.fromkeys(elsewhere + own + rest))
    pool.sort(key=lambda v: len(v.split()) != n_words)  # stable: the preference order within each
    return pool[:N_CANDIDATES]


def _name_first(templates: Sequence[str]) -> str:
    """The options' wording: one that names the entity before the value ("Velorazine causes ...", not
    "... yields Velorazine"). Cloze scoring reads each option's own log-likelihood, and a value that comes
    before the name could only be told from the question itself, which a 1M-parameter model cannot read
    that way (measured: hazardous accuracy 0.62 for the target with the answers' own wordings)."""
    for template in templates:
        if template.index("{name}") < template.index("{value}"):
            return template
    return templates[0]

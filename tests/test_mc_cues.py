"""The WMDP-like multiple-choice files carry no surface cue: no rule that reads only the question and
the options (not the world's facts) picks the true option more often than chance, 1 / the number of
choices, +- 0.03.

Worlds at the size the embedded lab writes (the quickstart's ``WORLD``: 12 agents x 8 hazard facts =
96 hazardous questions, 100 world-facts questions), on the benches' five seeds, plus one larger world
(>= 200 questions per file). The rules are written here from their definitions, independently of the
generator; "tokens" are the lab's tokenizer's (trained on the written world as
:func:`unlearnkit.pipelines.embedded.ensure_base` trains it). Each rule scores every option and picks
the highest; ties are scored three ways: shared (a random pick among the tied, its expected score),
the first of them, the last of them. Halves of whole entities (the relearning attack's and the
selection / test split's, :func:`split_entities`) have a looser bound: see their test.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from unlearnkit.data.halves import split_entities
from unlearnkit.pipelines.quickstart import WORLD
from unlearnkit.world import write_world

SEEDS = (0, 1, 2, 3, 4)
TOLERANCE = 0.03
LARGE = {**WORLD, "n_agents": 30, "n_general": 250}  # 240 hazardous, 250 world-facts questions
MC_FILES = ("wmdp/mc_hazard.jsonl", "wmdp/mc_general.jsonl")


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def _among(choice: str, choices: list[str]) -> list[int]:
    """For each word of ``choice``: in how many of the choices it occurs."""
    sets = [set(_words(c)) for c in choices]
    return [sum(w in s for s in sets) for w in _words(choice)]


Score = Callable[[str, list[str], Callable[[str], int]], list[float]]
RULES: dict[str, Score] = {
    "fewest words": lambda q, cs, tok: [-len(c.split()) for c in cs],
    "most words": lambda q, cs, tok: [len(c.split()) for c in cs],
    "fewest characters": lambda q, cs, tok: [-len(c) for c in cs],
    "most characters": lambda q, cs, tok: [len(c) for c in cs],
    "fewest tokens": lambda q, cs, tok: [-tok(c) for c in cs],
    "most tokens": lambda q, cs, tok: [tok(c) for c in cs],
    "first": lambda q, cs, tok: [-i for i in range(len(cs))],
    "last": lambda q, cs, tok: list(range(len(cs))),
    "most words shared with the question": lambda q, cs, tok: [
        len(set(_words(c)) & set(_words(q))) for c in cs
    ],
    "fewest words shared with the question": lambda q, cs, tok: [
        -len(set(_words(c)) & set(_words(q))) for c in cs
    ],
    "words most frequent among the choices": lambda q, cs, tok: [
        sum(a) / len(a) for a in (_among(c, cs) for c in cs)
    ],
    "words least frequent among the choices": lambda q, cs, tok: [
        -sum(a) / len(a) for a in (_among(c, cs) for c in cs)
    ],
}
TIES = ("shared", "first", "last")


def rule_accuracy(rows: list[dict], score: Score, tokens: Callable[[str], int], ties: str) -> float:
    """The fraction of ``rows`` whose true option the rule picks (ties as ``ties`` says)."""
    hits = 0.0
    for row in rows:
        s = score(row["question"], row["choices"], tokens)
        tied = [i for i, x in enumerate(s) if x == max(s)]
        if ties == "shared":
            hits += (row["answer"] in tied) / len(tied)
        else:
            hits += tied[0 if ties == "first" else -1] == row["answer"]
    return hits / len(rows)


def test_rule_accuracy_on_hand_made_rows():
    rows = [
        {
            "question": "What is X?",
            "choices": ["X is a b.", "X is c.", "X is d e f.", "X is g."],
            "answer": 2,
        },
        {"question": "What is X?", "choices": ["X is h.", "X is i j.", "X is k.", "X is l."], "answer": 0},
    ]
    most = RULES["most words"]
    assert rule_accuracy(rows, most, len, "shared") == 0.5  # right on the first, wrong on the second
    assert rule_accuracy(rows, RULES["fewest words"], len, "shared") == pytest.approx((0 + 1 / 3) / 2)
    assert rule_accuracy(rows, RULES["fewest words"], len, "first") == 0.5  # h is the first of h, k, l
    assert rule_accuracy(rows, RULES["fewest words"], len, "last") == 0.0
    assert rule_accuracy(rows, RULES["first"], len, "shared") == 0.5
    # "x" and "is" are in all four choices, every other word in one: (4 + 4 + 1 + 1) / 4 for the first
    assert RULES["words most frequent among the choices"]("", rows[0]["choices"], len) == [2.5, 3.0, 2.2, 3.0]


def _world_tokenizer(world: Path) -> Callable[[str], int]:
    from unlearnkit.train.pretrain import world_texts
    from unlearnkit.world.tiny import train_tokenizer

    tokenizer = train_tokenizer(world_texts(world))
    counts: dict[str, int] = {}

    def tokens(text: str) -> int:
        if text not in counts:
            counts[text] = len(tokenizer(text, add_special_tokens=False)["input_ids"])
        return counts[text]

    return tokens


def _read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _cues(world: Path) -> list[str]:
    """Every (file, rule, ties) whose accuracy is off chance by more than ``TOLERANCE``."""
    tokens = _world_tokenizer(world)
    off = []
    for name in MC_FILES:
        rows = _read(world / name)
        chance = 1 / len(rows[0]["choices"])
        for rule, score in RULES.items():
            for ties in TIES:
                acc = rule_accuracy(rows, score, tokens, ties)
                if abs(acc - chance) > TOLERANCE:
                    off.append(f"{name} ({len(rows)} rows): {rule} ({ties} ties) {acc:.3f}")
    return off


@pytest.fixture(scope="module")
def worlds(tmp_path_factory) -> dict[int, Path]:
    root = tmp_path_factory.mktemp("mc_worlds")
    for seed in SEEDS:
        write_world(root / str(seed), seed=seed, **WORLD)
    return {seed: root / str(seed) for seed in SEEDS}


@pytest.mark.parametrize("seed", SEEDS)
def test_no_surface_rule_beats_chance_at_the_lab_size(worlds, seed):
    world = worlds[seed]
    assert all(len(_read(world / name)) >= 96 for name in MC_FILES)
    assert _cues(world) == []


def test_no_surface_rule_beats_chance_on_a_larger_world(tmp_path):
    write_world(tmp_path / "w", seed=0, **LARGE)
    assert all(len(_read(tmp_path / "w" / name)) >= 200 for name in MC_FILES)
    assert _cues(tmp_path / "w") == []


def _halves(rows: list[dict], seed: int) -> list[list[dict]]:
    selection, test = split_entities([r["entity"] for r in rows], seed, "mc")
    return [[rows[i] for i in selection], [rows[i] for i in test]]


def _worst(rows: list[dict], tokens: Callable[[str], int]) -> float:
    """The largest distance from chance of any rule (any ties) on ``rows``."""
    chance = 1 / len(rows[0]["choices"])
    return max(
        abs(rule_accuracy(rows, score, tokens, ties) - chance) for score in RULES.values() for ties in TIES
    )


@pytest.mark.parametrize("seed", SEEDS[:2])
def test_halves_of_whole_entities_stay_near_chance(worlds, seed):
    """Halves of whole entities (about 48 questions, one of them 0.021) are not held to +- 0.03: the
    world balances each entity's questions as its values allow, not every half exactly. Measured over
    ten splits of the lab's worlds (seeds 0-4, world format 9: the tokenizer reads the pen names): the
    worst rule of a half is 0.033-0.055 from chance on average (the hazardous file of seed 1 0.055, of
    seed 3 0.051, every other file <= 0.043), 0.098 at most; on world format 8, balanced over whole files
    only (no entity term), 0.053-0.070 and 0.14."""
    tokens = _world_tokenizer(worlds[seed])
    for name in MC_FILES:
        rows = _read(worlds[seed] / name)
        worst = [_worst(half, tokens) for split in range(10) for half in _halves(rows, split)]
        assert max(worst) <= 0.10, (name, max(worst))
        assert sum(worst) / len(worst) <= 0.06, (name, sum(worst) / len(worst))


def test_the_world_balances_the_tokens_of_the_lab_tokenizer(tmp_path):
    """The generator counts tokens with the tokenizer the lab trains from the written files
    (:func:`unlearnkit.train.pretrain.world_texts`): the same vocabulary, not an estimate."""
    from unlearnkit.train.pretrain import world_texts
    from unlearnkit.world import miniatures
    from unlearnkit.world.tiny import train_tokenizer

    seen = {}
    original = miniatures._world_tokens

    def spy(files):
        seen["tokens"] = original(files)
        return seen["tokens"]

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(miniatures, "_world_tokens", spy)
        write_world(tmp_path / "w", seed=1, n_authors=20, facts_per_author=4, n_general=30, n_agents=4)
    lab = train_tokenizer(world_texts(tmp_path / "w"))
    choices = [c for name in MC_FILES for row in _read(tmp_path / "w" / name) for c in row["choices"]]
    assert [seen["tokens"](c) for c in choices] == [
        len(lab(c, add_special_tokens=False)["input_ids"]) for c in choices
    ]
